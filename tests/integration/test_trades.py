"""Two-sided EMTS trades through the Ledger on a real store (§80.1452): a sell and a buy complete
when they agree, a disagreeing `match` is refused naming every field, reservations hold until a
posting is completed, cancelled, denied or expired, and everything reloads and verifies.

The hand-worked market: 1001 generates 10,000 gallons of ethanol on 2 January 2024 (EV 1.0,
serials 1..10,000, §80.1426(f)(1)); 2001 and 3001 buy from it.
"""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from ledger import Ledger
from ledger.domain.commands import validate_command
from ledger.domain.party import Party
from ledger.domain.trade_book import Status
from projections import Views
from projections.facts import Fact
from projections.invariants import Replay
from tests.applying import ok, refused
from tests.postings import postings, status

REGISTER = [
    {"type": "register_party", "party": "1001", "name": "Prairie", "roles": ["producer"],
     "facilities": ["20001"]},
    {"type": "register_party", "party": "2001", "name": "Gulf", "roles": ["blender"]},
    {"type": "register_party", "party": "3001", "name": "Lakeside", "roles": ["obligated_party"]},
    {"type": "generate", "id": "g1", "date": "2024-01-02", "party": "1001", "facility": "20001",
     "batch": "00001", "fuel": "ethanol", "d_code": 6, "volume": 10_000},
]
CODE = "1202410012000100001106{:08d}{:08d}"  # K=1, 2024, 1001, 20001, 00001, RR 10, D6


def sell(pid: str, quantity: int = 4_000, on: str = "2024-01-05", **extra: Any
         ) -> dict[str, Any]:
    return {"type": "sell", "id": pid, "date": on, "party": "1001", "to": "2001",
            "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": quantity},
            "volume": quantity, **extra}


def buy(pid: str, quantity: int = 4_000, on: str = "2024-01-05", **extra: Any
        ) -> dict[str, Any]:
    return {"type": "buy", "id": pid, "date": on, "party": "2001", "from": "1001",
            "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": quantity},
            "volume": quantity, **extra}


@pytest.fixture
def ledger(store: Any) -> Any:
    """The market on each store (SQLite, and PostgreSQL when RIN_TEST_POSTGRES_URL is set)."""
    with store.ledger() as opened:
        for line in REGISTER:
            assert opened.apply(line).status == "applied"
        yield opened


def held(ledger: Ledger, party: str) -> dict[tuple[int, int, int], int]:
    return ledger.party(party).holdings.totals()


def test_sell_then_buy_completes_with_the_reserved_ranges(ledger: Ledger) -> None:
    ok(ledger, sell("S1", price="1.10"))
    assert status(ledger, "1001", "S1") is Status.PENDING
    assert held(ledger, "1001") == {(6, 2024, 1): 10_000}  # reserved, still owned
    # the reserved serials 1..4,000 cannot go elsewhere, even by the fast path
    refused(ledger, {"type": "transfer", "date": "2024-01-08", "from": "1001", "to": "3001",
                     "rins": {"code": CODE.format(1, 10)}, "volume": 10}, "TRADE-RESERVED")
    ok(ledger, buy("B1", price="1.05"))  # no `match`: the oldest agreeing sell completes
    assert (status(ledger, "1001", "S1"), status(ledger, "2001", "B1")) == (
        Status.COMPLETED, Status.COMPLETED)
    assert held(ledger, "1001") == {(6, 2024, 1): 6_000}
    assert held(ledger, "2001") == {(6, 2024, 1): 4_000}
    assert [b["rin"] for b in ledger.blocks("2001")] == [CODE.format(1, 4_000)]
    buyer = ledger.party("2001")
    assert buyer.fuel.balance(date(2024, 1, 5)) == 4_000  # K=1: its fuel came with it
    out = [e for e in ledger.log.events() if type(e.event).__name__ == "TransferredOut"]
    assert [(e.event.postings, e.event.client_id) for e in out] == [(["S1", "B1"], "B1")]
    assert ledger.audit() == []


