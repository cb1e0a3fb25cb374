"""One benchmark run on one machine and one simulated market; prints ONE JSON object.

    python scripts/bench.py --events N [--store postgresql://…] [--seed S]

Ingest is the bulk path (`Ledger.apply_many`, every rule checked, each batch a durable commit)
at 10,000 events and at N, each on a fresh store; the raw baseline is the library's own
`SQLiteApplicationRecorder` (or PostgreSQL recorder) saving as many stored events of the same
average size in batches of 100, with no domain logic. Single commands go through `Ledger.apply`
one transaction each on the N-event store: 1,000 of them, every k-th line of the market's next
simulated year. The rebuild (`rin project` on the fresh views, when `projections` is
importable) and `rin verify` (audit and invariants, the views already projected) each run as a
user runs them, in a child process of their own (scripts/child_process.py), so that
`verify_vs_rebuild` compares like with like: the two commands' own CPU seconds (and
`verify_vs_rebuild_wall` their wall seconds), each with its start-up and its own peak memory.

Every rate is also given per domain event, with the command (idempotency) records counted
apart: `ingest_vs_floor` compares domain events per second with `library_floor` storing as
many bare events, in the same run; `ingest_vs_raw` compares them with the library's own
recorder (`SQLiteApplicationRecorder` or `PostgresApplicationRecorder`) storing as many rows of
the same mean size in transactions of the ingest's mean size (domain events per commit).
Ratios measured in one run are what to compare across runs
on a shared machine (docs/performance.md).
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

import orjson
from child_process import measured, rin
from eventsourcing.domain import Aggregate
from eventsourcing.persistence import (
    DatetimeAsISO,
    DecimalAsStr,
    InfrastructureFactory,
    JSONTranscoder,
    Mapper,
    StoredEvent,
    UUIDAsHex,
)
from eventsourcing.utils import Environment

from ledger import Ledger
from ledger.infrastructure.command_records import CommandRecord
from ledger.infrastructure.event_store import LedgerApp, open_app
from ledger.infrastructure.notification_pages import notifications, pages
from ledger.infrastructure.settings import store_env
from ledger.simulation.market import MONTHS, generate_market

SMALL = 10_000
RAW_BATCH = 100
FLOOR_BATCH = 1_000
SINGLE_COMMANDS = 1_000
SAMPLES = 20
SCHEMAS: list[str] = []
LINE_EVENTS = 2  # a simulated line stores about 2.7 events: enough lines, a few to spare


def fresh_store(store: str | None, folder: Path, name: str) -> tuple[Path, str | None]:
    """A new empty event store: a new SQLite folder, or a new PostgreSQL schema."""
    data = folder / name
    if store is None:
        return data, None
    import psycopg

    schema = f"bench_{name}_{uuid4().hex[:8]}"
    with psycopg.connect(store.replace("postgres://", "postgresql://"), autocommit=True) as c:
        c.execute(f"CREATE SCHEMA {schema}")
    os.environ["POSTGRES_SCHEMA"] = schema
    SCHEMAS.append(schema)
    return data, store


def drop_schemas(store: str | None) -> None:
    """Drop the PostgreSQL schemas this run made."""
    if store and SCHEMAS:
        import psycopg

        with psycopg.connect(store.replace("postgres://", "postgresql://"), autocommit=True) as c:
            for schema in SCHEMAS:
                c.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


class Ingested:
    """One bulk ingest: what it stored, how many lines it took, wall and CPU seconds."""

    def __init__(self, ledger: Ledger, stored: int, lines: int, seconds: float, cpu: float,
                 rejected: int) -> None:
        self.ledger, self.stored, self.lines = ledger, stored, lines
        self.seconds, self.cpu, self.rejected = seconds, cpu, rejected


def ingest(
    data: Path, store: str | None, events: int, lines: Iterator[dict[str, Any]]
) -> Ingested:
    """Apply lines until `events` events are stored."""
    ledger = Ledger(data, store=store)
    stored = rejected = count = 0
    started, cpu = time.perf_counter(), time.process_time()
    for count, result in enumerate(ledger.apply_many(lines, batch_size=200), start=1):
        rejected += result.status == "rejected"
        if count % 200 == 0:
            stored = ledger.position()
            if stored >= events:
                break
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    return Ingested(ledger, ledger.position(), count, elapsed, cpu, rejected)


def last_dated(lines: Iterator[dict[str, Any]], seen: list[str]) -> Iterator[dict[str, Any]]:
    """`lines`, noting in `seen` the date of the last one handed out."""
    for line in lines:
        if "date" in line:
            seen[:] = [line["date"]]
        yield line


def cold_expiry_ms(data: Path, store: str | None, on: str) -> float:
    """Median milliseconds, over `SAMPLES // 4` ledgers each newly opened on the store, of its
    first command, an `expire_trades` dated `on`: what every `rin apply` of a day's file pays
    before its lines (the pending postings and the batches' records read; before issue 15's
    pending table, every posting and closing in the log)."""
    times = []
    for sample in range(SAMPLES // 4):
        with Ledger(data, store=store) as ledger:
            started = time.perf_counter()
            result = ledger.apply({"type": "expire_trades", "id": f"bench-expire-{sample}",
                                   "date": on})
            times.append((time.perf_counter() - started) * 1000)
            assert result.status == "applied", result
    return statistics.median(times)


def command_records(data: Path, store: str | None) -> int:
    """How many command (idempotency) records the store holds, in either format: rows of
    rin_commands, and record events in the log (ledger/infrastructure/command_table.py)."""
    from ledger.infrastructure.command_table import count

    app = store_app(data, store)
    rows = count(app.recorder)
    app.close()
    return rows + record_events(data, store)


def record_events(data: Path, store: str | None) -> int:
    """How many of the stored events are command records (a store of release 2's format),
    not domain events."""
    app = store_app(data, store)
    count = sum(1 for _ in notifications(app.recorder, topics=[CommandRecord.Applied.TOPIC]))
    app.close()
    return count


def store_app(data: Path, store: str | None) -> LedgerApp:
    """The event store's application opened on its own, for the storage-level figures (the
    ledger keeps its own private)."""
    return open_app(store_env(data, store))


def state_size(data: Path, store: str | None) -> int:
    """The mean size in bytes of the ledger's stored event states (a sample of 2,000)."""
    app = store_app(data, store)
    sample = next(pages(app.recorder, size=2_000))
    app.close()
    return int(statistics.mean(len(n.state) for n in sample)) if sample else 200


