"""Invalid RINs (§80.1431, §80.1474): a Clean-Green-like case from generation to replacement.

1001 generates 100,000 D4 RINs with no valid fuel behind them; the blender 2001 separates them
and sells 60,000 to refiner A (3001), who retires 50,000 for 2024, and 40,000 to refiner B
(3002). The regulator invalidates the batch; the report, the refusals (INVALID-USE,
INVALID-TRANSFER, REPLACE-NEEDED, REPLACE-D-CODE), the findings' own rules (INVALID-GENERATED,
INVALID-ONCE) and A's compliance position are checked against hand-computed numbers.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from markets import ok
from typer.testing import CliRunner

from ledger import Ledger
from ledger.cli.main import app
from projections import Views

# Biodiesel, EV 1.5 (RR 15): 66,666.67 gal × 1.5 = 100,000.005 → 100,000 gallon-RINs (§80.1426(f)).
BAD_GALLONS = "66666.67"
BAD_BATCH = "2024" "1001" "10001" "CG001"  # YYYY CCCC FFFFF BBBBB (§80.1425(e))
BAD = "1" "2024" "1001" "10001" "CG001" "15" "4" "00000001" "00100000"
# 1002's valid biodiesel: 40,000 gal × 1.5 = 60,000 D4 gallon-RINs; 1003's ethanol: 10,000 gal ×
# EV 1.0 = 10,000 D6 gallon-RINs.
A, B = "3001", "3002"
RVO = {"CB": 0, "BBD": 100_000, "AB": 100_000, "RF": 100_000}


def refused(ledger: Ledger, cmd: dict[str, Any], rule_id: str, citation: str, field: str,
            message: str) -> None:
    """`cmd` is rejected under `rule_id` with exactly this message, and nothing is stored."""
    before = ledger.position()
    result = ledger.apply(cmd)
    assert (result.status, result.rule, result.citation, result.field) == (
        "rejected", rule_id, citation, field)
    assert result.error == f"{citation}: {message}"
    assert ledger.position() == before


def d4(quantity: int, **narrow: str) -> dict[str, Any]:
    return {"d_code": 4, "vintage": 2024, "k": 2, "quantity": quantity, **narrow}


def retire(party: str, reason: str, rins: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "retire", "date": "2025-07-01", "party": party, "reason": reason,
            "rins": rins, **extra}


def invalidate(rin: str = BAD, **extra: Any) -> dict[str, Any]:
    return {"type": "invalidate", "date": "2025-06-01", "rin": rin,
            "reason": "improperly_generated", **extra}


def supply(ledger: Ledger, producer: str, facility: str, batch: str, fuel: str, d_code: int,
           gallons: str, on: str, blend: dict[str, Any]) -> None:
    """`producer` generates, sells the K=1 RINs with the fuel to 2001, which separates them all."""
    result = ok(ledger, type="generate", date=on, party=producer, facility=facility, batch=batch,
                fuel=fuel, d_code=d_code, volume=gallons)
    count = int(result.rin[30:38])
    rins = {"d_code": d_code, "vintage": 2024, "k": 1, "quantity": count, "batch": batch}
    ok(ledger, type="transfer", date=on, **{"from": producer}, to="2001", rins=rins,
       volume=gallons)
    ok(ledger, type="separate", date=on, party="2001", reason="blending", rins=rins,
       volume=gallons, **blend)


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Ledger]:
    """The case up to A's compliance retirement, plus valid D4 and D6 RINs held by A."""
    with Ledger(tmp_path) as book:
        for party, roles, facilities in [
            ("1001", ["producer"], ["10001"]), ("1002", ["producer"], ["10002"]),
            ("1003", ["producer"], ["10003"]), ("2001", ["blender"], []),
            (A, ["obligated_party"], []), (B, ["obligated_party"], []),
        ]:
            ok(book, type="register_party", party=party, name=f"Party {party}", roles=roles,
               facilities=facilities)
        supply(book, "1001", "10001", "CG001", "biodiesel", 4, BAD_GALLONS, "2024-01-31",
               {"blend_percent": 20})
        # Separated RINs move lowest serials first: A gets 1-60,000, B 60,001-100,000.
        ok(book, type="transfer", date="2024-03-15", **{"from": "2001"}, to=A, rins=d4(60_000))
        ok(book, type="transfer", date="2024-03-15", **{"from": "2001"}, to=B, rins=d4(40_000))
        ok(book, type="report_obligation", party=A, year=2024, rvo=RVO)
        ok(book, **retire(A, "compliance", d4(50_000), date="2025-02-01", compliance_year=2024))
        supply(book, "1002", "10002", "VB001", "biodiesel", 4, "40000", "2024-04-30",
               {"blend_percent": 20})
        supply(book, "1003", "10003", "ET001", "ethanol", 6, "10000", "2024-04-30", {})
        ok(book, type="transfer", date="2024-05-15", **{"from": "2001"}, to=A,
           rins=d4(50_000, batch="VB001"))
        ok(book, type="transfer", date="2024-05-15", **{"from": "2001"}, to=A,
           rins={"d_code": 6, "vintage": 2024, "k": 2, "quantity": 10_000})
        yield book