def test_buy_first_then_the_sell_picks_and_moves_at_once(ledger: Ledger) -> None:
    ok(ledger, buy("B1", 2_500, rins={"d_code": 6, "vintage": 2024, "k": 1, "quantity": 2_500,
                                      "company": "1001", "batch": "00001"}))
    assert held(ledger, "2001") == {}
    ok(ledger, sell("S1", 2_500, match="B1"))
    assert status(ledger, "2001", "B1") is Status.COMPLETED
    assert [b["rin"] for b in ledger.blocks("2001")] == [CODE.format(1, 2_500)]
    assert ledger.party("1001").trades.reserved_volume() == 0
    assert ledger.audit() == []


def test_a_disagreeing_match_is_refused_naming_every_differing_field(ledger: Ledger) -> None:
    ok(ledger, sell("S1"))
    result = refused(ledger, {**buy("B1", 3_000, on="2024-01-08"), "volume": 1_200,
                              "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": 3_000},
                              "match": "S1"}, "TRADE-MATCH")
    assert result.citation == "§80.1452(c)(3)-(c)(11)"
    assert result.field == "match"
    assert "differ in quantity, date, volume:" in result.error
    # the same buy without `match` disagrees with every pending sell, so it waits
    ok(ledger, {**buy("B2", 3_000, on="2024-01-08"), "volume": 1_200})
    assert (status(ledger, "1001", "S1"), status(ledger, "2001", "B2")) == (
        Status.PENDING, Status.PENDING)


def test_match_must_name_a_pending_posting_between_the_two(ledger: Ledger) -> None:
    ok(ledger, sell("S1"), buy("B1", match="S1"))
    assert refused(ledger, buy("B2", match="S1"), "TRADE-MATCH-PENDING").error.endswith(
        "sell S1 is completed, not pending")
    refused(ledger, buy("B3", match="nothing"), "TRADE-MATCH-PENDING")
    # a sell to 2001 cannot be answered by 3001
    ok(ledger, sell("S2", 1_000))
    refused(ledger, {**buy("B4", 1_000, match="S2"), "party": "3001"}, "TRADE-MATCH-PENDING")


def test_without_match_the_oldest_agreeing_posting_completes(ledger: Ledger) -> None:
    ok(ledger, sell("S1", 1_000), sell("S2", 1_000), buy("B1", 1_000))
    assert (status(ledger, "1001", "S1"), status(ledger, "1001", "S2")) == (
        Status.COMPLETED, Status.PENDING)
    assert [b["rin"] for b in ledger.blocks("2001")] == [CODE.format(1, 1_000)]


def test_cancel_and_deny_release_the_reservation(ledger: Ledger) -> None:
    ok(ledger, sell("S1", 10_000))
    refused(ledger, sell("S2", 1), "TRADE-RESERVED")
    refused(ledger, {"type": "cancel_trade", "id": "C0", "date": "2024-01-06", "party": "2001",
                     "trade": "S1"}, "TRADE-CANCEL")  # only its poster cancels it
    refused(ledger, {"type": "deny_trade", "id": "D0", "date": "2024-01-06", "party": "1001",
                     "trade": "S1"}, "TRADE-DENY")  # only its partner denies it
    ok(ledger, {"type": "deny_trade", "id": "D1", "date": "2024-01-06", "party": "2001",
                "trade": "S1"})
    posting = postings(ledger, "1001")["S1"]
    assert (posting.status, posting.closing_reason_code) == (Status.DENIED, 50)
    # S1 held them on 5 January: the same day they cannot be reserved again
    refused(ledger, sell("S3", 10_000), "TRADE-RESERVED")
    ok(ledger, sell("S3", 10_000, on="2024-01-06"))  # released on the 6th: all of it again
    ok(ledger, {"type": "cancel_trade", "id": "C1", "date": "2024-01-06", "party": "1001",
                "trade": "S3"})
    assert postings(ledger, "1001")["S3"].closing_reason_code == 60
    refused(ledger, buy("B1", match="S3"), "TRADE-MATCH-PENDING")
    assert ledger.audit() == []


def test_completion_rechecks_what_a_transfer_checks(ledger: Ledger) -> None:
    """A finding of invalidity after the sell (§80.1431) stops its completion (§80.1460(b)(2))."""
    ok(ledger, sell("S1", 100),
       {"type": "invalidate", "date": "2024-01-06", "rin": CODE.format(1, 10),
        "reason": "improperly_generated"})
    refused(ledger, buy("B1", 100, match="S1"), "INVALID-TRANSFER")
    refused(ledger, {**buy("B2", 100), "party": "9999"}, "REG-UNREGISTERED")


