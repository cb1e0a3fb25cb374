"""Red team for issue 12's EMTS model beyond two-sided trades: locks (§80.1474(b)(1)), QAP status
(§80.1469-§80.1471), the blocked list (§80.1452(d)), the new roles and remedial reversals, tried
by an attacker and a careless caller through `ledger.Ledger`. Each test asserts what design.md
"Release 2" and docs/locks.md promise; every refusal names its rule and stores nothing, and
every attack leaves `verify` clean.

The hand-worked market: 1002 generates 1,000 gallons of ethanol on 1 January 2024 (EV 1.0, D6
serials 1-1,000, §80.1426(f)(1)); 1001 generates 10,000 on 2 January (serials 1-10,000). Both
sell all their RINs with the fuel to the blender 2001 on 3 January (fast path); FIFO (oldest
generation first) so a pick by attributes takes 1002's batch first. 3001 is an obligated refiner
(facility 30001, RF obligation 4,000 for 2024); 9001 a QAP auditor.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from ledger import Ledger
from projections import Views
from tests import applying
from tests.applying import ok

A = "1202410012000100001106{:08d}{:08d}"  # 1001's batch, K=1
A2 = "2202410012000100001106{:08d}{:08d}"  # 1001's batch, K=2
B = "1202410022000200001106{:08d}{:08d}"  # 1002's batch, K=1
BATCH_A = {"company": "1001", "facility": "20001", "batch": "00001", "vintage": 2024}
BATCH_B = {"company": "1002", "facility": "20002", "batch": "00001", "vintage": 2024}
MARKET: list[dict[str, Any]] = [
    {"type": "register_party", "party": "1001", "name": "Prairie", "roles": ["producer"],
     "facilities": ["20001"]},
    {"type": "register_party", "party": "1002", "name": "Hilltop", "roles": ["producer"],
     "facilities": ["20002"]},
    {"type": "register_party", "party": "2001", "name": "Gulf", "roles": ["blender"]},
    {"type": "register_party", "party": "3001", "name": "Lakeside",
     "roles": ["obligated_party", "refiner"], "facilities": ["30001"]},
    {"type": "register_party", "party": "9001", "name": "Keystone QAP", "roles": ["qap_auditor"]},
    {"type": "generate", "id": "gB", "date": "2024-01-01", "party": "1002", "facility": "20002",
     "batch": "00001", "fuel": "ethanol", "d_code": 6, "volume": 1_000},
    {"type": "generate", "id": "gA", "date": "2024-01-02", "party": "1001", "facility": "20001",
     "batch": "00001", "fuel": "ethanol", "d_code": 6, "volume": 10_000},
    {"type": "transfer", "id": "tB", "date": "2024-01-03", "from": "1002", "to": "2001",
     "rins": {"code": B.format(1, 1_000)}, "volume": 1_000},
    {"type": "transfer", "id": "tA", "date": "2024-01-03", "from": "1001", "to": "2001",
     "rins": {"code": A.format(1, 10_000)}, "volume": 10_000},
    {"type": "report_obligation", "id": "o1", "party": "3001", "year": 2024,
     "rvo": {"CB": 0, "BBD": 0, "AB": 0, "RF": 4_000}},
]


@pytest.fixture
def ledger(tmp_path: Path) -> Any:
    with Ledger(tmp_path / "d") as opened:
        ok(opened, *MARKET)
        yield opened


def refused(ledger: Ledger, cmd: dict[str, Any], rule: str | None = None) -> str:
    """Refused (by `rule` when given) citing a paragraph, and nothing stored."""
    result = applying.refused(ledger, cmd, rule)
    assert result.citation, result
    return str(result.error)


def clean(ledger: Ledger) -> None:
    assert ledger.audit() == []
    assert Views(ledger).verify() == []


def held(ledger: Ledger, party: str) -> dict[str, int]:
    return {b.rin: b.gallon_rins for b in ledger.blocks(party)}


def rins(quantity: int, k: int = 1, **extra: Any) -> dict[str, Any]:
    return {"d_code": 6, "vintage": 2024, "k": k, "quantity": quantity, **extra}


def transfer(on: str, selector: dict[str, Any], src: str = "2001", to: str = "3001",
             volume: int | None = None, **extra: Any) -> dict[str, Any]:
    line = {"type": "transfer", "date": on, "from": src, "to": to, "rins": selector, **extra}
    if volume is not None:
        line["volume"] = volume
    return line


def lock(on: str, batch: Any = None, party: str | None = None, kind: str = "lock"
         ) -> dict[str, Any]:
    line = {"type": kind, "date": on, "batch": batch or BATCH_A, "reason": "suspect feedstock"}
    if party is not None:
        line["party"] = party
    return line


def reverse(command: str, party: str, on: str, reason: str, rid: str = "R1") -> dict[str, Any]:
    return {"type": "reverse", "id": rid, "date": on, "party": party, "command": command,
            "reason": reason}


def spends(on: str) -> list[dict[str, Any]]:
    """Every command that could use 2001's RINs of batch A (serials 1-10)."""
    code = {"code": A.format(1, 10)}
    return [
        transfer(on, code, volume=10),
        {"type": "separate", "date": on, "party": "2001", "reason": "blending", "rins": code,
         "volume": 10},
        {"type": "retire", "date": on, "party": "2001", "reason": "spill", "rins": code},
        {"type": "split", "date": on, "party": "2001", "rin": A.format(1, 10_000),
         "sizes": [10, 9_990]},
        {"type": "sell", "id": f"S-{on}", "date": on, "party": "2001", "to": "3001",
         "rins": code, "volume": 10},
    ]


