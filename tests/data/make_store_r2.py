"""Write tests/data/store_r2/events.sqlite with the code before the aggregate kept its rules'
facts (issue 11): parties whose later commands depend on what their history says.

1001 (producer) generates 100,000 D6 RINs, sells 40,000 with 16,000 gal to 2001, splits what
it keeps and separates 4,000 under §80.1429(b)(10); 2001 (blender) separates 20,000 and sells
1,100 to 3001, which retires 1,000 for 2024, then 2,100 more in 210 trades; the regulator finds
500 of the retired invalid and 3001 replaces 300 (§80.1474(b)); 4001 (obligated producer)
separates 3,000 of its own RINs (§80.1429(b)(7)), then sells 2,000 to 2001 in 200 trades;
1002 generates a delayed batch (§80.1426(g)). 2001, 3001 and 4001 pass version 200, so each has
a Party snapshot taken after the facts its later commands depend on.

Run once from a checkout of commit d1b7dca: `python tests/data/make_store_r2.py`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent.parent), str(HERE.parent)]

from ledger.application.ledger import Ledger  # noqa: E402

TRANSFERS = 210
#: serials 1-500 of 1001's batch 00001 (§80.1425(e)): among the 1,000 3001 retired for 2024
INVALID = "1" "2024" "1001" "20001" "00001" "10" "6" "00000001" "00000500"


def rins(d_code: int, k: int, quantity: int, **narrow: Any) -> dict[str, Any]:
    return {"d_code": d_code, "vintage": 2024, "k": k, "quantity": quantity, **narrow}


def commands() -> list[dict[str, Any]]:
    register = [
        {"type": "register_party", "party": party, "name": f"Party {party}", "roles": roles,
         "facilities": facilities}
        for party, roles, facilities in (
            ("1001", ["producer"], ["20001"]), ("1002", ["producer"], ["20002"]),
            ("2001", ["blender"], []), ("3001", ["obligated_party", "refiner"], []),
            ("4001", ["producer", "obligated_party", "refiner"], ["40001"]),
        )
    ]
    market = [
        {"type": "generate", "date": "2024-01-31", "party": "1001", "facility": "20001",
         "batch": "00001", "fuel": "ethanol", "d_code": 6, "volume": "100000"},
        {"type": "transfer", "date": "2024-02-01", "from": "1001", "to": "2001",
         "volume": "16000", "rins": rins(6, 1, 40_000)},
        {"type": "split", "date": "2024-02-02", "party": "1001",
         "rin": "1" "2024" "1001" "20001" "00001" "10" "6" "00040001" "00100000",
         "sizes": [10_000, 50_000]},
        {"type": "separate", "date": "2024-02-03", "party": "1001", "reason": "replacement",
         "rins": rins(6, 1, 4_000)},
        {"type": "separate", "date": "2024-02-02", "party": "2001", "reason": "blending",
         "volume": "8000", "rins": rins(6, 1, 20_000)},
        {"type": "transfer", "date": "2024-02-10", "from": "2001", "to": "3001",
         "rins": rins(6, 2, 1_100)},
        {"type": "report_obligation", "date": "2024-12-31", "party": "3001", "year": 2024,
         "rvo": {"CB": 0, "BBD": 0, "AB": 0, "RF": 1_000}},
        {"type": "retire", "date": "2025-01-15", "party": "3001", "reason": "compliance",
         "compliance_year": 2024, "rins": rins(6, 2, 1_000)},
        *({"type": "transfer", "id": f"r2-{n:04d}", "date": "2024-03-01", "from": "2001",
           "to": "3001", "rins": rins(6, 2, 10)} for n in range(TRANSFERS)),
        {"type": "invalidate", "date": "2025-02-01", "rin": INVALID,
         "reason": "improperly_generated"},
        {"type": "retire", "date": "2025-02-15", "party": "3001", "reason": "remedial_invalid",
         "compliance_year": 2024, "rins": rins(6, 2, 300)},
        {"type": "generate", "date": "2024-01-10", "party": "4001", "facility": "40001",
         "batch": "00001", "fuel": "ethanol", "d_code": 6, "volume": "10000"},
        # (b)(7)(v): the D6 limit is RVO_RF − RVO_AB = 5,000 − 1,000 = 4,000 own RINs
        {"type": "report_obligation", "date": "2024-01-10", "party": "4001", "year": 2024,
         "rvo": {"CB": 0, "BBD": 0, "AB": 1_000, "RF": 5_000}},
        {"type": "separate", "date": "2024-03-01", "party": "4001", "reason": "obligated_party",
         "volume": "3000", "rins": rins(6, 1, 3_000, company="4001")},
        *({"type": "transfer", "date": "2024-03-02", "from": "4001", "to": "2001",
           "rins": rins(6, 2, 10)} for _ in range(200)),
        # §80.1426(g): window 2010-07-01..2011-02-28, deadline 2011-04-30; by volume, (g)(7)
        {"type": "generate", "date": "2011-04-15", "party": "1002", "facility": "20002",
         "batch": "DRN01", "fuel": "biodiesel", "d_code": 4, "volume": 1_000,
         "production_start": "2010-10-01", "production_end": "2010-10-28",
         "pathway_effective_date": "2011-03-01"},
    ]
    return [*register, *market]


if __name__ == "__main__":
    folder = HERE / "store_r2"
    folder.mkdir(exist_ok=True)
    with Ledger(folder) as ledger:
        results = list(ledger.apply_many(commands(), batch_size=50))
        assert all(r.status == "applied" for r in results), [
            r for r in results if r.status != "applied"]
        for party in ("1001", "1002", "2001", "3001", "4001"):
            print(party, ledger.party(party).version, ledger.holdings(party))
    for suffix in ("-wal", "-shm"):
        assert not (folder / f"events.sqlite{suffix}").exists()
