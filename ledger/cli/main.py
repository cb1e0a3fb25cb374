"""The `rin` command line: a thin layer over `ledger.Ledger` and `projections`."""

from __future__ import annotations

import csv
import io
import shutil
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any

import orjson
import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeRemainingColumn
from rich.table import Table

from ledger.application.json_lines import RefusedLine, file_lines
from ledger.application.ledger import Ledger, Result
from ledger.cli.arguments import data_folder, store_url
from ledger.cli.failures import (
    STORE_ERRORS,
    STORE_FAILED,
    print_failure,
    store_failure,
    store_failures_exit,
)
from ledger.infrastructure.signing import StoreRefused

app = typer.Typer(
    add_completion=False, no_args_is_help=True, help=__doc__, pretty_exceptions_enable=False
)
err = Console(stderr=True)

DataOpt = Annotated[
    Path | None, typer.Option("--data", envvar="RIN_DATA", help="data folder (default ./rin-data)")
]
StoreOpt = Annotated[
    str | None, typer.Option("--store", envvar="RIN_STORE", help="postgresql://… event store")
]
KeyOpt = Annotated[
    Path | None, typer.Option("--key", envvar="RIN_KEY", help="Ed25519 private key (rin keygen)"
                              " that signs each transaction's head")
]
STATE: dict[str, Any] = {}


@app.callback()
def main_options(data: DataOpt = None, store: StoreOpt = None, key: KeyOpt = None) -> None:
    """rin-ledger: an event-sourced ledger of RINs under 40 CFR 80 Subpart M."""
    STATE["data"] = data_folder(data or Path("./rin-data"))
    STATE["store"] = store_url(store)
    STATE["key"] = key


@contextmanager
def open_ledger(note: str = "") -> Iterator[Ledger]:
    """The ledger on the configured store (signing with the configured key); a store failure
    inside exits 3 saying what failed (and `note`)."""
    with store_failures_exit(err, note), Ledger(
        STATE["data"], store=STATE["store"], key=STATE.get("key")
    ) as ledger:
        yield ledger


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


def read_lines(streams: list[Any]) -> Iterator[tuple[int, bytes | RefusedLine]]:
    """(line number, bytes) of every non-blank line, numbered across the inputs in order; a line
    over the size limit comes as a `RefusedLine`, never read whole."""
    number = 0
    for stream in streams:
        with stream:
            for raw in file_lines(stream):
                number += 1
                if isinstance(raw, RefusedLine) or raw.strip():
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
    size = sum(input_size(name) for name in files)

    with progress_bar("applying", quiet) as bar:
        task = bar.add_task("apply", total=size or None, rate="")
        started = time.monotonic()

        def commands() -> Iterator[bytes | RefusedLine]:
            for number, raw in read_lines(streams):
                numbered.append(number)
                bar.advance(task, len(raw) if isinstance(raw, bytes) else 0)
                yield raw

        last: int | None = None  # the last line whose result is committed and reported
        try:
            for index, result in enumerate(ledger.apply_many(commands())):
                result.line = last = numbered[index]
                counts[result.status] += 1
                report(result, as_json)
                if index % 1000 == 0:
                    rate = (index + 1) / max(time.monotonic() - started, 1e-6)
                    bar.update(task, rate=f"{index + 1:,} lines, {rate:,.0f} lines/s")
        except STORE_ERRORS as error:
            done = f"line {last}" if last is not None else "none"
            print_failure(err, f"{store_failure(error)}; last line committed: {done}")
            return STORE_FAILED
    if not quiet:
        err.print(
            f"{counts['applied']:,} applied, {counts['duplicate']:,} duplicate, "
            f"{counts['rejected']:,} rejected"
        )
    return 1 if counts["rejected"] else 0


def input_size(name: str) -> int:
    """Bytes in a named file (0 for stdin: its progress has no total)."""
    return 0 if name == "-" else Path(name).stat().st_size


