"""EPA's public tables (`rin market`), the late report (§80.1452) and the EMTS 3.0 export on a
small market worked by hand, on each store.

The market (EV 1.0 ethanol, 1.5 biodiesel, 1.7 renewable diesel, §80.1415):
  g1  1001 generates 10,000 gal ethanol, D6, 2 Jan 2024            → 10,000 D6 K=1
  g2  1002 generates 1,000 gal biodiesel, D4, 3 Jan 2024           →  1,500 D4 K=1
  g3  importer 5001, 1,000 gal renewable diesel from 9201, D4      →  1,700 D4 K=1 (import)
  t1  1001 → 2001, 4,000 D6 K=1 with 4,000 gal, 5 Jan
  s1  2001 separates those 4,000 on blending (EMTS 20), 8 Jan      →  4,000 D6 K=2
  t2  2001 → 3001, 3,000 D6 K=2, 10 Jan
  r1  1001 retires 500 D6 K=1 for a spill (EMTS 10), 1 Feb
  r2  3001 retires 2,500 D6 K=2 for 2024 compliance (EMTS 80), 1 Mar 2025
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

import pytest
import xmlschema

from ledger import Ledger
from projections import Views, project, rebuild
from projections.emts_xml import NAMESPACE, SCHEMA_FILE, document
from projections.invariants import dump

PARTIES = [("1001", ["producer"], ["20001"]), ("1002", ["producer"], ["20011"]),
           ("2001", ["blender"], []), ("3001", ["obligated_party"], []),
           ("5001", ["importer"], ["50001"]), ("9201", ["foreign_producer"], [])]
D6_K1 = {"d_code": 6, "vintage": 2024, "k": 1}
D6_K2 = {"d_code": 6, "vintage": 2024, "k": 2}
MARKET: list[dict[str, Any]] = [
    *({"type": "register_party", "party": p, "name": f"Party {p}", "roles": r, "facilities": f}
      for p, r, f in PARTIES),
    {"type": "generate", "id": "g1", "date": "2024-01-02", "party": "1001", "facility": "20001",
     "batch": "00001", "fuel": "ethanol", "d_code": 6, "volume": 10_000},
    {"type": "generate", "id": "g2", "date": "2024-01-03", "party": "1002", "facility": "20011",
     "batch": "00001", "fuel": "biodiesel", "d_code": 4, "volume": 1_000},
    {"type": "generate", "id": "g3", "date": "2024-01-31", "party": "5001", "facility": "50001",
     "batch": "I0001", "fuel": "renewable_diesel", "d_code": 4, "volume": 1_000,
     "foreign_producer": "9201"},
    {"type": "transfer", "id": "t1", "date": "2024-01-05", "from": "1001", "to": "2001",
     "rins": {**D6_K1, "quantity": 4_000}, "volume": 4_000, "ptd": "PTD-1"},
    {"type": "separate", "id": "s1", "date": "2024-01-08", "party": "2001", "reason": "blending",
     "rins": {**D6_K1, "quantity": 4_000}, "volume": 4_000},
    {"type": "transfer", "id": "t2", "date": "2024-01-10", "from": "2001", "to": "3001",
     "rins": {**D6_K2, "quantity": 3_000}, "price": "0.75"},
]
RETIREMENTS: list[dict[str, Any]] = [
    {"type": "retire", "id": "r1", "date": "2024-02-01", "party": "1001", "reason": "spill",
     "rins": {**D6_K1, "quantity": 500}},
    {"type": "report_obligation", "id": "o1", "party": "3001", "year": 2024,
     "rvo": {"CB": 0, "BBD": 0, "AB": 0, "RF": 2_500}},
    {"type": "retire", "id": "r2", "date": "2025-03-01", "party": "3001", "reason": "compliance",
     "compliance_year": 2024, "rins": {**D6_K2, "quantity": 2_500}},
]


def applied(ledger: Ledger, lines: list[dict[str, Any]]) -> None:
    for line in lines:
        result = ledger.apply(line)
        assert result.status == "applied", (line, result.error)


@pytest.fixture
def market(store: Any) -> Any:
    with store.ledger() as ledger:
        applied(ledger, MARKET)
        before = ledger.position()
        applied(ledger, RETIREMENTS)
        yield ledger, Views(ledger, store.data / "views.sqlite"), before


def test_available_is_generated_less_retired_per_vintage_d_code_and_assignment(
        market: Any) -> None:
    _, views, before = market
    assert views.market_table("available") == [
        # 1,500 + 1,700 D4 never separated or retired
        {"vintage": 2024, "d_code": 4, "assignment": "assigned", "generated": 3_200,
         "retired": 0, "locked": 0, "available": 3_200},
        # 10,000 generated, 4,000 of them since separated; 500 retired while assigned
        {"vintage": 2024, "d_code": 6, "assignment": "assigned", "generated": 6_000,
         "retired": 500, "locked": 0, "available": 5_500},
        # the 4,000 separated; 2,500 of them retired for compliance
        {"vintage": 2024, "d_code": 6, "assignment": "separated", "generated": 4_000,
         "retired": 2_500, "locked": 0, "available": 1_500},
    ]
    # as the ledger stood before the retirements: nothing retired, all available
    earlier = {(r["d_code"], r["assignment"]): (r["retired"], r["available"])
               for r in views.market_table("available", before)}
    assert earlier == {(4, "assigned"): (0, 3_200), (6, "assigned"): (0, 6_000),
                       (6, "separated"): (0, 4_000)}


def test_separations_and_retirements_by_emts_reason_code(market: Any) -> None:
    _, views, before = market
    assert views.market_table("separations") == [
        {"year": 2024, "d_code": 6, "reason": "20", "gallon_rins": 4_000}]
    assert views.market_table("retirements") == [
        {"year": 2024, "d_code": 6, "reason": "10", "gallon_rins": 500},
        {"year": 2025, "d_code": 6, "reason": "80", "gallon_rins": 2_500},
    ]
    assert views.market_table("retirements", before) == []


def test_generation_by_fuel_and_source(market: Any) -> None:
    _, views, _ = market
    assert views.market_table("generation") == [
        {"year": 2024, "d_code": 4, "fuel": "biodiesel", "source": "domestic",
         "gallon_rins": 1_500, "volume": Decimal(1_000)},
        {"year": 2024, "d_code": 4, "fuel": "renewable_diesel", "source": "import",
         "gallon_rins": 1_700, "volume": Decimal(1_000)},
        {"year": 2024, "d_code": 6, "fuel": "ethanol", "source": "domestic",
         "gallon_rins": 10_000, "volume": Decimal(10_000)},
    ]


def test_late_report_counts_business_days_from_the_effective_date(market: Any) -> None:
    ledger, views, _ = market
    today = datetime.now(UTC).date()
    applied(ledger, [{"type": "generate", "id": "g-today", "date": today.isoformat(),
                      "party": "1001", "facility": "20001", "batch": "00009",
                      "fuel": "ethanol", "d_code": 6, "volume": 100}])
    rows = views.late(2024)
    # every submission dated in 2024, in log order; a transfer is a sell and a buy
    assert [(r["party"], r["command"], r["type"]) for r in rows] == [
        ("1001", "g1", "generate"), ("1002", "g2", "generate"), ("5001", "g3", "generate"),
        ("1001", "t1", "sell"), ("2001", "t1", "buy"), ("2001", "s1", "separate"),
        ("2001", "t2", "sell"), ("3001", "t2", "buy"), ("1001", "r1", "retire"),
    ]
    # recorded today, years after their dates: all late
    assert all(r["late"] is True and r["recorded"] == today.isoformat() for r in rows)
    assert {r["type"]: r["deadline_days"] for r in rows} == {
        "generate": 5, "sell": 5, "buy": 10, "separate": 5, "retire": 5}
    assert [r["command"] for r in views.late(2025)] == ["r2"]
    (now,) = views.late(today.year, only_late=False)[-1:]
    assert (now["command"], now["business_days"], now["late"]) == ("g-today", 0, False)


def test_the_tables_rebuilt_equal_the_tables_followed(market: Any, tmp_path: Any) -> None:
    ledger, views, _ = market
    project(ledger, views.path, batch_size=3)
    tables = ("late_submissions", "market_states", "market_reasons", "market_generation",
              "emts_submissions")
    followed = {t: rows for t, rows in dump(views.path).items() if t in tables}
    assert all(followed[t] for t in tables)
    rebuild(ledger, views.path)
    assert {t: rows for t, rows in dump(views.path).items() if t in tables} == followed


def blocks(xml: bytes) -> list[ET.Element]:
    root = ET.fromstring(xml)
    assert root.tag == f"{{{NAMESPACE}}}EMTS"
    return [child for child in root if child.tag.endswith("TransactionDetail")]


def local(element: ET.Element) -> str:
    return element.tag.removeprefix(f"{{{NAMESPACE}}}")


def value(element: ET.Element, name: str) -> str | None:
    found = element.find(f"{{{NAMESPACE}}}{name}")
    return None if found is None else found.text


def export(views: Views, party: str, start: str = "2024-01-01", end: str = "2025-12-31"
           ) -> bytes:
    rows = views.emts_submissions(party, date.fromisoformat(start), date.fromisoformat(end))
    xml = document(party, date(2026, 1, 1), rows, "test")
    xmlschema.XMLSchema(str(SCHEMA_FILE)).validate(xml.decode())
    return xml


def test_export_writes_the_schemas_blocks_in_its_element_order(market: Any) -> None:
    _, views, _ = market
    generate, sell, retire = blocks(export(views, "1001"))
    # reference.md §8: RINQuantity, BatchVolume, FuelCode, FuelCategoryCode, ProductionDate,
    # ProcessCode, QAPServiceTypeCode, …, EquivalenceValue, …, GenerateOriginatingSourceDetail
    assert [local(e) for e in generate] == [
        "RINQuantity", "BatchVolume", "FuelCode", "FuelCategoryCode", "ProductionDate",
        "ProcessCode", "QAPServiceTypeCode", "EquivalenceValue",
        "GenerateOriginatingSourceDetail"]
    assert (value(generate, "RINQuantity"), value(generate, "FuelCode"),
            value(generate, "ProductionDate")) == ("10000", "6", "2024-01-02")
    source = generate.find(f"{{{NAMESPACE}}}GenerateOriginatingSourceDetail")
    assert source is not None and [e.text for e in source] == ["1001", "20001", "00001"]
    assert [local(e) for e in sell] == [
        "TransactionPartnerOrganizationIdentifier", "TransactionPartnerOrganizationName",
        "RINQuantity", "BatchVolume", "FuelCode", "AssignmentCode", "RINYear",
        "QAPServiceTypeCode", "SellReasonCode", "TransferDate", "PTDNumber",
        "MatchingTransactionIdentifier", "OriginatingSourceDetail"]
    assert (value(sell, "TransactionPartnerOrganizationName"), value(sell, "RINQuantity"),
            value(sell, "SellReasonCode"), value(sell, "TransferDate")) == (
        "Party 2001", "4000", "010", "2024-01-05")
    assert (local(retire), value(retire, "RetireReasonCode"), value(retire, "AssignmentCode"),
            value(retire, "RINQuantity")) == ("RetireTransactionDetail", "10", "1", "500")


def test_export_takes_effective_dates_and_the_buyers_side(market: Any) -> None:
    _, views, _ = market
    kinds = [(local(b), value(b, "RINQuantity")) for b in blocks(export(views, "2001"))]
    assert kinds == [("BuyTransactionDetail", "4000"), ("SeparateTransactionDetail", "4000"),
                     ("SellTransactionDetail", "3000")]
    assert [local(b) for b in blocks(export(views, "3001", end="2024-12-31"))] == [
        "BuyTransactionDetail"]  # its retirement is dated 2025
    (retire,) = blocks(export(views, "3001", start="2025-01-01"))
    assert (value(retire, "RetireReasonCode"), value(retire, "ComplianceYear")) == ("80", "2024")


def test_a_posted_sell_is_exported_only_once_completed(market: Any) -> None:
    ledger, views, _ = market
    sell = {"type": "sell", "id": "S1", "date": "2024-03-01", "party": "1001", "to": "2001",
            "rins": {**D6_K1, "quantity": 1_000}, "volume": 1_000}
    applied(ledger, [sell])
    assert "SellTransactionDetail" not in [
        local(b) for b in blocks(export(views, "1001", start="2024-03-01"))]
    applied(ledger, [{"type": "buy", "id": "B1", "date": "2024-03-01", "party": "2001",
                      "from": "1001", "rins": {**D6_K1, "quantity": 1_000}, "volume": 1_000}])
    (posted,) = blocks(export(views, "1001", start="2024-03-01"))
    assert (local(posted), value(posted, "MatchingTransactionIdentifier"),
            value(posted, "RINQuantity")) == ("SellTransactionDetail", "B1", "1000")
    (bought,) = blocks(export(views, "2001", start="2024-03-01"))
    assert (local(bought), value(bought, "MatchingTransactionIdentifier")) == (
        "BuyTransactionDetail", "S1")


def test_the_schema_refuses_a_block_out_of_order() -> None:
    """The XSD is a real check: a generation with its FuelCode before its RINQuantity fails."""
    bad = (f'<EMTS xmlns="{NAMESPACE}"><UserLoginText>x</UserLoginText>'
           "<SubmittalCreationDate>2024-01-01</SubmittalCreationDate>"
           "<OrganizationIdentifier>1001</OrganizationIdentifier>"
           "<GenerateTransactionDetail><FuelCode>6</FuelCode><RINQuantity>1</RINQuantity>"
           "</GenerateTransactionDetail></EMTS>")
    assert not xmlschema.XMLSchema(str(SCHEMA_FILE)).is_valid(bad)
