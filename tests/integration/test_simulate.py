"""The market simulator: seeded, exact in length, every line valid unless asked for bad ones,
the same lines as before it moved into `ledger.simulation`, also through scripts/simulate.py."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable
from itertools import islice
from pathlib import Path
from typing import Any

import orjson
import pytest

from ledger import Ledger
from ledger.simulation import market as simulate

ROOT = Path(__file__).resolve().parents[2]
#: sha256 of the JSON Lines `python scripts/simulate.py --lines N --seed S --bad F` wrote at
#: commit d1b7dca, before the generator moved into ledger/simulation/market.py: the market
#: with every trade a fast-path transfer, which `postings=0` (`--postings 0`) still gives
BEFORE_THE_MOVE = {
    (5_000, 1, 0.0): "8a420b496dea760c9a6866c5f0a92fdb08ee22081e7950c0e4f645e0636e2c06",
    (3_000, 5, 0.05): "d3a1db7d89c18dbf91c99494a4332eeec07e616c81f78539422671f256befa62",
    (2_000, 3, 0.02): "177434643e2ab50c797398459bef83690a69ab9b278804897484c945bfc3ec99",
}


def digest(lines: Iterable[dict[str, Any]]) -> str:
    """sha256 of the lines as scripts/simulate.py writes them (orjson, one a line)."""
    return hashlib.sha256(b"".join(orjson.dumps(line) + b"\n" for line in lines)).hexdigest()


@pytest.mark.parametrize(("lines", "seed", "bad"), sorted(BEFORE_THE_MOVE))
def test_the_same_seed_gives_the_lines_it_gave_before_the_move(
    lines: int, seed: int, bad: float
) -> None:
    assert digest(simulate.generate_market(lines, seed, bad, postings=0)) == BEFORE_THE_MOVE[
        lines, seed, bad]


#: sha256 of `generate_market(N, S, F)` (postings at their default) at commit c7bdf5a, before
#: the national market (`national_market`, `PartyMix`) was added beside it
BEFORE_THE_NATIONAL_MARKET = {
    (5_000, 1, 0.0): "bbb6c833be0c173bce8572208a8627c583e6879992ca3cc01b0ca9e559e70a9b",
    (3_000, 5, 0.05): "9ca28c9fe9f733e7fcf328e3f84eae0064717730f078870bf6c7a3a5be9b5a81",
    (20_000, 2, 0.0): "96c376bf221e602d2fe951558a7e48d97ee9c6402d8c1d1163f32521de4db103",
}


@pytest.mark.parametrize(("lines", "seed", "bad"), sorted(BEFORE_THE_NATIONAL_MARKET))
def test_the_same_seed_gives_the_lines_it_gave_before_the_national_market(
    lines: int, seed: int, bad: float
) -> None:
    assert digest(simulate.generate_market(lines, seed, bad)) == BEFORE_THE_NATIONAL_MARKET[
        lines, seed, bad]


def test_a_million_line_market_starts_with_the_lines_it_gave_before_the_national_market(
) -> None:
    """The party list sized for a million lines (1,263 producers): its first 30,000 lines."""
    assert digest(islice(simulate.generate_market(1_000_000, 1), 30_000)) == (
        "9138816f44dd09f60d6e8f7bf6a56c7b99f4b3ba179e5c44dd4e0170cc4dc320")


def test_scripts_simulate_writes_the_generators_lines() -> None:
    """The script is a command line over the package: same options, same bytes on stdout."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # this checkout's package, not an installed one
    written = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "simulate.py"), "--lines", "2000", "--seed", "3",
         "--bad", "0.02", "--postings", "0"], capture_output=True, check=True, env=env, cwd=ROOT,
    ).stdout
    assert hashlib.sha256(written).hexdigest() == BEFORE_THE_MOVE[2_000, 3, 0.02]


def test_same_seed_same_lines_and_exact_length() -> None:
    first = list(simulate.generate_market(1_500, seed=7))
    assert len(first) == 1_500
    assert first == list(simulate.generate_market(1_500, seed=7))
    assert first != list(simulate.generate_market(1_500, seed=8))


def test_dates_never_go_back() -> None:
    dates = [line["date"] for line in simulate.generate_market(3_000, seed=3) if "date" in line]
    assert dates == sorted(dates)