def progress_bar(label: str, quiet: bool) -> Progress:
    """A progress bar on stderr with a rate column (`rate` field); `--quiet` silences it."""
    columns = (TextColumn(label), BarColumn(), TaskProgressColumn(),
               TextColumn("{task.fields[rate]}"), TimeRemainingColumn())
    return Progress(*columns, console=err, disable=quiet)


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
    """Apply transaction-file lines in order, each atomic; exit 0, 1 (some rejected), 2
    (unreadable input) or 3 (the store failed)."""
    with open_ledger(note="; last line committed: none") as ledger:
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
            table.add_row(*(fmt(row.get(column), column) for column in columns))
        Console(width=max(shutil.get_terminal_size().columns, 160)).print(table)


NUMERIC = {
    "gallon_rins", "assigned_rins", "volume", "limit", "excess", "rvo", "deficit_carried_in",
    "current_year_rins", "prior_year_rins", "prior_year_applied", "applied", "deficit",
}


def fmt(value: Any, column: str) -> str:
    """Quantities with thousands separators; labels (years, D codes, K, ids) as they are."""
    if column in NUMERIC and isinstance(value, Decimal):
        return f"{value.normalize():,f}"
    if column in NUMERIC and isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return "" if value is None else str(value)


JsonOpt = Annotated[bool, typer.Option("--json", help="a JSON array of objects")]
CsvOpt = Annotated[bool, typer.Option("--csv", help="CSV with a header row")]


@app.command()
def demo(
    quiet: Annotated[bool, typer.Option("--quiet", "-q")] = False,
    size: Annotated[int | None, typer.Option(
        "--size", min=1, help="apply a simulated market of this many lines (scripts/simulate.py)"
    )] = None,
    seed: Annotated[int, typer.Option("--seed", help="the simulated market's seed")] = 1,
) -> None:
    """Simulate a small complete market on the embedded store, then show the reports."""
    if size is not None:
        with open_ledger() as ledger:
            results = ledger.apply_many(load_simulator().generate_market(size, seed))
            rejected = sum(result.status == "rejected" for result in results)
        if not quiet:
            err.print(f"{size:,} simulated lines applied, {rejected:,} rejected")
        raise typer.Exit(1 if rejected else 0)
    from ledger.application.demo import run_demo

    with open_ledger() as ledger:
        counts, refused = run_demo(ledger)
        for result in refused:
            report(result, as_json=False)
        err.print(
            f"demo market: {counts['applied']:,} lines applied, {counts['duplicate']:,} already "
            f"applied, {counts['rejected']:,} rejected"
        )
        if not quiet:
            show_demo_reports(ledger)
    raise typer.Exit(1 if refused else 0)


def show_demo_reports(ledger: Ledger) -> None:
    """The reports a regulator would look at first, over the demo's read models."""
    from projections import Views
    from projections.compliance import COLUMNS as COMPLIANCE_COLUMNS

    views = Views(ledger, STATE["data"] / "views.sqlite")
    holdings = ["party", "d_code", "vintage", "k", "gallon_rins"]
    emit(views.holdings(as_of=date(2024, 6, 30)), holdings, False, False,
         "Holdings as of 2024-06-30")
    emit(views.holdings(), holdings, False, False, "Holdings now")
    quarterly = ["party", "date", "assigned_rins", "volume", "limit", "excess", "ok"]
    emit([row for row in views.quarterly(2024) if row["assigned_rins"] or row["volume"]],
         quarterly, False, False, "Quarter-end 2.5 check, 2024 (§80.1428(a)(5))")
    emit(views.compliance(2024), COMPLIANCE_COLUMNS, False, False,
         "Compliance positions, 2024 (§80.1427)")
    problems = views.verify()
    err.print("verify: all invariants hold" if not problems else "\n".join(problems))


def load_simulator() -> Any:
    """The market simulator, `scripts/simulate.py` of the source tree this package runs from."""
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "scripts" / "simulate.py"
    spec = importlib.util.spec_from_file_location("rin_simulate", path)
    if spec is None or spec.loader is None or not path.exists():
        raise typer.BadParameter(f"--size needs the simulator at {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


import ledger.cli.reports  # noqa: E402
import ledger.cli.trust  # noqa: F401,E402


def main() -> None:
    try:
        app()
    except StoreRefused as exc:  # a key that cannot be used, a signed or truncated store
        err.print(str(exc))
        sys.exit(exc.exit_code)
