"""Issue 9, attack 7 (write skew): the regulator's finding that a batch is invalid (§80.1431(a))
races, from another process, a transfer of that batch (refused once found: §80.1431(b)(1)) or
a compliance retirement of it (refused: §80.1431(b)(2)). The transfer and the retirement only
read the batch's invalidation record; the store's version check must cover that read, so that
neither is ever stored after the finding."""

from __future__ import annotations

import multiprocessing
import random
import time
from typing import Any

import pytest
from conftest import Store
from store_access import app_of
from test_concurrency import code, generate, party, separate, transfer

from ledger import Ledger
from ledger.application.handlers import UnitOfWork
from ledger.domain.invalidation import BatchInvalidation
from ledger.domain.party import Party
from ledger.domain.rin import parse_code

ROUNDS = 40  # of each contest: a transfer, then a compliance retirement, against a finding
PRODUCER, BLENDER, REFINER, BUYER = "1001", "2001", "3001", "4001"
TRANSFERRED = range(1, ROUNDS + 1)  # batches sold by the producer with their fuel (K=1)
RETIRED = range(ROUNDS + 1, 2 * ROUNDS + 1)  # batches the refiner holds separated (K=2)


def setup() -> list[dict[str, Any]]:
    lines = [party(PRODUCER, "Producer", ["producer"], ("10011",)),
             party(BLENDER, "Blender", ["blender"]),
             party(REFINER, "Refiner", ["obligated_party"]), party(BUYER, "Buyer", ["blender"])]
    lines += [generate(b, 1_000) for b in [*TRANSFERRED, *RETIRED]]
    for b in RETIRED:  # 1,000 gallon-RINs move with 400 gallons (EV 1.0, 2.5 a gallon)
        lines += [transfer(f"buy-{b}", PRODUCER, BLENDER, {"code": code(1, b)}, 400,
                           "2024-01-11"),
                  separate(f"sep-{b}", BLENDER, {"code": code(1, b)}, 400, "2024-01-12"),
                  transfer(f"sell-{b}", BLENDER, REFINER, {"code": code(2, b)}, None,
                           "2024-01-13")]
    return lines


def finding(batch: int) -> dict[str, Any]:
    return {"type": "invalidate", "id": f"inv-{batch}", "date": "2024-02-01",
            "rin": code(1, batch), "reason": "improperly_generated"}


def use(batch: int) -> dict[str, Any]:
    if batch in TRANSFERRED:
        return transfer(f"use-{batch}", PRODUCER, BUYER, {"code": code(1, batch)}, 400)
    return {"type": "retire", "id": f"use-{batch}", "date": "2024-02-01", "party": REFINER,
            "reason": "compliance", "compliance_year": 2024, "rins": {"code": code(2, batch)}}


def racer(store: Store, lines: list[dict[str, Any]], barrier: Any, out: Any) -> None:
    """One process: each round, wait for the other, then send that round's line after a random
    pause of up to 40 ms, longer than either command takes on a loaded machine, so that either
    may go first (with 5 ms, a CI run under load once saw every finding first: 0 of 80 met)."""
    jitter = random.Random(lines[0]["id"])
    with Ledger(store.data, store=store.url, env=store.env) as ledger:
        statuses = []
        for line in lines:
            barrier.wait(timeout=120)
            time.sleep(jitter.uniform(0, 0.04))
            statuses.append((line["id"], ledger.apply(line).status))
    out.put(statuses)


def test_no_transfer_or_retirement_is_stored_after_the_finding(store: Store) -> None:
    with store.ledger() as ledger:
        assert {r.status for r in ledger.apply_many(setup())} == {"applied"}
    batches = [*TRANSFERRED, *RETIRED]
    context = multiprocessing.get_context("spawn")
    barrier, out = context.Barrier(2), context.Queue()
    processes = [context.Process(target=racer, args=(store, lines, barrier, out)) for lines in (
        [finding(b) for b in batches], [use(b) for b in batches])]
    for process in processes:
        process.start()
    reported = dict(out.get(timeout=600) + out.get(timeout=600))
    for process in processes:
        process.join(timeout=60)
        assert process.exitcode == 0
    assert all(reported[f"inv-{b}"] == "applied" for b in batches)
    with store.ledger() as ledger:
        notes = app_of(ledger).recorder.select_notifications(start=1, limit=100_000)
        found: dict[int, int] = {}  # batch → notification id of its finding
        used: dict[int, int] = {}  # batch → notification id of its transfer or retirement
        for note in notes:
            event = app_of(ledger).mapper.to_domain_event(note)
            if isinstance(event, BatchInvalidation.Invalidated):
                found[int(event.rins[0].key.batch)] = note.id
            elif isinstance(event, (Party.TransferredOut, Party.Retired)):
                client_id = event.client_id or ""
                if client_id.startswith("use-"):
                    used[int(client_id[4:])] = note.id
        late = sorted(b for b in used if used[b] > found[b])
        assert late == [], f"stored after the finding of their batch: {late}"
        # each use is reported as it is stored: applied before the finding, refused after
        assert {b for b in batches if reported[f"use-{b}"] == "applied"} == set(used)
        print(f"\n{len(used)} of {len(batches)} uses came before their finding")
        assert 0 < len(used) < len(batches), "the racers never met: the test proved nothing"


def test_a_finding_stored_between_read_and_save_turns_the_use_away(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same race made certain: another writer stores the finding right after this writer's
    transfer (or retirement) has read the batch's record and before it saves."""
    with store.ledger() as ledger, store.ledger() as regulator:
        assert {r.status for r in ledger.apply_many(setup())} == {"applied"}
        save = UnitOfWork.save
        for batch, rule in [(TRANSFERRED[0], "INVALID-TRANSFER"), (RETIRED[0], "INVALID-USE")]:
            record = BatchInvalidation.create_id(parse_code(code(1, batch), "rin")[0].batch_id)

            def finding_first(uow: UnitOfWork, record: Any = record, batch: int = batch) -> Any:
                if uow.app is app_of(ledger) and not regulator.log.history(record):
                    assert regulator.apply(finding(batch)).status == "applied"
                return save(uow)
            monkeypatch.setattr(UnitOfWork, "save", finding_first)
            result = ledger.apply(use(batch))
            assert (result.status, result.rule) == ("rejected", rule), result.error
            assert ledger.retries > 0
        monkeypatch.undo()
        used = [e for e in app_of(ledger).recorder.select_notifications(start=1, limit=100_000)
                if e.topic in (Party.TransferredOut.TOPIC, Party.Retired.TOPIC)
                and b'"use-' in e.state]
        assert used == []
