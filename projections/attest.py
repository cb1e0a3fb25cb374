"""The attest workpaper (§80.1464): a simple random sample of each RIN transaction type of the
year (§80.1464(a)(2)(i), (b)(2)(i), (c)(1)(i): purchased, sold, retired, separated,
reinstated), sized by §80.127(b)(1) and drawn by a seeded generator (§80.127(a)), and each
quarter's activity report compared with its roll-forward recomputed from the log
(§80.1464(a)(3)(ii), (b)(3)(ii), (c)(2)(ii); projections/rollforward.py).

A transaction is one of the party's rows of the transaction report (projections/
rin_transactions.py) grouped by its id; a type's population is those dated in the year whose
RINs are a flow of that column of the activity report (a reversed trade is a remedial purchase
or sale, an unretired retirement a reinstatement), in log order. The same party, year, seed
and known-at point always draw the same sample.
"""

from __future__ import annotations

from random import Random
from typing import Any

from sqlite_utils import Database

from projections.activity import AMOUNTS, QuarterActivity, year_activity
from projections.rin_transactions import upto

#: the §80.1464 transaction types, each the transaction report's `flow` of that name
TYPES = ("purchased", "sold", "retired", "separated", "reinstated")
#: §80.127(b)(1) Option 1: (least population, sample size), largest first; below 26 the sample
#: is the population or 19, whichever is smaller
SAMPLE_SIZES = ((66, 29), (41, 25), (26, 20))
SMALL_SAMPLE = 19
COLUMNS = ["party", "year", "type", "population", "sample_size", "sampled", "quarter",
           "assignment", "matches", "differences"]


def sample_size(population: int) -> int:
    """§80.127(b)(1): 29 for 66 or more, 25 for 41-65, 20 for 26-40, else N or 19, whichever
    is smaller."""
    for least, size in SAMPLE_SIZES:
        if population >= least:
            return size
    return min(population, SMALL_SAMPLE)


def population(db: Database, party: str, year: int, kind: str, known_at: int | None
               ) -> list[str]:
    """The ids of the party's transactions of `kind` dated in `year`, in log order."""
    return [row["transaction"] for row in db.query(
        "SELECT \"transaction\", MIN(notification_id) AS first FROM rin_transactions "
        "WHERE party = ? AND year = ? AND flow = ? AND notification_id <= ? "
        "GROUP BY \"transaction\" ORDER BY first", [party, year, kind, upto(known_at)],
    )]


def draw(ids: list[str], seed: int, party: str, year: int, kind: str) -> list[str]:
    """A simple random sample (§80.127(a)) of §80.127(b)(1)'s size, in sample order; the seed
    string names the party, year and type, so each type's draw is its own."""
    return Random(f"{seed}:{party}:{year}:{kind}").sample(ids, sample_size(len(ids)))


def differences(report: dict[str, Any], recomputed: dict[str, Any]) -> list[str]:
    """Each amount where the report and the roll-forward disagree, with both values."""
    return [f"{column}: report {report[column]}, recomputed {recomputed[column]}"
            for column in AMOUNTS if report[column] != recomputed[column]]


def attest(db: Database, party: str, year: int, seed: int, recomputed: list[QuarterActivity],
           known_at: int | None = None) -> list[dict[str, Any]]:
    """The workpaper's rows: one per transaction type, then one `rollforward` row per quarter
    and assignment comparing the activity report with `recomputed` (the roll-forward)."""
    blank = dict.fromkeys(COLUMNS)
    rows = []
    for name in TYPES:
        ids = population(db, party, year, name, known_at)
        rows.append({**blank, "party": party, "year": year, "type": name,
                     "population": len(ids), "sample_size": sample_size(len(ids)),
                     "sampled": draw(ids, seed, party, year, name)})
    reported = [row for q in year_activity(db, party, year, known_at) for row in q.rows()]
    again = [row for q in recomputed for row in q.rows()]
    for report, check in zip(reported, again, strict=True):
        found = differences(report, check)
        rows.append({**blank, "party": party, "year": year, "type": "rollforward",
                     "quarter": report["quarter"], "assignment": report["assignment"],
                     "matches": not found, "differences": "; ".join(found) or None})
    return rows