# --- locks ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("on", ["2024-01-05", "2024-01-10", "2024-02-01"],
                         ids=["back-dated", "lock-day", "later"])
def test_while_a_lock_holds_no_command_of_any_date_uses_the_batch(ledger: Ledger, on: str
                                                                  ) -> None:
    ok(ledger, lock("2024-01-10"))
    for cmd in spends(on):
        refused(ledger, cmd, "LOCK-HELD")
    clean(ledger)


def test_a_command_dated_inside_a_lifted_locks_life_is_refused(ledger: Ledger) -> None:
    ok(ledger, lock("2024-01-10"), lock("2024-01-20", kind="unlock"))
    for cmd in spends("2024-01-15"):
        refused(ledger, cmd, "LOCK-HELD")
    for cmd in spends("2024-01-19"):
        refused(ledger, cmd, "LOCK-HELD")
    ok(ledger, spends("2024-01-05")[0])  # before the lock: allowed
    ok(ledger, {**spends("2024-01-20")[0], "rins": {"code": A.format(11, 20)}})  # unlock day
    clean(ledger)


def test_a_pick_by_attributes_skips_a_locked_batch(ledger: Ledger) -> None:
    ok(ledger, lock("2024-01-10"))
    refused(ledger, transfer("2024-01-11", rins(1_001), volume=1_001))  # only 1,000 unlocked
    ok(ledger, transfer("2024-01-11", rins(1_000), volume=1_000))
    assert held(ledger, "3001") == {B.format(1, 1_000): 1_000}
    clean(ledger)


def test_a_back_dated_pick_inside_a_lifted_life_skips_the_batch(ledger: Ledger) -> None:
    ok(ledger, lock("2024-01-10"), lock("2024-01-20", kind="unlock"))
    ok(ledger, transfer("2024-01-15", rins(1_000), volume=1_000))  # 1002's B, FIFO anyway
    refused(ledger, transfer("2024-01-15", rins(1), volume=1))  # only batch A left
    ok(ledger, transfer("2024-01-20", rins(1), volume=1))
    assert held(ledger, "3001") == {B.format(1, 1_000): 1_000, A.format(1, 1): 1}
    clean(ledger)


def test_a_pending_sell_of_a_locked_batch_cannot_complete_nor_be_answered(ledger: Ledger
                                                                         ) -> None:
    ok(ledger, {"type": "sell", "id": "S1", "date": "2024-01-05", "party": "2001", "to": "3001",
                "rins": {"code": A.format(1, 100)}, "volume": 100})
    ok(ledger, lock("2024-01-06"))
    refused(ledger, {"type": "buy", "id": "B1", "date": "2024-01-05", "party": "3001",
                     "from": "2001", "rins": rins(100), "volume": 100, "match": "S1"},
            "LOCK-HELD")
    assert A.format(1, 100) in held(ledger, "2001")
    clean(ledger)


def test_an_auditor_cannot_lock_what_it_did_not_verify_nor_lift_the_regulators_lock(
        ledger: Ledger) -> None:
    refused(ledger, lock("2024-01-10", party="9001"), "LOCK-WHO")
    ok(ledger, {"type": "verify_batch", "date": "2024-01-04", "party": "9001",
                "batch": BATCH_B, "qap": "Q"})
    refused(ledger, lock("2024-01-10", party="9001"), "LOCK-WHO")  # verified B, not A
    ok(ledger, lock("2024-01-10"))  # the regulator
    refused(ledger, lock("2024-01-11", party="9001", kind="unlock"), "LOCK-WHO")
    refused(ledger, lock("2024-01-11", party="2001"))  # not an auditor nor the regulator
    ok(ledger, lock("2024-01-11", BATCH_B, party="9001"))
    refused(ledger, lock("2024-01-12", BATCH_B, kind="unlock", party="2001"))
    clean(ledger)


def test_a_locked_retired_rin_stops_counting_in_applied_and_counts_again_unlocked(
        ledger: Ledger) -> None:
    ok(ledger, transfer("2024-01-05", {"code": A.format(1, 4_000)}, volume=4_000),
       {"type": "separate", "date": "2024-01-06", "party": "3001", "reason": "obligated_party",
        "rins": {"code": A.format(1, 4_000)}, "volume": 4_000},
       {"type": "retire", "id": "r1", "date": "2025-02-01", "party": "3001",
        "reason": "compliance", "compliance_year": 2024,
        "rins": {"code": A2.format(1, 4_000)}})
    views = Views(ledger)

    def applied() -> int:
        views.project()
        rows = [r for r in views.compliance(2024, "3001") if r["category"] == "RF"]
        return int(rows[0]["applied"])

    assert applied() == 4_000
    ok(ledger, lock("2025-03-01"))
    assert applied() == 0
    ok(ledger, lock("2025-03-05", kind="unlock"))
    assert applied() == 4_000
    clean(ledger)


