"""The `rin` command line: a thin layer over `ledger.Ledger` and `projections`."""

from __future__ import annotations

import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Annotated, Any, TextIO, cast

import typer

from ledger.cli import (
    apply,
    demo,
    examples,
    market_reports,
    regulator_reports,
    reports,
    serve,
    trust,
)
from ledger.cli.messages import Messages
from ledger.cli.options import (
    DataOpt,
    KeyOpt,
    Options,
    QuietOpt,
    StoreOpt,
    ViewsOpt,
    WindowOpt,
    chosen_options,
    err,
    global_options,
    output_failure,
)
from ledger.cli.stdout import OutputFailed, StandardOutput, write_out
from ledger.infrastructure.signing import StoreRefused

HELP = """\
rin: a ledger of Renewable Identification Numbers (RINs) under the US Renewable Fuel Standard,
40 CFR 80 Subpart M. Every command of a JSON Lines transaction file is checked against the
regulation, and a refused line names its paragraph, field and numbers.

**Examples**

    rin demo                                     a small market in ./rin-data
    rin --data ./ledger apply trades.jsonl       apply a file, line by line
    rin holdings --party 2001 --as-of 2024-06-30 gallon-RINs held on a date
    rin compliance --year 2024 --csv             §80.1427 positions as CSV
    rin verify --json                            check every stored fact

Every report prints a table, or --json, --csv or --nl. The global options may come before or
after the command. Exit codes: 0 done, 1 some lines refused or something broken, 2 bad input
or arguments (or an output that cannot be written), 3 the store failed, 141 the output's reader
went away (`rin … | head`)."""


def show_version(wanted: bool) -> None:
    """`--version`: the installed distribution's version."""
    if wanted:
        try:
            write_out(f"rin-ledger {version('rin-ledger')}\n")
        except PackageNotFoundError:  # run from a source tree that was never installed
            write_out("rin-ledger (not installed: no version)\n")
        raise typer.Exit()


VersionOpt = Annotated[bool, typer.Option(
    "--version", callback=show_version, is_eager=True, help="print the version and exit")]

class Rin(typer.Typer):
    """The root command: each group of commands added gets the global options after the
    command's name too (`ledger/cli/options.py`), whichever module adds it."""

    def add_typer(self, typer_instance: typer.Typer, **options: Any) -> None:
        for registered in typer_instance.registered_commands:
            if registered.callback is not None:
                registered.callback = global_options(registered.callback)
        super().add_typer(typer_instance, **options)


app = Rin(
    no_args_is_help=True, help=HELP, pretty_exceptions_enable=False, rich_markup_mode="markdown",
    context_settings={"help_option_names": ["-h", "--help"]},
)
# in the order help lists them
for commands in (apply.app, demo.app, reports.app, regulator_reports.app, trust.app,
                 market_reports.app, serve.app, examples.app):
    app.add_typer(commands)


@app.callback()
def main_options(ctx: typer.Context, data: DataOpt = None, store: StoreOpt = None,
                 key: KeyOpt = None, trade_window: WindowOpt = None,
                 quiet: QuietOpt = False, views: ViewsOpt = None,
                 _version: VersionOpt = False) -> None:
    ctx.obj = chosen_options(data, store, key, trade_window, quiet, views)


def main() -> None:
    """`rin`: its messages best effort (`ledger.cli.messages`), a refused store exit 2."""
    sys.stderr = cast(TextIO, Messages(sys.stderr))  # written to, flushed: all rich and click use
    sys.stdout = cast(TextIO, StandardOutput(sys.stdout))  # as sys.stderr: duck-typed
    try:
        app()
    except StoreRefused as exc:  # a key that cannot be used, a signed or truncated store
        err.print(str(exc))
        sys.exit(exc.exit_code)
    except OutputFailed as failure:  # `--version`, `--help`: printed outside any command
        sys.exit(output_failure(failure))


__all__ = ["Options", "Path", "app", "main"]


if __name__ == "__main__":  # python -m ledger.cli.main
    main()
