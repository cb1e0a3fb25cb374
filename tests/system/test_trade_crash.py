"""Crash harness for EMTS trades (§80.1452): a writer process SIGKILLed between a sell and its
buy, inside the transaction that completes the trade (rows written, not committed), right after
that commit (before its answer reached anyone), and at random moments of `rin apply` over a file
of sell/buy pairs. After a restart each posting is stored exactly once and is pending (or
completed) as the last commit left it, a pending sell's reservation holds its exact ranges,
`verify` holds, and sending the same lines again is idempotent (`duplicate`).

1001 generates 10,000 gallons of ethanol (EV 1.0: serials 1..10,000, §80.1426(f)(1)) on
2 January 2024 and sells 4,000 K=1 gallon-RINs with 1,600 gallons (2.5 a gallon) to 2001.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import date, timedelta
from pathlib import Path
from random import Random
from typing import Any

import orjson
from test_crash_safety import Run, records

from ledger import Ledger
from ledger.domain.party import Party
from ledger.domain.trade_book import Status
from projections import verify
from tests.postings import postings, status

RIN = [sys.executable, "-c", "from ledger.cli.main import main; main()"]
SETUP = [
    {"type": "register_party", "id": "r1", "party": "1001", "name": "Prairie",
     "roles": ["producer"], "facilities": ["20001"]},
    {"type": "register_party", "id": "r2", "party": "2001", "name": "Gulf", "roles": ["blender"]},
    {"type": "generate", "id": "g1", "date": "2024-01-02", "party": "1001", "facility": "20001",
     "batch": "00001", "fuel": "ethanol", "d_code": 6, "volume": 10_000},
]
RINS = {"d_code": 6, "vintage": 2024, "k": 1, "quantity": 4_000}
SELL = {"type": "sell", "id": "S1", "date": "2024-01-05", "party": "1001", "to": "2001",
        "rins": RINS, "volume": 1_600, "price": "1.10"}
BUY = {"type": "buy", "id": "B1", "date": "2024-01-05", "party": "2001", "from": "1001",
       "rins": RINS, "volume": 1_600, "price": "1.10", "match": "S1"}
SELL_DAY = date(2024, 1, 5)
CODE = "1202410012000100001106{:08d}{:08d}"  # K=1, 2024, 1001, 20001, batch 00001, RR 10, D6

#: a child process: apply the lines of argv[2] to the store in argv[1], one `Ledger.apply`
#: each, printing each status; with argv[3] = "in-commit" it SIGKILLs itself inside the
#: transaction that closes a posting (its rows inserted, not committed), with "after-commit"
#: right after the line that closes one has committed, before printing its result; then waits
CHILD = """
import os, signal, sys, orjson
from ledger import Ledger
from ledger.domain.party import Party
from ledger.infrastructure.sqlite_recorder import BatchSQLiteApplicationRecorder as Recorder
data, lines, where = sys.argv[1], orjson.loads(sys.argv[2]), sys.argv[3]
insert = Recorder.insert_in_transaction
def dying(self, c, stored, unchanged, commands=(), snapshots=None):
    ids = insert(self, c, stored, unchanged, commands, snapshots)
    if where == "in-commit" and any(s.topic == Party.TradeClosed.TOPIC for s in stored):
        os.kill(os.getpid(), signal.SIGKILL)
    return ids
Recorder.insert_in_transaction = dying
with Ledger(data) as ledger:
    for line in lines:
        result = ledger.apply(line)
        if where == "after-commit" and line["type"] == "buy":
            os.kill(os.getpid(), signal.SIGKILL)
        print(result.status, flush=True)
    sys.stdin.read()
