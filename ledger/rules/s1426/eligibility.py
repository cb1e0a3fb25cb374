"""Who may generate RINs for a batch, decided from the ledger's own facts (§80.1426(c)(4)-(c)(6)).

The ledger knows who registered, with which roles (§80.1450), and which fuels each party has
generated RINs for. From those it decides:
- (c)(4): an importer's fuel comes from a foreign producer registered as one (role
  `foreign_producer`): checked when the batch names it (`foreign_producer`, the (a)(2) source).
  The interface contract's `generate` line has no such field, so a batch that names none is
  taken as the importer states it, as before; `rin` cannot see paper.
- (c)(5): a foreign producer registered to generate RINs (roles `foreign_producer` and
  `producer`) assigns RINs to the fuel it makes, so an importer generates none for its fuel.
- (c)(6): a feedstock that is itself a renewable fuel (ethanol, biodiesel, renewable diesel,
  butanol) was produced by another party when the generator has never generated RINs for that
  fuel on or before the batch's date.
Where the facts cannot decide, the caller's statement stays: fuel whose foreign RINs reached
the importer by a route the ledger did not record (`foreign_rins_already_assigned`); a party
that also makes the fuel it uses as feedstock may use its own or another's, which only its
records show (`feedstock_is_renewable_fuel_of_another_party`, checked in s1426.generation);
and a §80.1416 petition approving such fuel is not a fact the ledger holds.
"""

from __future__ import annotations

from collections.abc import Collection

from ledger.domain.fuels import Fuel
from ledger.rules.catalogue import Rule
from ledger.rules.s1426.generation import GEN_OTHER_PARTY_FUEL, GenerationInput

GEN_IMPORT_FOREIGN = Rule(
    "GEN-IMPORT-FOREIGN", "§80.1426(c)(4)",
    "an importer generates RINs only for fuel from a foreign producer registered under §80.1450 "
    "(checked against the one its batch names, §80.1426(a)(2))",
)
GEN_IMPORT_ASSIGNED = Rule(
    "GEN-IMPORT-ASSIGNED", "§80.1426(c)(5)",
    "an importer generates no RINs for fuel of a RIN-generating foreign producer, which has "
    "RINs assigned already",
)
RULES = (GEN_IMPORT_FOREIGN, GEN_IMPORT_ASSIGNED)

RENEWABLE_FUEL_FEEDSTOCKS = frozenset({
    Fuel.ETHANOL, Fuel.BIODIESEL, Fuel.RENEWABLE_DIESEL, Fuel.BUTANOL,
})
"""Feedstock types that are renewable fuels made by a RIN generator (§80.1426(c)(6))."""


def is_import(inp: GenerationInput, roles: Collection[str]) -> bool:
    """A batch is imported when it names its foreign producer, or when the party generating it
    is registered as an importer and not as a producer."""
    return inp.foreign_producer is not None or ("importer" in roles and "producer" not in roles)


def check_import(
    inp: GenerationInput, roles: Collection[str], producer_roles: Collection[str] | None
) -> None:
    """§80.1426(c)(4)-(c)(5) for an imported batch; `producer_roles` are the registered roles of
    the named foreign producer, None if it is not registered.

    The named producer is registered as a foreign producer (§80.1426(c)(4)) and not as a RIN
    generator, whose fuel has RINs already (§80.1426(c)(5)).
    """
    GEN_IMPORT_ASSIGNED.check(
        not inp.foreign_rins_already_assigned,
        "the imported fuel already has RINs assigned by its foreign producer",
        "foreign_rins_already_assigned",
    )
    if not is_import(inp, roles):
        return
    source = inp.foreign_producer
    if source is None:
        return  # the contract's generate line (design.md) names no source: nothing to check
    GEN_IMPORT_FOREIGN.check(
        producer_roles is not None and "foreign_producer" in producer_roles,
        f"party {source} is "
        + ("not registered" if producer_roles is None else
           f"registered as {', '.join(producer_roles)}, not as a foreign producer"),
        "foreign_producer",
    )
    assert producer_roles is not None
    GEN_IMPORT_ASSIGNED.check(
        "producer" not in producer_roles,
        f"foreign producer {source} is registered to generate RINs: its fuel has RINs assigned",
        "foreign_producer",
    )


def renewable_fuel_feedstocks(inp: GenerationInput) -> list[tuple[int, str]]:
    """The batch's feedstocks that are renewable fuels, with their index."""
    return [
        (i, f.type) for i, f in enumerate(inp.feedstocks or ())
        if f.type in RENEWABLE_FUEL_FEEDSTOCKS
    ]


def check_feedstock_fuels(inp: GenerationInput, fuels_generated: Collection[str]) -> None:
    """§80.1426(c)(6): a renewable-fuel feedstock the party never generated RINs for is another
    party's renewable fuel; `fuels_generated` are the fuels it generated RINs for by then."""
    for i, fuel in renewable_fuel_feedstocks(inp):
        GEN_OTHER_PARTY_FUEL.check(
            fuel in fuels_generated,
            f"feedstock {fuel} is renewable fuel the party never produced: another party "
            "produced it",
            f"feedstocks[{i}].type",
        )
