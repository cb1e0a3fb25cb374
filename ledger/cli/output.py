"""How `rin` prints: report rows in the one output format a report was asked for, a command's
result line, and progress bars on stderr.

A report command gets the shared output options by being decorated with `tabular` (under
`@app.command()`): `--table` (the default: a table for people, quantities with thousands
separators, as wide as the terminal), `--json` (one JSON array of objects), `--csv` (a header
row, then one row per object; booleans `true`/`false` as in JSON) or `--nl` (newline-delimited
JSON, one object a line); two at once exit 2. It then prints with `emit(rows, columns,
title=…)`, which uses the format chosen. Numbers are exact in JSON and CSV: Decimals as their
decimal text, never a float.

    @app.command("activity")
    @tabular
    def activity(ctx: typer.Context, party: PartyOpt = None) -> None:
        emit(rows, COLUMNS, title="RIN activity")
"""

from __future__ import annotations

import codecs
import csv
import dataclasses
import io
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import date
from decimal import Decimal
from enum import StrEnum
from typing import Annotated, Any

import orjson
import typer
from rich.box import ASCII, HEAVY_HEAD
from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskProgressColumn,
    TextColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from ledger.application.ledger import Result
from ledger.cli.added_options import option, with_options
from ledger.cli.options import err
from ledger.cli.stdout import stdout_encoding, write_out


class Format(StrEnum):
    """The output formats of every report (`--table`, `--json`, `--csv`, `--nl`)."""

    TABLE = "table"
    JSON = "json"
    CSV = "csv"
    NL = "nl"


HELP = {Format.TABLE: "a table for people (the default)", Format.JSON: "a JSON array of objects",
        Format.CSV: "CSV with a header row", Format.NL: "newline-delimited JSON, one object a line"}
#: the format the running report command was asked for (set by `tabular`)
CHOSEN: ContextVar[Format] = ContextVar("rin_output_format", default=Format.TABLE)
#: columns that label rather than count: printed as they are, never with separators
LABELS = {
    "party", "partner", "counterparty", "counterpart", "d_code", "vintage", "k", "year",
    "quarter", "rin", "id", "batch", "facility", "company", "line", "reason", "match",
    "client_id", "code", "seed",
}


def tabular(command: Callable[..., Any]) -> Callable[..., Any]:
    """A report command with the shared output options (see the module docstring)."""
    return tabular_of(command, tuple(Format))


def without_table_flag(command: Callable[..., Any]) -> Callable[..., Any]:
    """`tabular` for a report whose own `--table` option names one of its tables (`rin market
    --table available`): the table is still its default format, `--table` is not a flag."""
    return tabular_of(command, tuple(kind for kind in Format if kind is not Format.TABLE))


def tabular_of(command: Callable[..., Any], formats: tuple[Format, ...]) -> Callable[..., Any]:
    """A report command with the output options of `formats`."""
    added = {f"output_{kind}": option(f"output_{kind}", Annotated[bool, typer.Option(
        f"--{kind}", help=HELP[kind], rich_help_panel="Output")], False) for kind in formats}

    @contextmanager
    def around(ctx: typer.Context, given: dict[str, Any], own: dict[str, Any]) -> Iterator[None]:
        token = CHOSEN.set(one_format([kind for kind in formats if given[f"output_{kind}"]]))
        try:
            yield
        finally:
            CHOSEN.reset(token)

    return with_options(command, added, around)


def chosen_format() -> Format:
    """The format the running report was asked for (`--table` unless `tabular` set another)."""
    return CHOSEN.get()


def one_format(asked: list[Format]) -> Format:
    """The one format asked for (the table if none); two or more exit 2 naming them."""
    if len(asked) > 1:
        raise typer.BadParameter(
            f"{' and '.join(f'--{kind}' for kind in asked)}: choose one output format",
            param_hint="output")
    return asked[0] if asked else Format.TABLE


