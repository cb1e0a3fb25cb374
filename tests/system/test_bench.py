"""`scripts/bench.py` prints the one JSON object issue 15 names, its figures consistent with
each other (no timing is asserted: the machine is shared)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from conftest import POSTGRES_URL

from tests.integration.test_read_check import needs_postgres

ROOT = Path(__file__).resolve().parents[2]
KEYS = {"ingest_vs_floor", "rebuild_vs_raw", "verify_peak_mb", "verify_vs_rebuild",
        "single_p99_ms", "asof_party_ms", "load_party_ms", "ingest_cost_ratio_n_vs_10000",
        "ingest_ratio", "library_floor_ratio", "project_ratio", "single_p50_ms",
        "ingest_vs_raw", "raw_single_p99_ms", "library_floor_real_shapes", "ingest_vs_floor_real",
        "library_floor_real_shapes_cpu_us_per_event", "ingest_vs_floor_real_cpu",
        "cold_expire_ms", "cold_expire_ms_at_10000", "cold_expire_ratio_n_vs_10000"}


@pytest.mark.slow
def test_the_bench_prints_every_key_and_counts_command_records_apart() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "bench.py"), "--events",
                           "10000"], capture_output=True, env=env, check=False, timeout=1_800)
    assert done.returncode == 0, done.stderr.decode()[-2_000:]
    figures = orjson.loads(done.stdout)
    assert set(figures) >= KEYS
    assert figures["verify_exit"] == 0  # verify ran on the bench's store and all held
    assert figures["verify_peak_mb"] > 0
    assert figures["command_records"] == figures["lines"] - figures["rejected"]
    # a new store keeps its records in rin_commands, not in the log (command_table.py)
    assert figures["command_records_in_log"] == 0
    assert figures["domain_events"] == figures["events"]
    assert figures["ingest_vs_floor"] == pytest.approx(
        figures["ingest_domain_events_per_s"] / figures["library_floor_events_per_s"], abs=2e-3)
    assert figures["rebuild_vs_raw"] == figures["project_ratio"]
    # the real-shape floor re-made and stored every domain event the ingest stored, no more
    assert figures["library_floor_real_shapes_events"] == figures["domain_events"]
    assert figures["ingest_vs_floor_real"] == pytest.approx(
        figures["ingest_domain_events_per_s"] / figures["library_floor_real_shapes"], abs=2e-3)
    assert figures["ingest_vs_floor_real_cpu"] == pytest.approx(
        figures["library_floor_real_shapes_cpu_us_per_event"]
        / figures["ingest_cpu_us_per_domain_event"], rel=1e-2, abs=2e-3)
    # the library's recorder stores as many rows as there are domain events, in transactions of
    # the ingest's mean size: one head row per ingest commit, at most one commit per 200 lines
    assert 1 <= figures["ingest_transactions"] <= -(-figures["lines"] // 200)
    assert figures["raw_same_batch_size"] == round(
        figures["domain_events"] / figures["ingest_transactions"])
    assert figures["ingest_vs_raw"] == pytest.approx(
        figures["ingest_domain_events_per_s"] / figures["raw_same_batches_events_per_s"],
        abs=2e-3)
    assert figures["raw_single_p50_ms"] <= figures["raw_single_p99_ms"]
    # a ledger newly opened on each store applied its first command, an expiry
    assert figures["cold_expire_ms"] > 0 and figures["cold_expire_ms_at_10000"] > 0
    assert figures["cold_expire_ratio_n_vs_10000"] == pytest.approx(
        figures["cold_expire_ms"] / figures["cold_expire_ms_at_10000"], rel=1e-2, abs=2e-3)
    assert 0 < figures["single_cpu_p50_ms"] <= figures["single_cpu_p99_ms"]  # each command's CPU
    assert figures["ingest_vs_raw_cpu"] == pytest.approx(
        figures["raw_same_batches_cpu_us_per_event"] / figures["ingest_cpu_us_per_domain_event"],
        rel=1e-2, abs=2e-3)


@pytest.mark.slow
@needs_postgres  # the CI starts one (.ci/postgres.sh)
def test_the_bench_runs_on_postgresql_each_floor_in_a_schema_of_its_own() -> None:
    """`--store` PostgreSQL: every store the run makes is a schema of its own. The two library
    floors were made in `public` (an `Environment` built by hand does not read POSTGRES_SCHEMA
    from the process as an application does), where the second met the first's head rows
    and the run ended in a StoreTruncated traceback."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "bench.py"), "--events",
                           "10000", "--store", str(POSTGRES_URL)], capture_output=True, env=env,
                          check=False, timeout=1_800)
    assert done.returncode == 0, done.stderr.decode()[-2_000:]
    figures = orjson.loads(done.stdout)
    assert figures["store"] == "postgresql" and figures["verify_exit"] == 0
    assert figures["library_floor_real_shapes_events"] == figures["domain_events"]
    assert set(figures) >= KEYS