def fresh_env(data: Path, store: str | None) -> dict[str, Any]:
    """`store_env` of the store `fresh_store` made last: on PostgreSQL its schema, which an
    `Environment` made here does not read from the process environment as an application
    does (the floors wrote to `public`, where the second met the first's head rows)."""
    env = store_env(data, store)
    if store and "POSTGRES_SCHEMA" in os.environ:
        env["POSTGRES_SCHEMA"] = os.environ["POSTGRES_SCHEMA"]
    return env


def library_recorder(store: str | None, data: Path) -> tuple[Any, Any]:
    """(factory, recorder): the library's own application recorder on a fresh store, not the
    ledger's (no head rows, no read check, the library's statements)."""
    env = {k: v for k, v in fresh_env(data, store).items() if k != "APPLICATION_RECORDER_TOPIC"}
    factory = InfrastructureFactory.construct(env=Environment("Raw", env))
    return factory, factory.application_recorder()


def raw_batch(store: str | None, folder: Path, events: int, size: int,
              batch: int = RAW_BATCH, cpu: list[float] | None = None) -> float:
    """Events per second of the library's own recorder saving `events` of `size` bytes in
    batches of `batch` (100 unless told), one transaction each; appends to `cpu`, if given,
    this process's CPU seconds for it (the client's share: the server's is not counted)."""
    factory, recorder = library_recorder(store, folder / "raw")
    state = b"x" * size
    started, cpu_started = time.perf_counter(), time.process_time()
    for first in range(0, events, batch):
        originator = uuid4()
        recorder.insert_events([
            StoredEvent(originator_id=originator, originator_version=v, topic="raw:Event",
                        state=state)
            for v in range(1, min(batch, events - first) + 1)
        ])
    elapsed = time.perf_counter() - started
    if cpu is not None:
        cpu.append(time.process_time() - cpu_started)
    factory.close()
    return events / elapsed


def raw_singles(store: str | None, folder: Path, size: int, per_save: int) -> list[float]:
    """Milliseconds per save of the library's own recorder storing `per_save` events of `size`
    bytes, one transaction each, `SINGLE_COMMANDS` times: the store's own floor under
    `single_p50_ms`/`single_p99_ms` (a durable commit waits for the disk's flush)."""
    factory, recorder = library_recorder(store, folder / "raw1")
    state, times = b"x" * size, []
    for _ in range(SINGLE_COMMANDS):
        saved = [StoredEvent(originator_id=uuid4(), originator_version=1, topic="raw:Event",
                             state=state) for _ in range(per_save)]
        started = time.perf_counter()
        recorder.insert_events(saved)
        times.append((time.perf_counter() - started) * 1000)
    factory.close()
    return sorted(times)


