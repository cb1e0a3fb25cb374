"""How many gallon-RINs a batch earns (§80.1426(f), EVs by §80.1415) and who may generate them.

Rounding rule: a batch's gallon-RIN count V_RIN is rounded once, per D code, to the nearest whole
gallon-RIN, halves up (ROUND_HALF_UP: 98,739.5 → 98,740, 98,739.49 → 98,739), after the exact
formula. The arithmetic is exact: every Decimal input becomes a Fraction and nothing is rounded
before V_RIN. The standardized volume is kept unrounded as a Decimal; only when it is a quotient
that never terminates (Btu / 77,000, kWh / 22.6, a feedstock's share) is it carried to 28
significant digits, which never changes a gallon-RIN count because those come from the Fraction.

Party, facility, batch number and dates of record are the aggregate's; this module is pure.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal
from fractions import Fraction
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from ledger.domain.fuels import BTU_PER_GALLON, KWH_PER_GALLON, Fuel, round_half_up, rr
from ledger.domain.strict_types import AmountText, Flag, Integer, IsoDate, Text
from ledger.rules.catalogue import Rule
from ledger.rules.s1415_equivalence import equivalence_value
from ledger.rules.s1425_rin import D_CODES, MAX_SERIAL

GEN_OTHER_PARTY_FUEL = Rule(
    "GEN-OTHER-PARTY-FUEL", "§80.1426(c)(6)",
    "no RINs for fuel made from renewable fuel that another party produced",
)
GEN_BIOINTERMEDIATE = Rule(
    "GEN-BIOINTERMEDIATE", "§80.1426(c)(8)", "no RINs are generated for a biointermediate",
)
GEN_SMALL_PRODUCER = Rule(
    "GEN-SMALL-PRODUCER", "§80.1426(c)(2)",
    "only a producer or importer of less than 10,000 gallons a year may skip generating RINs",
)
GEN_NEW_PRODUCER = Rule(
    "GEN-NEW-PRODUCER", "§80.1426(c)(3)",
    "a new facility may skip generating RINs in its first three calendar years only below "
    "125,000 gallons a year",
)
GEN_NEW_FACILITY_YEAR = Rule(
    "GEN-NEW-FACILITY-YEAR", "§80.1426(c)(3)(i)",
    "a new facility's calendar years count from the year it produced its first gallon",
)
GEN_BATCH_MAX = Rule(
    "GEN-BATCH-MAX", "§80.1426(d)(1)(i)", "a batch has at most 99,999,999 gallon-RINs",
)
GEN_BATCH_MONTH = Rule(
    "GEN-BATCH-MONTH", "§80.1426(d)(1)(ii)",
    "a batch covers production of at most one calendar month, start on or before end",
)
GEN_HEATING_OIL_AFFIDAVIT = Rule(
    "GEN-HEATING-OIL-AFFIDAVIT", "§80.1426(c)(7)",
    "RINs for renewable fuel oil used as heating oil need the end users' affidavits",
)
GEN_BATCH_EMPTY = Rule(
    "GEN-BATCH-EMPTY", "§80.1426(d)(2)",
    "a batch has at least one gallon-RIN: serials run from 00000001 to V_RIN",
)
GEN_YARD_CELLULOSIC = Rule(
    "GEN-YARD-CELLULOSIC", "§80.1426(f)(5)(i)(A)",
    "fuel from separated yard waste is cellulosic: D code 3 or 7",
)
GEN_FOOD_NONCELLULOSIC = Rule(
    "GEN-FOOD-NONCELLULOSIC", "§80.1426(f)(5)(i)(B)",
    "separated food waste is deemed non-cellulosic: its fuel earns no D3 or D7 RINs",
)
GEN_R_METHOD_C = Rule(
    "GEN-R-METHOD-C", "§80.1426(f)(4)(iv)(B)",
    "ASTM D6866 method C only measures renewable content of 10 percent or more",
)
GEN_SEPARATED_OIL = Rule(
    "GEN-SEPARATED-OIL", "§80.1426(f)(1)(v)(A)",
    "oil physically separated from woody or herbaceous biomass generates no D3 or D7 RINs",
)
GEN_SEPARATED_SUGAR = Rule(
    "GEN-SEPARATED-SUGAR", "§80.1426(f)(1)(v)(B)",
    "sugar or starch physically separated from cellulosic biomass generates no D3 or D7 RINs",
)
GEN_MSW = Rule(
    "GEN-MSW", "§80.1426(f)(5)(v)",
    "separated MSW earns cellulosic RINs (D3 or D7) for its cellulosic portion R: EV × Vs × R",
)
GEN_EXEMPT_D6 = Rule(
    "GEN-EXEMPT-D6", "§80.1426(f)(6)(ii)",
    "fuel exempt from the 20 % GHG reduction earns D code 6 RINs",
)
GEN_FEEDSTOCK_E = Rule(
    "GEN-FEEDSTOCK-E", "§80.1426(f)(7)(iv)",
    "a feedstock's heating value E is its (f)(7)(vi) default or the producer's measured value",
)
GEN_STANDARDIZE = Rule(
    "GEN-STANDARDIZE", "§80.1426(f)(8)(iii)",
    "only ethanol and biodiesel are standardized here; other fuels give their 60 °F volume",
)
GEN_DELAYED_WINDOW = Rule(
    "GEN-DELAYED-WINDOW", "§80.1426(g)(3)",
    "delayed RINs are for fuel produced from 1 July 2010 until the earlier of the pathway's "
    "effective date and 31 December 2011",
)
GEN_DELAYED_DEADLINE = Rule(
    "GEN-DELAYED-DEADLINE", "§80.1426(g)(4)",
    "delayed RINs are generated no later than 60 days after the pathway's effective date",
)
GEN_TEMPERATURE = Rule(
    "GEN-TEMPERATURE", "§80.1426(f)(8)",
    "a measured temperature lies within -58 °F to 302 °F, the range of the API volume-correction "
    "tables ((f)(8)(ii)(B)) that the (f)(8) correlations stand for",
)
RULES = (
    GEN_OTHER_PARTY_FUEL, GEN_BIOINTERMEDIATE, GEN_SMALL_PRODUCER, GEN_NEW_PRODUCER,
    GEN_NEW_FACILITY_YEAR, GEN_BATCH_MAX, GEN_BATCH_MONTH, GEN_HEATING_OIL_AFFIDAVIT,
    GEN_BATCH_EMPTY, GEN_YARD_CELLULOSIC, GEN_FOOD_NONCELLULOSIC, GEN_R_METHOD_C, GEN_SEPARATED_OIL,
    GEN_SEPARATED_SUGAR, GEN_MSW, GEN_EXEMPT_D6, GEN_FEEDSTOCK_E, GEN_STANDARDIZE,
    GEN_DELAYED_WINDOW, GEN_DELAYED_DEADLINE, GEN_TEMPERATURE,
)

CELLULOSIC_D_CODES = frozenset({3, 7})
METHOD_C_MINIMUM = Decimal("0.10")  # (f)(4)(iv)(B): method C needs 10 percent renewable or more
SMALL_PRODUCER_GALLONS = Decimal(10_000)
NEW_PRODUCER_GALLONS = Decimal(125_000)
NEW_FACILITY_YEARS = 3
DELAYED_PREFIX = "DRN"
DELAYED_FIRST_DAY = date(2010, 7, 1)
DELAYED_LAST_DAY = date(2011, 12, 31)
DELAYED_DEADLINE = timedelta(days=60)

SEPARATED_OILS = frozenset({"vegetable_oil"})
SEPARATED_SUGARS = frozenset({"sugar", "starch"})
"""Feedstock types (f)(1)(v) keeps from D3 and D7: plant oil, sugar and starch are separated
from the biomass they came from, and a biointermediate counts as its biomass save for these."""

DEFAULT_HEATING_VALUE: dict[str, Decimal] = {
    name: Decimal(btu_per_lb)
    for name, btu_per_lb in {
        "starch": 7_600,
        "sugar": 7_300,
        "vegetable_oil": 17_000,
        "waste_cooking_oil": 16_600,
        "tallow": 16_200,
        "manure": 6_900,
        "woody_biomass": 8_400,
        "herbaceous_biomass": 7_300,
        "yard_waste": 2_900,
        "biogas": 11_000,
        "food_waste": 2_000,
        "paper": 7_200,
        "crude_oil": 19_100,
        "coal_bituminous": 12_200,
        "coal_anthracite": 13_300,
        "coal_lignite": 7_900,
        "natural_gas": 19_700,
        "tires": 16_000,
        "plastic": 19_000,
    }.items()
}
"""Default heating values E in Btu/lb, dry basis, by feedstock type (§80.1426(f)(7)(vi))."""

# Vs = Va × (slope × T + intercept), T in °F: (f)(8)(i) ethanol, (f)(8)(ii)(A) biodiesel.
_TEMPERATURE_FACTORS: dict[Fuel, tuple[Decimal, Decimal]] = {
    Fuel.ETHANOL: (Decimal("-0.0006301"), Decimal("1.0378")),
    Fuel.BIODIESEL: (Decimal("-0.00045767"), Decimal("1.02746025")),
}


def _d_code(value: int) -> int:
    if value not in D_CODES:
        raise ValueError(f"D code must be one of 3, 4, 5, 6, 7, got {value}")
    return value


DCode = Annotated[Integer, AfterValidator(_d_code)]
# Digit limits keep exact arithmetic cheap on hostile input. The bound is far beyond any real
# batch: the most a batch may hold, 99,999,999 gallon-RINs (§80.1426(d)(1)(i)), is 7.7 × 10^12
# Btu of biogas at 77,000 Btu each (§80.1415(b)(5)).
Positive = Annotated[Decimal, Field(gt=0, le=10**15, max_digits=30, decimal_places=15), AmountText]
UnitFraction = Annotated[Decimal, Field(gt=0, le=1, decimal_places=15), AmountText]
TEMPERATURE_RANGE_F = (Decimal(-58), Decimal(302))


class Component(BaseModel):
    """One fuel type of a batch that mixes fuel types (§80.1426(f)(3)(iii), (v))."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    fuel: Fuel
    volume: Positive = Field(description="standardized gallons of this fuel in the batch")
    d_code: DCode | None = None
    equivalence_value: Positive | None = None


