"""The `rin` report commands over the read models (`projections`): holdings, quarterly,
compliance, trace, invalid, ptd, trades and project (verify is in ledger/cli/trust.py), each
printing the columns its read model declares. Each report brings the views up to date first."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Annotated, Any

import typer

from ledger.cli import arguments
from ledger.cli.options import err, open_ledger, options
from ledger.cli.output import emit, progress_bar
from projections import (
    VIEWS_FILE,
    Views,
    compliance,
    holdings,
    invalid,
    lineage,
    quarterly,
    trades,
    transfer_documents,
)

app = typer.Typer()
JsonOpt = Annotated[bool, typer.Option("--json", help="a JSON array of objects")]
CsvOpt = Annotated[bool, typer.Option("--csv", help="CSV with a header row")]
PartyOpt = Annotated[str | None, typer.Option("--party", help="4-digit company id")]
YearOpt = Annotated[int, typer.Option("--year", help="calendar or compliance year",
                                      **arguments.YEARS)]


@contextmanager
def open_views(ctx: typer.Context) -> Iterator[Views]:
    """The read models in the data folder, over the chosen ledger."""
    chosen = options(ctx)
    with open_ledger(chosen) as ledger:
        yield Views(ledger, chosen.data / VIEWS_FILE)


def show(ctx: typer.Context, rows_of: Callable[[Views], list[dict[str, Any]]],
         columns: Sequence[str], as_json: bool, as_csv: bool, title: str) -> None:
    """One report: the views brought up to date, its rows taken, printed in its columns."""
    with open_views(ctx) as views:
        rows = rows_of(views)
    emit(rows, columns, as_json, as_csv, title)


@app.command("holdings")
def holdings_report(
    ctx: typer.Context,
    party: PartyOpt = None,
    as_of: Annotated[str | None, typer.Option("--as-of", help="effective date YYYY-MM-DD")] = None,
    known_at: Annotated[
        str | None, typer.Option("--known-at", help="notification id or ISO timestamp")
    ] = None,
    blocks: Annotated[bool, typer.Option("--blocks", help="one row per held block")] = False,
    as_json: JsonOpt = False,
    as_csv: CsvOpt = False,
) -> None:
    """Gallon-RINs held per party, D code, vintage and K on a date, as known at a point."""
    party, on = arguments.party(party), arguments.iso_date(as_of, "--as-of")
    position = arguments.known_at(known_at)
    show(ctx, lambda views: views.holdings(party, on, position, blocks),
         holdings.BLOCK_COLUMNS if blocks else holdings.COLUMNS, as_json, as_csv, "Holdings")


@app.command("quarterly")
def quarterly_report(ctx: typer.Context, year: YearOpt, party: PartyOpt = None,
                     as_json: JsonOpt = False, as_csv: CsvOpt = False) -> None:
    """Quarter-end check §80.1428(a)(5): assigned gallon-RINs ≤ 2.5 × fuel owned."""
    party = arguments.party(party)
    show(ctx, lambda views: views.quarterly(year, party), quarterly.COLUMNS, as_json, as_csv,
         f"Quarter-end checks {year}")


@app.command("compliance")
def compliance_report(ctx: typer.Context, year: YearOpt, party: PartyOpt = None,
                      as_json: JsonOpt = False, as_csv: CsvOpt = False) -> None:
    """Compliance positions §80.1427 per party and RVO, with deficits carried."""
    party = arguments.party(party)
    show(ctx, lambda views: views.compliance(year, party), compliance.COLUMNS, as_json, as_csv,
         f"Compliance {year}")


@app.command()
def trace(ctx: typer.Context,
          code: Annotated[str, typer.Argument(help="38-character batch-RIN code")],
          as_json: JsonOpt = False, as_csv: CsvOpt = False) -> None:
    """Every event that touched any gallon-RIN of the block, oldest first."""
    code = arguments.rin_code(code, "CODE")
    show(ctx, lambda views: views.trace(code), lineage.COLUMNS, as_json, as_csv, f"Trace {code}")


@app.command("invalid")
def invalid_report(
    ctx: typer.Context,
    batch: Annotated[str | None, typer.Option(
        "--batch", help="batch identity YYYYCCCCFFFFFBBBBB, or a 38-character code of it")] = None,
    as_json: JsonOpt = False,
    as_csv: CsvOpt = False,
) -> None:
    """Invalid RINs §80.1431: who holds them, who retired them, what each must replace."""
    batch = arguments.batch_identity(batch)
    show(ctx, lambda views: views.invalid(batch), invalid.COLUMNS, as_json, as_csv, "Invalid RINs")


@app.command()
def ptd(
    ctx: typer.Context,
    party: PartyOpt = None,
    missing: Annotated[bool, typer.Option(
        "--missing", help="only transfers recorded without a PTD reference")] = False,
    as_json: JsonOpt = False,
    as_csv: CsvOpt = False,
) -> None:
    """Transfers and their PTDs §80.1428(a)(6), §80.1453(a): `--missing` lists those without."""
    show(ctx, lambda views: views.ptd(party, missing), transfer_documents.COLUMNS, as_json, as_csv,
         "Transfers without a PTD" if missing else "PTDs")


@app.command("trades")
def trades_report(
    ctx: typer.Context,
    party: Annotated[str | None, typer.Option(
        "--party", help="4-digit company id, as poster or partner")] = None,
    status: Annotated[str | None, typer.Option(
        "--status", help=f"one of {', '.join(trades.STATUSES)}")] = None,
    as_json: JsonOpt = False,
    as_csv: CsvOpt = False,
) -> None:
    """EMTS postings §80.1452(c): every sell and buy and its status."""
    party = arguments.party(party)
    if status is not None and status not in trades.STATUSES:
        raise typer.BadParameter(
            f"a status is one of {', '.join(trades.STATUSES)}, got {status[:40]!r}",
            param_hint="--status")
    with open_views(ctx) as views:
        rows = views.trades(party, status)
    emit(rows, trades.COLUMNS, as_json, as_csv, "Trades")


@app.command()
def project(
    ctx: typer.Context,
    rebuild: Annotated[bool, typer.Option("--rebuild", help="empty the views, start at 0")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q")] = False,
    batch_size: Annotated[int, typer.Option("--batch-size", min=1, help="events per transaction")]
    = 1000,
) -> None:
    """Bring the read models up to date from the notification log, with a progress bar."""
    with open_views(ctx) as views, progress_bar("projecting", quiet) as bar:
        task = bar.add_task("project", total=None, rate="")
        start, started = 0 if rebuild else views.position(), time.monotonic()

        def progress(done: int, total: int) -> None:
            seconds = max(time.monotonic() - started, 1e-6)
            rate = f"{(done - start) / seconds:,.0f} events/s"
            bar.update(task, completed=done, total=total, rate=rate)

        run = views.rebuild if rebuild else views.project
        position = run(batch_size=batch_size, progress=progress)
    if not quiet:
        err.print(f"views at notification {position:,}")
