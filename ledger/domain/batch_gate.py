"""The gate a command's RINs pass besides the holder's own book: their batch's lock and QAP
status (other aggregates, ledger/domain/batch_status.py) and the receiving party's blocked list.

The application builds one per command (it alone loads the other aggregates) and hands it to the
Party's command methods: a pick by attributes skips what the gate keeps back (locked batches,
blocked generators, a QAP status other than the one asked), and RINs named exactly, or already
reserved, are refused naming the rule (§80.1474(b)(1), §80.1452(d), §80.1471(e)).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date

from ledger.domain.batch_status import BatchStatus
from ledger.domain.ranges import SerialSet
from ledger.domain.rin import BatchId, BlockKey, RinBlock
from ledger.rules import s1452_blocked as blk
from ledger.rules import s1471_auditors as aud
from ledger.rules import s1474_locks as lck

#: every serial a batch can have (§80.1426(d)(2)(ii): at most 99,999,999 gallon-RINs)
WHOLE_BATCH = SerialSet(((1, 99_999_999),))
StatusOf = Callable[[BatchId], BatchStatus | None]


def no_status(_: BatchId) -> BatchStatus | None:
    """A ledger with no verification or lock recorded."""
    return None


@dataclass(frozen=True)
class Gate:
    """What keeps RINs from a command besides their holder's book: `status_of` a batch, and
    `blocked`, the generators `receiver` refuses."""

    status_of: StatusOf = no_status
    receiver: str | None = None
    blocked: Sequence[str] = ()

    def qap(self, key: BlockKey) -> str:
        status = self.status_of(key.batch_id)
        return status.qap if status is not None else aud.UNVERIFIED

    def lock(self, key: BlockKey, on: date) -> str | None:
        status = self.status_of(key.batch_id)
        return status.lock_on(on) if status is not None else None

    def why_kept(self, key: BlockKey, on: date, qap: str | None) -> str | None:
        """Why a pick on `on` asking `qap` skips `key`'s batch: `locked`, `blocked`, `qap`."""
        if self.lock(key, on) is not None:
            return "locked"
        if key.company in self.blocked:
            return "blocked"
        if qap is not None and self.qap(key) != qap:
            return "qap"
        return None

    def withholding(self, reserved: Callable[[BlockKey], SerialSet] | None, on: date,
                    qap: str | None) -> Callable[[BlockKey], SerialSet] | None:
        """What a pick withholds: the holder's reservations, and every serial of a batch the gate
        keeps back."""
        if not self.blocked and qap is None and self.status_of is no_status:
            return reserved

        def withheld(key: BlockKey) -> SerialSet:
            if self.why_kept(key, on, qap) is not None:
                return WHOLE_BATCH
            return reserved(key) if reserved is not None else SerialSet()

        return withheld

    def admit(self, blocks: Sequence[RinBlock], on: date, field: str,
              qap: str | None = None) -> None:
        """RINs named exactly (or reserved earlier) pass: unlocked on `on`, of no generator the
        receiver blocks, and of the QAP status asked."""
        for block in blocks:
            lck.check_unlocked(block.code, self.lock(block.key, on), field)
            if self.receiver is not None:
                blk.check_not_blocked(self.receiver, list(self.blocked), block.key.company,
                                      block.code, field)
            aud.check_status(block.code, self.qap(block.key), qap, field)

    def check_shortfall(self, ungated: Sequence[RinBlock], on: date, qap: str | None,
                        what: str, wanted: int, free: int, field: str) -> None:
        """A pick by attributes fell short of `wanted` with `free` usable: if the gate kept
        RINs back that would have made up the difference, say which and why."""
        kept = {"locked": 0, "blocked": 0, "qap": 0}
        generators: set[str] = set()
        for block in ungated:
            why = self.why_kept(block.key, on, qap)
            if why is not None:
                kept[why] += block.gallon_rins
            if why == "blocked":
                generators.add(block.key.company)
        day = on.isoformat()
        if kept["locked"]:
            lck.check_unlocked_quantity(what, wanted, free, kept["locked"], day, field)
        if kept["blocked"] and self.receiver is not None:
            blk.check_unblocked_quantity(self.receiver, sorted(generators), what, wanted, free,
                                         kept["blocked"], day, field)
        if kept["qap"]:
            aud.QAP_STATUS.check(
                wanted <= free,
                f"{wanted:,} {what} gallon-RINs of QAP status {qap} asked on {day}: {free:,} "
                f"held, {kept['qap']:,} more of other statuses", field,
            )


OPEN = Gate()
