"""`verify`'s walk renders each aggregate's id once (`Links.named`) and assembles the bytes a
link hashes from bytes (`assembled`, as `link_body` does on the write side): whatever the state
(stored format 1 or 2, odd strings, unicode, integers beyond 64 bits, a nested "chain"), the
ids and topics, what it hashes is `canonical` of the dict `link` builds, the verdict is the
one the dict-rendering path gives, and the head folds the same bytes."""

from __future__ import annotations

import json
from collections import deque
from typing import Any
from uuid import UUID, uuid4

import orjson
import pytest
from eventsourcing.persistence import Notification
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledger.infrastructure import chain
from ledger.infrastructure.chain import (
    CHAIN_KEY,
    Links,
    assembled,
    canonical,
    check_link,
    fold,
    id_start,
    link,
    named_id,
    read_state,
    topic_end,
)
from ledger.infrastructure.chain_walk import read_once
from ledger.infrastructure.command_audit import CommandAudit
from ledger.infrastructure.command_records import event_name

ODD = st.text(alphabet=st.sampled_from(['"', "\\", "\n", "\x00", "\x1f", "\u2028", "é", "€",
                                        "\U0001f600", "/", "<", "a", ":", ",", "{", "}"]),
              max_size=6)
KEYS = st.one_of(st.sampled_from(["a", "chain0", "chains", "z", "_type_", "é", ""]), ODD)
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), ODD,
                    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=6))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3),
    st.dictionaries(st.one_of(KEYS, st.just(CHAIN_KEY)), inner, max_size=3)), max_leaves=6)
STATES = st.dictionaries(KEYS, VALUES, max_size=5)
TOPICS = st.one_of(st.just("rin_ledger:Party.Transferred"), ODD)
IDS = st.one_of(st.uuids(), st.uuids().map(str), ODD)


def dict_link(previous: str, oid: UUID | str, version: int, topic: str,
              state: dict[str, Any]) -> str | None:
    """The link as the dict-rendering path computes it (None where canonical JSON cannot
    render the state: an integer beyond 64 bits)."""
    try:
        return link(previous, oid, version, topic, state)
    except TypeError:
        return None


def stored_forms(state: dict[str, Any], chain_value: str) -> list[bytes]:
    """The state with its chain as each format stores it: format 2 (canonical, or the standard
    library's sorted rendering where orjson cannot render it), format 1 (field order, chain
    last; compact and with escapes)."""
    body = {**state, CHAIN_KEY: chain_value}
    return [json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(),
            json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode(),
            json.dumps(body).encode()]


@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)  # a shared machine
@given(oid=IDS, version=st.integers(1, 2**40), topic=TOPICS, state=STATES)
def test_the_assembled_link_body_is_the_canonical_one(
        oid: UUID | str, version: int, topic: str, state: dict[str, Any]) -> None:
    try:
        rest = canonical(state)
    except TypeError:  # beyond 64 bits: neither path hashes it (the walk names it)
        return
    expected = canonical({"originator_id": str(oid), "originator_version": version,
                          "state": state, "topic": topic})
    assert assembled(named_id(oid).start, version, rest, topic_end(topic)) == expected
    assert assembled(id_start(str(oid)), version, rest, topic_end(topic)) == expected


@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(state=STATES, topic=TOPICS, previous=st.sampled_from(["", "ab" * 32]),
       edit=st.booleans(), string_id=st.booleans())
