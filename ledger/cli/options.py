"""The global options of `rin` (`--data`, `--store`, `--views`, `--key`, `--trade-window`,
`--quiet`),
accepted before the subcommand (by the root command) or after it (added to every subcommand by
`global_options`), handed to the subcommand in click's context object, and the ledger they
open."""

from __future__ import annotations

import copy
import dataclasses
import inspect
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, get_args

import typer
from rich.console import Console

from ledger.application.ledger import Ledger
from ledger.cli.added_options import option, with_options
from ledger.cli.arguments import data_folder, store_url
from ledger.cli.failures import print_failure, store_failures_exit
from ledger.cli.stdout import OutputFailed, flush_out, output_failed
from ledger.infrastructure import settings
from projections import VIEWS_FILE
from projections.pg_views import is_url
from projections.runner import VIEWS_VARIABLE

#: messages, progress and summaries: stdout carries only the results a user asked for; soft
#: wrap: a message is not broken at 80 columns, so a path in it stays whole for scripts
err = Console(stderr=True, soft_wrap=True)
PANEL = "Global options (before or after the command)"
#: exit code of a bad argument, including a data folder that holds no ledger
BAD_ARGUMENT = 2


@dataclass(frozen=True)
class Options:
    """Where the ledger lives and who signs: the data folder (SQLite store, views, head file),
    a PostgreSQL URL if the events live there, the Ed25519 key signing each head, the
    business days a trade posting waits before it expires, whether to print only errors, and
    where the read models live if not in the data folder (a file, or a PostgreSQL URL that
    several processes or machines share)."""

    data: Path
    store: str | None = None
    key: Path | None = None
    trade_window: int | None = None
    quiet: bool = False
    views: str | None = None

    def views_location(self) -> str | Path:
        """The read models: `--views` (a file or a `postgresql://` URL), else
        `<data>/views.sqlite`."""
        return self.views or self.data / VIEWS_FILE


DataOpt = Annotated[Path | None, typer.Option(
    "--data", envvar=settings.DATA_VARIABLE, rich_help_panel=PANEL,
    help=f"data folder (default {settings.DEFAULT_DATA})")]
StoreOpt = Annotated[str | None, typer.Option(
    "--store", envvar=settings.STORE_VARIABLE, rich_help_panel=PANEL,
    help="postgresql://user:password@host:port/database event store")]
KeyOpt = Annotated[Path | None, typer.Option(
    "--key", envvar="RIN_KEY", rich_help_panel=PANEL,
    help="Ed25519 private key (rin keygen) that signs each transaction's head")]
WindowOpt = Annotated[int | None, typer.Option(
    "--trade-window", envvar=settings.TRADE_WINDOW_VARIABLE, min=0, rich_help_panel=PANEL,
    help=f"business days a trade posting waits before it expires "
         f"(default {settings.TRADE_WINDOW})")]
ViewsOpt = Annotated[str | None, typer.Option(
    "--views", envvar=VIEWS_VARIABLE, rich_help_panel=PANEL,
    help="read models: a SQLite file or a postgresql:// URL several processes share "
         "(default <data>/views.sqlite)")]
QuietOpt = Annotated[bool, typer.Option(
    "--quiet", "-q", rich_help_panel=PANEL, help="print nothing but results and errors")]


def chosen_options(data: Path | None, store: str | None, key: Path | None,
                   trade_window: int | None, quiet: bool, views: str | None = None) -> Options:
    """The root command's options, each checked (a bad one exits 2 naming it)."""
    return Options(data_folder(settings.data_folder(data)), store_url(store), key,
                   trade_window, quiet, views_location(views))


def overridden(chosen: Options, given: dict[str, Any]) -> Options:
    """`chosen` with what was given after the subcommand (None, or False for `--quiet`, is
    not given), each checked as at the root."""
    changes = {name: value for name, value in given.items()
               if value is not None and value is not False}  # 0 days is given
    if "data" in changes:
        changes["data"] = data_folder(changes["data"])
    if "store" in changes:
        changes["store"] = store_url(changes["store"])
    if "views" in changes:
        changes["views"] = views_location(changes["views"])
    return dataclasses.replace(chosen, **changes)


