"""Holdings in snapshots: grouped by slot (D code, vintage, K), decoded only when used; the
release-1 store's snapshots still load."""

from __future__ import annotations

import shutil
import sqlite3
from copy import deepcopy
from datetime import date, timedelta
from functools import reduce
from pathlib import Path
from uuid import UUID

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st
from store_access import app_of

from ledger import Ledger
from ledger.domain.holdings import Holdings
from ledger.domain.party import Party
from ledger.domain.rin import BlockKey, RinBlock
from ledger.infrastructure.transcodings import HoldingsAsRecords

STORE_R1 = Path(__file__).parents[1] / "data" / "store_r1"
HOLDINGS = HoldingsAsRecords()


def _stored(holdings: Holdings) -> Holdings:
    """`holdings` saved as a snapshot stores it (JSON) and read back."""
    return HOLDINGS.decode(orjson.loads(orjson.dumps(HOLDINGS.encode(holdings))))


def test_release_1_snapshots_load_and_equal_a_replay(tmp_path: Path) -> None:
    """The release-1 fixture's snapshots are in the slot format (the first, flat format that
    the removed shim read is in none of them) and decode to what replaying the events gives."""
    shutil.copytree(STORE_R1, tmp_path / "r1")
    with sqlite3.connect(tmp_path / "r1" / "events.sqlite") as db:
        rows = db.execute(
            "SELECT originator_id, originator_version, state FROM stored_snapshots"
        ).fetchall()
    assert len(rows) == 2
    with Ledger(tmp_path / "r1") as ledger:
        for originator, version, state in rows:
            raw = orjson.loads(state)["state"]["holdings"]["_data_"]
            assert all(isinstance(slot[0], int) and len(slot) == 4 for slot in raw)
            loaded = HOLDINGS.decode(raw)
            events = app_of(ledger).events.get(UUID(str(originator)), lte=version)
            party = reduce(lambda aggregate, event: event.mutate(aggregate), events, None)
            assert isinstance(party, Party)
            replayed = party.holdings
            assert list(loaded.blocks()) == list(replayed.blocks()) != []
            assert loaded.totals() == replayed.totals()


KEY_6 = BlockKey(2, 2024, "1001", "10001", "00001", 10, 6, date(2024, 1, 31), "ethanol")
KEY_4 = BlockKey(2, 2024, "1002", "10002", "00002", 15, 4, date(2024, 2, 29), "biodiesel")


def test_loading_decodes_only_the_slots_used() -> None:
    holdings = Holdings()
    holdings.add(RinBlock(KEY_6, 1, 1_000), date(2024, 3, 1))
    holdings.add(RinBlock(KEY_4, 1, 500), date(2024, 3, 2))
    stored = orjson.loads(orjson.dumps(HOLDINGS.encode(holdings)))
    loaded = HOLDINGS.decode(stored)
    # a FIFO pick of D6 reads the D6 slot only; the D4 slot's records are saved as loaded
    assert loaded.pick_fifo(date(2024, 3, 5), 10, d_code=6, vintage=2024, k=2) == [
        RinBlock(KEY_6, 1, 10)
    ]
    loaded.remove(RinBlock(KEY_6, 1, 10), date(2024, 3, 5))
    again = HOLDINGS.encode(loaded)
    d4 = next(slot for slot in again if slot[0] == 4)
    assert d4[3] is next(slot for slot in stored if slot[0] == 4)[3]
    d6 = next(slot for slot in again if slot[0] == 6)
    # Party v7: the slot's records as one string, prefix|generated|fuel|acquired|serials
    assert d6[3] == f"{KEY_6.prefix}|2024-01-31|ethanol|2024-03-01|11-1000"
    assert loaded.totals() == {(6, 2024, 2): 990, (4, 2024, 2): 500}


KEYS = [KEY_6, KEY_4, BlockKey(2, 2023, "1001", "10001", "00003", 10, 6, date(2023, 5, 2),
                               "ethanol")]
moves = st.lists(
    st.tuples(st.booleans(), st.integers(0, 2), st.integers(1, 60), st.integers(0, 30),
              st.integers(0, 3), st.booleans()),
    max_size=40,
)


