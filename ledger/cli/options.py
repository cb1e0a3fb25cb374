"""The global options of `rin` (`--data`, `--store`, `--key`), checked once by the root command
and handed to every subcommand in click's context object, and the ledger they open."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import typer
from rich.console import Console

from ledger.application.ledger import Ledger
from ledger.cli.failures import store_failures_exit

#: messages, progress and summaries: stdout carries only the results a user asked for
err = Console(stderr=True)


@dataclass(frozen=True)
class Options:
    """Where the ledger lives and who signs: the data folder (SQLite store, views, head file),
    a PostgreSQL URL if the events live there, the Ed25519 key signing each head, and the
    business days a trade posting waits before it expires."""

    data: Path
    store: str | None = None
    key: Path | None = None
    trade_window: int | None = None


def options(ctx: typer.Context) -> Options:
    """The options the root command put in the context (click hands them to subcommands)."""
    found = ctx.find_object(Options)
    assert found is not None, "the root callback sets the options before any subcommand runs"
    return found


@contextmanager
def open_ledger(chosen: Options, note: str = "") -> Iterator[Ledger]:
    """The ledger on the chosen store (signing with the chosen key); a store failure inside
    exits 3 saying what failed (and `note`)."""
    with store_failures_exit(err, note), Ledger(
        chosen.data, store=chosen.store, key=chosen.key, trade_window=chosen.trade_window
    ) as ledger:
        yield ledger
