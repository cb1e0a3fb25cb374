"""Red team on closed-posting lookups (ledger/application/originals.py, §80.1452): a Party keeps
only its pending postings, so a `match`, `cancel_trade`, `deny_trade` or `reverse` naming a
posting that ended, was never posted, is another party's, or was reversed is answered from the
log. Each refusal names its line, field, rule and paragraph and stores nothing, identically on
a store of release 2 (tests/data/store_r3, records as `CommandRecord` events) and on a new store
made from the same lines (records as rows of `rin_commands`).

tests/data/make_store_r3.py, checked by hand: 2001 holds K=1 D6 2024 RINs; it sold 1,000 to
3001 (S1), which 3001's B1 matched, completing both on 2024-01-05; t0, g1, sep1, t2, r1 are
a transfer, a generation, a separation, a transfer and a retirement.
"""

from __future__ import annotations

import inspect
import shutil
from pathlib import Path
from typing import Any

import pytest

from ledger.application.ledger import Ledger
from ledger.application.originals import CLOSINGS, KINDS, OPENINGS
from ledger.domain.batch_status import BatchStatus
from ledger.domain.invalidation import BatchInvalidation
from ledger.domain.party import Party
from tests.data.make_store_r3 import COMMANDS

DATA = Path(__file__).parents[2] / "data"
ON = "2025-03-01"
RINS = {"d_code": 6, "vintage": 2024, "k": 1, "quantity": 1_000}


def buy(cid: str, match: str) -> dict[str, Any]:
    return {"type": "buy", "id": cid, "date": ON, "party": "3001", "from": "2001",
            "rins": RINS, "volume": 1_000, "match": match}


def cancel(cid: str, party: str, trade: str) -> dict[str, Any]:
    return {"type": "cancel_trade", "id": cid, "date": ON, "party": party, "trade": trade}


def deny(cid: str, party: str, trade: str) -> dict[str, Any]:
    return {"type": "deny_trade", "id": cid, "date": ON, "party": party, "trade": trade}


def reverse(cid: str, party: str, command: str) -> dict[str, Any]:
    return {"type": "reverse", "id": cid, "date": ON, "party": party, "command": command,
            "reason": "030"}


