"""Several processes write conflicting commands to the same parties at once, each with its own
`Ledger` on one store (SQLite always, PostgreSQL when RIN_TEST_POSTGRES_URL is set).

The contests: the same separated block sold to four buyers; a seller with exactly 12,000
gallon-RINs asked for 20,000; one assigned block separated by two writers while two others sell
it; one separated block retired (spill) by two writers while two others sell it; the same
command id sent by all four. Each round starts the four writers together at a barrier; half of
them send a round as single `apply` calls, half as one `apply_many` batch. Afterwards: no
gallon-RIN spent twice (RINS-NOT-HELD for every loser, §80.1428(b)(2)), no lost update (every
applied result's events and command record are stored, every rejected one left no trace, and
the holdings equal the sum of the applied results), conservation and the hash chains hold, and
the writers did meet: optimistic-concurrency retries (`Ledger.retries`) happened.
"""

from __future__ import annotations

import json
import multiprocessing
import queue
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

from conftest import Store
from store_access import app_of

from ledger import Ledger
from ledger.infrastructure.chain import notifications, verify_chain
from ledger.infrastructure.command_table import stored_rows
from projections import verify

WRITERS = 4
BUYERS = [f"300{n}" for n in range(1, WRITERS + 1)]
HOLDER, SELLER, PRODUCER = "2001", "2002", "1001"
BLOCK = 1_000  # 1,000 gallons of ethanol × EV 1.0 = 1,000 gallon-RINs a batch
BLOCK_FUEL = 400  # 1,000 gallon-RINs / 2.5 per gallon = 400 gallons moved or blended with them
POOL = 12_000  # the seller's separated gallon-RINs: 12,000 gallons × EV 1.0
POOL_ASK = 1_000  # each writer asks 5 times: 4 × 5 × 1,000 = 20,000 > 12,000
POOL_TRIES = 5
ROUNDS = 3  # rounds of each contest
PER_ROUND = 3  # blocks contested in each round
CONTEST_DAY = "2024-02-01"


def code(k: int, batch: int, size: int = BLOCK) -> str:
    """K, 2024, company 1001, facility 10011, batch, RR 10 (EV 1.0), D6, serials 1-size."""
    return f"{k}2024{PRODUCER}10011{batch:05d}106{1:08d}{size:08d}"


def party(number: str, name: str, roles: list[str],
          facilities: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"type": "register_party", "id": f"reg-{number}", "party": number, "name": name,
            "roles": roles, "facilities": list(facilities)}


def generate(batch: int, volume: int) -> dict[str, Any]:
    return {"type": "generate", "id": f"gen-{batch}", "date": "2024-01-10", "party": PRODUCER,
            "facility": "10011", "batch": f"{batch:05d}", "fuel": "ethanol", "d_code": 6,
            "volume": volume}


def transfer(cid: str, seller: str, buyer: str, rins: dict[str, Any], volume: int | None,
             day: str = CONTEST_DAY) -> dict[str, Any]:
    line = {"type": "transfer", "id": cid, "date": day, "from": seller, "to": buyer,
            "rins": rins}
    return {**line, "volume": volume} if volume else line


def separate(cid: str, holder: str, rins: dict[str, Any], volume: int,
             day: str = CONTEST_DAY) -> dict[str, Any]:
    return {"type": "separate", "id": cid, "date": day, "party": holder, "reason": "blending",
            "rins": rins, "volume": volume}


@dataclass(frozen=True)
class Plan:
    """The set-up lines, and per round the lines each writer sends."""

    setup: list[dict[str, Any]]
    rounds: list[tuple[str, list[list[dict[str, Any]]]]]


