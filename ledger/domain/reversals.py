"""What a `reverse` compensates: an earlier applied retirement, fast-path transfer or completed
sell, as the ledger recorded it (EMTS's remedial transactions: unretire, and the remedial
buy/sell reasons 030 and 080, reference.md §5).

The original stays as it was stored; the reversal is a fact of its own naming the original's id
and carrying the same exact ranges back.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from enum import StrEnum
from uuid import UUID

from ledger.domain.rin import RinBlock


class Reversible(StrEnum):
    """The kinds of command a `reverse` may name (design.md "reverse")."""

    RETIRE = "retire"
    TRANSFER = "transfer"
    SELL = "sell"


@dataclass(frozen=True)
class Original:
    """The command an id names, as far as a reversal needs it. `kind` is a `Reversible` word or
    what else the id named (`buy`, `generate` …); `giver` the aggregate of the party that
    retired or gave the RINs; `status` a sell's (completed, pending …)."""

    id: str
    kind: str
    giver: UUID | None = None
    on: date | None = None
    rins: tuple[RinBlock, ...] = ()
    receiver: str | None = None
    volume: Decimal | None = None
    reason_code: int | None = None
    reason: str | None = None
    compliance_year: int | None = None
    category: str | None = None
    status: str | None = None
