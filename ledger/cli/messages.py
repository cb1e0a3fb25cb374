"""Stderr as `rin` writes its messages, progress bars, summaries and usage errors: best effort.
A message that stderr cannot take (`2>/dev/full`, a closed descriptor) is dropped, never a
traceback or an exit code of its own: the exit code still says what the command did
(docs/cli.md "Output that cannot be written")."""

from __future__ import annotations

import io
from typing import TextIO


class Messages(io.TextIOBase):
    """`stream` (None: closed), taking what it can."""

    def __init__(self, stream: TextIO | None) -> None:
        super().__init__()
        self.stream = stream

    def write(self, text: str) -> int:
        try:
            if self.stream is not None:
                self.stream.write(text)
        except OSError:  # nobody can be told: the exit code still tells
            pass
        return len(text)

    def flush(self) -> None:
        try:
            if self.stream is not None:
                self.stream.flush()
        except OSError:
            pass

    def isatty(self) -> bool:
        return self.stream is not None and self.stream.isatty()

    def fileno(self) -> int:
        if self.stream is None:
            raise io.UnsupportedOperation("stderr is closed")
        return self.stream.fileno()
