"""Write tests/data/store_r1/events.sqlite with the release-1 code: a three-party market and 210
transfers with command ids, so that two parties pass version 200 and have a snapshot.

Run once from a checkout of release 1 (commit 89ea268): `python tests/data/make_store_r1.py`.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent.parent), str(HERE.parent)]

from markets import three_party_market  # noqa: E402

from ledger.application.ledger import Ledger  # noqa: E402

TRANSFERS = 210


def commands() -> list[dict[str, object]]:
    moves = [
        {"type": "transfer", "id": f"fx-{n:04d}", "date": "2024-03-01", "from": "2001",
         "to": "3001", "rins": {"d_code": 6, "vintage": 2024, "k": 2, "quantity": 10}}
        for n in range(TRANSFERS)
    ]
    return [*three_party_market(separated=40_000), *moves]


if __name__ == "__main__":
    folder = HERE / "store_r1"
    folder.mkdir(exist_ok=True)
    with Ledger(folder) as ledger:
        results = list(ledger.apply_many(commands()))
        assert all(r.status == "applied" for r in results), results
    for suffix in ("-wal", "-shm"):
        assert not (folder / f"events.sqlite{suffix}").exists()
