"""Locks (§80.1474(b)(1)), the blocked list (§80.1452(d)), QAP status (§80.1471(e)), the new roles
and retire's compliance basis (§80.1451(a)(1)(iii)-(iv)) through the Ledger on a real store.

The hand-worked market: 1002 generates 1,000 gallons of ethanol on 1 January 2024 (EV 1.0 →
D6 serials 1-1,000) and sells them all with the fuel to 1001; 1001 generates 10,000 on
2 January (serials 1-10,000). FIFO (oldest generation first) so picks 1002's batch first.
9001 and 9002 are QAP auditors; 2001 a blender; 3001 an obligated refiner with facility 30001.
"""

from __future__ import annotations

import hashlib
from datetime import date
from typing import Any

import pytest

from ledger import Ledger
from ledger.application.handlers import digest
from ledger.domain.batch_status import BatchStatus
from ledger.domain.commands import validate_command
from ledger.domain.party import Party
from ledger.domain.rin import BatchId
from projections import Views, verify
from projections.facts import Fact
from projections.lock_invariants import LockReplay
from tests import applying
from tests.applying import ok

OWN = "1202410012000100001106{:08d}{:08d}"  # K=1, 2024, 1001, 20001, 00001, RR 10, D6
BOUGHT = "1202410022000200001106{:08d}{:08d}"  # 1002's batch, facility 20002
OWN_BATCH = {"company": "1001", "facility": "20001", "batch": "00001", "vintage": 2024}
BOUGHT_BATCH = {"company": "1002", "facility": "20002", "batch": "00001", "vintage": 2024}
MARKET = [
    {"type": "register_party", "party": "1001", "name": "Prairie", "roles": ["producer"],
     "facilities": ["20001"]},
    {"type": "register_party", "party": "1002", "name": "Hilltop", "roles": ["producer"],
     "facilities": ["20002"]},
    {"type": "register_party", "party": "2001", "name": "Gulf", "roles": ["blender"]},
    {"type": "register_party", "party": "3001", "name": "Lakeside",
     "roles": ["obligated_party", "refiner"], "facilities": ["30001"]},
    {"type": "register_party", "party": "9001", "name": "Keystone QAP", "roles": ["qap_auditor"]},
    {"type": "register_party", "party": "9002", "name": "Summit QAP", "roles": ["qap_auditor"]},
    {"type": "generate", "date": "2024-01-01", "party": "1002", "facility": "20002",
     "batch": "00001", "fuel": "ethanol", "d_code": 6, "volume": 1_000},
    {"type": "transfer", "date": "2024-01-01", "from": "1002", "to": "1001",
     "rins": {"code": BOUGHT.format(1, 1_000)}, "volume": 1_000},
    {"type": "generate", "date": "2024-01-02", "party": "1001", "facility": "20001",
     "batch": "00001", "fuel": "ethanol", "d_code": 6, "volume": 10_000},
]


@pytest.fixture
def ledger(store: Any) -> Any:
    with store.ledger() as opened:
        ok(opened, *MARKET)
        yield opened


def refused(ledger: Ledger, cmd: dict[str, Any], rule: str) -> str:
    return str(applying.refused(ledger, cmd, rule).error)


def rins(quantity: int, k: int = 1, **extra: Any) -> dict[str, Any]:
    return {"d_code": 6, "vintage": 2024, "k": k, "quantity": quantity, **extra}


def transfer(on: str, selector: dict[str, Any], to: str = "2001", **extra: Any
             ) -> dict[str, Any]:
    code = selector.get("code")  # a code's gallon-RINs, E − S + 1, move with as many gallons
    volume = int(code[30:]) - int(code[22:30]) + 1 if code else selector["quantity"]
    return {"type": "transfer", "date": on, "from": "1001", "to": to, "rins": selector,
            "volume": volume, **extra}


def lock(on: str, batch: Any = OWN_BATCH, **extra: Any) -> dict[str, Any]:
    return {"type": "lock", "date": on, "batch": batch, **extra}


