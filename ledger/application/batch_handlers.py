"""Handlers of the commands about a batch as a whole: QAP verification (§80.1471(e)) and locks
(§80.1474(b)(1)), recorded on the batch's BatchStatus (ledger/domain/batch_status.py), and the
EMTS blocked list (§80.1452(d)), recorded on the party that keeps it.
"""

from __future__ import annotations

from ledger.application.unit_of_work import UnitOfWork
from ledger.domain import commands as c
from ledger.domain.batch_status import BatchStatus
from ledger.domain.rin import BatchId, parse_code
from ledger.rules import s1471_auditors as aud
from ledger.rules import s1474_locks as lck


def batch_id_of(name: str | c.BatchIdentity) -> BatchId:
    """The batch a `batch` field names: a well-formed 38-character RIN code (§80.1425; its K,
    RR, D and serials then ignored) or `{company, facility, batch, vintage}`."""
    if isinstance(name, c.BatchIdentity):
        return BatchId(name.vintage, name.company, name.facility, name.batch)
    # only YYYY, CCCC, FFFFF and BBBBB name the batch, but the whole code must be a RIN code
    return parse_code(name, "batch")[0].batch_id


def status_of(uow: UnitOfWork, name: str | c.BatchIdentity) -> BatchStatus:
    """The named batch's status record, opened if it has none yet; the batch must exist."""
    batch_id = batch_id_of(name)
    status = uow.batch_status(batch_id)
    if status is None:
        generated = uow.generated_block(batch_id)
        lck.check_batch(str(batch_id), generated is not None)
        assert generated is not None
        status = BatchStatus.open(generated)
        uow.adopt(status)
    return status


def submitter(uow: UnitOfWork, party: str | None) -> str:
    """The holder a lock or unlock is submitted as (the regulator, or a qap_auditor)."""
    if party is None:
        return lck.REGULATOR
    return lck.holder_of(party, uow.registered(party, "party").role_words)


def lock(uow: UnitOfWork, cmd: c.Lock) -> list[str]:
    holder = submitter(uow, cmd.party)
    status_of(uow, cmd.batch).lock(holder, cmd.party, cmd.reason or "", cmd.date, cmd.id)
    return []


def unlock(uow: UnitOfWork, cmd: c.Unlock) -> list[str]:
    holder = submitter(uow, cmd.party)
    status_of(uow, cmd.batch).unlock(holder, cmd.party, cmd.reason or "", cmd.date, cmd.id)
    return []


def verify_batch(uow: UnitOfWork, cmd: c.VerifyBatch) -> list[str]:
    """A qap_auditor designates a batch Q, A or B (§80.1471(e)); a later one replaces it."""
    auditor = uow.registered(cmd.party, "party")
    aud.check_auditor(cmd.party, auditor.role_words)
    status_of(uow, cmd.batch).verify(cmd.party, cmd.qap, cmd.date, cmd.id)
    return []


def block_generator(uow: UnitOfWork, cmd: c.BlockGenerator) -> list[str]:
    uow.registered(cmd.party, "party").block_generator(cmd)
    return []


def unblock_generator(uow: UnitOfWork, cmd: c.UnblockGenerator) -> list[str]:
    uow.registered(cmd.party, "party").unblock_generator(cmd)
    return []
