"""The chain rendered in one pass (`sealed_state`) is the chain `link` defines, the stored bytes
hold the state's values and the chain (stored format 2: canonically, docs/chain-format.md), and
the bytes the head folds are the canonical form of what is stored: whatever the state's keys
(before or after "chain" in sorted order, none at all) and values (nested objects, text needing
escapes, the placeholder itself)."""

from __future__ import annotations

from typing import Any
from uuid import UUID, uuid4

import orjson
from eventsourcing.persistence import Notification
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledger.infrastructure.chain import (
    CHAIN_KEY,
    PLACEHOLDER,
    ChainedStoredEvent,
    canonical,
    fold,
    link,
    sealed_state,
)

KEYS = st.sampled_from(["a", "ch", "chaim", "chain0", "chains", "z", "_type_", "é", "ctopic", ""])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2**63, 2**63 - 1),
                    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8),
                    st.just(PLACEHOLDER))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3),
    st.dictionaries(st.one_of(KEYS, st.just(CHAIN_KEY)), inner, max_size=3)), max_leaves=6)
STATES = st.dictionaries(KEYS, VALUES, max_size=6)


@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)  # a shared machine
@given(state=STATES, previous=st.sampled_from(["", "ab" * 32]),
       version=st.integers(1, 10**9), topic=st.sampled_from(["rin_ledger:Party.X", 'a"\\b']))
def test_one_pass_gives_the_chain_link_defines(state: dict[str, Any], previous: str,
                                               version: int, topic: str) -> None:
    oid = uuid4()
    chain, stored, canonical_bytes = sealed_state(previous, oid, version, topic, state)
    assert chain == link(previous, oid, version, topic, state)
    assert orjson.loads(stored) == orjson.loads(orjson.dumps({**state, CHAIN_KEY: chain}))
    assert canonical_bytes == canonical(orjson.loads(stored))
    assert stored == canonical_bytes  # format 2: what is stored is what the head folds


def test_a_nested_placeholder_takes_the_two_pass_path() -> None:
    state, oid = {"a": {CHAIN_KEY: PLACEHOLDER}, "b": 1}, uuid4()
    chain, stored, canonical_bytes = sealed_state("", oid, 1, "t", state)
    assert orjson.loads(stored) == {**state, CHAIN_KEY: chain}
    assert chain == link("", oid, 1, "t", state)
    assert canonical_bytes == canonical(orjson.loads(stored)) == stored


def test_the_head_folds_the_canonical_bytes_as_a_parse_would() -> None:
    oid = UUID(int=7)
    _, stored, canonical_bytes = sealed_state("", oid, 1, "t", {"z": [1, {"y": 2, "x": 3}]})
    event = ChainedStoredEvent(originator_id=oid, originator_version=1, topic="t", state=stored,
                               canonical=canonical_bytes)
    note = Notification(id=1, originator_id=oid, originator_version=1, topic="t",
                        state=event.state)
    assert fold("", note, body=event.canonical) == fold("", note)
    # and a different body folds differently: the shortcut is not ignored
    assert fold("", note, body=canonical_bytes.replace(b"1", b"2")) != fold("", note)
