"""`rin demo`: the small market of `ledger.simulation` applied and its first reports shown, or
with `--size` a seeded market of that many lines."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from datetime import date
from typing import Annotated, Any

import typer

from ledger.application.ledger import Ledger
from ledger.cli.demo_store import claim_for_demo
from ledger.cli.options import Options, err, open_ledger, options
from ledger.cli.output import emit, report
from ledger.simulation import generate_market, small_market
from projections import Views, compliance, holdings, quarterly, trades

app = typer.Typer()
#: the `rin trades` columns that fit beside each other in a terminal
TRADE_COLUMNS = [c for c in trades.COLUMNS if c in {
    "id", "side", "party", "partner", "status", "date", "k", "quantity", "match", "closed_on",
    "closing_reason", "counterpart"}]


@app.command()
def demo(
    ctx: typer.Context,
    quiet: Annotated[bool, typer.Option("--quiet", "-q")] = False,
    size: Annotated[int | None, typer.Option(
        "--size", min=1, help="apply a seeded market of this many lines (ledger.simulation.market)"
    )] = None,
    seed: Annotated[int, typer.Option("--seed", help="the simulated market's seed")] = 1,
) -> None:
    """Simulate a small complete market on the embedded store, then show the reports (into
    an empty data folder, or one the same demo wrote before)."""
    chosen = options(ctx)
    with open_ledger(chosen, create=True) as ledger:
        claim_for_demo(ledger, chosen.data, {"market": "small"} if size is None
                       else {"market": "seeded", "size": size, "seed": seed})
        if size is None:
            refused = apply_market(ledger, "demo market", small_market(), quiet)
            if not quiet:
                show_reports(ledger, chosen)
        else:
            refused = apply_market(ledger, "simulated market", generate_market(size, seed),
                                   quiet)
    raise typer.Exit(1 if refused else 0)


def apply_market(ledger: Ledger, name: str, lines: Iterable[dict[str, Any]],
                 quiet: bool = False) -> int:
    """Apply a market's lines, report each refused one, then (unless `quiet`) the counts; how
    many were refused."""
    counts: Counter[str] = Counter()
    refused = []
    for result in ledger.apply_many(lines):
        counts[result.status] += 1
        if result.status == "rejected":
            refused.append(result)
    for result in refused:
        report(result, as_json=False)
    if not quiet:
        err.print(
            f"{name}: {counts['applied']:,} lines applied, {counts['duplicate']:,} already "
            f"applied, {counts['rejected']:,} rejected"
        )
    return len(refused)


def show_reports(ledger: Ledger, chosen: Options) -> None:
    """The reports a regulator would look at first, over the demo's read models."""
    views = Views(ledger, chosen.views_location())
    emit(views.holdings(as_of=date(2024, 6, 30)), holdings.COLUMNS, False, False,
         "Holdings as of 2024-06-30")
    emit(views.holdings(), holdings.COLUMNS, False, False, "Holdings now")
    emit([row for row in views.quarterly(2024) if row["assigned_rins"] or row["volume"]],
         quarterly.COLUMNS, False, False, "Quarter-end 2.5 check, 2024 (§80.1428(a)(5))")
    emit(views.compliance(2024), compliance.COLUMNS, False, False,
         "Compliance positions, 2024 (§80.1427)")
    emit(views.trades(), TRADE_COLUMNS, False, False,
         "EMTS postings (§80.1452): `rin trades` lists every column")
    problems = views.verify()
    err.print("verify: all invariants hold" if not problems else "\n".join(problems))
