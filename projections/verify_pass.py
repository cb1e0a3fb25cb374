"""`rin verify` in one walk of the log: the audit (ledger/infrastructure/audit.py) reads each
page of notifications once, checks its chains and heads, decodes each event once, and hands the
decoded events to the snapshot check and to this follower, which feeds them to a rebuild of the
views into a scratch file and to the invariants beside it (projections/invariants.py). Once the
audit has found something wrong the follower gets nothing more: only history that holds is
replayed (tampered bytes may not decode), and its findings are then not reported.
"""

from __future__ import annotations

import sqlite3
import tempfile
from pathlib import Path
from typing import Any

from eventsourcing.persistence import PersistenceError

from ledger.application.event_log import LoggedEvent
from ledger.application.ledger import Ledger
from projections import read_side, runner
from projections.invariants import InvariantChecks, table_differences

#: failures of the storage, which stop `verify` (exit 3) rather than being a problem found
STORAGE_ERRORS = (sqlite3.Error, PersistenceError, OSError)


class VerifyPass:
    """The audit walk's follower: a rebuild of the views and the invariants' replay."""

    topics = frozenset(runner.TOPICS)

    def __init__(self, ledger: Ledger, path: Path, folder: Path) -> None:
        self.ledger = ledger
        self.path = path
        self.fresh = folder / "views.sqlite"
        self.checks = InvariantChecks(folder)
        self.rebuilding: runner.Rebuilding | None = None
        self.failure: str | None = None

    def begin(self, end: int) -> None:
        """Bring the incremental views to the walk's end, then start the rebuild."""
        try:
            runner.project(self.ledger, self.path, stop=end)
        except STORAGE_ERRORS:
            raise
        except Exception as error:  # a forged state the views cannot take
            self.failed(end, error)
        self.rebuilding = runner.Rebuilding(self.fresh, self.ledger.log.name,
                                            observe=self.checks.check)

    def page(self, events: list[tuple[int, Any]], last: int) -> None:
        if self.failure is not None or self.rebuilding is None:
            return
        self.checks.locks.feed(events)
        try:
            self.rebuilding.page([LoggedEvent(n, event) for n, event in events], last)
        except STORAGE_ERRORS:
            raise
        except Exception as error:  # whatever a forged state makes the replay raise
            self.failed(last, error)

    def failed(self, notification_id: int, error: Exception) -> None:
        self.failure = (f"replaying the events failed: {type(error).__name__}: {error} (a "
                        "stored state the ledger never writes, with its chains and heads "
                        f"recomputed; at or before notification {notification_id:,})")

    def problems(self) -> list[str]:
        """The invariants' problems, once the walk is over."""
        if self.failure is not None or self.rebuilding is None:
            self.close()
            return [self.failure] if self.failure else []
        self.rebuilding.finish()
        return self.checks.problems(table_differences(self.path, self.fresh), self.path)

    def close(self) -> None:
        """Leave the rebuild and the scratch file (the audit found something wrong)."""
        if self.rebuilding is not None:
            self.rebuilding.close()
        self.checks.dated.db.close()


def verify(ledger: Ledger, path: Path, public_key: Any = None,
           exported: dict[str, Any] | None = None) -> list[str]:
    """Every stored fact and invariant that does not hold, in one walk of the log: the audit's
    problems and the views file's (its definitions and tracking) if there are any, else the
    invariants' and the views' differences from their rebuild."""
    problems = read_side.check_read_side(ledger, path)
    with tempfile.TemporaryDirectory() as folder:
        follower = None if problems else VerifyPass(ledger, path, Path(folder))
        problems = ledger.audit(public_key, exported, follower) + problems
        if follower is None:
            return problems
        if problems:
            follower.close()
            return problems
        return follower.problems()
