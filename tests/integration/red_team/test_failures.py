"""Red team, issue 9 attack 12 (failures look like bugs) and item 7 (clear failures).

In release 1 a full disk, a lock held over 30 s, a read-only file, PostgreSQL down, a malformed
database file and bad report arguments (`--as-of 2024-02-30`, `trace 123`, a malformed
`--against` file) all ended in Python tracebacks with exit 1, the code for "some lines
refused". Design.md's exit codes: 2 for bad arguments, 3 when the store fails, saying what
failed and (for `rin apply`) the last line committed, every committed line reported first.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from eventsourcing.persistence import OperationalError
from test_hostile_input import BASE
from typer.testing import CliRunner

from ledger.application.handlers import UnitOfWork
from ledger.application.ledger import Ledger
from ledger.application.store_failures import CommitUnknown
from ledger.cli.main import app
from ledger.simulation import generate_market

ROOT = Path(__file__).resolve().parents[3]
CLI = "from ledger.cli.main import main; main()"
FAST = {"RINLEDGER_SQLITE_LOCK_TIMEOUT": "1", "RINLEDGER_POSTGRES_CONNECT_TIMEOUT": "1"}
CLOSED_PORT = "postgresql://rin:rin@127.0.0.1:1/rin"


def rin(*args: str) -> subprocess.CompletedProcess[str]:
    """This worktree's `rin` in a subprocess, with a 1 s lock and connect timeout."""
    return subprocess.run([sys.executable, "-c", CLI, *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, env={**os.environ, **FAST})


def assert_store_failed(done: subprocess.CompletedProcess[str], cause: str) -> None:
    assert done.returncode == 3, (done.returncode, done.stderr)
    assert f"store failed: {cause}" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr + done.stdout, done.stderr


def market_file(folder: Path, lines: int) -> Path:
    """A simulated market of `lines` lines, every line with an id (scripts/simulate.py)."""
    path = folder / "market.jsonl"
    with path.open("w") as out:
        for command in generate_market(lines, 1):
            out.write(json.dumps(command, default=str) + "\n")
    return path


def one_line(folder: Path, party: str = "4001") -> Path:
    path = folder / f"party-{party}.jsonl"
    path.write_text(json.dumps({**BASE["register_party"], "party": party}) + "\n")
    return path


def started_store(folder: Path) -> Path:
    """A data folder whose store holds one registration."""
    data = folder / "data"
    with Ledger(data) as ledger:
        assert ledger.apply(BASE["register_party"]).status == "applied"
    return data


def reported_lines(stdout: str) -> list[int]:
    return [json.loads(line)["line"] for line in stdout.splitlines()]


# ---- disk full -----------------------------------------------------------------------------

@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs (needs root); unmounted afterwards."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(disk)],
                             capture_output=True, check=False)
    if mounted.returncode != 0:
        pytest.skip("mounting a tmpfs needs root (the monkeypatched disk-full test still runs)")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def test_attack_disk_full_exits_3_after_reporting_every_committed_line(
    tmp_path: Path, tiny_disk: Path
) -> None:
    """Issue 9 attack 12: a full disk ended in a traceback and exit 1. Now: exit 3, "the disk
    is full", the last line committed named, and exactly lines 1..N reported and stored."""
    market = market_file(tmp_path, 3000)
    done = rin("--data", str(tiny_disk / "data"), "apply", "--json", "--quiet", str(market))
    assert_store_failed(done, "the disk is full")
    lines = reported_lines(done.stdout)
    assert lines == list(range(1, len(lines) + 1)) and len(lines) >= 200, lines[-3:]
    assert f"last line committed: line {lines[-1]}" in done.stderr
    # The store holds exactly the reported lines: applied again, 1..N are duplicates, N+1 is new.
    shutil.copytree(tiny_disk / "data", tmp_path / "copy")
    with Ledger(tmp_path / "copy") as ledger:
        again = list(ledger.apply_many(market.read_bytes().splitlines()[: lines[-1] + 1]))
    assert {result.status for result in again[:-1]} == {"duplicate"}
    assert again[-1].status != "duplicate"


