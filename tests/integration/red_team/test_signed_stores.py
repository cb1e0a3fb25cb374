"""Issue 9, item 2 on both stores: signed head rows are written in the events' transaction on
SQLite and on PostgreSQL (RIN_TEST_POSTGRES_URL), checked by `audit`, and a signed store
refuses a writer without its key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import Store
from store_access import app_of

from ledger.application.ledger import Ledger
from ledger.infrastructure.audit import audit
from ledger.infrastructure.signing import KeyRequired, Signer, load_private, load_public
from red_team.attacker import MARKET, make_key


def execute(ledger: Ledger, sql: str, params: tuple[Any, ...] = ()) -> None:
    """The attacker's write, through the store's own connection (SQLite or PostgreSQL)."""
    sqlite = "SQLITE_DBNAME" in app_of(ledger).env
    with app_of(ledger).recorder.datastore.transaction(commit=True) as c:  # type: ignore[attr-defined]
        c.execute(sql if sqlite else sql.replace("?", "%s"), params)


def test_signed_heads_on_each_store(store: Store, tmp_path: Path) -> None:
    key = make_key(tmp_path)
    public = load_public(f"{key}.pub")
    with Ledger(store.data, store=store.url, env=store.env, key=key) as ledger:
        assert all(r.status == "applied" for r in ledger.apply_many(MARKET[:20], batch_size=7))
        assert audit(app_of(ledger), public) == []
        heads = app_of(ledger).recorder.heads  # type: ignore[attr-defined]
        assert heads.last.signature is not None
        assert heads.last.key == Signer(load_private(key)).fingerprint
    with Ledger(store.data, store=store.url, env=store.env) as ledger:
        before = ledger.position()
        with pytest.raises(KeyRequired):
            ledger.apply(MARKET[20])
        # nothing stored: PostgreSQL's recorder commits what a later hook refuses, so the
        # key is checked before the insert (ledger/infrastructure/postgres_recorder.py)
        assert ledger.position() == before
        table = app_of(ledger).recorder.heads.table  # type: ignore[attr-defined]
        execute(ledger, f"UPDATE {table} SET signature = NULL WHERE notification_id = "
                        f"(SELECT MAX(notification_id) FROM {table})")
        problems = audit(app_of(ledger), public)
    assert any("not signed, after signing began" in p for p in problems), problems