"""


def child(data: Path, lines: list[dict[str, Any]], where: str = "") -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", CHILD, str(data), json.dumps(lines), where],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def set_up(data: Path) -> None:
    with Ledger(data) as ledger:
        assert {ledger.apply(line).status for line in SETUP} == {"applied"}


def stored(ledger: Ledger, topic: str, client_id: str) -> int:
    """How many events of `topic` carry `client_id` (a posting's, or its closing command's)."""
    return sum(1 for logged in ledger.log.events() if topic == logged.event.__class__.TOPIC
               and getattr(logged.event, "client_id", None) == client_id)


def reservation(ledger: Ledger) -> list[tuple[int, int]]:
    """The exact ranges 1001's pending sells reserve."""
    return [(b.start, b.end) for p in ledger.party("1001").trades.reservations() for b in p.rins]


def assert_pending_once(data: Path) -> None:
    """The sell is stored once, pending, reserving serials 1..4,000 (first in, first out) and
    1,600 gallons; the buy left nothing; the reserved RINs cannot go elsewhere; verify holds."""
    with Ledger(data) as ledger:
        assert stored(ledger, Party.TradePosted.TOPIC, "S1") == 1
        assert stored(ledger, Party.TradePosted.TOPIC, "B1") == 0
        assert ledger.party("1001").trades.open["S1"].status is Status.PENDING
        assert reservation(ledger) == [(1, 4_000)]
        assert ledger.party("1001").trades.reserved_volume() == 1_600
        assert ledger.holdings("2001") == []
        spend = ledger.apply({"type": "transfer", "date": "2024-01-08", "from": "1001",
                              "to": "2001", "rins": {"code": CODE.format(1, 10)}, "volume": 4})
        assert (spend.status, spend.rule) == ("rejected", "TRADE-RESERVED")
        assert verify(ledger) == []


def assert_completed_once(data: Path) -> None:
    """The trade completed once: serials 1..4,000 and 1,600 gallons with 2001, nothing
    reserved, one move each way, and the same lines sent again are duplicates."""
    with Ledger(data) as ledger:
        for line in (SELL, BUY):
            assert ledger.apply(line).status == "duplicate"
        assert stored(ledger, Party.TradePosted.TOPIC, "S1") == 1
        assert stored(ledger, Party.TradePosted.TOPIC, "B1") == 1
        assert stored(ledger, Party.TransferredOut.TOPIC, "B1") == 1
        assert [status(ledger, p, i) for p, i in
                (("1001", "S1"), ("2001", "B1"))] == [Status.COMPLETED, Status.COMPLETED]
        assert [b["rin"] for b in ledger.blocks("2001")] == [CODE.format(1, 4_000)]
        assert reservation(ledger) == []
        assert ledger.party("2001").fuel.balance(SELL_DAY) == 1_600
        assert verify(ledger) == []


def test_killed_between_the_sell_and_its_buy(tmp_path: Path) -> None:
    set_up(tmp_path)
    run = child(tmp_path, [SELL])
    assert run.stdout is not None and run.stdout.readline().strip() == "applied"
    run.send_signal(signal.SIGKILL)  # the sell committed; the buy never sent
    assert run.wait() == -signal.SIGKILL
    assert_pending_once(tmp_path)
    with Ledger(tmp_path) as ledger:
        assert ledger.apply(SELL).status == "duplicate"  # the seller sends its line again
    assert_pending_once(tmp_path)
    with Ledger(tmp_path) as ledger:
        assert ledger.apply(BUY).status == "applied"
    assert_completed_once(tmp_path)


def test_killed_inside_the_completing_transaction(tmp_path: Path) -> None:
    """The buy's rows are written but never committed: the posting stays pending, the
    reservation intact; sending the buy again completes the trade once."""
    set_up(tmp_path)
    run = child(tmp_path, [SELL, BUY], "in-commit")
    assert run.stdout is not None and run.stdout.readline().strip() == "applied"
    assert run.wait(timeout=120) == -signal.SIGKILL
    assert_pending_once(tmp_path)
    with Ledger(tmp_path) as ledger:
        assert ledger.apply(SELL).status == "duplicate"
        assert ledger.apply(BUY).status == "applied"
    assert_completed_once(tmp_path)


