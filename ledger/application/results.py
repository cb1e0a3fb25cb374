"""`Result`: what applying one command did, the one result type of handlers and the `Ledger`.

`applied` or `duplicate` (with the RIN codes generated), or `rejected` with the error, its
citation, rule id and field; `to_dict` is the JSON line `rin apply --json` prints (design.md).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from dataclasses import field as default
from typing import Any

from ledger.domain.errors import LedgerError, RuleViolation


@dataclass
class Result:
    """The outcome of one command: `applied`, `duplicate` or `rejected` (with the error)."""

    line: int
    status: str
    error: str | None = None
    citation: str | None = None
    rule: str | None = None
    field: str | None = None
    rin: str | None = None  # the generated batch-RIN's code (the first, when several D codes)
    rins: list[str] = default(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if v not in (None, [])}
        out.setdefault("error", None)
        return out


def rejected(line: int, error: LedgerError) -> Result:
    rule_id = error.rule_id if isinstance(error, RuleViolation) else None
    return Result(line, "rejected", str(error), error.citation, rule_id, error.field)
