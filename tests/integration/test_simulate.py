"""The market simulator: seeded, exact in length, every line valid unless asked for bad ones."""

from __future__ import annotations

from collections import Counter
from itertools import islice
from pathlib import Path

from ledger import Ledger
from ledger.cli.main import load_simulator

simulate = load_simulator()


def test_same_seed_same_lines_and_exact_length() -> None:
    first = list(simulate.generate_market(1_500, seed=7))
    assert len(first) == 1_500
    assert first == list(simulate.generate_market(1_500, seed=7))
    assert first != list(simulate.generate_market(1_500, seed=8))


def test_dates_never_go_back() -> None:
    dates = [line["date"] for line in simulate.generate_market(3_000, seed=3) if "date" in line]
    assert dates == sorted(dates)


def test_every_kind_of_line_and_every_d_code_appears() -> None:
    lines = list(simulate.generate_market(4_000, seed=1))
    kinds = Counter(line["type"] for line in lines)
    assert set(kinds) == {
        "register_party", "generate", "transfer", "transfer_fuel", "separate", "retire",
        "split", "report_obligation",
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
