"""Issue 15 item 4 alone, on PostgreSQL: bulk ingest against the library's own recorder in
batches of the ingest's size, and single commands against the library's single save.

    python scripts/pg_bench.py --events N --store postgresql://… [--seed S] [--singles K]

Prints ONE JSON object with `scripts/bench.py`'s keys of that comparison (`ingest_vs_raw`,
`ingest_vs_raw_cpu`, `raw_same_batch_size`, `single_p50_ms`, `raw_single_p99_ms`, …), measured
the same way by the same functions, plus the server's CPU for each phase (`*_server_cpu_us_…`:
the cluster's processes, read from /proc, so the caller must be able to read them). It skips
bench.py's rebuild, verify and floors, which take most of a PostgreSQL run's time
(docs/postgres.md).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import orjson

from ledger.simulation.market import MONTHS, generate_market

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # the script beside this one

T = TypeVar("T")


def server_cpu(store: str) -> float:
    """CPU seconds the PostgreSQL cluster serving `store` has used: the postmaster, its live
    children and the children it has reaped (their time is in its own cutime/cstime)."""
    import psycopg

    with psycopg.connect(store.replace("postgres://", "postgresql://")) as conn:
        backend = conn.info.backend_pid  # a child of the postmaster
        postmaster = int(Path(f"/proc/{backend}/stat").read_text().rsplit(")", 1)[1].split()[1])
    ticks, total = os.sysconf("SC_CLK_TCK"), 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid, parent = int(entry.name), int(fields[1])
        if pid == postmaster:
            total += sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
        elif parent == postmaster:
            total += int(fields[11]) + int(fields[12])
    return total / ticks


def on_server(store: str, work: Callable[[], T]) -> tuple[T, float]:
    """`work()`'s result and the server CPU seconds spent while it ran."""
    before = server_cpu(store)
    result = work()
    return result, server_cpu(store) - before


def run(events: int, store: str, seed: int, single_commands: int) -> dict[str, Any]:
    bench.SINGLE_COMMANDS = single_commands
    with tempfile.TemporaryDirectory(prefix="rin-pgbench-") as tmp:
        folder = Path(tmp)
        data, url = bench.fresh_store(store, folder, "big")
        lines = generate_market(events // bench.LINE_EVENTS, seed)
        big, big_server = on_server(store, lambda: bench.ingest(data, url, events, lines))
        ledger, stored = big.ledger, big.stored
        transactions = sum(1 for _ in ledger.stored_heads())
        domain = stored - bench.record_events(data, url)
        size = bench.state_size(data, url)
        every = max(1, events // bench.LINE_EVENTS // (MONTHS // 12 * single_commands))
        single = bench.singles(ledger, lines, every)
        ledger.close()
        per_transaction = max(1, round(domain / max(1, transactions)))
        raw_cpu: list[float] = []
        rawtx = bench.fresh_store(store, folder, "rawtx")[1]
        raw_rate, raw_server = on_server(store, lambda: bench.raw_batch(
            rawtx, folder, domain, size, per_transaction, raw_cpu))
        raw_single = bench.raw_singles(bench.fresh_store(store, folder, "raw1")[1], folder,
                                       size, max(1, round(stored / big.lines)))
    domain_rate = domain / big.seconds
    return {
        "events": stored,
        "lines": big.lines,
        "domain_events": domain,
        "ingest_transactions": transactions,
        "ingest_domain_events_per_s": round(domain_rate),
        "ingest_cpu_us_per_domain_event": round(big.cpu / domain * 1e6, 1),
        "ingest_server_cpu_us_per_domain_event": round(big_server / domain * 1e6, 1),
        "raw_same_batch_size": per_transaction,
        "raw_same_batches_events_per_s": round(raw_rate),
        "raw_same_batches_cpu_us_per_event": round(raw_cpu[0] / domain * 1e6, 1),
        "raw_same_batches_server_cpu_us_per_event": round(raw_server / domain * 1e6, 1),
        "ingest_vs_raw": round(domain_rate / raw_rate, 3),
        "ingest_vs_raw_cpu": round(raw_cpu[0] / big.cpu, 3),
        "ingest_vs_raw_client_and_server_cpu": round(
            (raw_cpu[0] + raw_server) / (big.cpu + big_server), 3),
        "single_p50_ms": round(statistics.median(single), 3),
        "single_p99_ms": round(bench.p99(single), 3),
        "single_max_ms": round(single[-1], 3),
        "raw_single_p50_ms": round(statistics.median(raw_single), 3),
        "raw_single_p99_ms": round(bench.p99(raw_single), 3),
        "single_commands": len(single),
        "mean_event_bytes": size,
        "load_average": round(os.getloadavg()[0], 2),
        "driver": bench.driver(store),
        "finished": time.strftime("%H:%M:%S", time.gmtime()),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--store", required=True, help="postgresql://user:pass@host:port/db")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--singles", type=int, default=bench.SINGLE_COMMANDS)
    args = parser.parse_args(argv)
    try:
        print(orjson.dumps(run(args.events, args.store, args.seed, args.singles)).decode())
    finally:
        bench.drop_schemas(args.store)


if __name__ == "__main__":
    main()
