"""The small market `rin demo` applies: a year of it, generation through compliance retirement.

Nine parties over 2024: an ethanol, a biodiesel and a biogas producer, an importer of renewable
diesel and the registered foreign producer it buys from (§80.1426(c)(4)), a blender, an
exporter and two obligated refiners. Every line is valid; the figures are chosen so one refiner
ends 2024 short on its cellulosic obligation (a deficit it may carry). After its compliance
season, in 2025, 3001 trades in EMTS (§80.1452): a sell and a buy that complete, a sell the buyer
denies, and a sell nobody answers, which expires.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from typing import Any

PARTIES = [
    ("1001", "Prairie Ethanol LLC", ["producer"], ["20001"]),
    ("1002", "Coastal Biodiesel Inc", ["producer"], ["20011"]),
    ("1003", "Valley Biogas Co", ["producer"], ["20021"]),
    ("1101", "Harbor Fuel Imports", ["importer"], ["20101"]),
    ("1901", "Pacific Renewable Diesel Pte", ["foreign_producer"], []),
    ("2001", "Gulf Terminal Blending", ["blender"], []),
    ("2501", "Atlantic Renewable Export", ["exporter"], []),
    ("3001", "Lakeside Refining Co", ["obligated_party", "refiner"], []),
    ("3002", "Summit Petroleum", ["obligated_party", "refiner"], []),
]
# 500,000 gal at 68 °F: Vs = 500,000 × (−0.0006301 × 68 + 1.0378) = 497,476.6 → 497,477 RINs
ETHANOL_RINS, ETHANOL_VS = 497_477, "497476.6"


def small_market() -> Iterator[dict[str, Any]]:
    """The demo's transaction-file lines, in order."""
    for party, name, roles, facilities in PARTIES:
        yield {"type": "register_party", "id": f"reg-{party}", "party": party, "name": name,
               "roles": roles, "facilities": facilities}
    for month in range(1, 13):
        yield from month_lines(month)
    yield from year_end_lines()
    yield from emts_lines()


def month_lines(month: int) -> Iterator[dict[str, Any]]:
    """One month: generation, assigned transfers with fuel, separation, separated trades."""

    def day(of_month: int) -> str:
        return date(2024, month, of_month).isoformat()

    tag = f"2024{month:02d}"
    b = f"{month:05d}"
    yield {"type": "generate", "id": f"gen-1001-{tag}", "date": day(10), "party": "1001",
           "facility": "20001", "batch": b, "fuel": "ethanol", "d_code": 6,
           "measured_volume": 500000, "temperature_f": 68,
           "production_start": day(1), "production_end": day(10)}
    yield {"type": "generate", "id": f"gen-1002-{tag}", "date": day(10), "party": "1002",
           "facility": "20011", "batch": b, "fuel": "biodiesel", "d_code": 4, "volume": 100000}
    # 1,540,000,000 Btu of renewable CNG ÷ 77,000 Btu per gallon-RIN = 20,000 D3 RINs
    yield {"type": "generate", "id": f"gen-1003-{tag}", "date": day(10), "party": "1003",
           "facility": "20021", "batch": b, "fuel": "biogas", "d_code": 3, "btu": 1540000000}
    # 50,000 gal of imported renewable diesel × EV 1.7 = 85,000 D4 RINs
    yield {"type": "generate", "id": f"gen-1101-{tag}", "date": day(10), "party": "1101",
           "facility": "20101", "batch": b, "fuel": "renewable_diesel", "d_code": 4,
           "volume": 50000, "foreign_producer": "1901"}
    if month == 1:
        yield {"type": "split", "id": "split-1001-202401", "date": day(11), "party": "1001",
               "rin": f"12024100120001{b}1060000000100497477", "sizes": [200000, 297477]}
    yield {"type": "transfer", "id": f"t-1001-2001-{tag}", "date": day(15), "from": "1001",
           "to": "2001", "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": ETHANOL_RINS},
           "volume": ETHANOL_VS, "ptd": f"PTD-E-{tag}"}
    yield {"type": "transfer", "id": f"t-1002-2001-{tag}", "date": day(15), "from": "1002",
           "to": "2001", "rins": {"d_code": 4, "vintage": 2024, "k": 1, "quantity": 150000},
           "volume": 100000, "ptd": f"PTD-B-{tag}"}
    yield {"type": "transfer", "id": f"t-1101-2501-{tag}", "date": day(15), "from": "1101",
           "to": "2501", "rins": {"d_code": 4, "vintage": 2024, "k": 1, "quantity": 85000},
           "volume": 50000, "ptd": f"PTD-R-{tag}"}
    yield {"type": "separate", "id": f"s-2001-e-{tag}", "date": day(20), "party": "2001",
           "reason": "blending", "rins": {"d_code": 6, "vintage": 2024, "k": 1,
                                          "quantity": ETHANOL_RINS}, "volume": ETHANOL_VS}
    yield {"type": "separate", "id": f"s-2001-b-{tag}", "date": day(20), "party": "2001",
           "reason": "blending", "rins": {"d_code": 4, "vintage": 2024, "k": 1, "quantity": 150000},
           "volume": 100000, "blend_percent": 20}
    if month > 1:  # the exporter ships each cargo early the next month
        yield export_line(month - 1, day(5))
    yield {"type": "separate", "id": f"s-1003-{tag}", "date": day(20), "party": "1003",
           "reason": "biogas_electricity",
           "rins": {"d_code": 3, "vintage": 2024, "k": 1, "quantity": 20000}, "volume": 20000}
    if month == 9:
        # 20,000 gal of biodiesel → 30,000 D4 RINs; the fuel is sold without them, so on
        # 30 September 1002 owns 30,000 assigned RINs and no fuel (§80.1428(a)(5) excess)
        yield {"type": "generate", "id": "gen-1002-2024-late", "date": day(28), "party": "1002",
               "facility": "20011", "batch": "00913", "fuel": "biodiesel", "d_code": 4,
               "volume": 20000}
        yield {"type": "transfer_fuel", "id": "f-1002-2001-2024-late", "date": day(29),
               "from": "1002", "to": "2001", "volume": 20000}
    sellers = (
        ("2001", "3001", 6, 300000), ("2001", "3002", 6, ETHANOL_RINS - 300000),
        ("2001", "3001", 4, 120000), ("2001", "3002", 4, 30000),
        ("1003", "3001", 3, 10000), ("1003", "3002", 3, 10000),
    ) + ((("2501", "3002", 4, 42500),) if month > 1 else ())
    for seller, buyer, d_code, quantity in sellers:
        yield {"type": "transfer", "id": f"t-{seller}-{buyer}-d{d_code}-{tag}", "date": day(25),
               "from": seller, "to": buyer, "price": "0.85" if d_code == 6 else "1.10",
               "rins": {"d_code": d_code, "vintage": 2024, "k": 2, "quantity": quantity}}


