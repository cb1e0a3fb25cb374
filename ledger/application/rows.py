"""Typed report rows: what `Ledger.holdings` and `Ledger.blocks` answer, one frozen dataclass
per row. Each also reads like the dict release 2 returned (`row["gallon_rins"]`, `get`, `keys`,
`to_dict`, and equal to a dict of the same items), so code written for the dicts keeps working."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True, slots=True, eq=False)
class Row:
    """A typed row that can also be read as a read-only mapping of its fields."""

    def keys(self) -> tuple[str, ...]:
        return tuple(f.name for f in fields(self))

    def __getitem__(self, name: str) -> Any:
        if name not in self.keys():
            raise KeyError(name)
        return getattr(self, name)

    def get(self, name: str, default: Any = None) -> Any:
        return getattr(self, name) if name in self.keys() else default

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.keys()}

    def __eq__(self, other: object) -> bool:
        """Equal to a row of the same type and values, or to a dict of the same items."""
        if isinstance(other, dict):
            return self.to_dict() == other
        if type(other) is not type(self) or not isinstance(other, type(self)):
            return NotImplemented  # (isinstance too: every mypy version narrows by it)
        return self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash((type(self), *(getattr(self, name) for name in self.keys())))


@dataclass(frozen=True, slots=True, eq=False)
class Holding(Row):
    """Gallon-RINs a party holds of one D code, vintage and K (§80.1425(a), (b), (g))."""

    party: str
    d_code: int
    vintage: int
    k: int
    gallon_rins: int


@dataclass(frozen=True, slots=True, eq=False)
class HeldBlock(Row):
    """One held block and its 38-character code (§80.1425); a daughter of a split is a block
    of its own (§80.1428(d)); whether a pending sell reserves it (§80.1452), its batch's QAP
    status (§80.1471(e)) and whether a lock holds it (§80.1474(b)(1))."""

    party: str
    rin: str
    d_code: int
    vintage: int
    k: int
    gallon_rins: int
    reserved: bool
    qap: str
    locked: bool
