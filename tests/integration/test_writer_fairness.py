"""Fairness between two writer processes on one store (session 5's finding): a writer that
keeps losing its save to the other's takes the writers' turn after `Retry.exclusive_after`
conflicts (ledger/infrastructure/writer_turn.py: a file lock on SQLite, an advisory lock on
PostgreSQL), so that try reads and saves with no other save in between and cannot lose. So
neither writer ever gives a line up as a write conflict, however few tries it is allowed past
that point.

The race (as in test_two_writers_same_lines.py): both processes send the same 210 id'd sales
from 2001 to 3001, in opposite orders, one per transaction, so every save of one contends with
every save of the other for the same two parties. Each is allowed one try past
`exclusive_after`: without the turn, a writer under the other's stream of saves loses more
often than that (session 5's reproducer: up to ~440 tries), and the line is refused.
"""

from __future__ import annotations

import multiprocessing
from pathlib import Path
from typing import Any

from conftest import Store
from markets import three_party_market
from test_two_writers_same_lines import SALES

from ledger import Ledger
from ledger.application import ledger as ledger_module
from ledger.infrastructure.retry import RETRY, Retry

TRIES = RETRY.exclusive_after + 1  # the first try under the turn is the last allowed


def writer(data: Path, url: str | None, env: dict[str, str], backward: bool, barrier: Any,
           out: Any) -> None:
    """One process: the sales (reversed if `backward`), one per transaction, with `TRIES`
    tries a line; report (backward, each line's (status, citation), conflicts) or a failure."""
    ledger_module.RETRY = Retry(attempts=TRIES)
    lines = SALES[::-1] if backward else SALES
    try:  # any failure, the barrier's included, is reported at once, not after out's timeout
        with Ledger(data, store=url, env=env) as ledger:
            barrier.wait(timeout=300)
            results = [(r.status, r.citation) for r in ledger.apply_many(lines, batch_size=1)]
            out.put((backward, results, ledger.retries))
    except Exception as error:  # reported to the test, which fails naming it
        out.put((backward, repr(error), 0))


def test_neither_of_two_contending_writers_gives_a_line_up(store: Store) -> None:
    with store.ledger() as ledger:
        assert {r.status for r in ledger.apply_many(three_party_market(40_000))} == {"applied"}
    context = multiprocessing.get_context("spawn")
    barrier, out = context.Barrier(2), context.Queue()
    processes = [context.Process(target=writer, args=(store.data, store.url, store.env,
                                                      backward, barrier, out))
                 for backward in (False, True)]
    for process in processes:
        process.start()
    reports = {backward: (results, retries)
               for backward, results, retries in (out.get(timeout=600), out.get(timeout=600))}
    for process in processes:
        process.join(timeout=60)
        assert process.exitcode == 0
    for results, _ in reports.values():
        assert isinstance(results, list), results  # no StoreError, nor any other failure
    forward, backward = reports[False][0], reports[True][0][::-1]
    for pair in zip(forward, backward, strict=True):
        # each sale applied by one writer and found a duplicate by the other: none given up
        assert sorted(status for status, _ in pair) == ["applied", "duplicate"], pair
    assert reports[False][1] + reports[True][1] > 0  # the writers did contend
    with store.ledger() as ledger:  # every sale stored once: 210 × 10 K=2 RINs moved
        assert sum(ledger.party("3001").holdings.totals().values()) == 10_000 + 2_100
        assert sum(ledger.party("2001").holdings.totals().values()) == 40_000 - 12_100
        assert ledger.audit() == []
