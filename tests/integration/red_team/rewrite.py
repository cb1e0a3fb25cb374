"""The attacker without the key at their best: edit one stored event, then recompute every
per-aggregate link after it, the command rows' chain, every head row and head.json, exactly as
the ledger would."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from uuid import UUID

import orjson
from eventsourcing.persistence import Notification

from ledger.infrastructure.chain import CHAIN_KEY, GENESIS, fold, link
from ledger.infrastructure.command_table import fold_command
from ledger.infrastructure.command_table import link as row_link
from red_team.attacker import files


def rewrite_history(data: Path, change: Callable[[bytes], bytes | None] | None = None) -> int:
    """Apply `change` to the first stored state it changes (if any); recompute everything
    after. Returns the notification id of the edited event (0 if none)."""
    edited = 0
    with files(data) as db:
        rows = db.execute("SELECT rowid, originator_id, originator_version, topic, state "
                          "FROM stored_events ORDER BY rowid").fetchall()
        heads = {row[0] for row in db.execute("SELECT notification_id FROM rin_heads")}
        commands = relink_commands(db)
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
            if rowid in commands:
                head = fold_command(head, rowid, commands[rowid])
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


def relink_commands(db: sqlite3.Connection) -> dict[int, str]:
    """Recompute every command row's `previous` and `chain` in notification id order (after
    rows were deleted, inserted or edited); return each row's chain by notification id."""
    if not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'rin_commands'").fetchone():
        return {}
    chains: dict[int, str] = {}
    previous, chain = 0, GENESIS
    for at, client_id, digest, events in db.execute(
            "SELECT notification_id, client_id, digest, events FROM rin_commands "
            "ORDER BY notification_id").fetchall():
        chain = row_link(chain, at, client_id, digest, orjson.loads(events), previous)
        db.execute("UPDATE rin_commands SET previous = ?, chain = ? WHERE notification_id = ?",
                   (previous, chain, at))
        chains[at], previous = chain, at
    return chains
