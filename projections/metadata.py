"""Datasette metadata for the read models, generated from the table declarations.

`projections/metadata.json` is this function's output (package data, so `rin serve` works from a
wheel); a test keeps the two equal. It names the tables and columns, hides the internal tables,
declares the reports as saved queries (projections/saved_queries.py), the charts
(projections/dashboards.py) and which columns are quantities with which unit (shown with
thousands separators by projections/datasette_plugins). `rin serve` runs Datasette with it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from projections import activity
from projections.dashboards import dashboards
from projections.runner import SQL_VIEWS, TABLES
from projections.saved_queries import QUERIES

METADATA_FILE = Path(__file__).with_name("metadata.json")
#: tables a regulator needs no list entry for: the follower's position, and rows that only
#: feed a SQL view or a report (still reachable by URL and SQL)
HIDDEN = ("tracking", "lineage_blocks", "market_states", "market_reasons", "market_generation",
          "emts_submissions")
#: columns shown with thousands separators, and their unit ("" for a count of gallon-RINs)
GALLONS = "gal"
QUANTITIES = {
    **dict.fromkeys(("gallon_rins", "assigned_rins", "quantity", "generated", "separated",
                     "retired", "locked", "available", "rvo", "deficit_carried_in",
                     "current_year_rins", "prior_year_rins", "prior_year_applied", "applied",
                     "deficit", "excess", "limit"), ""),
    **dict.fromkeys(("volume", "fuel_used", "fuel_end"), GALLONS),
    # the activity report's amounts (§80.1451(c)(2)): gallon-RINs
    **dict.fromkeys((c for c in activity.AMOUNTS if c not in ("generated", "fuel_end")), ""),
}


def metadata() -> dict[str, Any]:
    """Titles, table and column descriptions, keyed by database name `views`."""
    tables: dict[str, Any] = {
        **{t.name: t.metadata() for t in TABLES},
        "tracking": {"description": "The last notification id projected, per "
                                    "upstream application (eventsourcing)."},
        **{v.name: v.metadata() for v in SQL_VIEWS},
    }
    for name in HIDDEN:
        tables[name] = {**tables[name], "hidden": True}
    return {
        "title": "rin-ledger read models",
        "description": "Holdings history, quarter-end inputs, compliance positions, lineage, "
                       "journal and market statistics projected from the RIN ledger's events "
                       "(40 CFR 80 Subpart M). Reports are under Queries; charts under "
                       "Dashboards (/-/dashboards).",
        "databases": {
            "views": {
                "tables": tables,
                "queries": {query.name: query.metadata() for query in QUERIES},
            },
        },
        "plugins": {
            "datasette-dashboards": dashboards(),
            "rin-ledger": {"quantities": QUANTITIES},
        },
    }


def render() -> str:
    return json.dumps(metadata(), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    METADATA_FILE.write_text(render(), encoding="utf-8")