def global_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """A subcommand that also accepts the global options after its name (as `rin holdings
    --data D`); given there they override those given before it. A command with a `quiet`
    parameter of its own gets the global `--quiet` or'd into it. Stdout that fails (its reader gone:
    exit 141; not writable: exit 2) ends any of them (`ledger.cli.stdout`)."""
    added = {field: option(f"global_{field}", after_command(annotation), None) for field,
             annotation in (("data", DataOpt), ("store", StoreOpt), ("key", KeyOpt),
                            ("trade_window", WindowOpt), ("views", ViewsOpt))}
    own_quiet = "quiet" in inspect.signature(command).parameters
    if not own_quiet:
        added["quiet"] = option("global_quiet", QuietOpt, False)

    @contextmanager
    def around(ctx: typer.Context, given: dict[str, Any], own: dict[str, Any]) -> Iterator[None]:
        ctx.obj = chosen = overridden(options(ctx), {
            field: given[f"global_{field}"] for field in added})
        if own_quiet:
            own["quiet"] = own["quiet"] or chosen.quiet
        try:
            try:
                yield
            finally:  # a reader gone before the last of it is seen here, not at exit
                flush_out()
        except OutputFailed as failure:
            raise typer.Exit(output_failure(failure)) from None

    return with_options(command, {p.name: p for p in added.values()}, around)


def output_failure(failure: OutputFailed) -> int:
    """Say why stdout failed (a reader gone hears nothing more, as of `cat | head`); the exit
    code (`ledger.cli.stdout`)."""
    if not failure.closed:
        print_failure(err, str(failure))
    return output_failed(failure)


def after_command(annotation: Any) -> Any:
    """A global option as a subcommand takes it: without the environment variable, which the
    root command reads (read again here, it would override what was given before)."""
    kind, info = get_args(annotation)
    info = copy.copy(info)
    info.envvar, info.show_envvar = None, False
    return Annotated[kind, info]


def options(ctx: typer.Context) -> Options:
    """The options the root command put in the context (click hands them to subcommands)."""
    found = ctx.find_object(Options)
    assert found is not None, "the root callback sets the options before any subcommand runs"
    return found


def views_location(views: str | None) -> str | None:
    """`--views` checked: a `postgresql://` URL, or a SQLite file (by its path: SQLite would
    open a `file:` URI, which no check of the file reads) whose folder exists."""
    if views is not None and views.startswith("file:"):
        raise typer.BadParameter(f"{views[:60]}: name the views file by its path, not a file: "
                                 "URI", param_hint="--views")
    if views is None or is_url(views) or Path(views).parent.is_dir():
        return views
    raise typer.BadParameter(f"{views}: no such folder for the views file; give an existing "
                             "folder or a postgresql:// URL", param_hint="--views")


def no_store(chosen: Options) -> str | None:
    """Why a read command cannot run on the chosen data folder: it holds no ledger (a
    mistyped `--data` must not read as an empty ledger whose invariants all hold)."""
    if chosen.store is not None or (chosen.data / settings.EVENTS_FILE).is_file():
        return None
    return (f"no ledger in {chosen.data} (it has no {settings.EVENTS_FILE}); check --data or "
            f"{settings.DATA_VARIABLE}: `rin apply FILE` and `rin demo` create a ledger")


@contextmanager
def open_ledger(chosen: Options, note: str = "", create: bool = False) -> Iterator[Ledger]:
    """The ledger on the chosen store (signing with the chosen key); a store failure inside
    exits 3 saying what failed (and `note`). Unless `create` (apply, demo), a data folder
    with no ledger in it exits 2 naming the folder, and nothing is created there."""
    if not create and (problem := no_store(chosen)) is not None:
        print_failure(err, problem)
        raise typer.Exit(BAD_ARGUMENT)
    with store_failures_exit(err, note), Ledger(
        chosen.data, store=chosen.store, key=chosen.key, trade_window=chosen.trade_window
    ) as ledger:
        yield ledger
