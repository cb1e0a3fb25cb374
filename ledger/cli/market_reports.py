"""The `rin` reports of §80.1452 and EPA's public data: `late` (submission deadlines), `market`
(EPA's RIN tables) and `export --format emts-xml` (a party's EMTS 3.0 submissions). Each brings
the views up to date, takes `--known-at`, and carries the chain head it was computed at
(ledger/cli/report_head.py): on each row of `late` and `market` (printed in the format asked
for, `tabular`), in the XML comment and on standard error for `export`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import orjson
import typer

from ledger.cli import arguments
from ledger.cli.options import err, options
from ledger.cli.output import tabular, without_table_flag
from ledger.cli.report_head import certified, certified_head, title_of
from ledger.cli.reports import YearOpt
from ledger.cli.stdout import write_out
from ledger.infrastructure.sqlite_files import is_database
from projections import emts_xml, late, market_tables

app = typer.Typer()
KnownAtOpt = Annotated[str | None, typer.Option(
    "--known-at", help="notification id or ISO timestamp: the report as the ledger stood then")]
FORMATS = ("emts-xml",)


@app.command("late")
@tabular
def late_report(
    ctx: typer.Context, year: YearOpt,
    only_late: Annotated[bool, typer.Option("--late-only", help="only the late ones")] = False,
    known_at: KnownAtOpt = None,
) -> None:
    """§80.1452(b)-(c) deadlines: each submission dated in the year against when it was recorded
    (5 business days, 10 for a buy; a transfer is a sell and a buy)."""
    certified(ctx, arguments.known_at(known_at),
              lambda views, at: views.late(year, at, only_late), late.COLUMNS,
              f"Submissions dated {year} (§80.1452)", year=year)


@app.command("market")
@without_table_flag
def market_report(
    ctx: typer.Context,
    table: Annotated[str, typer.Option(
        "--table", help=f"one of {', '.join(market_tables.TABLE_NAMES)}")],
    known_at: KnownAtOpt = None,
) -> None:
    """EPA's public RIN tables: available (generated − retired − locked by vintage, D code and
    assignment), separations and retirements by reason code, generation by fuel and source."""
    if table not in market_tables.TABLE_NAMES:
        raise typer.BadParameter(
            f"a table is one of {', '.join(market_tables.TABLE_NAMES)}, got {table[:40]!r}",
            param_hint="--table")
    certified(ctx, arguments.known_at(known_at),
              lambda views, at: views.market_table(table, at), market_tables.columns(table),
              f"RIN market: {table}")


@app.command("export")
def export(
    ctx: typer.Context,
    party: Annotated[str, typer.Option("--party", help="4-digit company id")],
    start: Annotated[str, typer.Option("--from", help="first effective date YYYY-MM-DD")],
    end: Annotated[str, typer.Option("--to", help="last effective date YYYY-MM-DD")],
    form: Annotated[str, typer.Option("--format", help="emts-xml")] = "emts-xml",
    output: Annotated[Path | None, typer.Option(
        "--output", help="write the XML here, not to standard output")] = None,
    known_at: KnownAtOpt = None,
) -> None:
    """A party's submissions dated --from … --to as an EMTS 3.0 XML document (reference.md §8):
    generations, separations, retirements, and completed sells and buys."""
    company = arguments.party(party)
    first, last = arguments.iso_date(start, "--from"), arguments.iso_date(end, "--to")
    if form not in FORMATS:
        raise typer.BadParameter(f"a format is one of {', '.join(FORMATS)}, got {form[:40]!r}",
                                 param_hint="--format")
    assert company is not None and first is not None and last is not None  # options required
    if last < first:
        raise typer.BadParameter(f"--to {last} is before --from {first}", param_hint="--to")
    (rows, created), head = certified_head(
        ctx, arguments.known_at(known_at),
        lambda views, at: (views.emts_submissions(company, first, last, at),
                           views.recorded_on(at) or last), party=company)
    comment = (f"rin-ledger submissions of {company} dated {first} to {last}; head "
               f"{orjson.dumps(head).decode()}")
    document = emts_xml.document(company, created, rows, comment)
    if output is None:
        write_out(document)
    else:
        if is_database(output):  # a link planted at the name, or a slip of the finger
            raise typer.BadParameter(f"{output}: a SQLite database (the event store?); the "
                                     "report is never written over one", param_hint="--output")
        output.write_bytes(document)
        if not options(ctx).quiet:
            err.print(title_of(f"{output}: {len(rows):,} blocks", head))
