"""Paragraphs the coverage map (docs/coverage.md) found met by the code but broken by no test:
each case here breaks one on purpose, with the expected figures worked from the text."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from markets import ok, register_all

from ledger import Ledger, Result
from ledger.rules.s1426.generation import GenerationInput, compute_generation

PARTIES = [
    ("1001", ["producer"], ["20001"]),
    ("1002", ["producer"], ["20011"]),
    ("2001", ["blender"], []),
    ("3001", ["obligated_party"], []),
    ("7001", ["exporter"], []),
]


def apply(ledger: Ledger, **cmd: Any) -> Result:
    return ledger.apply(cmd)


def rins(d_code: int, k: int, quantity: int, vintage: int = 2024) -> dict[str, int]:
    return {"d_code": d_code, "vintage": vintage, "k": k, "quantity": quantity}


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Ledger]:
    """1001 made 10,000 gal of ethanol (10,000 D6 gallon-RINs), 1002 40,000 gal of biodiesel
    (EV 1.5: 60,000 D4 gallon-RINs), both on 31 January 2024."""
    with Ledger(tmp_path) as book:
        register_all(book, PARTIES)
        ok(book, type="generate", date="2024-01-31", party="1001", facility="20001",
           batch="E0001", fuel="ethanol", d_code=6, volume=10_000)
        ok(book, type="generate", date="2024-01-31", party="1002", facility="20011",
           batch="B0001", fuel="biodiesel", d_code=4, volume=40_000)
        yield book


def test_a_rin_retired_for_one_year_cannot_be_retired_for_another(ledger: Ledger) -> None:
    """§80.1427(a)(6)(ii): the 4,000 gallon-RINs retired for 2024 are gone for 2025."""
    ok(ledger, type="transfer", date="2024-02-05", **{"from": "1001"}, to="3001",
       rins=rins(6, 1, 4_000), volume=4_000)
    ok(ledger, type="separate", date="2024-02-05", party="3001", reason="obligated_party",
       rins=rins(6, 1, 4_000), volume=4_000)
    code = ledger.blocks("3001")[0]["rin"]
    ok(ledger, type="retire", date="2025-01-15", party="3001", reason="compliance",
       rins={"code": code}, compliance_year=2024)
    again = apply(ledger, type="retire", date="2025-01-16", party="3001", reason="compliance",
                  rins={"code": code}, compliance_year=2025)
    assert (again.status, again.rule) == ("rejected", "RINS-NOT-HELD")


def test_an_exporter_is_held_to_the_retirement_checks_of_c2(ledger: Ledger) -> None:
    """§80.1427(c)(2): (a)(8) binds an exporter too; K=1 RINs are refused, K=2 accepted."""
    ok(ledger, type="transfer", date="2024-02-05", **{"from": "1001"}, to="7001",
       rins=rins(6, 1, 2_000), volume=2_000)
    assigned = apply(ledger, type="retire", date="2024-03-01", party="7001",
                     reason="compliance", rins=rins(6, 1, 1_000), compliance_year=2024)
    assert (assigned.status, assigned.rule) == ("rejected", "CMP-K2")
    ok(ledger, type="separate", date="2024-02-06", party="7001", reason="export",
       rins=rins(6, 1, 1_000), volume=1_000)
    ok(ledger, type="retire", date="2024-03-01", party="7001", reason="compliance",
       rins=rins(6, 2, 1_000), compliance_year=2024)
    # (a)(6)(i) too: 2024 RINs do not count for 2026
    ok(ledger, type="separate", date="2024-02-06", party="7001", reason="export",
       rins=rins(6, 1, 1_000), volume=1_000)
    late = apply(ledger, type="retire", date="2026-03-01", party="7001", reason="compliance",
                 rins=rins(6, 2, 1_000), compliance_year=2026)
    assert (late.status, late.rule) == ("rejected", "CMP-VINTAGE")


def test_neat_biodiesel_separates_without_the_80_percent_condition(ledger: Ledger) -> None:
    """§80.1429(b)(6)(ii): B100 designated and used neat separates with no blend_percent, where
    blending it at 100 % is refused under (b)(6)."""
    ok(ledger, type="transfer", date="2024-02-05", **{"from": "1002"}, to="2001",
       rins=rins(4, 1, 15_000), volume=10_000)
    blended = apply(ledger, type="separate", date="2024-02-10", party="2001",
                    reason="blending", rins=rins(4, 1, 1_500), volume=1_000,
                    blend_percent=100)
    assert (blended.status, blended.rule) == ("rejected", "SEP-BIODIESEL-80")
    ok(ledger, type="separate", date="2024-02-10", party="2001", reason="neat_use",
       rins=rins(4, 1, 1_500), volume=1_000)
    assert ledger.party("2001").holdings.totals() == {(4, 2024, 2): 1_500, (4, 2024, 1): 13_500}


def test_co_fired_electricity_earns_rins_for_its_renewable_portion_only() -> None:
    """§80.1426(f)(10)(iii), (f)(11)(iii) by (f)(4): 226,000 kWh / 22.6 = 10,000 gallons at EV
    1.0; with R = 0.6 renewable, 10,000 × 0.6 = 6,000 gallon-RINs."""
    batch = {"fuel": "electricity", "d_code": 3, "kwh": 226_000}
    whole = compute_generation(GenerationInput.model_validate(batch))
    co_fired = {**batch, "renewable_fraction": "0.6", "renewable_fraction_method": "B"}
    part = compute_generation(GenerationInput.model_validate(co_fired))
    assert [y.gallon_rins for y in whole] == [10_000]
    assert [(y.gallon_rins, y.paragraph) for y in part] == [(6_000, "§80.1426(f)(4)(i)(B)")]
