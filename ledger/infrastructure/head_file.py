"""The latest head kept in a second place: `head.json` beside a SQLite event store.

The head rows live in the store (ledger/infrastructure/heads.py), so someone who deletes a tail of
events and the head rows over it leaves a smaller store that is consistent in itself. After each
commit the ledger also writes its head to `<data>/head.json` (atomically, by rename); `verify`
checks the store still holds that head. This raises the bar (two places to roll back, not one) but
is no proof: the file sits beside the data, so whoever can rewrite both can roll both back. Only a
head kept elsewhere (`rin verify --head` exported, then `--against`) catches that.
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


def keep_head(app: Application[UUID]) -> None:
    """Write the head this thread's last commit stored to `head.json`, if there is one."""
    heads = getattr(app.recorder, "heads", None)
    path = head_path(app)
    if heads is None or heads.last is None or path is None:
        return
    temporary = path.with_name(f".{HEAD_FILE}.{os.getpid()}.{threading.get_ident()}")
    try:
        temporary.write_bytes(orjson.dumps(heads.last.to_dict()))
        os.replace(temporary, path)
    except OSError:
        # The transaction is committed: its results must still be reported. A head.json that
        # cannot be written stays at an older head, which verify still checks.
        temporary.unlink(missing_ok=True)


def read_head_file(app: Application[UUID]) -> dict[str, Any] | str | None:
    """The head kept in `head.json`, None if there is none, or why it cannot be read."""
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