class Feedstock(BaseModel):
    """One feedstock of a batch; its energy FE = M × (1 − m) × CF × E (§80.1426(f)(7))."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Text = Field(min_length=1, max_length=100)
    mass_lb: Positive
    moisture: Annotated[Decimal, Field(ge=0, lt=1, decimal_places=15), AmountText]
    converted_fraction: UnitFraction
    heating_value_btu_per_lb: Positive | None = None
    d_code: DCode | None = None
    renewable: Flag = True

    @model_validator(mode="after")
    def _no_d_code_unless_renewable(self) -> Feedstock:
        if not self.renewable and self.d_code is not None:
            raise ValueError("a non-renewable feedstock earns no RINs and has no d_code")
        return self


class GenerationInput(BaseModel):
    """The facts of a batch that decide its gallon-RINs, D codes and EV (§80.1426(f))."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    fuel: Fuel
    d_code: DCode | None = None
    volume: Positive | None = Field(None, description="gallons standardized to 60 °F")
    measured_volume: Positive | None = Field(None, description="gallons at temperature_f")
    temperature_f: Annotated[Decimal, Field(max_digits=12), AmountText] | None = None
    equivalence_value: Positive | None = None
    renewable_fraction: UnitFraction | None = None
    energy_content_btu_per_gal: Positive | None = None
    btu: Positive | None = Field(None, description="Btu (LHV) of CNG/LNG from biogas")
    kwh: Positive | None = Field(None, description="kWh of renewable electricity")
    components: list[Component] | None = Field(None, min_length=1, max_length=100)
    feedstocks: list[Feedstock] | None = Field(None, min_length=1, max_length=100)
    waste: Literal["yard", "food", "msw"] | None = None
    ghg_exempt: Flag = False
    production_start: IsoDate | None = None
    production_end: IsoDate | None = None
    renewable_fraction_method: Literal["B", "C", "approved"] | None = Field(
        None, description="how R was measured: ASTM D6866 method B or C, or EPA-approved, "
        "§80.1426(f)(4)(iv)",
    )
    biointermediate: Flag = Field(
        False, description="the product is a biointermediate, §80.1426(c)(8): stated by the "
        "producer, as the ledger keeps no record of what a product is used for",
    )
    feedstock_is_renewable_fuel_of_another_party: Flag = Field(
        False, description="§80.1426(c)(6), where the ledger cannot tell whose renewable fuel "
        "was the feedstock (see s1426.eligibility)",
    )
    foreign_rins_already_assigned: Flag = Field(
        False, description="§80.1426(c)(5), stated by the importer where the ledger cannot see "
        "the RINs (see s1426.eligibility)",
    )
    foreign_producer: Annotated[Text, Field(pattern=r"^[0-9]{4}$")] | None = Field(
        None, description="company id of the foreign producer an importer's fuel came from, "
        "§80.1426(a)(2), (c)(4)-(c)(5)",
    )
    heating_oil: Flag = Field(
        False, description="renewable fuel oil that is heating oil, §80.1401 definition (2)"
    )
    end_user_affidavits: Flag = Field(
        False, description="the final end users' affidavits for heating oil were received, "
        "§80.1426(c)(7), §80.1451(b)(1)(ii)(T)",
    )

    @property
    def rin_fraction(self) -> Decimal | None:
        """R as a factor of V_RIN (method B, MSW); None when R only feeds an `other` fuel's EV."""
        if self.fuel is Fuel.OTHER and self.energy_content_btu_per_gal is not None:
            return None
        return self.renewable_fraction

    @model_validator(mode="after")
    def _consistent(self) -> GenerationInput:
        quantities = [self.volume, self.measured_volume, self.btu, self.kwh, self.components]
        if sum(q is not None for q in quantities) != 1:
            raise ValueError(
                "give exactly one of volume, measured_volume (with temperature_f), btu, kwh "
                "or components"
            )
        if (self.measured_volume is None) != (self.temperature_f is None):
            raise ValueError("measured_volume and temperature_f go together")
        if self.btu is not None and self.fuel is not Fuel.BIOGAS:
            raise ValueError(f"btu is for fuel biogas, not {self.fuel}")
        if self.kwh is not None and self.fuel is not Fuel.ELECTRICITY:
            raise ValueError(f"kwh is for fuel electricity, not {self.fuel}")
        if self.energy_content_btu_per_gal is not None and (
            self.fuel is not Fuel.OTHER
            or self.renewable_fraction is None
            or self.equivalence_value is not None
        ):
            raise ValueError(
                "energy_content_btu_per_gal computes the EV of fuel 'other' with "
                "renewable_fraction, in place of equivalence_value"
            )
        formulas = {
            "components": self.components is not None,
            "feedstocks": self.feedstocks is not None,
            "waste": self.waste is not None,
            "ghg_exempt": self.ghg_exempt,
            "renewable_fraction": self.rin_fraction is not None and self.waste != "msw",
        }
        chosen = [name for name, given in formulas.items() if given]
        if len(chosen) > 1:
            raise ValueError(f"{' and '.join(chosen)} choose different formulas; give one")
        if self.d_code is None and not all(d is not None for d in self._part_d_codes()):
            raise ValueError("d_code is required unless every component or feedstock has one")
        return self

    def _part_d_codes(self) -> list[int | None]:
        if self.components is not None:
            return [c.d_code for c in self.components]
        if self.feedstocks is not None:
            return [f.d_code for f in self.feedstocks if f.renewable]
        return [None]


