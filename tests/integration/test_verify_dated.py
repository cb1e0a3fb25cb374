"""verify's dated checks, each broken on purpose by an event forged past every rule: a party
holding a gallon-RIN negatively on a date, and a party owning negative fuel on a date. They
are gathered fact by fact while the log streams by (projections/invariants.py `DatedChecks`)."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from projections_helpers import apply_all, sample_commands
from store_access import app_of

from ledger import Ledger
from ledger.domain.party import Party
from ledger.domain.vocabulary import FuelDirection
from projections import verify


def forge(ledger: Ledger, party_id: str, event_class: type, **fields: Any) -> None:
    """Store, chained like any event, an event of the party that its aggregate never applied
    (its own checks would refuse it): what a bug or a forged store could hold."""
    party = ledger.party(party_id)
    event = event_class(originator_id=party.id, originator_version=party.version + 1,
                        timestamp=datetime.now(UTC), client_id=None, **fields)
    app_of(ledger).events.put([event])


def test_a_gallon_rin_held_negatively_on_a_date_is_named(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path)
    apply_all(ledger, sample_commands())
    assert verify(ledger) == []
    block = next(b for b in ledger.party("3001").holdings.blocks())
    # sent on a date before 3001 had it (it was generated on block.key.generated)
    forge(ledger, "3001", Party.TransferredOut, effective_date=date(2024, 1, 1),
          rins=[block], volume=None, ptd=None, price=None, trade_reason_code=10,
          to_party="2001", postings=[])
    problems = verify(ledger)
    assert block.key.generated > date(2024, 1, 1)
    assert any(p.startswith(f"party 3001 holds {block.code[:22]}… negatively or twice on "
                            "2024-01-01") for p in problems), problems


def test_negative_fuel_on_a_date_is_named(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path)
    apply_all(ledger, sample_commands())
    forge(ledger, "2001", Party.FuelMoved, effective_date=date(2024, 12, 3),
          direction=FuelDirection.DELIVERED, volume=Decimal(10**12), counterparty=None,
          ptd=None, facility=None)
    problems = verify(ledger)
    assert any(p.startswith("party 2001 owns -") and p.endswith("gallons of fuel on 2024-12-03")
               for p in problems), problems
