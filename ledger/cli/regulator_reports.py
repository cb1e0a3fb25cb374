"""The `rin` commands of the regulator's reports: activity, transactions, generation (§80.1451
(b)-(c)), annual (§80.1451(a)(1)) and attest (§80.1464), each as known at any point
(`--known-at`) and each carrying the chain head it was computed at: a `head` field on every
JSON or CSV row (`{"notification_id", "hash"}`, and `key`, `signature` on a signed store), in
the title of a table. `rin verify --against` takes that head (docs/reports.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import orjson
import typer

from ledger.cli import arguments
from ledger.cli.options import err
from ledger.cli.output import emit
from ledger.cli.reports import CsvOpt, JsonOpt, YearOpt, open_views
from projections import Views, activity, annual, attest, generation_report, rin_transactions

app = typer.Typer()
PartyOpt = Annotated[str, typer.Option("--party", help="4-digit company id")]
QuarterOpt = Annotated[int | None, typer.Option(
    "--quarter", min=1, max=4, help="calendar quarter 1-4 (default: every quarter)")]
KnownOpt = Annotated[str | None, typer.Option(
    "--known-at", help="notification id or ISO timestamp: the report as the ledger stood then")]
Rows = Callable[[Views, int], list[dict[str, Any]]]


def flat(value: Any) -> Any:
    """A list or object as CSV text: ids space-separated, an object as compact JSON."""
    if isinstance(value, list):
        return " ".join(str(item) for item in value)
    if isinstance(value, dict):
        return orjson.dumps(value).decode()
    return value


def certified(ctx: typer.Context, rows_of: Rows, known_at: str | None, columns: list[str],
              as_json: bool, as_csv: bool, title: str) -> None:
    """One report at one point of the log: its rows, each carrying the head there."""
    point = arguments.known_at(known_at)
    with open_views(ctx) as views:
        position = views.known_position(point)
        rows = rows_of(views, position)
        head = views.head_at(position)
    rows = [{**row, "head": head} for row in rows]
    if as_csv:
        rows = [{column: flat(value) for column, value in row.items()} for row in rows]
    title = f"{title} — at notification {head['notification_id']:,}, head {head['hash']}"
    if as_json or as_csv:  # an empty report has no row to carry its head
        err.print(title)
        columns = [*columns, "head"]
    elif columns == activity.COLUMNS:
        rows, columns = by_amount(rows)
    emit(rows, columns, as_json, as_csv, title)


def by_amount(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
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
                known_at: KnownOpt = None, as_json: JsonOpt = False,
                as_csv: CsvOpt = False) -> None:
        arguments.party(party)
        certified(ctx, lambda views, at: getattr(views, name)(party, year, quarter, at),
                  known_at, columns, as_json, as_csv, f"{title} {party} {year}")

    command.__doc__ = summary
    app.command(name)(command)


quarterly_report("activity", activity.COLUMNS, "RIN activity",
                 "RIN Activity Report §80.1451(c)(2): assigned and separated rows per quarter.")
quarterly_report("transactions", rin_transactions.COLUMNS, "RIN transactions",
                 "RIN Transaction Report §80.1451(c)(1): one row per transaction and block.")
quarterly_report("generation", generation_report.COLUMNS, "RIN generation",
                 "RIN Generation Report §80.1451(b)(1)(ii): one row per batch generated.")


@app.command("annual")
def annual_report(ctx: typer.Context, party: PartyOpt, year: YearOpt, known_at: KnownOpt = None,
                  as_json: JsonOpt = False, as_csv: CsvOpt = False) -> None:
    """Annual compliance report §80.1451(a)(1): RVOs, deficits, RINs retired per category."""
    arguments.party(party)
    certified(ctx, lambda views, at: views.annual(party, year, at), known_at, annual.COLUMNS,
              as_json, as_csv, f"Annual compliance report {party} {year}")


@app.command("attest")
def attest_report(
    ctx: typer.Context, party: PartyOpt, year: YearOpt,
    seed: Annotated[int, typer.Option("--seed", min=0, max=2**63 - 1,
                                      help="seed of the random samples (same seed, same sample)")],
    known_at: KnownOpt = None, as_json: JsonOpt = False, as_csv: CsvOpt = False,
) -> None:
    """Attest workpaper §80.1464: §80.127 samples per transaction type, and the quarters'
    roll-forward recomputed from the log against the activity report."""
    arguments.party(party)
    certified(ctx, lambda views, at: views.attest(party, year, seed, at), known_at,
              attest.COLUMNS, as_json, as_csv, f"Attest workpaper {party} {year} (seed {seed})")
