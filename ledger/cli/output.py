"""How `rin` prints: report rows as a JSON array, CSV or a table (the columns are the read
model's own), a command's result line, and progress bars on stderr."""

from __future__ import annotations

import csv
import io
import shutil
import sys
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

import orjson
from rich.console import Console
from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeRemainingColumn
from rich.table import Table

from ledger.application.ledger import Result
from ledger.cli.options import err

#: quantities, right-aligned with thousands separators in a table
NUMERIC = {
    "gallon_rins", "assigned_rins", "volume", "limit", "excess", "rvo", "deficit_carried_in",
    "current_year_rins", "prior_year_rins", "prior_year_applied", "applied", "deficit",
    "generated", "retired", "locked", "available",  # rin market (projections/market_tables.py)
}


def emit(rows: Sequence[dict[str, Any]], columns: Sequence[str], as_json: bool, as_csv: bool,
         title: str) -> None:
    """Print report rows as a JSON array, CSV, or a readable table."""
    if as_json:
        sys.stdout.write(orjson.dumps(rows, default=str).decode() + "\n")
    elif as_csv:
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
        sys.stdout.write(buffer.getvalue())
    else:
        table = Table(title=title)
        for column in columns:
            table.add_column(column, justify="right" if column in NUMERIC else "left")
        for row in rows:
            table.add_row(*(fmt(row.get(column), column) for column in columns))
        Console(width=max(shutil.get_terminal_size().columns, 160)).print(table)


def fmt(value: Any, column: str) -> str:
    """Quantities with thousands separators; labels (years, D codes, K, ids) as they are."""
    if column in NUMERIC and isinstance(value, Decimal):
        return f"{value.normalize():,f}"
    if column in NUMERIC and isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return "" if value is None else str(value)


def report(result: Result, as_json: bool) -> None:
    """One command's result: every result as a JSON object, or a rejected line's error."""
    if as_json:
        sys.stdout.write(orjson.dumps(result.to_dict()).decode() + "\n")
    elif result.status == "rejected":
        sys.stdout.write(f"line {result.line}: {result.error}\n")


def progress_bar(label: str, quiet: bool) -> Progress:
    """A progress bar on stderr with a rate column (`rate` field); `--quiet` silences it."""
    columns = (TextColumn(label), BarColumn(), TaskProgressColumn(),
               TextColumn("{task.fields[rate]}"), TimeRemainingColumn())
    return Progress(*columns, console=err, disable=quiet)