def test_expiry_counts_business_days_with_the_holiday(tmp_path: Any) -> None:
    """Posted Friday 5 January 2024; 15 January is Martin Luther King Jr. Day, so the tenth
    business day after is Monday 22 January (still pending) and the eleventh Tuesday 23."""
    with Ledger(tmp_path / "d") as ledger:
        ok(ledger, *REGISTER, sell("S1"), buy("B1", 1_000))
        ok(ledger, {"type": "expire_trades", "id": "E1", "date": "2024-01-22"})
        assert status(ledger, "1001", "S1") is Status.PENDING
        ok(ledger, {"type": "expire_trades", "id": "E2", "date": "2024-01-23"})
        assert (status(ledger, "1001", "S1"), status(ledger, "2001", "B1")) == (
            Status.EXPIRED, Status.EXPIRED)
        assert ledger.party("1001").trades.reserved_volume() == 0
        ok(ledger, sell("S2", 10_000, on="2024-01-23"))  # released
        assert ledger.apply({"type": "expire_trades", "id": "E2", "date": "2024-01-23"}
                            ).status == "duplicate"
        assert ledger.audit() == []


def test_the_window_is_a_setting(tmp_path: Any) -> None:
    with Ledger(tmp_path / "d", trade_window=1) as ledger:
        ok(ledger, *REGISTER, sell("S1"))  # Friday 5 January 2024
        ok(ledger, {"type": "expire_trades", "date": "2024-01-08"})  # 1 business day: pending
        assert status(ledger, "1001", "S1") is Status.PENDING
        ok(ledger, {"type": "expire_trades", "date": "2024-01-09"})
        assert status(ledger, "1001", "S1") is Status.EXPIRED


def test_postings_survive_reopening_and_a_batch(tmp_path: Any) -> None:
    with Ledger(tmp_path / "d") as ledger:
        results = list(ledger.apply_many([*REGISTER, sell("S1"),
                                          {"type": "expire_trades", "date": "2024-02-01"}]))
        assert [r.status for r in results] == ["applied"] * 6
        assert status(ledger, "1001", "S1") is Status.EXPIRED  # posted in the same batch
    with Ledger(tmp_path / "d") as ledger:
        ok(ledger, sell("S2"))  # dated within S1's life (5 January to 1 February): 4,001..
        refused(ledger, sell("S3", 2_001), "TRADE-RESERVED")
    with Ledger(tmp_path / "d") as ledger:
        assert ledger.party("1001").trades.reserved(
            ledger.party("1001").trades.open["S2"].rins[0].key).intervals == (
                (4_001, 8_000),)
        assert ledger.apply(sell("S2")).status == "duplicate"
        assert ledger.audit() == []


def test_a_posting_id_is_required(ledger: Ledger) -> None:
    line = sell("S1")
    del line["id"]
    result = ledger.apply(line)
    assert (result.status, result.field) == ("rejected", "id")


STORE_R2 = Path(__file__).resolve().parents[1] / "data" / "store_r2"


def test_a_store_written_before_postings_trades_two_sided_and_verifies(tmp_path: Any) -> None:
    """tests/data/store_r2: 2001 (v3 snapshot, Transferred v2 events) holds 20,000 K=1 D6 and
    1001 56,000; a sell and a buy between them move the exact ranges and everything verifies."""
    shutil.copytree(STORE_R2, tmp_path / "r2")
    with Ledger(tmp_path / "r2") as ledger:
        stored = [e for e in ledger.log.history(Party.create_id("2001"))
                  if isinstance(e, Party.TransferredIn | Party.TransferredOut)]
        assert stored and all(e.postings is None for e in stored)  # upcast v2 → v3
        assert ledger.party("2001").trades.open == {}  # upcast v3 → v4
        ok(ledger, {"type": "sell", "id": "S-r2", "date": "2024-12-02", "party": "2001",
                    "to": "3001", "rins": {"d_code": 6, "vintage": 2024, "k": 2, "quantity": 50}},
           {"type": "buy", "id": "B-r2", "date": "2024-12-02", "party": "3001", "from": "2001",
            "rins": {"d_code": 6, "vintage": 2024, "k": 2, "quantity": 50}, "price": "0.9"})
        assert ledger.party("3001").holdings.totals()[(6, 2024, 2)] == 1_900 + 50
        assert ledger.audit() == []


