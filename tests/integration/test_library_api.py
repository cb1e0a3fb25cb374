"""Issue 14, library: typed results and rows, the errors that are not refusals, and positions
as of a date and as known at a log position read from the event store alone.

The market (worked by hand): 1001 generates 10,000 D6 gallon-RINs for 10,000 gal of ethanol
(EV 1.0, §80.1415(b)) on 2024-01-10; sells 4,000 with 1,600 gal to 2001 on 2024-02-01; then a
back-dated sale of 1,000 with 400 gal, effective 2024-01-20, is recorded last.
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from typing import Any

import pytest
from conftest import Store

from ledger import (
    BadArgument,
    HeldBlock,
    Holding,
    LibraryError,
    Refusal,
    StoreError,
    UnknownParty,
)
from projections import Views

PRODUCER, BLENDER = "1001", "2001"
BATCH = f"2024{PRODUCER}2000100001"  # YYYYCCCCFFFFFBBBBB, §80.1425(e)
MARKET: list[dict[str, Any]] = [
    {"type": "register_party", "party": PRODUCER, "name": "P", "roles": ["producer"],
     "facilities": ["20001"]},
    {"type": "register_party", "party": BLENDER, "name": "B", "roles": ["blender"]},
    {"type": "generate", "date": "2024-01-10", "party": PRODUCER, "facility": "20001",
     "batch": "00001", "fuel": "ethanol", "d_code": 6, "volume": 10_000},
    {"type": "transfer", "date": "2024-02-01", "from": PRODUCER, "to": BLENDER,
     "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": 4_000}, "volume": 1_600},
]
BACK_DATED = {"type": "transfer", "date": "2024-01-20", "from": PRODUCER, "to": BLENDER,
              "rins": {"d_code": 6, "vintage": 2024, "k": 1, "quantity": 1_000}, "volume": 400}


def held(party: str, k: int, n: int) -> Holding:
    return Holding(party=party, d_code=6, vintage=2024, k=k, gallon_rins=n)


@pytest.fixture
def market(store: Store) -> Any:
    with store.ledger() as ledger:
        assert [r.status for r in ledger.apply_many(MARKET)] == ["applied"] * 4
        before = ledger.position()
        assert ledger.apply(BACK_DATED).status == "applied"
        yield ledger, before


def test_a_refusal_is_typed_with_rule_citation_field_line_and_message(store: Store) -> None:
    with store.ledger() as ledger:
        assert ledger.apply(MARKET[0]).refusal is None  # applied: nothing refused
        bad = {**MARKET[2], "equivalence_value": 3.0}
        result = ledger.apply(bad, line=7)
        assert result.refusal == Refusal(
            line=7, rule="GEN-EV", citation="§80.1415(b)", field="equivalence_value",
            message="ethanol has equivalence value 1.0, not 3.0",
        )
        assert str(result.refusal) == (
            "line 7: §80.1415(b): ethanol has equivalence value 1.0, not 3.0")
        malformed = ledger.apply('{"type": "transfer"', line=8).refusal
        assert malformed is not None and (malformed.rule, malformed.citation) == (None, "format")
        assert ledger.position() == 1  # only the registration was stored


def test_holdings_and_blocks_are_typed_rows(market: Any) -> None:
    ledger, _ = market
    # 1001: 10,000 − 4,000 − 1,000 = 5,000 K=1; 2001: 4,000 + 1,000 = 5,000
    assert ledger.holdings(PRODUCER) == [held(PRODUCER, 1, 5_000)]
    [row] = ledger.holdings(BLENDER)
    assert isinstance(row, Holding) and row.gallon_rins == 5_000 and row["k"] == 1
    blocks = ledger.blocks(BLENDER)
    assert all(isinstance(b, HeldBlock) for b in blocks)
    # FIFO by lowest serial: the 2024-02-01 sale took serials 1-4,000, the later one
    # 4,001-5,000: one contiguous run, one block
    assert [(b.rin, b.gallon_rins) for b in blocks] == [(f"1{BATCH}106{1:08d}{5_000:08d}", 5_000)]


def test_positions_as_of_a_date_and_as_known_at_a_position(market: Any) -> None:
    ledger, before = market
    assert ledger.holdings(BLENDER, as_of="2024-01-15") == []  # nothing bought yet
    assert ledger.holdings(BLENDER, as_of=date(2024, 1, 25)) == [held(BLENDER, 1, 1_000)]
    assert ledger.holdings(BLENDER, as_of="2024-02-05") == [held(BLENDER, 1, 5_000)]
    # as known before the back-dated sale was recorded: on 2024-01-25 nothing, later 4,000
    assert ledger.holdings(BLENDER, as_of="2024-01-25", known_at=before) == []
    assert ledger.holdings(BLENDER, as_of="2024-02-05", known_at=before) == [
        held(BLENDER, 1, 4_000)]
    assert ledger.holdings(PRODUCER, known_at=before) == [held(PRODUCER, 1, 6_000)]
    assert ledger.holdings(PRODUCER, as_of="2024-01-10") == [held(PRODUCER, 1, 10_000)]
    # a head names its position too
    assert ledger.holdings(PRODUCER, known_at=ledger.head(before)) == [held(PRODUCER, 1, 6_000)]
    assert [b.rin for b in ledger.blocks(BLENDER, as_of="2024-01-25")] == [
        f"1{BATCH}106{4_001:08d}{5_000:08d}"]
    # the read side, built from the same log, answers the same
    views = Views(ledger)
    for as_of in (date(2024, 1, 15), date(2024, 1, 25), date(2024, 2, 5)):
        for known in (before, None):
            for party in (PRODUCER, BLENDER):
                assert ledger.holdings(party, as_of, known) == views.holdings(party, as_of, known)


def test_a_snapshot_reads_every_party_at_one_position(market: Any) -> None:
    ledger, before = market
    at = ledger.at(before)
    assert (at.position, at.parties()) == (before, [PRODUCER, BLENDER])
    assert at.holdings() == [held(PRODUCER, 1, 6_000), held(BLENDER, 1, 4_000)]
    ledger.apply({"type": "register_party", "party": "3001", "name": "O",
                  "roles": ["obligated_party"]})
    assert at.parties() == [PRODUCER, BLENDER]  # a position does not move
    assert ledger.snapshot().parties() == [PRODUCER, BLENDER, "3001"]
    with pytest.raises(UnknownParty, match="party 3001 is not registered"):
        at.holdings("3001")


def test_unknown_parties_and_bad_arguments_raise_named_library_errors(market: Any) -> None:
    ledger, _ = market
    for ask in (ledger.holdings, ledger.blocks, ledger.party,
                lambda p: ledger.holdings(p, as_of="2024-01-01"), ledger.snapshot().blocks):
        with pytest.raises(UnknownParty, match="party 9999 is not registered") as raised:
            ask("9999")
        assert isinstance(raised.value, LibraryError) and isinstance(raised.value, KeyError)
        assert raised.value.party == "9999"
    bad: list[tuple[str, dict[str, Any]]] = [
        ("party", {"party_id": 1001}), ("party", {"party_id": "10O1"}),
        ("as_of", {"party_id": PRODUCER, "as_of": "2024-02-30"}),
        ("as_of", {"party_id": PRODUCER, "as_of": "yesterday"}),
        ("as_of", {"party_id": PRODUCER, "as_of": "20240101"}),
        ("as_of", {"party_id": PRODUCER, "as_of": 20240101}),
        ("as_of", {"party_id": PRODUCER, "as_of": datetime(2024, 1, 1)}),
        ("known_at", {"party_id": PRODUCER, "known_at": -1}),
        ("known_at", {"party_id": PRODUCER, "known_at": True}),
        ("known_at", {"party_id": PRODUCER, "known_at": "3"}),
        ("known_at", {"party_id": PRODUCER, "known_at": ledger.position() + 1}),
    ]
    for argument, kwargs in bad:
        with pytest.raises(BadArgument) as raised:
            ledger.holdings(**kwargs)
        assert raised.value.argument == argument and str(raised.value).startswith(argument)
        assert isinstance(raised.value, (LibraryError, ValueError))
    for after in (-1, "0", None):
        with pytest.raises(BadArgument, match=r"^after"):
            next(ledger.follow(after=after))  # type: ignore[arg-type]
    for timeout in (-1, "2", True):
        with pytest.raises(BadArgument, match=r"^timeout"):
            next(ledger.follow(timeout=timeout))  # type: ignore[arg-type]
    for interval in (0, "0.1", None):
        with pytest.raises(BadArgument, match=r"^interval"):
            next(ledger.follow(interval=interval))  # type: ignore[arg-type]


def test_store_failures_are_library_errors() -> None:
    assert issubclass(StoreError, LibraryError)


def test_quarterly_rows_are_typed_consistently(market: Any) -> None:
    ledger, _ = market
    rows = Views(ledger).quarter_ends(2024, BLENDER)
    # 31 Mar: 5,000 assigned RINs with 1,600 + 400 = 2,000 gal: limit 2.5 × 2,000 = 5,000
    first = rows[0]
    assert (first.date, first.assigned_rins, first.volume, first.limit, first.excess,
            first.ok) == (date(2024, 3, 31), 5_000, Decimal(2_000), Decimal(5_000), 0, True)
    assert [r.date for r in rows] == [date(2024, 3, 31), date(2024, 6, 30), date(2024, 9, 30),
                                      date(2024, 12, 31)]
    for row in Views(ledger).quarterly(2024):
        assert [type(row[c]) for c in ("party", "date", "assigned_rins", "volume", "limit",
                                       "excess", "ok")] == [
            str, date, int, Decimal, Decimal, Decimal, bool]