def plan() -> Plan:
    """Batches 1-9 are sold to four buyers (K=2), 10-18 separated against sold (K=1), 19-27
    retired against sold (K=2), 28-30 sent under one id by all; batch 99 is the seller's pool."""
    rounds: list[tuple[str, list[list[dict[str, Any]]]]] = []
    sale = [list(range(1 + r * PER_ROUND, 1 + (r + 1) * PER_ROUND)) for r in range(ROUNDS)]
    vs_separate = [[b + 9 for b in blocks] for blocks in sale]
    vs_retire = [[b + 18 for b in blocks] for blocks in sale]
    same_id = [28, 29, 30]
    for blocks in sale:
        rounds.append(("sale", [
            [transfer(f"sale-{b}-w{w}", HOLDER, BUYERS[w], {"code": code(2, b)}, None)
             for b in blocks] for w in range(WRITERS)]))
    rounds.append(("pool", [
        [transfer(f"pool-{t}-w{w}", SELLER, BUYERS[w],
                  {"d_code": 6, "vintage": 2024, "k": 2, "quantity": POOL_ASK}, None)
         for t in range(POOL_TRIES)] for w in range(WRITERS)]))
    for blocks in vs_separate:
        rounds.append(("separate-vs-sell", [
            [separate(f"sep-{b}-w{w}", HOLDER, {"code": code(1, b)}, BLOCK_FUEL) if w % 2 == 0
             else transfer(f"sell1-{b}-w{w}", HOLDER, BUYERS[w], {"code": code(1, b)},
                           BLOCK_FUEL)
             for b in blocks] for w in range(WRITERS)]))
    for blocks in vs_retire:
        rounds.append(("retire-vs-sell", [
            [{"type": "retire", "id": f"ret-{b}-w{w}", "date": CONTEST_DAY, "party": HOLDER,
              "reason": "spill", "rins": {"code": code(2, b)}} if w % 2 == 0
             else transfer(f"sell2-{b}-w{w}", HOLDER, BUYERS[w], {"code": code(2, b)}, None)
             for b in blocks] for w in range(WRITERS)]))
    rounds.append(("same-id", [
        [transfer(f"same-{b}", HOLDER, BUYERS[0], {"code": code(2, b)}, None) for b in same_id]
        for _ in range(WRITERS)]))
    setup = [
        party(PRODUCER, "Producer", ["producer"], ("10011",)),
        party(HOLDER, "Holder", ["blender"]), party(SELLER, "Seller", ["blender"]),
        *(party(b, f"Buyer {b}", ["blender"]) for b in BUYERS),
    ]
    contested = range(1, 31)
    for b in contested:
        setup += [generate(b, BLOCK),
                  transfer(f"buy-{b}", PRODUCER, HOLDER, {"code": code(1, b)}, BLOCK_FUEL,
                           "2024-01-11")]
    # the other 600 gallons of each batch follow as fuel alone: 30 × 600 = 18,000 gallons
    setup.append({"type": "transfer_fuel", "id": "fuel", "date": "2024-01-11", "from": PRODUCER,
                  "to": HOLDER, "volume": len(contested) * (BLOCK - BLOCK_FUEL)})
    for b in [*range(1, 10), *range(19, 31)]:
        setup.append(separate(f"presep-{b}", HOLDER, {"code": code(1, b)}, BLOCK_FUEL,
                              "2024-01-12"))
    # the seller's pool: 12,000 gallon-RINs moved with 12,000 / 2.5 = 4,800 gallons
    pool = {"d_code": 6, "vintage": 2024, "k": 1, "quantity": POOL}
    setup += [generate(99, POOL),
              transfer("buy-99", PRODUCER, SELLER, pool, 4_800, "2024-01-11"),
              separate("presep-99", SELLER, pool, 4_800, "2024-01-12")]
    return Plan(setup, rounds)


def writer(store: Store, number: int, rounds: list[list[dict[str, Any]]], barrier: Any,
           out: Any) -> None:
    """One writer process: each round, wait for the others, then send its lines."""
    results: list[tuple[str, str, str | None]] = []
    with Ledger(store.data, store=store.url, env=store.env) as ledger:
        for lines in rounds:
            barrier.wait(timeout=120)
            if number % 2:
                outcomes = list(ledger.apply_many(lines, batch_size=len(lines)))
            else:
                outcomes = [ledger.apply(line) for line in lines]
            results += [(line["id"], r.status, r.rule) for line, r in zip(lines, outcomes,
                                                                          strict=True)]
        out.put((number, results, ledger.retries))


def run_writers(store: Store, rounds: list[tuple[str, list[list[dict[str, Any]]]]]
                ) -> tuple[dict[str, list[tuple[str, str | None]]], int]:
    """Start the writers, collect every line's outcomes (by id) and the retries counted."""
    context = multiprocessing.get_context("spawn")
    barrier, out = context.Barrier(WRITERS), context.Queue()
    processes = [
        context.Process(target=writer, args=(store, w, [lines[w] for _, lines in rounds],
                                             barrier, out))
        for w in range(WRITERS)
    ]
    for process in processes:
        process.start()
    reports = []
    while len(reports) < WRITERS:
        try:
            reports.append(out.get(timeout=1))
        except queue.Empty:
            crashed = [p.exitcode for p in processes if p.exitcode not in (None, 0)]
            assert not crashed, f"a writer process failed: exit codes {crashed}"
    for process in processes:
        process.join(timeout=60)
        assert process.exitcode == 0
    outcomes: dict[str, list[tuple[str, str | None]]] = defaultdict(list)
    for _, results, _ in reports:
        for cid, status, rule in results:
            outcomes[cid].append((status, rule))
    return outcomes, sum(retries for _, _, retries in reports)