def test_the_trades_report_and_reserved_blocks(ledger: Ledger, store: Any) -> None:
    ok(ledger, sell("S1", price="1.10", broker="5001"), sell("S2", 1_000), buy("B1", 1_000),
       {"type": "deny_trade", "id": "D1", "date": "2024-01-08", "party": "2001",
        "trade": "S1"},
       sell("S3", 500, on="2024-01-09"))
    views = Views(ledger, store.data / "views.sqlite")  # PostgreSQL's default folder is shared
    rows = views.trades()
    assert [(r["id"], r["side"], r["status"], r["counterpart"], r["closing_reason"])
            for r in rows] == [
        ("S1", "sell", "denied", None, "050"), ("S2", "sell", "completed", "B1", None),
        ("B1", "buy", "completed", "S2", None), ("S3", "sell", "pending", None, None)]
    assert rows[0] | {"closed_on": None} == {
        "id": "S1", "side": "sell", "party": "1001", "partner": "2001", "status": "denied",
        "date": "2024-01-05", "d_code": 6, "vintage": 2024, "k": 1, "quantity": 4_000,
        "volume": "4000", "match": None, "price": "1.10", "gallon_price": None,
        "reason": "010", "broker": "5001", "ptd": None, "closed_on": None,
        "closing_reason": "050", "counterpart": None}
    assert [r["id"] for r in views.trades(party="2001", status="pending")] == ["S3"]
    assert views.trades(party="3001") == []
    # S1 reserved 1..4,000 (FIFO) until denied on the 8th; S2 moved the next free 4,001..5,000
    # to 2001; S3, posted on the 9th, reserves the lowest free serials again, 1..500: the
    # seller's rows are split where a reservation starts and ends
    def seller_blocks(on: date | None = None) -> list[tuple[str, bool]]:
        return [(b["rin"][22:], b["reserved"])
                for b in views.holdings(party="1001", blocks=True, as_of=on)]

    assert seller_blocks() == [("0000000100000500", True), ("0000050100004000", False),
                               ("0000500100010000", False)]
    assert seller_blocks(date(2024, 1, 8)) == [("0000000100004000", False),
                                               ("0000500100010000", False)]
    assert seller_blocks(date(2024, 1, 7)) == [("0000000100004000", True),
                                               ("0000500100010000", False)]
    assert views.verify() == []


def test_verify_finds_a_range_reserved_twice_or_moved_while_reserved() -> None:
    """Events the rules would refuse, made by hand: `verify`'s replay names each (§80.1452)."""
    seller = Party.register("1001", "Prairie", ["producer"], ["20001"])
    seller.generate(validate_command(REGISTER[3]))
    posted = seller.post_sell(validate_command(sell("S1", 100)), lambda b: 0)
    block = posted.rins[0]
    seller.trigger_event(  # the same ranges again, past the rules
        Party.TradePosted, effective_date=date(2024, 1, 5), client_id="S2", side="sell",
        partner="2001", d_code=6, vintage=2024, k=1, quantity=100, volume=None, company=None,
        facility=None, batch=None, rins=[block], price=None, gallon_price=None, ptd=None,
        broker=None, reason_code=10, match=None)
    seller.trigger_event(
        Party.TransferredOut, effective_date=date(2024, 1, 6), client_id=None, rins=[block],
        volume=None, ptd=None, price=None, trade_reason_code=10, to_party="2001", postings=None)
    replay = Replay()
    for number, event in enumerate(seller.collect_events(), 1):
        replay.run(Fact.of(number, "1001", event))
    assert replay.problems == [
        f"notification 5 (trade_posted, party 1001): {block.code} reserved twice (also by S1)",
        f"notification 6 (transferred_out, party 1001): {block.code} left on 2024-01-06 while "
        "reserved by sell S1, S2",
    ]