def p99(times: list[float]) -> float:
    """The 99th percentile of sorted `times`."""
    return times[int(len(times) * 0.99) - 1]


class Bare(Aggregate):
    """An aggregate with no domain logic, for the library's own floor."""

    class Happened(Aggregate.Event):
        """An event with no fields."""


def library_floor(store: str | None, folder: Path, events: int) -> float:
    """Events per second of the library making aggregate events, mapping them to stored events
    (its JSON transcoder) and storing them with the ledger's recorder 1,000 a transaction, with
    no domain logic: the most any ingest through the library's aggregates could reach."""
    env = Environment("Floor", fresh_env(folder / "floor", store))
    factory = InfrastructureFactory.construct(env=env)
    recorder = factory.application_recorder()
    transcoder = JSONTranscoder()
    for transcoding in (UUIDAsHex(), DecimalAsStr(), DatetimeAsISO()):  # as `Application` does
        transcoder.register(transcoding)
    mapper: Mapper[UUID] = Mapper(transcoder)
    started = time.perf_counter()
    for first in range(0, events, FLOOR_BATCH):
        stored: list[StoredEvent] = []
        for aggregate_first in range(first, min(first + FLOOR_BATCH, events), RAW_BATCH):
            aggregate = Bare()
            for _ in range(min(RAW_BATCH, events - aggregate_first) - 1):
                aggregate.trigger_event(Bare.Happened)
            stored.extend(mapper.to_stored_event(e) for e in aggregate.collect_events())
        recorder.insert_events(stored)
    elapsed = time.perf_counter() - started
    factory.close()
    return events / elapsed


def library_floor_real_shapes(source: LedgerApp, upto: int, store: str | None, folder: Path
                               ) -> tuple[int, float, float]:
    """(events, events per second, CPU µs per event) of the library making, mapping and
    storing the ledger's own domain events, with no domain logic: each event the bulk ingest
    stored (up to notification `upto`), read back (untimed), is made again by its class from
    its fields, mapped by the library's `Mapper` with the ledger's transcoder (no chain) and
    stored with the ledger's recorder, `FLOOR_BATCH` a transaction. Unlike `library_floor`'s
    bare events, these have the real shapes and sizes (holdings, blocks, dates, decimals): the
    floor any ingest of them has.
    `source`: the ingested store, opened (and closed here) before `store` is made."""
    env = Environment("FloorReal", fresh_env(folder / "floor_real", store))
    factory = InfrastructureFactory.construct(env=env)
    recorder = factory.application_recorder()
    mapper: Mapper[UUID] = Mapper(source.construct_transcoder())
    count, seconds, cpu = 0, 0.0, 0.0
    for page in pages(source.recorder, stop=upto, size=FLOOR_BATCH):
        events = [source.mapper.to_domain_event(n) for n in page
                  if n.topic != CommandRecord.Applied.TOPIC]
        started, cpu_started = time.perf_counter(), time.process_time()
        made = [type(event)(**vars(event)) for event in events]
        recorder.insert_events([mapper.to_stored_event(event) for event in made])
        seconds += time.perf_counter() - started
        cpu += time.process_time() - cpu_started
        count += len(made)
    factory.close()
    source.close()
    return count, count / seconds, cpu / max(1, count) * 1e6


def raw_read(data: Path, store: str | None) -> float:
    """Events per second reading and decoding every notification, nothing else."""
    app = store_app(data, store)
    decode, count = app.mapper.to_domain_event, 0
    started = time.perf_counter()
    for page in pages(app.recorder):
        for notification in page:
            decode(notification)
        count += len(page)
    elapsed = time.perf_counter() - started
    app.close()
    return count / elapsed


def singles(ledger: Ledger, lines: Iterator[dict[str, Any]], every: int,
            cpu: list[float] | None = None) -> list[float]:
    """Milliseconds per `Ledger.apply`, one command per transaction, for every `every`-th line
    of the rest of the market (the lines between go in batches), so that the sample spans
    about a simulated year: its trades, separations and its compliance season alike. `cpu`,
    if given, gets each one's CPU milliseconds (this process's, every thread's), sorted: what
    a busy machine distorts less than the wall time, which waits for the disk's flush too."""
    times: list[float] = []
    between: list[dict[str, Any]] = []
    for number, line in enumerate(lines, start=1):
        if number % every:
            between.append(line)
            continue
        for _ in ledger.apply_many(between):
            pass
        between = []
        started, cpu_started = time.perf_counter(), time.process_time()
        ledger.apply(line)
        times.append((time.perf_counter() - started) * 1000)
        if cpu is not None:
            cpu.append((time.process_time() - cpu_started) * 1000)
        if len(times) == SINGLE_COMMANDS:
            break
    if cpu is not None:
        cpu.sort()
    return sorted(times)


