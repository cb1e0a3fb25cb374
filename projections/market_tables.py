"""EPA's public RIN tables (`rin market --table …`): RINs generated, retired, locked and
available by vintage, D code and assignment; separations and retirements by reason code;
generation by fuel and source (domestic or import).

Rows are one per event and block, each with its notification id, so a table can be summed as
the ledger stood at any earlier point (`--known-at`). A block counts in the assignment state it
is in now: a separation moves its gallon-RINs from the `assigned` row to the `separated` one;
a retired block stays counted in the state it was retired in, until a reversal unretires it
(EMTS unretire, §80.1452(d)): then it is not retired, in either table. Expired RINs
(§80.1428(c)) are not retired, so they count as available. `locked` counts the gallon-RINs not
retired of every batch a lock holds (§80.1474(b)(1)), in the state they are in: a locked batch's
RINs cannot move, separate or retire, so that state is the one they were locked in.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from sqlite_utils import Database

from projections.batch import Batch
from projections.facts import BATCH, Fact
from projections.schema import Table, View

ASSIGNMENT = {1: "assigned", 2: "separated"}
STATES = Table(
    "market_states",
    "Per event and block, the gallon-RINs it adds to or moves between the assignment states "
    "of EPA's available-RINs table (generated, retired, locked).",
    {
        "notification_id": (int, "position of the event in the notification log"),
        "seq": (int, "index of the row within the event"),
        "batch": (str, "batch identity YYYYCCCCFFFFFBBBBB (§80.1425(e)): locks hold batches"),
        "vintage": (int, "RIN year"),
        "d_code": (int, "D code"),
        "assignment": (str, "assigned (K=1) or separated (K=2)"),
        "generated": (int, "gallon-RINs generated now in this state (+), or moved out (−)"),
        "retired": (int, "gallon-RINs retired in this state (+), or unretired (−)"),
    },
    pk=("notification_id", "seq"),
)
REASONS = Table(
    "market_reasons",
    "Per separation or retirement event and block: gallon-RINs by EMTS reason code.",
    {
        "notification_id": (int, "position of the event in the notification log"),
        "seq": (int, "index of the block within the event"),
        "command": (str, "the id of the command, which a reversal names (§80.1452(d))"),
        "kind": (str, "separation or retirement"),
        "year": (int, "calendar year of the effective date"),
        "d_code": (int, "D code"),
        "reason": (str, "EMTS reason code as EMTS writes it (reference.md §5), or the ledger's "
                        "word where EMTS has no code"),
        "gallon_rins": (int, "gallon-RINs"),
    },
    pk=("notification_id", "seq"),
    indexes=(("kind", "year"),),
    index_late=True,  # no query during a rebuild reads it: indexed once at its end
)
GENERATION = Table(
    "market_generation",
    "Per generated batch: year, D code, fuel, the foreign producer it names (an import, "
    "§80.1426(a)(2)), gallon-RINs and standardized volume.",
    {
        "notification_id": (int, "position of the generation in the notification log"),
        "party": (str, "the generating party"),
        "year": (int, "calendar year of the effective date"),
        "d_code": (int, "D code"),
        "fuel": (str, "fuel category"),
        "foreign_producer": (str, "the foreign producer an importer's batch came from, if any"),
        "gallon_rins": (int, "gallon-RINs generated"),
        "volume": (str, "standardized gallons (exact decimal text)"),
    },
    pk=("notification_id",),
)
TABLES = (STATES, REASONS, GENERATION)
KINDS = frozenset({"generated", "separated", "retired", "unretired"})
AVAILABLE_COLUMNS = ["vintage", "d_code", "assignment", "generated", "retired", "locked",
                     "available"]
REASON_COLUMNS = ["year", "d_code", "reason", "gallon_rins"]
GENERATION_COLUMNS = ["year", "d_code", "fuel", "source", "gallon_rins", "volume"]
TABLE_NAMES = ("available", "separations", "retirements", "generation")
#: the batches a lock holds as known at notification {known}: a lock no later unlock lifted (an
#: unlock names the holders it lifts, ledger/domain/batch_status.py)
_LOCKED = ("SELECT l.batch FROM batch_events l WHERE l.event = 'locked' "
           "AND l.notification_id <= {known} AND NOT EXISTS (SELECT 1 FROM batch_events u "
           "WHERE u.batch = l.batch AND u.event = 'unlocked' AND u.notification_id > "
           "l.notification_id AND u.notification_id <= {known} "
           "AND u.lifted LIKE '%\"' || l.holder || '\"%')")
_HELD = "CASE WHEN batch IN (" + _LOCKED + ") THEN generated - retired ELSE 0 END"
_AVAILABLE = ("SELECT vintage, d_code, assignment, sum(generated) AS generated, "
              "sum(retired) AS retired, sum(" + _HELD + ") AS locked, "
              "sum(generated) - sum(retired) - sum(" + _HELD + ") AS available "
              "FROM market_states WHERE notification_id <= {known} "
              "GROUP BY vintage, d_code, assignment")
#: a retirement a reversal unretired as known at notification ? no longer counts
_STANDING = ("(kind = 'separation' OR command IS NULL OR command NOT IN (SELECT reverses FROM "
             "unretired_blocks WHERE notification_id <= ?))")
AVAILABLE = View(
    "market_available",
    "EPA's available-RINs table: gallon-RINs generated, retired, locked and available "
    "(generated − retired − locked) by vintage, D code and assignment.",
    {
        "vintage": "RIN year", "d_code": "D code", "assignment": "assigned or separated",
        "generated": "gallon-RINs generated, counted in the state they are in now",
        "retired": "gallon-RINs retired, in the state they were retired in",
        "locked": "gallon-RINs not retired of the batches a lock holds now (§80.1474(b)(1))",
        "available": "generated − retired − locked; expired RINs count as available",
    },
    _AVAILABLE.format(known=2**62),
)
VIEWS = (AVAILABLE,)
#: an import: the batch names its foreign producer, or its generator is registered as an
#: importer and not as a producer (ledger/rules/s1426/eligibility.py `is_import`)
_SOURCE = ("CASE WHEN g.foreign_producer IS NOT NULL OR (p.roles LIKE '%\"importer\"%' AND "
           "p.roles NOT LIKE '%\"producer\"%') THEN 'import' ELSE 'domestic' END")


def reason_of(event: Any) -> str:
    """The EMTS code as text (`"10"`, `"80"`), or the ledger's word where there is none."""
    code = event.reason_code
    return str(event.reason) if code is None else str(code)


