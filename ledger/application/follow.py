"""Following the ledger from a position, for downstream services: each new domain event once,
in log order, with its notification id (keep the last one handled and resume after it).

The stores have no subscriptions the library exposes on both, so a follower polls the
notification log (one indexed read of its end) every `interval` seconds while it is caught up.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence

from eventsourcing.domain import DomainEvent
from eventsourcing.utils import get_topic

from ledger.application.api_errors import BadArgument
from ledger.application.event_log import EventLog, LoggedEvent
from ledger.domain.batch_status import BatchStatus
from ledger.domain.invalidation import BatchInvalidation
from ledger.domain.party import Party

#: the topics of every event class of the domain's aggregates (Party, BatchInvalidation,
#: BatchStatus): the
#: command records, the store's own bookkeeping, are left out
DOMAIN_TOPICS = sorted({
    get_topic(member) for aggregate in (Party, BatchInvalidation, BatchStatus)
    for member in vars(aggregate).values()
    if isinstance(member, type) and issubclass(member, DomainEvent)
})


def seconds(value: object) -> bool:
    """Whether `value` is a number of seconds (an int or float, not a bool)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def follow(
    log: EventLog, after: int = 0, *, timeout: float | None = None, interval: float = 0.1,
    topics: Sequence[str] = DOMAIN_TOPICS,
) -> Iterator[LoggedEvent]:
    """Every event after notification `after`, then each new one as it is stored; ends once
    `timeout` seconds pass with nothing new (None: never; 0: when caught up)."""
    if isinstance(after, bool) or not isinstance(after, int) or after < 0:
        raise BadArgument("after", f"a notification id (0 or more), not {after!r:.40}")
    if timeout is not None and not (seconds(timeout) and timeout >= 0):
        raise BadArgument("timeout", f"seconds (0 or more) or None, not {timeout!r:.40}")
    if not (seconds(interval) and interval > 0):
        raise BadArgument("interval", f"seconds (more than 0), not {interval!r:.40}")
    position, quiet_since = after, time.monotonic()
    while True:
        end = log.position()
        if end > position:
            yield from log.events(position, stop=end, topics=topics)
            position, quiet_since = end, time.monotonic()
            continue
        if timeout is not None and time.monotonic() - quiet_since >= timeout:
            return
        time.sleep(interval)