@dataclass(frozen=True, slots=True)
class BatchYield:
    """The gallon-RINs of one D code of a batch, and how they were computed."""

    d_code: int
    rr: int
    equivalence_value: Decimal
    gallon_rins: int
    standardized_volume: Decimal
    paragraph: str
    formula: str


@dataclass(frozen=True, slots=True)
class _Part:
    """V_RIN,D = EV × Vs × factor; `volume_share` of Vs is the fuel the D code's RINs stand for."""

    d_code: int
    factor: Fraction = Fraction(1)
    factor_text: str = ""
    volume_share: Fraction = Fraction(1)


def compute_generation(inp: GenerationInput) -> list[BatchYield]:
    """The batch's gallon-RINs by §80.1426(f), one BatchYield per D code sorted by D code.

    Raises the rule violated: (c)(6)-(c)(8), (d)(1), (d)(2), (f)(4)-(8), §80.1415.

    Every RIN component is computed from the batch's facts (§80.1426(a)(3)): at least one gallon-RIN
    (§80.1426(d)(2)) and at most 99,999,999 (§80.1426(d)(1)(i)).
    """
    _check_eligible(inp)
    yields = _mixed_fuels(inp) if inp.components is not None else _single_fuel(inp)
    field = _quantity_field(inp)
    for y in yields:
        GEN_BATCH_EMPTY.check(
            y.gallon_rins >= 1, f"D{y.d_code}: {y.formula} gives no whole gallon-RIN", field
        )
        GEN_BATCH_MAX.check(
            y.gallon_rins <= MAX_SERIAL,
            f"D{y.d_code}: {y.gallon_rins:,} gallon-RINs is more than the {MAX_SERIAL:,} "
            "a batch may have",
            field,
        )
    return sorted(yields, key=lambda y: y.d_code)


