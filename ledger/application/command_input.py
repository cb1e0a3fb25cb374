"""A command as a caller gives it: a transaction-file line (JSON text), a dict or a model.

Text is parsed strictly first (`transaction_file`: duplicated keys, size, UTF-8), then validated by
the domain's command models, so text and dicts meet the same strict field types (design.md
"Refusals are strict")."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from ledger.application.transaction_file import RefusedLine, parse_line
from ledger.domain.commands import Command, validate_command

#: what `Ledger.apply` and `apply_many` take: a line's text or bytes, a dict, a command model, or
#: a line the file reader refused before parsing
CommandInput = str | bytes | dict[str, Any] | BaseModel | RefusedLine


def parse_command(data: CommandInput) -> Command:
    """Validate one command; `InputError` names the line's bad field."""
    if isinstance(data, RefusedLine):
        raise data.error
    if isinstance(data, str | bytes):
        return validate_command(parse_line(data))
    return validate_command(data)