def test_disk_full_on_a_batch_save_reports_the_batches_before_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same promise without root: the third batch's save fails as SQLite does on a full
    disk; lines 1-400 (two batches of 200) were committed and are each reported."""
    saves = {"count": 0}
    real_save = UnitOfWork.save

    def save(self: UnitOfWork) -> Any:
        saves["count"] += 1
        if saves["count"] == 3:
            raise OperationalError("database or disk is full")
        return real_save(self)

    monkeypatch.setattr(UnitOfWork, "save", save)
    market = market_file(tmp_path, 1000)
    result = CliRunner().invoke(app, ["--data", str(tmp_path / "data"), "apply", "--json",
                                      "--quiet", str(market)])
    assert result.exit_code == 3, result.output
    assert reported_lines(result.stdout) == list(range(1, 401))
    assert "store failed: the disk is full (database or disk is full); last line committed: " \
        "line 400" in result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_lines_whose_commit_is_unknown_are_named_by_their_lines_in_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A commit whose answer was lost and could not be read back (`CommitUnknown`, numbered
    by the library 1, 2, 3) is named in the file's own line numbers, blank lines counted, and
    never said to be "not committed"."""
    def save(self: UnitOfWork) -> Any:
        raise CommitUnknown(1, 3, "read-back failed (injected)")

    monkeypatch.setattr(UnitOfWork, "save", save)
    lines = [json.dumps({"type": "register_party", "party": f"100{n}", "name": f"P{n}",
                         "roles": ["producer"]}) for n in range(3)]
    market = tmp_path / "three.jsonl"
    market.write_text("\n\n".join(lines) + "\n")  # the commands are lines 1, 3 and 5
    result = CliRunner().invoke(app, ["--data", str(tmp_path / "data"), "apply", "--json",
                                      "--quiet", str(market)])
    assert result.exit_code == 3, result.output
    assert reported_lines(result.stdout) == []
    assert result.stderr == (
        "store failed: whether lines 1-5 were committed is unknown: the answer to the commit "
        "was lost and the store could not be read to tell (read-back failed (injected)); a "
        "line with an id is safe to send again (it comes back duplicate), a line without one "
        "is stored twice if it was committed: look for it first (`rin transactions`, "
        "`Ledger.log`); last line committed: none\n")


def test_rin_apply_stopped_by_ctrl_c_names_the_lines_it_cannot_vouch_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stopped by Ctrl-C it printed nothing and exited 130: lines committed but unreported
    were sent again by whoever resumed. Now it names the last line committed and the lines
    read since, in the file's numbers, as unknown."""
    lines = [json.dumps({"type": "register_party", "party": f"100{n}", "name": f"P{n}",
                         "roles": ["producer"]}) for n in range(4)]
    market = tmp_path / "four.jsonl"
    market.write_text(lines[0] + "\n" + "\n\n".join(lines[1:]) + "\n")  # lines 1, 2, 4, 6
    def save(self: UnitOfWork) -> Any:  # the one batch's save
        raise KeyboardInterrupt

    monkeypatch.setattr(UnitOfWork, "save", save)
    result = CliRunner().invoke(app, ["--data", str(tmp_path / "data"), "apply", "--json",
                                      str(market)])
    assert result.exit_code == 130
    assert result.stderr == (
        "interrupted; last line committed: none; whether lines 1-6 were committed is unknown "
        "(read since, their save interrupted): a line with an id is safe to send again (it "
        "comes back duplicate), a line without one is stored twice if it was committed\n")


# ---- lock, read-only, malformed file, server down ------------------------------------------