@pytest.fixture(params=["release 2 store", "new store"])
def ledger(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    data = tmp_path / "data"
    if request.param == "release 2 store":
        shutil.copytree(DATA / "store_r3", data)
        with Ledger(data) as opened:
            assert not opened._app.records_in_table()
            yield opened
        return
    with Ledger(data) as opened:
        assert all(r.status == "applied" for r in opened.apply_many(COMMANDS))
        assert opened._app.records_in_table()
        yield opened


def refused(ledger: Ledger, cmd: dict[str, Any], rule: str, field: str, error: str) -> None:
    before = ledger.position()
    result = ledger.apply(cmd, 7)
    assert (result.status, result.line, result.rule, result.field) == (
        "rejected", 7, rule, field), result
    assert result.error is not None and result.error.startswith("§80.1452(")
    assert result.error.endswith(error), result.error
    assert ledger.position() == before


ENDED = [
    (buy("B2", "S1"), "TRADE-MATCH-PENDING", "match", "sell S1 is completed, not pending"),
    (buy("B2", "t0"), "TRADE-MATCH-PENDING", "match",
     "t0 is not a sell posted by party 2001 to party 3001"),
    (buy("B2", "never"), "TRADE-MATCH-PENDING", "match",
     "never is not a sell posted by party 2001 to party 3001"),
    (cancel("C1", "2001", "S1"), "TRADE-CANCEL", "trade", "sell S1 is completed, not pending"),
    (cancel("C1", "3001", "B1"), "TRADE-CANCEL", "trade", "buy B1 is completed, not pending"),
    (cancel("C1", "3001", "S1"), "TRADE-CANCEL", "trade", "party 3001 has no posting S1"),
    (cancel("C1", "1001", "S1"), "TRADE-CANCEL", "trade", "party 1001 has no posting S1"),
    (cancel("C1", "2001", "t2"), "TRADE-CANCEL", "trade", "party 2001 has no posting t2"),
    (cancel("C1", "2001", "never"), "TRADE-CANCEL", "trade", "party 2001 has no posting never"),
    (deny("D1", "3001", "S1"), "TRADE-DENY", "trade", "sell S1 is completed, not pending"),
    (deny("D1", "2001", "B1"), "TRADE-DENY", "trade", "buy B1 is completed, not pending"),
    (deny("D1", "1001", "S1"), "TRADE-DENY", "trade", "no posting S1 names party 1001 as partner"),
    (deny("D1", "3001", "g1"), "TRADE-DENY", "trade", "no posting g1 names party 3001 as partner"),
    (deny("D1", "3001", "never"), "TRADE-DENY", "trade",
     "no posting never names party 3001 as partner"),
    (reverse("R9", "3001", "B1"), "REVERSE-ORIGINAL", "command",
     "B1 is a buy: only a retire, a transfer or the sell of a completed trade is reversed "
     "(name the sell's id)"),
    (reverse("R9", "1001", "S1"), "REVERSE-PARTY", "party",
     "sell S1 is not party 1001's: the party that gave the RINs reverses it"),
    (reverse("R9", "2001", "never"), "REVERSE-ORIGINAL", "command",
     "no applied command has the id never"),
    (reverse("R9", "2001", "sep1"), "REVERSE-ORIGINAL", "command",
     "sep1 is a separate: only a retire, a transfer or the sell of a completed trade is "
     "reversed"),
]


@pytest.mark.parametrize(("cmd", "rule", "field", "error"), ENDED,
                         ids=[f"{c['type']} {c.get('trade') or c.get('match') or c['command']}"
                              f" by {c['party']}" for c, *_ in ENDED])
def test_a_posting_that_ended_or_never_was_is_refused_alike_in_both_formats(
        ledger: Ledger, cmd: dict[str, Any], rule: str, field: str, error: str) -> None:
    refused(ledger, cmd, rule, field, error)


def test_a_sell_closed_by_a_reversal_stays_closed(ledger: Ledger) -> None:
    """S1 reversed: its RINs go back to 2001; then every lookup of S1 still finds it ended,
    a second reversal is refused once, and the reversal itself is not reversible, named by its
    command type (before: "R1 is a TradeReversedIn", the event class)."""
    held = ledger.party("2001").holdings.totals()
    result = ledger.apply(reverse("R1", "2001", "S1"))
    assert result.status == "applied", result
    assert ledger.party("2001").holdings.totals()[(6, 2024, 1)] == held[(6, 2024, 1)] + 1_000
    refused(ledger, reverse("R2", "2001", "S1"), "REVERSE-ONCE", "command",
            f"S1 was reversed already, on {ON}")
    refused(ledger, cancel("C1", "2001", "S1"), "TRADE-CANCEL", "trade",
            "sell S1 is completed, not pending")
    refused(ledger, deny("D1", "3001", "S1"), "TRADE-DENY", "trade",
            "sell S1 is completed, not pending")
    refused(ledger, buy("B2", "S1"), "TRADE-MATCH-PENDING", "match",
            "sell S1 is completed, not pending")
    refused(ledger, reverse("R3", "2001", "R1"), "REVERSE-ORIGINAL", "command",
            "R1 is a reverse: only a retire, a transfer or the sell of a completed trade is "
            "reversed")
    assert ledger.audit() == []


def test_an_expiry_is_named_as_one(tmp_path: Path) -> None:
    """The first event of `expire_trades` is a `TradeClosed` (expired): before, a reverse of
    it said "cancel_trade or deny_trade"."""
    with Ledger(tmp_path / "data") as ledger:
        assert all(r.status == "applied" for r in ledger.apply_many(COMMANDS[:6]))
        sell = {"type": "sell", "id": "S9", "date": "2024-01-05", "party": "2001",
                "to": "3001", "rins": RINS, "volume": 1_000}
        for cmd in (sell, {"type": "expire_trades", "id": "E1", "date": "2024-03-01"}):
            assert ledger.apply(cmd).status == "applied"
        result = ledger.apply(reverse("R1", "2001", "E1"))
    assert result.error is not None and result.error.endswith(
        "E1 is a expire_trades: only a retire, a transfer or the sell of a completed trade is "
        "reversed")


def domain_events() -> list[type[Any]]:
    """Every event class a command can store (concrete: each with a topic of its own)."""
    found = []
    for aggregate in (Party, BatchInvalidation, BatchStatus):
        for name, kind in vars(aggregate).items():
            if inspect.isclass(kind) and "TOPIC" in vars(kind) and name not in (
                    "Event", "Created", "Transferred", "Reversal"):
                found.append(kind)
    return found


def test_every_event_a_command_may_store_first_names_its_command() -> None:
    """What `reverse` says a non-reversible command was is a command `type`, never an event
    class name: each event class is mapped, or is one `of_event` reads itself."""
    read = {Party.Retired, Party.TradePosted, Party.TradeClosed}
    missing = [k.__name__ for k in domain_events() if k not in KINDS and k not in read]
    assert missing == []
    assert set(OPENINGS) <= set(KINDS)
    assert set(CLOSINGS) == {"completed", "cancelled", "denied", "expired"}