def test_killed_after_the_completion_committed(tmp_path: Path) -> None:
    """The answer was lost, the commit was not: the trade is completed, once; the resent
    lines are duplicates."""
    set_up(tmp_path)
    run = child(tmp_path, [SELL, BUY], "after-commit")
    assert run.wait(timeout=120) == -signal.SIGKILL
    assert_completed_once(tmp_path)


PAIRS = int(os.environ.get("RIN_TRADE_CRASH_PAIRS", "150"))  # 500: 14 min on a loaded machine
KILLS = int(os.environ.get("RIN_TRADE_CRASH_KILLS", "8"))


def pairs_file(path: Path) -> list[dict[str, Any]]:
    """The set-up, then `PAIRS` trades of 10 gallon-RINs with 4 gallons each, sell first
    then the buy naming it, each dated its own day in 2024 (serials 1..10·PAIRS, FIFO)."""
    lines = list(SETUP)
    for n in range(PAIRS):
        on = (SELL_DAY + timedelta(days=n % 300)).isoformat()
        rins = {"d_code": 6, "vintage": 2024, "k": 1, "quantity": 10}
        lines += [{"type": "sell", "id": f"S{n}", "date": on, "party": "1001", "to": "2001",
                   "rins": rins, "volume": 4},
                  {"type": "buy", "id": f"B{n}", "date": on, "party": "2001", "from": "1001",
                   "rins": rins, "volume": 4, "match": f"S{n}"}]
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return lines


def test_rin_apply_killed_at_random_resumes_every_trade_exactly_once(tmp_path: Path) -> None:
    """`rin apply` over sell/buy pairs, SIGKILLed at seeded random moments (a little after it
    reports a random line not yet committed) and restarted until a run completes: every
    posting is stored once and completed once, 2001 holds exactly the 10·PAIRS serials, and
    verify holds."""
    file = tmp_path / "pairs.jsonl"
    lines = pairs_file(file)
    data = tmp_path / "data"
    rng = Random(1452)
    partial = 0
    notes = []
    for _ in range(KILLS):
        before = records(data)
        if before == len(lines):
            break
        run = Run(data, "apply", str(file), "--json", "--quiet")
        run.wait_for_line(rng.randint(before + 1, len(lines)))
        time.sleep(rng.uniform(0, 0.02))  # 0.3 s let a fast machine finish all 303 lines
        was_running = run.kill()
        after = records(data)
        partial += was_running and before < after < len(lines)
        notes.append(f"{before}→{after}")
    last = subprocess.run([*RIN, "--data", str(data), "apply", str(file), "--json"],
                          capture_output=True, text=True, timeout=600)
    assert last.returncode == 0, last.stdout[-2000:]
    statuses = [orjson.loads(row)["status"] for row in last.stdout.splitlines()]
    assert set(statuses) <= {"applied", "duplicate"} and len(statuses) == len(lines)
    print(f"\n{PAIRS} sell/buy pairs; kills at command records {', '.join(notes)} "
          f"({partial} mid-run with partial progress); the last run found "
          f"{statuses.count('duplicate')} lines already applied")
    with Ledger(data) as ledger:
        for n in range(PAIRS):
            assert stored(ledger, Party.TradePosted.TOPIC, f"S{n}") == 1
            assert stored(ledger, Party.TradePosted.TOPIC, f"B{n}") == 1
            assert stored(ledger, Party.TransferredOut.TOPIC, f"B{n}") == 1
        assert {p.status for p in postings(ledger, "1001").values()} == {Status.COMPLETED}
        assert ledger.party("1001").trades.open == {}
        assert ledger.holdings("2001")[0]["gallon_rins"] == 10 * PAIRS
        assert reservation(ledger) == []
        assert verify(ledger) == []
    assert partial > 0, ("no kill landed after some lines committed: the test proved nothing",
                         notes)
