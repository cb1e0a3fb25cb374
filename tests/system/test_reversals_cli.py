"""`reverse` on the command line (`rin apply`): retire → reverse and trade → reverse applied from
a file, a second reversal and a reversal by the wrong party refused with `line N: <citation>:`
and exit 1, `rin trace` showing the reversals, `rin verify` exit 0.

1001 generates 10,000 gallons of ethanol on 2 January 2024 (serials 1..10,000, D6); it sells
4,000 with their fuel to 2001 (sell S1, buy B1, 5 January) and reverses the trade on the 10th
(EMTS 030); it separates 1,000 (lowest serials, now K=2), retires 500 of them as a spill (EMTS
10) on the 12th and unretires them on the 15th.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from ledger.cli.main import app

K1 = "1202410012000100001106{:08d}{:08d}"
K2 = "2202410012000100001106{:08d}{:08d}"
LINES = [
    {"type": "register_party", "party": "1001", "name": "Prairie",
     "roles": ["producer", "blender"], "facilities": ["20001"]},
    {"type": "register_party", "party": "2001", "name": "Gulf", "roles": ["blender"]},
    {"type": "generate", "id": "g1", "date": "2024-01-02", "party": "1001", "facility": "20001",
     "batch": "00001", "fuel": "ethanol", "d_code": 6, "volume": 10_000},
    {"type": "sell", "id": "S1", "date": "2024-01-05", "party": "1001", "to": "2001",
     "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": 4_000}, "volume": 4_000},
    {"type": "buy", "id": "B1", "date": "2024-01-05", "party": "2001", "from": "1001",
     "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": 4_000}, "volume": 4_000,
     "match": "S1"},
    {"type": "reverse", "id": "R1", "date": "2024-01-10", "party": "1001", "command": "S1",
     "reason": "030"},
    {"type": "reverse", "id": "R2", "date": "2024-01-11", "party": "1001", "command": "S1",
     "reason": "030"},
    {"type": "separate", "id": "sep1", "date": "2024-01-11", "party": "1001",
     "reason": "blending", "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": 1_000},
     "volume": 1_000},
    {"type": "retire", "id": "r1", "date": "2024-01-12", "party": "1001", "reason": "spill",
     "rins": {"code": K2.format(1, 500)}},
    {"type": "reverse", "id": "R3", "date": "2024-01-15", "party": "2001", "command": "r1",
     "reason": "10"},
    {"type": "reverse", "id": "R4", "date": "2024-01-15", "party": "1001", "command": "r1",
     "reason": "10"},
]


def test_retire_and_trade_reversed_with_rin_apply(tmp_path: Path) -> None:
    lines = tmp_path / "reversals.jsonl"
    lines.write_text("".join(json.dumps(line) + "\n" for line in LINES), encoding="utf-8")
    runner = CliRunner()

    def rin(*args: str) -> tuple[int, str]:
        result = runner.invoke(app, ["--data", str(tmp_path / "data"), *args])
        assert "Traceback" not in result.output
        return result.exit_code, result.stdout

    code, out = rin("apply", str(lines))
    assert code == 1, out
    refusals = [line for line in out.splitlines() if line.startswith("line ")]
    assert refusals == [
        "line 7: §80.1452(d): S1 was reversed already, on 2024-01-10",
        "line 10: §80.1452(d): retire r1 is not party 2001's: the party that retired them "
        "reverses it",
    ]
    code, out = rin("holdings", "--json")
    assert (code, json.loads(out)) == (0, [
        {"party": "1001", "d_code": 6, "vintage": 2024, "k": 1, "gallon_rins": 9_000},
        {"party": "1001", "d_code": 6, "vintage": 2024, "k": 2, "gallon_rins": 1_000},
    ])
    code, out = rin("trace", K1.format(1, 4_000), "--json")
    assert [(r["date"], r["event"], r["party"]) for r in json.loads(out)
            if r["event"].startswith("trade_reversed")] == [
        ("2024-01-10", "trade_reversed_in", "1001"), ("2024-01-10", "trade_reversed_out", "2001")]
    code, out = rin("trace", K2.format(1, 500), "--json")
    assert [(r["date"], r["event"]) for r in json.loads(out)][-2:] == [
        ("2024-01-12", "retired"), ("2024-01-15", "unretired")]
    assert rin("verify")[0] == 0
