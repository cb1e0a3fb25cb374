"""A head exported from an empty ledger (`rin verify --head` before any line) proves what it
can: nothing before it changed, so `verify --against` holds on that ledger and on what grew
from it, and a forged head at notification 0 is found. It was called "past the last stored
notification (0)" — 0 is not past 0."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from ledger.cli.main import app

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sample.jsonl"


def test_a_head_of_the_empty_ledger_verifies_before_and_after_lines_are_applied(
        tmp_path: Path) -> None:
    runner = CliRunner()
    data = ["--data", str(tmp_path / "data")]
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    assert runner.invoke(app, [*data, "apply", str(empty)]).exit_code == 0
    head = runner.invoke(app, [*data, "verify", "--head"])
    assert json.loads(head.stdout)["notification_id"] == 0
    kept = tmp_path / "head.json"
    kept.write_text(head.stdout, encoding="utf-8")
    assert runner.invoke(app, [*data, "verify", "--against", str(kept)]).exit_code == 0
    assert runner.invoke(app, [*data, "apply", str(SAMPLE)]).exit_code == 0
    assert runner.invoke(app, [*data, "verify", "--against", str(kept)]).exit_code == 0
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps({"notification_id": 0, "hash": "00"}), encoding="utf-8")
    refused = runner.invoke(app, [*data, "verify", "--against", str(forged)])
    assert refused.exit_code == 1
    assert "at notification 0 was 00" in refused.output and "past" not in refused.output
