"""Standard output as `rin` writes it: every byte or `OutputFailed` (docs/cli.md "Output that
cannot be written"). A reader that goes away (`rin … | head`) ends the command with exit 141,
an output that cannot be written (a full disk, a closed descriptor) with exit 2 saying so;
never a traceback, a "store failed" or an exit 0 over output cut short."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO, TextIO

#: 128 + SIGPIPE: what a shell reports of a program stopped by writing into a closed pipe
OUTPUT_CLOSED = 141
#: the output cannot be written: as design.md's 2 for input that cannot be read
OUTPUT_UNWRITABLE = 2


class OutputFailed(Exception):
    """Stdout did not take what a command printed: its reader went away (`closed`), or the
    write failed (the text says why)."""

    def __init__(self, why: str, closed: bool) -> None:
        super().__init__(why)
        self.closed = closed

    @property
    def exit_code(self) -> int:
        return OUTPUT_CLOSED if self.closed else OUTPUT_UNWRITABLE

    def __str__(self) -> str:
        return ("output closed by its reader" if self.closed
                else f"cannot write the output: {self.args[0]}")


def write_out(text: str | bytes) -> None:
    """Write all of `text` to stdout and flush it. `sys.stdout.write` of a megabyte into a pipe
    whose reader goes away mid-write was seen to end after one write of 64 kB, with no error
    then or at `flush`: the text layer drops a short count's rest. Here the rest is written
    again, so a reader that has gone is an `OutputFailed`, not a cut-short success."""
    if not text:  # nothing to write: nothing fails, whatever stdout is
        return
    with output_faults():
        sys.stdout.flush()  # what was written before goes first
        data = text.encode(sys.stdout.encoding, sys.stdout.errors or "strict") \
            if isinstance(text, str) else text
        out, view = sys.stdout.buffer, memoryview(data)
        while view:
            view = view[out.write(view):]
        out.flush()


def flush_out() -> None:
    """Flush what is still buffered for stdout: a failure is seen here, not as Python's
    "Exception ignored" at exit."""
    with output_faults():
        sys.stdout.flush()


def stdout_encoding() -> str:
    """The encoding stdout's text is written in."""
    return getattr(sys.stdout, "encoding", None) or "utf-8"


class StandardOutput:
    """`sys.stdout` under `rin`'s `main`: what click and rich write themselves (`--help`)
    fails as `OutputFailed`, as `write_out` does, not as a bare `OSError`; and `stream` None
    (started with stdout closed, `>&-`, where click drops `--help` silently) fails as one."""

    def __init__(self, stream: TextIO | None) -> None:
        self.stream = stream
        self.encoding = getattr(stream, "encoding", None) or "utf-8"
        self.errors = getattr(stream, "errors", None) or "strict"

    def open(self) -> TextIO:
        if self.stream is None:
            raise OutputFailed("stdout is closed", closed=False)
        return self.stream

    @property
    def buffer(self) -> BinaryIO:
        return self.open().buffer

    def write(self, text: str | bytes) -> int:
        """Write text, or bytes to the stream's buffer: click probes with `write(b"")` and, that
        taken, writes the end of `--help` as bytes (to a pipe or file that was a TypeError)."""
        if not text:
            return 0
        with output_faults():
            stream = self.open()
            if isinstance(text, str):
                return stream.write(text)
            stream.flush()  # the text before goes first
            return stream.buffer.write(text)

    def flush(self) -> None:
        if self.stream is not None:
            with output_faults():
                self.stream.flush()

    def isatty(self) -> bool:
        return self.stream is not None and self.stream.isatty()

    def fileno(self) -> int:
        return self.open().fileno()


@contextmanager
def output_faults() -> Iterator[None]:
    """Turn an error writing stdout into `OutputFailed` (not an `OSError`, which the store's
    failures are)."""
    try:
        yield
    except BrokenPipeError as error:
        raise OutputFailed(str(error), closed=True) from None
    except OSError as error:
        raise OutputFailed(error.strerror or str(error), closed=False) from None
    except UnicodeEncodeError as error:  # a non-UTF-8 locale or PYTHONIOENCODING
        char = error.object[error.start]
        raise OutputFailed(f"stdout's encoding ({error.encoding}) has no {char!r} (U+"
                           f"{ord(char):04X}): set PYTHONIOENCODING=utf-8, or use --json",
                           closed=False) from None


def output_failed(failure: OutputFailed) -> int:
    """Stdout failed: point it at the null device, so what is still buffered for it is dropped
    rather than failing again when the process exits; the exit code."""
    try:
        descriptor = sys.stdout.fileno()
    except (OSError, ValueError, OutputFailed):  # closed, or not a file (a test's capture)
        return failure.exit_code
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, descriptor)
    os.close(null)
    return failure.exit_code
