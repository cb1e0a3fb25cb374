"""Issue 14, library: reading while others write, following the log, sharing a `Ledger`.

- A snapshot (`Ledger.snapshot()`) reads every party at one log position: with writers moving
  RINs between parties in other threads, the parties' totals always sum to the one total that
  every committed state has (transfers conserve gallon-RINs, §80.1428(a)).
- Reads write nothing: no read-model file appears in a data folder that accepts no new file.
- `Ledger.follow` yields each domain event once, in log order, including those another process
  stores while it waits, and ends after its timeout.
- Threads may share one `Ledger` (its calls take turns); processes each open their own.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from conftest import Store

from ledger import Ledger, LoggedEvent
from ledger.application.follow import DOMAIN_TOPICS
from ledger.domain.party import Party
from ledger.infrastructure.settings import VIEWS_FILE

PRODUCER = "1001"
HOLDERS = ["2001", "2002", "2003", "2004"]
TOTAL = 20_000  # gallon-RINs generated, then separated and spread among the holders


def setup_lines() -> list[dict[str, Any]]:
    """1001 makes 20,000 D6 gallon-RINs; each holder buys 5,000 with 2,000 gal and separates
    them by blending (§80.1429(b)(4)): 4 × 5,000 = 20,000 K=2 held by the holders."""
    lines: list[dict[str, Any]] = [
        {"type": "register_party", "party": PRODUCER, "name": "P", "roles": ["producer"],
         "facilities": ["20001"]},
        {"type": "generate", "date": "2024-01-10", "party": PRODUCER, "facility": "20001",
         "batch": "00001", "fuel": "ethanol", "d_code": 6, "volume": TOTAL},
    ]
    for holder in HOLDERS:
        lines += [
            {"type": "register_party", "party": holder, "name": holder, "roles": ["blender"]},
            {"type": "transfer", "date": "2024-01-11", "from": PRODUCER, "to": holder,
             "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": 5_000}, "volume": 2_000},
            {"type": "separate", "date": "2024-01-12", "party": holder, "reason": "blending",
             "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": 5_000}, "volume": 2_000},
        ]
    return lines


def k2_move(rnd: random.Random) -> dict[str, Any]:
    seller, buyer = rnd.sample(HOLDERS, 2)
    return {"type": "transfer", "date": "2024-02-01", "from": seller, "to": buyer,
            "rins": {"d_code": 6, "vintage": 2024, "k": 2, "quantity": rnd.randrange(1, 900)}}


def k2_total(rows: list[Any]) -> int:
    return sum(row.gallon_rins for row in rows if row.k == 2)


def test_a_snapshot_sums_to_a_committed_total_while_writers_run(store: Store) -> None:
    with store.ledger() as ledger:
        assert {r.status for r in ledger.apply_many(setup_lines())} == {"applied"}
    stop = threading.Event()
    applied = [0] * 3
    failures: list[BaseException] = []

    def writer(number: int) -> None:
        rnd = random.Random(number)
        try:
            with store.ledger() as own:  # one Ledger per writer thread: writers in parallel
                while not stop.is_set():
                    applied[number] += own.apply(k2_move(rnd)).status == "applied"
        except BaseException as error:  # pragma: no cover - reported below
            failures.append(error)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(3)]
    for thread in threads:
        thread.start()
    reads, positions = 0, set()
    try:
        with store.ledger() as reader:
            while reads < 20 or sum(applied) < 15:
                snapshot = reader.snapshot()
                assert k2_total(snapshot.holdings()) == TOTAL, f"torn at {snapshot.position}"
                positions.add(snapshot.position)
                reads += 1
                assert reads < 5_000, "the writers applied too little to prove anything"
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    assert not failures
    assert len(positions) > 5  # the reads really saw many different committed states


def test_reads_write_nothing(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with Ledger(data) as writer:
        assert {r.status for r in writer.apply_many(setup_lines())} == {"applied"}
        before = writer.position()
        assert writer.apply(k2_move(random.Random(1))).status == "applied"
        listing = sorted(p.name for p in data.iterdir())
        # the writer keeps open the WAL files a SQLite reader needs
        with no_new_files(data), Ledger(data) as reader:
            assert reader.position() == before + 2  # a transfer: out and in
            assert k2_total(reader.holdings("2001", as_of="2024-01-31")) == 5_000
            assert reader.holdings("2001", known_at=before) == reader.holdings(
                "2001", as_of="2024-01-31")
            assert k2_total(reader.snapshot().holdings()) == TOTAL
            assert reader.at(before).blocks("2002")
            # 5 registrations, a generation and its assignment, per holder a transfer (2
            # events) and a separation, then the transfer: 5 + 2 + 4 × 3 + 2 = 21
            assert len(list(reader.follow(timeout=0))) == 21
        assert sorted(p.name for p in data.iterdir()) == listing
        assert VIEWS_FILE not in listing


@contextmanager
def no_new_files(folder: Path) -> Iterator[None]:
    """No file may be created in `folder` (`chattr +i`, which binds root too; chmod for others)."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            yield
        finally:
            folder.chmod(0o755)
        return
    if subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode != 0:
        pytest.skip("this file system has no immutable attribute (chattr)")
    try:
        with pytest.raises(OSError):  # the guard holds: nothing can be created here
            (folder / "probe").touch()
        yield
    finally:
        subprocess.run(["chattr", "-i", str(folder)], check=True)


