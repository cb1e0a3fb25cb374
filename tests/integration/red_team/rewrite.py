"""The attacker without the key at their best: edit one stored event, then recompute every
per-aggregate link after it, every head row and head.json, exactly as the ledger would."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from uuid import UUID

import orjson
from eventsourcing.persistence import Notification

from ledger.infrastructure.chain import CHAIN_KEY, GENESIS, fold, link
from red_team.attacker import files


def rewrite_history(data: Path, change: Callable[[bytes], bytes | None] | None = None) -> int:
    """Apply `change` to the first stored state it changes (if any); recompute everything
    after. Returns the notification id of the edited event (0 if none)."""
    edited = 0
    with files(data) as db:
        rows = db.execute("SELECT rowid, originator_id, originator_version, topic, state "
                          "FROM stored_events ORDER BY rowid").fetchall()
        heads = {row[0] for row in db.execute("SELECT notification_id FROM rin_heads")}
        chains: dict[str, str] = {}
        head = GENESIS
        for rowid, oid, version, topic, raw in rows:
            state = bytes(raw)
            if change and not edited and (new := change(state)) is not None:
                state, edited = new, rowid
            parsed = json.loads(state)
            parsed[CHAIN_KEY] = link(chains.get(oid, GENESIS), UUID(oid), version, topic, parsed)
            chains[oid] = parsed[CHAIN_KEY]
            rewritten = orjson.dumps(parsed)
            if rewritten != bytes(raw):
                db.execute("UPDATE stored_events SET state = ? WHERE rowid = ?",
                           (rewritten, rowid))
            head = fold(head, Notification(id=rowid, originator_id=UUID(oid),
                                           originator_version=version, topic=topic,
                                           state=rewritten))
            if rowid in heads:
                db.execute("UPDATE rin_heads SET hash = ? WHERE notification_id = ?",
                           (head, rowid))
        last = rows[-1][0]
    kept = data / "head.json"
    if kept.exists():
        kept.write_bytes(orjson.dumps({**orjson.loads(kept.read_bytes()), "hash": head,
                                       "notification_id": last}))
    assert edited or change is None, "nothing matched"
    return edited
