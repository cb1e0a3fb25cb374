"""The rows of `Ledger.blocks()`: one per block a party holds (now, or on an `as_of` day),
daughters apart (§80.1428(d)), cut where a sell's reservation starts or ends (§80.1452), each with
its batch's QAP status (§80.1471(e)) and whether a lock holds it (§80.1474(b)(1)) — the fields of
`rin holdings --blocks` (design.md "Release 2 details", docs/locks.md).
"""

from __future__ import annotations

from datetime import date

from ledger.application.rows import HeldBlock
from ledger.domain.batch_gate import StatusOf
from ledger.domain.batch_status import BatchStatus
from ledger.domain.daughters import cut, pieces
from ledger.domain.party import Party
from ledger.domain.ranges import SerialSet
from ledger.domain.rin import BatchId, BlockKey
from ledger.domain.trade_book import TradeBook
from ledger.rules.s1471_auditors import UNVERIFIED


def block_rows(party: Party, status_of: StatusOf, on: date | None = None,
               trades: TradeBook | None = None) -> list[HeldBlock]:
    """`party`'s held blocks as report rows: `party, rin, d_code, vintage, k, gallon_rins,
    reserved, qap, locked`. With `on` (`party` as it stood that day, `trades` its whole trade
    book), `reserved` and `locked` are whether a sell's or a lock's life covers `on`; without,
    whether a pending sell reserves the block and a lock holds it now."""
    rows = []
    statuses: dict[BatchId, BatchStatus | None] = {}  # many blocks share a batch: read it once
    for block in cut(party.holdings.blocks(), party.split_cuts):
        key = block.key
        reserved = reserved_serials(party.trades if trades is None else trades, key, on)
        edges = sorted({point for start, end in reserved for point in (start, end + 1)})
        if key.batch_id not in statuses:
            statuses[key.batch_id] = status_of(key.batch_id)
        status = statuses[key.batch_id]
        locked = status is not None and (status.locked if on is None else status.locked_on(on))
        for first, last in pieces(block.start, block.end, edges):
            rows.append(HeldBlock(
                party.party_id, key.block(first, last).code, key.d_code, key.vintage, key.k,
                last - first + 1, reserved.issuperset(SerialSet(((first, last),))),
                status.qap if status is not None else UNVERIFIED, locked,
            ))
    return rows


def reserved_serials(trades: TradeBook, key: BlockKey, on: date | None) -> SerialSet:
    """The serials of `key` a sell reserves: on the day `on`, or (None) by the pending sells."""
    if on is not None:
        return trades.reserved_on(key, on)
    return trades.reserved(key) if trades.open else SerialSet()
