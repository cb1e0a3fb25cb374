"""Issue 9, item 1 (attack 1): snapshots are trusted but never verified.

The attacker edits a party's row in `stored_snapshots`: adds the producer role and a facility
to an obligated party (so that it could generate 5,000,000 gallon-RINs), or gives a party a
block another party holds. The edited snapshot must never decide a command (its seal fails, so
the party is replayed from its events), and `verify` names the row. An attacker who also
recomputes the seal's digest (anyone can, without a key) gets the snapshot used, but `verify`
still names it by comparing it with the replay; with a key, the seal's MAC cannot be recomputed.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from store_access import app_of

from ledger.application.ledger import Ledger
from ledger.domain.party import Party
from ledger.infrastructure.chain import SEAL_KEY
from ledger.infrastructure.snapshot_seal import body_digest
from red_team.attacker import build, files, make_key, verify

DATA = Path(__file__).resolve().parents[2] / "data"
MINT = {"type": "generate", "date": "2024-03-05", "party": "3001", "facility": "20009",
        "batch": "00002", "fuel": "ethanol", "d_code": 6, "volume": "5000000"}


def edit_snapshot(data: Path, party: str, change: Callable[[dict[str, Any]], None],
                  reseal: bool = False) -> int:
    """Edit the party's latest snapshot's aggregate state in place; return its version."""
    with files(data) as db:
        version, raw = db.execute(
            "SELECT originator_version, state FROM stored_snapshots WHERE originator_id = ? "
            "ORDER BY originator_version DESC LIMIT 1", (Party.create_id(party).hex,)
        ).fetchone()
        state = orjson.loads(raw)
        change(state["state"])
        if reseal and SEAL_KEY in state:  # the seal stays the last key, as the ledger puts it
            body = orjson.dumps({k: v for k, v in state.items() if k != SEAL_KEY})
            state[SEAL_KEY]["digest"] = body_digest(body)
        db.execute("UPDATE stored_snapshots SET state = ? WHERE originator_id = ? AND "
                   "originator_version = ?", (orjson.dumps(state), Party.create_id(party).hex,
                                              version))
    return int(version)


def make_producer(state: dict[str, Any]) -> None:
    state["roles"] = sorted({*state["roles"], "producer"})
    state["facilities"] = [*state["facilities"], "20009"]


def test_an_edited_snapshot_never_decides_a_command_and_verify_names_it(tmp_path: Path) -> None:
    build(tmp_path)
    version = edit_snapshot(tmp_path, "3001", make_producer)
    with Ledger(tmp_path) as ledger:
        assert "producer" not in ledger.party("3001").roles  # replayed past the snapshot
        result = ledger.apply(MINT)
    assert result.status == "rejected", result
    assert "producer" in (result.error or "") or "registered" in (result.error or "")
    out = verify(tmp_path)
    assert out.exit_code == 1, out.output
    assert f"stored_snapshots row of party 3001 at version {version:,}" in out.output
    assert "facilities, roles" in out.output


def test_a_resealed_snapshot_without_a_key_is_still_named_by_verify(tmp_path: Path) -> None:
    """Without a key the seal is a digest the attacker can recompute (the README says so)."""
    build(tmp_path)
    version = edit_snapshot(tmp_path, "3001", make_producer, reseal=True)
    out = verify(tmp_path)
    assert out.exit_code == 1
    assert f"stored_snapshots row of party 3001 at version {version:,}: differs from the " \
           "replay of its events in facilities, roles" in out.output


def test_with_a_key_a_resealed_snapshot_is_not_used(tmp_path: Path) -> None:
    key = make_key(tmp_path)
    data = tmp_path / "data"
    build(data, key)
    edit_snapshot(data, "3001", make_producer, reseal=True)  # the MAC cannot be recomputed
    with Ledger(data, key=key) as ledger:
        assert "producer" not in ledger.party("3001").roles
        assert ledger.apply(MINT).status == "rejected"
    assert verify(data).exit_code == 1


def test_holdings_given_by_a_snapshot_cannot_be_sold(tmp_path: Path) -> None:
    """The refiner really holds 10,000 + 210 × 10 = 12,100 K=2 gallon-RINs; its snapshot is
    given the blender's 40,000 − 12,100 = 27,900 instead. A sale of 20,000 K=2 by the refiner
    must still be refused: it holds 12,100 (§80.1428(a))."""
    build(tmp_path)
    with Ledger(tmp_path) as ledger:
        assert ledger.holdings("3001")[0]["gallon_rins"] == 12_100
        blender = app_of(ledger).mapper.transcoder.encode(ledger.party("2001").holdings)

    def steal(state: dict[str, Any]) -> None:
        state["holdings"] = orjson.loads(blender)

    edit_snapshot(tmp_path, "3001", steal)
    sale = {"type": "transfer", "date": "2024-03-06", "from": "3001", "to": "1001",
            "rins": {"d_code": 6, "vintage": 2024, "k": 2, "quantity": 20_000}}
    with Ledger(tmp_path) as ledger:
        assert ledger.holdings("3001")[0]["gallon_rins"] == 12_100
        assert ledger.apply(sale).status == "rejected"
    out = verify(tmp_path)
    assert out.exit_code == 1 and "in holdings" in out.output


@pytest.fixture
def release_1(tmp_path: Path) -> Path:
    """A copy of the store written by release 1 (tests/data/make_store_r1.py): unsealed
    snapshots of parties 2001 and 3001."""
    shutil.copytree(DATA / "store_r1", tmp_path / "r1")
    return tmp_path / "r1"


def test_release_1_store_verifies_and_its_unsealed_snapshots_are_checked(release_1: Path) -> None:
    assert verify(release_1).exit_code == 0
    edit_snapshot(release_1, "2001", make_producer)
    with Ledger(release_1) as ledger:
        assert "producer" not in ledger.party("2001").roles  # an unsealed snapshot is not used
    out = verify(release_1)
    assert out.exit_code == 1 and "stored_snapshots row of party 2001" in out.output
