"""`head.json` holds the head of the last commit as soon as the command returns, written in
place (ledger/infrastructure/head_file.py); verify still checks it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
from test_concurrency import PRODUCER, generate, party

from ledger import Ledger
from ledger.infrastructure.head_file import HEAD_FILE, RECORD

LINES = [party(PRODUCER, "Producer", ["producer"], ("10011",)),
         *(generate(b, 100) for b in range(1, 4))]


def kept(data: Path) -> Any:
    return orjson.loads((data / HEAD_FILE).read_bytes())


def last_head(ledger: Ledger) -> dict[str, Any]:
    return [h.to_dict() for h in ledger.stored_heads()][-1]


def test_head_json_holds_each_commit_when_its_command_returns(tmp_path: Path) -> None:
    inodes = set()
    with Ledger(tmp_path) as ledger:
        for line in LINES:
            assert ledger.apply(line).status == "applied"
            assert kept(tmp_path) == last_head(ledger)
            path = tmp_path / HEAD_FILE
            assert path.stat().st_size == RECORD
            inodes.add(path.stat().st_ino)
        assert last_head(ledger)["notification_id"] == 7  # 1 registration + 3 × 2 events
    assert len(inodes) == 1  # written in place: one file, never renamed over
    assert not [p for p in os.listdir(tmp_path) if p.startswith(f".{HEAD_FILE}")]


def test_a_head_json_of_another_size_is_replaced_whole(tmp_path: Path) -> None:
    with Ledger(tmp_path) as ledger:
        list(ledger.apply_many(LINES[:2]))
        stale = last_head(ledger)
    path = tmp_path / HEAD_FILE
    path.write_bytes(orjson.dumps(stale) + b" " * 1000)  # as a hand, or release 2, wrote it
    with Ledger(tmp_path) as ledger:
        assert ledger.audit() == []  # padding is JSON whitespace: the head is read
        assert ledger.apply(LINES[2]).status == "applied"
        assert kept(tmp_path) == last_head(ledger)
    assert path.stat().st_size == RECORD


def test_verify_still_checks_head_json(tmp_path: Path) -> None:
    with Ledger(tmp_path) as ledger:
        list(ledger.apply_many(LINES[:2]))
        stale = last_head(ledger)
        assert ledger.apply(LINES[2]).status == "applied"
    (tmp_path / HEAD_FILE).write_bytes(
        orjson.dumps({**stale, "hash": "0" * 64}))  # a head the store does not hold
    with Ledger(tmp_path) as ledger:
        problems = ledger.audit()
    assert len(problems) == 1 and "head.json" in problems[0]
