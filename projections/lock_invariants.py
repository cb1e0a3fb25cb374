"""`verify`'s check of locks (§80.1474(b)(1)): no locked RIN moved while locked.

Replays the BatchStatus events in log order beside the Party events: a party event that takes
RINs of a batch out of its holder's hands (transferred out, separated, retired), reserves them
(a sell) or splits them, is a broken invariant if, when it was recorded, a lock on that batch
held, or its effective date fell within the life of a lock already lifted — exactly what the
write side refuses (ledger/rules/s1474_locks.py). Locked ranges stay in the conservation check
(projections/invariants.py): they are held, not spendable.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from datetime import date
from typing import Any

from eventsourcing.utils import get_topic

from ledger.application.ledger import Ledger
from ledger.domain.batch_status import BatchStatus
from projections.facts import Fact, batch_of
from projections.holdings import Change, changes

TOPICS = sorted(get_topic(member) for member in vars(BatchStatus).values()
                if isinstance(member, type) and issubclass(member, BatchStatus.Event)
                and member not in (BatchStatus.Event, BatchStatus.Created))
LOCKING = (BatchStatus.Locked, BatchStatus.Unlocked)  # what `catch_up` applies
#: the party events that use RINs a lock keeps where they are, beyond the holdings changes
USING = frozenset({"trade_posted", "split"})


class LockReplay:
    """The locks in force and the lifted locks' lives, per batch, as of a point in the log."""

    def __init__(self, events: Iterable[tuple[int, Any]] = ()) -> None:
        """`events`: (notification id, BatchStatus event) in log order, read as the replay
        reaches them (the log's pages: memory holds one page, not every lock ever); more are
        handed over by `feed` as a walk of the log reaches them."""
        self.events = iter(events)
        self.fed: deque[tuple[int, Any]] = deque()
        self.next: tuple[int, Any] | None = self.following()
        self.locks: dict[str, dict[str, date]] = {}
        self.lives: dict[str, list[tuple[date, date]]] = {}
        self.problems: list[str] = []

    @classmethod
    def of(cls, ledger: Ledger, stop: int) -> LockReplay:
        return cls((logged.notification_id, logged.event)
                   for logged in ledger.log.events(stop=stop, topics=TOPICS))

    def feed(self, events: Iterable[tuple[int, Any]]) -> None:
        """More (notification id, event) pairs in log order, after those given so far; those
        not of BatchStatus are left out."""
        self.fed.extend(e for e in events if isinstance(e[1], LOCKING))
        if self.next is None:
            self.next = self.following()

    def following(self) -> tuple[int, Any] | None:
        """The next lock event not yet applied: from `events`, then from those fed."""
        found = next(self.events, None)
        return found if found is not None or not self.fed else self.fed.popleft()

    def catch_up(self, position: int) -> None:
        """Apply the lock events recorded before notification `position`."""
        while self.next is not None and self.next[0] < position:
            event = self.next[1]
            self.next = self.following()
            if isinstance(event, BatchStatus.Locked):
                self.locks.setdefault(event.batch, {})[event.holder] = event.effective_date
            elif isinstance(event, BatchStatus.Unlocked):
                held = self.locks.setdefault(event.batch, {})
                for holder in event.lifted:
                    if holder in held:
                        self.lives.setdefault(event.batch, []).append(
                            (held.pop(holder), event.effective_date))

    def check(self, fact: Fact, changed: list[Change] | None = None) -> None:
        """`fact` used no RINs of a batch locked when it was recorded, or on its date
        (`changed`: its holdings changes, if worked out)."""
        self.catch_up(fact.notification_id)
        if fact.effective_date is None or not (self.locks or self.lives):
            return  # no lock has been placed yet: nothing to check against
        on = date.fromisoformat(fact.effective_date)
        used = [(block, code) for block, code, _, n in (
            changes(fact) if changed is None else changed) if n < 0]
        if fact.kind in USING:
            used = list(zip(fact.blocks, fact.codes, strict=True))
        for block, code in used:
            batch = batch_of(block)
            held = self.locks.get(batch)
            lifted = [life for life in self.lives.get(batch, ()) if life[0] <= on < life[1]]
            if held or lifted:
                self.problems.append(
                    f"notification {fact.notification_id} ({fact.kind}, party {fact.party}): "
                    f"{code} used while its batch was locked")
