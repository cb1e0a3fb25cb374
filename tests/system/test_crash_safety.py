"""Crash safety: `rin apply` and `rin project` are SIGKILLed at many random (seeded) points over
a simulated market file, and restarted until a run completes.

Each apply kill point is a target line drawn at random over the file. Mid-run, the kill comes
inside the batch after the one that commits the target, timed from the store's own count of
commands recorded (never from a clock or the buffered output); where that cannot be, in start-up
or the scan of lines already applied. Every other `rin project` kill point lands mid-run the
same way, by the tracked notification; the rest in its start-up. A kill may lose the uncommitted
batch, which the restart applies again; what must never happen is a partial command or a
duplicate. Afterwards the stored events equal, one for one and in order, those of a clean run
on a fresh store (timestamps and hash chains aside, which hold the recorded time); there is one
command record per applied id; the holdings equal the clean run's; the read models, built by
`rin project` runs killed at random points in between, equal a from-scratch rebuild; and
`rin verify` exits 0. RIN_CRASH_POINTS (default 12 apply kills, 48 under RIN_LONG=1, plus a
third as many project kills) and RIN_CRASH_LINES (default 2,000) make a larger run. Each kill
point is a `rin` start-up (most of its cost), so the default run keeps the fewest that still land
in every phase: start-up and rescan, mid-batch after a commit, and `rin project` mid-run.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from random import Random
from typing import Any

import orjson
from long_profile import sized

from ledger import Ledger
from ledger.simulation import generate_market
from projections import rebuild
from projections.invariants import dump

POINTS = int(os.environ.get("RIN_CRASH_POINTS", sized(12, 48)))
LINES = int(os.environ.get("RIN_CRASH_LINES", "2000"))
SEED = 20240
RIN = [sys.executable, "-c", "from ledger.cli.main import main; main()"]
RECORD_TOPIC = "rin_ledger:CommandRecord.Applied"
VOLATILE = ("timestamp", "chain")  # the recorded time, and the hash chain that covers it


class Run:
    """One `rin` subprocess; with --json output, a thread notes the last line number reported."""

    def __init__(self, data: Path, *args: str) -> None:
        self.started = time.monotonic()
        self.process = subprocess.Popen(
            [*RIN, "--data", str(data), *args], stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.last_line = 0
        self.rejected: list[dict[str, Any]] = []
        self.reached = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            if raw.startswith(b"{"):
                result = orjson.loads(raw)
                with self.reached:
                    self.last_line = result["line"]
                    self.reached.notify_all()
                if result["status"] == "rejected":
                    self.rejected.append(result)
        with self.reached:
            self.reached.notify_all()

    def wait_for_line(self, line: int, timeout: float = 60) -> None:
        """Block until the run reports `line` (or a later one) applied, or ends."""
        with self.reached:
            self.reached.wait_for(
                lambda: self.last_line >= line or self.process.poll() is not None, timeout
            )

    def kill(self) -> bool:
        """SIGKILL the run; True if it was still running (it did not finish first)."""
        running = self.process.poll() is None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()
        self.reader.join(timeout=10)
        return running and self.process.returncode == -signal.SIGKILL

    def finish(self) -> int:
        code = self.process.wait(timeout=600)
        self.reader.join(timeout=10)
        return code


def market(path: Path) -> list[dict[str, Any]]:
    """The simulated market, each line with a command id (added where the simulator gave none)."""
    lines = [{"id": f"line-{n}", **line} for n, line in
             enumerate(generate_market(LINES, SEED), start=1)]
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return lines


def read_only(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)


def records(data: Path) -> int:
    """Command records stored (rows of rin_commands, or in a store of release 2's format
    record events): every line has an id, so this is the number of lines applied."""
    if not (data / "events.sqlite").exists():
        return 0
    with read_only(data / "events.sqlite") as db:
        try:
            return int(db.execute("SELECT COUNT(*) FROM stored_events WHERE topic = ?",
                                  (RECORD_TOPIC,)).fetchone()[0]
                       + db.execute("SELECT COUNT(*) FROM rin_commands").fetchone()[0])
        except sqlite3.OperationalError:  # killed before the tables were created
            return 0


def tracked(data: Path) -> int:
    """The read models' tracked notification id (0 before the first batch)."""
    try:
        with read_only(data / "views.sqlite") as db:
            row = db.execute("SELECT MAX(notification_id) FROM tracking").fetchone()
    except sqlite3.Error:
        return 0
    return row[0] or 0


