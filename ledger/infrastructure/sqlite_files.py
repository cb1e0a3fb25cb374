"""The files SQLite writes beside a database, which must never be links.

SQLite derives `<file>-wal`, `<file>-shm` and `<file>-journal` from the database's real path
and truncates and rewrites them: one that is a second name (a hard link) of another file, or
a symbolic link, has SQLite overwrite what it names. An `events.sqlite` hard-linked as
`views.sqlite-shm` was destroyed by verify's first read of the views file (helper-68), another
ledger's store by a hard-linked `events.sqlite-shm` (helper-70). The lock files the ledger
keeps beside its files (`-turn`, `-setup`) are opened without following a link: a `-turn` linked
to `events.sqlite` took the writers' turn on the events file, and closing it dropped SQLite's
own locks (helper-70).
"""

from __future__ import annotations

import errno
import os

from eventsourcing.persistence import PersistenceError

#: the files SQLite writes beside a database: its write-ahead log, shared memory, journal
SIBLINGS = ("-wal", "-shm", "-journal")


class LinkedFile(PersistenceError):
    """A file SQLite (or the ledger's own lock) would write through to another file."""


def linked_sibling(path: str | os.PathLike[str]) -> str | None:
    """What is wrong if a file SQLite writes beside the database at `path` (its real path: a
    symlinked database's siblings are the target's) is a link, or None."""
    real = os.path.realpath(path)
    for suffix in SIBLINGS:
        sibling = f"{real}{suffix}"
        if os.path.islink(sibling) or (os.path.isfile(sibling) and os.stat(sibling).st_nlink > 1):
            return (f"{sibling}: a link to another file, which SQLite would overwrite (remove "
                    "it: SQLite makes its own)")
    return None


def refuse_linked_siblings(path: str | os.PathLike[str]) -> None:
    """Raise `LinkedFile` if `linked_sibling` finds one: before any connection is made."""
    linked = linked_sibling(path)
    if linked is not None:
        raise LinkedFile(linked)


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