@settings(max_examples=150, deadline=None)
@given(moves)
def test_snapshot_round_trips_at_any_point_equal_a_holdings_never_stored(
    steps: list[tuple[bool, int, int, int, int, bool]],
) -> None:
    """Adds and removes applied to two holdings, one of them stored and read back (as JSON)
    after random steps: both always hold the same blocks and pick the same RINs."""
    plain, stored = Holdings(), Holdings()
    serial = {key: 1 for key in KEYS}
    day = date(2024, 3, 1)
    for adding, which, size, days, quantity, snapshot in steps:
        key, on = KEYS[which], day + timedelta(days=days)
        if adding:
            block = RinBlock(key, serial[key], serial[key] + size - 1)
            serial[key] += size
            for holdings in (plain, stored):
                holdings.add(block, on)
        else:
            picked = plain.pick_fifo(on, quantity, d_code=key.d_code, vintage=key.vintage, k=2)
            assert stored.pick_fifo(
                on, quantity, d_code=key.d_code, vintage=key.vintage, k=2
            ) == picked
            for block in picked:
                for holdings in (plain, stored):
                    holdings.remove(block, on)
        if snapshot:
            stored = _stored(stored)
        assert list(stored.blocks()) == list(plain.blocks())
    assert stored.totals() == plain.totals()
    assert HOLDINGS.encode(stored) == HOLDINGS.encode(plain)


def test_a_copy_shares_slots_until_either_side_changes_one() -> None:
    """The repository hands out deep copies: a change to a copy never shows in the original, nor
    the original's in the copy, in a fresh holdings or in one read from a snapshot."""
    fresh = Holdings()
    fresh.add(RinBlock(KEY_6, 1, 1_000), date(2024, 3, 1))
    fresh.add(RinBlock(KEY_4, 1, 500), date(2024, 3, 2))
    for original in (fresh, _stored(fresh)):
        copied = deepcopy(original)
        copied.remove(RinBlock(KEY_6, 1, 10), date(2024, 3, 5))
        original.add(RinBlock(KEY_4, 501, 600), date(2024, 3, 6))
        assert original.totals() == {(6, 2024, 2): 1_000, (4, 2024, 2): 600}
        assert copied.totals() == {(6, 2024, 2): 990, (4, 2024, 2): 500}
        again = deepcopy(copied)  # a copy of a copy, then both change the same slot
        again.remove(RinBlock(KEY_6, 11, 20), date(2024, 3, 5))
        copied.add(RinBlock(KEY_6, 1, 10), date(2024, 3, 7))
        assert again.totals()[(6, 2024, 2)] == 980
        assert copied.totals()[(6, 2024, 2)] == 1_000
        assert HOLDINGS.encode(_stored(original)) == HOLDINGS.encode(original)


def _encoded_afresh(holdings: Holdings) -> list[list[object]]:
    """`holdings` encoded from a plain copy of its slots: nothing remembered of a past save."""
    return HOLDINGS.encode(Holdings({slot: {key: dict(by_date) for key, by_date in held.items()}
                                     for slot, held in holdings.slots.items()}))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 2), st.integers(1, 60),
                          st.integers(0, 30), st.integers(0, 3), st.integers(0, 3)),
                max_size=40))
def test_a_holdings_snapshotted_where_it_stands_never_saves_a_stale_slot(
    steps: list[tuple[bool, int, int, int, int, int]],
) -> None:
    """A party kept in memory through a bulk ingest is snapshotted in place: each slot is
    remembered as stored and saved again as it was while unchanged (issue 15). Changed after,
    in place or through the repository's copy, every save equals an encoding made afresh, and
    a copy taken before the change keeps what it held."""
    holdings, serial = Holdings(), {key: 1 for key in KEYS}
    day = date(2024, 3, 1)
    for adding, which, size, days, quantity, then in steps:
        key, on = KEYS[which], day + timedelta(days=days)
        if adding:
            holdings.add(RinBlock(key, serial[key], serial[key] + size - 1), on)
            serial[key] += size
        else:
            for block in holdings.pick_fifo(on, quantity, d_code=key.d_code,
                                            vintage=key.vintage, k=2):
                holdings.remove(block, on)
        if then == 1:  # a snapshot of the party where it stands
            assert HOLDINGS.encode(holdings) == _encoded_afresh(holdings)
        elif then == 2:  # the repository's copy: the original kept as it was
            before, holdings = holdings, deepcopy(holdings)
            expected = _encoded_afresh(before)
            holdings.add(RinBlock(KEYS[0], serial[KEYS[0]], serial[KEYS[0]]), day)
            serial[KEYS[0]] += 1
            assert HOLDINGS.encode(before) == expected
        assert HOLDINGS.encode(holdings) == _encoded_afresh(holdings)
