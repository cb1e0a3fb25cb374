"""Holdings history: one row per block a party gained (+) or gave up (−), for as-of positions.

A position on day X as the ledger knew it at notification N is the SQL sum of the rows with
`effective_date <= X` and `notification_id <= N`; no event is replayed. A party may move a
gallon-RIN only on or after the date it acquired it, so no sum is negative on any date.

`holdings_monthly` keeps those sums per month, so a position as the ledger knows it now adds
the party's whole months before X's month (a row per month, D code, vintage and K) to the rows
of X's month instead of summing its whole history; a back-dated event changes its own month.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import date
from typing import Any

from sqlite_utils import Database

from ledger.domain.daughters import pieces
from ledger.domain.rin import RinBlock
from projections import batch_locks, trades
from projections.batch import Batch
from projections.facts import BATCH, Fact
from projections.schema import Table, View

HISTORY = Table(
    "holdings_history",
    "Every change to a party's gallon-RINs, one row per block: + acquired, − disposed. "
    "Sum gallon_rins with effective_date <= X (and notification_id <= N) for a position.",
    {
        "notification_id": (int, "position of the event in the ledger's notification log"),
        "seq": (int, "index of the block within the event"),
        "party": (str, "4-digit company id of the holder"),
        "effective_date": (str, "the transaction date (ISO) the change takes effect"),
        "event": (str, "assigned, transferred_out, transferred_in, separated, retired, or a "
                       "reversal: trade_reversed_out, trade_reversed_in, unretired"),
        "counterparty": (str, "the other party of a transfer"),
        "d_code": (int, "D code (§80.1425(g))"),
        "vintage": (int, "YYYY, the year the RIN was generated (§80.1425(b))"),
        "k": (int, "K: 1 assigned, 2 separated (§80.1425(a))"),
        "gallon_rins": (int, "signed change in gallon-RINs (+ acquired, − disposed)"),
        "rin": (str, "the block's 38-character batch-RIN code"),
        "batch": (str, "batch identity YYYYCCCCFFFFFBBBBB (§80.1425(e))"),
        "serial_start": (int, "SSSSSSSS, first gallon-RIN serial of the block"),
        "serial_end": (int, "EEEEEEEE, last gallon-RIN serial of the block"),
        "rr": (int, "RR, 10 × equivalence value"),
        "fuel": (str, "the renewable fuel the batch was generated for"),
        "generated": (str, "the batch's generation date (ISO)"),
    },
    pk=("notification_id", "seq"),
    # covering the as-of query (party, date, known-at), so it never reads the table itself
    indexes=(
        ("party", "effective_date", "notification_id", "d_code", "vintage", "k", "gallon_rins"),
        ("batch", "serial_start"),
    ),
    index_late=True,
)
MONTHLY = Table(
    "holdings_monthly",
    "Net change to a party's gallon-RINs per month of effective date, D code, vintage and K: "
    "the sum of that month's holdings_history rows. A position on day X is the sum of the "
    "months before X's month plus holdings_history's rows from the first of X's month to X.",
    {
        "party": (str, "4-digit company id of the holder"),
        "month": (str, "YYYY-MM of the effective date"),
        "d_code": (int, "D code (§80.1425(g))"),
        "vintage": (int, "YYYY, the year the RIN was generated (§80.1425(b))"),
        "k": (int, "K: 1 assigned, 2 separated (§80.1425(a))"),
        "gallon_rins": (int, "net signed change in gallon-RINs that month"),
    },
    pk=("party", "month", "d_code", "vintage", "k"),
    derived_from=HISTORY.name,
    derive="SELECT party, substr(effective_date, 1, 7), d_code, vintage, k, SUM(gallon_rins) "
           "FROM holdings_history WHERE rowid > ? GROUP BY 1, 2, 3, 4, 5",
)
TABLES = (HISTORY, MONTHLY)
#: the columns of a change to a position, in holdings_history and holdings_monthly alike
CHANGE = "party, d_code, vintage, k, gallon_rins"
CURRENT = View(
    "holdings",
    "gallon-RINs held now per party, D code, vintage and K.",
    {
        "party": "4-digit company id of the holder",
        "d_code": "D code (§80.1425(g))",
        "vintage": "YYYY, the year the RIN was generated (§80.1425(b))",
        "k": "K: 1 assigned, 2 separated (§80.1425(a))",
        "gallon_rins": "gallon-RINs held",
    },
    "SELECT party, d_code, vintage, k, SUM(gallon_rins) AS gallon_rins FROM holdings_history "
    "GROUP BY party, d_code, vintage, k HAVING SUM(gallon_rins) != 0",
)
VIEWS = (CURRENT,)
#: the report's columns: a position per key, or (`blocks`) one row per held block with its code
COLUMNS = list(CURRENT.columns)
BLOCK_COLUMNS = ["party", "rin", *COLUMNS[1:], "reserved"]  # reserved: by a pending sell
BLOCK_COLUMNS += ["qap", "locked"]  # the batch's QAP status (§80.1471(e)) and lock (§80.1474)


#: the sign of the change each kind of event makes to its party's holdings
SIGNS = {"assigned": 1, "transferred_in": 1, "transferred_out": -1, "retired": -1,
         "separated": -1,
         # reversals (§80.1452(d)): a trade sent back, a retirement held again
         "trade_reversed_out": -1, "trade_reversed_in": 1, "unretired": 1}
KINDS = frozenset(SIGNS)


#: one block's change to a party's holdings: the block as the event names it, its code and K as
#: the party holds it, and the signed gallon-RINs
Change = tuple[RinBlock, str, int, int]


def changes(fact: Fact) -> list[Change]:
    """The signed changes an event makes to its party's holdings, one per block."""
    sign = SIGNS.get(fact.kind)
    if sign is None:
        return []
    pairs = list(zip(fact.blocks, fact.codes, strict=True))
    out = [(b, code, b.key.k, sign * b.gallon_rins) for b, code in pairs]
    if fact.kind == "separated":  # §80.1429(c): K changes 1 → 2, serials unchanged
        out += [(b, f"2{code[1:]}", 2, b.gallon_rins) for b, code in pairs]
    return out