def unlock(on: str, batch: Any = OWN_BATCH, **extra: Any) -> dict[str, Any]:
    return {"type": "unlock", "date": on, "batch": batch, **extra}


def verify_batch(on: str, qap: str = "Q", party: str = "9001", batch: Any = OWN_BATCH
                 ) -> dict[str, Any]:
    return {"type": "verify_batch", "date": on, "party": party, "batch": batch, "qap": qap}


def status(ledger: Ledger, batch: dict[str, Any] = OWN_BATCH) -> BatchStatus | None:
    return ledger.batch_status(BatchId(batch["vintage"], batch["company"], batch["facility"],
                                       batch["batch"]))


# -- locks --------------------------------------------------------------------------------------

def test_an_auditors_lock_holds_every_move_of_the_batch_until_unlocked(ledger: Ledger) -> None:
    ok(ledger, verify_batch("2024-01-03"),
       transfer("2024-01-04", {"code": OWN.format(1, 2_000)}, to="3001"),
       {"type": "separate", "date": "2024-01-05", "party": "3001", "reason": "obligated_party",
        "rins": {"code": OWN.format(1, 1_000)}, "volume": 1_000},
       lock("2024-01-10", party="9001", reason="PIR: meter readings"))
    on = "2024-01-11"
    code = {"code": OWN.format(2_001, 2_010)}
    message = refused(ledger, transfer(on, code), "LOCK-HELD")
    assert message == (f"§80.1474(b)(1): {OWN.format(2_001, 2_010)} is of a locked batch "
                       "(locked by 9001 since 2024-01-10)")
    refused(ledger, {"type": "sell", "id": "s1", "date": on, "party": "1001", "to": "2001",
                     "rins": code, "volume": 10}, "LOCK-HELD")
    refused(ledger, {"type": "split", "date": on, "party": "1001",
                     "rin": OWN.format(2_001, 10_000), "sizes": [1, 7_999]}, "LOCK-HELD")
    # wherever held: 3001's RINs of the same batch
    refused(ledger, {"type": "separate", "date": on, "party": "3001", "reason": "obligated_party",
                     "rins": {"code": OWN.format(1_001, 2_000)}, "volume": 1_000}, "LOCK-HELD")
    ok(ledger, {"type": "report_obligation", "party": "3001", "year": 2024,
                "rvo": {"CB": 0, "BBD": 0, "AB": 0, "RF": 1_000}})
    refused(ledger, {"type": "retire", "date": on, "party": "3001", "reason": "compliance",
                     "compliance_year": 2024, "rins": rins(10, k=2)}, "LOCK-HELD")
    # a pick by attributes skips the locked batch: 1002's batch still moves
    ok(ledger, transfer(on, rins(1_000)))
    message = refused(ledger, transfer(on, rins(1)), "LOCK-HELD")
    assert "0 usable, 8,000 more of locked batches" in message
    ok(ledger, unlock("2024-01-15", party="9001", reason="recalibrated"))
    # effective dating: a command dated within the lock's life stays refused once lifted
    message = refused(ledger, transfer("2024-01-12", code), "LOCK-HELD")
    assert "locked from 2024-01-10 until 2024-01-15" in message
    ok(ledger, transfer("2024-01-15", code))
    assert verify(ledger) == []


def test_the_auditor_cannot_lift_the_regulators_lock(ledger: Ledger) -> None:
    ok(ledger, verify_batch("2024-01-03"), lock("2024-01-10", reason="EPA review"))
    message = refused(ledger, unlock("2024-01-11", party="9001"), "LOCK-WHO")
    assert message == ("§80.1474(b)(1): batch 202410012000100001 is locked by regulator; "
                       "qap_auditor 9001 cannot lift the regulator's lock")
    ok(ledger, unlock("2024-01-11"))
    s = status(ledger)
    assert s is not None and not s.locked and s.lives == [[date(2024, 1, 10), date(2024, 1, 11)]]


