"""Reversals (EMTS remedial transactions): a retirement unretired, a trade sent back.

The regulation names no reversal; what it does say is that each RIN transaction is submitted to
EMTS with its reason (§80.1452(c)(13)) on forms and by procedures the Administrator prescribes
(§80.1452(d)). EMTS's procedures are the unretire transaction and the remedial buy/sell reasons
030 (incorrect trading partner) and 080 (duplicate trade) (reference.md §5). A reversal is
therefore cited under §80.1452(d), and the reason it carries under §80.1452(c)(13); that the
party giving RINs back must hold them on the date is §80.1428's own rule (RINS-NOT-HELD).
"""

from __future__ import annotations

from datetime import date

from ledger.domain.emts import RETIREMENT_REASONS, TRADE_REASONS, TradeReason, find_reason
from ledger.domain.reversals import Original, Reversible
from ledger.rules.catalogue import Rule

REVERSE_ORIGINAL = Rule(
    "REVERSE-ORIGINAL", "§80.1452(d)",
    "`command` names an applied `retire`, fast-path `transfer`, or the `sell` of a completed "
    "trade (EMTS unretire and remedial trades)",
)
REVERSE_PARTY = Rule(
    "REVERSE-PARTY", "§80.1452(d)",
    "a reversal is submitted by the party that retired the RINs or gave them in the trade",
)
REVERSE_ONCE = Rule(
    "REVERSE-ONCE", "§80.1452(d)",
    "a command is reversed at most once",
)
REVERSE_DATE = Rule(
    "REVERSE-DATE", "§80.1452(d)",
    "a reversal is dated on or after the command it reverses",
)
REVERSE_REASON = Rule(
    "REVERSE-REASON", "§80.1452(c)(13)",
    "a reversed retirement carries the retirement's own reason code; a reversed trade a "
    "remedial buy/sell reason, 030 (incorrect partner) or 080 (duplicate trade)",
)
RULES = (REVERSE_ORIGINAL, REVERSE_PARTY, REVERSE_ONCE, REVERSE_DATE, REVERSE_REASON)

#: the EMTS buy/sell reasons a reversed trade may carry (reference.md §5)
REMEDIAL = (TradeReason.REMEDIAL_PARTNER, TradeReason.REMEDIAL_DUPLICATE)


def check_original(original: Original | None, command: str) -> Original:
    """§80.1452(d): the id names an applied retirement, fast-path transfer or sell."""
    found = REVERSE_ORIGINAL.require(original, f"no applied command has the id {command}",
                                     "command")
    REVERSE_ORIGINAL.check(
        found.kind in tuple(Reversible),
        f"{command} is a {found.kind}: only a retire, a transfer or the sell of a completed "
        "trade is reversed" + (" (name the sell's id)" if found.kind == "buy" else ""),
        "command",
    )
    return found


def check_party(original: Original, is_giver: bool, party: str) -> None:
    """§80.1452(d): the party that retired, or gave the RINs, reverses."""
    who = "retired them" if original.kind == Reversible.RETIRE else "gave the RINs"
    REVERSE_PARTY.check(
        is_giver,
        f"{original.kind} {original.id} is not party {party}'s: the party that {who} reverses it",
        "party",
    )


def check_completed(original: Original) -> None:
    """§80.1452(d): only a completed trade moved RINs to send back."""
    REVERSE_ORIGINAL.check(
        original.kind != Reversible.SELL or original.status == "completed",
        f"sell {original.id} is {original.status}, not completed: nothing moved to reverse",
        "command",
    )


def check_once(reversed_on: date | None, command: str) -> None:
    """§80.1452(d): a command is reversed once."""
    REVERSE_ONCE.check(
        reversed_on is None,
        f"{command} was reversed already, on {reversed_on.isoformat() if reversed_on else ''}",
        "command",
    )


def check_date(on: date, original: Original) -> None:
    """§80.1452(d): nothing is reversed before it happened."""
    assert original.on is not None
    REVERSE_DATE.check(
        on >= original.on,
        f"a reversal dated {on.isoformat()} is before {original.kind} {original.id}'s date "
        f"{original.on.isoformat()}",
        "date",
    )


def reversal_code(original: Original, reason: str) -> int:
    """§80.1452(c)(13): the EMTS code a reversal carries: a retirement's own code (named by its
    word or code), or 030 / 080 for a trade."""
    if original.kind == Reversible.RETIRE:
        named = find_reason(RETIREMENT_REASONS, reason)
        REVERSE_REASON.check(
            named is not None and named.code == original.reason_code,
            f"a reversed retirement carries the retirement's own reason, "
            f"{original.reason_code:03d} ({original.reason}), not {reason!r}",
            "reason",
        )
        assert original.reason_code is not None
        return original.reason_code
    code = remedial_code(reason)
    REVERSE_REASON.check(
        code is not None,
        f"a reversed trade carries a remedial buy/sell reason, 030 (remedial_partner) or 080 "
        f"(remedial_duplicate), not {reason!r}",
        "reason",
    )
    assert code is not None
    return code


def remedial_code(reason: str) -> int | None:
    """The EMTS code of a remedial buy/sell reason named by word or code ("030", "30"), else
    None."""
    for word in REMEDIAL:
        code = TRADE_REASONS[word]
        digits = reason.isascii() and reason.isdigit()
        if reason == word or (digits and int(reason) == code):
            return code
    return None
