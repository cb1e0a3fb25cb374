"""The command line of the scripts that generate a document of the repo (docs/rules.md,
docs/coverage.md): print it, or write it in place with `--write`; a test compares the two."""

from __future__ import annotations

import sys
from pathlib import Path


def write_or_print(text: str, doc: Path, argv: list[str]) -> int:
    """Write `text` to `doc` with `--write` in `argv`, else print it; the exit code."""
    if "--write" in argv:
        doc.parent.mkdir(parents=True, exist_ok=True)
        doc.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0
