"""The `rin` report commands over the read models (`projections`): holdings, quarterly,
compliance, trace, invalid, ptd, trades and project (verify is in ledger/cli/trust.py), each
printing the columns its read model declares in the format asked for (`tabular`). Each report
brings the views up to date first (a progress bar on a terminal), and one that finds nothing
for a party, year or batch the ledger never recorded exits 2 saying so (`show`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Annotated, Any

import typer

from ledger.application.api_errors import LibraryError
from ledger.cli import arguments
from ledger.cli.catch_up import catch_up
from ledger.cli.failures import STORE_FAILED, print_failure
from ledger.cli.options import BAD_ARGUMENT, err, open_ledger, options
from ledger.cli.output import emit, tabular
from projections import (
    Views,
    compliance,
    holdings,
    invalid,
    known,
    lineage,
    quarterly,
    trades,
    transfer_documents,
)

app = typer.Typer()
#: a report command's own --json/--csv, for one not (yet) using `tabular`
JsonOpt = Annotated[bool, typer.Option("--json", help="a JSON array of objects")]
CsvOpt = Annotated[bool, typer.Option("--csv", help="CSV with a header row")]
PartyOpt = Annotated[str | None, typer.Option("--party", help="4-digit company id")]
YearOpt = Annotated[int, typer.Option("--year", help="calendar or compliance year",
                                      **arguments.YEARS)]


#: what a report raises on a value of a kind the ledger never writes there (a REAL where it
#: writes integers, text where numbers): tampering, named without a traceback
UNREADABLE = (ValueError, TypeError, ArithmeticError, LookupError)


@contextmanager
def open_views(ctx: typer.Context) -> Iterator[Views]:
    """The read models in the data folder, over the chosen ledger (which must exist), brought
    up to date."""
    chosen = options(ctx)
    with open_ledger(chosen) as ledger:
        views = Views(ledger, chosen.views_location())
        catch_up(views, chosen.quiet)
        try:
            yield views
        except LibraryError:  # a refusal of the report's arguments, said by its command
            raise
        except UNREADABLE as error:  # a value a report cannot take: the file was edited
            print_failure(err, f"a report could not be read from the views file {views.path} "
                               f"({type(error).__name__}: {' '.join(str(error).split())[:200]})"
                               ": it holds a value the ledger never writes; rin verify names "
                               "it, rin project --rebuild makes the views anew")
            raise typer.Exit(STORE_FAILED) from None


def show(ctx: typer.Context, rows_of: Callable[[Views], Sequence[Any]],
         columns: Sequence[str], title: str, **named: Any) -> None:
    """One report: the views brought up to date, its rows taken, printed in its columns. With
    no rows, a `party`, `year` or `batch` in `named` that the ledger never recorded exits 2
    naming it, as would a `d_code` never generated (a known one with nothing to show is an
    empty report, exit 0)."""
    with open_views(ctx) as views:
        rows = rows_of(views)
        unknown = [] if rows else known.unknown(views.path, **named)
    if unknown:
        for problem in unknown:
            print_failure(err, problem)
        raise typer.Exit(BAD_ARGUMENT)
    emit(rows, columns, title=title)


@app.command("holdings")
@tabular
def holdings_report(
    ctx: typer.Context,
    party: PartyOpt = None,
    as_of: Annotated[str | None, typer.Option("--as-of", help="effective date YYYY-MM-DD")] = None,
    known_at: Annotated[
        str | None, typer.Option("--known-at", help="notification id or ISO timestamp")
    ] = None,
    blocks: Annotated[bool, typer.Option("--blocks", help="one row per held block")] = False,
) -> None:
    """Gallon-RINs held per party, D code, vintage and K on a date, as known at a point."""
    party, on = arguments.party(party), arguments.iso_date(as_of, "--as-of")
    position = arguments.known_at(known_at)
    show(ctx, lambda views: views.holdings(party, on, position, blocks),
         holdings.BLOCK_COLUMNS if blocks else holdings.COLUMNS, "Holdings", party=party)


@app.command("quarterly")
@tabular
def quarterly_report(ctx: typer.Context, year: YearOpt, party: PartyOpt = None) -> None:
    """Quarter-end check §80.1428(a)(5): assigned gallon-RINs ≤ 2.5 × fuel owned."""
    party = arguments.party(party)
    show(ctx, lambda views: views.quarterly(year, party), quarterly.COLUMNS,
         f"Quarter-end checks {year}", party=party, year=year)


@app.command("compliance")
@tabular
def compliance_report(ctx: typer.Context, year: YearOpt, party: PartyOpt = None) -> None:
    """Compliance positions §80.1427 per party and RVO, with deficits carried."""
    party = arguments.party(party)
    show(ctx, lambda views: views.compliance(year, party), compliance.COLUMNS,
         f"Compliance {year}", party=party, year=year)


@app.command()
@tabular
def trace(ctx: typer.Context,
          code: Annotated[str, typer.Argument(help="38-character batch-RIN code")]) -> None:
    """Every event that touched any gallon-RIN of the block, oldest first."""
    code = arguments.rin_code(code, "CODE")
    with open_views(ctx) as views:
        rows = views.trace(code)
    if not rows:  # the code is well-formed (checked above) but names no RIN ever generated
        print_failure(err, f"CODE {code}: no gallon-RIN of it was generated in this ledger")
        raise typer.Exit(BAD_ARGUMENT)
    emit(rows, lineage.COLUMNS, title=f"Trace {code}")


@app.command("invalid")
@tabular
def invalid_report(
    ctx: typer.Context,
    batch: Annotated[str | None, typer.Option(
        "--batch", help="batch identity YYYYCCCCFFFFFBBBBB, or a 38-character code of it")] = None,
) -> None:
    """Invalid RINs §80.1431: who holds them, who retired them, what each must replace."""
    batch = arguments.batch_identity(batch)
    show(ctx, lambda views: views.invalid(batch), invalid.COLUMNS, "Invalid RINs", batch=batch)


@app.command()
@tabular
def ptd(
    ctx: typer.Context,
    party: PartyOpt = None,
    missing: Annotated[bool, typer.Option(
        "--missing", help="only transfers recorded without a PTD reference")] = False,
) -> None:
    """Transfers and their PTDs §80.1428(a)(6), §80.1453(a): `--missing` lists those without."""
    party = arguments.party(party)
    show(ctx, lambda views: views.ptd(party, missing), transfer_documents.COLUMNS,
         "Transfers without a PTD" if missing else "PTDs", party=party)


@app.command("trades")
@tabular
def trades_report(
    ctx: typer.Context,
    party: Annotated[str | None, typer.Option(
        "--party", help="4-digit company id, as poster or partner")] = None,
    status: Annotated[str | None, typer.Option(
        "--status", help=f"one of {', '.join(trades.STATUSES)}")] = None,
) -> None:
    """EMTS postings §80.1452(c): every sell and buy and its status."""
    party = arguments.party(party)
    if status is not None and status not in trades.STATUSES:
        raise typer.BadParameter(
            f"a status is one of {', '.join(trades.STATUSES)}, got {status[:40]!r}",
            param_hint="--status")
    show(ctx, lambda views: views.trades(party, status), trades.COLUMNS, "Trades", party=party)


@app.command()
def project(
    ctx: typer.Context,
    rebuild: Annotated[bool, typer.Option("--rebuild", help="empty the views, start at 0")] = False,
    batch_size: Annotated[int, typer.Option("--batch-size", min=1, help="events per transaction")]
    = 1000,
) -> None:
    """Bring the read models up to date from the notification log, with a progress bar."""
    chosen = options(ctx)
    with open_ledger(chosen) as ledger:
        views = Views(ledger, chosen.views_location())
        position = catch_up(views, chosen.quiet, rebuild, batch_size, transient=False)
    if not chosen.quiet:
        err.print(f"views at notification {position:,}")