def _check_eligible(inp: GenerationInput) -> None:
    """The producer's own statements the ledger cannot derive: §80.1426(c)(6) when the party
    could have used its own renewable fuel (what a process consumed is in no ledger fact;
    s1426.eligibility derives the rest), (c)(7) affidavits (paper the ledger never sees), (c)(8)
    biointermediate (the ledger records no product's later use); and the (d)(1)(ii) calendar
    month.

    Refuses what §80.1426(c)(7) and §80.1426(c)(8) prohibit, as the command states the facts, and a
    production period longer than one calendar month (§80.1426(d)(1)(ii)) when both dates are given.
    """
    GEN_BIOINTERMEDIATE.check(
        not inp.biointermediate, "RINs must not be generated for a biointermediate",
        "biointermediate",
    )
    GEN_OTHER_PARTY_FUEL.check(
        not inp.feedstock_is_renewable_fuel_of_another_party,
        "the fuel was made from renewable fuel another party produced, which had its own RINs",
        "feedstock_is_renewable_fuel_of_another_party",
    )
    GEN_HEATING_OIL_AFFIDAVIT.check(
        not inp.heating_oil or inp.end_user_affidavits,
        "renewable fuel oil for use as heating oil: no affidavits from its final end users "
        "were received", "end_user_affidavits",
    )
    start, end = inp.production_start, inp.production_end
    if start is not None and end is not None:
        GEN_BATCH_MONTH.check(
            start <= end, f"production_start {start} is after production_end {end}",
            "production_end",
        )
        GEN_BATCH_MONTH.check(
            (start.year, start.month) == (end.year, end.month),
            f"production from {start} to {end} spans more than one calendar month",
            "production_end",
        )


