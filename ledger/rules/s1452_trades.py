"""EMTS trades (§80.1452): a sell and a buy, each a submission of its own (§80.1452(c)(6)),
complete a trade only when they agree; until then the sell's RINs are reserved.

What must agree are the fields both submissions report (§80.1452(c)(3)-(c)(11): generation
year, RIN status (K), D code, date of transfer, partner, fuel volume for assigned RINs,
quantity); prices may differ. Reservations, cancelling, denying and expiry are EMTS's
procedures, which §80.1452(d) makes the Administrator's to prescribe.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from ledger.domain.rin import BlockKey
from ledger.domain.trade_book import BATCH_FIELDS, Posting, Reservation, Side, Terms
from ledger.rules.catalogue import Rule

TRADE_MATCH = Rule(
    "TRADE-MATCH", "§80.1452(c)(3)-(c)(11)",
    "a sell and a buy that name each other agree on D code, vintage, K, quantity, transfer date, "
    "fuel volume (K=1), the batch a side names and the QAP status a side names; a `match` that "
    "disagrees is refused, naming every field that differs",
)
TRADE_MATCH_PENDING = Rule(
    "TRADE-MATCH-PENDING", "§80.1452(c)(6)",
    "`match` names a pending posting of the other side, between the same two parties",
)
TRADE_RESERVED = Rule(
    "TRADE-RESERVED", "§80.1452(d)",
    "RINs (and K=1 fuel) a sell reserves are still owned but cannot be transferred, separated, "
    "retired, split or reserved again by a command dated within the reservation's life (from "
    "the sell's date until it completes or is released) or before it",
)
TRADE_CANCEL = Rule(
    "TRADE-CANCEL", "§80.1452(d)",
    "a party cancels (EMTS 060) only a pending posting of its own, on or after its date",
)
TRADE_DENY = Rule(
    "TRADE-DENY", "§80.1452(d)",
    "a party denies (EMTS 050) only a pending posting that names it as partner, on or after "
    "its date",
)
RULES = (TRADE_MATCH, TRADE_MATCH_PENDING, TRADE_RESERVED, TRADE_CANCEL, TRADE_DENY)

#: EMTS buy/sell codes of a posting's end by a party (reference.md §5)
DENY_CODE = 50
CANCEL_CODE = 60


def differences(sell: Terms, delivered: list[BlockKey], buy: Terms) -> list[str]:
    """The fields on which a sell (with the batches of the ranges it delivers) and a buy
    disagree, in the order the contract lists them; [] when they agree."""
    fields = ["d_code", "vintage", "k", "quantity", "date"]
    if sell.k == 1 or buy.k == 1:
        fields.append("volume")
    differing = [name for name in fields if getattr(sell, name) != getattr(buy, name)]
    if buy.qap is not None and sell.qap != buy.qap:  # the sell's RINs' QAP status (§80.1471(e))
        differing.append("qap")
    for name in BATCH_FIELDS:
        wanted = getattr(buy, name)
        named = getattr(sell, name)
        if wanted is not None and (
            (named is not None and named != wanted)
            or any(getattr(key, name) != wanted for key in delivered)
        ):
            differing.append(name)
    return differing


def check_agree(sell: Terms, delivered: list[BlockKey], buy: Terms, sell_id: str, buy_id: str,
                field: str) -> None:
    """§80.1452(c)(3)-(c)(11): a posting naming `match` must agree with it on every field."""
    differing = differences(sell, delivered, buy)
    TRADE_MATCH.check(
        not differing,
        f"sell {sell_id} and buy {buy_id} differ in {', '.join(differing)}: "
        + "; ".join(f"{name} {_shown(getattr(sell, name))} (sell) against "
                    f"{_shown(getattr(buy, name))} (buy)" for name in differing),
        field,
    )


def _shown(value: object) -> str:
    if isinstance(value, Decimal):
        return f"{value.normalize():f}"
    return "none" if value is None else str(value)


def check_match(found: Posting | None, match: str, side: Side, poster: str, partner: str
                ) -> Posting:
    """§80.1452(c)(6): `match` is a pending posting of the other side, posted by `partner`
    naming `poster`."""
    wanted = side.other
    posting = TRADE_MATCH_PENDING.require(
        found if found is not None and found.side is wanted and found.partner == poster
        else None,
        f"{match} is not a {wanted} posted by party {partner} to party {poster}", "match",
    )
    TRADE_MATCH_PENDING.check(
        posting.pending, f"{wanted} {match} is {posting.status}, not pending", "match"
    )
    return posting


def check_unreserved(code: str, reserved_by: list[Reservation], field: str) -> None:
    """§80.1452(d): no command dated within (or before) a reservation's life uses its RINs."""
    TRADE_RESERVED.check(
        not reserved_by,
        f"{code} is reserved by {'; '.join(life(p) for p in reserved_by)}: no command dated "
        "within a reservation's life may use its ranges (a pending one: cancel it, or wait "
        "until it completes, is denied or expires)",
        field,
    )


