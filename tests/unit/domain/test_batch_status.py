"""The BatchStatus aggregate (ledger/domain/batch_status.py): QAP verification (§80.1471(e)) and
locks (§80.1474(b)(1)), each rule broken on purpose; the Gate a Party's picks pass
(ledger/domain/batch_gate.py); the Party's blocked list (§80.1452(d)).

Batch: 1001's ethanol 00001 of 2024, generated 2 January, 10,000 gallon-RINs (EV 1.0)."""

from __future__ import annotations

from datetime import date

import pytest

from ledger.domain import commands as c
from ledger.domain.batch_gate import Gate
from ledger.domain.batch_status import BatchStatus
from ledger.domain.errors import RuleViolation
from ledger.domain.party import Party
from ledger.domain.rin import BatchId, BlockKey, RinBlock

KEY = BlockKey(1, 2024, "1001", "20001", "00001", 10, 6, date(2024, 1, 2), "ethanol")
BATCH = RinBlock(KEY, 1, 10_000)
D = date(2024, 1, 10)


def refused(rule: str, call: object, *args: object, **kwargs: object) -> RuleViolation:
    with pytest.raises(RuleViolation) as caught:
        call(*args, **kwargs)  # type: ignore[operator]
    assert caught.value.rule_id == rule, caught.value
    return caught.value


def status() -> BatchStatus:
    return BatchStatus.open(BATCH)


def test_a_new_record_is_unverified_and_unlocked() -> None:
    s = status()
    assert (s.qap, s.locked, s.lock_on(D)) == ("unverified", False, None)
    assert s.id == BatchStatus.create_id(BatchId(2024, "1001", "20001", "00001"))


def test_reverification_replaces_the_status() -> None:
    s = status()
    s.verify("9001", "A", D, None)
    s.verify("9002", "Q", D, None)
    assert (s.qap, s.auditor, s.verifiers) == ("Q", "9002", ["9001", "9002"])


def test_qap_independent_the_generator_never_verifies_its_own_batch() -> None:
    error = refused("QAP-INDEPENDENT", status().verify, "1001", "Q", D, None)
    assert error.citation == "§80.1471(b)(1)-(2)"
    assert "party 1001 generated batch 202410012000100001" in error.message


def test_lock_who_an_auditor_locks_only_a_batch_it_verified() -> None:
    s = status()
    error = refused("LOCK-WHO", s.lock, "9001", "9001", "PIR", D, None)
    assert error.message == "qap_auditor 9001 did not verify batch 202410012000100001, so it may " \
                            "not lock it"
    s.verify("9001", "Q", D, None)
    s.lock("9001", "9001", "PIR", D, None)
    assert s.locks == {"9001": D}
    s.lock("regulator", None, "EPA", D, None)  # the regulator locks any batch, even a locked one
    assert set(s.locks) == {"9001", "regulator"}


def test_lock_who_an_auditor_cannot_lift_the_regulators_lock() -> None:
    s = status()
    s.verify("9001", "Q", D, None)
    s.lock("regulator", None, "EPA", D, None)
    error = refused("LOCK-WHO", s.unlock, "9001", "9001", "", date(2024, 1, 11), None)
    assert "qap_auditor 9001 cannot lift the regulator's lock" in error.message
    assert s.locked


def test_an_auditors_unlock_lifts_its_own_lock_the_regulators_every_lock() -> None:
    s = status()
    s.verify("9001", "Q", D, None)
    s.lock("9001", "9001", "", D, None)
    s.lock("regulator", None, "", D, None)
    assert s.unlock("9001", "9001", "", date(2024, 1, 11), None) == ["9001"]
    assert set(s.locks) == {"regulator"}
    s.lock("9001", "9001", "", date(2024, 1, 12), None)
    assert s.unlock("regulator", None, "", date(2024, 1, 15), None) == ["9001", "regulator"]
    assert not s.locked


def test_lock_state_once_per_holder_unlock_only_when_locked_dates_in_order() -> None:
    s = status()
    refused("LOCK-STATE", s.unlock, "regulator", None, "", D, None)
    s.lock("regulator", None, "", D, None)
    refused("LOCK-STATE", s.lock, "regulator", None, "", D, None)
    error = refused("LOCK-STATE", s.unlock, "regulator", None, "", date(2024, 1, 9), None)
    assert "2024-01-09 is before 2024-01-10" in error.message
    fresh = status()
    error = refused("LOCK-STATE", fresh.lock, "regulator", None, "", date(2024, 1, 1), None)
    assert "2024-01-01 is before 2024-01-02" in error.message  # before the batch's generation


