"""Issue 9, attack 6 (threads): one `Ledger` shared by 8 threads, half sending single `apply`
calls and half `apply_many` batches, all selling from one producer's 1,500 gallon-RINs, while
a ninth reads holdings and projects the views through it. Every
result reported must be true (the applied sales are stored, once; the refused ones left
nothing, each for RINS-NOT-HELD, §80.1428(b)(2)), `verify` finds nothing broken and every
party's history loads from the store."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

from conftest import Store
from store_access import app_of
from test_concurrency import generate, party, stored_ids

from ledger.domain.party import Party
from ledger.infrastructure.chain import verify_chain
from projections import Views, verify

THREADS = 8
SALES = 25  # per thread, of 10 gallon-RINs: 8 × 25 × 10 = 2,000 asked of 1,500 held
PRODUCER = "1001"
BUYERS = [f"20{n:02d}" for n in range(1, THREADS + 1)]


def sale(thread: int, n: int) -> dict[str, Any]:
    """10 gallon-RINs with the 4 gallons of ethanol they came with (EV 1.0, 2.5 RINs a gallon)."""
    return {"type": "transfer", "id": f"t{thread}-{n}", "date": "2024-01-11",
            "from": PRODUCER, "to": BUYERS[thread],
            "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": 10}, "volume": 4}


def test_threads_sharing_one_ledger_store_exactly_what_they_report(store: Store) -> None:
    with store.ledger() as ledger:
        setup = [party(PRODUCER, "Producer", ["producer"], ("10011",)),
                 *(party(b, f"Buyer {b}", ["blender"]) for b in BUYERS),
                 generate(1, 1_000), generate(2, 500)]
        assert {r.status for r in ledger.apply_many(setup)} == {"applied"}
        barrier = threading.Barrier(THREADS)
        outcomes: dict[str, tuple[str, str | None]] = {}
        failures: list[BaseException] = []

        def writer(thread: int) -> None:
            lines = [sale(thread, n) for n in range(SALES)]
            try:
                barrier.wait(timeout=60)
                if thread % 2:
                    results = list(ledger.apply_many(lines, batch_size=5))
                else:
                    results = [ledger.apply(line) for line in lines]
            except BaseException as error:  # reported below: a thread's exception is lost
                failures.append(error)
                return
            for line, result in zip(lines, results, strict=True):
                outcomes[line["id"]] = (result.status, result.rule)

        writing = True
        seen: list[list[int]] = []  # each party's gallon-RINs, as a reader saw them

        def reader() -> None:
            """Reads while the writers write: each party as stored, never half-changed."""
            try:
                while writing:
                    seen.append([sum(row["gallon_rins"] for row in ledger.holdings(p))
                                 for p in [PRODUCER, *BUYERS]])
                    Views(ledger).project()
            except BaseException as error:
                failures.append(error)

        threads = [threading.Thread(target=writer, args=(t,)) for t in range(THREADS)]
        watcher = threading.Thread(target=reader)
        watcher.start()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=300)
        writing = False
        watcher.join(timeout=60)
        assert not failures, failures
        # the producer only sells and the buyers only buy, 10 gallon-RINs at a time
        assert seen
        for party_number, history in enumerate(zip(*seen, strict=True)):
            assert all(n % 10 == 0 for n in history)
            assert list(history) == sorted(history, reverse=party_number == 0)
        assert len(outcomes) == THREADS * SALES
        statuses = Counter(status for status, _ in outcomes.values())
        # 1,500 gallon-RINs in sales of 10: exactly 150 applied, the other 50 refused
        assert statuses == {"applied": 150, "rejected": 50}
        assert {rule for status, rule in outcomes.values() if status == "rejected"} == {
            "RINS-NOT-HELD"}
        records, on_events = stored_ids(ledger)
        applied = {cid for cid, (status, _) in outcomes.items() if status == "applied"}
        assert set(records) == {line["id"] for line in setup} | applied
        assert set(records.values()) == {1}
        assert on_events - {line["id"] for line in setup} == applied
        assert verify(ledger, store.data / "views.sqlite") == []
        assert verify_chain(app_of(ledger)) == []
    with store.ledger() as fresh:  # every party's history loads, from the store alone
        for buyer_number, buyer in enumerate(BUYERS):
            sold = sum(1 for cid in applied if cid.startswith(f"t{buyer_number}-"))
            events = list(fresh.log.history(Party.create_id(buyer)))
            assert fresh.party(buyer).version == len(events) == 1 + sold
            held = sum(row["gallon_rins"] for row in fresh.holdings(buyer))
            assert held == 10 * sold
        assert fresh.holdings(PRODUCER) == []