def bbd(ledger: Ledger) -> dict[str, Any]:
    return next(r for r in Views(ledger).compliance(2024, A) if r["category"] == "BBD")


def held(batch: str, party: str, n: int) -> dict[str, Any]:
    return {"batch": batch, "party": party, "status": "held", "reason": None, "k": 2,
            "gallon_rins": n, "compliance_year": None, "categories": "", "must_replace": 0,
            "replacement_d_codes": "", "replaced": 0, "outstanding": 0}


def a_retired(replaced: int) -> dict[str, Any]:
    # A retired serials 1-50,000 for 2024; a D4 RIN counts toward BBD, AB and RF
    # (§80.1427(a)(2)); valid for all three: D4, and D7 designated BBD ((a)(3)(ii)).
    return {"batch": BAD_BATCH, "party": A, "status": "retired", "reason": "compliance", "k": 2,
            "gallon_rins": 50_000, "compliance_year": 2024, "categories": "BBD AB RF",
            "must_replace": 50_000, "replacement_d_codes": "D4 D7-BBD", "replaced": replaced,
            "outstanding": 50_000 - replaced}


def test_the_whole_case(ledger: Ledger, tmp_path: Path) -> None:
    # Before the finding: BBD RVO 100,000, applied 50,000, deficit 100,000 − 50,000 = 50,000.
    assert (bbd(ledger)["applied"], bbd(ledger)["deficit"]) == (50_000, 50_000)
    result = ok(ledger, **invalidate())
    assert result.rins == [BAD]
    # After it: the 50,000 retired are invalid, applied 50,000 − 50,000 = 0, deficit 100,000.
    assert (bbd(ledger)["applied"], bbd(ledger)["deficit"]) == (0, 100_000)
    views = Views(ledger)
    # A holds 60,000 − 50,000 = 10,000 (serials 50,001-60,000), B holds 40,000.
    assert views.invalid() == [
        held(BAD_BATCH, A, 10_000), held(BAD_BATCH, B, 40_000), a_retired(0)]

    # INVALID-USE: B may not use its invalid RINs for compliance, §80.1431(b)(2) …
    ok(ledger, type="report_obligation", party=B, year=2024, rvo=RVO)
    b_block = "2" "2024" "1001" "10001" "CG001" "15" "4" "00060001" "00100000"
    refused(ledger, retire(B, "compliance", d4(40_000), compliance_year=2024), "INVALID-USE",
            "§80.1431(b)(2)", "rins",
            f"40,000 gallon-RINs of {b_block} are invalid and cannot be retired for compliance; "
            "retire them as invalid_rin")
    refused(ledger, retire(B, "remedial_compliance", d4(40_000), compliance_year=2024),
            "INVALID-USE", "§80.1431(b)(2)", "rins",
            f"40,000 gallon-RINs of {b_block} are invalid and cannot be retired for "
            "remedial_compliance; retire them as invalid_rin")
    # … INVALID-TRANSFER: nor sell them (§80.1460(b)(2)) …
    refused(ledger, {"type": "transfer", "date": "2025-07-01", "from": B, "to": A,
                     "rins": d4(40_000)}, "INVALID-TRANSFER", "§80.1460(b)(2)", "rins",
            f"40,000 gallon-RINs of {b_block} are invalid and cannot be transferred; "
            "retire them as invalid_rin")
    # … but retires them as invalid RINs, EMTS 50 (§80.1431(b)(1)).
    ok(ledger, **retire(B, "invalid_rin", d4(40_000)))
    b_row = {**held(BAD_BATCH, B, 40_000), "status": "retired", "reason": "invalid_rin"}
    assert views.invalid()[1:] == [a_retired(0), b_row]

    # REPLACE-D-CODE: a D6 RIN counts toward RF only, not BBD or AB (§80.1427(a)(2)).
    refused(ledger, retire(A, "remedial_invalid", {"d_code": 6, "vintage": 2024, "k": 2,
                                                   "quantity": 10_000}, compliance_year=2024),
            "REPLACE-D-CODE", "§80.1474(b)", "rins",
            "a D6 RIN is not valid for BBD, AB, which the invalid RINs were applied to; "
            "valid replacements: D4, D7-BBD")
    # INVALID-USE: the replacement must not be invalid itself (A's 10,000 left of CG001).
    a_left = "2" "2024" "1001" "10001" "CG001" "15" "4" "00050001" "00060000"
    refused(ledger, retire(A, "remedial_invalid", d4(10_000, batch="CG001"),
                           compliance_year=2024), "INVALID-USE", "§80.1431(b)(2)", "rins",
            f"10,000 gallon-RINs of {a_left} are invalid and cannot be retired for "
            "remedial_invalid; retire them as invalid_rin")
    # The replacement: 50,000 valid D4 for 2024 (EMTS 110).
    ok(ledger, **retire(A, "remedial_invalid", d4(50_000, batch="VB001"), compliance_year=2024))
    assert views.invalid() == [held(BAD_BATCH, A, 10_000), a_retired(50_000), b_row]
    # The replacement counts for 2024 again: applied 0 + 50,000 = 50,000, deficit 50,000.
    assert (bbd(ledger)["applied"], bbd(ledger)["deficit"]) == (50_000, 50_000)
    ok(ledger, **retire(A, "invalid_rin", d4(10_000, batch="CG001")))
    assert [r["status"] for r in views.invalid()] == ["retired", "retired", "retired"]
    assert views.verify() == []  # conservation, and the views equal a rebuild

    rows = json.loads(cli(tmp_path, "invalid", "--batch", BAD, "--json"))
    assert [(r["party"], r["reason"], r["outstanding"]) for r in rows] == [
        (A, "compliance", 0), (A, "invalid_rin", 0), (B, "invalid_rin", 0)]
    assert cli(tmp_path, "invalid", "--csv").splitlines()[0] == (
        "batch,party,status,reason,k,gallon_rins,compliance_year,categories,must_replace,"
        "replacement_d_codes,replaced,outstanding")


