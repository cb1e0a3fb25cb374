"""Locks (§80.1474(b)(1)): a batch whose RINs are potentially invalid, held where they are.

§80.1474(b)(1) lets the EPA, or the independent third-party auditor that verified a RIN, identify
it as a potentially invalid RIN (PIR); EMTS, whose procedures are the Administrator's to
prescribe (§80.1452(d)), then locks the batch: its RINs, wherever held, neither move nor count
for compliance until unlocked. The ledger's reading, written down in docs/locks.md:

- the regulator (no `party`, or a party registered as `regulator`) locks any batch; a
  qap_auditor only a batch it verified, and it lifts only its own lock;
- a lock's life runs from its date up to the date of the unlock that lifts it (that date free
  again); while a lock holds no command may use the batch's RINs whatever its date, and once
  lifted, no command dated within its life may, just as a reservation's ranges are kept from
  every command dated within the reservation's life (design.md "Release 2 details").
"""

from __future__ import annotations

from collections.abc import Mapping

from ledger.rules.catalogue import Rule

REGULATOR = "regulator"

LOCK_WHO = Rule(
    "LOCK-WHO", "§80.1474(b)(1)",
    "a batch is locked by the regulator, or by a qap_auditor that verified it; a qap_auditor "
    "lifts only its own lock, never the regulator's",
)
LOCK_STATE = Rule(
    "LOCK-STATE", "§80.1474(b)(1)",
    "a batch is locked only by a submitter that holds no lock on it yet, and unlocked only "
    "while locked; lock and unlock are dated no earlier than the batch's generation and its "
    "last verification, lock or unlock",
)
LOCK_BATCH = Rule(
    "LOCK-BATCH", "§80.1474(b)(1)",
    "a lock, unlock or QAP verification names a batch that was generated",
)
LOCK_HELD = Rule(
    "LOCK-HELD", "§80.1474(b)(1)",
    "a locked batch's RINs, wherever held, cannot be transferred, reserved, delivered, "
    "separated, retired, split, given back by a reversed trade or unretired: not while the lock "
    "holds, nor by a command dated within a lifted lock's life",
)
RULES = (LOCK_WHO, LOCK_STATE, LOCK_BATCH, LOCK_HELD)


def check_batch(batch: str, generated: bool) -> None:
    """The batch a lock or verification names exists (§80.1425(e) identity)."""
    LOCK_BATCH.check(generated, f"no batch {batch} was generated", "batch")


def check_locker(holder: str, verified_by: set[str], batch: str) -> None:
    """§80.1474(b)(1): the regulator may lock any batch, an auditor only one it verified."""
    LOCK_WHO.check(
        holder == REGULATOR or holder in verified_by,
        f"qap_auditor {holder} did not verify batch {batch}, so it may not lock it", "party",
    )


def check_lifter(holder: str, locks: Mapping[str, object], batch: str) -> None:
    """§80.1474(b)(1): an auditor lifts its own lock, never the regulator's."""
    LOCK_STATE.check(bool(locks), f"batch {batch} is not locked", "batch")
    if holder == REGULATOR:
        return
    LOCK_WHO.check(
        holder in locks,
        f"batch {batch} is locked by {', '.join(sorted(locks))}; qap_auditor {holder} cannot "
        "lift " + ("the regulator's lock" if REGULATOR in locks else "another auditor's lock"),
        "party",
    )


def check_not_locked_by(holder: str, locks: Mapping[str, object], batch: str) -> None:
    """§80.1474(b)(1): a submitter holds one lock on a batch at a time."""
    LOCK_STATE.check(
        holder not in locks, f"batch {batch} is already locked by {holder}", "batch"
    )


def check_date(on: str, earliest: str, batch: str) -> None:
    """§80.1474(b)(1): a batch's locks and unlocks follow one another in time, after its
    generation and its verifications."""
    LOCK_STATE.check(
        on >= earliest,
        f"batch {batch}: {on} is before {earliest}, its generation or last verification, "
        "lock or unlock",
        "date",
    )


def check_unlocked(code: str, lock: str | None, field: str) -> None:
    """§80.1474(b)(1): no command uses a locked batch's RINs."""
    LOCK_HELD.check(lock is None, f"{code} is of a locked batch ({lock})", field)


def check_unlocked_quantity(what: str, wanted: int, free: int, locked: int, on: str,
                            field: str) -> None:
    """§80.1474(b)(1): a pick by attributes that only locked RINs would fill is refused so."""
    LOCK_HELD.check(
        wanted <= free,
        f"{wanted:,} {what} gallon-RINs asked on {on}: {free:,} usable, {locked:,} more of "
        "locked batches", field,
    )


def holder_of(party: str | None, roles: list[str] | None) -> str:
    """Who a lock or unlock is submitted as: the regulator (no party, or a party registered as
    `regulator`), or the qap_auditor `party` (§80.1474(b)(1))."""
    if party is None:
        return REGULATOR
    known = roles or []
    LOCK_WHO.check(
        "qap_auditor" in known or REGULATOR in known,
        f"party {party} is registered as {', '.join(known) or 'nothing'}: only the regulator or "
        "a qap_auditor locks or unlocks a batch", "party",
    )
    return party if "qap_auditor" in known else REGULATOR
