"""`rin apply`: transaction files applied line by line, each line atomic (design.md "Exit
codes": 0, 1 some rejected, 2 unreadable input, 3 the store failed; docs/cli.md "Output that
cannot be written": 2 or 141)."""

from __future__ import annotations

import errno
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, BinaryIO

import typer

from ledger.application.ledger import Ledger
from ledger.application.store_failures import CommitUnknown
from ledger.application.transaction_file import RefusedLine, file_lines
from ledger.cli.failures import STORE_ERRORS, STORE_FAILED, print_failure, store_failure
from ledger.cli.options import err, open_ledger, options
from ledger.cli.output import progress_bar, report
from ledger.cli.stdout import OutputFailed, output_failed

app = typer.Typer()
INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a process stopped by Ctrl-C


class UnreadableInput(Exception):
    """A file that cannot be opened or decoded: exit code 2."""


def open_inputs(files: list[str]) -> list[BinaryIO]:
    """Open every input before applying any line, so an unreadable file changes nothing."""
    streams: list[BinaryIO] = []
    for name in files:
        try:
            streams.append(standard_input() if name == "-" else Path(name).open("rb"))  # noqa: SIM115
        except OSError as exc:
            for stream in streams:
                stream.close()
            raise UnreadableInput(f"{name}: {exc.strerror}") from exc
    return streams


def standard_input() -> BinaryIO:
    """Stdin's bytes; started with stdin closed (`<&-`), the input cannot be read (exit 2)."""
    if sys.stdin is None:
        raise OSError(errno.EBADF, "stdin is closed")
    return sys.stdin.buffer


def read_lines(streams: list[BinaryIO]) -> Iterator[tuple[int, bytes | RefusedLine]]:
    """(line number, bytes) of every non-blank line, numbered across the inputs in order; a line
    over the size limit comes as a `RefusedLine`, never read whole."""
    number = 0
    for stream in streams:
        with stream:
            for raw in file_lines(stream):
                number += 1
                if isinstance(raw, RefusedLine) or raw.strip():
                    yield number, raw


def apply_lines(ledger: Ledger, streams: list[BinaryIO], files: list[str], quiet: bool,
                as_json: bool) -> int:
    """Apply the opened files' lines; print rejections (or every result as JSON); return the
    exit code. Stdout that fails (`OutputFailed`) stops the reading of lines: what was already
    taken is committed and counted, nothing later is applied."""
    counts: Counter[str] = Counter()
    numbered: list[int] = []
    failed: tuple[int, OutputFailed] | None = None  # the line whose result stdout refused

    with progress_bar("applying", quiet, "lines") as bar:
        task = bar.add_task("apply", total=None, rate="")
        if not bar.disable:  # counting costs a read of each file: only for a bar on show
            bar.update(task, total=line_count(files))
        started = time.monotonic()

        def commands() -> Iterator[bytes | RefusedLine]:
            lines = read_lines(streams)
            while failed is None and (taken := next(lines, None)) is not None:
                numbered.append(taken[0])  # once stdout failed, not one more line is read
                yield taken[1]

        last: int | None = None  # the last line whose result is committed and reported
        try:
            for index, result in enumerate(ledger.apply_many(commands())):
                result.line = last = numbered[index]
                counts[result.status] += 1
                if failed is None:
                    try:
                        report(result, as_json)
                    except OutputFailed as refused:
                        failed = last, refused
                rate = (index + 1) / max(time.monotonic() - started, 1e-6)
                bar.update(task, completed=index + 1, rate=f"{rate:,.0f} lines/s")
        except STORE_ERRORS as error:
            done = f"line {last}" if last is not None else "none"
            failure: BaseException = error
            if isinstance(error.__cause__, CommitUnknown):  # in the file's line numbers
                failure = error.__cause__.renumbered(numbered)
            print_failure(err, f"{store_failure(failure)}; last line committed: {done}")
            return STORE_FAILED
        except KeyboardInterrupt:  # every committed line reported first (Ledger.apply_many)
            print_failure(err, interrupted(last, numbered[sum(counts.values()):]))
            return INTERRUPTED
    if failed is not None:
        at, failure = failed
        print_failure(err, f"{failure} at line {at}'s result; every line up to line {last} "
                      f"has its result committed ({counts['applied']:,} applied, "
                      f"{counts['duplicate']:,} duplicate, {counts['rejected']:,} rejected), "
                      "no later line was read: the same input applied again applies the rest "
                      "(the applied lines come back duplicate)")
        return output_failed(failure)
    if not quiet:
        err.print(
            f"{counts['applied']:,} applied, {counts['duplicate']:,} duplicate, "
            f"{counts['rejected']:,} rejected"
        )
    return 1 if counts["rejected"] else 0


def interrupted(last: int | None, pending: list[int]) -> str:
    """What an interrupted `rin apply` says: the last line committed, and the lines read since
    (`pending`, file line numbers), which the interrupted save may or may not have stored."""
    done = f"line {last}" if last is not None else "none"
    if not pending:
        return f"interrupted; last line committed: {done}"
    lines = (f"line {pending[0]} was" if len(pending) == 1
             else f"lines {pending[0]}-{pending[-1]} were")
    return (f"interrupted; last line committed: {done}; whether {lines} committed is unknown "
            "(read since, their save interrupted): a line with an id is safe to send again "
            "(it comes back duplicate), a line without one is stored twice if it was committed")


def line_count(files: list[str]) -> int | None:
    """The lines `read_lines` will give from the files (blank lines are not lines), or None
    if one is not a regular file (stdin, a pipe: read once, so not counted first)."""
    if not all(name != "-" and Path(name).is_file() for name in files):
        return None
    try:
        return sum(1 for _ in read_lines([Path(name).open("rb") for name in files]))
    except OSError:  # it will be reported when the lines are read
        return None


@app.command()
def apply(
    ctx: typer.Context,
    files: Annotated[list[str], typer.Argument(help="JSON Lines files, or - for stdin")],
    as_json: Annotated[bool, typer.Option("--json", help="one result object per line")] = False,
) -> None:
    """Apply transaction-file lines in order, each atomic; exit 0, 1 (some rejected), 2
    (unreadable input), 3 (the store failed) or 141 (the output's reader went away). Creates
    the ledger if there is none."""
    chosen = options(ctx)
    try:  # before the ledger is opened: a file that cannot be read creates no ledger either
        streams = open_inputs(files)
    except UnreadableInput as exc:
        err.print(f"unreadable input: {exc}")
        raise typer.Exit(2) from None
    with open_ledger(chosen, note="; last line committed: none", create=True) as ledger:
        code = apply_lines(ledger, streams, files, chosen.quiet, as_json)
    raise typer.Exit(code)
