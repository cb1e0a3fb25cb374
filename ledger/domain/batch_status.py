"""The BatchStatus aggregate: one generated batch's QAP status (§80.1471(e)) and its locks
(§80.1474(b)(1)), as facts with dates.

One aggregate per batch identity (§80.1425(e)), beside its BatchInvalidation: it opens at the
first verification or lock of the batch, so the many batches never verified nor locked have
none. A re-verification replaces the status; locks are kept per submitter (the regulator, or a
qap_auditor), and each lifted lock keeps its life [locked, unlocked) for effective dating
(ledger/rules/s1474_locks.py).
"""

from __future__ import annotations

from datetime import date
from functools import lru_cache
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.domain import Aggregate

from ledger.domain.rin import BatchId, RinBlock
from ledger.rules import s1471_auditors as aud
from ledger.rules import s1474_locks as lck

STATUS_NAMESPACE = uuid5(NAMESPACE_URL, "https://rin-ledger/batch-status")


class BatchStatus(Aggregate):
    """What EMTS records of a batch beyond its RINs: QAP status and locks."""

    TOPIC = "rin_ledger:BatchStatus"

    @staticmethod
    @lru_cache(maxsize=8_192)
    def create_id(batch_id: BatchId) -> UUID:
        """Deterministic id: uuid5 of the batch identity YYYYCCCCFFFFFBBBBB."""
        return uuid5(STATUS_NAMESPACE, str(batch_id))

    class Event(Aggregate.Event):
        TOPIC = "rin_ledger:BatchStatus.Event"

    class Created(Event, Aggregate.Created):
        """The library's base creation event; statuses are created by `Opened`."""

        TOPIC = "rin_ledger:BatchStatus.Created"

    class Opened(Aggregate.Created):
        """The batch's first verification or lock opened its record; `generated` is the batch."""

        TOPIC = "rin_ledger:BatchStatus.Opened"
        batch: str
        generated: RinBlock

    class Verified(Event):
        """A qap_auditor verified the batch under a QAP: it is now a Q-, A- or B-RIN batch
        (§80.1471(e)(1)-(3)), replacing any earlier status."""

        TOPIC = "rin_ledger:BatchStatus.Verified"
        batch: str  # the batch identity YYYYCCCCFFFFFBBBBB, so each fact names its batch
        effective_date: date
        client_id: str | None
        auditor: str
        qap: str

        def apply(self, status: BatchStatus) -> None:
            status.qap = self.qap
            status.auditor = self.auditor
            if self.auditor not in status.verifiers:
                status.verifiers.append(self.auditor)
            status.last_date = max(status.last_date, self.effective_date)

    class Locked(Event):
        """The batch was locked (§80.1474(b)(1)) by `holder`: `regulator`, or the qap_auditor's
        company id; `party` is the submitting party, if one was named."""

        TOPIC = "rin_ledger:BatchStatus.Locked"
        batch: str  # the batch identity YYYYCCCCFFFFFBBBBB, so each fact names its batch
        effective_date: date
        client_id: str | None
        holder: str
        party: str | None
        reason: str

        def apply(self, status: BatchStatus) -> None:
            status.locks[self.holder] = self.effective_date
            status.last_date = max(status.last_date, self.effective_date)

    class Unlocked(Event):
        """Locks lifted: the regulator lifts every lock, an auditor its own; `lifted` names the
        holders whose locks ended, each lock's life closing on `effective_date`."""

        TOPIC = "rin_ledger:BatchStatus.Unlocked"
        batch: str  # the batch identity YYYYCCCCFFFFFBBBBB, so each fact names its batch
        effective_date: date
        client_id: str | None
        holder: str
        party: str | None
        reason: str
        lifted: list[str]

        def apply(self, status: BatchStatus) -> None:
            for holder in self.lifted:
                since = status.locks.pop(holder)
                status.lives.append([since, self.effective_date])
            status.last_date = max(status.last_date, self.effective_date)

    def __init__(self, batch: str, generated: RinBlock) -> None:
        self.batch = batch
        self.generated = generated
        self.qap = aud.UNVERIFIED
        self.auditor: str | None = None
        self.verifiers: list[str] = []
        #: holder → the date its lock took effect, for the locks in force
        self.locks: dict[str, date] = {}
        #: [locked, unlocked) of every lifted lock
        self.lives: list[list[date]] = []
        self.last_date = generated.key.generated

    @classmethod
    def open(cls, generated: RinBlock) -> BatchStatus:
        """A new record for the batch `generated` names: unverified, never locked."""
        batch_id = generated.key.batch_id
        return cls._create(
            cls.Opened, id=cls.create_id(batch_id), batch=str(batch_id), generated=generated
        )

    def verify(self, auditor: str, qap: str, on: date, client_id: str | None) -> None:
        """A qap_auditor's verification (§80.1471(e)); it never verifies its own batch."""
        aud.check_independent(auditor, self.generated.key.company, self.batch)
        self.trigger_event(self.Verified, batch=self.batch, effective_date=on,
                           client_id=client_id, auditor=auditor, qap=qap)

    def lock(self, holder: str, party: str | None, reason: str, on: date,
             client_id: str | None) -> None:
        """Lock the batch (§80.1474(b)(1)): the regulator any, an auditor one it verified."""
        lck.check_locker(holder, set(self.verifiers), self.batch)
        lck.check_not_locked_by(holder, self.locks, self.batch)
        lck.check_date(on.isoformat(), self.last_date.isoformat(), self.batch)
        self.trigger_event(self.Locked, batch=self.batch, effective_date=on,
                           client_id=client_id, holder=holder, party=party, reason=reason)

    def unlock(self, holder: str, party: str | None, reason: str, on: date,
               client_id: str | None) -> list[str]:
        """Lift locks: the regulator's unlock lifts every lock, an auditor's only its own."""
        lck.check_lifter(holder, self.locks, self.batch)
        lck.check_date(on.isoformat(), self.last_date.isoformat(), self.batch)
        lifted = sorted(self.locks) if holder == lck.REGULATOR else [holder]
        self.trigger_event(self.Unlocked, batch=self.batch, effective_date=on,
                           client_id=client_id, holder=holder, party=party, reason=reason,
                           lifted=lifted)
        return lifted

    @property
    def locked(self) -> bool:
        """Whether any lock is in force now."""
        return bool(self.locks)

    def locked_on(self, on: date) -> bool:
        """Whether a lock's life covers `on` (docs/locks.md, `--as-of`): a lock in force taken by
        then, or a lifted one whose life [locked, unlocked) holds `on` (§80.1474(b)(1))."""
        return (any(since <= on for since in self.locks.values())
                or any(since <= on < until for since, until in self.lives))

    def lock_on(self, on: date) -> str | None:
        """Why a command dated `on` may not use the batch's RINs, or None: a lock holds now
        (whatever the date), or `on` falls within a lifted lock's life."""
        if self.locks:
            held = sorted(self.locks.items())
            return "locked by " + ", ".join(f"{who} since {day.isoformat()}" for who, day in held)
        for since, until in self.lives:
            if since <= on < until:
                return f"locked from {since.isoformat()} until {until.isoformat()}"
        return None
