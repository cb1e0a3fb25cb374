"""`verify`'s walk reads each stored state once, with orjson where that is exact
(docs/chain-format.md, docs/verify-memory.md "Fifth round").

orjson parses several times faster than the standard library but not always the same value:
it reads an integer beyond 64 bits as a float, and refuses what the standard library takes (a
lone surrogate, a byte-order mark). A state whose bytes are the canonical JSON of orjson's
value (stored format 2: everything the ledger writes since issue 15's third round) was read
exactly: an integer read as a float renders with a point or an exponent, a duplicate key once,
an escape as its character, so none of them renders back to the same bytes, and a float that
does is the shortest text of its double, which every correct parser reads as that double. Any
other state (format 1, or tampered) is read by `read_state`, as before.
Tests: tests/unit/test_chain_walk.py.
"""

from __future__ import annotations

import orjson
from eventsourcing.persistence import Notification

from ledger.infrastructure.chain import CANONICAL, ReadState, read_state


def read_once(notification: Notification) -> ReadState:
    """The state as `read_state` reads it: by orjson when its bytes are the canonical JSON of
    orjson's value (then the same value, and those bytes are what the head folds), else by
    `read_state` itself."""
    raw = notification.state
    if type(raw) is bytes:
        try:
            value = orjson.loads(raw)
            body = orjson.dumps(value, option=CANONICAL)  # `canonical`, one call less
        except (orjson.JSONDecodeError, TypeError):  # not JSON to orjson, or too deep to render
            return read_state(notification)
        if body == raw:
            return ReadState(value, raw, True)
    return read_state(notification)
