"""Files an attacker plants in or beside the data folder, which the ledger's own commands must
never write through, replay, wait on, or let destroy the event store (helper-71): another
database's hot journal as `events.sqlite-journal` (SQLite rolled it into the store on the
first open), a FIFO there (every command hung), `events.sqlite` reached by two hard links (a
commit verified through one name was lost through the other), a symlink planted at the name
`rin keygen` writes the public key to, `rin demo` its marker, or `head.json` its temporary
copy; `--views` naming a device or a FIFO. Each is refused, naming the file, and nothing is
written."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import threading
from pathlib import Path

import pytest
from store_access import app_of

from ledger import Ledger
from ledger.infrastructure.head_file import HEAD_FILE, keep_head
from red_team.attacker import build, rin


@pytest.fixture
def data(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    build(folder)
    return folder


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def hot_journal(folder: Path) -> Path:
    """A hot rollback journal of another SQLite database (its transaction spilled to disk,
    copied before the rollback)."""
    other = folder / "other.db"
    db = sqlite3.connect(other, isolation_level=None)
    db.execute("PRAGMA page_size = 4096")
    db.execute("PRAGMA journal_mode = DELETE")
    db.execute("CREATE TABLE junk (x)")
    db.executemany("INSERT INTO junk VALUES (?)", [(os.urandom(200),) for _ in range(200)])
    db.execute("PRAGMA cache_size = 2")
    db.execute("BEGIN")
    db.execute("UPDATE junk SET x = zeroblob(300)")
    journal = folder / "other.db-journal-copy"
    shutil.copyfile(f"{other}-journal", journal)
    db.execute("ROLLBACK")
    db.close()
    assert journal.stat().st_size > 0
    return journal


@pytest.mark.parametrize("name", ["events.sqlite-journal", "views.sqlite-journal"])
def test_another_databases_hot_journal_beside_a_store_is_refused(
        data: Path, tmp_path: Path, name: str) -> None:
    assert rin(data, "project", "-q").exit_code == 0
    shutil.copyfile(hot_journal(tmp_path), data / name)
    before = digest(data / "events.sqlite")
    for command in (("verify",), ("holdings",)):
        refused = rin(data, *command)
        assert refused.exit_code in (1, 3), refused.output
        assert f"{name}: a rollback journal beside a database kept in WAL mode" in \
            refused.output, refused.output
    assert digest(data / "events.sqlite") == before
    (data / name).unlink()  # what the message asks
    assert rin(data, "verify").exit_code == 0


@pytest.mark.parametrize("name", ["events.sqlite-journal", "events.sqlite-wal",
                                  "views.sqlite-journal"])
def test_a_fifo_beside_a_store_is_refused_without_hanging(data: Path, name: str) -> None:
    (data / name).unlink(missing_ok=True)
    os.mkfifo(data / name)
    done: list[object] = []
    worker = threading.Thread(target=lambda: done.append(rin(data, "holdings")), daemon=True)
    worker.start()
    worker.join(120)
    assert done, "rin holdings hung on the FIFO"
    refused = done[0]
    assert refused.exit_code == 3  # type: ignore[attr-defined]
    assert f"{name}: not a regular file" in refused.output  # type: ignore[attr-defined]


def test_an_event_store_reached_by_two_hard_links_is_refused(data: Path,
                                                             tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    os.link(data / "events.sqlite", other / "events.sqlite")
    for folder in (data, other):
        refused = rin(folder, "holdings")
        assert refused.exit_code == 3
        assert "events.sqlite: a second name (hard link) of a database file" in refused.output
    (other / "events.sqlite").unlink()
    (other / "events.sqlite").symlink_to(data / "events.sqlite")  # what the message allows
    assert rin(other, "holdings").exit_code == 0


def test_keygen_writes_no_key_through_a_link_planted_at_its_public_name(
        tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (tmp_path / "key.pub").symlink_to(victim)
    made = rin(tmp_path / "data", "keygen", str(tmp_path / "key"))
    assert made.exit_code == 2 and "key.pub" in made.output
    assert victim.read_text() == "precious\n"
    assert not (tmp_path / "key").exists()  # nothing written: no private key left behind


def test_demo_writes_its_marker_over_a_planted_link_not_through_it(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    data = tmp_path / "data"
    data.mkdir()
    (data / "demo.json").symlink_to(victim)
    assert rin(data, "demo").exit_code == 0
    assert victim.read_text() == "precious\n"
    assert not (data / "demo.json").is_symlink()


def test_head_json_is_never_written_through_a_link_at_its_temporary_name(data: Path,
                                                                        tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (data / HEAD_FILE).unlink()  # so the head is written whole, by rename
    temporary = data / f".{HEAD_FILE}.{os.getpid()}.{threading.get_ident()}"
    temporary.symlink_to(victim)
    with Ledger(data) as ledger:
        keep_head(app_of(ledger))  # the head of this thread's last commit: none yet
        ledger.apply({"type": "register_party", "party": "7771", "name": "P",
                      "roles": ["producer"]})
    assert victim.read_text() == "precious\n"
    assert (data / HEAD_FILE).is_file() and not (data / HEAD_FILE).is_symlink()


def test_views_naming_a_fifo_are_refused_and_nothing_is_made_beside_it(
        data: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for command in (("holdings",), ("project",)):
        refused = rin(data, "--views", str(fifo), *command)
        assert refused.exit_code == 3 and "not a regular file" in refused.output
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("pipe")) == ["pipe"]