def test_holdings_blocks_say_which_are_locked(ledger: Ledger) -> None:
    ok(ledger, lock("2024-01-10"))
    assert {b.rin: b.locked for b in ledger.blocks("2001")} == {
        B.format(1, 1_000): False, A.format(1, 10_000): True}
    ok(ledger, lock("2024-01-20", kind="unlock"))
    assert {b.rin: b.locked for b in ledger.blocks("2001")} == {
        B.format(1, 1_000): False, A.format(1, 10_000): False}
    assert {b.rin: b.locked for b in ledger.blocks("2001", as_of="2024-01-15")} == {
        B.format(1, 1_000): False, A.format(1, 10_000): True}  # 15th: within the lifted life
    clean(ledger)


def test_holdings_blocks_as_of_before_a_lock_are_not_locked(ledger: Ledger) -> None:
    """docs/locks.md: with `--as-of D`, `locked` is whether a lock's life covers D."""
    ok(ledger, lock("2024-01-10"))
    assert {b.rin: b.locked for b in ledger.blocks("2001", as_of="2024-01-09")} == {
        B.format(1, 1_000): False, A.format(1, 10_000): False}


def test_a_lock_dated_before_the_batch_or_twice_is_refused(ledger: Ledger) -> None:
    refused(ledger, lock("2024-01-01"), "LOCK-STATE")  # A generated on the 2nd
    refused(ledger, lock("2024-01-10", kind="unlock"), "LOCK-STATE")  # not locked
    ok(ledger, lock("2024-01-10"))
    refused(ledger, lock("2024-01-11"), "LOCK-STATE")
    refused(ledger, lock("2024-01-09", kind="unlock"), "LOCK-STATE")  # before the lock
    clean(ledger)


# --- QAP ---------------------------------------------------------------------------------------

def test_only_a_qap_auditor_verifies_and_re_verification_replaces(ledger: Ledger) -> None:
    for party in ("2001", "3001", "1002"):
        refused(ledger, {"type": "verify_batch", "date": "2024-01-04", "party": party,
                         "batch": BATCH_A, "qap": "Q"}, "QAP-AUDITOR")
    ok(ledger, {"type": "verify_batch", "date": "2024-01-04", "party": "9001",
                "batch": BATCH_A, "qap": "Q"})
    assert {b.rin: b.qap for b in ledger.blocks("2001")} == {
        B.format(1, 1_000): "unverified", A.format(1, 10_000): "Q"}
    refused(ledger, transfer("2024-01-05", rins(10, qap="A"), volume=10))
    refused(ledger, transfer("2024-01-05", rins(1_001, qap="unverified"), volume=1_001))
    ok(ledger, {"type": "verify_batch", "date": "2024-01-06", "party": "9001",
                "batch": A.format(5, 9), "qap": "B"})  # by code: serials ignored
    assert {b.rin: b.qap for b in ledger.blocks("2001")} == {
        B.format(1, 1_000): "unverified", A.format(1, 10_000): "B"}
    refused(ledger, transfer("2024-01-07", rins(10, qap="Q"), volume=10))
    refused(ledger, transfer("2024-01-07", {"code": A.format(1, 10), "qap": "Q"}, volume=10),
            "QAP-STATUS")
    ok(ledger, transfer("2024-01-07", rins(10, qap="B"), volume=10))
    ok(ledger, transfer("2024-01-07", rins(10, qap="unverified"), volume=10))
    assert held(ledger, "3001") == {A.format(1, 10): 10, B.format(1, 10): 10}
    clean(ledger)


def test_a_trade_with_qap_on_one_side_only(ledger: Ledger) -> None:
    ok(ledger, {"type": "verify_batch", "date": "2024-01-04", "party": "9001",
                "batch": BATCH_A, "qap": "Q"})
    # the buy names Q; the sell answering it without qap picks only Q RINs (batch A), not FIFO B
    ok(ledger, {"type": "buy", "id": "B1", "date": "2024-01-05", "party": "3001",
                "from": "2001", "rins": rins(500, qap="Q"), "volume": 500},
       {"type": "sell", "id": "S1", "date": "2024-01-05", "party": "2001", "to": "3001",
        "rins": rins(500), "volume": 500, "match": "B1"})
    assert held(ledger, "3001") == {A.format(1, 500): 500}
    # a sell of unverified RINs does not agree with a buy naming Q
    ok(ledger, {"type": "sell", "id": "S2", "date": "2024-01-06", "party": "2001", "to": "3001",
                "rins": {"code": B.format(1, 100)}, "volume": 100})
    error = refused(ledger, {"type": "buy", "id": "B2", "date": "2024-01-06", "party": "3001",
                             "from": "2001", "rins": rins(100, qap="Q"), "volume": 100,
                             "match": "S2"}, "TRADE-MATCH")
    assert "qap" in error
    # a buy naming no qap agrees with the sell of unverified RINs
    ok(ledger, {"type": "buy", "id": "B3", "date": "2024-01-06", "party": "3001",
                "from": "2001", "rins": rins(100), "volume": 100, "match": "S2"})
    assert held(ledger, "3001") == {A.format(1, 500): 500, B.format(1, 100): 100}
    clean(ledger)


# --- the blocked list ----------------------------------------------------------------------------

def block(on: str, kind: str = "block_generator") -> dict[str, Any]:
    return {"type": kind, "date": on, "party": "3001", "generator": "1002"}


