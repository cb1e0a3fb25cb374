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
by hand, or by an older release) is replaced whole, by rename, as before.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any
from uuid import UUID

import orjson
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from eventsourcing.application import Application

from ledger.infrastructure.signing import Signer

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
            temporary.write_bytes(record)
            os.replace(temporary, path)
        finally:
            temporary.unlink(missing_ok=True)
    except OSError:
        # The transaction is committed: its results must still be reported. A head.json that
        # cannot be written stays at an older head, which verify still checks.
        pass


def write_in_place(path: Path, record: bytes) -> bool:
    """Overwrite `path` with `record` if it is a file of `RECORD` bytes; False if it is not."""
    try:
        fd = os.open(path, os.O_WRONLY)
    except FileNotFoundError:
        return False
    try:
        if os.fstat(fd).st_size != RECORD:
            return False
        return os.pwrite(fd, record, 0) == RECORD
    finally:
        os.close(fd)


def stable_bytes(path: Path, tries: int = 5) -> bytes:
    """`path`'s bytes once two reads in a row agree (a write in place in progress is seen as
    a difference, and read again)."""
    last = path.read_bytes()
    for _ in range(tries):
        again = path.read_bytes()
        if again == last:
            break
        last = again
    return last


def read_head_file(app: Application[UUID]) -> dict[str, Any] | str | None:
    """The head kept in `head.json`, None if there is none, or why it cannot be read."""
    path = head_path(app)
    if path is None or not path.exists():
        return None
    try:
        head = orjson.loads(stable_bytes(path))
        if not (isinstance(head, dict) and isinstance(head.get("notification_id"), int)
                and isinstance(head.get("hash"), str)):
            return f"{path} is not a head"
        return head
    except (OSError, ValueError) as exc:
        return f"{path} cannot be read: {exc}"
