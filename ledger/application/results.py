"""`Result`: what applying one command did, the one result type of handlers and the `Ledger`.

`applied` or `duplicate` (with the RIN codes generated), or `rejected` with the error, its
citation, rule id and field (`refusal` gives them as one typed `Refusal`); `to_dict` is the JSON
line `rin apply --json` prints (design.md).
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

    @property
    def refusal(self) -> Refusal | None:
        """Why the line was refused, typed; None if it was not."""
        if self.status != "rejected" or self.citation is None:
            return None
        message = self.error or ""
        prefix = f"{self.citation}: "
        return Refusal(self.line, self.rule, self.citation, self.field,
                       message[len(prefix):] if message.startswith(prefix) else message)

    def to_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if v not in (None, [])}
        out.setdefault("error", None)
        return out


@dataclass(frozen=True, slots=True)
class Refusal:
    """A refused line: the rule id from the catalogue (docs/rules.md; None for malformed input
    and write conflicts), the paragraph cited (`§80.1428(a)(4)`, `format`, `concurrency`), the
    field at fault, and the message with its numbers. Nothing of the line was stored."""

    line: int
    rule: str | None
    citation: str
    field: str | None
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.citation}: {self.message}"


def rejected(line: int, error: LedgerError) -> Result:
    rule_id = error.rule_id if isinstance(error, RuleViolation) else None
    return Result(line, "rejected", str(error), error.citation, rule_id, error.field)