def test_who_may_lock_and_what(ledger: Ledger) -> None:
    assert "did not verify batch" in refused(ledger, lock("2024-01-10", party="9001"), "LOCK-WHO")
    message = refused(ledger, lock("2024-01-10", party="2001"), "LOCK-WHO")
    assert "party 2001 is registered as blender" in message
    message = refused(ledger, lock("2024-01-10", batch={**OWN_BATCH, "batch": "00009"}),
                      "LOCK-BATCH")
    assert message == "§80.1474(b)(1): no batch 202410012000100009 was generated"
    ok(ledger, verify_batch("2024-01-03", party="9002"))
    refused(ledger, lock("2024-01-10", party="9001"), "LOCK-WHO")  # 9002 verified, not 9001
    ok(ledger, lock("2024-01-10", party="9002"))
    refused(ledger, lock("2024-01-11", party="9002"), "LOCK-STATE")
    ok(ledger, {"type": "register_party", "party": "8001", "name": "EPA", "roles": ["regulator"]},
       lock("2024-01-11", party="8001"))  # a party registered as regulator acts as the regulator
    s = status(ledger)
    assert s is not None and set(s.locks) == {"9002", "regulator"}


def test_the_batch_named_by_a_code_ignores_k_rr_d_and_serials(ledger: Ledger) -> None:
    """A well-formed RIN code (§80.1425) names its batch by YYYY, CCCC, FFFFF and BBBBB alone:
    K=2, RR 05, D3 and serials 5-7 are none of the batch's (K=1, RR 10, D6, 1-10,000)."""
    ok(ledger, lock("2024-01-10", batch="2202410012000100001053" + "00000005" + "00000007"))
    s = status(ledger)
    assert s is not None and s.locked


@pytest.mark.parametrize(("code", "field"), [
    ("2202410012000100001999" + "0" * 16, "batch.D"),  # §80.1425(g): D is 3-7
    ("3" + OWN.format(1, 1)[1:], "batch.K"),  # §80.1425(a): K is 1 or 2
    (OWN.format(1, 1)[:-3] + "ZZZ", "batch.EEEEEEEE"),  # §80.1425(h)-(i): digits
])
def test_a_batch_code_that_is_no_rin_code_is_refused_naming_its_field(
        ledger: Ledger, code: str, field: str) -> None:
    for kind in (lock, unlock):
        before = ledger.position()
        result = ledger.apply(kind("2024-01-10", batch=code))
        assert (result.status, result.field) == ("rejected", field), result
        assert result.citation is not None and result.citation.startswith("§80.1425")
        assert ledger.position() == before
    result = ledger.apply(verify_batch("2024-01-04", batch=code))
    assert (result.status, result.field) == ("rejected", field), result


def test_a_pending_sell_of_a_batch_locked_later_cannot_complete(ledger: Ledger) -> None:
    ok(ledger, {"type": "sell", "id": "s1", "date": "2024-01-05", "party": "1001", "to": "2001",
                "rins": {"code": OWN.format(1, 100)}, "volume": 100},
       lock("2024-01-06"))
    message = refused(ledger, {"type": "buy", "id": "b1", "date": "2024-01-05", "party": "2001",
                               "from": "1001", "rins": rins(100), "volume": 100, "match": "s1"},
                      "LOCK-HELD")
    assert OWN.format(1, 100) in message


# -- the blocked list ---------------------------------------------------------------------------

