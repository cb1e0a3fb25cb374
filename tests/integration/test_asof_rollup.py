"""As-of positions from the monthly rollup (holdings_monthly's whole months plus holdings_history's
rows of the asked month) equal the sum of every holdings_history row, also after back-dated
events land in months projected long before; and the views built batch by batch equal a
rebuild."""

from __future__ import annotations

import random
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from projections_helpers import apply_all
from sqlite_utils import Database

from ledger import Ledger
from ledger.simulation import market as simulate
from projections import project, rebuild
from projections.holdings import history_rows, holdings, position
from projections.invariants import dump


def sale(day: str, seller: str, buyer: str, quantity: int) -> dict[str, Any]:
    """A sale of assigned D6 2024 RINs with their fuel, 2.5 RINs per gallon."""
    return {"type": "transfer", "date": day, "from": seller, "to": buyer,
            "volume": str(quantity * 2 // 5),
            "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": quantity}}


def held(db: Database, on: date) -> dict[str, int]:
    """Gallon-RINs per party on `on` (all D6 2024 K=1 here)."""
    return {row["party"]: row["gallon_rins"] for row in holdings(db, as_of=on)}


def test_a_back_dated_sale_changes_a_month_already_projected(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path)
    apply_all(ledger, [
        {"type": "register_party", "party": "1001", "name": "P", "roles": ["producer"],
         "facilities": ["20001"]},
        {"type": "register_party", "party": "2001", "name": "B1", "roles": ["blender"]},
        {"type": "register_party", "party": "2002", "name": "B2", "roles": ["blender"]},
        {"type": "generate", "date": "2024-01-10", "party": "1001", "facility": "20001",
         "batch": "00001", "fuel": "ethanol", "d_code": 6, "volume": "100000"},
        sale("2024-03-05", "1001", "2001", 30_000),
    ])
    project(ledger)
    # Recorded after the March sale was projected, dated in February.
    apply_all(ledger, [sale("2024-02-10", "1001", "2002", 20_000)])
    project(ledger)
    db = Database(tmp_path / "views.sqlite")
    # 100,000 generated on 01-10; 20,000 to 2002 on 02-10; 30,000 to 2001 on 03-05.
    assert held(db, date(2024, 2, 9)) == {"1001": 100_000}
    assert held(db, date(2024, 2, 10)) == {"1001": 80_000, "2002": 20_000}
    assert held(db, date(2024, 3, 4)) == {"1001": 80_000, "2002": 20_000}
    assert held(db, date(2024, 3, 5)) == {"1001": 50_000, "2001": 30_000, "2002": 20_000}
    months = [(r["month"], r["gallon_rins"]) for r in db.query(
        "SELECT month, gallon_rins FROM holdings_monthly WHERE party = '1001' ORDER BY month")]
    assert months == [("2024-01", 100_000), ("2024-02", -20_000), ("2024-03", -30_000)]
    db.close()


def back_dated_sales(
    ledger: Ledger, parties: list[str], rng: random.Random, first: date, last: date
) -> list[date]:
    """Try 60 sales of separated RINs between random parties on random days from `first` to
    `last`; the ledger refuses those the seller did not hold then and on every later day.
    Returns the days of those it applied."""
    days = []
    for _ in range(60):
        seller, buyer = rng.sample(parties, 2)
        stock = [row for row in ledger.holdings(seller) if row["k"] == 2]
        if not stock:
            continue
        lot = rng.choice(stock)
        day = first + timedelta(days=rng.randrange((last - first).days))
        result = ledger.apply({
            "type": "transfer", "date": day.isoformat(), "from": seller, "to": buyer,
            "rins": {"d_code": lot["d_code"], "vintage": lot["vintage"], "k": 2,
                     "quantity": rng.randint(1, 50)},
        })
        if result.status == "applied":
            days.append(day)
    return days


def test_the_rollup_equals_the_full_scan_on_a_simulated_market(tmp_path: Path) -> None:
    lines = list(simulate.generate_market(1_000, seed=5))
    dates = sorted(date.fromisoformat(line["date"]) for line in lines if "date" in line)
    first, last = dates[0], dates[-1]
    parties = [line["party"] for line in lines if line["type"] == "register_party"]
    ledger = Ledger(tmp_path)
    for chunk in (lines[:400], lines[400:]):
        assert all(r.status == "applied" for r in ledger.apply_many(chunk))
        project(ledger, batch_size=7)  # many small batches: each month's rows bumped often
    rng = random.Random(11)
    sold = []
    for _ in range(3):  # every month is projected already: each sale lands in an old one
        sold += back_dated_sales(ledger, parties, rng, first, last)
        project(ledger, batch_size=7)
    assert len({day.isoformat()[:7] for day in sold}) >= 5, "too few back-dated sales"
    incremental = dump(tmp_path / "views.sqlite")
    db = Database(tmp_path / "views.sqlite")
    parties = [None, *(row["party"] for row in db.query("SELECT party FROM parties"))]
    days = [first + timedelta(days=n) for n in range(0, (last - first).days + 40, 5)]
    days += [date(d.year, d.month, 1) - timedelta(days=1) for d in days]  # every month's end
    for party in parties:
        for day in days:
            assert holdings(db, party, day) == position(db, history_rows(party, day, None)), (
                party, day)
    assert holdings(db) == position(db, history_rows(None, None, None))
    db.close()
    rebuild(ledger)
    assert dump(tmp_path / "views.sqlite") == incremental