def project(fact: Fact, batch: Batch) -> None:
    for seq, (block, code, k, gallon_rins) in enumerate(changes(fact)):
        key = block.key
        batch.add(HISTORY, (
            fact.notification_id, seq, fact.party, fact.effective_date, fact.kind,
            fact.counterparty, key.d_code, key.vintage, k, gallon_rins, code, code[BATCH],
            block.start, block.end, key.rr, key.fuel, key.generated.isoformat(),
        ))


def where(*conditions: tuple[str, Any]) -> tuple[str, list[Any]]:
    """A WHERE clause of the conditions whose value is given (not None), and its parameters."""
    given = [(clause, value) for clause, value in conditions if value is not None]
    return " AND ".join(["1 = 1", *(clause for clause, _ in given)]), [v for _, v in given]


def known(party: str | None, as_of: date | None, known_at: int | None) -> tuple[str, list[Any]]:
    """The WHERE clause selecting the rows known at `known_at` and effective by `as_of`."""
    return where(
        ("party = ?", party), ("effective_date <= ?", as_of.isoformat() if as_of else None),
        ("notification_id <= ?", known_at),
    )


def history_rows(
    party: str | None, as_of: date | None, known_at: int | None
) -> tuple[str, list[Any]]:
    """Every holdings_history row of a position: the definition, and the only rows that can
    say what the ledger knew at notification `known_at`."""
    clause, params = known(party, as_of, known_at)
    return f"SELECT {CHANGE} FROM holdings_history WHERE {clause}", params


def monthly_rows(party: str | None, as_of: date | None) -> tuple[str, list[Any]]:
    """The same sum from far fewer rows: holdings_monthly's months before `as_of`'s month, and
    holdings_history's rows from the first of that month to `as_of`."""
    month = as_of.isoformat()[:7] if as_of else None
    before, params = where(("party = ?", party), ("month < ?", month))
    sql = f"SELECT {CHANGE} FROM holdings_monthly WHERE {before}"
    if as_of is None:
        return sql, params
    within, more = where(
        ("party = ?", party), ("effective_date >= ?", f"{month}-01"),
        ("effective_date <= ?", as_of.isoformat()),
    )
    return f"{sql} UNION ALL SELECT {CHANGE} FROM holdings_history WHERE {within}", params + more