def test_a_blocked_generators_rins_are_refused_on_a_transfer(ledger: Ledger) -> None:
    ok(ledger, {"type": "block_generator", "date": "2024-01-03", "party": "2001",
                "generator": "1002"})
    message = refused(ledger, transfer("2024-01-04", {"code": BOUGHT.format(1, 10)}),
                      "BLOCKED-GENERATOR")
    assert message == (f"§80.1452(d): party 2001 blocks generator 1002; {BOUGHT.format(1, 10)} "
                       "was generated by it")
    # FIFO would take 1002's older batch first; for 2001 the pick skips it
    ok(ledger, transfer("2024-01-04", rins(500)))
    assert [b["rin"] for b in ledger.blocks("2001")] == [OWN.format(1, 500)]
    ok(ledger, transfer("2024-01-04", rins(500), to="3001"))  # 3001 blocks no one: FIFO
    assert [b["rin"] for b in ledger.blocks("3001")] == [BOUGHT.format(1, 500)]
    ok(ledger, {"type": "unblock_generator", "date": "2024-01-05", "party": "2001",
                "generator": "1002"}, transfer("2024-01-05", {"code": BOUGHT.format(501, 510)}))


def test_a_buys_selection_skips_the_blocked_generator_and_a_completion_is_refused(
    ledger: Ledger,
) -> None:
    ok(ledger, {"type": "sell", "id": "s-old", "date": "2024-01-03", "party": "1001",
                "to": "2001", "rins": rins(100), "volume": 100},  # reserves 1002's 1-100
       {"type": "block_generator", "date": "2024-01-03", "party": "2001", "generator": "1002"})
    message = refused(ledger, {"type": "buy", "id": "b-old", "date": "2024-01-03",
                               "party": "2001", "from": "1001", "rins": rins(100),
                               "volume": 100, "match": "s-old"}, "BLOCKED-GENERATOR")
    assert "blocks generator 1002" in message
    ok(ledger, {"type": "buy", "id": "b1", "date": "2024-01-04", "party": "2001", "from": "1001",
                "rins": rins(200), "volume": 200},
       {"type": "sell", "id": "s1", "date": "2024-01-04", "party": "1001", "to": "2001",
        "rins": rins(200), "volume": 200, "match": "b1"})
    assert [b["rin"] for b in ledger.blocks("2001")] == [OWN.format(1, 200)]


# -- QAP status ---------------------------------------------------------------------------------

def test_verify_batch_needs_a_qap_auditor_independent_of_the_generator(ledger: Ledger) -> None:
    message = refused(ledger, verify_batch("2024-01-03", party="2001"), "QAP-AUDITOR")
    assert message == "§80.1471(a): party 2001 is registered as blender, not as a qap_auditor"
    ok(ledger, verify_batch("2024-01-03", "A"), verify_batch("2024-01-04", "Q", party="9002"))
    s = status(ledger)
    assert s is not None and (s.qap, s.verifiers) == ("Q", ["9001", "9002"])


def test_qap_selectors_match_exactly_and_trades_agree_on_qap(ledger: Ledger) -> None:
    ok(ledger, verify_batch("2024-01-03", "Q"))
    ok(ledger, transfer("2024-01-04", rins(100, qap="Q")))
    assert [b["rin"] for b in ledger.blocks("2001")] == [OWN.format(1, 100)]
    ok(ledger, transfer("2024-01-04", rins(100, qap="unverified"), to="3001"))
    assert [b["rin"] for b in ledger.blocks("3001")] == [BOUGHT.format(1, 100)]
    refused(ledger, transfer("2024-01-04", rins(100, qap="B")), "QAP-STATUS")
    # a buy asking Q against a sell of unverified RINs: qap differs
    ok(ledger, {"type": "sell", "id": "s-u", "date": "2024-01-05", "party": "1001", "to": "2001",
                "rins": rins(50, qap="unverified"), "volume": 50})
    message = refused(ledger, {"type": "buy", "id": "b-q", "date": "2024-01-05", "party": "2001",
                               "from": "1001", "rins": rins(50, qap="Q"), "volume": 50,
                               "match": "s-u"}, "TRADE-MATCH")
    assert "differ in qap: qap unverified (sell) against Q (buy)" in message
    # a sell answering a buy that asks Q picks Q-RINs only
    ok(ledger, {"type": "buy", "id": "b-q2", "date": "2024-01-06", "party": "2001",
                "from": "1001", "rins": rins(50, qap="Q"), "volume": 50},
       {"type": "sell", "id": "s-q2", "date": "2024-01-06", "party": "1001", "to": "2001",
        "rins": rins(50), "volume": 50, "match": "b-q2"})
    assert [b["rin"] for b in ledger.blocks("2001")] == [OWN.format(1, 150)]  # 1-100, 101-150