def emit(rows: Sequence[Any], columns: Sequence[str], as_json: bool = False,
         as_csv: bool = False, title: str = "") -> None:
    """Print report rows (dicts, or typed rows with `model_dump` or dataclasses) in the chosen
    format; `as_json`/`as_csv` are for a command with flags of its own instead of `tabular`."""
    chosen = one_format([kind for kind, on in ((Format.JSON, as_json), (Format.CSV, as_csv))
                         if on]) if as_json or as_csv else chosen_format()
    plain = [mapping(row) for row in rows]
    if chosen is Format.JSON:
        write_out(orjson.dumps(plain, default=str) + b"\n")
    elif chosen is Format.NL:
        write_out(b"".join(orjson.dumps(row, default=str) + b"\n" for row in plain))
    elif chosen is Format.CSV:
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(columns)
        writer.writerows([csv_cell(row.get(column)) for column in columns] for row in plain)
        write_out(buffer.getvalue())
    else:
        print_table(plain, columns, title)


def mapping(row: Any) -> dict[str, Any]:
    """A report row as a dict: a mapping, a pydantic model or a dataclass."""
    if isinstance(row, Mapping):
        return dict(row)
    if hasattr(row, "model_dump"):
        return dict(row.model_dump())
    return dataclasses.asdict(row)


def print_table(rows: list[dict[str, Any]], columns: Sequence[str], title: str) -> None:
    """A table as wide as the terminal; written to a file or pipe, as wide as its widest row
    (never wrapped to a width nobody has)."""
    # drawn in ASCII for a stdout that is not UTF (a non-UTF-8 locale), as rich does on such a
    # terminal, rather than failing at the first line of its box
    utf = codecs.lookup(stdout_encoding()).name.startswith("utf")
    table = Table(title=title or None, box=HEAVY_HEAD if utf else ASCII)
    for column in columns:
        numeric = any(is_quantity(row.get(column), column) for row in rows)
        table.add_column(column, justify="right" if numeric else "left")
    for row in rows:
        table.add_row(*(fmt(row.get(column), column) for column in columns))
    if sys.stdout.isatty():  # not rich's `is_terminal`: FORCE_COLOR=1 makes a file one
        Console().print(table)
        return
    measured = Console(file=io.StringIO(), width=100_000).measure(table).maximum
    rendered = io.StringIO()
    Console(file=rendered, width=max(measured, 20), color_system=None).print(table)
    write_out(rendered.getvalue())


def is_quantity(value: Any, column: str) -> bool:
    """A count or amount (not a label such as a year, D code, K or id)."""
    return (isinstance(value, int | Decimal | float) and not isinstance(value, bool)
            and column not in LABELS and not column.endswith(("_id", "_year")))


def fmt(value: Any, column: str) -> str:
    """A table cell: quantities with thousands separators; labels (years, D codes, K, ids)
    as they are; booleans `true`/`false`."""
    if is_quantity(value, column):
        return f"{value.normalize():,f}" if isinstance(value, Decimal) else f"{value:,}"
    return csv_cell(value)


def csv_cell(value: Any) -> str:
    """A CSV cell, exact: Decimals as their text, booleans `true`/`false` (as in JSON), dates
    ISO, lists and objects as JSON, nothing for None."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, date | Decimal | int | str):
        return str(value)
    return orjson.dumps(value, default=str).decode()


def report(result: Result, as_json: bool) -> None:
    """One command's result: every result as a JSON object, or a rejected line's error."""
    if as_json:
        write_out(orjson.dumps(result.to_dict()) + b"\n")
    elif result.status == "rejected":
        write_out(f"line {result.line}: {result.error}\n")


class Counted(ProgressColumn):
    """What is done, exactly, of how many: "12 of 16 lines" (or "12 lines" with no total)."""

    def __init__(self, unit: str) -> None:
        super().__init__()
        self.unit = unit

    def render(self, task: Task) -> Text:
        done = f"{int(task.completed):,}"
        of = "" if task.total is None else f" of {int(task.total):,}"
        return Text(f"{done}{of} {self.unit}")


def progress_bar(label: str, quiet: bool, unit: str, transient: bool = False) -> Progress:
    """A progress bar on stderr counting `unit`s, with a `rate` field; shown only on a
    terminal and never with `--quiet` (a log file gets no bar)."""
    columns = (TextColumn(label), BarColumn(), TaskProgressColumn(), Counted(unit),
               TextColumn("{task.fields[rate]}"), TimeRemainingColumn())
    return Progress(*columns, console=err, transient=transient,
                    disable=quiet or not sys.stderr.isatty())
