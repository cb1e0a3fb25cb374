"""The latest head kept in a second place: `head.json` beside a SQLite event store.

The head rows live in the store (ledger/infrastructure/heads.py), so someone who deletes a tail of
events and the head rows over it leaves a smaller store that is consistent in itself. After each
commit the ledger also writes its head to `<data>/head.json`; `verify` checks the store still
holds that head. This raises the bar (two places to roll back, not one) but is no proof: the
file sits beside the data, so whoever can rewrite both can roll both back. Only a head kept
elsewhere (`rin verify --head` exported, then `--against`) catches that.

The file is one record of `RECORD` bytes (the JSON, padded with spaces, which JSON allows),
overwritten in place by one `pwrite`. A rename over the file (every write before issue 15's
fourth round) cost a single command 0.4 ms at the median and 10-12 ms at its 99th percentile
on this machine's ext4, which starts the new file's writeback on such a rename; the write in
place costs 3 µs (docs/single-command.md). A crash leaves the old record or the new one on a
disk that writes a 512-byte sector whole (else verify names head.json as unreadable or not
held by the store: a false alarm, never a head wrongly accepted), and a reader takes the file
once two reads agree, so a write in progress is read again. A file of another size (written
by hand, or by an older release) is replaced whole, by rename, as before; so is anything that
is not a regular file (a symbolic link, whose target is never written; a FIFO, which would
block the writer for ever). A reader names those, and a file larger than `LONGEST`, as not a
head, without reading them (a link to /dev/zero must not fill the memory).
"""

from __future__ import annotations

import errno
import os
import stat
import threading
from pathlib import Path
from typing import Any
from uuid import UUID

import orjson
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from eventsourcing.application import Application

from ledger.infrastructure.signing import Signer
from ledger.infrastructure.sqlite_files import write_new

HEAD_FILE = "head.json"
KeySource = str | os.PathLike[str] | Ed25519PrivateKey | Signer | None


def use_key(app: Application[UUID], key: KeySource) -> Signer | None:
    """Sign the store's heads and MAC its snapshot seals with `key` (None: neither)."""
    signer = Signer.of(key)
    heads = getattr(app.recorder, "heads", None)
    if heads is not None:
        heads.signer = signer
    app.mapper.signer = signer  # type: ignore[attr-defined]
    return signer


def heed_head_file(app: Application[UUID]) -> None:
    """Hold the store's writes to the head `head.json` names: a store whose heads end before it
    lost its tail (or was replaced by an older copy), and writing to it would overwrite the one
    record of that (ledger/infrastructure/heads.py `BehindHeadFile`). Read once, on opening."""
    heads = getattr(app.recorder, "heads", None)
    kept = read_head_file(app)
    if heads is not None and isinstance(kept, dict):
        heads.floor = int(kept["notification_id"])


def head_path(app: Application[UUID]) -> Path | None:
    """`head.json` beside a SQLite store's file; None for PostgreSQL (no data folder)."""
    events = app.env.get("SQLITE_DBNAME")
    return Path(events).parent / HEAD_FILE if events else None


#: head.json's size: a signed head is about 250 bytes of JSON; one disk sector at most
RECORD = 512


def keep_head(app: Application[UUID]) -> None:
    """Write the head this thread's last commit stored to `head.json`, if there is one."""
    heads = getattr(app.recorder, "heads", None)
    path = head_path(app)
    if heads is None or heads.last is None or path is None:
        return
    record = orjson.dumps(heads.last.to_dict()).ljust(RECORD)
    try:
        if len(record) == RECORD and write_in_place(path, record):
            return
        temporary = path.with_name(f".{HEAD_FILE}.{os.getpid()}.{threading.get_ident()}")
        try:
            temporary.unlink(missing_ok=True)  # a link planted at the name is not written
            write_new(temporary, record)  # through, nor then renamed over head.json
            os.replace(temporary, path)
        finally:
            temporary.unlink(missing_ok=True)
    except OSError:
        # The transaction is committed: its results must still be reported. A head.json that
        # cannot be written stays at an older head, which verify still checks.
        pass


#: the largest head file read: a record, or a signed head written whole by an older release
LONGEST = 8 * RECORD
#: what opening a name that is not a regular file for writing without blocking says
NOT_A_FILE = frozenset({errno.ELOOP, errno.ENXIO, errno.EISDIR, errno.ENOTDIR})


class NotAHeadFile(OSError):
    """`head.json` is not a regular file of at most `LONGEST` bytes: never followed or read."""


def open_file(path: Path, flags: int) -> tuple[int, int]:
    """A descriptor of `path` and its size, if it is a regular file, opened without following a
    symbolic link or waiting for a FIFO's other end; `NotAHeadFile` if it is something else."""
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise NotAHeadFile("is a symbolic link (never followed)") from error
        if error.errno in NOT_A_FILE:
            raise NotAHeadFile(f"is not a regular file ({error.strerror})") from error
        raise
    status = os.fstat(fd)
    if not stat.S_ISREG(status.st_mode):
        os.close(fd)
        raise NotAHeadFile(f"is not a regular file (mode {stat.filemode(status.st_mode)})")
    return fd, status.st_size


def write_in_place(path: Path, record: bytes) -> bool:
    """Overwrite `path` with `record` if it is a regular file of `RECORD` bytes; False if it
    is not (missing, another size, a link, a FIFO: replaced by rename)."""
    try:
        fd, size = open_file(path, os.O_WRONLY)
    except (FileNotFoundError, NotAHeadFile):
        return False
    try:
        if size != RECORD:
            return False
        return os.pwrite(fd, record, 0) == RECORD
    finally:
        os.close(fd)


def bounded_bytes(path: Path) -> bytes:
    """`path`'s bytes, if it is a regular file of at most `LONGEST` bytes."""
    fd, _ = open_file(path, os.O_RDONLY)
    try:
        body = os.pread(fd, LONGEST + 1, 0)
    finally:
        os.close(fd)
    if len(body) > LONGEST:
        raise NotAHeadFile(f"is longer than a head ({LONGEST:,} bytes at most)")
    return body


def stable_bytes(path: Path, tries: int = 5) -> bytes:
    """`path`'s bytes once two reads in a row agree (a write in place in progress is seen as
    a difference, and read again)."""
    last = bounded_bytes(path)
    for _ in range(tries):
        again = bounded_bytes(path)
        if again == last:
            break
        last = again
    return last


def read_head_file(app: Application[UUID]) -> dict[str, Any] | str | None:
    """The head kept in `head.json`, None if there is none, or why it cannot be read."""
    path = head_path(app)
    if path is None or not os.path.lexists(path):
        return None
    try:
        head = orjson.loads(stable_bytes(path))
        if not isinstance(head, dict):
            return f"{path} is not a head"
        number = head.get("notification_id")
        if not (isinstance(number, int) and not isinstance(number, bool)
                and isinstance(head.get("hash"), str)):
            return f"{path} is not a head"
        return head
    except NotAHeadFile as exc:
        return f"{path} {exc}: not the head file the ledger writes"
    except (OSError, ValueError) as exc:
        return f"{path} cannot be read: {exc}"