def busiest_party_load_ms(data: Path, store: str | None) -> tuple[str | None, float]:
    """Median milliseconds to load the party with the most events, with no aggregate cache."""
    from ledger.domain.party import Party

    app = store_app(data, store)
    app.repository.cache = None  # every load replays from the store (and its snapshots)
    party_ids = {n.originator_id: orjson.loads(n.state)["party_id"]
                 for n in notifications(app.recorder, topics=["rin_ledger:Party.Registered"])}
    counts = dict.fromkeys(party_ids, 0)  # parties only: not a counter per command record
    for page in pages(app.recorder, size=5_000):
        for n in page:
            if n.originator_id in counts:
                counts[n.originator_id] += 1
    busiest = max(party_ids, key=lambda oid: counts.get(oid, 0), default=None)
    if busiest is None:
        app.close()
        return None, float("nan")
    times = []
    for _ in range(SAMPLES):
        started = time.perf_counter()
        party: Party = app.repository.get(Party.create_id(party_ids[busiest]))
        times.append((time.perf_counter() - started) * 1000)
        assert party.party_id == party_ids[busiest]
    app.close()
    return party_ids[busiest], statistics.median(times)


def busiest_party_read(data: Path, store: str | None, party_id: str | None
                       ) -> dict[str, Any]:
    """What a cold load of `party_id` reads, against what it costs (medians of `SAMPLES`): the
    events it replays after its last snapshot, and the library's read and decode of the same
    rows (the snapshot row and those events, `Mapper.to_domain_event`, no seal check and no
    apply), in wall and CPU milliseconds: the floor no load from this store can go below."""
    from ledger.domain.party import Party

    if party_id is None:
        return {}
    app = store_app(data, store)
    app.repository.cache = None
    assert app.snapshots is not None
    oid, decode = Party.create_id(party_id), app.mapper.to_domain_event
    last = app.snapshots.recorder.select_events(oid, desc=True, limit=1)
    after = last[0].originator_version if last else 0
    replayed = len(app.recorder.select_events(oid, gt=after))
    load_cpu, read_wall, read_cpu = [], [], []
    for _ in range(SAMPLES):
        cpu = time.process_time()
        app.repository.get(oid)
        load_cpu.append(time.process_time() - cpu)
        started, cpu = time.perf_counter(), time.process_time()
        for row in [*app.snapshots.recorder.select_events(oid, desc=True, limit=1),
                    *app.recorder.select_events(oid, gt=after)]:
            decode(row)
        read_wall.append(time.perf_counter() - started)
        read_cpu.append(time.process_time() - cpu)
    app.close()
    return {"load_party_replayed": replayed,
            "load_party_cpu_ms": round(statistics.median(load_cpu) * 1000, 3),
            "load_party_read_ms": round(statistics.median(read_wall) * 1000, 3),
            "load_party_read_cpu_ms": round(statistics.median(read_cpu) * 1000, 3)}


def projection_figures(ledger: Ledger, data: Path, store: str | None, party: str | None,
                       rng: random.Random) -> tuple[dict[str, Any] | None, float | None]:
    """(`rin project` run as a user runs it on the fresh views, its own process measured as
    `measured` gives; median ms of one as-of query on the views it made), or (None, None)
    without `projections`. The views are the ledger's own file, which `rin verify` then reads."""
    try:
        import projections
    except ImportError:
        return None, None
    _, err, project = measured(rin(*store_options(data, store), "project"))
    if project["exit"]:
        sys.stderr.write(err.decode()[-2_000:])
    views = projections.Views(ledger, projections.views_path(ledger))
    times = []
    for _ in range(SAMPLES):
        as_of = date(2014, 1, 1) + timedelta(days=rng.randrange(3_650))
        started = time.perf_counter()
        views.holdings(party=party, as_of=as_of)
        times.append((time.perf_counter() - started) * 1000)
    return project, statistics.median(times)