def test_follow_yields_domain_events_once_in_order_and_resumes(store: Store) -> None:
    with store.ledger() as ledger:
        lines = setup_lines()
        assert {r.status for r in ledger.apply_many(lines)} == {"applied"}
        seen = list(ledger.follow(timeout=0))
        ids = [logged.notification_id for logged in seen]
        assert ids == sorted(set(ids)) and ids[-1] == ledger.position()
        # the domain's events only: 5 registrations, a generation with its assignment, per
        # holder a transfer (out and in) and a separation; no command record
        assert len(seen) == 5 + 2 + 3 * len(HOLDERS)
        assert all(isinstance(logged, LoggedEvent) for logged in seen)
        assert sum(type(logged.event) is Party.Registered for logged in seen) == 5
        middle = ids[6]
        assert [x.notification_id for x in ledger.follow(after=middle, timeout=0)] == ids[7:]
        assert list(ledger.follow(after=ids[-1], timeout=0)) == []


def write_later(data: str, url: str | None, env: dict[str, str], opened: Any, go: Any) -> None:
    """A second process, with its own Ledger on the same store: one registration once the
    follower is waiting."""
    with Ledger(data, store=url, env=env) as ledger:
        opened.set()
        go.wait(60)
        ledger.apply({"type": "register_party", "party": "3001", "name": "late",
                      "roles": ["obligated_party"]})


def test_follow_waits_for_another_process_then_times_out(store: Store) -> None:
    with store.ledger() as ledger:
        ledger.apply(setup_lines()[0])
        start = ledger.position()
        context = multiprocessing.get_context("spawn")
        opened, go = context.Event(), context.Event()
        other = context.Process(target=write_later,
                                args=(str(store.data), store.url, store.env, opened, go))
        other.start()
        try:
            assert opened.wait(60)
            go.set()
            followed = list(ledger.follow(after=start, timeout=3, interval=0.05))
        finally:
            other.join(60)
        # it waited for the other process's event, then 3 s with nothing new, and ended
        assert [type(x.event) for x in followed] == [Party.Registered]
        assert followed[0].event.party_id == "3001"  # type: ignore[attr-defined]
        assert other.exitcode == 0


def test_threads_may_share_one_ledger(store: Store) -> None:
    """Calls take turns on one Ledger's lock: 4 threads × 10 generations all land, each once."""
    with store.ledger() as ledger:
        ledger.apply(setup_lines()[0])
        results: list[str] = []

        def generate(thread: int) -> None:
            for n in range(10):
                results.append(ledger.apply({
                    "type": "generate", "date": "2024-01-10", "party": PRODUCER,
                    "facility": "20001", "batch": f"{thread}{n:04d}", "fuel": "ethanol",
                    "d_code": 6, "volume": 100}).status)
                assert ledger.holdings(PRODUCER)  # reads interleave with the writes

        threads = [threading.Thread(target=generate, args=(t,)) for t in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert results == ["applied"] * 40
        # 40 batches × 100 gal × EV 1.0 = 4,000 gallon-RINs
        assert ledger.holdings(PRODUCER)[0].gallon_rins == 4_000
        assert len(list(ledger.follow(timeout=0))) == 1 + 40 * 2  # generated + assigned


def test_the_followed_topics_are_the_domain_events() -> None:
    assert DOMAIN_TOPICS and all(t.startswith("rin_ledger:") for t in DOMAIN_TOPICS)
    assert not any("CommandRecord" in t for t in DOMAIN_TOPICS)
