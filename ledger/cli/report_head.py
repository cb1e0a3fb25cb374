"""The chain head a report was computed at (design.md "Release 2": a certified report can be
proved against the store later): every row carries `known_at` (the notification id) and `head`
(the ledger-wide chain hash up to it); the table form names both in its title, and with
`--json` or `--csv` standard error does (an empty report has no row to carry it).

`{"notification_id": known_at, "hash": head}` is the head `rin verify --against` takes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

import typer

from ledger.cli.options import err
from ledger.cli.output import emit
from ledger.cli.reports import open_views
from projections import Views

HEAD_COLUMNS = ["known_at", "head"]


def with_head(rows: Sequence[dict[str, Any]], head: dict[str, Any]) -> list[dict[str, Any]]:
    """Each row with the head's notification id and hash."""
    return [{**row, "known_at": head["notification_id"], "head": head["hash"]} for row in rows]


def show_at(ctx: typer.Context, known_at: int | datetime | None,
            rows_of: Callable[[Views, int], list[dict[str, Any]]], columns: Sequence[str],
            as_json: bool, as_csv: bool, title: str) -> None:
    """A report as the ledger stood at `known_at` (default: now), its rows carrying that head."""
    with open_views(ctx) as views:
        position = views.known(known_at)
        rows, head = rows_of(views, position), views.head(position)
    emit(with_head(rows, head), [*columns, *HEAD_COLUMNS], as_json, as_csv,
         f"{title} (at notification {head['notification_id']:,}, head {head['hash'][:16]}…)")
    if as_json or as_csv:  # an empty report has no row to carry it
        err.print(f"computed at notification {head['notification_id']}, head {head['hash']}")