def test_every_kind_of_line_and_every_d_code_appears() -> None:
    lines = list(simulate.generate_market(8_000, seed=1))
    kinds = Counter(line["type"] for line in lines)
    assert set(kinds) == {
        "register_party", "generate", "transfer", "transfer_fuel", "separate", "retire",
        "split", "report_obligation", "sell", "buy", "cancel_trade", "deny_trade",
        "expire_trades",
    }
    assert {line["d_code"] for line in lines if line["type"] == "generate"} == {3, 4, 5, 6, 7}
    reasons = {line["reason"] for line in lines if line["type"] == "retire"}
    assert {"compliance", "spill", "invalid_rin"} <= reasons


def test_a_simulated_market_applies_with_no_rejection(tmp_path: Path) -> None:
    with Ledger(tmp_path) as ledger:
        results = list(ledger.apply_many(simulate.generate_market(4_000, seed=1)))
    assert len(results) == 4_000
    rejected = [r.to_dict() for r in results if r.status == "rejected"]
    assert rejected == []


def test_bad_lines_are_rejected_and_only_they(tmp_path: Path) -> None:
    lines = list(simulate.generate_market(3_000, seed=5, bad_lines=0.05))
    bad = {n for n, line in enumerate(lines, start=1) if line["id"].startswith("bad-")}
    assert len(bad) > 50  # about 5 % of 3,000 = 150
    with Ledger(tmp_path) as ledger:
        results = list(ledger.apply_many(lines))
    assert {r.line for r in results if r.status == "rejected"} == bad
    assert all(r.status == "applied" for r in results if r.line not in bad)


def test_stream_is_lazy() -> None:
    """A million-line market starts at once: nothing is built ahead of what is read."""
    head = list(islice(simulate.generate_market(1_000_000, seed=1), 10))
    assert [line["type"] for line in head[:3]] == ["register_party"] * 3


def test_most_trades_are_postings_and_a_few_end_otherwise() -> None:
    """Most trades are a sell and its buy (§80.1452); a few postings are cancelled, denied or
    expire; some trades take the fast path. The shares are those of `market.POSTINGS` and
    `market.ENDINGS` (80 % posted; 4 % cancelled, 3 % denied, 3 % of separated sells to
    obligated parties expired), within what 20,000 lines' draws allow."""
    lines = list(simulate.generate_market(20_000, seed=1))
    kinds = Counter(line["type"] for line in lines)
    sells = kinds["sell"]
    # a trade is a completed pair, or a fast-path transfer (one after each cancel or denial)
    pairs = sum(1 for line in lines if line["type"] in ("buy", "sell") and "match" in line)
    fast = kinds["transfer"] - kinds["cancel_trade"] - kinds["deny_trade"]
    assert pairs / (pairs + fast) > 0.7, (pairs, fast)
    assert 0.02 < kinds["cancel_trade"] / sells < 0.06, kinds
    assert 0.015 < kinds["deny_trade"] / sells < 0.045, kinds
    unanswered = sells - pairs - kinds["cancel_trade"] - kinds["deny_trade"]
    assert 0 < unanswered / sells < 0.03, kinds  # 3 % of the separated sells alone
    assert kinds["expire_trades"] > 0 and fast > 0.1 * (pairs + fast)


def test_every_posting_ends_as_the_simulator_says(tmp_path: Path) -> None:
    """Applied, each posting's status is what its lines make it: answered ones completed,
    cancelled and denied ones so, unanswered ones expired once more than 10 business days
    passed (or still pending at the end); every line has an id and applies."""
    lines = list(simulate.generate_market(3_000, seed=2))
    assert all(line.get("id") for line in lines)
    with Ledger(tmp_path) as ledger:
        results = list(ledger.apply_many(lines))
        assert [r.to_dict() for r in results if r.status != "applied"] == []
        from projections import Views  # the read side, as `rin trades` reports it

        status = {row["id"]: row["status"] for row in Views(ledger).trades()}
    answered = {line["match"] for line in lines if "match" in line}
    answered |= {line["id"] for line in lines if "match" in line}
    cancelled = {line["trade"] for line in lines if line["type"] == "cancel_trade"}
    denied = {line["trade"] for line in lines if line["type"] == "deny_trade"}
    posted = {line["id"] for line in lines if line["type"] in ("sell", "buy")}
    assert posted == set(status)
    for posting in posted:
        wanted = ("completed" if posting in answered else "cancelled" if posting in cancelled
                  else "denied" if posting in denied else None)
        if wanted is None:
            assert status[posting] in ("expired", "pending"), posting
        else:
            assert status[posting] == wanted, posting
    assert Counter(status.values())["expired"] > 0