def test_a_transfer_pick_skips_the_blocked_generator_a_code_is_refused(ledger: Ledger) -> None:
    ok(ledger, block("2024-01-04"))
    ok(ledger, transfer("2024-01-05", rins(100), volume=100))  # FIFO would take B
    assert held(ledger, "3001") == {A.format(1, 100): 100}
    assert "1002" in refused(ledger, transfer("2024-01-05", {"code": B.format(1, 10)},
                                              volume=10), "BLOCKED-GENERATOR")
    refused(ledger, transfer("2024-01-05", rins(1, company="1002"), volume=1))
    ok(ledger, block("2024-01-06", "unblock_generator"))
    ok(ledger, transfer("2024-01-06", {"code": B.format(1, 10)}, volume=10))
    clean(ledger)


def test_a_buys_selection_skips_the_blocked_generator(ledger: Ledger) -> None:
    ok(ledger, block("2024-01-04"),
       {"type": "buy", "id": "B1", "date": "2024-01-05", "party": "3001", "from": "2001",
        "rins": rins(200), "volume": 200},
       {"type": "sell", "id": "S1", "date": "2024-01-05", "party": "2001", "to": "3001",
        "rins": rins(200), "volume": 200, "match": "B1"})
    assert held(ledger, "3001") == {A.format(1, 200): 200}
    clean(ledger)


def test_a_completion_delivering_a_blocked_generators_rins_is_refused(ledger: Ledger) -> None:
    ok(ledger, {"type": "sell", "id": "S1", "date": "2024-01-05", "party": "2001", "to": "3001",
                "rins": rins(100), "volume": 100})  # FIFO reserves B 1-100
    ok(ledger, block("2024-01-06"))
    assert "1002" in refused(ledger, {"type": "buy", "id": "B2", "date": "2024-01-05",
                                      "party": "3001", "from": "2001", "rins": rins(100),
                                      "volume": 100, "match": "S1"}, "BLOCKED-GENERATOR")
    assert held(ledger, "3001") == {}
    clean(ledger)


def test_block_and_unblock_only_once_each(ledger: Ledger) -> None:
    refused(ledger, block("2024-01-04", "unblock_generator"), "BLOCKED-LIST")
    ok(ledger, block("2024-01-04"))
    refused(ledger, block("2024-01-05"), "BLOCKED-LIST")
    clean(ledger)


# --- roles: a QAP auditor owns no RINs (§80.1471(b)(3)) ------------------------------------------

def test_a_qap_auditor_acquires_rins_by_no_path(ledger: Ledger) -> None:
    refused(ledger, transfer("2024-01-05", rins(10), to="9001", volume=10), "QAP-NO-RINS")
    refused(ledger, transfer("2024-01-05", rins(10, k=1), to="9001"))  # without fuel too
    refused(ledger, {"type": "sell", "id": "S1", "date": "2024-01-05", "party": "2001",
                     "to": "9001", "rins": rins(10), "volume": 10}, "QAP-NO-RINS")
    refused(ledger, {"type": "buy", "id": "B1", "date": "2024-01-05", "party": "9001",
                     "from": "2001", "rins": rins(10), "volume": 10}, "QAP-NO-RINS")
    refused(ledger, {"type": "generate", "date": "2024-01-05", "party": "9001",
                     "facility": "90001", "batch": "00001", "fuel": "ethanol", "d_code": 6,
                     "volume": 10})
    assert ledger.blocks("9001") == []
    clean(ledger)


def test_a_qap_auditor_cannot_register_with_a_rin_owning_role(ledger: Ledger) -> None:
    for role in ("blender", "broker", "producer", "obligated_party", "rin_owner"):
        refused(ledger, {"type": "register_party", "party": "9003", "name": "X",
                         "roles": ["qap_auditor", role]})


@pytest.mark.parametrize("extra", [
    {"compliance_level": "facility"},  # needs compliance_facility
    {"compliance_level": "facility", "compliance_facility": "20001"},  # not 3001's
    {"compliance_level": "aggregate", "compliance_facility": "30001"},
    {"compliance_facility": "30001"},  # without a level
], ids=["facility-none", "facility-foreign", "aggregate-with", "facility-only"])
def test_retire_compliance_basis_forms_refused(ledger: Ledger, extra: dict[str, Any]) -> None:
    ok(ledger, transfer("2024-01-05", {"code": A.format(1, 100)}, volume=100),
       {"type": "separate", "date": "2024-01-06", "party": "3001", "reason": "obligated_party",
        "rins": {"code": A.format(1, 100)}, "volume": 100})
    refused(ledger, {"type": "retire", "date": "2025-02-01", "party": "3001",
                     "reason": "compliance", "compliance_year": 2024,
                     "rins": {"code": A2.format(1, 100)}, **extra})


def test_retire_compliance_level_on_a_non_compliance_retirement_is_refused(ledger: Ledger
                                                                          ) -> None:
    refused(ledger, {"type": "retire", "date": "2024-01-06", "party": "2001", "reason": "spill",
                     "rins": {"code": A.format(1, 10)}, "compliance_level": "aggregate"},
            "RETIRE-LEVEL")
    refused(ledger, {"type": "retire", "date": "2024-01-06", "party": "2001", "reason": "spill",
                     "rins": {"code": A.format(1, 10)}, "compliance_level": "corporate"})


