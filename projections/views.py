"""`Views`: the reports over one ledger's read models, each brought up to date before answering."""

from __future__ import annotations

import os
import threading
from datetime import date, datetime
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from ledger.application.ledger import Ledger
from ledger.infrastructure.settings import VIEWS_FILE
from ledger.infrastructure.sqlite_files import sqlite_path
from projections import (
    activity,
    annual,
    attest,
    compliance,
    emts_submissions,
    export_deadlines,
    generation_report,
    holdings,
    invalid,
    invariants,
    journal,
    late,
    lineage,
    market,
    market_tables,
    pg_views,
    quarterly,
    read_side,
    rin_transactions,
    rollforward,
    runner,
    trades,
    transfer_documents,
    verify_pass,
)
from projections.report_head import head_at
from projections.report_rows import QuarterEnd


def file_identity(path: Path) -> tuple[int, int]:
    """(device, inode) of the file at `path`, (0, 0) if there is none."""
    try:
        found = path.stat()
    except OSError:
        return 0, 0
    return found.st_dev, found.st_ino


class Views:
    """The read models of `ledger` in `path` (default `<data>/views.sqlite`)."""

    def __init__(self, ledger: Ledger, path: str | os.PathLike[str] | None = None) -> None:
        """`path`: the views file, or a `postgresql://` URL (projections/pg_views.py); default
        `RIN_VIEWS`, else `<data>/views.sqlite`."""
        self.ledger = ledger
        location = path or runner.views_location(ledger)
        #: the views' PostgreSQL URL, if they live there
        self.url = str(location) if pg_views.is_url(location) else None
        self.path = Path(sqlite_path(location)) if self.url is None else Path(VIEWS_FILE)
        self._open = threading.local()  # this thread's connection to the views file (`_db`)

    def project(self, **options: Any) -> int:
        """Bring the views up to date; return the last notification id projected."""
        return runner.project(self.ledger, self.location, **options)

    def position(self) -> int:
        """The last notification id the views have projected (0 before the first run)."""
        recorder = runner.open_views(self.location)
        try:
            return recorder.max_tracking_id(self.ledger.log.name) or 0
        finally:
            recorder.close()

    def rebuild(self, **options: Any) -> int:
        return runner.rebuild(self.ledger, self.location, **options)

    @property
    def location(self) -> str | Path:
        """The views file, or their PostgreSQL URL."""
        return self.url or self.path

    def _sqlite_only(self, what: str) -> None:
        if self.url is not None:
            raise ValueError(f"{what} checks a SQLite views file; these views are in "
                             "PostgreSQL (rebuild them there, or verify a SQLite copy)")

    def verify(self) -> list[str]:
        self._sqlite_only("verify")
        return invariants.verify(self.ledger, self.path)

    def verify_all(self, public_key: Any = None, exported: dict[str, Any] | None = None
                   ) -> list[str]:
        """Every stored fact (`Ledger.audit`, signatures under `public_key`, an `exported`
        head), the views file and the invariants, in one walk of the log
        (projections/verify_pass.py); an empty list means all hold."""
        self._sqlite_only("verify")
        return verify_pass.verify(self.ledger, self.path, public_key, exported)

    def check_read_side(self) -> list[str]:
        """The views file's integrity, definitions and tracking, before anything is projected
        (projections/read_side.py)."""
        self._sqlite_only("the read-side check")
        return read_side.check_read_side(self.ledger, self.path)

    def _db(self) -> Database:
        """The views file, brought up to date first unless it already is (`runner.current`).

        Kept open between reports, one connection per thread: SQLite reads a file's schema
        once per connection, which was most of a small query's time (an as-of position). A
        connection outside a transaction reads the latest commit, and is opened again if the
        file at `path` is another one (deleted and made anew)."""
        opened: tuple[Database, tuple[int, int]] | None = getattr(self._open, "db", None)
        found = file_identity(self.path)
        if opened is not None and opened[1] != found:
            opened[0].close()
            opened = self._open.db = None
        if opened is not None and runner.current(self.ledger, opened[0].conn):
            return opened[0]
        self.project()
        if opened is None:
            db = Database(self.path)
            self._open.db = opened = (db, file_identity(self.path))
        return opened[0]

    def _ask(self, query: Any, *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        if self.url is not None:
            self.project()
            recorder = pg_views.PgViewRecorder(self.url, runner.TABLES, runner.SQL_VIEWS,
                                               runner.LAYOUT)
            try:
                return recorder.ask(lambda db: query(db, *args, **kwargs))
            finally:
                recorder.close()
        return list(query(self._db(), *args, **kwargs))

    def holdings(
        self, party: str | None = None, as_of: date | None = None,
        known_at: int | datetime | None = None, blocks: bool = False,
    ) -> list[dict[str, Any]]:
        """Positions on `as_of` as the ledger knew them at `known_at` (notification id or time)."""
        position: Any = known_at
        if isinstance(known_at, datetime):
            moment = known_at
            position = self._ask(lambda db: [journal.position_at(db, moment)])[0]
        return self._ask(holdings.holdings, party, as_of, position, blocks)

    def quarter_ends(self, year: int, party: str | None = None) -> list[QuarterEnd]:
        """The §80.1428(a)(5) check at each quarter end of `year`, as typed rows."""
        return [QuarterEnd.of(row) for row in self._ask(quarterly.quarterly, year, party)]

    def quarterly(self, year: int, party: str | None = None) -> list[dict[str, Any]]:
        """The rows of `quarter_ends` as dicts (what the command line prints): `date` a date,
        `assigned_rins` an int, `volume`, `limit` and `excess` Decimals, `ok` a bool."""
        return [row.to_dict() for row in self.quarter_ends(year, party)]

    def compliance(self, year: int, party: str | None = None) -> list[dict[str, Any]]:
        return self._ask(compliance.compliance, year, party)

    def trace(self, code: str) -> list[dict[str, Any]]:
        return self._ask(lineage.trace, code)

    def market(self, year: int | None = None) -> list[dict[str, Any]]:
        return self._ask(market.market, year)

    def invalid(self, batch: str | None = None) -> list[dict[str, Any]]:
        """Invalid RINs (§80.1431) per batch YYYYCCCCFFFFFBBBBB: who holds them, who retired them
        for which year, and what each must still replace (§80.1474(b))."""
        return self._ask(invalid.invalid, batch)

    def ptd(self, party: str | None = None, missing: bool = False) -> list[dict[str, Any]]:
        """Every transfer and its PTD reference (§80.1428(a)(6), §80.1453(a)); with `missing`,
        only the transfers recorded without one."""
        return self._ask(transfer_documents.documents, party, missing)

    def trades(self, party: str | None = None, status: str | None = None
               ) -> list[dict[str, Any]]:
        """EMTS postings and their status (§80.1452(c)); `party` as poster or partner."""
        return self._ask(trades.trades, party, status)

    def ervo_deadlines(self, party: str | None = None) -> list[dict[str, Any]]:
        """Each export and the last day its ERVO must be met, 30 days after it (§80.1430(f),
        §80.1427(c)(1))."""
        return self._ask(export_deadlines.deadlines, party)

    # -- the regulator's reports (§80.1451, §80.1464): each as known at a notification ---------

    def known_position(self, known_at: int | datetime | None = None) -> int:
        """The views brought up to date, and the last notification a report as known at
        `known_at` (a notification id or a time; None: now) reads."""
        position = self.project()
        if isinstance(known_at, datetime):
            db = Database(self.path)
            try:
                return min(position, journal.position_at(db, known_at))
            finally:
                db.close()
        return position if known_at is None else min(position, known_at)

    def head_at(self, position: int) -> dict[str, Any]:
        """The chain head after notification `position`: what a report computed there rests
        on, for `rin verify --against` (projections/report_head.py)."""
        return head_at(self.ledger, position)

    def activity(self, party: str, year: int, quarter: int | None = None,
                 known_at: int | datetime | None = None) -> list[dict[str, Any]]:
        """The RIN Activity Report (§80.1451(c)(2)): `assigned` and `separated` rows per
        quarter (every quarter of `year` if None)."""
        return self._ask(activity.activity, party, year, quarter, self.known_position(known_at))

    def transactions(self, party: str, year: int, quarter: int | None = None,
                     known_at: int | datetime | None = None) -> list[dict[str, Any]]:
        """The RIN Transaction Report (§80.1451(c)(1)): one row per transaction and block."""
        return self._ask(rin_transactions.transactions, party, year, quarter,
                         self.known_position(known_at))

    def generation(self, party: str, year: int, quarter: int | None = None,
                   known_at: int | datetime | None = None) -> list[dict[str, Any]]:
        """The RIN Generation Report (§80.1451(b)(1)(ii)): one row per batch."""
        return self._ask(generation_report.generation, party, year, quarter,
                         self.known_position(known_at))

    def annual(self, party: str, year: int, known_at: int | datetime | None = None
               ) -> list[dict[str, Any]]:
        """The annual compliance report (§80.1451(a)(1)): one row per RVO category."""
        return self._ask(annual.annual, party, year, self.known_position(known_at))

    def attest(self, party: str, year: int, seed: int, known_at: int | datetime | None = None
               ) -> list[dict[str, Any]]:
        """The §80.1464 workpaper: §80.127 samples per transaction type, and each quarter's
        activity report against its roll-forward recomputed from the log."""
        position = self.known_position(known_at)
        recomputed = rollforward.recompute(self.ledger, party, year, position)
        return self._ask(attest.attest, party, year, seed, recomputed, position)

    def late(self, year: int, known_at: int | None = None, only_late: bool = False
             ) -> list[dict[str, Any]]:
        """§80.1452(b)-(c): each submission dated in `year` and its business days to record."""
        return self._ask(late.late, year, known_at, only_late)

    def market_table(self, name: str, known_at: int | None = None) -> list[dict[str, Any]]:
        """One of EPA's public tables: available, separations, retirements or generation."""
        return self._ask(market_tables.table, name, known_at)

    def emts_submissions(self, party: str, start: date, end: date,
                         known_at: int | None = None) -> list[dict[str, Any]]:
        """The party's EMTS blocks dated `start`…`end` (completed postings only)."""
        return self._ask(emts_submissions.submissions, party, start.isoformat(),
                         end.isoformat(), known_at)

    def recorded_on(self, known_at: int) -> date | None:
        """The UTC day the event at or before notification `known_at` was recorded."""
        rows = self._ask(lambda db: list(db.query(
            "SELECT max(recorded) AS r FROM journal WHERE notification_id <= ?", [known_at])))
        return date.fromisoformat(rows[0]["r"][:10]) if rows and rows[0]["r"] else None
