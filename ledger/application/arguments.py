"""The library's arguments checked before anything is read: a bad one raises `BadArgument`
naming the argument, never a bare `KeyError`/`AttributeError` from deep inside."""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Any

from ledger.application.api_errors import BadArgument

PARTY = re.compile(r"\d{4}")  # a company id (§80.1425(c)): four digits
ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def party_id(value: Any) -> str:
    """A 4-digit company id as a string (design.md "Interfaces")."""
    if not isinstance(value, str) or not PARTY.fullmatch(value):
        raise BadArgument("party", f"a party is a 4-digit company id string, not {value!r:.40}")
    return value


def as_of_date(value: Any) -> date | None:
    """A date, an ISO `YYYY-MM-DD` string, or None (now)."""
    if value is None or (isinstance(value, date) and not isinstance(value, datetime)):
        return value
    if isinstance(value, str) and ISO_DATE.fullmatch(value):
        try:
            return date.fromisoformat(value)
        except ValueError:
            pass
    raise BadArgument("as_of", f"a date or an ISO date YYYY-MM-DD, not {value!r:.40}")


def log_position(value: Any, last: int) -> int:
    """A notification id from 0 to `last`, or a head (`Ledger.head()`) naming one."""
    if isinstance(value, dict):
        value = value.get("notification_id")
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadArgument("known_at", f"a notification id or a head, not {value!r:.40}")
    if not 0 <= value <= last:
        raise BadArgument("known_at", f"notification {value:,} is not in the log (0 to {last:,})")
    return int(value)  # an int already: typed as one for every mypy version
