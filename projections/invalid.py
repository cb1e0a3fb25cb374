"""Invalid RINs (§80.1431, §80.1474): the ranges the regulator found invalid, every retired block
with its reason, and the report of who holds invalid RINs now, who retired them for which
compliance year, and how many valid RINs of which D codes each must still retire to replace them.

`retired_blocks` keeps every retired block with its key (notification id, index of the block in
the event); the `compliance_retirements` view is its compliance and replacement rows, so
compliance positions can leave out the invalid part of each block.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from sqlite_utils import Database

from ledger.domain.ranges import SerialSet
from ledger.rules.s1407_obligations import Category
from ledger.rules.s1427_compliance import valid_for
from ledger.rules.s1429_separation import REPLACEMENT_RETIREMENT
from ledger.rules.s1474_replacement import replacement_d_codes
from projections.batch import Batch
from projections.facts import BATCH, EVENT_KINDS, Fact
from projections.schema import Table

INVALID_RANGES = Table(
    "invalid_ranges",
    "Gallon-RINs the regulator found invalid (§80.1431(a)), one row per range of one finding; "
    "any K of those serials is invalid.",
    {
        "notification_id": (int, "position of the finding in the notification log"),
        "seq": (int, "index of the range within the finding"),
        "batch": (str, "batch identity YYYYCCCCFFFFFBBBBB (§80.1425(e))"),
        "serial_start": (int, "first invalid gallon-RIN serial"),
        "serial_end": (int, "last invalid gallon-RIN serial"),
        "gallon_rins": (int, "invalid gallon-RINs in the range"),
        "d_code": (int, "the batch's D code"),
        "effective_date": (str, "date of the finding (ISO)"),
        "reason": (str, "the §80.1431(a) cause, e.g. duplicate or improperly_generated"),
        "note": (str, "the regulator's note, if any"),
        "rin": (str, "the 38-character code of the invalid range (K as generated)"),
    },
    pk=("notification_id", "seq"),
    indexes=(("batch",),),
)
RETIRED = Table(
    "retired_blocks",
    "Every retired block with its EMTS reason, compliance year and serials; its compliance "
    "and replacement rows are the compliance_retirements view.",
    {
        "notification_id": (int, "position of the retirement in the notification log"),
        "seq": (int, "index of the block within the event"),
        "party": (str, "4-digit company id of the retiring party"),
        "effective_date": (str, "date of the retirement (ISO)"),
        "reason": (str, "the ledger's word for the EMTS retirement reason"),
        "reason_code": (int, "EMTS retirement reason code"),
        "compliance_year": (int, "the year the RINs are retired for, if any"),
        "category": (str, "CB or BBD for a D7 RIN retired for compliance, else empty"),
        "batch": (str, "batch identity YYYYCCCCFFFFFBBBBB (§80.1425(e))"),
        "serial_start": (int, "first gallon-RIN serial"),
        "serial_end": (int, "last gallon-RIN serial"),
        "k": (int, "K of the block"),
        "d_code": (int, "D code"),
        "vintage": (int, "year the RINs were generated"),
        "gallon_rins": (int, "gallon-RINs retired"),
    },
    pk=("notification_id", "seq"),
    indexes=(("batch",), ("party", "compliance_year")),
)
UNRETIRED = Table(
    "unretired_blocks",
    "Every block a reversal returned from retirement (EMTS unretire, §80.1452(d)); the "
    "retired_blocks row of the same party and serials before it no longer stands.",
    {
        "notification_id": (int, "position of the reversal in the notification log"),
        "seq": (int, "index of the block within the event"),
        "party": (str, "4-digit company id of the party the block returned to"),
        "effective_date": (str, "date of the reversal (ISO)"),
        "reverses": (str, "the id of the retirement reversed"),
        "reason_code": (int, "EMTS code of the reversal: the retirement's own"),
        "compliance_year": (int, "the year the RINs had been retired for, if any"),
        "batch": (str, "batch identity YYYYCCCCFFFFFBBBBB (§80.1425(e))"),
        "serial_start": (int, "first gallon-RIN serial"),
        "serial_end": (int, "last gallon-RIN serial"),
        "gallon_rins": (int, "gallon-RINs returned"),
    },
    pk=("notification_id", "seq"),
    indexes=(("party", "batch", "serial_start"),),
)
TABLES = (INVALID_RANGES, RETIRED, UNRETIRED)
#: a retired_blocks row `r` still stands: no reversal after it returned those exact serials to
#: the same party (only one retirement of them can stand at a time, so any later one did)
STANDING = (
    "NOT EXISTS (SELECT 1 FROM unretired_blocks u WHERE u.party = r.party AND u.batch = r.batch "
    "AND u.serial_start = r.serial_start AND u.serial_end = r.serial_end "
    "AND u.notification_id > r.notification_id)"
)
COLUMNS = [
    "batch", "party", "status", "reason", "k", "gallon_rins", "compliance_year", "categories",
    "must_replace", "replacement_d_codes", "replaced", "outstanding",
]
USED = "compliance"  # the retirement reason whose invalid RINs must be replaced (§80.1474(b))
REPLACEMENT = str(REPLACEMENT_RETIREMENT)  # EMTS 110, §80.1431(c)
KINDS = frozenset({"retired", "unretired"})


def project(fact: Fact, batch: Batch) -> None:
    """Keep every retired block with its reason, and every block a reversal returned (Party
    events)."""
    event = fact.event
    if fact.kind == "unretired":
        for seq, (block, code) in enumerate(zip(fact.blocks, fact.codes, strict=True)):
            batch.add(UNRETIRED, (
                fact.notification_id, seq, fact.party, fact.effective_date, event.reverses,
                event.reason_code, event.compliance_year, code[BATCH], block.start, block.end,
                block.gallon_rins,
            ))
        return
    for seq, (block, code) in enumerate(zip(fact.blocks, fact.codes, strict=True)):
        key = block.key
        batch.add(RETIRED, (
            fact.notification_id, seq, fact.party, fact.effective_date, event.reason,
            event.reason_code, event.compliance_year, event.category, code[BATCH], block.start,
            block.end, key.k, key.d_code, key.vintage, block.gallon_rins,
        ))


def project_finding(notification_id: int, event: Any, batch: Batch) -> None:
    """Keep the ranges of a BatchInvalidation `Invalidated` event (its `Opened` adds nothing)."""
    if EVENT_KINDS[type(event)] != "invalidated":
        return
    for seq, block in enumerate(event.rins):
        code = block.code
        batch.add(INVALID_RANGES, (
            notification_id, seq, code[BATCH], block.start, block.end, block.gallon_rins,
            block.key.d_code, event.effective_date.isoformat(), event.reason, event.note, code,
        ))
        batch.invalidated.add(code[BATCH])


def retirers(db: Database, batches: set[str]) -> set[str]:
    """Parties that retired gallon-RINs of `batches` for a compliance year: their compliance
    positions change when those batches are found invalid."""
    if not batches:
        return set()
    marks = ", ".join("?" for _ in batches)
    rows = db.query(
        f"SELECT DISTINCT party FROM retired_blocks WHERE compliance_year IS NOT NULL "
        f"AND batch IN ({marks})", sorted(batches),
    )
    return {row["party"] for row in rows}


def invalid_sets(db: Database, batch: str | None = None, known_at: int | None = None
                 ) -> dict[str, SerialSet]:
    """Invalid serials per batch (of one batch if given), as found by notification `known_at`."""
    sql = "SELECT batch, serial_start, serial_end FROM invalid_ranges WHERE 1 = 1"
    params: list[Any] = []
    if batch is not None:
        sql, params = sql + " AND batch = ?", [batch]
    if known_at is not None:
        sql, params = sql + " AND notification_id <= ?", [*params, known_at]
    ranges: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for row in db.query(sql, params):
        ranges[row["batch"]].append((row["serial_start"], row["serial_end"]))
    return {name: SerialSet.of(intervals) for name, intervals in ranges.items()}


def overlap(invalid: SerialSet | None, start: int, end: int) -> int:
    """How many of serials `start`..`end` are in `invalid`."""
    return len(invalid.intersection(SerialSet(((start, end),)))) if invalid else 0


def invalid_retired(db: Database, party: str, known_at: int | None = None
                    ) -> dict[tuple[int, int], int]:
    """Invalid gallon-RINs per retired block (notification id, seq) of `party`, as found by
    `known_at`; blocks with none are left out."""
    sets = invalid_sets(db, known_at=known_at)
    if not sets:
        return {}
    marks = ", ".join("?" for _ in sets)
    rows = db.query(
        f"SELECT notification_id, seq, batch, serial_start, serial_end FROM retired_blocks "
        f"WHERE party = ? AND batch IN ({marks})", [party, *sorted(sets)],
    )
    out = {}
    for row in rows:
        if n := overlap(sets[row["batch"]], row["serial_start"], row["serial_end"]):
            out[(row["notification_id"], row["seq"])] = n
    return out


def holders(db: Database, batch: str) -> dict[tuple[str, int], SerialSet]:
    """Serials of `batch` each party holds now, per K, from the holdings history."""
    held: dict[tuple[str, int], SerialSet] = defaultdict(SerialSet)
    for row in db.query(
        "SELECT party, k, gallon_rins, serial_start, serial_end FROM holdings_history "
        "WHERE batch = ? ORDER BY notification_id, seq", [batch],
    ):
        slot, serials = (row["party"], row["k"]), SerialSet(((row["serial_start"],
                                                              row["serial_end"]),))
        held[slot] = held[slot].union(serials) if row["gallon_rins"] > 0 else (
            held[slot].subtract(serials))
    return held


def categories_of(d_code: int, category: str | None) -> list[Category]:
    """The RVOs a retired RIN counted toward, in CB, BBD, AB, RF order (§80.1427(a)(2))."""
    valid = valid_for(d_code, category)
    return [c for c in Category if c in valid]


def invalid(db: Database, batch: str | None = None) -> list[dict[str, Any]]:
    """Per invalidated batch: who holds its invalid gallon-RINs now (`held`), who retired them
    (`retired`, with the compliance year and RVOs they counted toward), and for a compliance
    retirement how many valid RINs of which D codes must replace them and how many have."""
    sets = invalid_sets(db, batch)
    rows: list[dict[str, Any]] = []
    for name in sorted(sets):
        for (party, k), serials in sorted(holders(db, name).items()):
            if n := len(serials.intersection(sets[name])):
                rows.append(row(name, party, "held", None, k, n, None, []))
        retired: dict[tuple[Any, ...], int] = defaultdict(int)
        for r in db.query(
            f"SELECT * FROM retired_blocks r WHERE batch = ? AND {STANDING} "
            "ORDER BY notification_id, seq", [name]
        ):
            if n := overlap(sets[name], r["serial_start"], r["serial_end"]):
                used = r["reason"] == USED
                slot = (r["party"], r["reason"], r["k"], r["compliance_year"] if used else None,
                        tuple(categories_of(r["d_code"], r["category"])) if used else ())
                retired[slot] += n
        for (party, reason, k, year, categories), n in sorted(
            retired.items(), key=lambda item: tuple(str(part) for part in item[0])
        ):
            rows.append(row(name, party, "retired", reason, k, n, year, list(categories)))
    allocate_replacements(db, rows)
    return rows


def row(
    batch: str, party: str, status: str, reason: str | None, k: int, gallon_rins: int,
    year: int | None, categories: list[Category],
) -> dict[str, Any]:
    must = gallon_rins if categories else 0
    return {
        "batch": batch, "party": party, "status": status, "reason": reason, "k": k,
        "gallon_rins": gallon_rins, "compliance_year": year,
        "categories": " ".join(c.value for c in categories),
        "must_replace": must,
        "replacement_d_codes": " ".join(replacement_d_codes(categories)) if categories else "",
        "replaced": 0, "outstanding": must,
    }


def allocate_replacements(db: Database, rows: list[dict[str, Any]]) -> None:
    """Share each party's remedial retirements (EMTS 110) for a year among its rows to replace,
    in row order, each only to rows whose every RVO the replacement's D code is valid for."""
    pools: dict[tuple[str, int], list[list[Any]]] = {}
    for r in rows:
        if not r["must_replace"]:
            continue
        slot = (r["party"], r["compliance_year"])
        if slot not in pools:
            pools[slot] = replacements(db, *slot)
        needed = {Category(c) for c in r["categories"].split()}
        for pool in pools[slot]:
            if needed <= pool[0]:
                take = min(pool[1], r["outstanding"])
                pool[1] -= take
                r["replaced"] += take
                r["outstanding"] -= take


def replacements(db: Database, party: str, year: int) -> list[list[Any]]:
    """[RVOs valid for, valid gallon-RINs] of the party's remedial retirements for `year`."""
    invalid_parts = invalid_retired(db, party)
    pools: dict[frozenset[Category], int] = defaultdict(int)
    for r in db.query(
        "SELECT * FROM retired_blocks r WHERE party = ? AND reason = ? AND compliance_year = ? "
        f"AND {STANDING} ORDER BY notification_id, seq", [party, REPLACEMENT, year],
    ):
        valid = r["gallon_rins"] - invalid_parts.get((r["notification_id"], r["seq"]), 0)
        pools[valid_for(r["d_code"], r["category"])] += valid
    return [[counts, n] for counts, n in pools.items()]