def _quantity_field(inp: GenerationInput) -> str:
    names = ("volume", "measured_volume", "btu", "kwh")
    return next((name for name in names if getattr(inp, name) is not None), "components")


def _mixed_fuels(inp: GenerationInput) -> list[BatchYield]:
    """(f)(3)(iii): one D code, V_RIN = Σ EV_i × Vs_i; (f)(3)(v): the same per D code.

    One batch-RIN carries one RR, so a D code's EV is its volume-weighted EV,
    Σ EV_i × Vs_i / Σ Vs_i, to the nearest tenth (as §80.1415(c)(1) rounds an EV).
    """
    assert inp.components is not None
    groups: dict[int, list[tuple[Decimal, Fraction]]] = defaultdict(list)
    for i, component in enumerate(inp.components):
        ev = equivalence_value(
            component.fuel, component.equivalence_value, None, None,
            f"components[{i}].equivalence_value",
        )
        d_code = component.d_code if component.d_code is not None else inp.d_code
        assert d_code is not None  # GenerationInput checked it
        groups[d_code].append((ev, Fraction(component.volume)))
    paragraph = "§80.1426(f)(3)(iii)" if len(groups) == 1 else "§80.1426(f)(3)(v)"
    yields = []
    for d_code, parts in groups.items():
        exact = sum((Fraction(ev) * vs for ev, vs in parts), Fraction(0))
        vs = sum((vs for _, vs in parts), Fraction(0))
        ev = Decimal(round_half_up(exact / vs * 10)).scaleb(-1)
        terms = " + ".join(f"{ev_i} × {_show(vs_i)}" for ev_i, vs_i in parts)
        yields.append(BatchYield(
            d_code, rr(ev), ev, round_half_up(exact), _to_decimal(vs), paragraph,
            f"{terms} = {_result(exact)}",
        ))
    return yields


def _single_fuel(inp: GenerationInput) -> list[BatchYield]:
    """One fuel type: V_RIN,D = EV × Vs × factor_D by the paragraph that fits the batch."""
    vs, vs_text = _standardized_volume(inp)
    ev = equivalence_value(
        inp.fuel, inp.equivalence_value, inp.renewable_fraction, inp.energy_content_btu_per_gal,
        "equivalence_value",
    )
    paragraph, parts = _formula(inp)
    yields = []
    for part in parts:
        exact = Fraction(ev) * vs * part.factor
        yields.append(BatchYield(
            part.d_code, rr(ev), ev, round_half_up(exact), _to_decimal(vs * part.volume_share),
            paragraph, f"{vs_text}{ev} × {_show(vs)}{part.factor_text} = {_result(exact)}",
        ))
    return yields


def _standardized_volume(inp: GenerationInput) -> tuple[Fraction, str]:
    """Vs in gallons and, when computed here, how: (f)(8) temperature, §80.1415(b)(5)-(6).

    Ethanol by §80.1426(f)(8)(i), biodiesel by the §80.1426(f)(8)(ii)(A) formula; other fuels are
    given at 60 °F (§80.1426(f)(8)(iii)).
    """
    if inp.volume is not None:
        return Fraction(inp.volume), ""
    if inp.btu is not None:
        vs = Fraction(inp.btu) / Fraction(BTU_PER_GALLON)
        return vs, f"Vs = {_show(Fraction(inp.btu))} Btu / {BTU_PER_GALLON:,} = {_show(vs)}; "
    if inp.kwh is not None:
        vs = Fraction(inp.kwh) / Fraction(KWH_PER_GALLON)
        return vs, f"Vs = {_show(Fraction(inp.kwh))} kWh / {KWH_PER_GALLON} = {_show(vs)}; "
    assert inp.measured_volume is not None and inp.temperature_f is not None
    factors = _TEMPERATURE_FACTORS.get(inp.fuel)
    if factors is None:
        raise GEN_STANDARDIZE.violation(
            f"{inp.fuel} measured at {inp.temperature_f} °F: standardize it to 60 °F by the "
            "industry formula reported to EPA and give the result as volume",
            "measured_volume",
        )
    low, high = TEMPERATURE_RANGE_F
    GEN_TEMPERATURE.check(
        low <= inp.temperature_f <= high,
        f"{inp.temperature_f} °F is outside {low} °F to {high} °F, the range the (f)(8) "
        "volume-correction tables and correlations are used for",
        "temperature_f",
    )
    slope, intercept = factors
    va, t = Fraction(inp.measured_volume), Fraction(inp.temperature_f)
    vs = va * (Fraction(slope) * t + Fraction(intercept))
    text = f"Vs = {_show(va)} × (−{-slope} × {_show(t)} + {intercept}) = {_show(vs)}; "
    return vs, text


