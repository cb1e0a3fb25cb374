"""Two writer processes, each with its own `Ledger` on one store (SQLite, and PostgreSQL when
RIN_TEST_POSTGRES_URL is set), race over the same pending EMTS posting (§80.1452): two buys
matching one sell, the seller's cancel against the buyer's denial, and a buy against the
seller's cancel. Each round the two meet at a barrier and send after a random pause. Exactly
one wins each contest; the loser is refused naming the posting no longer pending
(TRADE-MATCH-PENDING, TRADE-CANCEL, TRADE-DENY), possibly after an optimistic-concurrency
retry; no trade moves twice; the store verifies.

1001 generates 10,000 gallons of ethanol (serials 1..10,000) and posts one sell to 2001 per
contest: 10 K=1 gallon-RINs with 4 gallons (2.5 a gallon, §80.1428(a)(4)).
"""

from __future__ import annotations

import multiprocessing
import random
import time
from collections import Counter
from typing import Any

from conftest import Store

from ledger import Ledger
from ledger.domain.party import Party
from ledger.domain.trade_book import Status
from projections import verify
from tests.postings import postings

ROUNDS = 15  # of each contest
PAUSE = 0.2  # seconds: longer than a command takes on a loaded 2-core machine
CONTESTS = ("two buys", "cancel against deny", "buy against cancel")
DAY = "2024-02-01"
RINS = {"d_code": 6, "vintage": 2024, "k": 1, "quantity": 10}
SETUP = [
    {"type": "register_party", "id": "r1", "party": "1001", "name": "Prairie",
     "roles": ["producer"], "facilities": ["20001"]},
    {"type": "register_party", "id": "r2", "party": "2001", "name": "Gulf", "roles": ["blender"]},
    {"type": "generate", "id": "g1", "date": "2024-01-10", "party": "1001", "facility": "20001",
     "batch": "00001", "fuel": "ethanol", "d_code": 6, "volume": 10_000},
]


def sell(posting: str) -> dict[str, Any]:
    return {"type": "sell", "id": posting, "date": DAY, "party": "1001", "to": "2001",
            "rins": RINS, "volume": 4}


def buy(cid: str, posting: str) -> dict[str, Any]:
    return {"type": "buy", "id": cid, "date": DAY, "party": "2001", "from": "1001",
            "rins": RINS, "volume": 4, "match": posting}


def cancel(cid: str, posting: str) -> dict[str, Any]:
    return {"type": "cancel_trade", "id": cid, "date": DAY, "party": "1001", "trade": posting}


def deny(cid: str, posting: str) -> dict[str, Any]:
    return {"type": "deny_trade", "id": cid, "date": DAY, "party": "2001", "trade": posting}


def plan() -> tuple[list[dict[str, Any]], list[tuple[str, str, dict[str, Any], dict[str, Any]]]]:
    """The set-up (with every contested sell posted), and per round: (contest, posting, the
    line of racer 0, the line of racer 1)."""
    setup, rounds = list(SETUP), []
    for n in range(ROUNDS):
        for contest in CONTESTS:
            posting = f"S-{contest.split()[0]}-{n}"
            setup.append(sell(posting))
            if contest == "two buys":
                lines = (buy(f"B0-{n}", posting), buy(f"B1-{n}", posting))
            elif contest == "cancel against deny":
                lines = (cancel(f"C-{n}", posting), deny(f"D-{n}", posting))
            else:
                lines = (buy(f"BC-{n}", posting), cancel(f"CB-{n}", posting))
            rounds.append((contest, posting, *lines))
    return setup, rounds


def racer(store: Store, lines: list[dict[str, Any]], barrier: Any, out: Any) -> None:
    """One process: each round, wait for the other, pause up to PAUSE seconds, send its line."""
    jitter = random.Random(lines[0]["id"])
    results = []
    with Ledger(store.data, store=store.url, env=store.env) as ledger:
        for line in lines:
            barrier.wait(timeout=120)
            time.sleep(jitter.uniform(0, PAUSE))
            result = ledger.apply(line)
            results.append((line["id"], result.status, result.rule, result.error))
        out.put((results, ledger.retries))


def test_exactly_one_of_two_processes_wins_each_posting(store: Store) -> None:
    setup, rounds = plan()
    with store.ledger() as ledger:
        assert {r.status for r in ledger.apply_many(setup)} == {"applied"}
    context = multiprocessing.get_context("spawn")
    barrier, out = context.Barrier(2), context.Queue()
    processes = [context.Process(target=racer, args=(
        store, [r[2 + w] for r in rounds], barrier, out)) for w in (0, 1)]
    for process in processes:
        process.start()
    reports = [out.get(timeout=900), out.get(timeout=900)]
    for process in processes:
        process.join(timeout=60)
        assert process.exitcode == 0
    outcome = {cid: (status, rule, error) for results, _ in reports
               for cid, status, rule, error in results}
    retries = sum(r for _, r in reports)

    wins: Counter[str] = Counter()
    expected_status = {"two buys": Status.COMPLETED}
    with store.ledger() as ledger:
        seller = postings(ledger, "1001")
        for contest, posting, first, second in rounds:
            results = [outcome[first["id"]], outcome[second["id"]]]
            statuses = sorted(r[0] for r in results)
            assert statuses == ["applied", "rejected"], (contest, posting, results)
            winner, loser = (first, second) if results[0][0] == "applied" else (second, first)
            _, rule, error = outcome[loser["id"]]
            wanted = {"buy": "TRADE-MATCH-PENDING", "cancel_trade": "TRADE-CANCEL",
                      "deny_trade": "TRADE-DENY"}[loser["type"]]
            assert rule == wanted and error.endswith("not pending"), (contest, rule, error)
            status = expected_status.get(contest) or {
                "buy": Status.COMPLETED, "cancel_trade": Status.CANCELLED,
                "deny_trade": Status.DENIED}[winner["type"]]
            assert seller[posting].status is status, (contest, posting)
            side = "racer 0" if winner is first else "racer 1"
            wins[f"{contest}: {winner['type']} ({side})"] += 1
        # no double move: one TransferredOut per completed posting, and 2001 holds exactly theirs
        completed = [p for p in seller.values() if p.status is Status.COMPLETED]
        moves = Counter(e.event.postings[0] for e in ledger.log.events()
                        if isinstance(e.event, Party.TransferredOut) and e.event.postings)
        assert moves == Counter({p.id: 1 for p in completed})
        held = sum(row["gallon_rins"] for row in ledger.holdings("2001"))
        assert held == 10 * len(completed)
        assert list(ledger.party("1001").trades.reservations()) == []
        assert verify(ledger, store.data / "views.sqlite") == []
    print(f"\n{'postgresql' if store.url else 'sqlite'}: {len(rounds)} contests, "
          f"{retries} optimistic-concurrency retries; winners: "
          + ", ".join(f"{k} {n}" for k, n in sorted(wins.items())))
    # the racers met: every contest had both outcomes, or the store turned a racer back to
    # retry (an optimistic-concurrency conflict). Which racer wins is the scheduler's: under
    # load one racer keeping its warm cache can win all 45 contests, and that is no fault
    for contest in CONTESTS:
        assert retries > 0 or len({k for k in wins if k.startswith(contest)}) >= 2, (
            contest, wins, retries)