# -- roles (§80.1450, §80.1471) ---------------------------------------------------------------

def test_a_qap_auditor_is_given_no_rins_and_registers_independent(ledger: Ledger) -> None:
    message = refused(ledger, transfer("2024-01-04", rins(10), to="9001"), "QAP-NO-RINS")
    assert message == ("§80.1471(b)(3): party 9001 is a qap_auditor, which may not own, buy or "
                       "otherwise trade RINs")
    refused(ledger, {"type": "sell", "id": "s9", "date": "2024-01-04", "party": "1001",
                     "to": "9001", "rins": rins(10), "volume": 10}, "QAP-NO-RINS")
    refused(ledger, {"type": "buy", "id": "b9", "date": "2024-01-04", "party": "9001",
                     "from": "1001", "rins": rins(10), "volume": 10}, "QAP-NO-RINS")
    register = {"type": "register_party", "party": "9003", "name": "X", "roles": ["qap_auditor"]}
    refused(ledger, {**register, "roles": ["qap_auditor", "rin_owner"]}, "QAP-NO-RINS")
    refused(ledger, {**register, "roles": ["qap_auditor", "obligated_party"]}, "QAP-INDEPENDENT")
    ok(ledger, {**register, "party": "7001", "roles": ["broker"]},
       {**register, "party": "8001", "roles": ["regulator"]})


# -- retire's compliance basis (§80.1451(a)(1)(iii)-(iv)) -------------------------------------

def compliance_retirement(**extra: Any) -> dict[str, Any]:
    return {"type": "retire", "date": "2024-02-01", "party": "3001", "reason": "compliance",
            "compliance_year": 2024, "rins": rins(10, k=2), **extra}


def test_retire_compliance_level_and_facility(ledger: Ledger) -> None:
    ok(ledger, transfer("2024-01-04", rins(1_000), to="3001"),
       {"type": "separate", "date": "2024-01-05", "party": "3001", "reason": "obligated_party",
        "rins": rins(1_000), "volume": 1_000})
    message = refused(ledger, compliance_retirement(compliance_level="facility"), "RETIRE-LEVEL")
    assert "needs the EPA facility registration number" in message
    message = refused(ledger, compliance_retirement(compliance_level="facility",
                                                    compliance_facility="20001"), "RETIRE-LEVEL")
    assert "facility 20001 is not registered to party 3001 (registered: 30001)" in message
    refused(ledger, compliance_retirement(compliance_level="aggregate",
                                          compliance_facility="30001"), "RETIRE-LEVEL")
    refused(ledger, compliance_retirement(compliance_facility="30001"), "RETIRE-LEVEL")
    refused(ledger, {**compliance_retirement(compliance_level="aggregate"), "reason": "spill",
                     "compliance_year": None}, "RETIRE-LEVEL")
    ok(ledger, compliance_retirement(compliance_level="facility", compliance_facility="30001"),
       compliance_retirement(compliance_level="aggregate"))
    retired = [e for e in ledger.log.events() if isinstance(e.event, Party.Retired)]
    assert [(r.event.compliance_level, r.event.compliance_facility) for r in retired] == [
        ("facility", "30001"), ("aggregate", None)]