def test_the_walk_names_what_the_dict_path_names(
        state: dict[str, Any], topic: str, previous: str, edit: bool, string_id: bool) -> None:
    """Every stored form, true or edited: `Links.step` with the walk's `Named` gives the
    verdict and the head that the path rendering `link`'s dict gives."""
    uuid = uuid4()
    oid: UUID | str = str(uuid) if string_id else uuid
    version = 1 if not previous else 2
    true = dict_link(previous, oid, version, topic, state)
    stored_chain = true or "0" * 64
    for raw in stored_forms(state, stored_chain):
        if edit:
            flipped = ("1" if stored_chain[0] == "0" else "0") + stored_chain[1:]
            raw = raw.replace(stored_chain.encode(), flipped.encode())
        note = Notification(id=7, originator_id=oid, originator_version=version, topic=topic,
                            state=raw)
        before = (version - 1, previous) if previous else None
        read, slow = read_once(note), read_state(note)
        links = Links()
        if before:
            links.last[str(oid)] = before
        named = links.named(note.originator_id)
        fast_verdict = links.step(note, read, named)[1]
        slow_links = Links()
        if before:
            slow_links.last[str(oid)] = before
        assert fast_verdict == slow_links.step(note, slow)[1]
        assert (fast_verdict is None) == (true is not None and not edit)
        assert check_link(before, note, read.value, None) == check_link(
            before, note, read.value, read.body if read.canonical else None, named)
        assert fold("h", note, body=read.body, key=named.key) == fold("h", note)


def test_a_nested_copy_of_the_chain_entry_is_still_linked() -> None:
    """The chain's entry also inside a value: the bytes hold it twice, so the walk renders the
    dict, and gives the same verdict."""
    oid = uuid4()
    state: dict[str, Any] = {"a": {CHAIN_KEY: "x"}}
    true = link("", oid, 1, "t", {"a": {CHAIN_KEY: "c" * 64}})
    raw = canonical({"a": {CHAIN_KEY: true}, CHAIN_KEY: true})
    state = orjson.loads(raw)
    note = Notification(id=1, originator_id=oid, originator_version=1, topic="t", state=raw)
    assert link("", oid, 1, "t", state) != true  # the nested copy is part of what is hashed
    links = Links()
    assert links.step(note, read_once(note), links.named(oid))[1] == Links().step(
        note, read_state(note))[1]


def test_an_integer_beyond_64_bits_is_named_on_the_fast_path() -> None:
    oid = uuid4()
    chain_value = link("", oid, 1, "t", {"a": 1})
    raw = b'{"a":18446744073709551616,"chain":"' + chain_value.encode() + b'"}'
    note = Notification(id=1, originator_id=oid, originator_version=1, topic="t", state=raw)
    links = Links()
    assert links.step(note, read_once(note), links.named(oid))[1] == (
        f"aggregate {oid} version 1 (notification 1): stored state holds a value the ledger "
        "never writes (an integer beyond 64 bits?)")


def test_named_is_what_each_check_renders() -> None:
    uuid = uuid4()
    for oid in (uuid, str(uuid), str(uuid).upper(), "{" + str(uuid) + "}"):
        named = named_id(oid)
        assert named.key == str(oid)
        assert f"{named.hex}:3" == event_name(oid, 3)
        assert named.start == id_start(str(oid))
    assert named_id("not a uuid").hex is None
    with pytest.raises(ValueError):
        event_name("not a uuid", 1)  # the walk then asks `event_name`, which says why


def test_links_render_an_id_once_and_keep_a_bounded_number(
        monkeypatch: pytest.MonkeyPatch) -> None:
    links = Links()
    uuid = uuid4()
    first = links.named(uuid)
    assert links.named(UUID(str(uuid))) is first  # another UUID object of the same id
    assert links.named(str(uuid)) is not first and links.named(str(uuid)).key == str(uuid)
    links.forget(uuid, str(uuid))
    assert links.named(uuid) is not first
    monkeypatch.setattr(chain, "CACHE_SIZE", 3)
    for _ in range(10):
        links.named(uuid4())
    assert len(links.ids) <= 3


def test_the_latest_notifications_are_read_from_the_deque_end() -> None:
    audit = CommandAudit.__new__(CommandAudit)  # only its deque is used
    audit.recent = deque(maxlen=256)
    for at in range(300):
        audit.recent.append((at, f"{at}", "t"))
        for count in (1, 2, 3, 17, 256, 257):
            expected = (list(audit.recent)[-count:] if count <= len(audit.recent)
                        else None)
            assert audit.latest(count) == expected
