"""§80.1429(b) read paragraph by paragraph: which separations count toward the (b)(7) and (b)(9)
limits, the limits from the RVO including the deficit carried in (§80.1407), the (b)(6) 80 %
condition on every (b)(2) path, the per-gallon bound of (b)(1), (b)(4) and (b)(8), and the (b)(8)
restriction on small refiners. Every expected number is computed by hand in a comment."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from markets import register_all
from test_ledger_rules import ok, refused

from ledger import Ledger
from projections import Views

PARTIES = [
    ("1001", ["producer"], ["20001"]),  # ethanol producer
    ("1002", ["producer"], ["20011"]),  # biodiesel producer
    ("2001", ["blender"], []),
    ("3001", ["obligated_party", "refiner"], []),
    ("4001", ["producer", "obligated_party", "refiner"], ["40001"]),  # refiner that produces
    ("5001", ["importer", "obligated_party"], ["50001"]),  # obligated importer, no refinery
    ("5002", ["obligated_party", "blender"], []),  # obligated by adding blendstocks only
    ("5003", ["obligated_party", "refiner"], []),  # states its RVO basis per year
    ("6001", ["small_refiner"], []),
    ("9201", ["foreign_producer"], []),  # registered, not a RIN generator (§80.1426(c)(4))
]
RVO_2024 = {"CB": 100, "BBD": 400, "AB": 1_000, "RF": 5_000}  # D6 limit 5,000 − 1,000 = 4,000


def rins(d_code: int, quantity: int, vintage: int = 2024, k: int = 1,
         company: str | None = None) -> dict[str, Any]:
    selector: dict[str, Any] = {"d_code": d_code, "vintage": vintage, "k": k,
                                "quantity": quantity}
    if company is not None:
        selector["company"] = company
    return selector


def separate(party: str, reason: str | int, selector: dict[str, Any], on: str = "2024-03-10",
             **extra: Any) -> dict[str, Any]:
    return {"type": "separate", "date": on, "party": party, "reason": reason, "rins": selector,
            **extra}


def generate(ledger: Ledger, party: str, facility: str, batch: str, fuel: str, d_code: int,
             volume: int, on: str = "2024-01-31") -> None:
    ok(ledger, type="generate", date=on, party=party, facility=facility, batch=batch, fuel=fuel,
       d_code=d_code, volume=volume)


def buy(ledger: Ledger, seller: str, buyer: str, d_code: int, quantity: int, volume: int,
        vintage: int = 2024) -> None:
    ok(ledger, type="transfer", date=f"{vintage}-02-05", **{"from": seller}, to=buyer,
       rins=rins(d_code, quantity, vintage), volume=volume)


def report(ledger: Ledger, party: str, year: int, rvo: dict[str, int], **extra: Any) -> None:
    ok(ledger, type="report_obligation", party=party, year=year, rvo=rvo, **extra)


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Ledger]:
    """The parties; 1001 makes 100,000 gal of ethanol (EV 1.0 → 100,000 D6) in Jan 2024."""
    with Ledger(tmp_path) as book:
        register_all(book, PARTIES)
        generate(book, "1001", "20001", "E0001", "ethanol", 6, 100_000)
        yield book


# --- 1. §80.1429(b)(7): only RINs the obligated party generated count -----------------------

def test_b7_rins_bought_with_fuel_do_not_use_up_the_limit_on_own_rins(ledger: Ledger) -> None:
    generate(ledger, "4001", "40001", "E0001", "ethanol", 6, 10_000)  # 10,000 own D6
    buy(ledger, "1001", "4001", 6, 5_000, 5_000)
    report(ledger, "4001", 2024, RVO_2024)
    # 5,000 bought RINs separated as obligated party: not "such RINs" of (b)(7), and 4001 is a
    # refiner, so (b)(9) does not apply either: no limit.
    ok(ledger, **separate("4001", "obligated_party", rins(6, 5_000, company="1001"),
                          volume=5_000))
    # (b)(7)(v): D6 limit = RVO_RF − RVO_AB = 5,000 − 1,000 = 4,000; own RINs so far 0, so
    # 0 + 4,000 ≤ 4,000 passes (the old code counted the 5,000 bought: 5,000 + 4,000 > 4,000).
    ok(ledger, **separate("4001", "obligated_party", rins(6, 4_000, company="4001"),
                          volume=4_000))
    refused(ledger, separate("4001", "obligated_party", rins(6, 1, company="4001"), volume=1),
            "SEP-OBLIGATED-CAP", "§80.1429(b)(7)", "rins",
            "4,000 + 1 D6 gallon-RINs separated in 2024 exceeds the limit of 4,000")


def test_b7_counts_own_rins_separated_for_replacement_too(ledger: Ledger) -> None:
    """(b)(7) limits "such RINs" however they are separated while the fuel is unblended; a
    (b)(10) separation for replacement separates own RINs of unblended fuel."""
    generate(ledger, "4001", "40001", "E0001", "ethanol", 6, 10_000)
    report(ledger, "4001", 2024, RVO_2024)
    ok(ledger, **separate("4001", "replacement", rins(6, 3_000)))
    # 3,000 + 1,001 = 4,001 > 4,000
    refused(ledger, separate("4001", "obligated_party", rins(6, 1_001), volume=1_001),
            "SEP-OBLIGATED-CAP", "§80.1429(b)(7)", "rins",
            "3,000 + 1,001 D6 gallon-RINs separated in 2024 exceeds the limit of 4,000")


# --- 2. §80.1407: the limits use the RVO including the deficit carried in -------------------

def test_b7_limit_includes_the_deficit_carried_in_from_prior_year_compliance(
    ledger: Ledger,
) -> None:
    generate(ledger, "4001", "40001", "E2023", "ethanol", 6, 2_000, on="2023-06-30")
    generate(ledger, "4001", "40001", "E0001", "ethanol", 6, 10_000)
    report(ledger, "4001", 2023, {"CB": 0, "BBD": 0, "AB": 0, "RF": 3_000})
    # 2023: D6 limit 3,000 − 0 = 3,000; 1,000 own RINs separated and retired for 2023
    ok(ledger, **separate("4001", "obligated_party", rins(6, 1_000, 2023), on="2023-07-01",
                          volume=1_000))
    ok(ledger, type="retire", date="2023-12-01", party="4001", reason="compliance",
       compliance_year=2023, rins=rins(6, 1_000, 2023, k=2))
    # D_RF,2023 = 3,000 − 1,000 = 2,000, carried into 2024 (none was carried into 2023)
    report(ledger, "4001", 2024, RVO_2024)
    # RVO_RF,2024 = 5,000 + 2,000 = 7,000; RVO_AB,2024 = 1,000 + 0 = 1,000;
    # (b)(7)(v) D6 limit = 7,000 − 1,000 = 6,000 (the old code used 5,000 − 1,000 = 4,000)
    ok(ledger, **separate("4001", "obligated_party", rins(6, 6_000, company="4001"),
                          volume=6_000))
    refused(ledger, separate("4001", "obligated_party", rins(6, 1), volume=1),
            "SEP-OBLIGATED-CAP", "§80.1429(b)(7)", "rins",
            "6,000 + 1 D6 gallon-RINs separated in 2024 exceeds the limit of 6,000")
    rf = next(r for r in Views(ledger).compliance(2024, "4001") if r["category"] == "RF")
    assert (rf["rvo"], rf["deficit_carried_in"]) == (7_000, 2_000)  # the same RVO as the limit


def test_b9_limit_includes_the_deficit_and_a_year_with_only_a_carried_deficit(
    ledger: Ledger,
) -> None:
    buy(ledger, "1001", "5001", 6, 10_000, 10_000)
    report(ledger, "5001", 2023, {"CB": 0, "BBD": 0, "AB": 0, "RF": 2_500})
    # nothing retired for 2023: D_RF,2023 = 2,500 − 0 = 2,500 carried; no 2024 report yet, so
    # RVO_RF,2024 = 0 + 2,500 and (b)(9)(v) D6 limit = 2,500 − 0 = 2,500 (old: no RVO → 0)
    ok(ledger, **separate("5001", "obligated_party", rins(6, 2_500), volume=2_500))
    refused(ledger, separate("5001", "obligated_party", rins(6, 1), volume=1),
            "SEP-IMPORTER-CAP", "§80.1429(b)(9)", "rins",
            "2,500 + 1 D6 gallon-RINs separated in 2024 exceeds the limit of 2,500")


# --- 3. §80.1429(b)(6): every (b)(2) path, whatever form the reason takes -------------------

@pytest.mark.parametrize("reason", ["heating_oil_jet", 60, "60", "nonroad", 70, "070",
                                    "upstream_delegation", 40, "blending", 20])
def test_b6_binds_every_reason_resting_on_b2(ledger: Ledger, reason: str | int) -> None:
    generate(ledger, "1002", "20011", "B0001", "biodiesel", 4, 40_000)  # × 1.5 = 60,000 D4
    buy(ledger, "1002", "2001", 4, 60_000, 40_000)
    cmd = separate("2001", reason, rins(4, 60_000), volume=40_000)
    refused(ledger, {**cmd, "blend_percent": 100}, "SEP-BIODIESEL-80", "§80.1429(b)(6)",
            "blend_percent", "biodiesel blended at 100% is above 80 volume per cent")
    refused(ledger, cmd, "SEP-BIODIESEL-80", "§80.1429(b)(6)", "blend_percent",
            "biodiesel RINs separated on blending need blend_percent")
    ok(ledger, **cmd, blend_percent=80)  # 80 volume per cent or less


# --- 4. §80.1429(b)(1): the RINs separated are those assigned to the volume owned ----------

def test_b1_rins_separated_are_bounded_by_the_volume_named(ledger: Ledger) -> None:
    buy(ledger, "1001", "3001", 6, 10_000, 10_000)
    refused(ledger, separate("3001", "obligated_party", rins(6, 10_000), volume=3_000),
            "SEP-OBLIGATED-PER-GALLON", "§80.1429(b)(1)", "volume",
            "10,000 gallon-RINs separated for 3,000 gallons is more than 2.5 per gallon")
    # 2.5 × 3,000 = 7,500 gallon-RINs at most can be assigned to 3,000 gallons
    ok(ledger, **separate("3001", "obligated_party", rins(6, 7_500), volume=3_000))


# --- 5. §80.1429(b)(4), (b)(8): the paragraph that refuses is cited -------------------------

@pytest.mark.parametrize(
    ("party", "reason", "rule_id", "citation"),
    [
        ("2001", "neat_use", "SEP-NEAT-PER-GALLON", "§80.1429(b)(4)"),
        ("2001", 30, "SEP-NEAT-PER-GALLON", "§80.1429(b)(4)"),
        ("2001", "designated_heating_oil_jet", "SEP-NEAT-PER-GALLON", "§80.1429(b)(4)"),
        ("2001", 80, "SEP-NEAT-PER-GALLON", "§80.1429(b)(4)"),
        ("6001", "small_refiner", "SEP-SMALL-REFINER-PER-GALLON", "§80.1429(b)(8)"),
    ],
)
def test_b4_and_b8_over_the_limit_cite_their_own_paragraph(
    ledger: Ledger, party: str, reason: str | int, rule_id: str, citation: str
) -> None:
    buy(ledger, "1001", party, 6, 10_000, 10_000)
    refused(ledger, separate(party, reason, rins(6, 2_501), volume=1_000), rule_id, citation,
            "volume", "2,501 gallon-RINs separated for 1,000 gallons is more than 2.5 per gallon")
    ok(ledger, **separate(party, reason, rins(6, 2_500), volume=1_000))  # 2.5 × 1,000


# --- 6. §80.1429(b)(9): every party it names, every separation it does not except ----------

def test_b9_caps_a_party_obligated_only_by_adding_blendstocks(ledger: Ledger) -> None:
    buy(ledger, "1001", "5002", 6, 10_000, 10_000)
    report(ledger, "5002", 2024, {"CB": 0, "BBD": 0, "AB": 500, "RF": 2_000})
    # (b)(9)(v): 2,000 − 500 = 1,500
    ok(ledger, **separate("5002", "obligated_party", rins(6, 1_500), volume=1_500))
    refused(ledger, separate("5002", "obligated_party", rins(6, 1), volume=1),
            "SEP-IMPORTER-CAP", "§80.1429(b)(9)", "rins",
            "1,500 + 1 D6 gallon-RINs separated in 2024 exceeds the limit of 1,500")


def test_b9_caps_a_party_whose_rvo_is_incurred_under_80_1408(ledger: Ledger) -> None:
    buy(ledger, "1001", "5003", 6, 10_000, 10_000)
    report(ledger, "5003", 2024, {"CB": 0, "BBD": 0, "AB": 500, "RF": 2_000},
           basis=["s80_1408"])
    refused(ledger, separate("5003", "obligated_party", rins(6, 1_501), volume=1_501),
            "SEP-IMPORTER-CAP", "§80.1429(b)(9)", "rins",
            "0 + 1,501 D6 gallon-RINs separated in 2024 exceeds the limit of 1,500")
    # a refiner whose RVO also arises from refining is not "solely" a (b)(9) party
    report(ledger, "5003", 2024, {"CB": 0, "BBD": 0, "AB": 500, "RF": 2_000},
           basis=["refining", "s80_1408"])
    ok(ledger, **separate("5003", "obligated_party", rins(6, 1_501), volume=1_501))


def test_b9_counts_b10_separations_and_excepts_b2_to_b5(ledger: Ledger) -> None:
    # 5,000 own D6, imported from a registered foreign producer (§80.1426(c)(4))
    ok(ledger, type="generate", date="2024-01-31", party="5001", facility="50001",
       batch="I0001", fuel="ethanol", d_code=6, volume=5_000, foreign_producer="9201")
    buy(ledger, "1001", "5001", 6, 10_000, 10_000)
    report(ledger, "5001", 2024, {"CB": 0, "BBD": 0, "AB": 500, "RF": 2_000})
    # (b)(2) blending is excepted from (b)(9): 3,000 separated, none counted
    ok(ledger, **separate("5001", "blending", rins(6, 3_000, company="1001"), volume=3_000))
    ok(ledger, **separate("5001", "obligated_party", rins(6, 1_000, company="1001"),
                          volume=1_000))
    # (b)(10) is not excepted: 1,000 (b)(1) + 501 (b)(10) = 1,501 > 1,500. (Its own RINs under
    # (b)(7): 0 + 501 ≤ 1,500, so (b)(9) is the paragraph that refuses.)
    refused(ledger, separate("5001", "replacement", rins(6, 501, company="5001")),
            "SEP-IMPORTER-CAP", "§80.1429(b)(9)", "rins",
            "1,000 + 501 D6 gallon-RINs separated in 2024 exceeds the limit of 1,500")
    ok(ledger, **separate("5001", "replacement", rins(6, 500, company="5001")))


# --- §80.1429(b)(8): a small refiner separates only for fuel it blends or uses ------------

def test_b8_small_refiner_may_not_separate_for_export(ledger: Ledger) -> None:
    buy(ledger, "1001", "6001", 6, 10_000, 10_000)
    refused(ledger, separate("6001", "export", rins(6, 1_000), volume=1_000),
            "SEP-SMALL-REFINER", "§80.1429(b)(8)", "reason",
            "a small refiner separates only RINs of fuel it blends or uses as transportation "
            "fuel, heating oil or jet fuel, not for export")
    ok(ledger, **separate("6001", "blending", rins(6, 1_000), volume=1_000))
    ok(ledger, **separate("6001", "neat_use", rins(6, 1_000), volume=1_000))


# --- §80.1429(b): a separation command rests on one of (b)(1)-(b)(10) ---------------------

@pytest.mark.parametrize("reason", ["delayed", 90, "090"])
def test_delayed_rin_reason_cannot_separate_rins_past_every_b_condition(
    ledger: Ledger, reason: str | int
) -> None:
    """Delayed RINs (EMTS 90) are separated by their generation (§80.1426(g)); a blender naming
    that reason separated 1,000 K=1 RINs with no volume and kept its fuel."""
    buy(ledger, "1001", "2001", 6, 1_000, 1_000)
    refused(ledger, separate("2001", reason, rins(6, 1_000)), "EMTS-SEPARATION-REASON",
            "§80.1429(b)", "reason",
            "delayed RINs (EMTS 90) are separated only as they are generated (§80.1426(g)); a "
            "separation rests on one of §80.1429(b)(1)-(b)(10)")


@pytest.mark.parametrize("reason", [30, "30", "030"])
def test_code_30_for_biogas_rins_rests_on_b5(ledger: Ledger, reason: str | int) -> None:
    """EMTS 30 names (b)(4) and (b)(5) alike; for RINs generated for biogas it is (b)(5), which
    governs biogas and electricity ((b)(4) is neat renewable fuel or a blend with diesel)."""
    ok(ledger, type="register_party", party="1008", name="Landfill", roles=["producer"],
       facilities=["20081"])
    # 77,000,000 Btu ÷ 77,000 Btu per gallon-RIN = 1,000 D3 gallon-RINs
    ok(ledger, type="generate", date="2024-01-31", party="1008", facility="20081", batch="G0001",
       fuel="biogas", d_code=3, btu=77_000_000)
    ok(ledger, **separate("1008", reason, rins(3, 1_000), volume=1_000))
    stored = list(ledger.log.history(ledger.party("1008").id))
    separated = stored[-1]
    assert (separated.reason, separated.paragraph, separated.reason_code) == (
        "biogas_electricity", "§80.1429(b)(5)", 30)
    # the word still names (b)(4), and ethanol RINs given code 30 stay (b)(4)
    buy(ledger, "1001", "2001", 6, 1_000, 1_000)
    ok(ledger, **separate("2001", reason, rins(6, 1_000), volume=1_000))
    assert list(ledger.log.history(ledger.party("2001").id))[-1].paragraph == "§80.1429(b)(4)"


@pytest.mark.parametrize(
    ("party", "reason", "rule_id", "citation"),
    [
        ("3001", "obligated_party", "SEP-OBLIGATED-PER-GALLON", "§80.1429(b)(1)"),
        ("2001", "blending", "SEP-BLEND-PER-GALLON", "§80.1429(b)(2)"),
        ("2001", 60, "SEP-BLEND-PER-GALLON", "§80.1429(b)(2)"),
        ("2001", "export", "SEP-EXPORT-PER-GALLON", "§80.1429(b)(3)"),
        ("2001", "neat_use", "SEP-NEAT-PER-GALLON", "§80.1429(b)(4)"),
        ("2001", "biogas_electricity", "SEP-BIOGAS", "§80.1429(b)(5)"),
        ("6001", "small_refiner", "SEP-SMALL-REFINER-PER-GALLON", "§80.1429(b)(8)"),
    ],
)
def test_a_separation_without_its_volume_is_refused_by_its_own_paragraph(
    ledger: Ledger, party: str, reason: str | int, rule_id: str, citation: str
) -> None:
    """Each of (b)(1)-(b)(5) and (b)(8) rests on a volume owned, blended, exported or used; the
    paragraph the reason rests on refuses a separation that names none (not "§80.1429(b)")."""
    buy(ledger, "1001", party, 6, 1_000, 1_000)
    word = {60: "heating_oil_jet"}.get(reason, reason)
    refused(ledger, separate(party, reason, rins(6, 1_000)), rule_id, citation, "volume",
            f"separation for {word} needs the volume of fuel")
