"""By property, on simulated markets (ledger/simulation): for every party and quarter the RIN
Activity Report's identity holds (§80.1451(c)(2)), and the attest's roll-forward recomputed from
the log (§80.1464) matches the report for every party that moved RINs."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlite_utils import Database

from ledger import Ledger
from ledger.simulation.market import generate_market
from projections import Views
from projections.activity_check import check


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.integers(300, 900), seed=st.integers(0, 2**32), bad=st.sampled_from([0.0, 0.03]))
def test_identity_and_roll_forward_hold_on_simulated_markets(
    lines: int, seed: int, bad: float
) -> None:
    with tempfile.TemporaryDirectory() as folder, Ledger(Path(folder)) as ledger:
        results = list(ledger.apply_many(generate_market(lines, seed, bad)))
        assert sum(r.status == "applied" for r in results) > lines // 2
        views = Views(ledger)
        views.project()
        db = Database(Path(folder) / "views.sqlite")
        try:
            found = check(db)
            movers = [(row["party"], row["year"]) for row in db.query(
                "SELECT party, MAX(year) AS year FROM rin_transactions GROUP BY party "
                "ORDER BY party LIMIT 6")]
        finally:
            db.close()
        assert found.problems == []
        assert found.quarters >= 4 * found.parties > 0
        for party, year in movers:
            rollforward = [r for r in views.attest(party, year, seed)
                           if r["type"] == "rollforward"]
            assert len(rollforward) == 8
            assert all(r["matches"] for r in rollforward), (party, year, rollforward)
