"""rin-ledger: an event-sourced ledger of RINs under 40 CFR 80 Subpart M.

`from ledger import Ledger` opens a store and applies commands; see README.md.
"""

from ledger.application.ledger import Ledger, Result

__all__ = ["Ledger", "Result"]