# --- reverse -------------------------------------------------------------------------------------

T1 = transfer("2024-01-05", {"code": A.format(1, 1_000)}, volume=1_000, id="t1")


def test_a_reversed_transfer_returns_ranges_and_fuel(ledger: Ledger) -> None:
    ok(ledger, T1)
    fuel_2001 = ledger.party("2001").fuel.balance(date(2024, 1, 9))
    ok(ledger, reverse("t1", "2001", "2024-01-09", "030"))
    assert held(ledger, "3001") == {}
    assert held(ledger, "2001") == {B.format(1, 1_000): 1_000, A.format(1, 10_000): 10_000}
    on = date(2024, 1, 9)
    assert ledger.party("2001").fuel.balance(on) == fuel_2001 + Decimal(1_000)
    assert ledger.party("3001").fuel.balance(on) == 0
    views = Views(ledger)
    views.project()
    rows = views.trace(A.format(1, 1_000))
    assert {(r["date"], r["event"], r["party"], r["counterparty"], r["gallon_rins"])
            for r in rows[-2:]} == {("2024-01-09", "trade_reversed_in", "2001", "3001", 1_000),
                                    ("2024-01-09", "trade_reversed_out", "3001", "2001", 1_000)}
    clean(ledger)


@pytest.mark.parametrize("gone", [
    transfer("2024-01-06", {"code": A.format(1, 10)}, src="3001", to="1001", volume=10),
    {"type": "separate", "date": "2024-01-06", "party": "3001", "reason": "obligated_party",
     "rins": {"code": A.format(1, 10)}, "volume": 10},
    {"type": "sell", "id": "S9", "date": "2024-01-06", "party": "3001", "to": "1001",
     "rins": {"code": A.format(1, 10)}, "volume": 10},
    lock("2024-01-06"),
    {"type": "retire", "date": "2024-01-06", "party": "3001", "reason": "spill",
     "rins": {"code": A.format(1, 10)}},
], ids=["moved", "separated", "reserved", "locked", "retired"])
def test_a_reversal_is_refused_when_the_buyer_no_longer_holds_them_all(
        ledger: Ledger, gone: dict[str, Any]) -> None:
    ok(ledger, T1, gone)
    before = held(ledger, "2001"), held(ledger, "3001")
    refused(ledger, reverse("t1", "2001", "2024-01-09", "030"))
    assert (held(ledger, "2001"), held(ledger, "3001")) == before
    clean(ledger)


def test_a_reversal_after_the_buyer_split_the_block_returns_the_daughters(ledger: Ledger
                                                                         ) -> None:
    ok(ledger, T1, {"type": "split", "date": "2024-01-06", "party": "3001",
                    "rin": A.format(1, 1_000), "sizes": [10, 990]})
    ok(ledger, reverse("t1", "2001", "2024-01-09", "030"))  # 3001 still holds all 1,000
    assert held(ledger, "3001") == {}
    assert sum(held(ledger, "2001").values()) == 11_000
    clean(ledger)


def test_a_reversal_back_dated_before_the_buyers_later_move_is_refused(ledger: Ledger) -> None:
    """3001 moved the RINs away on the 6th and got them back on the 8th: a reversal dated the 7th
    would leave 3001 holding them on no date from the 6th to the 8th (negative holding)."""
    ok(ledger, T1,
       transfer("2024-01-06", {"code": A.format(1, 1_000)}, src="3001", to="1001",
                volume=1_000),
       transfer("2024-01-08", {"code": A.format(1, 1_000)}, src="1001", to="3001",
                volume=1_000))
    refused(ledger, reverse("t1", "2001", "2024-01-07", "030"))
    ok(ledger, reverse("t1", "2001", "2024-01-08", "030"))
    clean(ledger)


def test_a_reversal_dated_inside_a_lifted_lock_is_refused(ledger: Ledger) -> None:
    ok(ledger, T1, lock("2024-01-10"), lock("2024-01-20", kind="unlock"))
    refused(ledger, reverse("t1", "2001", "2024-01-15", "030"), "LOCK-HELD")
    ok(ledger, reverse("t1", "2001", "2024-01-20", "030"))
    clean(ledger)


def test_a_reversed_transfer_is_reversed_once_by_its_giver_not_before_it(ledger: Ledger
                                                                        ) -> None:
    ok(ledger, T1, reverse("t1", "2001", "2024-01-09", "080"))
    refused(ledger, reverse("t1", "2001", "2024-01-10", "080", rid="R2"), "REVERSE-ONCE")
    refused(ledger, reverse("t1", "3001", "2024-01-10", "080", rid="R3"), "REVERSE-PARTY")
    refused(ledger, reverse("tA", "2001", "2024-01-10", "080", rid="R4"), "REVERSE-PARTY")
    refused(ledger, reverse("tA", "1001", "2024-01-02", "080", rid="R5"), "REVERSE-DATE")
    clean(ledger)


