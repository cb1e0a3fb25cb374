"""Holdings in snapshots: grouped by slot (D code, vintage, K), decoded only when used, and the
first stored format (one flat list of records) still read."""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import date, timedelta
from pathlib import Path

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st
from store_access import app_of

from ledger import Ledger
from ledger.domain.holdings import Holdings
from ledger.domain.rin import BlockKey, RinBlock

DATA = Path(__file__).parent / "data"


def first_format_snapshot() -> dict[str, object]:
    """A Party snapshot stored by commit 6e3957a, holdings in the first format."""
    return json.loads((DATA / "snapshot_v1.json").read_text())


def test_a_first_format_snapshot_still_loads(tmp_path: Path) -> None:
    stored = first_format_snapshot()
    raw = orjson.loads(str(stored["state"]))["state"]["holdings"]["_data_"]
    # Expected totals straight from the stored JSON: Σ (E − S + 1) per (D, vintage, K), where
    # the 22-character prefix is K, YYYY, CCCC, FFFFF, BBBBB, RR, D.
    expected: dict[tuple[int, int, int], int] = defaultdict(int)
    for prefix, _generated, _fuel, _acquired, intervals in raw:
        slot = (int(prefix[21]), int(prefix[1:5]), int(prefix[0]))
        expected[slot] += sum(end - start + 1 for start, end in intervals)
    with Ledger(tmp_path) as ledger:
        state = app_of(ledger).mapper.transcoder.decode(str(stored["state"]).encode())
    holdings = state["state"]["holdings"]
    assert isinstance(holdings, Holdings)
    assert holdings.totals() == dict(expected)
    assert len(raw) == 100 and len(expected) == 8  # the fixture: 100 records in 8 slots
    # re-stored in the slot format, with the same records
    slots = holdings.to_records()
    assert [tuple(s[:3]) for s in slots] == sorted(expected)
    assert sorted(map(orjson.dumps, (r for s in slots for r in s[3]))) == sorted(
        map(orjson.dumps, raw)
    )


KEY_6 = BlockKey(2, 2024, "1001", "10001", "00001", 10, 6, date(2024, 1, 31), "ethanol")
KEY_4 = BlockKey(2, 2024, "1002", "10002", "00002", 15, 4, date(2024, 2, 29), "biodiesel")


def test_loading_decodes_only_the_slots_used() -> None:
    holdings = Holdings()
    holdings.add(RinBlock(KEY_6, 1, 1_000), date(2024, 3, 1))
    holdings.add(RinBlock(KEY_4, 1, 500), date(2024, 3, 2))
    stored = orjson.loads(orjson.dumps(holdings.to_records()))
    loaded = Holdings.from_records(stored)
    # a FIFO pick of D6 reads the D6 slot only; the D4 slot's records are saved as loaded
    assert loaded.pick_fifo(date(2024, 3, 5), 10, d_code=6, vintage=2024, k=2) == [
        RinBlock(KEY_6, 1, 10)
    ]
    loaded.remove(RinBlock(KEY_6, 1, 10), date(2024, 3, 5))
    again = loaded.to_records()
    d4 = next(slot for slot in again if slot[0] == 4)
    assert d4[3] is next(slot for slot in stored if slot[0] == 4)[3]
    d6 = next(slot for slot in again if slot[0] == 6)
    assert d6[3] == [[KEY_6.prefix, "2024-01-31", "ethanol", "2024-03-01", [[11, 1_000]]]]
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
            stored = Holdings.from_records(orjson.loads(orjson.dumps(stored.to_records())))
        assert list(stored.blocks()) == list(plain.blocks())
    assert stored.totals() == plain.totals()
    assert stored.to_records() == plain.to_records()
