"""The `rin` commands of the regulator's reports: activity, transactions, generation (§80.1451
(b)-(c)), annual (§80.1451(a)(1)) and attest (§80.1464), each as known at any point
(`--known-at`), in the output format asked for (`tabular`), and each carrying the chain head it
was computed at (ledger/cli/report_head.py), which `rin verify --against` takes
(docs/reports.md)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from ledger.cli import arguments
from ledger.cli.output import tabular
from ledger.cli.report_head import as_they_are, certified
from ledger.cli.reports import YearOpt
from projections import activity, annual, attest, generation_report, rin_transactions

app = typer.Typer()
PartyOpt = Annotated[str, typer.Option("--party", help="4-digit company id")]
QuarterOpt = Annotated[int | None, typer.Option(
    "--quarter", min=1, max=4, help="calendar quarter 1-4 (default: every quarter)")]
KnownOpt = Annotated[str | None, typer.Option(
    "--known-at", help="notification id or ISO timestamp: the report as the ledger stood then")]


def by_amount(rows: list[dict[str, Any]], columns: list[str]
              ) -> tuple[list[dict[str, Any]], list[str]]:
    """The activity report for a table: one line per amount, one column per quarter and row
    (21 columns across do not fit a terminal)."""
    heads = [f"Q{row['quarter']} {row['assignment']}" for row in rows]
    lines = [{"amount": column, **{head: f"{row[column]:,}" for head, row in zip(
        heads, rows, strict=True)}} for column in activity.AMOUNTS]
    return lines, ["amount", *heads]


def quarterly_report(name: str, columns: list[str], title: str, summary: str) -> None:
    """Register `rin <name> --party P --year Y [--quarter Q]`: the `Views` method `name` (a
    report of a period: the year, or one quarter of it)."""

    def command(ctx: typer.Context, party: PartyOpt, year: YearOpt, quarter: QuarterOpt = None,
                known_at: KnownOpt = None) -> None:
        arguments.party(party)
        certified(ctx, arguments.known_at(known_at),
                  lambda views, at: getattr(views, name)(party, year, quarter, at), columns,
                  f"{title} {party} {year}", by_amount if name == "activity" else as_they_are,
                  party=party, year=year)

    command.__doc__ = summary
    app.command(name)(tabular(command))


quarterly_report("activity", activity.COLUMNS, "RIN activity",
                 "RIN Activity Report §80.1451(c)(2): assigned and separated rows per quarter.")
quarterly_report("transactions", rin_transactions.COLUMNS, "RIN transactions",
                 "RIN Transaction Report §80.1451(c)(1): one row per transaction and block.")
quarterly_report("generation", generation_report.COLUMNS, "RIN generation",
                 "RIN Generation Report §80.1451(b)(1)(ii): one row per batch generated.")


@app.command("annual")
@tabular
def annual_report(ctx: typer.Context, party: PartyOpt, year: YearOpt,
                  known_at: KnownOpt = None) -> None:
    """Annual compliance report §80.1451(a)(1): RVOs, deficits, RINs retired per category."""
    arguments.party(party)
    certified(ctx, arguments.known_at(known_at), lambda views, at: views.annual(party, year, at),
              annual.COLUMNS, f"Annual compliance report {party} {year}", party=party, year=year)


@app.command("attest")
@tabular
def attest_report(
    ctx: typer.Context, party: PartyOpt, year: YearOpt,
    seed: Annotated[int, typer.Option("--seed", min=0, max=2**63 - 1,
                                      help="seed of the random samples (same seed, same sample)")],
    known_at: KnownOpt = None,
) -> None:
    """Attest workpaper §80.1464: §80.127 samples per transaction type, and the quarters'
    roll-forward recomputed from the log against the activity report."""
    arguments.party(party)
    certified(ctx, arguments.known_at(known_at),
              lambda views, at: views.attest(party, year, seed, at), attest.COLUMNS,
              f"Attest workpaper {party} {year} (seed {seed})", party=party, year=year)