def test_a_reversal_id_resent_is_a_duplicate_and_reused_with_another_body_refused(
        ledger: Ledger) -> None:
    ok(ledger, T1, reverse("t1", "2001", "2024-01-09", "030"))
    assert ledger.apply(reverse("t1", "2001", "2024-01-09", "030")).status == "duplicate"
    other = ledger.apply(reverse("t1", "2001", "2024-01-10", "080"))
    assert other.status in ("rejected", "duplicate"), other  # never applied twice
    ok(ledger, {**T1, "id": "t2", "rins": {"code": A.format(1_001, 1_100)}, "volume": 100})
    before = ledger.position()
    reused = ledger.apply(reverse("t2", "2001", "2024-01-09", "030"))  # id R1 again
    assert reused.status == "rejected", reused
    assert ledger.position() == before
    assert A.format(1_001, 1_100) in held(ledger, "3001")
    clean(ledger)


def test_the_sell_of_a_completed_trade_reversed_not_the_buy_nor_a_pending_sell(
        ledger: Ledger) -> None:
    ok(ledger, {"type": "sell", "id": "S1", "date": "2024-01-05", "party": "2001", "to": "3001",
                "rins": {"code": A.format(1, 100)}, "volume": 100},
       {"type": "buy", "id": "B1", "date": "2024-01-05", "party": "3001", "from": "2001",
        "rins": rins(100), "volume": 100, "match": "S1"},
       {"type": "sell", "id": "S2", "date": "2024-01-05", "party": "2001", "to": "3001",
        "rins": {"code": A.format(101, 200)}, "volume": 100})
    refused(ledger, reverse("B1", "3001", "2024-01-06", "030"), "REVERSE-ORIGINAL")
    refused(ledger, reverse("B1", "2001", "2024-01-06", "030"), "REVERSE-ORIGINAL")
    refused(ledger, reverse("S2", "2001", "2024-01-06", "030"), "REVERSE-ORIGINAL")
    refused(ledger, reverse("S1", "2001", "2024-01-04", "030"), "REVERSE-DATE")
    ok(ledger, reverse("S1", "2001", "2024-01-06", "030"))
    assert held(ledger, "3001") == {}
    assert A.format(1, 100) in held(ledger, "2001")
    clean(ledger)


def test_an_unretire_leaves_the_compliance_position_short(ledger: Ledger) -> None:
    ok(ledger, transfer("2024-01-05", {"code": A.format(1, 4_000)}, volume=4_000),
       {"type": "separate", "date": "2024-01-06", "party": "3001", "reason": "obligated_party",
        "rins": {"code": A.format(1, 4_000)}, "volume": 4_000},
       {"type": "retire", "id": "r1", "date": "2025-02-01", "party": "3001",
        "reason": "compliance", "compliance_year": 2024,
        "rins": {"code": A2.format(1, 4_000)}})
    refused(ledger, reverse("r1", "2001", "2025-02-02", "80"), "REVERSE-PARTY")
    ok(ledger, reverse("r1", "3001", "2025-02-02", "80"))
    refused(ledger, reverse("r1", "3001", "2025-02-03", "80", rid="R2"), "REVERSE-ONCE")
    views = Views(ledger)
    views.project()
    rf = next(r for r in views.compliance(2024, "3001") if r["category"] == "RF")
    assert (rf["applied"], rf["deficit"]) == (0, 4_000), rf
    assert held(ledger, "3001") == {A2.format(1, 4_000): 4_000}
    ok(ledger, {"type": "retire", "id": "r2", "date": "2025-02-03", "party": "3001",
                "reason": "compliance", "compliance_year": 2024,
                "rins": {"code": A2.format(1, 4_000)}})  # the unretired RINs retire again
    clean(ledger)


def test_a_reversed_retirement_of_a_locked_batch_holds_no_spendable_rins(ledger: Ledger
                                                                        ) -> None:
    ok(ledger, {"type": "retire", "id": "r1", "date": "2024-01-05", "party": "2001",
                "reason": "spill", "rins": {"code": A.format(1, 10)}},
       lock("2024-01-06"))
    result = ledger.apply(reverse("r1", "2001", "2024-01-07", "spill"))
    assert (result.status, result.rule) in {("applied", None), ("rejected", "LOCK-HELD")}
    if result.status == "applied":  # the RINs are held again, locked
        assert {b.rin: b.locked for b in ledger.blocks("2001")}[A.format(1, 10_000)] is True
        refused(ledger, transfer("2024-01-08", {"code": A.format(1, 10)}, volume=10),
                "LOCK-HELD")
    clean(ledger)


# --- careless input: a refusal naming the field, never a traceback --------------------------------

