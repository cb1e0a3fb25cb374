"""Write tests/data/store_r3/events.sqlite with release 2 as main left it before issue 15
(commit c7bdf5a), whose command records are `CommandRecord` events in the log (a store of
that format keeps writing them; ledger/infrastructure/command_table.py).

1001 generates 10,000 gallons of ethanol (EV 1.0, D6 serials 1..10,000, §80.1426(f)(1)) and
transfers them with their fuel to 2001 (id t0); 2001 separates 5,000 on blending
(§80.1429(b)(2): serials 1..5,000 become K=2); 2001 sells 1,000 K=1 to 3001 (S1, matched by
B1, §80.1452), then transfers 4,000 K=2 (t2), which 3001 retires for 2024 (r1). Every command
after the registrations has an id: 7 command records.

Run once from a checkout of commit c7bdf5a: `python tests/data/make_store_r3.py`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent.parent), str(HERE.parent)]

from markets import REGISTRATIONS  # noqa: E402

from ledger.application.ledger import Ledger  # noqa: E402


def rins(k: int, quantity: int) -> dict[str, Any]:
    return {"d_code": 6, "vintage": 2024, "k": k, "quantity": quantity}


COMMANDS: list[dict[str, Any]] = [
    *REGISTRATIONS,
    {"type": "generate", "id": "g1", "date": "2024-01-02", "party": "1001",
     "facility": "20001", "batch": "00001", "fuel": "ethanol", "d_code": 6, "volume": 10_000},
    {"type": "transfer", "id": "t0", "date": "2024-01-03", "from": "1001", "to": "2001",
     "rins": rins(1, 10_000), "volume": 10_000},
    {"type": "separate", "id": "sep1", "date": "2024-01-04", "party": "2001",
     "reason": "blending", "rins": rins(1, 5_000), "volume": 5_000},
    {"type": "sell", "id": "S1", "date": "2024-01-05", "party": "2001", "to": "3001",
     "rins": rins(1, 1_000), "volume": 1_000, "price": "0.90"},
    {"type": "buy", "id": "B1", "date": "2024-01-05", "party": "3001", "from": "2001",
     "rins": rins(1, 1_000), "volume": 1_000, "match": "S1"},
    {"type": "transfer", "id": "t2", "date": "2024-01-06", "from": "2001", "to": "3001",
     "rins": rins(2, 4_000)},
    {"type": "retire", "id": "r1", "date": "2025-02-01", "party": "3001",
     "reason": "compliance", "compliance_year": 2024, "rins": rins(2, 4_000)},
]


if __name__ == "__main__":
    folder = HERE / "store_r3"
    folder.mkdir(exist_ok=True)
    with Ledger(folder) as ledger:
        results = [ledger.apply(command, line) for line, command in enumerate(COMMANDS, 1)]
        assert all(r.status == "applied" for r in results), [
            r for r in results if r.status != "applied"]
        for party in ("1001", "2001", "3001"):
            print(party, ledger.party(party).version, ledger.holdings(party))
    for suffix in ("-wal", "-shm"):
        assert not (folder / f"events.sqlite{suffix}").exists()