def test_a_release_1_command_keeps_its_digest() -> None:
    """The digest of a retire and a transfer without the new fields is the SHA-256 of the JSON a
    release-1 model wrote (written out here by hand), so an old id sent again is a duplicate."""
    retire = validate_command({"type": "retire", "id": "r1", "date": "2024-02-01",
                               "party": "3001", "reason": "compliance", "compliance_year": 2024,
                               "rins": rins(10, k=2)})
    old = ('{"id":"r1","date":"2024-02-01","type":"retire","party":"3001","reason":"compliance",'
           '"rins":{"d_code":6,"vintage":2024,"k":2,"quantity":10,"company":null,"facility":null,'
           '"batch":null},"compliance_year":2024,"category":null}')
    assert digest(retire) == hashlib.sha256(old.encode()).hexdigest()
    with_level = validate_command({**retire.model_dump(by_alias=True),
                                   "compliance_level": "aggregate"})
    assert digest(with_level) != digest(retire)


# -- the read side -------------------------------------------------------------------------------

def test_holdings_blocks_carry_qap_reserved_and_locked(ledger: Ledger) -> None:
    ok(ledger, verify_batch("2024-01-03", "A"),
       {"type": "sell", "id": "s1", "date": "2024-01-04", "party": "1001", "to": "2001",
        "rins": {"code": OWN.format(1, 100)}, "volume": 100},
       lock("2024-01-05"))
    rows = Views(ledger).holdings(party="1001", blocks=True)
    assert [(r["rin"], r["qap"], r["reserved"], r["locked"]) for r in rows] == [
        (OWN.format(1, 100), "A", True, True),  # cut where the reservation ends
        (OWN.format(101, 10_000), "A", False, True),
        (BOUGHT.format(1, 1_000), "unverified", False, False),
    ]
    before = Views(ledger).holdings(party="1001", blocks=True, as_of=date(2024, 1, 4))
    assert [(r["qap"], r["locked"]) for r in before] == [
        ("A", False), ("A", False), ("unverified", False)]
    unverified = Views(ledger).holdings(party="1001", blocks=True, as_of=date(2024, 1, 2))
    assert {r["qap"] for r in unverified} == {"unverified"}
    assert sorted((r["rin"], r["qap"], r["reserved"], r["locked"])
                  for r in ledger.blocks("1001")) == sorted(
        (r["rin"], r["qap"], r["reserved"], r["locked"]) for r in rows)


def test_ledger_blocks_as_of_a_day_say_what_was_reserved_and_locked_that_day(
        ledger: Ledger) -> None:
    """docs/locks.md: with `as_of` D, `locked` is whether a lock's life covers D, and a block is
    `reserved` while a sell's life (its date until it closed) covers D — not as they stand now.
    s1 reserves 1-100 from the 4th until it is cancelled on the 6th; the lock holds the 5th
    until the unlock on the 8th."""
    ok(ledger, {"type": "sell", "id": "s1", "date": "2024-01-04", "party": "1001", "to": "2001",
                "rins": {"code": OWN.format(1, 100)}, "volume": 100},
       lock("2024-01-05"),
       {"type": "cancel_trade", "id": "c1", "date": "2024-01-06", "party": "1001",
        "trade": "s1"},
       unlock("2024-01-08"))
    whole, cut = [OWN.format(1, 10_000)], [OWN.format(1, 100), OWN.format(101, 10_000)]

    def on(day: str) -> dict[str, tuple[bool, bool]]:
        rows = {r.rin: (r.reserved, r.locked) for r in ledger.blocks("1001", as_of=day)}
        shown = Views(ledger).holdings(party="1001", blocks=True, as_of=date.fromisoformat(day))
        assert {r["rin"]: (r["reserved"], r["locked"]) for r in shown} == rows  # rin holdings
        assert rows.pop(BOUGHT.format(1, 1_000)) == (False, False)  # never locked nor sold
        return rows

    assert on("2024-01-03") == dict.fromkeys(whole, (False, False))
    assert on("2024-01-04") == dict(zip(cut, [(True, False), (False, False)], strict=True))
    assert on("2024-01-05") == dict(zip(cut, [(True, True), (False, True)], strict=True))
    assert on("2024-01-06") == dict.fromkeys(whole, (False, True))  # cancelled; still locked
    assert on("2024-01-08") == dict.fromkeys(whole, (False, False))  # the unlock's own day
    assert {r.rin: (r.reserved, r.locked) for r in ledger.blocks("1001")} == {
        **dict.fromkeys(whole, (False, False)), BOUGHT.format(1, 1_000): (False, False)}


