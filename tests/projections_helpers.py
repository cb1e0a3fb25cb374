"""Shared set-up for the projection tests: the sample file applied to a fresh ledger."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from ledger import Ledger

SAMPLE = Path("/work/shared/examples/sample.jsonl")
if not SAMPLE.exists():  # pragma: no cover - the repo's own copy, if there is one
    SAMPLE = Path(__file__).resolve().parent.parent / "examples" / "sample.jsonl"


def sample_commands() -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in SAMPLE.read_bytes().splitlines() if line.strip()]


def apply_all(ledger: Ledger, commands: list[dict[str, Any]]) -> None:
    """Apply commands in order; every one must be applied."""
    for number, command in enumerate(commands, start=1):
        result = ledger.apply(command, number)
        assert result.status == "applied", (command, result.error)