def project(fact: Fact, batch: Batch) -> None:
    event, n, day = fact.event, fact.notification_id, fact.effective_date or ""
    if fact.kind == "generated":
        block = event.rin
        batch.add(STATES, (n, 0, fact.codes[0][BATCH], block.key.vintage, block.key.d_code,
                           ASSIGNMENT[block.key.k], block.gallon_rins, 0))
        batch.add(GENERATION, (n, fact.party, int(day[:4]), event.d_code,
                               str(event.fuel), event.details.get("foreign_producer"),
                               block.gallon_rins, str(event.standardized_volume)))
        return
    if fact.kind == "unretired":  # retired no more, in the state it returns to (§80.1452(d))
        for seq, (block, code) in enumerate(zip(fact.blocks, fact.codes, strict=True)):
            batch.add(STATES, (n, seq, code[BATCH], block.key.vintage, block.key.d_code,
                               ASSIGNMENT[block.key.k], 0, -block.gallon_rins))
        return
    kind = "separation" if fact.kind == "separated" else "retirement"
    year, reason = int(day[:4]), reason_of(event)
    for seq, (block, code) in enumerate(zip(fact.blocks, fact.codes, strict=True)):
        key, name = block.key, code[BATCH]
        batch.add(REASONS, (n, seq, event.client_id, kind, year, key.d_code, reason,
                            block.gallon_rins))
        if kind == "separation":  # K=1 → K=2 (§80.1429(c)): moved from assigned to separated
            batch.add(STATES, (n, 2 * seq, name, key.vintage, key.d_code, "assigned",
                               -block.gallon_rins, 0))
            batch.add(STATES, (n, 2 * seq + 1, name, key.vintage, key.d_code, "separated",
                               block.gallon_rins, 0))
        else:
            batch.add(STATES, (n, seq, name, key.vintage, key.d_code, ASSIGNMENT[key.k], 0,
                               block.gallon_rins))


def known(known_at: int | None) -> int:
    return known_at if known_at is not None else 2**62


def available(db: Database, known_at: int | None = None) -> list[dict[str, Any]]:
    """Rows `vintage, d_code, assignment, generated, retired, locked, available`."""
    sql = _AVAILABLE.format(known=int(known(known_at)))
    return [dict(row) for row in db.query(f"{sql} ORDER BY vintage, d_code, assignment")]


def by_reason(db: Database, kind: str, known_at: int | None = None) -> list[dict[str, Any]]:
    """Rows `year, d_code, reason, gallon_rins` of separations or retirements (a retirement
    unretired by then not among them)."""
    rows = db.query(
        "SELECT year, d_code, reason, sum(gallon_rins) AS gallon_rins FROM market_reasons "
        f"WHERE kind = ? AND notification_id <= ? AND {_STANDING} GROUP BY year, d_code, reason "
        "ORDER BY year, d_code, length(reason), reason", [kind, known(known_at), known(known_at)])
    return [dict(row) for row in rows]


def generation(db: Database, known_at: int | None = None) -> list[dict[str, Any]]:
    """Rows `year, d_code, fuel, source, gallon_rins, volume` (volume summed exactly)."""
    out: dict[tuple[Any, ...], dict[str, Any]] = {}
    for row in db.query(
        f"SELECT g.year, g.d_code, g.fuel, {_SOURCE} AS source, g.gallon_rins, g.volume "
        "FROM market_generation g LEFT JOIN parties p ON p.party = g.party "
        "WHERE g.notification_id <= ? ORDER BY g.year, g.d_code, g.fuel, source",
        [known(known_at)],
    ):
        key = (row["year"], row["d_code"], row["fuel"], row["source"])
        cell = out.setdefault(key, {**dict(zip(GENERATION_COLUMNS, key, strict=False)),
                                    "gallon_rins": 0, "volume": Decimal(0)})
        cell["gallon_rins"] += row["gallon_rins"]
        cell["volume"] += Decimal(row["volume"])
    return list(out.values())


def table(db: Database, name: str, known_at: int | None = None) -> list[dict[str, Any]]:
    """One of EPA's tables by its `--table` name."""
    if name == "available":
        return available(db, known_at)
    if name == "generation":
        return generation(db, known_at)
    return by_reason(db, name.removesuffix("s"), known_at)  # separation, retirement


def columns(name: str) -> list[str]:
    return {"available": AVAILABLE_COLUMNS, "generation": GENERATION_COLUMNS}.get(
        name, REASON_COLUMNS)
