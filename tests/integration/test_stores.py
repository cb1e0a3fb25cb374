"""The same ledger on every store: SQLite always, PostgreSQL when RIN_TEST_POSTGRES_URL is set.

Core guarantees (apply, rules, atomic refusal, idempotency, batches) and two processes writing
to one store at once without a double-spent RIN.
"""

from __future__ import annotations

import multiprocessing
from pathlib import Path
from typing import Any

import orjson
from conftest import Store

from ledger import Ledger

SAMPLE = Path(__file__).parents[1] / "data" / "sample.jsonl"  # a copy of shared/examples
PARTIES = [
    {"type": "register_party", "party": "1001", "name": "Prairie", "roles": ["producer"],
     "facilities": ["20001"]},
    {"type": "register_party", "party": "2001", "name": "Gulf", "roles": ["blender"]},
    {"type": "register_party", "party": "2002", "name": "Bayou", "roles": ["blender"]},
]
BATCHES = 6
BATCH_RINS = 10_000  # 10,000 gallons of ethanol × EV 1.0 = 10,000 gallon-RINs a batch


def ethanol(batch: int) -> dict[str, Any]:
    return {"type": "generate", "id": f"gen-{batch}", "date": "2024-01-31", "party": "1001",
            "facility": "20001", "batch": f"{batch:05d}", "fuel": "ethanol", "d_code": 6,
            "volume": BATCH_RINS}


def code(batch: int) -> str:
    # K=1, 2024, company 1001, facility 20001, batch, RR 10 (EV 1.0), D6, serials 1-10,000
    return f"12024100120001{batch:05d}106{1:08d}{BATCH_RINS:08d}"


def stored(ledger: Ledger) -> int:
    return ledger.position() or 0


def test_the_sample_file_applies(store: Store) -> None:
    lines = [orjson.loads(line) for line in SAMPLE.read_bytes().splitlines() if line.strip()]
    with store.ledger() as ledger:
        results = list(ledger.apply_many(lines))
        assert [r.status for r in results] == ["applied"] * len(lines)
        # sample.jsonl: 3001 received 100,000 D6 and 60,000 D4, retired 90,000 D6 and 60,000 D4
        # 100,000 − 90,000 = 10,000 D6 left; 60,000 − 60,000 = 0 D4 (no row)
        assert ledger.holdings("3001") == [
            {"party": "3001", "d_code": 6, "vintage": 2024, "k": 2, "gallon_rins": 10_000},
        ]


def test_a_broken_rule_is_refused_with_its_citation_and_leaves_no_trace(store: Store) -> None:
    with store.ledger() as ledger:
        for command in [*PARTIES, ethanol(1)]:
            assert ledger.apply(command).status == "applied"
        before = stored(ledger)
        result = ledger.apply({
            "type": "transfer", "date": "2024-02-01", "from": "1001", "to": "2001",
            "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": 3_000}, "volume": 1_000,
        })
        assert result.rule == "ASSIGNED-PER-GALLON"
        assert result.citation == "§80.1428(a)(4)"
        # 3,000 / 1,000 = 3 gallon-RINs a gallon > 2.5
        assert "3,000 assigned gallon-RINs with 1,000 gallons is more than 2.5 per gallon" in (
            result.error or "")
        assert stored(ledger) == before


def test_the_same_id_twice_changes_nothing(store: Store) -> None:
    with store.ledger() as ledger:
        for command in PARTIES:
            ledger.apply(command)
        assert ledger.apply(ethanol(1)).status == "applied"
        before = stored(ledger)
        assert ledger.apply(ethanol(1)).status == "duplicate"
        assert stored(ledger) == before
        changed = {**ethanol(1), "volume": 5}
        assert ledger.apply(changed).status == "rejected"
        assert stored(ledger) == before


def contend(store: Store, buyer: str, barrier: Any, results: Any) -> None:
    """One writer process: try to buy every contested block, in step with the other writer."""
    with Ledger(store.data, store=store.url, env=store.env) as ledger:
        for batch in range(1, BATCHES + 1):
            barrier.wait()
            result = ledger.apply({
                "type": "transfer", "date": "2024-02-01", "from": "1001", "to": buyer,
                "rins": {"code": code(batch)}, "volume": BATCH_RINS,
            })
            results.put((buyer, batch, result.status, result.rule))


def test_two_processes_never_spend_the_same_rins_twice(store: Store) -> None:
    with store.ledger() as ledger:
        for command in [*PARTIES, *(ethanol(b) for b in range(1, BATCHES + 1))]:
            assert ledger.apply(command).status == "applied"
    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(2), context.Queue()
    writers = [
        context.Process(target=contend, args=(store, buyer, barrier, results))
        for buyer in ("2001", "2002")
    ]
    for writer in writers:
        writer.start()
    outcomes = [results.get(timeout=120) for _ in range(2 * BATCHES)]
    for writer in writers:
        writer.join(timeout=60)
        assert writer.exitcode == 0
    for batch in range(1, BATCHES + 1):
        statuses = sorted(status for _, b, status, _ in outcomes if b == batch)
        assert statuses == ["applied", "rejected"], (batch, outcomes)
    assert {rule for _, _, status, rule in outcomes if status == "rejected"} == {"RINS-NOT-HELD"}
    with store.ledger() as ledger:
        held = {party: sum(row["gallon_rins"] for row in ledger.holdings(party))
                for party in ("1001", "2001", "2002")}
    # conservation: 6 batches × 10,000 = 60,000 gallon-RINs, all with the two buyers, once each
    assert held["1001"] == 0
    assert held["2001"] + held["2002"] == BATCHES * BATCH_RINS
