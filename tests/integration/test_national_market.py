"""The national market (`national_market`, issue 15 item 3): the party list and span it is asked
for, proportions from reference.md §7, every line valid, seeded, streamed in flat memory.

The expected figures are worked out by hand from the generator's parameters (the comments show
the arithmetic) and checked against reference.md §7, not copied from its output. A year of 47
parties (the national mix at 2 %) is applied to a real ledger once for the whole module.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tracemalloc
from collections import Counter, deque
from collections.abc import Iterator
from itertools import islice
from pathlib import Path
from typing import Any

import orjson
import pytest

from ledger import Ledger
from ledger.simulation import market
from ledger.simulation.market import PartyMix, emts_transactions, national_market

SEED = 3
PARTIES = 48  # 2 % of 2,400

#: EMTS transactions one batch's chain makes on average (market.batch_chain), by hand:
#: a trade is a fast-path `transfer` (20 %: a sell and a buy, 2) or posted (80 %): completed or
#: buy first, 2 (75 % + 15 %); cancelled or denied, then made by the fast path: sell, cancel or
#: deny, transfer = 4 (4 % + 3 %); the 3 % left to expire: a lone sell (1) if the RINs were
#: separated, else cancelled (4). Assigned trade 0.2×2 + 0.8×(0.9×2 + 0.1×4) = 2.16; separated
#: trade 0.2×2 + 0.8×(0.9×2 + 0.07×4 + 0.03×1) = 2.088. A batch: generate (1), sold to 1.6
#: buyers (a blender; 30 % an exporter too, 30 % a second blender), each sale a trade, a
#: separation (1) and 1.4 separated trades (two pieces 40 % of the time), 1 % of the 1.3
#: blender sales a spill (1): 1 + 1.6 × (2.16 + 1 + 1.4 × 2.088) + 1.3 × 0.01 = 10.7461.
PER_BATCH = 1 + 1.6 * (2.16 + 1 + 1.4 * 2.088) + 1.3 * 0.01
#: a month, 5 % of obligated parties trade among themselves (80 %, 2) or retire invalid RINs (1)
PER_OBLIGATED_MONTH = 0.05 * (0.8 * 2 + 0.2 * 1)


def test_the_parameters_the_hand_figures_assume() -> None:
    """If these change, PER_BATCH and the counts below must be worked out again."""
    assert market.POSTINGS == 0.8
    assert dict(market.ENDINGS) == {"buy_first": 0.15, "cancelled": 0.04, "denied": 0.03,
                                    "expired": 0.03}
    assert round(PER_BATCH, 4) == 10.7461


def test_the_national_party_list_and_its_rins_match_reference_7() -> None:
    """1,469 producers: 764 ethanol (0.52 × 1,469 = 763.9), 323 biodiesel (323.2), 118
    renewable diesel (117.5), 118 biogas, 147 sugarcane importers (146.9), one D7 producer; 489
    blenders (1,469 // 3), 73 exporters (// 20), 367 obligated parties (// 4), one foreign
    producer: 2,401 parties, the nearest to reference.md §7's 2,400."""
    mix = PartyMix.for_parties(2_400)
    assert mix.producers == 1_469
    assert [count for _, count in mix.generators] == [764, 323, 118, 118, 147]
    assert (mix.blenders, mix.exporters, mix.obligated) == (489, 73, 367)
    assert mix.parties == 2_401
    # 1,469 × 1.1 M gallon-RINs a month × 12 = 19.39 B a year: §7 gives 18.3-21.3 B (2019-2022)
    assert 18.3e9 <= mix.producers * market.GALLON_RINS_PER_PRODUCER_MONTH * 12 <= 21.3e9
    # EMTS transactions a year: 1,470 generators × 12 + 4 D7 batches = 17,644 batch chains,
    # 367 obligated parties' incidents: about 190,000, §7's "195,000 in 2022" within 3 %
    batches = 1_470 * 12 + 4
    yearly = batches * PER_BATCH + 367 * 12 * PER_OBLIGATED_MONTH
    assert yearly == pytest.approx(190_000, rel=1e-3)
    assert yearly == pytest.approx(195_000, rel=0.03)
    # fifteen years: about 2.85 million plus the compliance retirements: "about 3 million"
    assert 15 * yearly == pytest.approx(3e6, rel=0.06)


def test_the_mix_scales_to_the_nearest_party_count() -> None:
    """48 asked: 28 producers make 15 + 6 + 2 + 2 + 3 = 28 generators (0.52 × 28 = 14.6, 6.2,
    2.2, 2.2, 2.8), + D7 + 9 blenders + 1 exporter + 7 obligated + the foreign one = 47; 30
    producers would make 50, and 29 also 47 (the fewer producers win the tie)."""
    assert PartyMix.for_parties(PARTIES).producers == 28
    assert PartyMix.for_parties(PARTIES).parties == 47
    assert PartyMix(30).parties == 50 and PartyMix(29).parties == 47


@pytest.fixture(scope="module")
def year() -> list[dict[str, Any]]:
    """One year of the national mix at 2 %: 2014 and the compliance season after it."""
    return list(national_market(SEED, years=1, parties=PARTIES))


@pytest.fixture(scope="module")
def applied(year: list[dict[str, Any]], tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[tuple[Ledger, list[Any]]]:
    with Ledger(tmp_path_factory.mktemp("national")) as ledger:
        yield ledger, list(ledger.apply_many(year))


def test_every_line_of_a_year_applies(
    year: list[dict[str, Any]], applied: tuple[Ledger, list[Any]]
) -> None:
    _, results = applied
    assert len(results) == len(year)
    assert [r.to_dict() for r in results if r.status != "applied"] == []


def test_the_year_registers_the_mix_and_generates_monthly(year: list[dict[str, Any]]) -> None:
    """The 47 parties by kind (see above): 15 + 6 + 2 + 2 producers and the D7 one, 3
    importers; one batch a month each (12 × 28) and the D7 producer's four quarterly: 340."""
    roles = Counter(line["roles"][0] for line in year if line["type"] == "register_party")
    assert roles == {"producer": 26, "importer": 3, "blender": 9, "exporter": 1,
                     "obligated_party": 7, "foreign_producer": 1}
    assert sum(line["type"] == "generate" for line in year) == 12 * 28 + 4
    assert year[-1]["date"] == "2015-03-28"  # the compliance season closing the span
    assert {line["date"][:4] for line in year if "date" in line} == {"2014", "2015"}


def test_the_years_emts_transactions_are_the_hand_figure(year: list[dict[str, Any]]) -> None:
    """340 batch chains × 10.746 + 7 obligated × 12 months × 0.09 = 3,661 in 2014, within
    the 5 % that a year's draws allow (about ±2 % is one standard deviation of 340 chains);
    that is 2 % of 190,000."""
    dated_2014 = [line for line in year if line.get("date", "").startswith("2014")]
    expected = 340 * PER_BATCH + 7 * 12 * PER_OBLIGATED_MONTH
    assert expected == pytest.approx(3_661, abs=1)
    assert sum(map(emts_transactions, dated_2014)) == pytest.approx(expected, rel=0.05)


def test_emts_counts_a_submission_each_and_a_transfer_as_a_sell_and_a_buy() -> None:
    counted = {kind: emts_transactions({"type": kind}) for kind in (
        "generate", "separate", "retire", "sell", "buy", "cancel_trade", "deny_trade",
        "transfer", "split", "transfer_fuel", "register_party", "report_obligation",
        "expire_trades")}
    assert counted == {"generate": 1, "separate": 1, "retire": 1, "sell": 1, "buy": 1,
                       "cancel_trade": 1, "deny_trade": 1, "transfer": 2, "split": 0,
                       "transfer_fuel": 0, "register_party": 0, "report_obligation": 0,
                       "expire_trades": 0}


def test_the_ledgers_generation_by_d_code_is_reference_7s(
    applied: tuple[Ledger, list[Any]]
) -> None:
    """Gallon-RINs generated as the ledger records them (its market generation table): D6
    about two-thirds, D4 about a quarter, D3 about 0.6 B and D5 0.3-0.5 B of about 20 B, D7 a
    trace (§7); the year's total 28 producers × 1.1 M × 12 = 369.6 M (2 % of 18.3-21.3 B)."""
    ledger, _ = applied
    from projections import Views

    by_d: Counter[int] = Counter()
    for row in Views(ledger).market_table("generation"):
        by_d[row["d_code"]] += row["gallon_rins"]
    total = sum(by_d.values())
    share = {d: n / total for d, n in by_d.items()}
    assert 0.62 < share[6] < 0.71
    assert 0.22 < share[4] < 0.31
    assert 0.6 / 21.3 < share[3] < 0.6 / 18.3
    assert 0.3 / 21.3 < share[5] < 0.5 / 18.3
    assert 0 < share[7] < 0.001
    assert total == pytest.approx(28 * 1_100_000 * 12, rel=0.03)


def test_four_trades_in_five_are_posted_and_their_endings_are_the_parameters(
    year: list[dict[str, Any]]
) -> None:
    """Each trade is posted with probability 0.8 (POSTINGS); one sell per posted trade, one
    transfer per fast-path trade, per cancel or denial, and per obligated parties' trade among
    themselves. Of sells: cancelled 4 % + 3 % × 1.6 / 3.84 (an assigned sale's would-be
    expiry) = 5.25 %; denied 3 %. About 1,300 trades: one standard deviation of the posted
    share is about 1.1 %."""
    kinds = Counter(line["type"] for line in year)
    obligated = {line["party"] for line in year if line["type"] == "register_party"
                 and "obligated_party" in line["roles"]}
    among_obligated = sum(1 for line in year if line["type"] == "transfer"
                          and line["from"] in obligated and line["to"] in obligated)
    sells = kinds["sell"]
    fast = kinds["transfer"] - kinds["cancel_trade"] - kinds["deny_trade"] - among_obligated
    assert sells / (sells + fast) == pytest.approx(0.8, abs=0.035)
    assert kinds["cancel_trade"] / sells == pytest.approx(0.0525, abs=0.02)
    assert kinds["deny_trade"] / sells == pytest.approx(0.03, abs=0.015)


def test_the_same_seed_gives_the_same_market() -> None:
    first = list(islice(national_market(SEED, years=1, parties=24), 500))
    assert first == list(islice(national_market(SEED, years=1, parties=24), 500))
    assert first != list(islice(national_market(SEED + 1, years=1, parties=24), 500))


def test_the_national_market_streams_in_flat_memory() -> None:
    """The whole fifteen-year national market starts at once (nothing is built ahead), and
    eight years take little more memory than one: only counts per party are kept."""
    head = list(islice(national_market(1), 3))
    assert [line["type"] for line in head] == ["register_party"] * 3

    def peak(years: int) -> int:
        tracemalloc.start()
        deque(national_market(1, years=years, parties=24), maxlen=0)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return peak

    peak(1)  # caches filled (the standards table, business days) before measuring
    assert peak(8) < 2 * peak(1)


def test_scripts_simulate_national_writes_the_generators_lines() -> None:
    """`--years N --parties P` is `national_market`, and `--lines` caps it."""
    root = Path(__file__).resolve().parents[2]
    written = subprocess.run(
        [sys.executable, str(root / "scripts" / "simulate.py"), "--years", "1", "--parties",
         "24", "--seed", "2", "--lines", "300"],
        capture_output=True, check=True, env={**os.environ, "PYTHONPATH": str(root)}, cwd=root,
    ).stdout
    lines = islice(national_market(2, years=1, parties=24), 300)
    assert written == b"".join(orjson.dumps(line) + b"\n" for line in lines)


class Draws:
    """Stands in for the market's random draws: each `random()` the next of `values`."""

    def __init__(self, *values: float) -> None:
        self.values = list(values)

    def random(self) -> float:
        return self.values.pop(0)


def test_a_buy_first_never_answers_an_unanswered_sell_it_agrees_with() -> None:
    """A lone `buy` completes with the oldest pending sell of its partner that agrees
    (handlers.buy), so when a separated sell of the same RINs to the same buyer on the same day
    is left to expire, the second trade must not post its buy first: its sell would then find
    that buy completed (§80.1452(c)(6)) and be refused. It happened in a 5 % national trial:
    two equal pieces of one separation, sold to one obligated party."""
    trading = market.Market(PartyMix(6), SEED, 0.0)
    seller, buyer = trading.blenders[0], trading.obligated[0]
    on = market.date(2014, 3, 3)
    seller.rins[(6, 2014, 2)] = 2_000
    first = seller.take(6, 2014, 2, 1_000)
    trading.rng = Draws(0.0, 0.23)  # type: ignore[assignment]  # posted; left to expire
    lone = list(trading.trade(seller, buyer, on, first, {"price": "1.00"}, may_expire=True))
    assert [line["type"] for line in lone] == ["sell"]
    second = seller.take(6, 2014, 2, 1_000)
    trading.rng = Draws(0.0, 0.0)  # type: ignore[assignment]  # posted; the buy first
    answered = list(trading.trade(seller, buyer, on, second, {"price": "1.10"},
                                  may_expire=True))
    assert [line["type"] for line in answered] == ["sell", "buy"]
    assert answered[1]["match"] == answered[0]["id"]
    # the buy first still happens when nothing unanswered agrees (another quantity)
    seller.rins[(6, 2014, 2)] = 999
    other = seller.take(6, 2014, 2, 999)
    trading.rng = Draws(0.0, 0.0)  # type: ignore[assignment]
    first_buy = list(trading.trade(seller, buyer, on, other, {"price": "1.10"}, may_expire=True))
    assert [line["type"] for line in first_buy] == ["buy", "sell"]