def _formula(inp: GenerationInput) -> tuple[str, list[_Part]]:
    """The paragraph of §80.1426(f) that applies to a single-fuel batch, and its D-code parts.

    Yard waste is cellulosic (§80.1426(f)(5)(i)(A)), food waste is not (§80.1426(f)(5)(i)(B));
    separated MSW gives cellulosic RINs for its cellulosic portion (§80.1426(f)(5)(v)); exempt
    fuel is D6 (§80.1426(f)(6)(ii)); co-fired electricity gives R like any partly renewable fuel
    (§80.1426(f)(10)(iii), §80.1426(f)(11)(iii)).
    """
    r = inp.rin_fraction
    if inp.ghg_exempt:
        GEN_EXEMPT_D6.check(
            inp.d_code == 6,
            f"fuel exempt from the 20 % GHG reduction earns D6 RINs, not D{inp.d_code}",
            "d_code",
        )
        return "§80.1426(f)(6)(i)", [_Part(6)]
    if inp.feedstocks is not None:
        return _feedstock_formula(inp)
    d_code = inp.d_code
    assert d_code is not None  # GenerationInput checked it
    if inp.waste == "yard":
        GEN_YARD_CELLULOSIC.check(
            d_code in CELLULOSIC_D_CODES,
            f"fuel from separated yard waste is cellulosic (D3 or D7), not D{d_code}", "d_code",
        )
        return "§80.1426(f)(5)(iv)(A)", [_Part(d_code)]
    if inp.waste == "food":
        GEN_FOOD_NONCELLULOSIC.check(
            d_code not in CELLULOSIC_D_CODES,
            f"separated food waste is deemed non-cellulosic: its fuel earns no D{d_code} RINs",
            "d_code",
        )
        return "§80.1426(f)(5)(iv)(B)", [_Part(d_code)]
    if inp.waste == "msw":
        if r is None:
            raise GEN_MSW.violation(
                "separated MSW needs renewable_fraction R, its cellulosic portion",
                "renewable_fraction",
            )
        GEN_MSW.check(
            d_code in CELLULOSIC_D_CODES,
            f"RINs for the cellulosic portion of separated MSW are D3 or D7, not D{d_code}",
            "d_code",
        )
        return "§80.1426(f)(5)(v)", [_Part(d_code, Fraction(r), f" × {r}")]
    if r is not None:
        check_method(r, inp.renewable_fraction_method)
        return "§80.1426(f)(4)(i)(B)", [_Part(d_code, Fraction(r), f" × {r}")]
    return "§80.1426(f)(3)(ii)", [_Part(d_code)]


def check_method(r: Decimal, method: str | None) -> None:
    """R of co-processed fuel comes from ASTM D6866 method B, method C when R >= 10 %, or an
    EPA-approved method (§80.1426(f)(4)(iv)(A)-(C), method C §80.1426(f)(4)(iv)(B)); the batch
    records the one given (optional: the ledger cannot see the laboratory, and batches recorded
    before it was asked have none).

    The same methods measure R wherever it is used (§80.1426(f)(9)(ii)).
    """
    GEN_R_METHOD_C.check(
        method != "C" or r >= METHOD_C_MINIMUM,
        f"method C measures renewable content of 10 percent or more, not "
        f"{(r * 100).normalize():f} percent",
        "renewable_fraction_method",
    )


