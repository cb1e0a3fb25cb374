"""Shared set-up for the projection tests: the sample file applied to a fresh ledger."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from ledger import Ledger

SAMPLE = Path(__file__).parent / "data" / "sample.jsonl"  # a copy of shared/examples


def sample_commands() -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in SAMPLE.read_bytes().splitlines() if line.strip()]


def apply_all(ledger: Ledger, commands: list[dict[str, Any]]) -> None:
    """Apply commands in order; every one must be applied."""
    for number, command in enumerate(commands, start=1):
        result = ledger.apply(command, number)
        assert result.status == "applied", (command, result.error)
