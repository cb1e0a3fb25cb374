"""Write tests/data/store_r4/events.sqlite with main as it stood at issue 15's third round
(commit cf50358): Party v6, a snapshot every 200 events, whose facts hold the blocks an
obligated party retired for a year (`applied`, §80.1427) as a list of records per year.

1001 generates 6,000 gallons of ethanol (D6 serials 1..6,000, §80.1426(f)(1)) and transfers
them with their fuel to 2001, which separates them on blending (§80.1429(b)(2)) and transfers
the 6,000 K=2 to 3001; 3001 retires 25 gallon-RINs for 2024 220 times (FIFO: serials
1..5,500), one command a save, so its 222 events are snapshotted at version 200, 198
retirements in, and 22 retirements are stored after the snapshot.
Run once from a checkout of commit cf50358: `python tests/data/make_store_r4.py`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent.parent), str(HERE.parent)]

from markets import REGISTRATIONS  # noqa: E402

from ledger.application.ledger import Ledger  # noqa: E402

RETIREMENTS = 220


def rins(k: int, quantity: int) -> dict[str, Any]:
    return {"d_code": 6, "vintage": 2024, "k": k, "quantity": quantity}


COMMANDS: list[dict[str, Any]] = [
    *REGISTRATIONS,
    {"type": "generate", "id": "g1", "date": "2024-01-02", "party": "1001",
     "facility": "20001", "batch": "00001", "fuel": "ethanol", "d_code": 6, "volume": 6_000},
    {"type": "transfer", "id": "t0", "date": "2024-01-03", "from": "1001", "to": "2001",
     "rins": rins(1, 6_000), "volume": 6_000},
    {"type": "separate", "id": "sep1", "date": "2024-01-04", "party": "2001",
     "reason": "blending", "rins": rins(1, 6_000), "volume": 6_000},
    {"type": "transfer", "id": "t1", "date": "2024-01-06", "from": "2001", "to": "3001",
     "rins": rins(2, 6_000)},
    *({"type": "retire", "id": f"r{n}", "date": "2025-02-01", "party": "3001",
       "reason": "compliance", "compliance_year": 2024, "rins": rins(2, 25)}
      for n in range(RETIREMENTS)),
]


if __name__ == "__main__":
    folder = HERE / "store_r4"
    folder.mkdir(exist_ok=True)
    with Ledger(folder) as ledger:
        results = [ledger.apply(command, line) for line, command in enumerate(COMMANDS, 1)]
        assert all(r.status == "applied" for r in results), [
            r for r in results if r.status != "applied"]
        for party in ("1001", "2001", "3001"):
            print(party, ledger.party(party).version, ledger.holdings(party))
    for suffix in ("-wal", "-shm"):
        assert not (folder / f"events.sqlite{suffix}").exists()
