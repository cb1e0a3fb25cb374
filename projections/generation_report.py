"""The RIN Generation Report (§80.1451(b)(1)(ii)): one row per batch a producer or importer
generated RINs for, with its code, production date, fuel, D code, equivalence value, volume,
feedstocks and gallon-RINs ((F)-(K)). A batch belongs to the quarter of its generation date."""

from __future__ import annotations

from typing import Any

from sqlite_utils import Database

from projections.batch import Batch
from projections.facts import Fact
from projections.rin_transactions import quarter_of, upto
from projections.schema import Table

BATCHES = Table(
    "generated_batches",
    "Every batch RINs were generated for (§80.1451(b)(1)(ii)), one row per batch-RIN.",
    {
        "notification_id": (int, "position of the generation in the notification log"),
        "party": (str, "4-digit company id of the generator"),
        "facility": (str, "5-digit facility id"),
        "date": (str, "generation date (ISO)"),
        "year": (int, "year of the generation date"),
        "quarter": (int, "calendar quarter of the generation date, 1-4"),
        "rin": (str, "the batch-RIN's 38-character code as generated"),
        "production_date": (str, "production date EMTS records (§80.1426(g)(10) for delayed "
                            "RINs), else the generation date (ISO)"),
        "fuel": (str, "fuel type ((H))"),
        "d_code": (int, "D code"),
        "equivalence_value": (str, "equivalence value ((I), §80.1415), exact decimal text"),
        "volume": (str, "standardized gallons of the batch ((J)), exact decimal text"),
        "feedstocks": (str, "types and quantities of feedstocks ((K)), as given"),
        "gallon_rins": (int, "gallon-RINs generated ((F), §80.1426)"),
    },
    pk=("notification_id",),
    indexes=(("party", "year", "quarter"),),
    index_late=True,  # no query during a rebuild reads it: indexed once at its end
)
TABLES = (BATCHES,)
KINDS = frozenset({"generated"})
COLUMNS = ["party", "rin", "production_date", "fuel", "d_code", "equivalence_value", "volume",
           "feedstocks", "gallon_rins"]


def feedstocks(details: dict[str, Any]) -> str | None:
    """The batch's feedstocks as `type mass lb`, `; `-separated (§80.1451(b)(1)(ii)(K))."""
    given = details.get("feedstocks")
    if not given:
        return None
    return "; ".join(f"{item['type']} {item['mass_lb']} lb" for item in given)


def project(fact: Fact, batch: Batch) -> None:
    event = fact.event
    day = fact.effective_date
    assert day is not None, "a generation is dated"
    produced = event.production_date or event.production_start
    batch.add(BATCHES, (
        fact.notification_id, fact.party, event.rin.key.facility, day, int(day[:4]),
        quarter_of(day), fact.codes[0], produced.isoformat() if produced else day, event.fuel,
        event.d_code, str(event.equivalence_value), str(event.standardized_volume),
        feedstocks(event.details), event.rin.gallon_rins,
    ))


def generation(
    db: Database, party: str, year: int, quarter: int | None = None,
    known_at: int | None = None,
) -> list[dict[str, Any]]:
    """The party's batches generated in `year` (and `quarter`) as known at `known_at`."""
    rows = db.query(
        "SELECT * FROM generated_batches WHERE party = ? AND year = ? "
        "AND (? IS NULL OR quarter = ?) AND notification_id <= ? ORDER BY notification_id",
        [party, year, quarter, quarter, upto(known_at)],
    )
    return [{column: row[column] for column in COLUMNS} for row in rows]