@pytest.mark.parametrize("line", [
    lock("2024-01-10", {"company": "1001"}),
    lock("2024-01-10", {"company": "1001", "facility": "20001", "batch": "00001"}),
    lock("2024-01-10", {**BATCH_A, "vintage": "2024"}),
    lock("2024-01-10", {**BATCH_A, "extra": 1}),
    lock("2024-01-10", 12345),
    lock("2024-01-10", ["1001"]),
    lock("2024-01-10", "1202410012000100001106000000010000001"),  # 37 characters
    lock("2024-01-10", "x" * 38),
    lock("2024-01-10", "12024999920001000011060000000100000001"),  # never generated
    {**lock("2024-01-10"), "reason": "r" * 201},
    {**lock("2024-01-10"), "reason": 7},
    {**lock("2024-01-10"), "date": "2024-1-10"},
    {**lock("2024-01-10"), "party": "90O1"},
    {"type": "verify_batch", "date": "2024-01-04", "party": "9001", "batch": BATCH_A,
     "qap": "Z"},
    {"type": "verify_batch", "date": "2024-01-04", "party": "9001", "batch": BATCH_A,
     "qap": "q"},
    {"type": "verify_batch", "date": "2024-01-04", "party": "9001", "batch": BATCH_A,
     "qap": "unverified"},
    {"type": "verify_batch", "date": "2024-01-04", "party": "9001", "batch": BATCH_A},
    transfer("2024-01-05", rins(10, qap="Z"), volume=10),
    transfer("2024-01-05", rins(10, qap=1), volume=10),
    {"type": "block_generator", "date": "2024-01-04", "party": "3001", "generator": 1002},
    {"type": "block_generator", "date": "2024-01-04", "party": "3001", "generator": "10021"},
    {"type": "block_generator", "date": "2024-01-04", "party": "3001"},
    reverse("tA", "1001", "2024-01-05", "r" * 201),
    reverse("tA", "1001", "2024-01-05", ""),
    {**reverse("tA", "1001", "2024-01-05", "030"), "command": 5},
    {**reverse("tA", "1001", "2024-01-05", "030"), "command": ""},
    {**reverse("tA", "1001", "2024-01-05", "030"), "reason": 30},
])
def test_careless_emts_lines_are_refused_cleanly(ledger: Ledger, line: dict[str, Any]) -> None:
    refused(ledger, line)
    clean(ledger)


@pytest.mark.parametrize("code", [
    "12024100120001000011060000000100000ZZZ",  # letters in the serials
    "92024100120001000011060000000100000001",  # K=9 (§80.1425(a): K is 1 or 2)
    "1202410012000100001106000000100000000-",
], ids=["letters", "k9", "dash"])
def test_a_38_character_batch_that_is_no_rin_code_is_refused(ledger: Ledger, code: str) -> None:
    """design.md: `batch` is "a 38-character RIN code naming the batch (its K, RR, D and serials
    are ignored)": their values do not pick the batch, but a string that is no RIN code at all
    (§80.1425: 38 digits) is careless input, refused naming the field."""
    refused(ledger, lock("2024-01-10", code))


# --- more: back-dated locks and blocks, sells against both, fuel going back -----------------

def test_a_back_dated_lock_does_not_make_an_earlier_recorded_move_a_violation(ledger: Ledger
                                                                             ) -> None:
    """docs/locks.md: "A lock recorded after a move dated within its life does not rewrite that
    move (nothing stored changes)": the move was lawful when made, so `verify` stays clean."""
    ok(ledger, transfer("2024-01-15", {"code": A.format(1, 10)}, volume=10),
       lock("2024-01-10"))
    clean(ledger)
    ok(ledger, lock("2024-01-20", kind="unlock"))
    clean(ledger)


def test_a_sell_while_locked_reserves_only_unlocked_rins(ledger: Ledger) -> None:
    ok(ledger, lock("2024-01-04"),
       {"type": "sell", "id": "S1", "date": "2024-01-05", "party": "2001", "to": "3001",
        "rins": rins(1_000), "volume": 1_000})
    refused(ledger, {"type": "sell", "id": "S2", "date": "2024-01-05", "party": "2001",
                     "to": "3001", "rins": rins(1), "volume": 1})  # only locked A left
    assert {b.rin: b.reserved for b in ledger.blocks("2001")} == {
        B.format(1, 1_000): True, A.format(1, 10_000): False}
    clean(ledger)


def test_the_blocked_list_as_it_stands_covers_a_back_dated_transfer_and_sells(ledger: Ledger
                                                                             ) -> None:
    ok(ledger, block("2024-01-10"))
    refused(ledger, transfer("2024-01-05", {"code": B.format(1, 10)}, volume=10),
            "BLOCKED-GENERATOR")
    refused(ledger, {"type": "sell", "id": "S1", "date": "2024-01-11", "party": "2001",
                     "to": "3001", "rins": {"code": B.format(1, 10)}, "volume": 10},
            "BLOCKED-GENERATOR")
    ok(ledger, {"type": "sell", "id": "S2", "date": "2024-01-11", "party": "2001", "to": "3001",
                "rins": rins(10), "volume": 10})  # FIFO would reserve B: skipped
    assert {b.rin for b in ledger.blocks("2001") if b.reserved} == {A.format(1, 10)}
    clean(ledger)


def test_a_reversal_is_refused_when_the_buyer_no_longer_owns_the_fuel(ledger: Ledger) -> None:
    """An assigned trade's fuel moves back with its RINs (design.md); a buyer that has since
    delivered the fuel cannot send it back (no negative volume on any date)."""
    ok(ledger, T1)
    ok(ledger, {"type": "transfer_fuel", "date": "2024-01-06", "from": "3001", "to": "1001",
                "volume": 1_000})
    refused(ledger, reverse("t1", "2001", "2024-01-09", "030"), "FUEL-NOT-OWNED")
    assert ledger.party("3001").fuel.balance(date(2024, 1, 9)) == 0
    clean(ledger)


