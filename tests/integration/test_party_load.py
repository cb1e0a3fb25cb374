"""A party loads from a snapshot at most a snapshot interval behind it, and what its rules read
from that snapshot is what a replay of its whole history gives: the retirements an obligated
party applied to a year (§80.1427), kept undecoded until a rule reads them (§80.1474(b))."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from store_access import app_of

from ledger import Ledger
from ledger.domain.party import Party
from ledger.infrastructure.event_store import LedgerApp

REGISTER = [
    {"type": "register_party", "party": "1001", "name": "Prairie", "roles": ["producer"],
     "facilities": ["20001"]},
    {"type": "register_party", "party": "2001", "name": "Gulf", "roles": ["blender"]},
    {"type": "register_party", "party": "3001", "name": "Lakeside", "roles": ["obligated_party"]},
]
INTERVAL = LedgerApp.snapshotting_intervals[Party]
RETIREMENTS = INTERVAL  # 3001: registered, received, then one retirement an event: past
EACH = 5_000 // RETIREMENTS  # one interval, EACH × RETIREMENTS (up to 5,000) gallon-RINs retired
RETIRED = EACH * RETIREMENTS


def d6(k: int, quantity: int) -> dict[str, int]:
    return {"d_code": 6, "vintage": 2024, "k": k, "quantity": quantity}


def retire(n: int, quantity: int, reason: str = "compliance") -> dict[str, Any]:
    return {"type": "retire", "id": f"r-{reason}-{n}", "date": "2025-02-10" if reason ==
            "compliance" else "2025-06-10", "party": "3001", "reason": reason,
            "rins": d6(2, quantity), "compliance_year": 2024}


def applied(ledger: Ledger, *commands: dict[str, Any]) -> None:
    for cmd in commands:
        result = ledger.apply(cmd)
        assert result.status == "applied", result.error


def replayed(ledger: Ledger, party: str) -> Party:
    whole: Party | None = None
    for event in ledger.log.history(Party.create_id(party)):
        whole = event.mutate(whole)
    assert whole is not None
    return whole


def test_an_obligated_partys_snapshot_holds_its_retirements_as_a_replay_does(tmp_path: Path
                                                                           ) -> None:
    with Ledger(tmp_path) as book:
        applied(book, *REGISTER)
        code = book.apply({"type": "generate", "date": "2024-01-31", "party": "1001",
                           "facility": "20001", "batch": "00001", "fuel": "ethanol",
                           "d_code": 6, "volume": 6_000}).rin
        assert code is not None
        applied(
            book,
            {"type": "transfer", "date": "2024-02-05", "from": "1001", "to": "2001",
             "rins": d6(1, 6_000), "volume": 6_000},
            {"type": "separate", "date": "2024-02-09", "party": "2001", "reason": "blending",
             "rins": d6(1, 6_000), "volume": 6_000},
            {"type": "transfer", "date": "2024-03-15", "from": "2001", "to": "3001",
             "rins": d6(2, 6_000)},
            *(retire(n, EACH) for n in range(RETIREMENTS)),  # FIFO: serials 1-RETIRED
        )
    with Ledger(tmp_path) as fresh:
        oid = Party.create_id("3001")
        snapshot = next(app_of(fresh).snapshots.get(oid, desc=True, limit=1))  # type: ignore[union-attr]
        loaded = fresh.party("3001")
        assert loaded.version - snapshot.originator_version < INTERVAL
        assert loaded.facts == replayed(fresh, "3001").facts
        assert sum(a.block.gallon_rins for a in loaded.facts.applied[2024]) == RETIRED
        # serials 1-250 of the batch, all retired by 3001 for 2024, are found invalid
        applied(fresh, {"type": "invalidate", "date": "2025-06-02", "reason": "wrong_volume",
                        "rin": f"{code[:22]}{1:08d}{250:08d}"})
        refused = fresh.apply(retire(0, 251, "remedial_invalid"))
        assert (refused.status, refused.rule) == ("rejected", "REPLACE-NEEDED"), refused
        applied(fresh, retire(1, 250, "remedial_invalid"))  # the 250 serials after RETIRED
        again = fresh.apply(retire(2, 1, "remedial_invalid"))
        assert (again.status, again.rule) == ("rejected", "REPLACE-NEEDED"), again
        assert fresh.party("3001").facts == replayed(fresh, "3001").facts
