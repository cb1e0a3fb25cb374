"""The library's errors that are not refusals: a refusal is a `Result` (it stores nothing and
names its paragraph); these are raised, and every one is a `LibraryError`.

`UnknownParty` and `BadArgument` are the caller's mistakes (exit 2 on the command line);
`StoreError` (ledger/application/store_failures.py) is the store failing (exit 3).
"""

from __future__ import annotations


class LibraryError(Exception):
    """The base of everything the library raises on purpose: catch it to catch them all."""


class BadArgument(LibraryError, ValueError):
    """An argument of a library call that cannot be used: names the argument and the value."""

    def __init__(self, argument: str, message: str) -> None:
        super().__init__(f"{argument}: {message}")
        self.argument = argument


class UnknownParty(LibraryError, KeyError):
    """A question about a party that is not registered (§80.1450) at the position asked.

    A `KeyError` too, so code written for release 2 (which raised a bare `KeyError`) still
    catches it."""

    def __init__(self, party: str) -> None:
        super().__init__(f"party {party} is not registered")
        self.party = party

    def __str__(self) -> str:  # a KeyError would quote the message
        return str(self.args[0])