def verify_figures(data: Path, store: str | None) -> dict[str, Any]:
    """`rin verify` on the store run as a user runs it (its own process, this checkout's code,
    the views already up to date), measured as `measured` gives."""
    out, err, verify = measured(rin(*store_options(data, store), "verify"))
    if verify["exit"]:
        sys.stderr.write(out.decode()[-2_000:] + err.decode()[-2_000:])
    return verify


def store_options(data: Path, store: str | None) -> list[str]:
    """`rin`'s options naming the bench's store."""
    return ["--data", str(data), *(["--store", store] if store else [])]


def projection_keys(project: dict[str, Any] | None, position: int, read_rate: float
                    ) -> dict[str, Any]:
    """The keys of `rin project` on the fresh views (None each without `projections`)."""
    if project is None:
        return dict.fromkeys(("project_events_per_s", "project_ratio", "rebuild_vs_raw",
                              "rebuild_s", "rebuild_cpu_s", "rebuild_peak_mb", "rebuild_exit"))
    rate = position / project["wall_s"]
    return {"project_events_per_s": round(rate), "project_ratio": round(rate / read_rate, 3),
            "rebuild_vs_raw": round(rate / read_rate, 3), "rebuild_s": round(project["wall_s"], 2),
            "rebuild_cpu_s": round(project["cpu_s"], 2),
            "rebuild_peak_mb": round(project["peak_mb"], 1), "rebuild_exit": project["exit"]}


def driver(store: str | None) -> str:
    """The database driver: sqlite3, or psycopg and its libpq binding (`python`, a ctypes
    wrapper, costs the client about twice the CPU per row of `binary` or `c`)."""
    if store is None:
        return "sqlite3"
    import psycopg

    return f"psycopg {psycopg.__version__} ({psycopg.pq.__impl__})"


