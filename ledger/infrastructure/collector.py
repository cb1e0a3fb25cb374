"""Python's cyclic garbage collector tuned for the ledger's many short-lived objects.

A bulk ingest allocates millions of small objects (events, dicts, serial sets) that die young
without cycles; at the default threshold (a collection every 700 net allocations) the collector
rescans the same live aggregates over and over, about 5 % of ingest CPU (issue 15's profile).
"""

from __future__ import annotations

import gc

DEFAULT_THRESHOLD = 700  # CPython's own first-generation threshold
#: (young, middle, old): a young collection every 50,000 net allocations, and the older
#: generations as rarely as CPython's default relative to it
THRESHOLD = (50_000, 20, 100)


def tune_collector() -> bool:
    """Raise the collector's thresholds and freeze what is alive now (modules, rule tables),
    unless the process chose its own thresholds; True if it did so. Once per process."""
    if gc.get_threshold()[0] != DEFAULT_THRESHOLD:
        return False
    gc.freeze()  # objects alive at start are never scanned again
    gc.set_threshold(*THRESHOLD)
    return True