def test_a_lock_keeps_every_date_while_it_holds_and_its_life_once_lifted() -> None:
    """While locked no date is free (the lock holds now); once lifted, [locked, unlocked)."""
    s = status()
    s.lock("regulator", None, "", D, None)
    assert s.lock_on(date(2024, 1, 3)) == "locked by regulator since 2024-01-10"
    s.unlock("regulator", None, "", date(2024, 1, 20), None)
    assert s.lock_on(date(2024, 1, 9)) is None
    assert s.lock_on(D) == "locked from 2024-01-10 until 2024-01-20"
    assert s.lock_on(date(2024, 1, 19)) is not None
    assert s.lock_on(date(2024, 1, 20)) is None  # the unlock's date is free again


# -- the gate a Party's picks pass ----------------------------------------------------------

def producer() -> Party:
    party = Party.register("1001", "Prairie", ["producer"], ["20001"])
    party.generate(c.validate_command({  # type: ignore[arg-type]
        "type": "generate", "date": "2024-01-02", "party": "1001", "facility": "20001",
        "batch": "00001", "fuel": "ethanol", "d_code": 6, "volume": 10_000}))
    party.generate(c.validate_command({  # type: ignore[arg-type]
        "type": "generate", "date": "2024-01-03", "party": "1001", "facility": "20001",
        "batch": "00002", "fuel": "ethanol", "d_code": 6, "volume": 500}))
    return party


def pick(quantity: int, **extra: object) -> c.ByAttributes:
    return c.ByAttributes(d_code=6, vintage=2024, k=1, quantity=quantity, **extra)  # type: ignore[arg-type]


def test_a_pick_skips_a_locked_batch_and_refuses_what_only_it_would_fill() -> None:
    s = status()
    s.lock("regulator", None, "", D, None)
    gate = Gate(lambda batch_id: s if batch_id == KEY.batch_id else None)
    party = producer()
    blocks = party.select(pick(500), D, gate)
    assert [(b.key.batch, b.start, b.end) for b in blocks] == [("00002", 1, 500)]
    error = refused("LOCK-HELD", party.select, pick(501), D, gate)
    assert error.message == ("501 D6 vintage 2024 K=1 gallon-RINs asked on 2024-01-10: 500 "
                             "usable, 10,000 more of locked batches")
    code = c.ByCode(code=BATCH.code)
    refused("LOCK-HELD", party.select, code, D, gate)
    assert party.select(pick(501), D) != []  # without the gate, FIFO takes batch 00001 first


def test_a_qap_selector_matches_exactly() -> None:
    s = status()
    s.verify("9001", "A", D, None)
    gate = Gate(lambda batch_id: s if batch_id == KEY.batch_id else None)
    party = producer()
    assert {b.key.batch for b in party.select(pick(100, qap="A"), D, gate)} == {"00001"}
    assert {b.key.batch for b in party.select(pick(100, qap="unverified"), D, gate)} == {"00002"}
    error = refused("QAP-STATUS", party.select, pick(100, qap="Q"), D, gate)
    assert "0 held, 10,500 more of other statuses" in error.message
    error = refused("QAP-STATUS", party.select, c.ByCode(code=BATCH.code, qap="B"), D, gate)
    assert error.message == f"{BATCH.code} is A, not B"


def test_the_receivers_blocked_list_keeps_the_generators_rins_back() -> None:
    gate = Gate(receiver="2001", blocked=("1001",))
    party = producer()
    error = refused("BLOCKED-GENERATOR", party.select, pick(1), D, gate)
    assert "generated by 1001, which party 2001 blocks" in error.message
    error = refused("BLOCKED-GENERATOR", party.select, c.ByCode(code=BATCH.code), D, gate)
    assert error.message == f"party 2001 blocks generator 1001; {BATCH.code} was generated by it"


def test_blocked_list_a_generator_is_blocked_once_and_unblocked_only_when_blocked() -> None:
    party = Party.register("2001", "Gulf", ["blender"], [])
    block = c.BlockGenerator(date=D, party="2001", generator="1001")
    unblock = c.UnblockGenerator(date=D, party="2001", generator="1001")
    refused("BLOCKED-LIST", party.unblock_generator, unblock)
    party.block_generator(block)
    assert party.blocked == ["1001"]
    error = refused("BLOCKED-LIST", party.block_generator, block)
    assert error.message == "party 2001 already blocks generator 1001"
    party.unblock_generator(unblock)
    assert party.blocked == []


def test_a_v4_party_state_upcasts_to_an_empty_blocked_list() -> None:
    state: dict[str, object] = {}
    Party.upcast_v4_v5(state)
    assert state == {"blocked": []}
