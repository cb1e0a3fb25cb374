"""A lawful concurrent run is never reported as tampering (issue 15, q15-conc).

Two `Ledger`s on one SQLite store, in one process, interleaved by hand: while ledger A's
transfer has loaded the seller 2001 but not yet the buyer 3001, ledger B stores a transfer of
the same FIFO gallon-RINs (§80.1428(b): a party transfers only what it holds). A then reads a
buyer already holding what its stale seller still holds, and replaying its own event fails
(not a rule's refusal). That read is torn by B's save, not a sign of a changed history: A must
read again, and if it is torn on every attempt, give the line up as a write conflict, never as
`StoreError` ("run rin verify", exit 3). A failure on consistent reads is first retried with
nothing kept in memory, so memory alone can never make the store look tampered with.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from markets import three_party_market
from store_access import app_of

from ledger import Ledger
from ledger.application import ledger as ledger_module
from ledger.application.unit_of_work import UnitOfWork
from ledger.domain.party import Party
from ledger.domain.rin import RinBlock, parse_code
from ledger.infrastructure.retry import Retry


def sale(n: str) -> dict[str, Any]:
    """A sale of 10 K=2 gallon-RINs from 2001 to 3001, FIFO (§80.1428(b)), with an id."""
    return {"type": "transfer", "id": n, "date": "2024-03-01", "from": "2001", "to": "3001",
            "rins": {"d_code": 6, "vintage": 2024, "k": 2, "quantity": 10}}


@pytest.fixture
def two(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Ledger, Ledger]]:
    """Ledgers A and B on one store holding the three-party market (3001 holds 10,000 K=2);
    three attempts per line, without pauses."""
    monkeypatch.setattr(ledger_module, "RETRY", Retry(attempts=3, first_pause=0.0))
    with Ledger(tmp_path) as a:
        assert all(r.status == "applied" for r in a.apply_many(three_party_market(40_000)))
        with Ledger(tmp_path) as b:
            yield a, b


def tear(monkeypatch: pytest.MonkeyPatch, a: Ledger, b: Ledger, times: int) -> list[str]:
    """Make B store one sale right after each of A's first `times` loads of the seller 2001;
    returns the ids B stored."""
    stored: list[str] = []
    load = UnitOfWork.party

    def party(uow: UnitOfWork, party_id: str) -> Party | None:
        found = load(uow, party_id)
        if uow.app is app_of(a) and party_id == "2001" and len(stored) < times:
            stored.append(f"b-{len(stored)}")
            assert b.apply(sale(stored[-1])).status == "applied"
        return found

    monkeypatch.setattr(UnitOfWork, "party", party)
    return stored


def held(ledger: Ledger, party: str) -> int:
    return sum(ledger.party(party).holdings.totals().values())


def test_a_read_torn_once_is_read_again_and_applied(
        two: tuple[Ledger, Ledger], monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = two
    stored = tear(monkeypatch, a, b, times=1)
    result = a.apply(sale("a-0"))
    assert result.status == "applied", result.error
    assert a.retries >= 1
    assert held(a, "3001") == 10_000 + 10 * (len(stored) + 1) == 10_020
    assert held(a, "2001") == 40_000 - 10_000 - 20
    assert a.audit() == []


def test_a_read_torn_on_every_attempt_is_a_write_conflict_not_tampering(
        two: tuple[Ledger, Ledger], monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = two
    before = a.position()
    stored = tear(monkeypatch, a, b, times=3)
    result = a.apply(sale("a-0"))  # raised StoreError (HistoryUnreplayable) before the fix
    assert result.status == "rejected"
    assert "conflicts with other writers" in (result.error or "")
    assert len(stored) == 3  # B's three sales, each stored once; nothing of A's line
    assert held(a, "3001") == 10_000 + 30
    assert held(a, "2001") == 40_000 - 10_000 - 30
    assert [e.event.originator_id for e in a.log.events(before)] == [
        Party.create_id(p) for _ in stored for p in ("2001", "3001")]
    monkeypatch.undo()
    assert a.apply(sale("a-0")).status == "applied"  # sent again, it is applied once
    assert a.apply(sale("a-0")).status == "duplicate"
    assert a.audit() == []


def poison(a: Ledger, b: Ledger) -> None:
    """Make the 3001 in A's repository cache hold, unstored, the 10 gallon-RINs 2001 sells next
    (FIFO: the first of its K=2 serials), memory carrying an event the store never got; then
    B registers a party, so that A's next command loads 3001 from that cache."""
    rows = [row for row in a.blocks("2001") if row.k == 2]
    _, start, _ = parse_code(rows[0].rin)
    buyer = app_of(a).repository.get(Party.create_id("3001"), deepcopy_from_cache=False)
    key = next(iter(buyer.holdings.slots[6, 2024, 2]))  # the batch's key, as holdings keep it
    buyer.holdings.add(RinBlock(key, start, start + 9), date(2024, 3, 1))
    assert b.apply({"type": "register_party", "party": "4001", "name": "Other",
                    "roles": ["blender"]}).status == "applied"


@pytest.mark.parametrize("batch_size", [1, 200])
def test_a_failure_from_memory_alone_is_retried_on_a_fresh_load(
        two: tuple[Ledger, Ledger], batch_size: int) -> None:
    a, b = two
    assert a.apply(sale("a-0")).status == "applied"
    poison(a, b)
    results = list(a.apply_many([sale("a-1"), sale("a-2")], batch_size=batch_size))
    assert [r.status for r in results] == ["applied", "applied"]  # StoreError before the fix
    assert held(a, "3001") == 10_030
    with Ledger(a.folder) as fresh:  # the store: each sale once, nothing of the poison
        assert held(fresh, "3001") == 10_030
        assert held(fresh, "2001") == 40_000 - 10_000 - 30
        assert fresh.audit() == []
