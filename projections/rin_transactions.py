"""The RIN Transaction Report (§80.1451(c)(1)): one row per transaction and block a party made.

Types are §80.1451(c)(1)(iii)(D)'s: `generate`, `buy`, `sell`, `separate`, `retire`, and
`reverse` for an EMTS remedial transaction (§80.1452(d)): a reversed trade (a remedial buy at
the party that gave the RINs, a remedial sell at the one that got them, reason 030 or 080) or a
reversed retirement (EMTS unretire, the retirement's own reason). Each row also names the
activity report's column its RINs are summed in (`flow`). Only what
moved is a transaction: a trade is a row when its RINs moved, so a two-sided trade appears once
completed (§80.1452(c)) and a pending, cancelled, denied or expired posting never; a fast-path
`transfer` is a `sell` for the seller and a `buy` for the buyer. A separation's row names the
RINs as they were separated, K=1. The rows are also the flows of the RIN Activity Report
(projections/activity.py) and the populations the attest samples (projections/attest.py).
"""

from __future__ import annotations

from typing import Any

from sqlite_utils import Database

from projections.batch import Batch
from projections.facts import Fact
from projections.schema import Table

TRANSACTIONS = Table(
    "rin_transactions",
    "Every RIN transaction per party and block (§80.1451(c)(1)): generate, buy, sell, separate, "
    "retire; a trade only once its RINs moved.",
    {
        "notification_id": (int, "position of the event in the notification log"),
        "seq": (int, "index of the block within the event"),
        "party": (str, "4-digit company id of the submitting party"),
        "type": (str, "generate, buy, sell, separate, retire (§80.1451(c)(1)(iii)(D)) or reverse "
                 "(an EMTS remedial transaction, §80.1452(d))"),
        "flow": (str, "the activity report's column the RINs are summed in (§80.1451(c)(2)): "
                 "generated, purchased, sold, separated, retired or reinstated"),
        "date": (str, "the transaction date (ISO)"),
        "year": (int, "year of the transaction date"),
        "quarter": (int, "calendar quarter of the transaction date, 1-4"),
        "transaction": (str, "the transaction's id: the party's own posting id of a two-sided "
                        "trade, else the command id, else '#' and the notification id"),
        "posting": (str, "the party's own EMTS posting (sell or buy) a trade completed, if any"),
        "partner": (str, "the trading partner's company id, for a buy or sell"),
        "rin": (str, "the block's 38-character code (K=1 for a separation)"),
        "d_code": (int, "D code"),
        "vintage": (int, "RIN year"),
        "k": (int, "K of the RINs as the transaction named them"),
        "gallon_rins": (int, "gallon-RINs in the block"),
        "price": (str, "price per gallon-RIN of a trade, if given (exact decimal text)"),
        "reason": (str, "EMTS reason code as EMTS writes it (010, 20, 80 …), if any"),
    },
    pk=("notification_id", "seq"),
    indexes=(("party", "year", "quarter"),),
    index_late=True,  # no query during a rebuild reads it: indexed once at its end
)
TABLES = (TRANSACTIONS,)
#: the transaction type (§80.1451(c)(1)(iii)(D)) of each event kind and the activity report's
#: column (§80.1451(c)(2)) it is a flow of: a reversed trade is a remedial buy or sell, so its
#: RINs are purchased back by the party that gave them and sold back by the one that got them;
#: an unretired retirement's RINs are reinstated (docs/reports.md)
TYPES = {"generated": ("generate", "generated"), "transferred_in": ("buy", "purchased"),
         "transferred_out": ("sell", "sold"), "separated": ("separate", "separated"),
         "retired": ("retire", "retired"), "trade_reversed_in": ("reverse", "purchased"),
         "trade_reversed_out": ("reverse", "sold"), "unretired": ("reverse", "reinstated")}
KINDS = frozenset(TYPES)
#: the kinds whose reason is an EMTS buy/sell code, written with three digits
TRADE_KINDS = frozenset({"transferred_in", "transferred_out", "trade_reversed_in",
                         "trade_reversed_out"})
#: the report's columns: design.md "Release 2 details", then the transaction's id
COLUMNS = ["party", "type", "date", "partner", "rin", "k", "gallon_rins", "price",
           "gallon_price", "reason", "broker", "id"]
#: the index of the party's own posting in a completed trade's `postings` [sell, buy]
OWN_POSTING = {"sell": 0, "buy": 1}


def quarter_of(iso_date: str) -> int:
    """The calendar quarter, 1-4, of an ISO date (§80.1451(f)(2) Table 1)."""
    return (int(iso_date[5:7]) - 1) // 3 + 1


def reason_of(kind: str, event: Any) -> str | None:
    """The EMTS reason code as reference.md §5 writes it: three digits for a buy or sell (a
    reversed trade's remedial 030 or 080 too), the plain number for a separation or retirement
    (an unretired one's is the retirement's own); a generation has none."""
    code = getattr(event, "trade_reason_code", getattr(event, "reason_code", None))
    if code is None:
        return None
    return f"{code:03d}" if kind in TRADE_KINDS else str(code)


def project(fact: Fact, batch: Batch) -> None:
    event, kind = fact.event, fact.kind
    kind_type, flow = TYPES[kind]
    postings = getattr(event, "postings", None)
    posting = postings[OWN_POSTING[kind_type]] if postings else None
    transaction = posting or event.client_id or f"#{fact.notification_id}"
    day = fact.effective_date
    assert day is not None, "every RIN transaction is dated"
    price = getattr(event, "price", None)
    # what every block of the event shares, worked out once per event
    shared = (fact.party, kind_type, flow, day, int(day[:4]), quarter_of(day), transaction,
              posting, fact.counterparty)
    paid, reason = None if price is None else str(price), reason_of(kind, event)
    for seq, (block, code) in enumerate(zip(fact.blocks, fact.codes, strict=True)):
        key = block.key
        batch.add(TRANSACTIONS, (
            fact.notification_id, seq, *shared, code, key.d_code, key.vintage, key.k,
            block.gallon_rins, paid, reason,
        ))


def transactions(
    db: Database, party: str, year: int, quarter: int | None = None,
    known_at: int | None = None,
) -> list[dict[str, Any]]:
    """The party's transactions dated in `year` (and `quarter`) as known at notification
    `known_at`, in log order; a trade's per-gallon price and broker come from the party's own
    posting (§80.1451(c)(1)(iii)(I), §80.1454(a)(3)(ii))."""
    rows = db.query(
        "SELECT t.*, p.gallon_price, p.broker FROM rin_transactions t "
        "LEFT JOIN trade_postings p ON p.id = t.posting "
        "WHERE t.party = ? AND t.year = ? AND (? IS NULL OR t.quarter = ?) "
        "AND t.notification_id <= ? ORDER BY t.notification_id, t.seq",
        [party, year, quarter, quarter, upto(known_at)],
    )
    return [{**{c: row.get(c) for c in COLUMNS}, "id": row["transaction"]} for row in rows]


def upto(known_at: int | None) -> int:
    """The last notification id a report reads: `known_at`, or everything."""
    return 2**63 - 1 if known_at is None else known_at
