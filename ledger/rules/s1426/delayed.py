"""Delayed RINs (§80.1426(g)) from the facts of the generator's own history.

A party that generated (f)(6) RINs for fuel of a new pathway and sold them with the fuel retires
as many (EMTS retirement reason 100) before generating delayed RINs, (g)(5); it then generates
exactly as many delayed RINs as it retired, (g)(6), all on one date, (g)(9). The window and the
60-day deadline of a single batch, (g)(3)-(4), are checked in `s1426.generation.check_delayed`.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date

from ledger.domain.rin import RinBlock
from ledger.rules.catalogue import Rule
from ledger.rules.s1426.generation import is_delayed

DELAYED_RETIRE_FIRST = Rule(
    "DELAYED-RETIRE-FIRST", "§80.1426(g)(5)",
    "a party that generated (f)(6) RINs in the window and transferred them retires gallon-RINs "
    "under (g)(5) before, not after, it generates delayed RINs",
)
DELAYED_RETIRE_LIMIT = Rule(
    "DELAYED-RETIRE-LIMIT", "§80.1426(g)(5)(i)",
    "no more gallon-RINs are retired than the party generated under (f)(6) from 1 July 2010 to "
    "31 December 2011 and transferred to another party",
)
DELAYED_RETIRE_D6 = Rule(
    "DELAYED-RETIRE-D6", "§80.1426(g)(5)(ii)", "RINs retired under (g)(5) have D code 6"
)
DELAYED_RETIRE_K2 = Rule(
    "DELAYED-RETIRE-K2", "§80.1426(g)(5)(iii)", "RINs retired under (g)(5) have K code 2"
)
DELAYED_RETIRE_YEAR = Rule(
    "DELAYED-RETIRE-YEAR", "§80.1426(g)(5)(iv)",
    "RINs retired under (g)(5) are of the year (2010 or 2011) of the RINs originally generated",
)
DELAYED_EQUALS_RETIRED = Rule(
    "DELAYED-EQUALS-RETIRED", "§80.1426(g)(6)",
    "a party that retired under (g)(5) generates as many delayed gallon-RINs as it retired, "
    "year by year",
)
DELAYED_ONE_DATE = Rule(
    "DELAYED-ONE-DATE", "§80.1426(g)(9)",
    "all of a producer's or importer's delayed RINs are generated on the same date",
)
RULES = (
    DELAYED_RETIRE_FIRST, DELAYED_RETIRE_LIMIT, DELAYED_RETIRE_D6, DELAYED_RETIRE_K2,
    DELAYED_RETIRE_YEAR, DELAYED_EQUALS_RETIRED, DELAYED_ONE_DATE,
)

F6_PARAGRAPH = "§80.1426(f)(6)(i)"
ORIGINAL_FIRST_DAY = date(2010, 7, 1)
ORIGINAL_LAST_DAY = date(2011, 12, 31)  # (g)(5)(i)(B): the latest the window can end
ORIGINAL_YEARS = (2010, 2011)  # (g)(5)(iv)(A)-(B)
#: the production date EMTS records for delayed RINs, by the year the fuel was produced
EMTS_PRODUCTION_DATES = {
    2010: date(2010, 7, 1),  # §80.1426(g)(10)(i)
    2011: date(2011, 1, 1),  # §80.1426(g)(10)(ii)
}


@dataclass
class DelayedHistory:
    """What a party's history says about delayed RINs, by vintage (gallon-RINs)."""

    original: dict[int, int] = field(default_factory=dict)  # (f)(6) RINs transferred away
    retired: dict[int, int] = field(default_factory=dict)  # retired under (g)(5)
    generated: dict[int, int] = field(default_factory=dict)  # delayed RINs generated
    generated_on: set[date] = field(default_factory=set)


def emts_production_date(batch: str, production_start: date | None) -> date | None:
    """The production date a batch records: for delayed RINs 07/01/2010 for 2010 fuel
    (§80.1426(g)(10)(i)) and 01/01/2011 for 2011 fuel (§80.1426(g)(10)(ii)), whatever day the
    fuel was made; for any other batch the first day of production, if given."""
    if production_start is None or not is_delayed(batch):
        return production_start
    return EMTS_PRODUCTION_DATES.get(production_start.year, production_start)


