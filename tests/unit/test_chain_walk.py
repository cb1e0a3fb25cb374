"""`verify`'s walk reads a state with orjson only where that gives the standard library's value
(ledger/infrastructure/chain_walk.py `read_once`): whatever the bytes, it reads what
`read_state` reads — the same value, the same bytes for the head, the same verdict — and a
state orjson would misread (an integer beyond 64 bits, a duplicate key, an escape, an
infinity) is still read as before, and still named."""

from __future__ import annotations

import json
from typing import Any
from uuid import uuid4

import orjson
from eventsourcing.persistence import Notification
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledger.infrastructure.chain import CHAIN_KEY, Links, canonical, link, read_state
from ledger.infrastructure.chain_walk import read_once

KEYS = st.sampled_from(["a", "b", "chain0", "z", "_type_", "é", ""])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70),
                    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=6))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(KEYS, inner, max_size=3)), max_leaves=6)
STATES = st.dictionaries(KEYS, VALUES, max_size=5)


def note(state: bytes | str, version: int = 1) -> Notification:
    return Notification(id=version, originator_id=uuid4(), originator_version=version,
                        topic="t", state=state)


def same_read(raw: bytes | str) -> None:
    """`read_once` reads `raw` exactly as `read_state` does (value compared by its type too:
    an integer read as a float would be equal to it yet render differently)."""
    n = note(raw)
    fast, slow = read_once(n), read_state(n)
    assert (fast.body, fast.canonical) == (slow.body, slow.canonical)
    assert repr(fast.value) == repr(slow.value)


def rendered(state: dict[str, Any]) -> bytes:
    """`state` rendered as the standard library renders it, keys sorted (canonical where
    orjson renders the same; an integer beyond 64 bits orjson cannot render at all)."""
    return json.dumps(state, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False).encode()


@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)  # a shared machine
@given(state=STATES)
def test_any_state_is_read_as_the_standard_library_reads_it(state: dict[str, Any]) -> None:
    same_read(rendered(state))  # canonical, or holding an integer beyond 64 bits
    same_read(json.dumps(state).encode())  # format 1's spacing and key order
    same_read(json.dumps(state, ensure_ascii=True).encode())  # escapes


def test_a_canonical_state_is_read_by_orjson() -> None:
    """What the ledger writes (stored format 2) takes the fast path: its bytes are what the
    head folds, the very object stored."""
    raw = canonical({"a": [1, 2.5, "x"], CHAIN_KEY: "ab" * 32, "n": None})
    read = read_once(note(raw))
    assert read.body is raw and read.canonical and read.value == orjson.loads(raw)


def test_values_orjson_misreads_are_read_by_the_standard_library() -> None:
    for raw in (b'{"a":18446744073709551616,"chain":"x"}',  # 2**64: orjson reads a float
                b'{"a":-9223372036854775809,"chain":"x"}',
                b'{"a":1,"a":2,"chain":"x"}',  # a duplicate key
                b'{"a":"\\u00e9","chain":"x"}',  # an escape of a character
                b'{"a":"\\ud800","chain":"x"}',  # a lone surrogate orjson refuses
                b'{"a":1e400,"chain":"x"}',  # the standard library's infinity
                b'{"a":-0,"chain":"x"}',
                b'\xef\xbb\xbf{"a":1,"chain":"x"}',  # a byte-order mark
                b'{"a": NaN, "chain": "x"}', b'not json', '{"a":1,"chain":"x"}'):
        same_read(raw)
    big = read_once(note(b'{"a":18446744073709551616,"chain":"x"}'))
    assert big.value["a"] == 2**64 and type(big.value["a"]) is int and not big.canonical


def test_an_integer_beyond_64_bits_is_still_named_by_the_link_check() -> None:
    """A state edited to hold 2**64 in canonical form, its chain as stored before: the walk
    names the value the ledger never writes, as it did when every state was read by `json`."""
    oid = uuid4()
    chain = link("", oid, 1, "t", {"a": 1})
    raw = b'{"a":18446744073709551616,"chain":"' + chain.encode() + b'"}'
    edited = Notification(id=1, originator_id=oid, originator_version=1, topic="t", state=raw)
    assert Links().step(edited, read_once(edited))[1] == (
        f"aggregate {oid} version 1 (notification 1): stored state holds a value the ledger "
        "never writes (an integer beyond 64 bits?)")
