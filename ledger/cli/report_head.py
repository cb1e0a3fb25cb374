"""The chain head a certified report was computed at (design.md "Release 2": each report can be
proved against the store later), the one way every report command prints it: a `head` object on
every row, `{"notification_id", "hash"}` and, on a signed store, the `key` and `signature` of
the head row stored there (projections/report_head.py), which `rin verify --against` takes as
it is. In CSV it is that object as compact JSON; a table names it in its title, and `--json`,
`--csv` or `--nl` also print it on standard error (an empty report has no row to carry it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

import orjson
import typer

from ledger.cli.failures import print_failure
from ledger.cli.options import BAD_ARGUMENT, err, options
from ledger.cli.output import CHOSEN, Format, emit
from ledger.cli.reports import open_views
from projections import Views, known

Rows = Callable[[Views, int], list[dict[str, Any]]]
#: how a table shows a report's rows: as they are, or laid out anew (the activity report)
Layout = Callable[[list[dict[str, Any]], list[str]], tuple[list[dict[str, Any]], list[str]]]


def as_they_are(rows: list[dict[str, Any]], columns: list[str]
                ) -> tuple[list[dict[str, Any]], list[str]]:
    return rows, columns


def flat(value: Any) -> Any:
    """A list or object as CSV text: ids space-separated, an object as compact JSON."""
    if isinstance(value, list):
        return " ".join(str(item) for item in value)
    if isinstance(value, dict):
        return orjson.dumps(value).decode()
    return value


def certified_head(ctx: typer.Context, known_at: int | datetime | None,
                   work: Callable[[Views, int], Any], **named: Any) -> tuple[Any, dict[str, Any]]:
    """`work` done at the point `known_at` names (default: now) and the head there. A `party`
    or `year` in `named` that the ledger never recorded exits 2 saying so (a report of zeros
    for a party that does not exist would read as a certified nothing)."""
    with open_views(ctx) as views:
        if views.url is None and (problems := known.unknown(views.path, **named)):
            for problem in problems:
                print_failure(err, problem)
            raise typer.Exit(BAD_ARGUMENT)
        position = views.known_position(known_at)
        return work(views, position), views.head_at(position)


def title_of(title: str, head: dict[str, Any]) -> str:
    return f"{title} — at notification {head['notification_id']:,}, head {head['hash']}"


def certified(ctx: typer.Context, known_at: int | datetime | None, rows_of: Rows,
              columns: Sequence[str], title: str, table: Layout = as_they_are,
              **named: Any) -> None:
    """One report at one point of the log, in the format chosen (`tabular`), each row carrying
    the head there (on standard error too unless `--quiet`); `named` as `certified_head`."""
    rows, head = certified_head(ctx, known_at, rows_of, **named)
    rows = [{**row, "head": head} for row in rows]
    chosen, title = CHOSEN.get(), title_of(title, head)
    if chosen is Format.TABLE:
        shown, names = table(rows, list(columns))
        emit(shown, names, title=title)
        return
    if not options(ctx).quiet:
        err.print(title)
    if chosen is Format.CSV:
        rows = [{column: flat(value) for column, value in row.items()} for row in rows]
    emit(rows, [*columns, "head"], title=title)