def cli(tmp_path: Path, *args: str) -> str:
    result = CliRunner().invoke(app, ["--data", str(tmp_path), *args])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_a_position_drops_when_the_finding_follows_a_projection(ledger: Ledger) -> None:
    """Positions already projected are recomputed when a later finding arrives."""
    views = Views(ledger)
    assert views.compliance(2024, A)[1]["applied"] == 50_000
    ok(ledger, **invalidate())
    # RF: 50,000 D4 retired, all invalid → applied 0, deficit 100,000 − 0 = 100,000.
    rf = views.compliance(2024, A)[3]
    assert (rf["category"], rf["applied"], rf["deficit"]) == ("RF", 0, 100_000)
    assert views.verify() == []


def test_replace_needed(ledger: Ledger) -> None:
    refused(ledger, retire(A, "remedial_invalid", d4(10_000, batch="VB001"),
                           compliance_year=2024), "REPLACE-NEEDED", "§80.1474(b)", "rins",
            "party 3001 has 0 invalid gallon-RINs used for 2024 left to replace, not 10,000")
    ok(ledger, **invalidate())
    refused(ledger, retire(A, "remedial_invalid", d4(10_000, batch="VB001")), "REPLACE-NEEDED",
            "§80.1474(b)", "compliance_year",
            "a remedial_invalid retirement names the compliance year whose invalid RINs it "
            "replaces")
    ok(ledger, **retire(A, "remedial_invalid", d4(30_000, batch="VB001"), compliance_year=2024))
    # 50,000 used − 30,000 replaced = 20,000 left; 20,001 is one too many.
    ok(ledger, type="transfer", date="2024-06-01", **{"from": "2001"}, to=A,
       rins=d4(10_000, batch="VB001"))
    refused(ledger, retire(A, "remedial_invalid", d4(20_001, batch="VB001"),
                           compliance_year=2024), "REPLACE-NEEDED", "§80.1474(b)", "rins",
            "party 3001 has 20,000 invalid gallon-RINs used for 2024 left to replace, "
            "not 20,001")
    ok(ledger, **retire(A, "remedial_invalid", d4(20_000, batch="VB001"), compliance_year=2024))
    assert Views(ledger).invalid()[-1]["outstanding"] == 0