def peak_rss_mb() -> float:
    """The process's peak resident memory so far, in MB."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def run(events: int, store: str | None, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="rin-bench-") as tmp:
        folder = Path(tmp)
        data, url = fresh_store(store, folder, "small")
        small_last: list[str] = []
        small = ingest(data, url, SMALL,
                       last_dated(generate_market(SMALL // LINE_EVENTS, seed), small_last))
        small_domain = small.stored - record_events(data, url)
        small.ledger.close()
        small_cold = cold_expiry_ms(data, url, small_last[0])
        data, url = fresh_store(store, folder, "big")
        big_last: list[str] = []
        lines = last_dated(generate_market(events // LINE_EVENTS, seed), big_last)
        big = ingest(data, url, events, lines)
        ledger, stored = big.ledger, big.stored
        transactions = sum(1 for _ in ledger.stored_heads())  # one head row per commit
        peaks = {"ingest": peak_rss_mb()}
        records, in_log = command_records(data, url), record_events(data, url)
        domain = stored - in_log
        size = state_size(data, url)
        every = max(1, events // LINE_EVENTS // (MONTHS // 12 * SINGLE_COMMANDS))
        single_cpu: list[float] = []
        single = singles(ledger, lines, every, single_cpu)
        peaks["singles"] = peak_rss_mb()
        read_rate = raw_read(data, url)
        party, load_ms = busiest_party_load_ms(data, url)
        load_read = busiest_party_read(data, url, party)
        peaks["load"] = peak_rss_mb()
        project, asof_ms = projection_figures(ledger, data, url, party, rng)
        peaks["project"] = peak_rss_mb()
        position = ledger.position()
        ledger.close()
        verify = verify_figures(data, url)
        big_cold = cold_expiry_ms(data, url, big_last[0])
        # the ingested store opened first: a fresh PostgreSQL store moves POSTGRES_SCHEMA on
        source = store_app(data, url)
        real_events, real_rate, real_cpu_us = library_floor_real_shapes(
            source, stored, store and fresh_store(store, folder, "floor_real")[1], folder)
        raw_rate = raw_batch(store and fresh_store(store, folder, "raw")[1], folder, stored, size)
        per_transaction = max(1, round(domain / max(1, transactions)))
        raw_single = raw_singles(store and fresh_store(store, folder, "raw1")[1], folder, size,
                                 max(1, round(stored / big.lines)))
        raw_same_cpu: list[float] = []
        raw_same_rate = raw_batch(store and fresh_store(store, folder, "rawtx")[1], folder,
                                  domain, size, per_transaction, raw_same_cpu)
        floor_rate = library_floor(
            store and fresh_store(store, folder, "floor")[1], folder, domain
        )
    ingest_rate, small_rate = stored / big.seconds, small.stored / small.seconds
    domain_rate, small_domain_rate = domain / big.seconds, small_domain / small.seconds
    return {
        "events": stored,
        "store": "postgresql" if store else "sqlite",
        "rejected": big.rejected,
        "lines": big.lines,
        "domain_events": domain,
        "command_records": records,
        "command_records_in_log": in_log,
        "ingest_events_per_s": round(ingest_rate),
        "ingest_domain_events_per_s": round(domain_rate),
        "ingest_lines_per_s": round(big.lines / big.seconds),
        "ingest_us_per_line": round(big.seconds / big.lines * 1e6, 1),
        "ingest_us_per_domain_event": round(big.seconds / domain * 1e6, 1),
        "ingest_cpu_us_per_domain_event": round(big.cpu / domain * 1e6, 1),
        "raw_batch_events_per_s": round(raw_rate),
        "ingest_ratio": round(ingest_rate / raw_rate, 3),
        "ingest_transactions": transactions,
        "raw_same_batches_events_per_s": round(raw_same_rate),
        "raw_same_batch_size": per_transaction,
        "ingest_vs_raw": round(domain_rate / raw_same_rate, 3),
        "raw_same_batches_cpu_us_per_event": round(raw_same_cpu[0] / domain * 1e6, 1),
        # the same comparison by client CPU, which a busy machine distorts less than wall time
        "ingest_vs_raw_cpu": round(raw_same_cpu[0] / big.cpu, 3),
        "library_floor_events_per_s": round(floor_rate),
        "library_floor_ratio": round(floor_rate / raw_rate, 3),
        "ingest_vs_floor": round(domain_rate / floor_rate, 3),
        "library_floor_real_shapes": round(real_rate),
        "library_floor_real_shapes_events": real_events,
        "library_floor_real_shapes_cpu_us_per_event": round(real_cpu_us, 1),
        "ingest_vs_floor_real": round(domain_rate / real_rate, 3),
        # the same comparison by CPU, which a busy machine distorts less than wall time
        "ingest_vs_floor_real_cpu": round(real_cpu_us / (big.cpu / domain * 1e6), 3),
        "ingest_events_per_s_at_10000": round(small_rate),
        "ingest_events_per_s_at_n": round(ingest_rate),
        "ingest_cost_ratio_n_vs_10000": round(small_rate / ingest_rate, 3),
        "ingest_domain_cost_ratio_n_vs_10000": round(small_domain_rate / domain_rate, 3),
        "cold_expire_ms": round(big_cold, 3),
        "cold_expire_ms_at_10000": round(small_cold, 3),
        "cold_expire_ratio_n_vs_10000": round(big_cold / small_cold, 3),
        "single_p50_ms": round(statistics.median(single), 3),
        "single_p99_ms": round(p99(single), 3),
        "single_max_ms": round(single[-1], 3),
        "single_cpu_p50_ms": round(statistics.median(single_cpu), 3),
        "single_cpu_p99_ms": round(p99(single_cpu), 3),
        "raw_single_p50_ms": round(statistics.median(raw_single), 3),
        "raw_single_p99_ms": round(p99(raw_single), 3),
        "single_commands": len(single),
        **projection_keys(project, position, read_rate),
        "raw_read_events_per_s": round(read_rate),
        "verify_s": round(verify["wall_s"], 2),
        "verify_cpu_s": round(verify["cpu_s"], 2),
        "verify_peak_mb": round(verify["peak_mb"], 1),
        # both `rin` commands in a process of their own, by CPU: the wall of either moves with
        # what else the machine runs (docs/verify-memory.md "Seventh round")
        "verify_vs_rebuild": None if project is None else round(
            verify["cpu_s"] / project["cpu_s"], 3),
        "verify_vs_rebuild_wall": None if project is None else round(
            verify["wall_s"] / project["wall_s"], 3),
        "verify_exit": verify["exit"],
        "verified_position": position,
        "asof_party_ms": None if asof_ms is None else round(asof_ms, 3),
        "load_party_ms": round(load_ms, 3),
        "busiest_party": party,
        **load_read,
        "mean_event_bytes": size,
        "load_average": round(os.getloadavg()[0], 2),
        "driver": driver(store),
        "rss_mb": peak_rss_mb(),
        "rss_mb_peak_after": peaks,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--store", default=None, help="postgresql://user:pass@host:port/db")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    try:
        print(orjson.dumps(run(args.events, args.store, args.seed)).decode())
    finally:
        drop_schemas(args.store)


if __name__ == "__main__":
    main()
