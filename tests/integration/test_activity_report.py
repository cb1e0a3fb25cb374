"""The RIN Activity Report (§80.1451(c)(2)) on a small market computed by hand (tests/markets.py
`activity_market`, events A-O), its identity checked by `verify` for every party and quarter,
and as known at earlier points of the log.

Every expected number below is worked out from the market's lines and the regulation (current
year = vintage Y, prior year = vintage Y − 1; separated RINs leave the assigned row and enter
the separated row), not read off the code's output.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from markets import activity_market
from projections_helpers import apply_all
from sqlite_utils import Database

from ledger import Ledger
from projections import Views, project, rebuild, verify
from projections.activity import COLUMNS
from projections.activity_check import check
from projections.invariants import dump


def row(party: str, year: int, quarter: int, assignment: str, **amounts: Any) -> dict[str, Any]:
    """A report row: the amounts given, every other amount 0, `fuel_end` as given."""
    out: dict[str, Any] = dict.fromkeys(COLUMNS[4:], 0)
    out.update(party=party, year=year, quarter=quarter, assignment=assignment, **amounts)
    out["fuel_end"] = Decimal(out["fuel_end"])
    return {column: out[column] for column in COLUMNS}


@pytest.fixture(scope="module")
def market(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("activity")
    with Ledger(folder) as ledger:
        apply_all(ledger, activity_market())
    return folder


def activity(folder: Path, party: str, year: int, quarter: int | None = None,
             known_at: int | None = None) -> list[dict[str, Any]]:
    with Ledger(folder) as ledger:
        return Views(ledger).activity(party, year, quarter, known_at)


def test_blender_2023_q4(market: Path) -> None:
    assert activity(market, "2001", 2023, 4) == [
        # B bought 5,000; C separated 4,000: 0 + 5,000 − 4,000 = 1,000
        row("2001", 2023, 4, "assigned", current_purchased=5000, current_separated=4000,
            current_end=1000, fuel_end=400),  # fuel: 2,000 with B − 1,600 blended in C
        # C separated 4,000 in; D sold 3,000: 0 + 4,000 − 3,000 = 1,000
        row("2001", 2023, 4, "separated", current_separated=4000, current_sold=3000,
            current_end=1000, fuel_end=400),
    ]


def test_blender_2024_q1_and_q2(market: Path) -> None:
    assert activity(market, "2001", 2024, 1) == [
        # current (2024): 0 + 4,000 bought (F) − 2,000 separated (H) = 2,000;
        # prior (2023): 1,000 (2023 Q4's end) − 1,000 separated (G) = 0
        row("2001", 2024, 1, "assigned", prior_start=1000, current_purchased=4000,
            current_separated=2000, prior_separated=1000, current_end=2000, prior_end=0,
            fuel_end=800),  # 400 + 1,600 (F) − 400 (G) − 800 (H)
        # current: 0 + 2,000 separated (H) − 1,500 sold (I) = 500;
        # prior: 1,000 + 1,000 separated (G) − 500 sold (J, the two-sided trade) = 1,500
        row("2001", 2024, 1, "separated", prior_start=1000, current_sold=1500, prior_sold=500,
            current_separated=2000, prior_separated=1000, current_end=500, prior_end=1500,
            fuel_end=800),
    ]
    assert activity(market, "2001", 2024, 2) == [
        # 2,000 − 1,000 sold with 400 gallons (O) = 1,000; fuel 800 − 400 = 400
        row("2001", 2024, 2, "assigned", current_start=2000, current_sold=1000,
            current_end=1000, fuel_end=400),
        row("2001", 2024, 2, "separated", current_start=500, prior_start=1500,
            current_end=500, prior_end=1500, fuel_end=400),
    ]


def test_each_quarter_starts_where_the_last_ended(market: Path) -> None:
    """Within the year both classes; a Q1's prior-year start is last year's Q4 current end."""
    q4 = activity(market, "2001", 2023, 4)
    year = activity(market, "2001", 2024)
    assert [r["quarter"] for r in year] == [1, 1, 2, 2, 3, 3, 4, 4]
    for before, after in zip(year, year[2:], strict=False):
        assert after["current_start"] == before["current_end"]
        assert after["prior_start"] == before["prior_end"]
    for last, first in zip(q4, year[:2], strict=True):
        assert first["prior_start"] == last["current_end"] == 1000


def test_producer_generates_into_the_assigned_row_only(market: Path) -> None:
    assert activity(market, "1001", 2024, 1) == [
        # 2023's 10,000 − 5,000 sold (B) = 5,000 at the start; E generated 8,000 of 2024,
        # F sold 4,000 of them: 0 + 8,000 − 4,000 = 4,000
        row("1001", 2024, 1, "assigned", prior_start=5000, prior_end=5000, generated=8000,
            current_sold=4000, current_end=4000,
            fuel_end=14400),  # 10,000 − 2,000 (B) + 8,000 (E) − 1,600 (F)
        row("1001", 2024, 1, "separated", fuel_end=14400),
    ]


def test_retired_and_the_invalid_part(market: Path) -> None:
    """L retired 2023 serials 1-2,000; M (Q2) found serials 1-500 invalid: 500 of them."""
    assert activity(market, "3001", 2024, 1) == [
        row("3001", 2024, 1, "assigned"),
        # prior: 3,000 (D) − 2,000 retired (L) = 1,000; current: 0 + 1,500 bought (I)
        row("3001", 2024, 1, "separated", prior_start=3000, current_purchased=1500,
            prior_retired=2000, prior_retired_invalid=500, current_end=1500, prior_end=1000),
    ]
    assert activity(market, "3001", 2024, 2) == [
        # O: 1,000 assigned bought with 400 gallons
        row("3001", 2024, 2, "assigned", current_purchased=1000, current_end=1000, fuel_end=400),
        # 1,500 − 1,000 retired (N) = 500
        row("3001", 2024, 2, "separated", current_start=1500, prior_start=1000,
            current_retired=1000, current_end=500, prior_end=1000, fuel_end=400),
    ]


def test_the_report_as_known_before_later_lines(tmp_path: Path) -> None:
    """Known at the line before the finding (M): none of the retired RINs is invalid yet; known
    at the line before the two-sided trade (J): the blender still has its 500."""
    lines = activity_market()
    positions = {}
    with Ledger(tmp_path) as ledger:
        for number, command in enumerate(lines, start=1):
            positions[command.get("id")] = ledger.position()  # the point before this line
            assert ledger.apply(command, number).status == "applied"
        views = Views(ledger)
        before_finding = views.activity("3001", 2024, 1, known_at=positions["inv-m"])
        assert before_finding[1]["prior_retired"] == 2000
        assert before_finding[1]["prior_retired_invalid"] == 0
        assert views.activity("3001", 2024, 1)[1]["prior_retired_invalid"] == 500
        before_trade = views.activity("2001", 2024, 1, known_at=positions["s-1"])
        assert before_trade[1]["prior_sold"] == 0
        assert before_trade[1]["prior_end"] == 2000  # 1,000 + 1,000 separated (G)


def test_verify_checks_every_party_and_quarter(market: Path) -> None:
    """Four parties, each from the year it first held or moved a RIN to 2024: 1001, 2001 and
    3001 from 2023 (A, B, D), 8 quarters each; 4001 from 2024 (J), 4: 28 in all, all hold."""
    with Ledger(market) as ledger:
        assert verify(ledger) == []
    db = Database(market / "views.sqlite")
    try:
        found = check(db)
    finally:
        db.close()
    assert (found.parties, found.quarters, found.problems) == (4, 28, [])


def test_verify_finds_a_flow_the_activity_report_lost(tmp_path: Path) -> None:
    """Drop the blender's separation G from the flows: its Q1 2024 rows no longer add up."""
    with Ledger(tmp_path) as ledger:
        apply_all(ledger, activity_market())
        project(ledger)
        db = Database(tmp_path / "views.sqlite")
        db.execute("DELETE FROM rin_transactions WHERE party = '2001' AND type = 'separate' "
                   "AND vintage = 2023 AND date = '2024-02-10'")
        db.conn.commit()
        db.close()
        problems = verify(ledger)
    identity = [p for p in problems if p.startswith("§80.1451(c)(2)")]
    assert identity == [
        # assigned prior: 1,000 start − 0 separated = 1,000, but the holdings end at 0
        "§80.1451(c)(2): party 2001 2024 Q1 assigned prior-year RINs end at 0 but start + "
        "purchased − sold − retired + reinstated + generated ∓ separated is 1,000",
        # separated prior: 1,000 − 500 sold + 0 separated = 500, but the holdings end at 1,500
        "§80.1451(c)(2): party 2001 2024 Q1 separated prior-year RINs end at 1,500 but start + "
        "purchased − sold − retired + reinstated + generated ∓ separated is 500",
    ]
    assert any("rin_transactions differs from a rebuild" in p for p in problems)


def test_incremental_and_rebuilt_reports_are_the_same(tmp_path: Path) -> None:
    """The new read models are exactly once: projected a few lines at a time in small batches,
    then rebuilt, then projected into a fresh file, the tables are equal and hold rows."""
    lines = activity_market()
    with Ledger(tmp_path) as ledger:
        for start in range(0, len(lines), 6):
            apply_all(ledger, lines[start:start + 6])
            project(ledger, batch_size=4)
        incremental = dump(tmp_path / "views.sqlite")
        rebuild(ledger)
        assert dump(tmp_path / "views.sqlite") == incremental
        project(ledger, tmp_path / "fresh.sqlite")
        assert dump(tmp_path / "fresh.sqlite") == incremental
    # one row per side and block: A, C, E, G, H, L, N one each; B, D, F, I, J, O two each
    assert len(incremental["rin_transactions"]) == 7 + 2 * 6
    assert len(incremental["generated_batches"]) == 2
