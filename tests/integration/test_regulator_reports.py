"""The transaction (§80.1451(c)(1)), generation (§80.1451(b)(1)(ii)) and annual (§80.1451(a)(1))
reports and the attest workpaper (§80.1464, §80.127) on the hand-computed market of
tests/markets.py `activity_market` (events A-O)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from markets import activity_market
from projections_helpers import apply_all
from sqlite_utils import Database

from ledger import Ledger
from ledger.simulation.small_market import small_market
from projections import Views, project
from projections.attest import sample_size

B1 = "1202310012000100001106"  # K=1, vintage 2023, company 1001, facility 20001, batch 00001,
B2 = "1202410012000100002106"  # RR 10, D6; and batch 00002 of 2024


@pytest.fixture(scope="module")
def market(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("reports")
    with Ledger(folder) as ledger:
        apply_all(ledger, activity_market())
    return folder


def views_of(folder: Path, query: str, *args: Any) -> list[dict[str, Any]]:
    with Ledger(folder) as ledger:
        result: list[dict[str, Any]] = getattr(Views(ledger), query)(*args)
        return result


def tx(type_: str, date: str, rin: str, gallon_rins: int, id_: str, *, partner: str | None = None,
       price: str | None = None, gallon_price: str | None = None, reason: str | None = None,
       broker: str | None = None) -> dict[str, Any]:
    return {"party": None, "type": type_, "date": date, "partner": partner, "rin": rin,
            "k": int(rin[0]), "gallon_rins": gallon_rins, "price": price,
            "gallon_price": gallon_price, "reason": reason, "broker": broker, "id": id_}


def test_blender_transactions_q1_2024(market: Path) -> None:
    """Only what moved; a separation names its RINs K=1; the fast path (I) is a sell; the
    two-sided trade (J) is the seller's sell, priced and brokered as its posting says."""
    expected = [
        # F: 2024 serials 1-4,000 bought from 1001, standard trade 010
        tx("buy", "2024-02-01", f"{B2}0000000100004000", 4000, "t-f", partner="1001",
           reason="010"),
        # G: the blender's 2023 assigned serials 4,001-5,000; H: 2024 serials 1-2,000 (lowest
        # first); blending is EMTS separation reason 20
        tx("separate", "2024-02-10", f"{B1}0000400100005000", 1000, "s-g", reason="20"),
        tx("separate", "2024-02-10", f"{B2}0000000100002000", 2000, "s-h", reason="20"),
        # I: separated 2024 serials 1-1,500 at 1.10 a gallon-RIN
        tx("sell", "2024-03-01", f"2{B2[1:]}0000000100001500", 1500, "t-i", partner="3001",
           price="1.10", reason="010"),
        # J: separated 2023 serials 1-3,000 went in D, so 3,001-3,500; the sell's own posting
        tx("sell", "2024-03-15", f"2{B1[1:]}0000300100003500", 500, "s-1", partner="4001",
           price="0.90", reason="010", broker="5001"),
    ]
    rows = views_of(market, "transactions", "2001", 2024, 1)
    assert rows == [{**row, "party": "2001"} for row in expected]


def test_buyer_sees_a_buy_with_its_own_posting(market: Path) -> None:
    assert views_of(market, "transactions", "4001", 2024) == [{**tx(
        "buy", "2024-03-15", f"2{B1[1:]}0000300100003500", 500, "b-1", partner="2001",
        gallon_price="2.25", reason="010"), "party": "4001"}]


def test_retirements_and_generation_rows(market: Path) -> None:
    retired = views_of(market, "transactions", "3001", 2024, 2)
    # N: 2024 serials 1-1,500 arrived in I, so 1-1,000 retire; compliance is EMTS code 80
    assert [(r["type"], r["rin"], r["reason"], r["id"]) for r in retired] == [
        ("retire", f"2{B2[1:]}0000000100001000", "80", "r-n"),
        ("buy", f"{B2}0000200100003000", "010", "t-o")]  # O: the blender's 2,001-3,000
    generated = views_of(market, "transactions", "1001", 2024, 1)
    assert [(r["type"], r["rin"], r["partner"], r["reason"]) for r in generated] == [
        ("generate", f"{B2}0000000100008000", None, None),
        ("sell", f"{B2}0000000100004000", "2001", "010")]


def test_a_pending_posting_is_no_transaction(tmp_path: Path) -> None:
    with Ledger(tmp_path) as ledger:
        apply_all(ledger, activity_market()[:12])  # up to H
        apply_all(ledger, [{"type": "sell", "id": "s-9", "date": "2024-03-15", "party": "2001",
                            "to": "4001", "rins": {"d_code": 6, "vintage": 2023, "k": 2,
                                                   "quantity": 500}}])
        assert [r["type"] for r in Views(ledger).transactions("2001", 2024, 1)] == [
            "buy", "separate", "separate"]


def test_generation_report(market: Path) -> None:
    assert views_of(market, "generation", "1001", 2024) == [{
        "party": "1001", "rin": f"{B2}0000000100008000", "production_date": "2024-01-15",
        "fuel": "ethanol", "d_code": 6, "equivalence_value": "1.0", "volume": "8000",
        "feedstocks": None, "gallon_rins": 8000,  # 8,000 gallons × EV 1.0 (§80.1415)
    }]
    assert views_of(market, "generation", "1001", 2024, 2) == []
    assert [r["rin"] for r in views_of(market, "generation", "1001", 2023, 4)] == [
        f"{B1}0000000100010000"]