def test_invalid_generated(ledger: Ledger) -> None:
    never = "1" "2024" "1001" "10001" "CG009" "15" "4" "00000001" "00000010"
    refused(ledger, invalidate(never), "INVALID-GENERATED", "§80.1431(a)", "rin",
            "batch 2024100110001CG009 was never generated")
    past = "1" "2024" "1001" "10001" "CG001" "15" "4" "00099991" "00100001"
    refused(ledger, invalidate(past), "INVALID-GENERATED", "§80.1431(a)", "rin",
            "serials 99,991-100,001 are outside the 100,000 gallon-RINs batch "
            "2024100110001CG001 was generated with (1-100,000)")
    wrong_d = "1" "2024" "1001" "10001" "CG001" "15" "6" "00000001" "00000010"
    refused(ledger, invalidate(wrong_d), "INVALID-GENERATED", "§80.1431(a)", "rin",
            "batch 2024100110001CG001 was generated with RR 15 and D4, not RR 15 and D6")
    # Part of the batch, named by a K=2 code: B's 40,000 only.
    ok(ledger, **invalidate("2" "2024" "1001" "10001" "CG001" "15" "4" "00060001" "00100000",
                            reason="sold_twice", note="sold to two refiners"))
    assert Views(ledger).invalid() == [held(BAD_BATCH, B, 40_000)]


def test_invalid_once(ledger: Ledger) -> None:
    ok(ledger, **invalidate("1" "2024" "1001" "10001" "CG001" "15" "4" "00000001" "00050000"))
    # Serials 40,001-60,000 overlap 1-50,000 in 40,001-50,000: 10,000 already invalid.
    refused(ledger, invalidate("1" "2024" "1001" "10001" "CG001" "15" "4" "00040001" "00060000"),
            "INVALID-ONCE", "§80.1431(a)", "rin",
            "10,000 of the serials 40,001-60,000 of batch 2024100110001CG001 are already invalid")
    ok(ledger, **invalidate("1" "2024" "1001" "10001" "CG001" "15" "4" "00050001" "00100000",
                            reason="duplicate"))
    rows = Views(ledger).invalid()
    # 10,000 + 40,000 held, 50,000 retired: all 100,000 of the batch.
    assert sum(r["gallon_rins"] for r in rows) == 100_000


def test_invalidate_is_idempotent_and_batched(tmp_path: Path, ledger: Ledger) -> None:
    """A finding with an id applies once; applied in one batch with the retirement it affects."""
    first = ledger.apply({**invalidate(), "id": "epa-1"})
    again = ledger.apply({**invalidate(), "id": "epa-1"})
    assert (first.status, again.status) == ("applied", "duplicate")
    results = list(ledger.apply_many([
        retire(B, "invalid_rin", d4(40_000)),
        retire(A, "remedial_invalid", d4(50_000, batch="VB001"), compliance_year=2024),
    ]))
    assert [r.status for r in results] == ["applied", "applied"]
    assert [r["outstanding"] for r in Views(ledger).invalid()] == [0, 0, 0]


def refused_second_half_retirement(ledger: Ledger) -> None:
    """A holds serials 50,001-60,000 of CG001, invalid since the regulator's finding of
    50,001-100,000: retiring them for compliance is refused."""
    refused(ledger, retire(A, "compliance", d4(10_000, batch="CG001"), compliance_year=2024),
            "INVALID-USE", "§80.1431(b)(2)", "rins",
            "10,000 gallon-RINs of 22024100110001CG0011540005000100060000 are invalid and "
            "cannot be retired for compliance; retire them as invalid_rin")


def test_a_finding_stored_by_another_writer_is_seen_at_once(
    ledger: Ledger, tmp_path: Path
) -> None:
    """A ledger's in-memory aggregates are dropped as soon as another writer stores anything,
    so a retirement never relies on a stale record of what was found invalid."""
    first_half = BAD[:22] + "00000001" + "00050000"
    ok(ledger, **invalidate(first_half))  # the BatchInvalidation is now in `ledger`'s memory
    with Ledger(tmp_path) as regulator:
        ok(regulator, **invalidate(BAD[:22] + "00050001" + "00100000"))
    refused_second_half_retirement(ledger)


def test_a_first_finding_stored_by_another_writer_is_seen_at_once(
    ledger: Ledger, tmp_path: Path
) -> None:
    """The index of opened invalidation records is read up to the log's end before every
    command, so a record another writer opens after this ledger last looked is not missed."""
    with Ledger(tmp_path) as regulator:
        ok(regulator, **invalidate(BAD[:22] + "00050001" + "00100000"))
    refused_second_half_retirement(ledger)
    # the same in a batch: `apply_many` reads the index too
    results = list(ledger.apply_many([
        retire(A, "compliance", d4(10_000, batch="CG001"), compliance_year=2024),
    ]))
    assert results[0].rule == "INVALID-USE"