def is_original(paragraph: str, generated_on: date) -> bool:
    """Whether a batch is one (g)(5)(i) counts: (f)(6) RINs generated in the delayed window."""
    return paragraph == F6_PARAGRAPH and ORIGINAL_FIRST_DAY <= generated_on <= ORIGINAL_LAST_DAY


def check_retirement(history: DelayedHistory, blocks: list[RinBlock]) -> None:
    """§80.1426(g)(5): what a delayed-RIN retirement (EMTS 100) may retire.

    No more than the original (f)(6) gallon-RINs (§80.1426(g)(5)(i)), D6 (§80.1426(g)(5)(ii)), K=2
    (§80.1426(g)(5)(iii)), of the original year (§80.1426(g)(5)(iv)).
    """
    asked: dict[int, int] = defaultdict(int)
    for b in blocks:
        DELAYED_RETIRE_D6.check(
            b.key.d_code == 6, f"{b.code} has D code {b.key.d_code}, not 6", "rins"
        )
        DELAYED_RETIRE_K2.check(b.key.k == 2, f"{b.code} has K code {b.key.k}, not 2", "rins")
        asked[b.key.vintage] += b.gallon_rins
    DELAYED_RETIRE_FIRST.check(
        not history.generated,
        "delayed RINs were already generated; RINs are retired under (g)(5) before that",
        "reason",
    )
    original_years = {year for year, n in history.original.items() if n}
    for vintage, count in sorted(asked.items()):
        original = history.original.get(vintage, 0)
        # (iv): of 2010 or 2011, and of a year the party's originals have (with none, (i) says 0)
        DELAYED_RETIRE_YEAR.check(
            vintage in ORIGINAL_YEARS and (vintage in original_years or not original_years),
            f"RINs of {vintage} retired, but the party's (f)(6) RINs generated from "
            f"{ORIGINAL_FIRST_DAY} to {ORIGINAL_LAST_DAY} and transferred are of "
            f"{_years(history.original)}",
            "rins",
        )
        already = history.retired.get(vintage, 0)
        DELAYED_RETIRE_LIMIT.check(
            already + count <= original,
            f"{already:,} + {count:,} = {already + count:,} gallon-RINs of {vintage} retired, "
            f"more than the {original:,} the party generated under (f)(6) and transferred",
            "rins",
        )


def check_generation(history: DelayedHistory, vintage: int, gallon_rins: int, on: date) -> None:
    """§80.1426(g)(9) one date; (g)(6) as many delayed gallon-RINs as were retired.

    A party whose (f)(6) RINs of the window went to another party retires first
    (§80.1426(g)(5)); only one that transferred none generates by volume, (g)(7).
    As many delayed gallon-RINs as were retired (§80.1426(g)(6)).
    """
    earlier = sorted(history.generated_on - {on})
    DELAYED_ONE_DATE.check(
        not earlier,
        f"delayed RINs generated on {on}, but the party generated delayed RINs on "
        f"{', '.join(map(str, earlier))}",
        "date",
    )
    sold = sum(history.original.values())
    DELAYED_RETIRE_FIRST.check(
        bool(history.retired) or not sold,
        f"the party generated {sold:,} gallon-RINs under (f)(6) from {ORIGINAL_FIRST_DAY} to "
        f"{ORIGINAL_LAST_DAY} and transferred them ({_years(history.original)}), but retired "
        f"none under (g)(5) (EMTS reason 100) by {on}: it retires them before generating "
        "delayed RINs",
        "batch",
    )
    if not history.retired:
        return  # (g)(7): a party that transferred no (f)(6) RINs generates by the fuel's volume
    retired = history.retired.get(vintage, 0)
    already = history.generated.get(vintage, 0)
    DELAYED_EQUALS_RETIRED.check(
        already + gallon_rins == retired,
        f"{already:,} + {gallon_rins:,} = {already + gallon_rins:,} delayed gallon-RINs of "
        f"{vintage}, but {retired:,} of {vintage} were retired under (g)(5)",
        "volume",
    )


def _years(counts: dict[int, int]) -> str:
    years = [str(y) for y, n in sorted(counts.items()) if n]
    return " and ".join(years) or "none"