def events(data: Path) -> list[tuple[Any, ...]]:
    """Every stored event in notification order, without its recorded time and chain."""
    with read_only(data / "events.sqlite") as db:
        rows = db.execute("SELECT rowid, originator_id, originator_version, topic, state "
                          "FROM stored_events ORDER BY rowid").fetchall()
    out = []
    for rowid, originator, version, topic, state in rows:
        body = {k: v for k, v in json.loads(state).items() if k not in VOLATILE}
        out.append((rowid, originator, version, topic, json.dumps(body, sort_keys=True)))
    return out


def positions(data: Path, parties: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Every party's holdings from its aggregate, and its blocks with their codes."""
    with Ledger(data) as ledger:
        return {p: ledger.holdings(p) + ledger.blocks(p) for p in parties}


@dataclass
class Tally:
    """What the kill points did."""

    apply_kills: int = 0
    apply_partial: int = 0  # killed while running, after committing some lines, before the end
    project_kills: int = 0
    project_partial: int = 0
    notes: list[str] = field(default_factory=list)


BATCH = 200  # lines a `rin apply` transaction (Ledger.apply_many's default)
PROJECT_BATCH = "10"  # events a `rin project` transaction: many commits to land between


@dataclass(frozen=True)
class Timing:
    """The clean runs' seconds: `rin apply` to its first commit (start-up and one batch) and in
    all, and `rin project` to its first commit."""

    first_commit: float
    apply: float
    project_first_commit: float

    @property
    def batch(self) -> float:
        """Seconds to apply one batch of new lines."""
        return (self.apply - self.first_commit) * BATCH / (LINES - BATCH)


def commit_gaps(count: Callable[[], int], goal: int, run: Run) -> list[float]:
    """Poll the store's own count (commands recorded, or notifications tracked) until it
    reaches `goal` or the run ends; the seconds between the commits seen on the way."""
    seen, value = [], count()
    while value < goal and run.process.poll() is None:
        time.sleep(0.002)
        now, latest = time.monotonic(), count()
        if latest != value:
            seen.append(now)
            value = latest
    return [b - a for a, b in itertools.pairwise(seen)]


def kill_mid_run(count: Callable[[], int], goal: int, run: Run, rng: Random) -> None:
    """Kill inside the transaction after the one that reaches `goal`: at a random moment up
    to half the shortest time between two commits this same run was seen to make (at once if
    `goal` came with its first). Timed from
    the store's own progress, not from a clock or the buffered output: by the clean run's
    clock, a machine quieter than the clean run's committed several batches in the wait (CI on
    41e822d: 'apply 0→800', one partial run of the two needed)."""
    gaps = commit_gaps(count, goal, run)
    time.sleep(rng.uniform(0, min(gaps, default=0) / 2))


def kill_apply(data: Path, file: Path, total: int, target: int, rng: Random, timing: Timing,
               tally: Tally) -> None:
    """One apply kill point. Mid-run, when `target` is still to apply and at least two batches
    before the end (so the kill cannot come after it): inside the batch after the one that
    commits it. Otherwise, in start-up or the scan of the lines already applied: up to a
    batch's time after the run reports a random one of them (0: from the start)."""
    before = records(data)
    run = Run(data, "apply", str(file), "--json", "--quiet")
    if before < target <= total - 2 * BATCH:
        kill_mid_run(lambda: records(data), target, run, rng)
    else:
        run.wait_for_line(rng.randint(0, before))
        time.sleep(rng.uniform(0, timing.batch))
    was_running = run.kill()
    after = records(data)
    tally.apply_kills += 1
    tally.apply_partial += was_running and before < after < total
    tally.notes.append(f"apply {before}→{after}{'' if was_running else ' (finished)'}")


def kill_project(data: Path, rng: Random, timing: Timing, tally: Tally) -> None:
    """One project kill point; every other one mid-run: inside the transaction after the one
    that tracks a random notification at least two transactions in and, before the end, five
    transactions and a third of what is left. The others, and those with too little to
    project: by the clock, a random moment up to start-up and the first transaction as the
    clean run took them."""
    before = tracked(data)
    with read_only(data / "events.sqlite") as db:
        stored = db.execute("SELECT MAX(rowid) FROM stored_events").fetchone()[0]
    step = int(PROJECT_BATCH)
    first, last = before + 2 * step + 1, stored - max(5 * step, (stored - before) // 3)
    run = Run(data, "project", "--quiet", "--batch-size", PROJECT_BATCH)
    if tally.project_kills % 2 == 0 and first <= last:
        kill_mid_run(lambda: tracked(data), rng.randint(first, last), run, rng)
    else:
        time.sleep(rng.uniform(0, timing.project_first_commit))
    was_running = run.kill()
    after = tracked(data)
    tally.project_kills += 1
    tally.project_partial += was_running and before < after
    tally.notes.append(f"project {before}→{after}{'' if was_running else ' (finished)'}")


def test_killed_apply_and_project_runs_resume_exactly_once(tmp_path: Path) -> None:
    rng = Random(SEED)
    file = tmp_path / "market.jsonl"
    lines = market(file)
    total = len(lines)
    parties = [line["party"] for line in lines if line["type"] == "register_party"]

    # The clean reference run, on a fresh store, timed: the kill points are drawn against it.
    reference = tmp_path / "reference"
    run = Run(reference, "apply", str(file), "--json", "--quiet")
    run.wait_for_line(1)
    first_commit = time.monotonic() - run.started
    assert run.finish() == 0
    applied = time.monotonic() - run.started
    run = Run(reference, "project", "--quiet", "--batch-size", PROJECT_BATCH)
    while not tracked(reference) and run.process.poll() is None:
        time.sleep(0.002)
    project_first_commit = time.monotonic() - run.started
    assert run.finish() == 0
    timing = Timing(first_commit, applied, project_first_commit)
    assert records(reference) == total  # the simulator's lines are all valid: every id applied

    # The kill points: sorted target lines over the file, each with a random moment.
    crashed = tmp_path / "crashed"
    tally = Tally()
    targets = sorted(rng.randint(1, total) for _ in range(POINTS))
    project_every = 3
    for number, target in enumerate(targets):
        kill_apply(crashed, file, total, target, rng, timing, tally)
        if number % project_every == project_every - 1:
            kill_project(crashed, rng, timing, tally)
    last = Run(crashed, "apply", str(file), "--json", "--quiet")
    assert last.finish() == 0, last.rejected[:3]
    for _ in range(2):
        kill_project(crashed, rng, timing, tally)
    subprocess.run([*RIN, "--data", str(crashed), "project", "--quiet"], check=True)
    print(f"\n{LINES:,} lines; {tally.apply_kills} apply kill points "
          f"({tally.apply_partial} mid-run with partial progress), {tally.project_kills} project "
          f"kill points ({tally.project_partial} mid-run): " + ", ".join(tally.notes))

    # Every command exactly once: the same events, one for one, as the clean run.
    assert records(crashed) == total
    assert events(crashed) == events(reference)
    assert positions(crashed, parties) == positions(reference, parties)
    # The read models built across the killed `rin project` runs equal a from-scratch rebuild.
    with Ledger(crashed) as ledger, tempfile.TemporaryDirectory() as folder:
        rebuild(ledger, Path(folder) / "views.sqlite")
        assert dump(crashed / "views.sqlite") == dump(Path(folder) / "views.sqlite")
    verified = subprocess.run([*RIN, "--data", str(crashed), "verify"], capture_output=True,
                              text=True)
    assert verified.returncode == 0, verified.stdout
    # The kills did land mid-run: killed processes had committed part of the file.
    assert tally.apply_partial >= min(4, POINTS // 6), tally.notes
    assert tally.project_partial >= 2, tally.notes
