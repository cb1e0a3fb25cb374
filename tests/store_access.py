"""The one door tests have into a ledger's storage, for what no port offers on purpose: the
raw stored notifications (bytes and topics, as a tamperer sees them), the event store's
application for fault injection (a save that fails, a snapshot store that breaks) and the
chain checks over it. Everything else in the tests goes through `Ledger`'s ports
(`ledger.log`, `position`, `head`, `audit`, …)."""

from __future__ import annotations

from collections.abc import Sequence

from eventsourcing.persistence import Notification

from ledger import Ledger
from ledger.infrastructure.event_store import LedgerApp
from ledger.infrastructure.notification_pages import notifications


def app_of(ledger: Ledger) -> LedgerApp:
    """The ledger's eventsourcing application (its recorder, mapper, snapshot store)."""
    return ledger._app


def stored(ledger: Ledger, after: int = 0, topics: Sequence[str] = ()) -> list[Notification]:
    """The stored notifications after id `after` (of `topics` only, if given), raw."""
    return list(notifications(app_of(ledger).recorder, after, topics=topics))


def as_release_2(ledger: Ledger) -> None:
    """Make a new store's command records `CommandRecord` events, as release 2 wrote them: a
    store holding them keeps writing them (ledger/infrastructure/command_table.py);
    tests/data/store_r3 is such a store, made by release 2's own code."""
    app = app_of(ledger)
    assert app.recorder.max_notification_id() is None, "only a new store"
    app._in_table = False  # the format a store of release 2 reads itself to be, once
