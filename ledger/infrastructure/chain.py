"""Tamper evidence: a hash chain per aggregate, stored in each event, and a ledger-wide head.

Every stored event's state carries `"chain"` = sha256(previous chain of that aggregate +
canonical bytes of this event), where the canonical bytes are the sorted-key compact JSON of
its aggregate id, version, topic and state (without the chain). Changing, deleting, reordering
or inserting a stored row breaks a link that `verify_chain` recomputes and names. The head
folds every notification, in id order, into one running hash; an auditor who exported the
head at notification N can later prove that nothing up to N changed (`chain_head(app, N)`).
Snapshots are derived state, stored through the same mapper and never chained, but sealed to
the chain of the event at their version (ledger/infrastructure/snapshot_seal.py).
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from functools import lru_cache
from typing import Any, NamedTuple
from uuid import UUID

import orjson
from eventsourcing.application import Application
from eventsourcing.domain import CanSnapshotAggregate, DomainEventProtocol
from eventsourcing.persistence import (
    ApplicationRecorder,
    Mapper,
    Notification,
    StoredEvent,
    Transcoder,
)
from eventsourcing.utils import get_topic

from ledger.infrastructure.command_table import Folding, stored_rows
from ledger.infrastructure.notification_pages import notifications as log_notifications

CHAIN_KEY = "chain"
SEAL_KEY = "seal"  # a snapshot's binding to the chain (ledger/infrastructure/snapshot_seal.py)
GENESIS = ""
CACHE_SIZE = 20_000  # aggregates whose latest chain is remembered (one entry each)


#: orjson hands dates, datetimes and dataclasses (a `RinBlock`) to `default`, the transcoder's
PASS_TO_TRANSCODER = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS


def canonical(value: Any, default: Callable[[Any], Any] | None = None) -> bytes:
    """One byte string per JSON value: sorted keys, no whitespace, UTF-8 (orjson's output is
    byte-identical to `json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False)`
    for the JSON the transcoder writes, and several times faster). `default` renders values
    that are not JSON the way the transcoder does."""
    return orjson.dumps(value, default=default, option=CANONICAL)


#: orjson's options for `canonical`: keys sorted (a parsed JSON value renders alike with or
#: without the passthrough, which only a value JSON lacks meets)
CANONICAL = orjson.OPT_SORT_KEYS | PASS_TO_TRANSCODER


def link(previous: str, originator_id: UUID | str, version: int, topic: str,
         state: dict[str, Any], default: Callable[[Any], Any] | None = None) -> str:
    """The chain of one event: sha256(previous chain + canonical bytes of this event)."""
    body = {"originator_id": str(originator_id), "originator_version": version, "topic": topic,
            "state": {k: v for k, v in state.items() if k != CHAIN_KEY}}
    return hashlib.sha256(previous.encode() + canonical(body, default)).hexdigest()


#: bytes orjson writes as they are (orjson ≥ 3.9; read by name, as the stale `types-orjson`
#: stubs some environments install, which mypy prefers to orjson's own, lack it)
Fragment: Callable[[bytes], Any] = getattr(orjson, "Fragment")  # noqa: B009

#: dates remembered pre-rendered by the chain mapper (`ChainMapper._sorted_default`): every day
#: of a century is 36,525, so a long history's dates are kept, then the memory starts again
DATES_REMEMBERED = 40_000


#: what the chain's place holds while the state is rendered canonically: 64 hex digits
PLACEHOLDER = "0" * 64
MARKER = orjson.dumps({CHAIN_KEY: PLACEHOLDER})[1:-1]  # b'"chain":"000…0"'
CHAIN_ENTRY = orjson.dumps(CHAIN_KEY) + b":"  # b'"chain":', what a chain's value follows


@dataclass(frozen=True)
class ChainedStoredEvent(StoredEvent):
    """A stored event as `ChainMapper` writes it, with its state's `canonical` bytes (chain
    included), which the head folds as they are, without parsing the state again."""

    canonical: bytes = b""
    key: str = ""  # the originator id as the chain hashed it (`str(UUID)`)


def fold_stored(head: str, notification_id: int, event: StoredEvent) -> str:
    """`fold` of an event this process has just stored as notification `notification_id`: a
    `ChainedStoredEvent`'s canonical bytes and id string are known, so the header is rendered
    straight from them (the same bytes `fold` renders: a list's canonical JSON is orjson's)."""
    if isinstance(event, ChainedStoredEvent) and event.key:
        header = orjson.dumps([notification_id, event.key, event.originator_version,
                               event.topic])
        return hashlib.sha256(head.encode() + header + event.canonical).hexdigest()
    return fold(head, Notification(
        id=notification_id, originator_id=event.originator_id,
        originator_version=event.originator_version, topic=event.topic, state=event.state,
    ), orjson.loads,  # written by the ledger's mapper a moment ago
        body=event.canonical if isinstance(event, ChainedStoredEvent) else None)


def sealed_state(previous: str, originator_id: UUID | str, version: int, topic: str,
                 state: dict[str, Any], default: Callable[[Any], Any] | None = None
                 ) -> tuple[str, bytes, bytes]:
    """(the event's chain, its stored state, the canonical bytes the head folds): the state is
    rendered ONCE, canonically, with a placeholder chain (transcodings run once, nothing is
    parsed back); cutting the placeholder out gives the bytes `link` hashes (canonical JSON
    less one top-level key is the canonical JSON of the rest), putting the chain in its place
    gives the bytes stored and folded, one object (stored format 2, docs/chain-format.md:
    keys sorted, the chain in its sorted place; what is hashed is as before, so stores of
    format 1 and 2 verify alike; tests/unit/test_chain_single_pass.py)."""
    rendered = canonical({**state, CHAIN_KEY: PLACEHOLDER}, default)
    at = rendered.find(MARKER)
    if at < 0 or rendered.find(MARKER, at + 1) >= 0:  # the placeholder also in a value
        values = orjson.loads(rendered)
        del values[CHAIN_KEY]
        chain = link(previous, originator_id, version, topic, values)
        stored = canonical({**values, CHAIN_KEY: chain})
        return chain, stored, stored
    end = at + len(MARKER)
    rest = cut(rendered, at, end)
    chain = hashlib.sha256(previous.encode() + link_body(originator_id, version, topic, rest)
                           ).hexdigest()
    value = end - len(PLACEHOLDER) - 1
    stored = rendered[:value] + chain.encode() + rendered[value + len(PLACEHOLDER):]
    return chain, stored, stored


def cut(rendered: bytes, at: int, end: int) -> bytes:
    """Canonical JSON of an object less its top-level entry at bytes `at`…`end` (canonical JSON
    less one top-level key is the canonical JSON of the rest)."""
    before, after = cut_parts(rendered, at, end)
    return before + after


def cut_parts(rendered: bytes, at: int, end: int) -> tuple[bytes, bytes]:
    """`cut`'s result as the bytes before the entry and those after it (`at` > 0: an object's
    entry follows its `{`)."""
    if rendered[at - 1] == COMMA:
        return rendered[:at - 1], rendered[end:]
    # the first key: `{"chain":…,` or the only one
    return rendered[:at], rendered[end + (rendered[end:end + 1] == b","):]


COMMA = ord(",")


def link_body(originator_id: UUID | str, version: int, topic: str, rest: bytes) -> bytes:
    """The bytes `link` hashes, from the canonical bytes `rest` of the state less its chain."""
    return assembled(id_start(str(originator_id)), version, rest, topic_end(topic))


def id_start(key: str) -> bytes:
    """The start of the bytes `link` hashes for an aggregate whose id renders as `key`: the
    same for every event of it (`Named`)."""
    return b'{"originator_id":' + orjson.dumps(key) + b',"originator_version":'


@lru_cache(maxsize=1024)
def topic_end(topic: str) -> bytes:
    """The end of the bytes `link` hashes for an event of `topic` (a store has a few dozen)."""
    return b',"topic":' + orjson.dumps(topic) + b"}"


def assembled(start: bytes, version: int, rest: bytes, end: bytes) -> bytes:
    """`link_body` from its aggregate's `id_start` and its topic's `topic_end`: the canonical
    JSON of `{originator_id, originator_version, state, topic}`, keys in their sorted order."""
    return b"".join((start, str(version).encode(), b',"state":', rest, end))


class ChainMapper(Mapper[UUID]):
    """A `Mapper` that adds each event's chain to its stored state and strips it on decode.

    The previous chain of an aggregate comes from an LRU of recently mapped events, else from
    the aggregate's last stored event; the application forgets entries of a failed save.
    """

    def __init__(self, transcoder: Transcoder, recorder: Callable[[], ApplicationRecorder],
                 final_topics: Collection[str] = ()) -> None:
        """`final_topics`: events no other event of their aggregate ever follows (a command
        record's, in a store that keeps them as events), whose chains are not worth
        remembering."""
        super().__init__(transcoder)
        self._recorder = recorder
        self._final_topics = frozenset(final_topics)
        self._chains: OrderedDict[str, tuple[int, str]] = OrderedDict()  # id → (version, chain)
        #: type → (its transcoding's name, its encode): looked up once per type
        self._transcodings: dict[type, tuple[str, Callable[[Any], Any]]] = {}
        self._ends: dict[type, bytes] = {}  # type → `,"_type_":"<name>"}`
        self._dates: dict[date, Any] = {}  # date → its canonical rendering
        #: event type → (topic, class version, final): `_described` once per type; snapshot
        #: types are never in it (the library maps them)
        self._kinds: dict[type, tuple[str, int, bool]] = {}

    def to_stored_event(self, domain_event: DomainEventProtocol[UUID]) -> StoredEvent:
        """The library's mapping (the same state values), in one pass: orjson renders the
        state once, canonically, calling the transcoder's transcodings for values JSON lacks,
        and the chain takes its place in those bytes (`sealed_state`)."""
        kind = type(domain_event)
        described = self._kinds.get(kind)
        if described is None:
            if isinstance(domain_event, CanSnapshotAggregate):
                return super().to_stored_event(domain_event)
            described = self._kinds[kind] = self._described(kind)
        topic, class_version, final = described
        state = dict(vars(domain_event))
        originator_id, version = state.pop("originator_id"), state.pop("originator_version")
        if class_version > 1:
            state["class_version"] = class_version
        key = str(originator_id)  # rendered once: the LRU's key and the hashed id alike
        chain, stored, canonical_state = sealed_state(
            self.chain_at(key, version - 1), key, version, topic, state, self._sorted_default)
        if not final:
            self._remember(key, version, chain)
        return ChainedStoredEvent(
            originator_id=originator_id, originator_version=version, topic=topic, state=stored,
            canonical=canonical_state, key=key,
        )

    def _described(self, kind: type) -> tuple[str, int, bool]:
        """(topic, class version, whether final) of an event type, read once per type (a class
        without `class_version` is version 1; asking it for one raises inside `getattr`)."""
        topic = get_topic(kind)
        return topic, getattr(kind, "class_version", 1), topic in self._final_topics

    def _default(self, value: Any) -> dict[str, Any]:
        """A value JSON lacks, as the transcoder writes it: {"_type_": name, "_data_": …}."""
        named = self._named(type(value))
        return {"_type_": named[0], "_data_": named[1](value)}

    def _named(self, kind: type) -> tuple[str, Callable[[Any], Any]]:
        """(the name, the encode) of the transcoding of `kind`, looked up once per type."""
        named = self._transcodings.get(kind)
        if named is None:
            transcoding = self.transcoder.types[kind]  # type: ignore[attr-defined]
            named = self._transcodings[kind] = (transcoding.name, transcoding.encode)
        return named

    def _sorted_default(self, value: Any) -> Any:
        """`_default` for the canonical (sorted-key) rendering of an event, its two commonest
        values pre-rendered as the bytes it would write, `{"_data_":…,"_type_":…}`: a UTC
        timestamp (every event's) by orjson's RFC 3339, byte for byte the `isoformat()` text
        the library's transcoding writes and several times faster, and a date from a memory
        of those rendered (tests/unit/test_chain_rendering.py)."""
        kind = type(value)
        if kind is date:
            rendered = self._dates.get(value)
            if rendered is None:
                if len(self._dates) >= DATES_REMEMBERED:
                    self._dates.clear()
                rendered = self._dates[value] = Fragment(
                    b'{"_data_":' + orjson.dumps(self._named(kind)[1](value))
                    + self._type_end(kind))
            return rendered
        if kind is datetime and value.tzinfo is UTC:
            return Fragment(b'{"_data_":' + orjson.dumps(value) + self._type_end(kind))
        return self._default(value)

    def _type_end(self, kind: type) -> bytes:
        """`,"_type_":"<name>"}`: the end of a value of `kind` as canonically rendered."""
        end = self._ends.get(kind)
        if end is None:
            end = self._ends[kind] = b',"_type_":' + orjson.dumps(self._named(kind)[0]) + b"}"
        return end

    def to_domain_event(self, stored_event: StoredEvent) -> DomainEventProtocol[UUID]:
        if isinstance(stored_event.state, str):  # a row rewritten as SQLite TEXT by hand
            stored_event = StoredEvent(
                originator_id=stored_event.originator_id,
                originator_version=stored_event.originator_version,
                topic=stored_event.topic, state=stored_event.state.encode(),
            )
        event = super().to_domain_event(stored_event)
        vars(event).pop(CHAIN_KEY, None)
        vars(event).pop(SEAL_KEY, None)
        return event

    def forget(self, events: Sequence[DomainEventProtocol[UUID]]) -> None:
        """Drop the cached chains of events whose save failed: they were never stored."""
        for event in events:
            self._chains.pop(str(event.originator_id), None)

    def chain_at(self, originator_id: UUID | str, version: int) -> str:
        """The chain of the aggregate's stored event at `version` (of its last one before, if
        that one is missing): remembered, else read from the store."""
        if version <= 0:
            return GENESIS
        key = str(originator_id)
        remembered = self._chains.get(key)
        if remembered is not None and remembered[0] == version:
            self._chains.move_to_end(key)
            return remembered[1]
        last = self._recorder().select_events(
            originator_id if isinstance(originator_id, UUID) else UUID(originator_id),
            lte=version, desc=True, limit=1,
        )
        if not last:
            return GENESIS
        try:
            return str(orjson.loads(last[0].state).get(CHAIN_KEY, GENESIS))
        except (ValueError, AttributeError):
            return GENESIS

    def _remember(self, originator_id: str, version: int, chain: str) -> None:
        self._chains[originator_id] = (version, chain)
        self._chains.move_to_end(originator_id)
        if len(self._chains) > CACHE_SIZE:
            self._chains.popitem(last=False)


def notifications(app: Application[UUID], upto: int | None = None) -> Iterator[Notification]:
    """Every notification in id order, up to and including `upto`, read page by page."""
    return log_notifications(app.recorder, stop=upto)


def reject_constant(name: str) -> None:
    """`NaN`, `Infinity`: no state the ledger writes holds one (JSON has none)."""
    raise ValueError(f"{name} is not JSON")


def parse_state(state: bytes | str) -> Any:
    """A stored state as JSON, refusing NaN and Infinity (the stdlib would take them, and
    orjson would then render them as null, so an edit to NaN would hash like null)."""
    return json.loads(state, parse_constant=reject_constant)


def fold(head: str, notification: Notification,
         parse: Callable[[bytes | str], Any] = parse_state, body: bytes | None = None,
         key: str | None = None) -> str:
    """One step of the ledger-wide chain: the head after `notification`. A state that is not
    JSON, or holds a value canonical JSON cannot render (an integer beyond 64 bits, nesting
    too deep), folds in as its raw bytes. `parse` may be orjson's for states the ledger has
    just written (no NaN, no integer beyond 64 bits: the same values, parsed faster); `body`
    the state's canonical bytes, if known (`ChainedStoredEvent.canonical`); `key` its
    originator id as rendered already (`Named.key`)."""
    try:
        body = body or canonical(parse(notification.state))
    except (ValueError, TypeError, RecursionError):
        body = notification.state.encode() if isinstance(notification.state, str) else bytes(
            notification.state)
    header = orjson.dumps([notification.id, str(notification.originator_id) if key is None
                           else key, notification.originator_version, notification.topic])
    return hashlib.sha256(head.encode() + header + body).hexdigest()


class ReadState(NamedTuple):
    """A stored state read once for both checks of it: its JSON value (None if it is not
    JSON) and the bytes the head folds (its canonical form, or its raw bytes if it has none).
    A tuple: one is made for every notification of the walk, and a frozen dataclass's
    `__init__` sets each field through `object.__setattr__`."""

    value: Any
    body: bytes
    canonical: bool


def read_state(notification: Notification) -> ReadState:
    """The state of `notification` parsed and rendered canonically once, for the head's fold
    and the aggregate's link alike (each used to parse it on its own)."""
    raw = notification.state
    try:
        value = parse_state(raw)
    except (ValueError, RecursionError):
        return ReadState(None, raw.encode() if isinstance(raw, str) else bytes(raw), False)
    try:
        return ReadState(value, canonical(value), True)
    except (ValueError, TypeError, RecursionError):
        return ReadState(value, raw.encode() if isinstance(raw, str) else bytes(raw), False)


def chain_head(app: Application[UUID], upto: int | None = None) -> dict[str, Any]:
    """The ledger-wide head: every notification up to `upto` (default all) folded in id order,
    each followed by its command row if it has one (ledger/infrastructure/command_table.py)."""
    head, last = GENESIS, 0
    rows = Folding(stored_rows(app.recorder, upto))
    for notification in notifications(app, upto):
        head, last = rows.after(notification.id, fold(head, notification)), notification.id
    return {"notification_id": last, "hash": head}


def verify_chain(app: Application[UUID], head: dict[str, Any] | None = None) -> list[str]:
    """Recompute every aggregate's chain (and an exported `head`, if given); name each break.

    Each problem reads `<aggregate> version V (notification N): <what>`; an empty list means
    no stored byte was changed, deleted, reordered or inserted.
    """
    problems: list[str] = []
    links = Links()
    running, upto = GENESIS, head["notification_id"] if head else None
    rows = Folding(stored_rows(app.recorder, upto) if head else iter(()))
    for note in notifications(app):
        if upto is not None and note.id <= upto:
            running = rows.after(note.id, fold(running, note))
        problem = links.step(note)[1]
        if problem:
            problems.append(problem)
    if head is not None and running != head["hash"]:
        problems.append(
            f"head at notification {upto:,} was {head['hash']}, recomputed {running}: "
            "history up to that point changed"
        )
    return problems


@dataclass(frozen=True, slots=True)
class Named:
    """One aggregate's id as the walk renders it for each of its notifications, worked out once
    (`Links.named`): `key` as the chain and the head hash it (`str(UUID)`), `start` the
    beginning of the bytes its links hash (`id_start`), `hex` as a command record names its
    events (`command_records.event_name`; None if the id is no UUID: `event_name` says why)."""

    key: str
    start: bytes
    hex: str | None


def named_id(originator_id: UUID | str) -> Named:
    key = str(originator_id)
    try:
        hex_id: str | None = originator_id.hex if isinstance(originator_id, UUID) else (
            UUID(originator_id).hex)
    except ValueError:
        hex_id = None
    return Named(key, id_start(key), hex_id)


def id_key(originator_id: UUID | str) -> int | str:
    """What `Links.ids` is keyed by: a UUID's int (a UUID's own hash and equality run in
    Python), else the id as text."""
    return originator_id.int if isinstance(originator_id, UUID) else str(originator_id)


class Links:
    """The per-aggregate chains, checked notification by notification in id order."""

    def __init__(self) -> None:
        self.last: dict[str, tuple[int, str]] = {}  # aggregate → (version, chain) seen last
        self.names: dict[str, str] = {}
        #: aggregate (its UUID's int, or its id as stored) → its `Named`; one entry per
        #: aggregate, as `last` keeps, and at most CACHE_SIZE
        self.ids: dict[int | str, Named] = {}

    def named(self, originator_id: UUID | str) -> Named:
        """The aggregate's `Named`, worked out once (UUID hashes in Python; its int does not)."""
        cached = originator_id.int if isinstance(originator_id, UUID) else str(originator_id)
        found = self.ids.get(cached)  # `id_key`, without a call
        if found is None:
            if len(self.ids) >= CACHE_SIZE:
                self.ids.clear()
            found = self.ids[cached] = named_id(originator_id)
        return found

    def forget(self, originator_id: UUID | str, key: str) -> None:
        """Keep nothing of an aggregate no event follows (a command record's)."""
        self.last.pop(key, None)
        self.names.pop(key, None)
        self.ids.pop(id_key(originator_id), None)

    def step(self, note: Notification, read: ReadState | None = None,
             named: Named | None = None) -> tuple[dict[str, Any] | None, str | None]:
        """The event's parsed state (None if it is not a JSON object), and what is wrong with
        it, located, if anything. `read`: the state already read (`read_state`); `named`: its
        aggregate's id as rendered (`named`)."""
        named = named or named_id(note.originator_id)
        oid = named.key
        read = read or read_state(note)
        state = read.value
        if not isinstance(state, dict):
            return None, f"{where(self.names, oid, note)}: stored state is not JSON"
        if oid not in self.names:
            self.names[oid] = (aggregate_name(oid, state) if note.originator_version == 1
                               else f"aggregate {oid}")
        problem = check_link(self.last.get(oid), note, state,
                             read.body if read.canonical else None, named)
        self.last[oid] = (note.originator_version, str(state.get(CHAIN_KEY, GENESIS)))
        return state, f"{where(self.names, oid, note)}: {problem}" if problem else None


def check_link(previous: tuple[int, str] | None, note: Notification,
               state: dict[str, Any], rendered: bytes | None = None,
               named: Named | None = None) -> str | None:
    """What is wrong with one stored event given its aggregate's previous one, if anything.
    `rendered`: the state's canonical bytes, if known (the link is then hashed from them less
    the chain, without rendering the state again); `named`: its aggregate's id as rendered."""
    prev_version, prev_chain = previous or (0, GENESIS)
    version = note.originator_version
    if version != prev_version + 1:
        if version > prev_version + 1:
            missing = f"version {prev_version + 1:,}" if version == prev_version + 2 else (
                f"versions {prev_version + 1:,}-{version - 1:,}")
            return f"{missing} missing: deleted"
        return f"follows version {prev_version:,}: reordered"
    stored = state.get(CHAIN_KEY)
    if stored is None:
        return "no chain: inserted or rewritten"
    try:
        recomputed = recompute_link(prev_chain, note, state, stored, rendered, named)
    except TypeError:  # e.g. an integer beyond 64 bits: the ledger never writes one
        return "stored state holds a value the ledger never writes (an integer beyond 64 bits?)"
    if stored != recomputed:
        return "chain mismatch: stored bytes changed, reordered or inserted"
    return None


def recompute_link(previous: str, note: Notification, state: dict[str, Any], stored: Any,
                   rendered: bytes | None, named: Named | None = None) -> str:
    """`link` of the stored event: from its canonical bytes less the stored chain's entry when
    that entry occurs in them once (then it is the top-level one), else rendered anew. The
    bytes hashed are assembled as `link_body` assembles them (`named` gives the id's part)."""
    if rendered is not None:
        marker = CHAIN_ENTRY + orjson.dumps(stored, option=CANONICAL)  # of {CHAIN_KEY: stored}
        at = rendered.find(marker)
        if at >= 0 and rendered.find(marker, at + 1) < 0:
            # `assembled` of the `cut`, joined at once with the previous chain
            before, after = cut_parts(rendered, at, at + len(marker))
            start = named.start if named is not None else id_start(str(note.originator_id))
            return hashlib.sha256(b"".join((
                previous.encode(), start, str(note.originator_version).encode(), b',"state":',
                before, after, topic_end(note.topic)))).hexdigest()
    return link(previous, note.originator_id, note.originator_version, note.topic, state)


def aggregate_name(oid: str, first_state: dict[str, Any]) -> str:
    """`party 0001`, `command <id>`, or the bare aggregate id, from the aggregate's first event."""
    if "party_id" in first_state:
        return f"party {first_state['party_id']}"
    if "client_id" in first_state:
        return f"command {first_state['client_id']}"
    return f"aggregate {oid}"


def where(names: dict[str, str], oid: str, note: Notification) -> str:
    return (f"{names.get(oid, f'aggregate {oid}')} version {note.originator_version:,} "
            f"(notification {note.id:,})")
