"""`rin trades` and `rin holdings --blocks` on the command line: a trade's whole life applied
from a file, its postings as JSON and CSV, `reserved` a JSON boolean, a bad `--status` exit 2."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from ledger.cli.main import app

LINES = [
    {"type": "register_party", "party": "1001", "name": "Prairie", "roles": ["producer"],
     "facilities": ["20001"]},
    {"type": "register_party", "party": "2001", "name": "Gulf", "roles": ["blender"]},
    {"type": "generate", "id": "g1", "date": "2024-01-02", "party": "1001", "facility": "20001",
     "batch": "00001", "fuel": "ethanol", "d_code": 6, "volume": 10_000},
    {"type": "sell", "id": "S1", "date": "2024-01-05", "party": "1001", "to": "2001",
     "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": 4_000}, "volume": 4_000},
    {"type": "buy", "id": "B1", "date": "2024-01-05", "party": "2001", "from": "1001",
     "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": 4_000}, "volume": 4_000,
     "match": "S1"},
    {"type": "sell", "id": "S2", "date": "2024-01-05", "party": "1001", "to": "2001",
     "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": 100}, "volume": 100},
]


def test_a_trades_life_on_the_command_line(tmp_path: Path) -> None:
    lines = tmp_path / "trades.jsonl"
    lines.write_text("".join(json.dumps(line) + "\n" for line in LINES), encoding="utf-8")
    runner = CliRunner()

    def rin(*args: str) -> tuple[int, str]:
        result = runner.invoke(app, ["--data", str(tmp_path / "data"), *args])
        return result.exit_code, result.stdout

    assert rin("apply", str(lines))[0] == 0
    code, out = rin("trades", "--json")
    assert code == 0
    assert [(r["id"], r["side"], r["status"], r["match"]) for r in json.loads(out)] == [
        ("S1", "sell", "completed", None), ("B1", "buy", "completed", "S1"),
        ("S2", "sell", "pending", None)]
    code, out = rin("trades", "--party", "2001", "--status", "pending", "--csv")
    assert (code, out.splitlines()[1].split(",")[:5]) == (0, ["S2", "sell", "1001", "2001",
                                                             "pending"])
    code, out = rin("holdings", "--party", "1001", "--blocks", "--json")
    # 1001 kept 4,001..10,000; S2 reserves the lowest 100 of them
    assert [(b["rin"][22:], b["reserved"]) for b in json.loads(out)] == [
        ("0000400100004100", True), ("0000410100010000", False)]
    assert rin("trades", "--status", "open")[0] == 2
    assert rin("trades", "--party", "12")[0] == 2