def test_a_sell_naming_qap_agrees_with_a_buy_naming_none_and_unverified_picks_exactly(
        ledger: Ledger) -> None:
    ok(ledger, {"type": "verify_batch", "date": "2024-01-04", "party": "9001",
                "batch": BATCH_A, "qap": "A"},
       {"type": "sell", "id": "S1", "date": "2024-01-05", "party": "2001", "to": "3001",
        "rins": rins(300, qap="A"), "volume": 300},  # FIFO would take B: A-RINs only
       {"type": "buy", "id": "B1", "date": "2024-01-05", "party": "3001", "from": "2001",
        "rins": rins(300), "volume": 300, "match": "S1"},
       {"type": "buy", "id": "B2", "date": "2024-01-06", "party": "3001", "from": "2001",
        "rins": rins(1_000, qap="unverified"), "volume": 1_000},
       {"type": "sell", "id": "S2", "date": "2024-01-06", "party": "2001", "to": "3001",
        "rins": rins(1_000), "volume": 1_000, "match": "B2"})
    assert held(ledger, "3001") == {A.format(1, 300): 300, B.format(1, 1_000): 1_000}
    ok(ledger, {"type": "buy", "id": "B3", "date": "2024-01-07", "party": "3001",
                "from": "2001", "rins": rins(1, qap="unverified"), "volume": 1})
    refused(ledger, {"type": "sell", "id": "S3", "date": "2024-01-07", "party": "2001",
                     "to": "3001", "rins": rins(1), "volume": 1, "match": "B3"})  # none left
    clean(ledger)


def test_a_lock_or_verification_of_a_batch_never_generated_is_refused(ledger: Ledger) -> None:
    never = {**BATCH_A, "batch": "00002"}
    refused(ledger, lock("2024-01-10", never), "LOCK-BATCH")
    refused(ledger, {"type": "verify_batch", "date": "2024-01-04", "party": "9001",
                     "batch": never, "qap": "Q"}, "LOCK-BATCH")
    refused(ledger, lock("2024-01-10", {**BATCH_A, "vintage": 2023}), "LOCK-BATCH")


def test_a_lock_resent_with_its_id_is_a_duplicate(ledger: Ledger) -> None:
    ok(ledger, {**lock("2024-01-10"), "id": "L1"})
    before = ledger.position()
    assert ledger.apply({**lock("2024-01-10"), "id": "L1"}).status == "duplicate"
    assert ledger.apply({**lock("2024-01-11"), "id": "L1"}).status == "rejected"
    assert ledger.position() == before
    clean(ledger)


def test_a_reversed_two_sided_trade_takes_its_fuel_back(ledger: Ledger) -> None:
    ok(ledger, {"type": "sell", "id": "S1", "date": "2024-01-05", "party": "2001", "to": "3001",
                "rins": {"code": A.format(1, 100)}, "volume": 100},
       {"type": "buy", "id": "B1", "date": "2024-01-05", "party": "3001", "from": "2001",
        "rins": rins(100), "volume": 100, "match": "S1"})
    on = date(2024, 1, 9)
    seller, buyer = (ledger.party(p).fuel.balance(on) for p in ("2001", "3001"))
    assert (seller, buyer) == (Decimal(10_900), Decimal(100))
    ok(ledger, reverse("S1", "2001", "2024-01-09", "030"))
    assert [ledger.party(p).fuel.balance(on) for p in ("2001", "3001")] == [11_000, 0]
    clean(ledger)


@pytest.mark.parametrize("close", [
    {"type": "cancel_trade", "date": "2024-01-07", "party": "2001", "trade": "S1"},
    {"type": "deny_trade", "date": "2024-01-07", "party": "3001", "trade": "S1"},
    {"type": "expire_trades", "date": "2024-02-01"},
], ids=["cancel", "deny", "expire"])
def test_a_pending_sell_of_a_locked_batch_can_still_be_closed(ledger: Ledger,
                                                             close: dict[str, Any]) -> None:
    """Closing a posting moves no RIN (it releases a reservation), so a lock does not stop it;
    the released RINs stay locked."""
    ok(ledger, {"type": "sell", "id": "S1", "date": "2024-01-05", "party": "2001", "to": "3001",
                "rins": {"code": A.format(1, 100)}, "volume": 100},
       lock("2024-01-06"), close)
    assert [(b.reserved, b.locked) for b in ledger.blocks("2001") if b.rin.startswith(A[:22])
            ] == [(False, True)]
    refused(ledger, transfer("2024-02-02", {"code": A.format(1, 100)}, volume=100), "LOCK-HELD")
    clean(ledger)


def test_a_party_registered_as_regulator_locks_and_an_auditor_cannot_lift_it(ledger: Ledger
                                                                             ) -> None:
    ok(ledger, {"type": "register_party", "party": "9900", "name": "EPA", "roles": ["regulator"]},
       {"type": "verify_batch", "date": "2024-01-04", "party": "9001", "batch": BATCH_A,
        "qap": "Q"},
       lock("2024-01-10", party="9900"))
    refused(ledger, lock("2024-01-11", party="9001", kind="unlock"), "LOCK-WHO")
    refused(ledger, transfer("2024-01-12", {"code": A.format(1, 10)}, volume=10), "LOCK-HELD")
    ok(ledger, lock("2024-01-12", kind="unlock"))  # the regulator without party lifts it
    ok(ledger, transfer("2024-01-12", {"code": A.format(1, 10)}, volume=10))
    clean(ledger)