def _feedstock_formula(inp: GenerationInput) -> tuple[str, list[_Part]]:
    """V_RIN,Dx = EV × Vs × FE_Dx / ΣFE, ΣFE over every feedstock, renewable or not.

    With non-renewable feedstocks and one D code this is (f)(4)(i)(A) method A,
    EV × Vs × FE_R / (FE_R + FE_NR). With renewable feedstocks of several D codes it is
    (f)(3)(vi): Table 4 of §80.1426 is an image in every copy of the regulation, and this
    formula is the reconstruction in reference.md §1, which matches Table 4's variables
    FE_3 … FE_7. Each D code stands for the share FE_Dx / FE_R of the batch's volume.

    Only the renewable portion earns RINs (§80.1426(a)(4)).
    """
    assert inp.feedstocks is not None
    total = Fraction(0)
    renewable: dict[int, Fraction] = defaultdict(Fraction)
    for i, feedstock in enumerate(inp.feedstocks):
        energy = feedstock_energy(feedstock, f"feedstocks[{i}].heating_value_btu_per_lb")
        total += energy
        if feedstock.renewable:
            d_code = feedstock.d_code if feedstock.d_code is not None else inp.d_code
            assert d_code is not None  # GenerationInput checked it
            _check_separated(feedstock.type, d_code, f"feedstocks[{i}].d_code")
            renewable[d_code] += energy
    fe_r = sum(renewable.values(), Fraction(0))
    GEN_BATCH_EMPTY.check(
        fe_r > 0, "every feedstock is non-renewable (FE_R = 0): no gallon-RINs", "feedstocks"
    )
    paragraph = "§80.1426(f)(3)(vi)(A)" if fe_r == total else "§80.1426(f)(4)(i)(A)"
    parts = [
        _Part(d_code, fe / total, f" × {_show(fe)} / {_show(total)}", fe / fe_r)
        for d_code, fe in renewable.items()
    ]
    return paragraph, parts


def _check_separated(feedstock_type: str, d_code: int, field: str) -> None:
    """§80.1426(f)(1)(v)(A)-(B): separated oil, sugar or starch earns no D3 or D7 RINs.

    Oil by §80.1426(f)(1)(v)(A), sugar and starch by §80.1426(f)(1)(v)(B).
    """
    if d_code not in CELLULOSIC_D_CODES:
        return
    message = f"feedstock {feedstock_type} is separated from its biomass: no D{d_code} RINs"
    GEN_SEPARATED_OIL.check(feedstock_type not in SEPARATED_OILS, message, field)
    GEN_SEPARATED_SUGAR.check(feedstock_type not in SEPARATED_SUGARS, message, field)


def feedstock_energy(feedstock: Feedstock, field: str = "heating_value_btu_per_lb") -> Fraction:
    """FE = M × (1 − m) × CF × E in Btu (§80.1426(f)(7)); E defaults by type per (f)(7)(vi).

    This is the FE of §80.1426(f)(3)(vi)(B); E is the §80.1426(f)(7)(vi) default or the producer's
    value (§80.1426(f)(7)(iv)).
    """
    e = feedstock.heating_value_btu_per_lb or DEFAULT_HEATING_VALUE.get(feedstock.type)
    if e is None:
        raise GEN_FEEDSTOCK_E.violation(
            f"feedstock type {feedstock.type!r} has no default heating value; give "
            f"heating_value_btu_per_lb or use one of {', '.join(DEFAULT_HEATING_VALUE)}",
            field,
        )
    return (
        Fraction(feedstock.mass_lb) * (1 - Fraction(feedstock.moisture))
        * Fraction(feedstock.converted_fraction) * Fraction(e)
    )


def _places(q: Fraction) -> int | None:
    """How many decimal places q needs, or None if its decimal expansion never terminates."""
    rest, twos, fives = q.denominator, 0, 0
    while rest % 2 == 0:
        rest, twos = rest // 2, twos + 1
    while rest % 5 == 0:
        rest, fives = rest // 5, fives + 1
    return max(twos, fives) if rest == 1 else None


def _to_decimal(q: Fraction) -> Decimal:
    """q exactly when it terminates; otherwise to 28 significant digits."""
    places = _places(q)
    if places is None:
        return Decimal(q.numerator) / Decimal(q.denominator)
    return Decimal(f"{q.numerator * 10**places // q.denominator}E-{places}")


def _show(q: Fraction) -> str:
    """q for a formula: exact with thousands separators, or ≈ to four places."""
    if _places(q) is None:
        return f"≈{_to_decimal(q):,.4f}"
    return f"{_to_decimal(q):,}"


def _result(exact: Fraction) -> str:
    """The formula's value and, when it is not whole, the gallon-RINs it rounds to."""
    if exact.denominator == 1:
        return _show(exact)
    return f"{_show(exact)} → {round_half_up(exact):,}"


def is_delayed(batch: str) -> bool:
    """Whether a batch number marks delayed RINs: it begins with "DRN" (§80.1426(g)(11))."""
    return batch.startswith(DELAYED_PREFIX)


