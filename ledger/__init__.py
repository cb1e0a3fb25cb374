"""rin-ledger: an event-sourced ledger of RINs under 40 CFR 80 Subpart M.

`from ledger import Ledger` opens a store and applies commands; docs/library.md is the guide
to every name in `__all__`.
"""

from ledger.application.api_errors import BadArgument, LibraryError, UnknownParty
from ledger.application.event_log import LoggedEvent
from ledger.application.ledger import Ledger, Result
from ledger.application.positions import Positions
from ledger.application.results import Refusal
from ledger.application.rows import HeldBlock, Holding, Row
from ledger.application.store_failures import StoreError, WriteConflict

__all__ = [
    "BadArgument",
    "HeldBlock",
    "Holding",
    "Ledger",
    "LibraryError",
    "LoggedEvent",
    "Positions",
    "Refusal",
    "Result",
    "Row",
    "StoreError",
    "UnknownParty",
    "WriteConflict",
]