def export_line(month: int, on: str) -> dict[str, Any]:
    """The exporter separates a month's 85,000 D4 RINs on exporting its 50,000 gallons."""
    return {"type": "separate", "id": f"s-2501-2024{month:02d}", "date": on, "party": "2501",
            "reason": "export", "rins": {"d_code": 4, "vintage": 2024, "k": 1, "quantity": 85000},
            "volume": 50000}


def year_end_lines() -> Iterator[dict[str, Any]]:
    """December's export, 2024 obligations and the compliance retirements of March 2025."""
    yield export_line(12, "2025-01-05")
    yield {"type": "transfer", "id": "t-2501-3002-d4-202501", "date": "2025-01-06",
           "from": "2501", "to": "3002", "price": "1.10",
           "rins": {"d_code": 4, "vintage": 2024, "k": 2, "quantity": 42500}}
    # 3001: GV + DV = 36,000,000 → CB 212,400; BBD 1,015,200; AB 1,364,400; RF 4,500,000
    yield {"type": "report_obligation", "id": "o-3001-2024", "party": "3001", "year": 2024,
           "gasoline_volume": 28000000, "diesel_volume": 8000000}
    # 3002: GV + DV = 20,000,000 → CB 118,000; BBD 564,000; AB 758,000; RF 2,500,000
    yield {"type": "report_obligation", "id": "o-3002-2024", "party": "3002", "year": 2024,
           "gasoline_volume": 15000000, "diesel_volume": 5000000}
    yield {"type": "report_obligation", "id": "o-2501-2024", "party": "2501", "year": 2024,
           "rvo": {"BBD": 510000, "AB": 510000, "RF": 510000}}
    retire = [
        ("3001", 3, 120000), ("3001", 4, 1440000), ("3001", 6, 2940000),
        ("3002", 3, 120000), ("3002", 4, 870000), ("3002", 6, 1600000),
        ("2501", 4, 510000),
    ]
    for party, d_code, quantity in retire:
        yield {"type": "retire", "id": f"r-{party}-d{d_code}-2024", "date": "2025-03-20",
               "party": party, "reason": "compliance", "compliance_year": 2024,
               "rins": {"d_code": d_code, "vintage": 2024, "k": 2, "quantity": quantity}}
    yield {"type": "retire", "id": "r-3002-spill", "date": "2025-01-08", "party": "3002",
           "reason": "spill", "rins": {"d_code": 6, "vintage": 2024, "k": 2, "quantity": 5000}}



def emts_lines() -> Iterator[dict[str, Any]]:
    """3001's EMTS postings of spring 2025 (§80.1452), from the 660,000 separated D6 RINs it
    kept (12 × 300,000 bought − 2,940,000 retired): one of each way a posting ends but
    cancelling."""
    def rins(quantity: int) -> dict[str, int]:
        return {"d_code": 6, "vintage": 2024, "k": 2, "quantity": quantity}

    # a two-sided trade: the buy answers the sell, and the 100,000 RINs move on 1 April
    yield {"type": "sell", "id": "sell-0401", "date": "2025-04-01", "party": "3001",
           "to": "2001", "rins": rins(100000), "price": "0.90"}
    yield {"type": "buy", "id": "buy-0401", "date": "2025-04-01", "party": "2001",
           "from": "3001", "rins": rins(100000), "price": "0.90",
           "match": "sell-0401"}
    # a denial (EMTS 050): 3002 refuses what it was offered; the reservation is released
    yield {"type": "sell", "id": "sell-0402", "date": "2025-04-02", "party": "3001",
           "to": "3002", "rins": rins(50000), "price": "0.95"}
    yield {"type": "deny_trade", "id": "deny-0403", "date": "2025-04-03", "party": "3002",
           "trade": "sell-0402"}
    # an expiry: posted on Tuesday 20 May; Memorial Day (26 May) and two weekends are not
    # business days, so on 4 June it has waited exactly 10 and on 5 June, 11, more than the window
    yield {"type": "sell", "id": "sell-0520", "date": "2025-05-20", "party": "3001",
           "to": "2001", "rins": rins(25000), "price": "0.92"}
    yield {"type": "expire_trades", "id": "expire-0605", "date": "2025-06-05"}