def test_attack_lock_held_beyond_the_timeout_exits_3(tmp_path: Path) -> None:
    """Issue 9 attack 12: a lock held over the timeout (here 1 s) ended in a traceback."""
    data = started_store(tmp_path)
    holder = sqlite3.connect(data / "events.sqlite", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        done = rin("--data", str(data), "apply", str(one_line(tmp_path, "4002")))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert_store_failed(done, "the store is locked by another process")
    assert "last line committed: none" in done.stderr
    with Ledger(data) as ledger:
        assert ledger.position() == 1  # only the first registration


@contextmanager
def immutable(path: Path) -> Iterator[None]:
    """`path` read-only even for root (`chattr +i`); chmod for anyone else."""
    if os.geteuid() != 0:
        path.chmod(0o555 if path.is_dir() else 0o444)
        yield
        path.chmod(0o755 if path.is_dir() else 0o644)
        return
    if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode != 0:
        pytest.skip("this file system has no immutable attribute (chattr)")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


def test_attack_read_only_store_file_exits_3(tmp_path: Path) -> None:
    """Issue 9 attack 12: a read-only events file ended in a traceback."""
    data = started_store(tmp_path)
    for name in ("events.sqlite-wal", "events.sqlite-shm"):
        (data / name).unlink(missing_ok=True)
    with immutable(data / "events.sqlite"):
        done = rin("--data", str(data), "apply", str(one_line(tmp_path, "4002")))
    assert_store_failed(done, "the store is read-only")
    assert "last line committed: none" in done.stderr


def test_attack_read_only_data_folder_exits_3(tmp_path: Path) -> None:
    """A data folder nobody may write: the store cannot be created (exit 3). A report on a
    folder in it that holds no ledger is a bad argument (exit 2, issue 14: never an empty
    ledger), and nothing is created there."""
    data = tmp_path / "data"
    data.mkdir()
    with immutable(data):
        done = rin("--data", str(data), "apply", str(one_line(tmp_path)))
        report = rin("--data", str(data / "inner"), "holdings")
    assert_store_failed(done, "the store's file cannot be opened or created")
    assert report.returncode == 2 and "no ledger in" in report.stderr, report
    assert not (data / "inner").exists()


@pytest.mark.parametrize("command", [
    ["apply", "LINE"], ["holdings"], ["quarterly", "--year", "2024"], ["verify"],
    ["verify", "--head"], ["project"], ["compliance", "--year", "2024"], ["invalid"],
])
def test_attack_malformed_database_file_exits_3(tmp_path: Path, command: list[str]) -> None:
    """Issue 9 attack 12: a database file of garbage bytes ended in a traceback."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "events.sqlite").write_bytes(os.urandom(1000) * 20)
    args = [str(one_line(tmp_path)) if arg == "LINE" else arg for arg in command]
    assert_store_failed(rin("--data", str(data), *args), "the store's file is not a valid database")


@pytest.mark.parametrize("command", [["apply", "LINE"], ["holdings"], ["verify"]])
def test_attack_postgresql_down_exits_3(tmp_path: Path, command: list[str]) -> None:
    """Issue 9 attack 12: PostgreSQL down (a URL to a closed port) ended in a traceback."""
    args = [str(one_line(tmp_path)) if arg == "LINE" else arg for arg in command]
    done = rin("--store", CLOSED_PORT, *args)
    assert_store_failed(done, "the database server cannot be reached")
    if command[0] == "apply":
        assert "last line committed: none" in done.stderr


# ---- bad arguments: exit 2 on every command, before any store is opened --------------------

HEAD_FILES = {"not-json.json": "{", "list.json": "[1, 2]", "no-hash.json": '{"notification_id": 3}',
              "bool-id.json": '{"notification_id": true, "hash": "ab"}', "latin1.json": "\xff"}


@pytest.mark.parametrize(("args", "words"), [
    (["holdings", "--as-of", "2024-02-30"], "not a calendar date"),
    (["holdings", "--as-of", "2024-W06-6"], "expected a date YYYY-MM-DD"),
    (["holdings", "--as-of", "20240210"], "expected a date YYYY-MM-DD"),
    (["holdings", "--known-at", "yesterday"], "not a notification id or ISO timestamp"),
    (["holdings", "--known-at", "٣"], "not a notification id or ISO timestamp"),
    (["holdings", "--party", "12"], "4-digit company id"),
    (["holdings", "--bogus"], "No such option"),
    (["trace", "123"], "a batch-RIN is 38 characters"),
    (["trace", "x" * 38], "§80.1425"),
    (["trace"], "Missing argument"),
    (["invalid", "--batch", "xyz"], "YYYYCCCCFFFFFBBBBB"),
    (["quarterly", "--year", "abc"], "year"),
    (["quarterly", "--year", "99999"], "2099"),
    (["compliance", "--year", "-5"], "2008"),
    (["compliance", "--year", "2024", "--party", "abcd"], "4-digit company id"),
    (["quarterly"], "Missing option"),
    (["project", "--batch-size", "0"], "batch-size"),
    (["demo", "--size", "-3"], "size"),
    (["apply"], "Missing argument"),
    (["apply", "--nope", "x.jsonl"], "No such option"),
    (["verify", "--against", "missing.json"], "No such file"),
    *((["verify", "--against", name], "--against") for name in HEAD_FILES),
    (["nonsense"], "No such command"),
    (["--store", "mysql://x/y", "holdings"], "expected postgresql://"),
    (["--store", "postgresql://h:notaport/db", "holdings"], "not a PostgreSQL URL"),
    (["--store", "postgresql://h:99999/db", "apply", "x.jsonl"], "Port out of range"),
    (["--data", "FILE", "holdings"], "is not a folder"),
])
def test_attack_bad_argument_exits_2_naming_it(
    tmp_path: Path, args: list[str], words: str
) -> None:
    """Issue 9 attack 12: `--as-of 2024-02-30`, `trace 123` and a malformed `--against` file
    ended in tracebacks. Each bad argument exits 2 with a message naming it, and is checked
    before the store is opened (here a store of garbage bytes, which would exit 3)."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "events.sqlite").write_bytes(b"garbage" * 1000)
    for name, text in HEAD_FILES.items():
        (tmp_path / name).write_bytes(text.encode("latin-1"))
    (tmp_path / "FILE").write_text("a file, not a folder")
    args = [str(tmp_path / arg) if arg.endswith(".json") or arg == "FILE" else arg
            for arg in args]
    result = CliRunner().invoke(app, ["--data", str(data), *args])
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert words in " ".join(result.output.replace("│", " ").split()), result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_exit_1_means_refused_lines_and_nothing_else(tmp_path: Path) -> None:
    """Exit 1 is kept for "some lines refused": one good line and one refused give 1, the good
    line alone 0 (and a store failure 3, above)."""
    good = one_line(tmp_path)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "register_party", "party": true}\n')
    run = CliRunner().invoke
    assert run(app, ["--data", str(tmp_path / "a"), "apply", str(good)]).exit_code == 0
    assert run(app, ["--data", str(tmp_path / "b"), "apply", str(good), str(bad)]).exit_code == 1
