"""Snapshot seals: a snapshot is used to decide a command only if it is bound to the event chain.

A snapshot is a cache of an aggregate's state at a version. When stored it gets a `seal`: the
chain of its aggregate's event at that version (ledger/infrastructure/chain.py), the SHA-256 of its
own stored bytes, and, with a key configured, an HMAC-SHA256 of both under a key derived from
the signing key (ledger/infrastructure/signing.py). On load, a snapshot whose seal is missing or
does not hold (state edited, event chain changed, MAC wrong or absent while a key is configured) is
ignored: the aggregate is replayed from its events instead. Without a key the seal is a digest
anyone can recompute, so it stops edits that do not recompute it; `verify` compares every snapshot
with the replay of its events either way (ledger/infrastructure/audit.py).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterator
from typing import Any
from uuid import UUID

import orjson
from eventsourcing.domain import CanSnapshotAggregate, DomainEventProtocol
from eventsourcing.persistence import EventStore, Mapper, StoredEvent
from eventsourcing.utils import get_topic, resolve_topic

from ledger.infrastructure.chain import PASS_TO_TRANSCODER, SEAL_KEY, ChainMapper
from ledger.infrastructure.signing import Signer

MARK = b',"' + SEAL_KEY.encode() + b'":'


def body_digest(body: bytes) -> str:
    """SHA-256 of a snapshot's stored bytes without its seal (any byte changed changes it)."""
    return hashlib.sha256(body).hexdigest()


def mac_message(version: int, chain: str, digest: str) -> bytes:
    return orjson.dumps(["rin-ledger snapshot v1", version, chain, digest])


def sealed(stored: StoredEvent, chain: str, signer: Signer | None) -> StoredEvent:
    """The stored snapshot with its seal appended as the state's last key: the snapshot's
    bytes are hashed as they are, so loading one needs no second parse."""
    body = bytes(stored.state)
    digest = body_digest(body)
    seal: dict[str, Any] = {"chain": chain, "digest": digest}
    if signer is not None:
        seal.update(key=signer.fingerprint,
                    mac=signer.mac(mac_message(stored.originator_version, chain, digest)))
    return StoredEvent(originator_id=stored.originator_id,
                       originator_version=stored.originator_version, topic=stored.topic,
                       state=b"".join((memoryview(body)[:-1], MARK, orjson.dumps(seal), b"}")))


def split(state: bytes | str) -> tuple[bytes, Any]:
    """(the snapshot's bytes as stored before sealing, its seal), or (the bytes, None)."""
    raw = state.encode() if isinstance(state, str) else bytes(state)
    at = raw.rfind(MARK)
    if at < 0:
        return raw, None
    try:
        return raw[:at] + b"}", orjson.loads(raw[at + len(MARK):-1])
    except ValueError:
        return raw, None


def seal_problem(stored: StoredEvent, event_chain: str | None, signer: Signer | None) -> str | None:
    """Why the stored snapshot must not be used, or None if its seal holds.

    `event_chain` is the stored chain of the aggregate's event at the snapshot's version."""
    body, seal = split(stored.state)
    if not isinstance(seal, dict):
        return "no seal"
    digest = body_digest(body)
    if seal.get("digest") != digest:
        return "state differs from its seal's digest: edited"
    if event_chain is None or seal.get("chain") != event_chain:
        return "seal names a chain the event at its version does not have"
    if signer is not None:
        expected = signer.mac(mac_message(stored.originator_version, event_chain, digest))
        if not hmac.compare_digest(str(seal.get("mac", "")), expected):
            return f"MAC does not hold under {signer.fingerprint}"
    return None


class SealedSnapshots(EventStore[UUID]):
    """The snapshot store: only snapshots whose seal holds come out of `get`."""

    def __init__(self, store: EventStore[UUID], mapper: SealingMapper) -> None:
        super().__init__(store.mapper, store.recorder)
        self._sealer = mapper

    def get(self, originator_id: UUID, *, gt: int | None = None, lte: int | None = None,
            desc: bool = False, limit: int | None = None,
            ) -> Iterator[DomainEventProtocol[UUID]]:
        rows = self.recorder.select_events(originator_id=originator_id, gt=gt, lte=lte,
                                           desc=desc, limit=limit)
        signer = self._sealer.signer
        for row in rows:
            if type(row.originator_version) is not int:  # plain SQL's, never the ledger's
                continue
            if seal_problem(row, self._sealer.chain_at(originator_id, row.originator_version),
                            signer) is None:
                snapshot = self.mapper.to_domain_event(row)
                if loads_as_current(snapshot):
                    yield snapshot


def is_current(snapshot: Any) -> bool:
    """Whether a snapshot was taken by its aggregate's current class version: an older one may
    lack state the class now derives from its events (Party v3's facts), so it is replayed
    past, never upcast into an aggregate that decides a command."""
    stored = snapshot.state.get("class_version", 1)
    return bool(stored >= getattr(resolve_topic(snapshot.topic), "class_version", 1))


def loads_as_current(snapshot: Any) -> bool:
    """Whether a snapshot may decide a command: taken by its aggregate's current class version,
    or by one its class declares it upcasts exactly (`snapshots_load_from`, Party v6 → v7): a
    snapshot older still is replayed past."""
    cls = resolve_topic(snapshot.topic)
    oldest = getattr(cls, "snapshots_load_from", getattr(cls, "class_version", 1))
    return bool(snapshot.state.get("class_version", 1) >= oldest)



class SealingMapper(ChainMapper):
    """The chain mapper, sealing each snapshot it stores; `signer` is the key in use, if any."""

    signer: Signer | None = None

    def to_stored_event(self, domain_event: DomainEventProtocol[UUID]) -> StoredEvent:
        if not isinstance(domain_event, CanSnapshotAggregate):
            return super().to_stored_event(domain_event)
        chain = self.chain_at(domain_event.originator_id, domain_event.originator_version)
        return self.sealed_snapshot(domain_event, chain)

    def sealed_snapshot(self, snapshot: Any, chain: str) -> StoredEvent:
        """The stored snapshot, sealed to `chain` (that of its aggregate's event at its
        version), its state rendered by orjson with the transcoder's transcodings: the same
        JSON values as the library's `json`-based mapping, several times faster on a large
        party (7 ms a snapshot of the busiest party of a 100k-event store). A value orjson
        refuses (a key not a string, a type without a transcoding) falls back to the
        library's mapping; tests/integration/test_snapshot_in_save.py compares the two."""
        state = dict(vars(snapshot))
        originator_id, version = state.pop("originator_id"), state.pop("originator_version")
        class_version = getattr(type(snapshot), "class_version", 1)
        if class_version > 1:
            state["class_version"] = class_version
        try:
            rendered = orjson.dumps(state, default=self._default, option=PASS_TO_TRANSCODER)
            stored = StoredEvent(originator_id=originator_id, originator_version=version,
                                 topic=get_topic(type(snapshot)), state=rendered)
        except TypeError:  # orjson.JSONEncodeError
            stored = Mapper.to_stored_event(self, snapshot)
        return sealed(stored, chain, self.signer)
