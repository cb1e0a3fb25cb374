"""Assigned and separated RINs (§80.1428): moving with fuel, 2.5 per gallon, ownership, split."""

from __future__ import annotations

from decimal import Decimal

from ledger.domain.daughters import Cuts, cut, inner_cuts
from ledger.domain.rin import RinBlock
from ledger.rules.catalogue import Rule

MAX_PER_GALLON = Decimal("2.5")

RINS_NOT_HELD = Rule(
    "RINS-NOT-HELD", "§80.1428",
    "a party moves, separates, splits or retires only gallon-RINs it owns on that date",
)
ASSIGNED_WITH_FUEL = Rule(
    "ASSIGNED-WITH-FUEL", "§80.1428(a)(3)",
    "assigned RINs transfer only together with a volume of renewable fuel to the same person",
)
ASSIGNED_PER_GALLON = Rule(
    "ASSIGNED-PER-GALLON", "§80.1428(a)(4)",
    "at most 2.5 assigned gallon-RINs transfer with each gallon of renewable fuel",
)
FUEL_NOT_OWNED = Rule(
    "FUEL-NOT-OWNED", "§80.1428(a)(3)",
    "a party delivers only renewable fuel it owns on that date; no volume goes negative",
)
TRANSFER_SELF = Rule(
    "TRANSFER-SELF", "§80.1428(a)(3)", "a transfer goes to another person, not to oneself"
)
SPLIT_HELD = Rule(
    "SPLIT-HELD", "§80.1428(d)", "only a batch-RIN held in full can be divided"
)
SPLIT_SUM = Rule(
    "SPLIT-SUM", "§80.1428(d)(2)",
    "the daughters' gallon-RINs sum to the parent's",
)
SPLIT_PARENT = Rule(
    "SPLIT-PARENT", "§80.1428(d)",
    "a divided batch-RIN is named by its daughters' codes: a code spanning two daughters "
    "names no held block",
)
REG_UNREGISTERED = Rule(
    "REG-UNREGISTERED", "§80.1428(b)(2)", "only a party registered under §80.1450 may own RINs"
)
RULES = (
    RINS_NOT_HELD, ASSIGNED_WITH_FUEL, ASSIGNED_PER_GALLON, FUEL_NOT_OWNED, TRANSFER_SELF,
    SPLIT_HELD, SPLIT_SUM, SPLIT_PARENT, REG_UNREGISTERED,
)


def check_held(wanted: int, held: int, what: str, on: str, field: str = "rins") -> None:
    """A party moves only gallon-RINs it owns (§80.1428); a retired gallon-RIN is owned by no one,
    so it never counts for a second year (§80.1427(a)(6)(ii)).
    """
    RINS_NOT_HELD.check(
        held >= wanted,
        f"{wanted:,} gallon-RINs of {what} asked, {held:,} held and movable on {on}",
        field,
    )


def check_not_self(seller: str, buyer: str) -> None:
    """A transfer goes to another person (§80.1428(a)(3))."""
    TRANSFER_SELF.check(seller != buyer, f"party {seller} cannot transfer to itself", "to")


def check_assigned_transfer(gallon_rins: int, volume: Decimal | None) -> None:
    """§80.1428(a)(3)-(4): K=1 RINs need fuel, at most 2.5 gallon-RINs a gallon.

    An assigned RIN moves with its fuel (§80.1426(e)(2)), at most 2.5 a gallon (§80.1428(a)(4));
    separated RINs skip this check: they transfer any number of times without fuel (§80.1428(b)(3)).
    """
    ASSIGNED_WITH_FUEL.check(
        volume is not None and volume > 0,
        f"{gallon_rins:,} assigned gallon-RINs transferred without a volume of renewable fuel",
        "volume",
    )
    assert volume is not None
    ASSIGNED_PER_GALLON.check(
        gallon_rins <= MAX_PER_GALLON * volume,
        f"{gallon_rins:,} assigned gallon-RINs with {volume:,} gallons is more than 2.5 per gallon",
        "volume",
    )


def check_fuel_owned(volume: Decimal, owned: Decimal, party: str, on: str) -> None:
    """Fuel delivered is fuel owned on that date (§80.1428(a)(3))."""
    FUEL_NOT_OWNED.check(
        volume <= owned,
        f"party {party} delivers {volume:,} gallons but owns {owned:,} movable on {on}",
        "volume",
    )


def check_split(parent_count: int, held: int, sizes: list[int], code: str) -> None:
    """A held batch-RIN divides (§80.1428(d)) into daughters differing only in S and E
    (§80.1428(d)(1)) whose counts sum to it (§80.1428(d)(2)).
    """
    SPLIT_HELD.check(
        held == parent_count,
        f"{code} has {parent_count:,} gallon-RINs, {held:,} of them held and movable",
        "rin",
    )
    SPLIT_SUM.check(
        sum(sizes) == parent_count,
        f"daughters of {sum(sizes):,} gallon-RINs do not sum to the parent's {parent_count:,}",
        "sizes",
    )


def check_registered(party: str, exists: bool, field: str) -> None:
    """Only a registered party owns RINs (§80.1428(b)(2))."""
    REG_UNREGISTERED.check(exists, f"party {party} is not registered", field)


def check_not_parent(block: RinBlock, cuts: Cuts, field: str) -> None:
    """Refuse a code that spans daughters, listing the daughters' codes it covers (§80.1428(d)).

    Daughters keep every component but S and E (§80.1428(d)(1)), so each is named by its own code.
    """
    points = inner_cuts(block, cuts)
    if points:
        names = ", ".join(b.code for b in cut([block], cuts))
        raise SPLIT_PARENT.violation(
            f"{block.code} was divided into daughter batch-RINs; name them: {names}", field
        )
