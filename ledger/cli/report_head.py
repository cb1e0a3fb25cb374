"""The chain head a report was computed at (design.md "Release 2": a certified report can be
proved against the store later), in the shape the §80.1451 reports use: a `head`
field on every JSON or CSV row, `{"notification_id", "hash"}` (and `key`, `signature` on a signed
store; in CSV as compact JSON), the head `rin verify --against` takes. A table names it in its
title, and with `--json` or `--csv` standard error does too (an empty report has no row).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

import orjson
import typer

from ledger.cli.options import err
from ledger.cli.output import emit
from ledger.cli.reports import open_views
from projections import Views


def with_head(rows: Sequence[dict[str, Any]], head: dict[str, Any], as_csv: bool
              ) -> list[dict[str, Any]]:
    """Each row with the head (as compact JSON text for CSV)."""
    value: Any = orjson.dumps(head).decode() if as_csv else head
    return [{**row, "head": value} for row in rows]


def show_at(ctx: typer.Context, known_at: int | datetime | None,
            rows_of: Callable[[Views, int], list[dict[str, Any]]], columns: Sequence[str],
            as_json: bool, as_csv: bool, title: str) -> None:
    """A report as the ledger stood at `known_at` (default: now), its rows carrying that head."""
    with open_views(ctx) as views:
        position = views.known_position(known_at)
        rows, head = rows_of(views, position), views.head_at(position)
    title = f"{title} — at notification {head['notification_id']:,}, head {head['hash']}"
    if as_json or as_csv:  # an empty report has no row to carry its head
        err.print(title, soft_wrap=True)
        columns = [*columns, "head"]
    emit(with_head(rows, head, as_csv), columns, as_json, as_csv, title)
