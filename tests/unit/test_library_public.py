"""Issue 14: the library's public names are exported, documented and importable from `ledger`."""

from __future__ import annotations

import re
from pathlib import Path

import ledger

DOC = Path(__file__).resolve().parents[2] / "docs" / "library.md"
#: what a service needs: the façade, its results and rows, the readers, the errors
EXPECTED = {
    "Ledger", "Result", "Refusal", "Holding", "HeldBlock", "Row", "Positions", "LoggedEvent",
    "LibraryError", "UnknownParty", "BadArgument", "StoreError", "WriteConflict",
}


def test_all_lists_the_public_names() -> None:
    assert set(ledger.__all__) == EXPECTED
    assert len(ledger.__all__) == len(EXPECTED)  # no name twice


def test_every_public_name_is_importable_and_documented() -> None:
    namespace: dict[str, object] = {}
    exec("from ledger import *", namespace)  # what `import *` gives a user
    table = DOC.read_text(encoding="utf-8").split("## Public names", 1)[1]
    for name in ledger.__all__:
        value = getattr(ledger, name)
        assert namespace[name] is value
        assert value.__doc__, f"{name} has no docstring"
        assert re.search(rf"`{name}`", table), f"{name} is not in docs/library.md's table"


def test_the_errors_form_one_hierarchy() -> None:
    for name in ("UnknownParty", "BadArgument", "StoreError"):
        assert issubclass(getattr(ledger, name), ledger.LibraryError)
    assert issubclass(ledger.UnknownParty, KeyError)  # release 2 raised a bare KeyError
    assert issubclass(ledger.BadArgument, ValueError)
