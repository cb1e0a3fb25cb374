"""Reports over the sample transaction file, every number worked out by hand from it."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

import pytest
from projections_helpers import apply_all, sample_commands
from sqlite_utils import Database

from ledger import Ledger
from projections import Views

D6_BATCH = "12024100120001000011060000000100248738"  # 1001's ethanol batch, 248,738 RINs
D4_BATCH = "12024100220011000011540000000100060000"  # 1002's biodiesel batch, 60,000 RINs


@pytest.fixture
def views(tmp_path: Path) -> Views:
    ledger = Ledger(tmp_path)
    apply_all(ledger, sample_commands())
    return Views(ledger)


def test_holdings_as_of_2024_02_07(views: Views) -> None:
    # 1001 generated Vs = 250,000 × (−0.0006301 × 68 + 1.0378) = 248,738.3 gal → 248,738 D6
    # RINs and sold 120,000 to 2001 on 02-05: 248,738 − 120,000 = 128,738.
    # 1002 generated 1.5 × 40,000 = 60,000 D4 and sold all of them to 2001 on 02-06.
    # 2001 separates only on 02-09, so on 02-07 it holds both lots still assigned (K=1).
    assert views.holdings(as_of=date(2024, 2, 7)) == [
        {"party": "1001", "d_code": 6, "vintage": 2024, "k": 1, "gallon_rins": 128_738},
        {"party": "2001", "d_code": 4, "vintage": 2024, "k": 1, "gallon_rins": 60_000},
        {"party": "2001", "d_code": 6, "vintage": 2024, "k": 1, "gallon_rins": 120_000},
    ]


def test_holdings_now_and_by_block(views: Views) -> None:
    # 2001 separated 120,000 D6 and sold 100,000 to 3001: 20,000 left, serials 100,001-120,000.
    # 3001 got serials 1-100,000 and retired the lowest 90,000: 90,001-100,000 left (10,000).
    # 3001's 60,000 D4 were all retired.
    assert views.holdings(party="2001") == [
        {"party": "2001", "d_code": 6, "vintage": 2024, "k": 2, "gallon_rins": 20_000},
    ]
    assert views.holdings(blocks=True) == [
        {"party": "1001", "rin": "12024100120001000011060012000100248738", "d_code": 6,
         "vintage": 2024, "k": 1, "gallon_rins": 128_738, "reserved": False,
         "qap": "unverified", "locked": False},
        {"party": "2001", "rin": "22024100120001000011060010000100120000", "d_code": 6,
         "vintage": 2024, "k": 2, "gallon_rins": 20_000, "reserved": False,
         "qap": "unverified", "locked": False},
        {"party": "3001", "rin": "22024100120001000011060009000100100000", "d_code": 6,
         "vintage": 2024, "k": 2, "gallon_rins": 10_000, "reserved": False,
         "qap": "unverified", "locked": False},
    ]


def test_known_at_shows_what_the_ledger_said_then(views: Views) -> None:
    views.project()
    db = Database(views.path)
    separated = next(db.query("SELECT notification_id FROM journal WHERE client_id = 's-0001'"))
    db.close()
    before = separated["notification_id"] - 1
    # Known before 2001's first separation was recorded: its 120,000 D6 are still K=1, even
    # for a date after the separation's effective date.
    d6 = [r for r in views.holdings("2001", date(2024, 2, 10), before) if r["d_code"] == 6]
    assert d6 == [{"party": "2001", "d_code": 6, "vintage": 2024, "k": 1, "gallon_rins": 120_000}]
    # Known before anything was recorded: nothing.
    assert views.holdings(known_at=datetime(2000, 1, 1)) == []


def test_quarterly_2024_03_31(views: Views) -> None:
    rows = [r for r in views.quarterly(2024) if r["date"] == date(2024, 3, 31)]
    # 1001: 128,738 assigned RINs with 248,738.3 − 120,000 = 128,738.3 gal;
    #       limit 2.5 × 128,738.3 = 321,845.75 → no excess.
    # 1002: sold all 60,000 RINs with all 40,000 gal → 0 and 0.
    # 2001: bought 120,000 + 60,000 RINs with 120,000 + 40,000 gal, separated all, blending
    #       all 160,000 gal → 0 and 0. 3001 only ever owned separated RINs: not listed.
    assert rows == [
        {"party": "1001", "date": date(2024, 3, 31), "assigned_rins": 128_738,
         "volume": Decimal("128738.3"), "limit": Decimal("321845.75"), "excess": 0, "ok": True},
        {"party": "1002", "date": date(2024, 3, 31), "assigned_rins": 0, "volume": 0, "limit": 0,
         "excess": 0, "ok": True},
        {"party": "2001", "date": date(2024, 3, 31), "assigned_rins": 0, "volume": 0, "limit": 0,
         "excess": 0, "ok": True},
    ]


def test_quarterly_reports_an_excess(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path)
    apply_all(ledger, [
        {"type": "register_party", "party": "1001", "name": "P", "roles": ["producer"],
         "facilities": ["20001"]},
        {"type": "register_party", "party": "2001", "name": "B", "roles": ["blender"]},
        {"type": "generate", "date": "2024-01-10", "party": "1001", "facility": "20001",
         "batch": "00001", "fuel": "ethanol", "d_code": 6, "volume": 10000},
        {"type": "transfer", "date": "2024-01-11", "from": "1001", "to": "2001",
         "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": 10000}, "volume": 4000},
        {"type": "transfer_fuel", "date": "2024-02-01", "from": "2001", "to": "1001",
         "volume": 2000},
    ])
    rows = Views(ledger).quarterly(2024, party="2001")
    # 2001 holds 10,000 assigned RINs and 4,000 − 2,000 = 2,000 gal: limit 2.5 × 2,000 = 5,000,
    # excess 10,000 − 5,000 = 5,000 on every quarter end of 2024.
    assert [(r["date"], r["assigned_rins"], r["limit"], r["excess"], r["ok"]) for r in rows] == [
        (day, 10_000, 5_000, 5_000, False)
        for day in (date(2024, 3, 31), date(2024, 6, 30), date(2024, 9, 30), date(2024, 12, 31))
    ]


def test_sample_compliance_d4_counts_to_bbd_ab_and_rf(views: Views) -> None:
    # GV + DV = 900,000 + 300,000 = 1,200,000 gal; 2024 standards 0.59 / 2.82 / 3.79 / 12.50 %:
    # CB 7,080, BBD 33,840, AB 45,480, RF 150,000. Retired for 2024: 60,000 D4 (BBD, AB, RF)
    # and 90,000 D6 (RF only). CB: nothing valid → deficit 7,080, carried (first deficit).
    # BBD 60,000 ≥ 33,840; AB 60,000 ≥ 45,480; RF 60,000 + 90,000 = 150,000 ≥ 150,000.
    # At most the RVO is applied (§80.1427(a)(1)): BBD min(60,000, 33,840) = 33,840, AB
    # min(60,000, 45,480) = 45,480; the excess counts for no other year ((a)(6)(ii)).
    rows = views.compliance(2024)
    table = {r["category"]: (r["rvo"], r["current_year_rins"], r["applied"], r["deficit"],
                             r["status"]) for r in rows}
    assert table == {
        "CB": (7_080, 0, 0, 7_080, "deficit_carried"),
        "BBD": (33_840, 60_000, 33_840, 0, "compliant"),
        "AB": (45_480, 60_000, 45_480, 0, "compliant"),
        "RF": (150_000, 150_000, 150_000, 0, "compliant"),
    }
    assert list(rows[0]) == [
        "party", "year", "category", "rvo", "deficit_carried_in", "current_year_rins",
        "prior_year_rins", "prior_year_applied", "applied", "deficit", "status",
    ]


def test_trace_follows_a_block_from_generation_to_retirement(views: Views) -> None:
    rows = views.trace(D4_BATCH)
    assert [(r["date"], r["event"], r["party"], r["counterparty"], r["k"], r["gallon_rins"])
            for r in rows] == [
        ("2024-01-31", "generated", "1002", None, 1, 60_000),
        ("2024-01-31", "assigned", "1002", None, 1, 60_000),
        ("2024-02-06", "transferred_out", "1002", "2001", 1, 60_000),
        ("2024-02-06", "transferred_in", "2001", "1002", 1, 60_000),
        ("2024-02-09", "separated", "2001", None, 1, 60_000),
        ("2024-03-15", "transferred_out", "2001", "3001", 2, 60_000),
        ("2024-03-15", "transferred_in", "3001", "2001", 2, 60_000),
        ("2025-03-20", "retired", "3001", None, 2, 60_000),
    ]


def test_trace_gives_the_overlapping_part(views: Views) -> None:
    # Serials 95,001-105,000 of the D6 batch, asked as K=2: 3001 retired serials 1-90,000, so
    # the retirement does not touch them; the 02-05 sale of 1-120,000 does, for all 10,000.
    # That sale came after the 02-01 split at 100,001, so it moved the daughters apart
    # (§80.1428(d)): 1-100,000 and 100,001-120,000, overlapping the asked block by 5,000 each.
    code = "22024100120001000011060009500100105000"
    rows = views.trace(code)
    events = [r["event"] for r in rows]
    assert "retired" not in events
    sale = [(r["rin"], r["gallon_rins"]) for r in rows
            if r["event"] == "transferred_out" and r["party"] == "1001"]
    assert sale == [("12024100120001000011060009500100100000", 5_000),
                    ("12024100120001000011060010000100105000", 5_000)]
    # The 02-01 split's daughters 1-100,000 and 100,001-248,738 overlap it by 5,000 each.
    assert [r["gallon_rins"] for r in rows if r["event"] == "split"] == [5_000, 5_000]


def test_market_statistics(views: Views) -> None:
    # Generated in Jan 2024: 248,738 D6 and 60,000 D4; separated in Feb: 120,000 D6 and 60,000
    # D4; retired in Mar 2025: 90,000 D6 and 60,000 D4.
    assert views.market() == [
        {"month": "2024-01", "d_code": 4, "generated": 60_000, "separated": 0, "retired": 0},
        {"month": "2024-01", "d_code": 6, "generated": 248_738, "separated": 0, "retired": 0},
        {"month": "2024-02", "d_code": 4, "generated": 0, "separated": 60_000, "retired": 0},
        {"month": "2024-02", "d_code": 6, "generated": 0, "separated": 120_000, "retired": 0},
        {"month": "2025-03", "d_code": 4, "generated": 0, "separated": 0, "retired": 60_000},
        {"month": "2025-03", "d_code": 6, "generated": 0, "separated": 0, "retired": 90_000},
    ]


def test_journal_has_one_row_per_party_event(views: Views) -> None:
    views.project()
    db = Database(views.path)
    counts = dict(db.execute("SELECT event, COUNT(*) FROM journal GROUP BY event").fetchall())
    db.close()
    # 4 registrations, 2 generations (each assigned), 1 split, 4 transfers (out + in each),
    # 2 separations, 1 obligation report, 2 retirements; no CommandRecord rows.
    assert counts == {
        "registered": 4, "generated": 2, "assigned": 2, "split": 1, "transferred_out": 4,
        "transferred_in": 4, "separated": 2, "obligation_reported": 1, "retired": 2,
    }
