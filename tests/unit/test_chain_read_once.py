"""`verify`'s audit reads each stored state once (`read_state`): the link it then recomputes from
the canonical bytes less the chain is the chain `link` defines, and the head folds the same
bytes as a parse of its own would, whatever the state's keys and values (a nested "chain", the
chain's value elsewhere, text needing escapes) — and a changed byte still breaks the link."""

from __future__ import annotations

from typing import Any
from uuid import uuid4

import orjson
from eventsourcing.persistence import Notification
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledger.infrastructure.chain import (
    CHAIN_KEY,
    Links,
    check_link,
    fold,
    link,
    read_state,
)

KEYS = st.sampled_from(["a", "ch", "chaim", "chain0", "chains", "z", "_type_", "é", ""])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2**63, 2**63 - 1),
                    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3),
    st.dictionaries(st.one_of(KEYS, st.just(CHAIN_KEY)), inner, max_size=3)), max_leaves=6)
STATES = st.dictionaries(KEYS, VALUES, max_size=6)


def stored(state: dict[str, Any], previous: str, version: int, nested_copy: bool
           ) -> tuple[Notification, str]:
    """A notification of `state` with its true chain (and, if `nested_copy`, that chain's
    entry repeated inside a value, so the bytes hold it twice)."""
    oid = uuid4()
    chain = link(previous, oid, version, "t", state)
    body = {**state, CHAIN_KEY: chain}
    if nested_copy:
        body["a"] = {CHAIN_KEY: chain}
        chain = link(previous, oid, version, "t", body)
        body[CHAIN_KEY] = chain
    note = Notification(id=version, originator_id=oid, originator_version=version, topic="t",
                        state=orjson.dumps(body))
    return note, chain


@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)  # a shared machine
@given(state=STATES, previous=st.sampled_from(["", "ab" * 32]), nested=st.booleans())
def test_the_link_from_the_bytes_read_once_is_the_chain(
        state: dict[str, Any], previous: str, nested: bool) -> None:
    note, _ = stored(state, previous, 1 if not previous else 2, nested)
    read = read_state(note)
    assert read.canonical and read.value == orjson.loads(note.state)
    before = (note.originator_version - 1, previous) if previous else None
    assert check_link(before, note, read.value, read.body) is None
    assert fold("", note, body=read.body) == fold("", note)


@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(state=STATES, nested=st.booleans())
def test_an_edited_state_breaks_the_link_read_once(state: dict[str, Any], nested: bool) -> None:
    note, _ = stored(state, "", 1, nested)
    edited = orjson.loads(note.state)
    edited["z"] = [edited.get("z"), "edited"]
    tampered = Notification(id=1, originator_id=note.originator_id, originator_version=1,
                            topic="t", state=orjson.dumps(edited))
    read = read_state(tampered)
    assert check_link(None, tampered, read.value, read.body) == (
        "chain mismatch: stored bytes changed, reordered or inserted")


def test_a_state_that_is_not_json_is_named_once_read() -> None:
    note = Notification(id=1, originator_id=uuid4(), originator_version=1, topic="t",
                        state=b'{"a": NaN, "chain": "x"}')
    read = read_state(note)
    assert read.value is None and read.body == note.state and not read.canonical
    assert Links().step(note, read)[1] == (
        f"aggregate {note.originator_id} version 1 (notification 1): stored state is not JSON")
    assert fold("", note, body=read.body) == fold("", note)