def test_retired_rins_of_a_locked_batch_stop_counting_while_the_lock_holds(
    ledger: Ledger,
) -> None:
    ok(ledger, transfer("2024-01-04", {"code": OWN.format(1, 1_000)}, to="3001"),
       {"type": "separate", "date": "2024-01-05", "party": "3001", "reason": "obligated_party",
        "rins": rins(1_000), "volume": 1_000},
       {"type": "report_obligation", "party": "3001", "year": 2024,
        "rvo": {"CB": 0, "BBD": 0, "AB": 0, "RF": 1_000}},
       compliance_retirement(rins=rins(600, k=2)))
    views = Views(ledger)

    def applied() -> int:
        return next(r["applied"] for r in views.compliance(2024, "3001") if r["category"] == "RF")

    assert applied() == 600
    ok(ledger, lock("2024-03-01"))
    assert applied() == 0  # the lock holds: the 600 retired RINs of the batch count for nothing
    assert verify(ledger) == []  # a rebuild gives the same positions
    ok(ledger, unlock("2024-03-05"))
    assert applied() == 600
    assert verify(ledger) == []


def test_verify_finds_a_locked_rin_moved_while_locked() -> None:
    """Events the rules would refuse, made by hand: the lock replay names the move."""
    seller = Party.register("1001", "Prairie", ["producer"], ["20001"])
    blocks = seller.generate(validate_command(MARKET[-1]))  # type: ignore[arg-type]
    record = BatchStatus.open(blocks[0])
    record.lock("regulator", None, "EPA", date(2024, 1, 10), None)
    record.unlock("regulator", None, "", date(2024, 1, 20), None)
    moved, later = blocks[0].key.block(1, 10), blocks[0].key.block(11, 20)
    for on, block in ((date(2024, 1, 15), moved), (date(2024, 1, 20), later)):
        seller.trigger_event(
            Party.TransferredOut, effective_date=on, client_id=None, rins=[block], volume=None,
            ptd=None, price=None, trade_reason_code=10, to_party="2001", postings=None)
    events = seller.collect_events()
    locks = LockReplay([(n, e) for n, e in enumerate(record.collect_events(), 100)])
    for number, event in enumerate(events, 200):
        locks.check(Fact.of(number, "1001", event))
    assert locks.problems == [  # dated within the lock's life; the unlock's date is free
        f"notification 203 (transferred_out, party 1001): {moved.code} used while its batch "
        "was locked"]


def test_separate_and_retire_selectors_take_qap(ledger: Ledger) -> None:
    """3001 holds 500 of 1002's unverified RINs and 500 of 1001's Q-RINs; `qap` picks exactly."""
    ok(ledger, verify_batch("2024-01-03", "Q"),
       transfer("2024-01-04", {"code": BOUGHT.format(1, 500)}, to="3001"),
       transfer("2024-01-04", {"code": OWN.format(1, 500)}, to="3001"),
       {"type": "separate", "date": "2024-01-05", "party": "3001", "reason": "obligated_party",
        "rins": rins(500, qap="Q"), "volume": 500},
       {"type": "report_obligation", "party": "3001", "year": 2024,
        "rvo": {"CB": 0, "BBD": 0, "AB": 0, "RF": 1_000}})
    assert sorted(b["rin"] for b in ledger.blocks("3001")) == [
        BOUGHT.format(1, 500), "2" + OWN.format(1, 500)[1:]]  # only the Q-RINs became K=2
    refused(ledger, compliance_retirement(rins=rins(10, k=2, qap="unverified")), "QAP-STATUS")
    ok(ledger, compliance_retirement(rins=rins(10, k=2, qap="Q")))