def test_annual_report(market: Path) -> None:
    """RF: RVO 5,000; retired for 2024: 1,000 of 2024 (N), 2,000 of 2023 (L), 500 of them
    invalid (M). Applied: prior-year valid 1,500 capped at 20 % × 5,000 = 1,000
    (§80.1427(a)(5)), plus 1,000 current = 2,000; deficit 5,000 − 2,000 = 3,000, carried
    (none was carried in, §80.1427(b)(1)). D6 RINs count for RF only (§80.1427(a)(2))."""
    none = {"rvo": 0, "deficit_carried_in": 0, "current_year_retired": 0,
            "prior_year_retired": 0, "current_year_invalid": 0, "prior_year_invalid": 0,
            "deficit_carried_out": 0}
    assert views_of(market, "annual", "3001", 2024) == [
        {"party": "3001", "year": 2024, "category": "CB", **none},
        {"party": "3001", "year": 2024, "category": "BBD", **none},
        {"party": "3001", "year": 2024, "category": "AB", **none},
        {"party": "3001", "year": 2024, "category": "RF", "rvo": 5000, "deficit_carried_in": 0,
         "current_year_retired": 1000, "prior_year_retired": 2000, "current_year_invalid": 0,
         "prior_year_invalid": 500, "deficit_carried_out": 3000},
    ]
    assert views_of(market, "annual", "2001", 2024) == []  # no obligation reported


@pytest.mark.parametrize(("population", "size"), [
    (0, 0), (1, 1), (19, 19), (20, 19), (25, 19),  # N or 19, whichever is smaller
    (26, 20), (40, 20), (41, 25), (65, 25), (66, 29), (10_000, 29),
])
def test_sample_sizes_of_section_80_127(population: int, size: int) -> None:
    assert sample_size(population) == size


def test_attest_workpaper_on_the_hand_market(market: Path) -> None:
    rows = views_of(market, "attest", "2001", 2024, 11)
    samples = {r["type"]: r for r in rows if r["type"] != "rollforward"}
    assert list(samples) == ["purchased", "sold", "retired", "separated", "reinstated"]
    populations = {"purchased": ["t-f"], "sold": ["t-i", "s-1", "t-o"], "retired": [],
                   "separated": ["s-g", "s-h"], "reinstated": []}
    for name, ids in populations.items():
        row = samples[name]
        assert (row["population"], row["sample_size"]) == (len(ids), len(ids))  # all, < 19
        assert sorted(row["sampled"]) == sorted(ids)
    rollforward = [(r["quarter"], r["assignment"], r["matches"]) for r in rows
                   if r["type"] == "rollforward"]
    assert rollforward == [(q, a, True) for q in (1, 2, 3, 4) for a in ("assigned", "separated")]


def test_attest_samples_are_seeded(tmp_path: Path) -> None:
    """The small market: 48 sells by the blender in 2024, so 25 are drawn (§80.127: 41-65);
    the same seed draws the same, in the same order; another seed draws others."""
    with Ledger(tmp_path) as ledger:
        assert {r.status for r in ledger.apply_many(small_market())} == {"applied"}
        views = Views(ledger)
        first = {r["type"]: r for r in views.attest("2001", 2024, 5)}
        again = {r["type"]: r for r in views.attest("2001", 2024, 5)}
        other = {r["type"]: r for r in views.attest("2001", 2024, 6)}
    sold = first["sold"]
    assert (sold["population"], sold["sample_size"], len(set(sold["sampled"]))) == (48, 25, 25)
    assert sold["sampled"] == again["sold"]["sampled"]
    assert sold["sampled"] != other["sold"]["sampled"]


def test_attest_finds_an_activity_report_that_disagrees_with_the_log(tmp_path: Path) -> None:
    """The roll-forward is recomputed from the log: an activity read model that lost the
    two-sided trade (J) no longer matches in Q1's separated row, and says where."""
    with Ledger(tmp_path) as ledger:
        apply_all(ledger, activity_market())
        project(ledger)
        db = Database(tmp_path / "views.sqlite")
        db.execute("DELETE FROM rin_transactions WHERE \"transaction\" = 's-1'")
        db.conn.commit()
        db.close()
        rows = Views(ledger).attest("2001", 2024, 1)
    broken = [(r["quarter"], r["assignment"], r["differences"]) for r in rows
              if r["type"] == "rollforward" and not r["matches"]]
    assert broken == [(1, "separated", "prior_sold: report 0, recomputed 500")]


def test_attest_as_known_before_the_two_sided_trade(tmp_path: Path) -> None:
    """Known at the point before J's sell: the blender had sold only in I, and the report and
    the roll-forward, both at that point, still agree."""
    lines = activity_market()
    with Ledger(tmp_path) as ledger:
        before = len(lines)
        for number, command in enumerate(lines, start=1):
            if command.get("id") == "s-1":
                before = ledger.position()
            assert ledger.apply(command, number).status == "applied"
        rows = Views(ledger).attest("2001", 2024, 3, known_at=before)
    sold = next(r for r in rows if r["type"] == "sold")
    assert (sold["population"], sold["sampled"]) == (1, ["t-i"])
    assert all(r["matches"] for r in rows if r["type"] == "rollforward")
