"""The `rin` command line: a thin layer over `ledger.Ledger` and `projections`."""

from __future__ import annotations

import csv
import io
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import orjson
import typer
from rich.console import Console
from rich.table import Table

from ledger.ledger import Ledger, Result

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__)
err = Console(stderr=True)

DataOpt = Annotated[
    Path | None, typer.Option("--data", envvar="RIN_DATA", help="data folder (default ./rin-data)")
]
StoreOpt = Annotated[
    str | None, typer.Option("--store", envvar="RIN_STORE", help="postgresql://… event store")
]
STATE: dict[str, Any] = {}


@app.callback()
def main_options(data: DataOpt = None, store: StoreOpt = None) -> None:
    """rin-ledger: an event-sourced ledger of RINs under 40 CFR 80 Subpart M."""
    STATE["data"] = data or Path("./rin-data")
    STATE["store"] = store


def open_ledger() -> Ledger:
    return Ledger(STATE["data"], store=STATE["store"])


class UnreadableInput(Exception):
    """A file that cannot be opened or decoded: exit code 2."""


def open_inputs(files: list[str]) -> list[Any]:
    """Open every input before applying any line, so an unreadable file changes nothing."""
    streams = []
    for name in files:
        try:
            streams.append(sys.stdin.buffer if name == "-" else Path(name).open("rb"))  # noqa: SIM115
        except OSError as exc:
            for stream in streams:
                stream.close()
            raise UnreadableInput(f"{name}: {exc.strerror}") from exc
    return streams


def read_lines(streams: list[Any]) -> Iterator[tuple[int, bytes]]:
    """(line number, bytes) of every non-blank line, numbered across the inputs in order."""
    number = 0
    for stream in streams:
        with stream:
            for raw in stream:
                number += 1
                if raw.strip():
                    yield number, raw


def apply_lines(ledger: Ledger, files: list[str], quiet: bool, as_json: bool) -> int:
    """Apply the files' lines; print rejections (or every result as JSON); return the exit code."""
    try:
        streams = open_inputs(files)
    except UnreadableInput as exc:
        err.print(f"unreadable input: {exc}")
        return 2
    counts = {"applied": 0, "duplicate": 0, "rejected": 0}
    numbered: list[int] = []

    def commands() -> Iterator[bytes]:
        for number, raw in read_lines(streams):
            numbered.append(number)
            yield raw

    for index, result in enumerate(ledger.apply_many(commands())):
        result.line = numbered[index]
        counts[result.status] += 1
        report(result, as_json)
    if not quiet:
        err.print(
            f"{counts['applied']:,} applied, {counts['duplicate']:,} duplicate, "
            f"{counts['rejected']:,} rejected"
        )
    return 1 if counts["rejected"] else 0


def report(result: Result, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(orjson.dumps(result.to_dict()).decode() + "\n")
    elif result.status == "rejected":
        sys.stdout.write(f"line {result.line}: {result.error}\n")


@app.command()
def apply(
    files: Annotated[list[str], typer.Argument(help="JSON Lines files, or - for stdin")],
    as_json: Annotated[bool, typer.Option("--json", help="one result object per line")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q")] = False,
) -> None:
    """Apply transaction-file lines in order, each atomic; exit 0, 1 (some rejected) or 2."""
    with open_ledger() as ledger:
        code = apply_lines(ledger, files, quiet, as_json)
    raise typer.Exit(code)


def emit(rows: list[dict[str, Any]], columns: list[str], as_json: bool, as_csv: bool,
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
            table.add_row(*(fmt(row.get(column)) for column in columns))
        Console().print(table)


NUMERIC = {
    "gallon_rins", "assigned_rins", "volume", "limit", "excess", "rvo", "deficit_carried_in",
    "current_year_rins", "prior_year_rins", "prior_year_applied", "applied", "deficit",
}


def fmt(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return "" if value is None else str(value)


JsonOpt = Annotated[bool, typer.Option("--json", help="a JSON array of objects")]
CsvOpt = Annotated[bool, typer.Option("--csv", help="CSV with a header row")]


@app.command()
def demo(
    quiet: Annotated[bool, typer.Option("--quiet", "-q")] = False,
) -> None:
    """Simulate a small complete market on the embedded store, then show the reports."""
    from ledger.demo import run_demo

    with open_ledger() as ledger:
        code = run_demo(ledger, quiet=quiet, console=Console())
    raise typer.Exit(code)


import ledger.cli_reports  # noqa: F401,E402


def main() -> None:
    app()