def life(reservation: Reservation) -> str:
    """A sell's reservation and its life, as a refusal names it."""
    if reservation.end is None:
        return f"pending sell {reservation.id} (from {reservation.start.isoformat()})"
    return (f"sell {reservation.id} (from {reservation.start.isoformat()} until it was "
            f"{reservation.status} on {reservation.end.isoformat()})")


def check_unreserved_quantity(what: str, wanted: int, free: int, reserved: int, on: str,
                              field: str) -> None:
    """§80.1452(d): a pick by attributes that only reserved RINs would fill is refused as such."""
    TRADE_RESERVED.check(
        wanted <= free,
        f"{wanted:,} {what} gallon-RINs asked on {on}: {free:,} free, {reserved:,} more "
        "reserved by sells on that date or later",
        field,
    )


def check_unreserved_fuel(party: str, volume: Decimal, free: Decimal, reserved: Decimal,
                          on: str) -> None:
    """§80.1452(d): fuel a pending K=1 sell reserves cannot go elsewhere."""
    TRADE_RESERVED.check(
        volume <= free,
        f"party {party} has {_shown(free)} gallons free from {on} on ({_shown(reserved)} more "
        f"reserved by sells on that date or later); {_shown(volume)} asked",
        "volume",
    )


def check_cancel(posting: Posting | None, trade: str, party: str, on: date | None = None
                 ) -> Posting:
    """§80.1452(d): only the poster cancels, only while the posting is pending, and not on a
    date before it was posted (a reservation's life cannot end before it began)."""
    found = TRADE_CANCEL.require(
        posting, f"party {party} has no posting {trade}", "trade"
    )
    TRADE_CANCEL.check(found.pending, f"{found.side} {trade} is {found.status}, not pending",
                       "trade")
    check_not_before(TRADE_CANCEL, "cancel", found, on)
    return found


def check_deny(posting: Posting | None, trade: str, party: str, on: date | None = None
               ) -> Posting:
    """§80.1452(d): only the partner a posting names denies it, while it is pending, and not on
    a date before it was posted."""
    found = TRADE_DENY.require(
        posting if posting is not None and posting.partner == party else None,
        f"no posting {trade} names party {party} as partner", "trade",
    )
    TRADE_DENY.check(found.pending, f"{found.side} {trade} is {found.status}, not pending",
                     "trade")
    check_not_before(TRADE_DENY, "denial", found, on)
    return found


def check_not_before(rule: Rule, what: str, posting: Posting, on: date | None) -> None:
    """§80.1452(d): a posting is not ended on a date before its own."""
    posted = posting.terms.date
    rule.check(on is None or on >= posted,
               f"a {what} dated {on} is before {posting.side} {posting.id}'s date "
               f"{posted.isoformat()}", "date")
