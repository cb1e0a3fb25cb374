"""The rows of `Ledger.blocks()`: one per block a party holds now, daughters apart (§80.1428(d)),
cut where a pending sell's reservation starts or ends (§80.1452), each with its batch's QAP status
(§80.1471(e)) and whether a lock holds it (§80.1474(b)(1)) — the fields of
`rin holdings --blocks` (design.md "Release 2 details").
"""

from __future__ import annotations

from ledger.application.rows import HeldBlock
from ledger.domain.batch_gate import StatusOf
from ledger.domain.batch_status import BatchStatus
from ledger.domain.daughters import cut, pieces
from ledger.domain.party import Party
from ledger.domain.ranges import SerialSet
from ledger.domain.rin import BatchId
from ledger.rules.s1471_auditors import UNVERIFIED


def block_rows(party: Party, status_of: StatusOf) -> list[HeldBlock]:
    """`party`'s held blocks as report rows: `party, rin, d_code, vintage, k, gallon_rins,
    reserved, qap, locked`."""
    rows = []
    statuses: dict[BatchId, BatchStatus | None] = {}  # many blocks share a batch: read it once
    for block in cut(party.holdings.blocks(), party.split_cuts):
        key = block.key
        reserved = party.trades.reserved(key) if party.trades.open else SerialSet()
        edges = sorted({point for start, end in reserved for point in (start, end + 1)})
        if key.batch_id not in statuses:
            statuses[key.batch_id] = status_of(key.batch_id)
        status = statuses[key.batch_id]
        for first, last in pieces(block.start, block.end, edges):
            rows.append(HeldBlock(
                party.party_id, key.block(first, last).code, key.d_code, key.vintage, key.k,
                last - first + 1, reserved.issuperset(SerialSet(((first, last),))),
                status.qap if status is not None else UNVERIFIED,
                status is not None and status.locked,
            ))
    return rows
