"""What holding a `Ledger` saves: the median time of single commands on a Ledger opened and
closed for each one against one Ledger reused, and of the library's reads; prints ONE JSON
object (milliseconds).

    python scripts/ledger_open_cost.py [--commands N]

The store holds tests/data/sample.jsonl; each command registers a new party (one aggregate
read, one transaction).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ledger import Ledger

SAMPLE = Path(__file__).resolve().parents[1] / "tests" / "data" / "sample.jsonl"


def registration(n: int) -> dict[str, Any]:
    return {"type": "register_party", "party": f"{5000 + n}", "name": f"party {n}",
            "roles": ["blender"]}


def median_ms(runs: int, step: Callable[[int], Any]) -> float:
    times = []
    for n in range(runs):
        start = time.perf_counter()
        step(n)
        times.append(time.perf_counter() - start)
    return round(statistics.median(times) * 1000, 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commands", type=int, default=200)
    runs = parser.parse_args().commands
    data = tempfile.mkdtemp()
    with Ledger(data) as ledger, SAMPLE.open("rb") as lines:
        list(ledger.apply_many(lines))

    def per_command(n: int) -> None:
        with Ledger(data) as own:
            own.apply(registration(n))

    figures = {
        "open_close_ms": median_ms(runs, lambda n: Ledger(data).close()),
        "ledger_per_command_ms": median_ms(runs, per_command),
    }
    with Ledger(data) as ledger:
        figures["reused_ledger_ms"] = median_ms(
            runs, lambda n: ledger.apply(registration(runs + n)))
        figures["holdings_as_of_ms"] = median_ms(
            runs, lambda n: ledger.holdings("2001", as_of="2024-02-07"))
        figures["snapshot_one_party_ms"] = median_ms(
            runs, lambda n: ledger.snapshot().holdings("2001"))
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