def position(db: Database, rows: tuple[str, list[Any]]) -> list[dict[str, Any]]:
    """Gallon-RINs held per party, D code, vintage and K: the non-zero sums of `rows`."""
    sql, params = rows
    return [dict(row) for row in db.query(
        f"SELECT party, d_code, vintage, k, SUM(gallon_rins) AS gallon_rins FROM ({sql}) AS rows "
        "GROUP BY party, d_code, vintage, k HAVING SUM(gallon_rins) != 0 "
        "ORDER BY party, d_code, vintage, k", params,
    )]


def holdings(
    db: Database, party: str | None = None, as_of: date | None = None,
    known_at: int | None = None, blocks: bool = False,
) -> list[dict[str, Any]]:
    """Gallon-RINs held per party, D code, vintage and K on `as_of`, as known at `known_at`."""
    if blocks:
        return held_blocks(db, party, as_of, known_at)
    if known_at is None:
        return position(db, monthly_rows(party, as_of))
    return position(db, history_rows(party, as_of, known_at))


def held_blocks(
    db: Database, party: str | None, as_of: date | None, known_at: int | None
) -> list[dict[str, Any]]:
    """One row per contiguous held block: acquired minus disposed serials per party and key."""
    clause, params = known(party, as_of, known_at)
    sql = (
        "SELECT party, substr(rin, 1, 22) AS prefix, d_code, vintage, k, serial_start, "
        f"serial_end, gallon_rins FROM holdings_history WHERE {clause}"
    )
    deltas: dict[tuple[str, str, int, int, int], dict[int, int]] = defaultdict(
        lambda: defaultdict(int)
    )
    for row in db.query(sql, params):
        sign = 1 if row["gallon_rins"] > 0 else -1
        points = deltas[(row["party"], row["prefix"], row["d_code"], row["vintage"], row["k"])]
        points[row["serial_start"]] += sign
        points[row["serial_end"] + 1] -= sign
    cuts = daughter_starts(db, as_of, known_at)
    reserved = trades.reservations(db, as_of, known_at)
    statuses = batch_locks.qap_on(db, as_of, known_at)
    locked = batch_locks.locked_on(db, as_of, known_at)
    out = []
    for (holder, prefix, d_code, vintage, k), points in sorted(deltas.items()):
        ranges = reserved.get((holder, prefix), [])
        edges = sorted({*cuts.get(prefix[1:19], ()), *(point for start, end in ranges
                                                       for point in (start, end + 1))})
        for start, end in covered(points):
            for first, last in pieces(start, end, edges):
                out.append({
                    "party": holder, "rin": f"{prefix}{first:08d}{last:08d}", "d_code": d_code,
                    "vintage": vintage, "k": k, "gallon_rins": last - first + 1,
                    "reserved": any(s <= first and last <= e for s, e in ranges),
                    "qap": batch_locks.qap_of(statuses, prefix[1:19]),
                    "locked": prefix[1:19] in locked,
                })
    return out


def daughter_starts(
    db: Database, as_of: date | None, known_at: int | None
) -> dict[str, list[int]]:
    """Batch identity → the first serial of every daughter but the first of each split known at
    `known_at` and effective by `as_of` (§80.1428(d)): held runs are cut there."""
    clause, params = known(None, as_of, known_at)
    out: dict[str, list[int]] = defaultdict(list)
    for row in db.query(
        "SELECT DISTINCT batch, serial_start FROM lineage_blocks "
        f"WHERE event = 'split' AND seq > 0 AND {clause} ORDER BY batch, serial_start", params,
    ):
        out[row["batch"]].append(row["serial_start"])
    return out


def covered(points: dict[int, int]) -> list[tuple[int, int]]:
    """The serial intervals whose running count of (+1 at start, −1 after end) is positive."""
    runs: list[tuple[int, int]] = []
    count, opened = 0, 0
    for point in sorted(points):
        before, count = count, count + points[point]
        if before <= 0 < count:
            opened = point
        elif count <= 0 < before:
            if runs and runs[-1][1] == opened - 1:
                opened = runs.pop()[0]
            runs.append((opened, point - 1))
    return runs
