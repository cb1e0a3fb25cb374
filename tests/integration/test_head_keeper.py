"""`head.json` is written off the commit's path (ledger/infrastructure/head_file.py `HeadKeeper`)
and still holds the last committed head whenever anything reads it: after `close`, after the
process exits without closing, and when the ledger reads it itself (verify)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import orjson
import pytest
from store_access import app_of
from test_concurrency import PRODUCER, generate, party

import ledger.infrastructure.head_file as head_file
from ledger import Ledger
from ledger.infrastructure.heads import Head

ROOT = Path(__file__).resolve().parents[2]
LINES = [party(PRODUCER, "Producer", ["producer"], ("10011",)),
         *(generate(b, 100) for b in range(1, 4))]


def kept(data: Path) -> Any:
    return orjson.loads((data / head_file.HEAD_FILE).read_bytes())


def last_head(ledger: Ledger) -> dict[str, Any]:
    return [h.to_dict() for h in ledger.stored_heads()][-1]


def test_head_json_holds_the_last_commit_once_the_ledger_is_closed(tmp_path: Path) -> None:
    with Ledger(tmp_path) as ledger:
        for line in LINES:
            assert ledger.apply(line).status == "applied"
        last = last_head(ledger)
    assert last["notification_id"] == 7  # 1 registration + 3 × (Generated, Assigned)
    assert kept(tmp_path) == last


def test_the_write_waits_for_no_command_and_skips_heads_overtaken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entered, release, written = threading.Event(), threading.Event(), []
    real = head_file.write_head

    def slow(path: Path, head: Head) -> None:
        entered.set()
        assert release.wait(30), "never released"
        written.append(head.notification_id)
        real(path, head)
    monkeypatch.setattr(head_file, "write_head", slow)
    with Ledger(tmp_path) as ledger:
        assert ledger.apply(LINES[0]).status == "applied"
        assert entered.wait(30)  # the first head's write has begun, and is held
        for line in LINES[1:]:  # each command returns while that write is still held
            assert ledger.apply(line).status == "applied"
        assert not (tmp_path / head_file.HEAD_FILE).exists()
        release.set()
        assert head_file.read_head_file(app_of(ledger)) == last_head(ledger)  # waits for it
    assert written == [1, 7]  # in order; the heads at 3 and 5 were overtaken before written


def test_a_process_that_exits_without_closing_leaves_the_last_head(tmp_path: Path) -> None:
    script = (
        "import sys, orjson\n"
        "from ledger import Ledger\n"
        "ledger = Ledger(sys.argv[1])\n"
        "for line in orjson.loads(sys.argv[2]):\n"
        "    ledger.apply(line)\n"
        "print(orjson.dumps([h.to_dict() for h in ledger.stored_heads()][-1]).decode())\n"
    )  # no close: the interpreter's exit finishes the write
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path), orjson.dumps(LINES).decode()],
        capture_output=True, text=True, check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT,
    )
    assert kept(tmp_path) == orjson.loads(done.stdout)
    assert kept(tmp_path)["notification_id"] == 7


def test_verify_still_checks_head_json(tmp_path: Path) -> None:
    with Ledger(tmp_path) as ledger:
        list(ledger.apply_many(LINES[:2]))
        assert ledger.audit() == []
        stale = last_head(ledger)
        assert ledger.apply(LINES[2]).status == "applied"
    (tmp_path / head_file.HEAD_FILE).write_bytes(
        orjson.dumps({**stale, "hash": "0" * 64}))  # a head the store does not hold
    with Ledger(tmp_path) as ledger:
        problems = ledger.audit()
    assert len(problems) == 1 and "head.json" in problems[0]
