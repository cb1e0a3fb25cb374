"""The `rin` command line: a thin layer over `ledger.Ledger` and `projections`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ledger.cli import (
    apply,
    demo,
    market_reports,
    regulator_reports,
    reports,
    serve,
    trust,
)
from ledger.cli.arguments import data_folder, store_url
from ledger.cli.options import Options, err
from ledger.infrastructure import settings
from ledger.infrastructure.signing import StoreRefused

DataOpt = Annotated[Path | None, typer.Option(
    "--data", envvar=settings.DATA_VARIABLE, help=f"data folder (default {settings.DEFAULT_DATA})"
)]
StoreOpt = Annotated[str | None, typer.Option(
    "--store", envvar=settings.STORE_VARIABLE, help="postgresql://… event store"
)]
WindowOpt = Annotated[int | None, typer.Option(
    "--trade-window", envvar=settings.TRADE_WINDOW_VARIABLE, min=0,
    help=f"business days a trade posting waits before it expires (default {settings.TRADE_WINDOW})"
)]
KeyOpt = Annotated[
    Path | None, typer.Option("--key", envvar="RIN_KEY", help="Ed25519 private key (rin keygen)"
                              " that signs each transaction's head")
]


app = typer.Typer(
    add_completion=False, no_args_is_help=True, help=__doc__, pretty_exceptions_enable=False
)
# in the order help lists them
for commands in (apply.app, demo.app, reports.app, regulator_reports.app, trust.app):
    app.add_typer(commands)
for commands in (market_reports.app, serve.app):
    app.add_typer(commands)


@app.callback()
def main_options(ctx: typer.Context, data: DataOpt = None, store: StoreOpt = None,
                 key: KeyOpt = None, trade_window: WindowOpt = None) -> None:
    """rin-ledger: an event-sourced ledger of RINs under 40 CFR 80 Subpart M."""
    ctx.obj = Options(data_folder(settings.data_folder(data)), store_url(store), key,
                      trade_window)


def main() -> None:
    try:
        app()
    except StoreRefused as exc:  # a key that cannot be used, a signed or truncated store
        err.print(str(exc))
        sys.exit(exc.exit_code)
