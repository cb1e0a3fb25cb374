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
        assert f"{name}: a rollback journal of a database that held pages" in \
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


def test_export_never_writes_its_report_over_a_sqlite_database(data: Path,
                                                               tmp_path: Path) -> None:
    # helper-72: `rin export --output report.xml`, report.xml a symlink to events.sqlite,
    # overwrote the event store with the XML
    report = tmp_path / "report.xml"
    report.symlink_to(data / "events.sqlite")
    before = digest(data / "events.sqlite")
    refused = rin(data, "export", "--party", "2001", "--from", "2024-01-01", "--to",
                  "2024-12-31", "--output", str(report))
    said = " ".join(refused.output.replace("│", " ").split())  # as the error box wraps it
    assert refused.exit_code == 2 and "a SQLite database (the event store?)" in said, said
    assert digest(data / "events.sqlite") == before


@pytest.mark.parametrize("plant", ["dangling link", "fifo"])
def test_examples_never_write_through_a_planted_name_nor_read_a_fifo(
        tmp_path: Path, plant: str) -> None:
    folder, outside = tmp_path / "ex", tmp_path / "outside"
    folder.mkdir()
    if plant == "fifo":
        os.mkfifo(folder / "sample.jsonl")
    else:
        (folder / "sample.jsonl").symlink_to(outside)
    done: list[object] = []
    worker = threading.Thread(target=lambda: done.append(rin(tmp_path / "data", "examples",
                                                             str(folder))), daemon=True)
    worker.start()
    worker.join(120)
    assert done, "rin examples hung"
    assert done[0].exit_code == 2  # type: ignore[attr-defined]
    assert "not a regular file" in done[0].output  # type: ignore[attr-defined]
    assert not outside.exists()


def test_a_data_folder_named_like_a_uri_is_a_folder_and_its_files_are_checked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # helper-72: `--data file:d` had SQLite open the URI file:d/events.sqlite past every check
    # of the path, so a -shm hard-linked to another ledger's store destroyed it
    monkeypatch.chdir(tmp_path)
    victim = tmp_path / "victim"
    build(victim)
    before = digest(victim / "events.sqlite")
    folder = Path("file:d")
    build(folder)
    assert rin(folder, "verify").exit_code == 0
    assert (tmp_path / "file:d" / "events.sqlite").is_file()
    assert (tmp_path / "file:d" / "views.sqlite").is_file()  # the views beside it, not elsewhere
    (folder / "events.sqlite-shm").unlink(missing_ok=True)
    os.link(victim / "events.sqlite", folder / "events.sqlite-shm")
    refused = rin(folder, "holdings")
    assert refused.exit_code == 3 and "a link to another file" in refused.output
    assert digest(victim / "events.sqlite") == before
