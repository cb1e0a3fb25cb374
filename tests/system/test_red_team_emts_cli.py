"""Red team for issue 12's EMTS model on the command line: `rin apply` of hostile and careless
lines (locks, QAP, the blocked list, reversals) must print `line N: <citation>: …` for each
refusal, exit 1, print no traceback and store nothing of a refused line; `rin compliance`
stops counting a locked retired RIN; `rin holdings --blocks` says `locked`; `rin verify` holds.

The market (tests/integration/red_team/test_emts_attacks.py): 1002 generates 1,000 gallons of
ethanol on 1 January 2024, 1001 10,000 on the 2nd, both sold with their fuel to 2001 on the 3rd;
2001 sells 4,000 of 1001's with fuel to the obligated 3001 on the 5th, which separates them
(§80.1429(b)(1)) and retires the 4,000 K=2 RINs for its 2024 RF obligation of 4,000.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import Result
from typer.testing import CliRunner

from ledger.cli.main import app
from tests.integration.red_team.test_emts_attacks import A2, BATCH_A, MARKET, A

SETUP: list[dict[str, Any]] = [
    *MARKET,
    {"type": "transfer", "id": "t1", "date": "2024-01-05", "from": "2001", "to": "3001",
     "rins": {"code": A.format(1, 4_000)}, "volume": 4_000},
    {"type": "separate", "id": "sep", "date": "2024-01-06", "party": "3001",
     "reason": "obligated_party", "rins": {"code": A.format(1, 4_000)}, "volume": 4_000},
    {"type": "retire", "id": "r1", "date": "2025-02-01", "party": "3001", "reason": "compliance",
     "compliance_year": 2024, "rins": {"code": A2.format(1, 4_000)}},
]
HOSTILE: list[Any] = [
    {"type": "lock", "date": "2024-01-10", "batch": {"company": "1001"}, "reason": "x"},
    {"type": "lock", "date": "2024-01-10", "batch": "1202410012000100001106", "reason": "x"},
    {"type": "lock", "date": "2024-01-10", "batch": BATCH_A, "reason": "r" * 201},
    {"type": "lock", "date": "2024-01-10", "batch": BATCH_A, "reason": "x", "party": "9001"},
    {"type": "verify_batch", "date": "2024-01-04", "party": "2001", "batch": BATCH_A,
     "qap": "Q"},
    {"type": "verify_batch", "date": "2024-01-04", "party": "9001", "batch": BATCH_A,
     "qap": "X"},
    {"type": "transfer", "date": "2024-01-05", "from": "2001", "to": "3001", "volume": 10,
     "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": 10, "qap": "Z"}},
    {"type": "transfer", "date": "2024-01-05", "from": "2001", "to": "9001", "volume": 10,
     "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": 10}},
    {"type": "reverse", "id": "Rx", "date": "2024-01-09", "party": "3001", "command": "t1",
     "reason": "030"},
    {"type": "reverse", "id": "Ry", "date": "2024-01-04", "party": "2001", "command": "t1",
     "reason": "030"},
    {"type": "reverse", "id": "Rz", "date": "2024-01-09", "party": "2001", "command": "nope",
     "reason": "030"},
    {"type": "reverse", "id": "Rw", "date": "2024-01-09", "party": "2001", "command": "t1",
     "reason": "999"},
    {"type": "retire", "date": "2025-02-01", "party": "3001", "reason": "compliance",
     "compliance_year": 2024, "rins": {"code": A2.format(1, 10)}, "compliance_level": "x"},
]


def rin(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


def write(path: Path, lines: list[Any]) -> str:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return str(path)


def applied_rf(data: str) -> int:
    out = rin("--data", data, "compliance", "--year", "2024", "--party", "3001", "--json")
    assert out.exit_code == 0, out.output
    return int(next(r for r in json.loads(out.stdout) if r["category"] == "RF")["applied"])


def test_every_hostile_line_is_refused_with_its_citation_and_stores_nothing(tmp_path: Path
                                                                            ) -> None:
    data = str(tmp_path / "d")
    assert rin("--data", data, "apply", write(tmp_path / "s.jsonl", SETUP)).exit_code == 0
    head = rin("--data", data, "verify", "--head")
    result = rin("--data", data, "apply", write(tmp_path / "h.jsonl", HOSTILE))
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    lines = result.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == [f"line {n}" for n in
                                                      range(1, len(HOSTILE) + 1)], lines
    for line in lines:  # `line N: <citation>: <message>`, a paragraph or `format`
        citation = line.split(": ")[1]
        assert citation.startswith("§80.") or citation == "format", line
    assert rin("--data", data, "verify", "--head").stdout == head.stdout  # nothing stored
    verified = rin("--data", data, "verify")
    assert verified.exit_code == 0, verified.output


def test_a_lock_stops_a_retired_rin_counting_and_blocks_say_locked(tmp_path: Path) -> None:
    data = str(tmp_path / "d")
    assert rin("--data", data, "apply", write(tmp_path / "s.jsonl", SETUP)).exit_code == 0
    assert applied_rf(data) == 4_000
    locked = rin("--data", data, "apply", write(tmp_path / "l.jsonl", [
        {"type": "lock", "date": "2025-03-01", "batch": A.format(1, 1), "reason": "audit"},
        {"type": "transfer", "date": "2025-03-02", "from": "2001", "to": "3001",
         "rins": {"code": A.format(4_001, 4_010)}, "volume": 10}]))
    assert locked.exit_code == 1, locked.output
    assert locked.stdout.startswith("line 2: §80.1474(b)(1): "), locked.stdout
    assert applied_rf(data) == 0
    blocks = rin("--data", data, "holdings", "--blocks", "--party", "2001", "--json")
    assert {r["rin"]: r["locked"] for r in json.loads(blocks.stdout)} == {
        "12024100220002000011060000000100001000": False, A.format(4_001, 10_000): True}
    unlocked = rin("--data", data, "apply", write(tmp_path / "u.jsonl", [
        {"type": "unlock", "date": "2025-03-05", "batch": BATCH_A, "reason": "cleared"}]))
    assert unlocked.exit_code == 0, unlocked.output
    assert applied_rf(data) == 4_000
    verified = rin("--data", data, "verify")
    assert verified.exit_code == 0, verified.output


def test_an_unretire_from_a_file_then_verify(tmp_path: Path) -> None:
    data = str(tmp_path / "d")
    assert rin("--data", data, "apply", write(tmp_path / "s.jsonl", SETUP)).exit_code == 0
    out = rin("--data", data, "apply", write(tmp_path / "r.jsonl", [
        {"type": "reverse", "id": "R1", "date": "2025-02-02", "party": "3001", "command": "r1",
         "reason": "80"}]))
    assert out.exit_code == 0, out.output
    assert applied_rf(data) == 0
    trace = rin("--data", data, "trace", A2.format(1, 4_000), "--json")
    assert json.loads(trace.stdout)[-1]["date"] == "2025-02-02", trace.stdout
    verified = rin("--data", data, "verify")
    assert verified.exit_code == 0, verified.output


WEIRD: list[Any] = [
    {"type": "lock", "date": "2024-01-10", "batch": None, "reason": "x"},
    {"type": "lock", "date": "2024-01-10", "batch": {}, "reason": "x"},
    {"type": "lock", "date": "2024-01-10", "batch": True, "reason": "x"},
    {"type": "unlock", "date": "2024-01-10", "batch": BATCH_A, "reason": None},
    {"type": "verify_batch", "date": "2024-01-04", "party": "9001", "batch": BATCH_A,
     "qap": ["Q"]},
    {"type": "verify_batch", "date": "2024-01-04", "party": "9001", "batch": BATCH_A,
     "qap": "QA"},
    {"type": "block_generator", "date": "2024-01-04", "party": "3001", "generator": None},
    {"type": "unblock_generator", "date": "2024-01-04", "party": "3001", "generator": "1002",
     "extra": 1},
    {"type": "reverse", "id": "R9", "date": "2024-01-09", "party": "2001", "command": None,
     "reason": "030"},
    {"type": "reverse", "id": "R8", "date": "2024-01-09", "party": "2001", "command": "t1",
     "reason": "030" * 80},
    {"type": "reverse", "date": "2024-01-09", "party": "2001", "command": "t1",
     "reason": "030", "id": ["R7"]},
    {"type": "retire", "date": "2025-02-01", "party": "3001", "reason": "compliance",
     "compliance_year": 2024, "rins": {"code": A2.format(1, 10)},
     "compliance_level": "facility", "compliance_facility": 30001},
]


def test_malformed_emts_lines_are_refused_one_by_one_without_traceback(tmp_path: Path) -> None:
    data = str(tmp_path / "d")
    assert rin("--data", data, "apply", write(tmp_path / "s.jsonl", SETUP)).exit_code == 0
    head = rin("--data", data, "verify", "--head")
    result = rin("--data", data, "apply", write(tmp_path / "w.jsonl", WEIRD))
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert [line.split(":")[0] for line in result.stdout.splitlines()] == [
        f"line {n}" for n in range(1, len(WEIRD) + 1)], result.stdout
    assert rin("--data", data, "verify", "--head").stdout == head.stdout
