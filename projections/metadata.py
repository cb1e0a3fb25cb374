"""Datasette metadata for the read models, generated from the table declarations.

`projections/metadata.json` is this function's output; a test keeps the two equal. Browse with
`datasette <data>/views.sqlite -m projections/metadata.json`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from projections.runner import SQL_VIEWS, TABLES

METADATA_FILE = Path(__file__).with_name("metadata.json")


def metadata() -> dict[str, Any]:
    """Titles, table and column descriptions, keyed by database name `views`."""
    return {
        "title": "rin-ledger read models",
        "description": "Holdings history, quarter-end inputs, compliance positions, lineage, "
                       "journal and market statistics projected from the RIN ledger's events "
                       "(40 CFR 80 Subpart M).",
        "databases": {
            "views": {
                "tables": {
                    **{t.name: t.metadata() for t in TABLES},
                    "tracking": {"description": "The last notification id projected, per "
                                                "upstream application (eventsourcing)."},
                    **{v.name: v.metadata() for v in SQL_VIEWS},
                },
            },
        },
    }


def render() -> str:
    return json.dumps(metadata(), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    METADATA_FILE.write_text(render(), encoding="utf-8")
