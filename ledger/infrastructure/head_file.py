"""The latest head kept in a second place: `head.json` beside a SQLite event store.

The head rows live in the store (ledger/infrastructure/heads.py), so someone who deletes a tail of
events and the head rows over it leaves a smaller store that is consistent in itself. After each
commit the ledger also writes its head to `<data>/head.json` (atomically, by rename); `verify`
checks the store still holds that head. The write is made by a writer thread (`HeadKeeper`),
off the command's path: a rename over the file costs a single command about 0.6 ms at the
median and 8-10 ms at its 99th percentile on this machine's ext4 (issue 15), more than the
commit itself. The head reaches the file moments after its commit, one write for any number
of commits in between, and the ledger waits for it when closed, when the process exits, and
before it reads `head.json` itself; so what `verify` is promised is unchanged: a crash just
after a commit leaves `head.json` at the head before it, as it did when the write followed
the commit in the same thread. This raises the bar (two places to roll back, not one) but
is no proof: the file sits beside the data, so whoever can rewrite both can roll both back. Only a
head kept elsewhere (`rin verify --head` exported, then `--against`) catches that.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any
from uuid import UUID

import orjson
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from eventsourcing.application import Application

from ledger.infrastructure.heads import Head
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


def write_head(path: Path, head: Head) -> None:
    """`head` into `path`, atomically: written beside it, then renamed over it."""
    temporary = path.with_name(f".{HEAD_FILE}.{os.getpid()}.{threading.get_ident()}")
    try:
        temporary.write_bytes(orjson.dumps(head.to_dict()))
        os.replace(temporary, path)
    except OSError:
        # The transaction is committed: its results must still be reported. A head.json that
        # cannot be written stays at an older head, which verify still checks.
        temporary.unlink(missing_ok=True)


class HeadKeeper:
    """Writes the latest head given to `head.json` on a thread of its own, in the order given,
    skipping heads a later one overtook before it was written. Its executor's thread finishes
    the writes queued when the process exits (ThreadPoolExecutor joins its workers then)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._latest: Head | None = None
        self._queued: Future[None] | None = None  # the write that will take `_latest`
        self._last: Future[None] | None = None
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="head.json")

    def keep(self, head: Head) -> None:
        with self._lock:
            self._latest = head
            if self._queued is not None:
                return
            try:
                self._queued = self._last = self._writer.submit(self._write)
                return
            except RuntimeError:  # closed (or the process is exiting): write it here
                self._latest = None
        write_head(self.path, head)

    def _write(self) -> None:
        with self._lock:
            head, self._queued = self._latest, None
        if head is not None:
            write_head(self.path, head)

    def flush(self) -> None:
        """Wait until the last head given is in the file."""
        last = self._last
        if last is not None:
            last.result()

    def close(self) -> None:
        self.flush()
        self._writer.shutdown(wait=True)


def head_keeper(env: Mapping[str, str]) -> HeadKeeper | None:
    """The keeper of `head.json` beside a SQLite store; None for PostgreSQL (no data folder)."""
    events = env.get("SQLITE_DBNAME")
    return HeadKeeper(Path(events).parent / HEAD_FILE) if events else None


def keep_head(app: Application[UUID]) -> None:
    """Have the head this thread's last commit stored written to `head.json`, if there is one."""
    heads = getattr(app.recorder, "heads", None)
    keeper: HeadKeeper | None = getattr(app, "head_keeper", None)
    if heads is None or heads.last is None or keeper is None:
        return
    keeper.keep(heads.last)


def read_head_file(app: Application[UUID]) -> dict[str, Any] | str | None:
    """The head kept in `head.json`, None if there is none, or why it cannot be read; the
    head this application last gave its keeper is written first."""
    keeper: HeadKeeper | None = getattr(app, "head_keeper", None)
    if keeper is not None:
        keeper.flush()
    path = head_path(app)
    if path is None or not path.exists():
        return None
    try:
        head = orjson.loads(path.read_bytes())
        if not (isinstance(head, dict) and isinstance(head.get("notification_id"), int)
                and isinstance(head.get("hash"), str)):
            return f"{path} is not a head"
        return head
    except (OSError, ValueError) as exc:
        return f"{path} cannot be read: {exc}"