def check_delayed(
    batch: str,
    production_start: date | None,
    generated_on: date,
    pathway_effective_date: date | None,
    production_end: date | None = None,
) -> int:
    """The vintage of a batch's RINs, checking delayed-RIN batches against (g)(3) and (g)(4).

    (g)(3) bounds the whole period the batch represents: its first and its last day of
    production (the start when no end is given) lie in the window.
    A batch is of the year it is generated (§80.1425(b)); delayed RINs are of the year the fuel
    was produced or imported (§80.1426(g)(10)).

    The window is §80.1426(g)(3), which the §80.1426(g)(7) volume lies in, the deadline
    §80.1426(g)(4); the vintage is the production year (§80.1426(g)(10)(i) for 2010,
    §80.1426(g)(10)(ii) for 2011).
    """
    if not is_delayed(batch):
        return generated_on.year
    if production_start is None:
        raise GEN_DELAYED_WINDOW.violation(
            "delayed RINs need the production_start of the fuel they represent",
            "production_start",
        )
    if pathway_effective_date is None:
        raise GEN_DELAYED_DEADLINE.violation(
            "delayed RINs need the effective date of their new pathway", "pathway_effective_date"
        )
    last_day = min(DELAYED_LAST_DAY, pathway_effective_date - timedelta(days=1))
    for name, day in (("production_start", production_start), ("production_end", production_end)):
        GEN_DELAYED_WINDOW.check(
            day is None or DELAYED_FIRST_DAY <= day <= last_day,
            f"fuel produced on {day} is outside {DELAYED_FIRST_DAY} to {last_day}, "
            f"before the pathway's effective date {pathway_effective_date} and no later than "
            f"{DELAYED_LAST_DAY}",
            name,
        )
    deadline = pathway_effective_date + DELAYED_DEADLINE
    GEN_DELAYED_DEADLINE.check(
        generated_on <= deadline,
        f"generated on {generated_on}, after {deadline}, 60 days after the pathway's "
        f"effective date {pathway_effective_date}",
        "generated_on",
    )
    return production_start.year


def check_new_facility_year(claimed: int | None, year: int, first_year: int | None) -> None:
    """§80.1426(c)(3)(i): the facility's calendar year of production is at least the one the
    ledger's own record of it gives (its first gallon there, with RINs or without, if any,
    began year 1)."""
    if claimed is None or first_year is None:
        return
    known = year - first_year + 1
    GEN_NEW_FACILITY_YEAR.check(
        claimed >= known,
        f"the facility produced renewable fuel in {first_year}, so {year} is its calendar year "
        f"{known}, not {claimed}",
        "new_facility_year",
    )


def check_new_producer(new_facility_year: int | None, imported: bool) -> None:
    """§80.1426(c)(3): the 125,000-gallon allowance is for new renewable fuel producers, counted
    from the year their production facility made its first gallon; an importer's batch is
    exempt only under (c)(2), below 10,000 gallons a year."""
    GEN_NEW_PRODUCER.check(
        new_facility_year is None or not imported,
        "the new-facility allowance of (c)(3) is for new renewable fuel producers, not for "
        "imported fuel: an importer is exempt only below 10,000 gallons a year, (c)(2)",
        "new_facility_year",
    )


def check_small_producer_exemption(
    annual_volume: Decimal, new_facility_years: int | None
) -> None:
    """Allow a producer or importer not to generate RINs only if small (§80.1426(c)(2)-(3)).

    `annual_volume` is gallons of renewable fuel a year; `new_facility_years` is which calendar
    year of production a new facility is in (1 = the year of its first gallon), else None.

    The §80.1426(c)(3) limit holds in a new facility's first three calendar years
    (§80.1426(c)(3)(i)), as the caller counts them.
    """
    if annual_volume < 0:
        raise ValueError(f"annual_volume must not be negative, got {annual_volume}")
    if new_facility_years is not None and new_facility_years < 1:
        raise ValueError(f"new_facility_years counts from 1, got {new_facility_years}")
    if new_facility_years is not None and new_facility_years <= NEW_FACILITY_YEARS:
        GEN_NEW_PRODUCER.check(
            annual_volume < NEW_PRODUCER_GALLONS,
            f"{annual_volume:,} gallons a year is not less than {NEW_PRODUCER_GALLONS:,}: "
            f"the new facility must generate RINs in its calendar year {new_facility_years}",
            "annual_volume",
        )
        return
    GEN_SMALL_PRODUCER.check(
        annual_volume < SMALL_PRODUCER_GALLONS,
        f"{annual_volume:,} gallons a year is not less than {SMALL_PRODUCER_GALLONS:,}: "
        "the producer or importer must generate RINs",
        "annual_volume",
    )
