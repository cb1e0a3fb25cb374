"""The files of a SQLite database the ledger keeps, as they must be before SQLite opens them,
and files the ledger writes, never through a planted link.

SQLite derives `<file>-wal`, `<file>-shm` and `<file>-journal` from the database's real path
and truncates, rewrites or replays them: one that is a second name (a hard link) of another
file, or a symbolic link, has SQLite overwrite what it names (an `events.sqlite` hard-linked as
`views.sqlite-shm` was destroyed by verify's first read of the views file, helper-68; another
ledger's store by a hard-linked `events.sqlite-shm`, helper-70); a FIFO there hung every
command; a rollback journal beside a database kept in WAL mode is never one of its own, and
SQLite rolled another database's into the event store (helper-71). The database itself must be
a regular file with one name: SQLite keeps a WAL per name, so a store reached by two hard links
lost a commit verified through the other. The lock files the ledger keeps beside its files
(`-turn`, `-setup`) and the small files it writes are opened without following a link.
"""

from __future__ import annotations

import errno
import os

from eventsourcing.persistence import PersistenceError

#: the files SQLite writes beside a database: its write-ahead log, shared memory, journal
SIBLINGS = ("-wal", "-shm", "-journal")
JOURNAL = "-journal"


def sqlite_path(path: str | os.PathLike[str]) -> str:
    """`path` as SQLite must be given a path: one that begins "file:" (a folder so named) is
    made absolute, as SQLite, opening names as URIs (this build does so even unasked), would
    otherwise take it for one and open another file, past every check made on the path."""
    text = os.fspath(path)
    return os.path.abspath(text) if text.startswith("file:") else text


class LinkedFile(PersistenceError):
    """A file SQLite (or the ledger itself) would write through to another file, or one it
    would wait on or replay into a store that is not its own."""


def database_problem(path: str | os.PathLike[str]) -> str | None:
    """What is wrong with the database file at `path` or the files SQLite writes beside it
    (at its real path: a symlinked database's are the target's), or None. For a database kept
    in WAL mode, which both the event store and the views are."""
    real = os.path.realpath(path)
    if os.path.exists(real) and not os.path.isfile(real):
        return f"{path}: not a regular file (SQLite would wait on it or fail)"
    if os.path.isfile(real) and os.stat(real).st_nlink > 1:
        return (f"{path}: a second name (hard link) of a database file: SQLite keeps a write-"
                "ahead log per name, so commits through one name are lost through the other; "
                "give it one name (a symbolic link to it is safe)")
    for suffix in SIBLINGS:
        sibling = f"{real}{suffix}"
        if os.path.islink(sibling) or (os.path.isfile(sibling) and os.stat(sibling).st_nlink > 1):
            return (f"{sibling}: a link to another file, which SQLite would overwrite (remove "
                    "it: SQLite makes its own)")
        if os.path.lexists(sibling) and not os.path.isfile(sibling):
            return f"{sibling}: not a regular file (remove it: SQLite makes it anew)"
        if suffix == JOURNAL and foreign_journal(real, sibling):
            return (f"{sibling}: a rollback journal of a database that held pages, beside one "
                    "kept in WAL mode, so another database's, which SQLite would roll into "
                    "this one (move it aside)")
    return None


#: a rollback journal's header begins with these bytes (sqlite.org/fileformat.html, 4.1)
JOURNAL_MAGIC = bytes.fromhex("d9d505f920a163d7")


def foreign_journal(database: str, journal: str) -> bool:
    """Whether `journal` is a rollback journal beside `database` that cannot be the database's
    own: the database is in WAL mode (header bytes 18-19 both 2), which writes no journal
    once made, and the journal records a database of more than one page when it began. The
    one journal a store in WAL mode can leave is that of its making, when it switched to WAL
    (a crash there, or another process making it at that moment): of an empty database."""
    try:
        with open(database, "rb") as db_file, open(journal, "rb") as journal_file:
            header, opened = db_file.read(20), journal_file.read(20)
    except OSError:
        return False
    return (header[18:20] == b"\x02\x02" and opened[:8] == JOURNAL_MAGIC
            and int.from_bytes(opened[16:20], "big") > 1)


def refuse_database_problem(path: str | os.PathLike[str]) -> None:
    """Raise `LinkedFile` if `database_problem` finds one: before any connection is made."""
    problem = database_problem(path)
    if problem is not None:
        raise LinkedFile(problem)


def open_lock_file(path: str) -> int:
    """A descriptor of the lock file at `path`, made if missing, never through a link (a
    symbolic one is refused by the open itself, a hard one by its link count)."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise LinkedFile(f"{path}: a symbolic link, where the ledger keeps a lock file of "
                             "its own (remove it: the ledger makes it)") from error
        raise
    if os.fstat(fd).st_nlink > 1:
        os.close(fd)
        raise LinkedFile(f"{path}: a second name of another file, where the ledger keeps a "
                         "lock file of its own (remove it: the ledger makes it)")
    return fd


#: the first bytes of every SQLite database file (sqlite.org/fileformat.html, 1.3.1)
DATABASE_MAGIC = b"SQLite format 3\x00"


def is_database(path: str | os.PathLike[str]) -> bool:
    """Whether `path` names (through any link) an existing SQLite database file: a report
    written there would destroy it (a symlink to events.sqlite given as `--output`)."""
    real = os.path.realpath(path)
    if not os.path.isfile(real):  # never opened: a FIFO would wait for a writer
        return False
    try:
        with open(real, "rb") as file:
            return file.read(16) == DATABASE_MAGIC
    except OSError:
        return False


def write_new(path: str | os.PathLike[str], data: bytes, mode: int = 0o644) -> None:
    """Write `data` to a file made at `path`, which must not exist: never through a link
    planted there (`FileExistsError` otherwise)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 mode)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