def stored_ids(ledger: Ledger) -> tuple[Counter[str], set[str]]:
    """Command records per client id, and the client ids carried by Party events."""
    records: Counter[str] = Counter()
    on_events: set[str] = set()
    for note in notifications(app_of(ledger)):
        state = json.loads(note.state)
        if note.topic.startswith("rin_ledger:CommandRecord"):
            records[state["client_id"]] += 1
        elif state.get("client_id"):
            on_events.add(state["client_id"])
    for row in stored_rows(app_of(ledger).recorder):  # the store's format since issue 15
        records[row.client_id] += 1
    return records, on_events


def totals(ledger: Ledger, parties: list[str]) -> dict[tuple[str, int], int]:
    """Gallon-RINs per (party, K), from the aggregates."""
    out: dict[tuple[str, int], int] = defaultdict(int)
    for p in parties:
        for row in ledger.holdings(p):
            out[(p, row["k"])] += row["gallon_rins"]
    return dict(out)


def expected_change(line: dict[str, Any], amount: int) -> list[tuple[tuple[str, int], int]]:
    """What one applied line does to the holdings, per (party, K)."""
    if line["type"] == "transfer":
        k = line["rins"].get("k") or int(line["rins"]["code"][0])
        return [((line["from"], k), -amount), ((line["to"], k), amount)]
    if line["type"] == "separate":
        return [((line["party"], 1), -amount), ((line["party"], 2), amount)]
    return [((line["party"], 2), -amount)]  # retire


def test_conflicting_writers_never_double_spend_or_lose_an_update(store: Store) -> None:
    the_plan = plan()
    parties = [PRODUCER, HOLDER, SELLER, *BUYERS]
    with store.ledger() as ledger:
        results = list(ledger.apply_many(the_plan.setup))
        assert [r.status for r in results] == ["applied"] * len(the_plan.setup), [
            r.error for r in results if r.status != "applied"]
        before = totals(ledger, parties)
    # Holder: 21 blocks separated (21,000 K=2), 9 still assigned (9,000 K=1); seller 12,000 K=2
    assert before == {(HOLDER, 1): 9 * BLOCK, (HOLDER, 2): 21 * BLOCK, (SELLER, 2): POOL}

    outcomes, retries = run_writers(store, the_plan.rounds)
    lines = {line["id"]: line for _, per_writer in the_plan.rounds
             for writer_lines in per_writer for line in writer_lines}
    sent = sum(len(writer_lines) for _, per_writer in the_plan.rounds
               for writer_lines in per_writer)
    print(f"\n{WRITERS} writers, {len(the_plan.rounds)} rounds, {sent} commands sent, "
          f"{retries} optimistic-concurrency retries")

    # No double spend: each contested block went exactly once, every loser for RINS-NOT-HELD.
    by_block: dict[str, list[str]] = defaultdict(list)
    for cid, results in outcomes.items():
        line = lines[cid]
        if line["rins"].get("code"):
            by_block[line["rins"]["code"][1:]] += [status for status, _ in results]
        for status, rule in results:
            assert status != "rejected" or rule == "RINS-NOT-HELD", (cid, status, rule)
    assert len(by_block) == 30
    for block, statuses in by_block.items():
        assert statuses.count("applied") == 1, (block, statuses)
    same = {cid: sorted(s for s, _ in r) for cid, r in outcomes.items() if cid.startswith("same")}
    assert same == {f"same-{b}": ["applied", "duplicate", "duplicate", "duplicate"]
                    for b in (28, 29, 30)}
    # 20 asks of 1,000 against a pool of 12,000: 12,000 / 1,000 = 12 applied, 8 refused
    pool = Counter(s for cid, r in outcomes.items() if cid.startswith("pool") for s, _ in r)
    assert pool == {"applied": 12, "rejected": 8}

    applied = {cid for cid, results in outcomes.items() if ("applied", None) in results}
    rejected = {cid for cid, results in outcomes.items() if results[0][0] == "rejected"}
    with store.ledger() as ledger:
        # No lost update: every applied result is stored once, every rejected one left nothing.
        records, on_events = stored_ids(ledger)
        setup_ids = {line["id"] for line in the_plan.setup}
        assert set(records) == setup_ids | applied
        assert set(records.values()) == {1}
        assert applied <= on_events and not rejected & on_events
        # ... and the holdings are the set-up plus exactly the applied results' effects.
        expected: dict[tuple[str, int], int] = defaultdict(int, before)
        for cid in applied:
            amount = POOL_ASK if cid.startswith("pool") else BLOCK
            for slot, change in expected_change(lines[cid], amount):
                expected[slot] += change
        assert totals(ledger, parties) == {s: n for s, n in expected.items() if n}
        assert totals(ledger, [SELLER]) == {}  # the pool is sold out, not oversold
        # Conservation, K only 1 → 2, no negative holding, views = rebuild; chains intact.
        assert verify(ledger, store.data / "views.sqlite") == []
        assert verify_chain(app_of(ledger)) == []
    assert retries > 0, "the writers never collided: the test proved nothing"
