"""`scripts/pg_bench.py` (issue 15 item 4 on PostgreSQL) prints its JSON object, its ratios
the quotients of its own figures and the server's CPU counted (no timing is asserted: the
machine is shared)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from conftest import POSTGRES_URL as URL

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(not URL, reason="needs RIN_TEST_POSTGRES_URL")
def test_the_postgresql_bench_prints_its_comparison_with_the_library_recorder() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "pg_bench.py"), "--events",
                           "3000", "--singles", "20", "--store", str(URL)],
                          capture_output=True, env=env, check=False, timeout=900)
    assert done.returncode == 0, done.stderr.decode()[-2_000:]
    figures = orjson.loads(done.stdout)
    assert figures["events"] >= 3000 and figures["domain_events"] == figures["events"]
    assert figures["single_commands"] == 20
    assert figures["raw_same_batch_size"] == round(
        figures["domain_events"] / figures["ingest_transactions"])
    assert figures["ingest_vs_raw"] == pytest.approx(
        figures["ingest_domain_events_per_s"] / figures["raw_same_batches_events_per_s"],
        rel=2e-3)
    assert figures["ingest_vs_raw_cpu"] == pytest.approx(
        figures["raw_same_batches_cpu_us_per_event"]
        / figures["ingest_cpu_us_per_domain_event"], abs=2e-3)
    # the server did the storing: its CPU is counted for both sides
    assert figures["ingest_server_cpu_us_per_domain_event"] > 0
    assert figures["raw_same_batches_server_cpu_us_per_event"] > 0
    assert figures["driver"].startswith("psycopg")
