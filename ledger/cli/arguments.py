"""Report arguments checked before any store is opened: a bad one exits 2 naming the option and
the rule (design.md "Exit codes"), in the same strict forms as transaction-file fields."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from pathlib import Path
from urllib.parse import urlparse

import typer

from ledger.domain.errors import LedgerError
from ledger.domain.rin import parse_code
from ledger.domain.strict_types import FIRST_YEAR, LAST_YEAR, check_date
from ledger.infrastructure.settings import UNSUPPORTED_OPTIONS

PARTY = re.compile(r"[0-9]{4}")
BATCH = re.compile(r"[0-9]{4}[0-9]{4}[0-9]{5}[0-9A-Z]{5}")  # YYYY CCCC FFFFF BBBBB, §80.1425
YEARS = {"min": FIRST_YEAR, "max": LAST_YEAR}  # the years a RIN code names (§80.1425(b))
LAST_NOTIFICATION = 2**63 - 1  # the largest id an event store's INTEGER column can hold


def store_url(value: str | None) -> str | None:
    """`--store`: a PostgreSQL URL, `postgresql://user:password@host:port/database`; none means
    the SQLite store in the data folder. An empty one (`--store "$URL"` with URL unset) is
    refused: taken for none, it would write a SQLite ledger the user meant to be elsewhere."""
    if value is None:
        return None
    if not value:
        raise typer.BadParameter("empty: give a postgresql:// URL, or leave --store out for the "
                                 "SQLite store in --data", param_hint="--store")
    try:
        url = urlparse(value)
        url.port  # noqa: B018 - parsing the port is the check
    except ValueError as exc:
        raise typer.BadParameter(f"not a PostgreSQL URL ({exc})", param_hint="--store") from None
    if url.scheme not in ("postgresql", "postgres") or not url.hostname:
        raise typer.BadParameter(
            "expected postgresql://user:password@host:port/database", param_hint="--store")
    if url.query or url.fragment or url.params:
        raise typer.BadParameter(UNSUPPORTED_OPTIONS, param_hint="--store")
    return value


def data_folder(path: Path) -> Path:
    """`--data`: a folder (made if missing), not a file."""
    if path.exists() and not path.is_dir():
        raise typer.BadParameter(f"{path} is not a folder", param_hint="--data")
    return path


def iso_date(value: str | None, option: str) -> date | None:
    """An effective date `YYYY-MM-DD`, as in a transaction file."""
    if value is None:
        return None
    try:
        return check_date(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint=option) from None


def party(value: str | None) -> str | None:
    """A 4-digit company id (CCCC, §80.1425(c))."""
    if value is not None and not PARTY.fullmatch(value):
        raise typer.BadParameter(f"a party is a 4-digit company id, got {value[:40]!r}",
                                 param_hint="--party")
    return value


def rin_code(value: str, name: str) -> str:
    """A 38-character batch-RIN code (§80.1425)."""
    try:
        parse_code(value, name)
    except LedgerError as error:
        raise typer.BadParameter(str(error), param_hint=name) from None
    return value


def batch_identity(value: str | None) -> str | None:
    """`YYYYCCCCFFFFFBBBBB`, or a 38-character code whose batch it is (K is not part of it)."""
    if value is None:
        return None
    if len(value) == 38:
        return rin_code(value, "--batch")[1:19]
    if not BATCH.fullmatch(value):
        raise typer.BadParameter(
            f"a batch is YYYYCCCCFFFFFBBBBB (18 characters) or a 38-character RIN code, "
            f"got {value[:40]!r}", param_hint="--batch")
    return value


def known_at(value: str | None) -> int | datetime | None:
    """`--known-at` is a notification id (ASCII digits), or an ISO timestamp (naive = UTC)."""
    if value is None:
        return None
    if value.isascii() and value.isdigit():
        return min(int(value), LAST_NOTIFICATION)  # beyond every id stored: all is known
    try:
        moment = datetime.fromisoformat(value)
        return moment.astimezone(UTC) if moment.tzinfo else moment
    except (ValueError, OverflowError):  # not a timestamp, or one that is no UTC time
        raise typer.BadParameter(f"not a notification id or ISO timestamp: {value[:40]!r}",
                                 param_hint="--known-at") from None
