"""Standard output as `rin` writes it: every byte or an error, and a reader that goes away
(`rin … | head`) ends the command with exit 141 (docs/cli.md "Output closed"), never a
traceback, a "store failed" or a silent exit 0 over output cut short."""

from __future__ import annotations

import os
import sys

#: 128 + SIGPIPE: what a shell reports of a program stopped by writing into a closed pipe
OUTPUT_CLOSED = 141


def write_out(text: str | bytes) -> None:
    """Write all of `text` to stdout and flush it. `sys.stdout.write` of a megabyte into a pipe
    whose reader goes away mid-write was seen to end after one write of 64 kB, with no error
    then or at `flush`: the text layer drops a short count's rest. Here the rest is written
    again, so a reader that has gone raises `BrokenPipeError`, not a cut-short success."""
    sys.stdout.flush()  # what was written before goes first
    data = text.encode(sys.stdout.encoding, sys.stdout.errors or "strict") \
        if isinstance(text, str) else text
    out, view = sys.stdout.buffer, memoryview(data)
    while view:
        view = view[out.write(view):]
    out.flush()


def output_closed() -> int:
    """Stdout's reader has gone: point stdout at the null device, so what is still buffered
    for it is dropped rather than failing again when the process exits; the exit code."""
    try:
        descriptor = sys.stdout.fileno()
    except (OSError, ValueError):  # not a file (a test's capture): nothing left to flush
        return OUTPUT_CLOSED
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, descriptor)
    os.close(null)
    return OUTPUT_CLOSED
