"""§80.1452(b)-(c) deadlines as the late report counts them, worked by hand on the 2024
calendar (weekends and US federal holidays as observed excluded): 5 business days for a
generation, separation, sell or retirement, 10 for a buy; a fast-path transfer is both."""

from __future__ import annotations

from datetime import UTC, date, datetime
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ledger.domain.business_days import business_days_after
from projections import late
from projections.batch import Batch
from projections.facts import Fact


def fact(kind: str, effective: str, recorded: str, **event: Any) -> Fact:
    """A fact of `kind` dated `effective` whose event the ledger recorded at noon UTC on
    `recorded` (the fields the late report reads, and no others)."""
    moment = datetime.fromisoformat(f"{recorded}T12:00:00").replace(tzinfo=UTC)
    fields = {"timestamp": moment, "client_id": f"c-{kind}", "postings": None, **event}
    return Fact(7, "2001", kind, SimpleNamespace(**fields), effective, [], [], None)


def row(one: Fact) -> tuple[Any, ...]:
    batch = Batch()
    late.project(one, batch)
    (only,) = batch.rows[late.LATE]
    return only


# Friday 22 November 2024. Business days after it: Mon 25, Tue 26, Wed 27 (1-3), Thursday 28
# is Thanksgiving (a federal holiday, not counted), Fri 29 (4), Mon 2 December (5), Tue 3 (6).
@pytest.mark.parametrize(("recorded", "days", "is_late"), [
    ("2024-11-22", 0, 0),   # the same day
    ("2024-11-24", 0, 0),   # Sunday: no business day yet
    ("2024-11-29", 4, 0),   # Thanksgiving skipped
    ("2024-12-02", 5, 0),   # the fifth business day is still within the deadline
    ("2024-12-03", 6, 1),   # the sixth is late
])
def test_a_generation_is_due_within_five_business_days(recorded: str, days: int,
                                                       is_late: int) -> None:
    got = row(fact("generated", "2024-11-22", recorded))
    assert got[3:] == ("generate", "2024-11-22", recorded, days, 5, is_late)


# Friday 13 December 2024: Mon 16 … Fri 20 (1-5), Mon 23, Tue 24 (6, 7), Wednesday 25 is
# Christmas, Thu 26, Fri 27 (8, 9), Mon 30 (10), Tue 31 (11). A buy has 10 (§80.1452(c)).
@pytest.mark.parametrize(("recorded", "days", "is_late"), [
    ("2024-12-30", 10, 0), ("2024-12-31", 11, 1),
])
def test_a_buy_is_due_within_ten_business_days(recorded: str, days: int, is_late: int) -> None:
    got = row(fact("trade_posted", "2024-12-13", recorded, side="buy"))
    assert got[3:] == ("buy", "2024-12-13", recorded, days, 10, is_late)


def test_a_fast_path_transfer_is_a_sell_for_the_seller_and_a_buy_for_the_buyer() -> None:
    # 1 July 2024 (Monday) to Monday 8 July: Tue 2, Wed 3, Thursday 4 July is Independence Day,
    # Fri 5, Mon 8: 4 business days; to Wednesday 10 July: 6.
    out = row(fact("transferred_out", "2024-07-01", "2024-07-10"))
    into = row(fact("transferred_in", "2024-07-01", "2024-07-10"))
    assert out[3:] == ("sell", "2024-07-01", "2024-07-10", 6, 5, 1)   # a sell: late
    assert into[3:] == ("buy", "2024-07-01", "2024-07-10", 6, 10, 0)  # a buy: in time


def test_a_two_sided_trades_transfer_events_are_not_submissions() -> None:
    """Its sell and buy postings are the submissions; the transfer they complete is not."""
    batch = Batch()
    late.project(fact("transferred_out", "2024-07-01", "2024-07-10", postings=["s", "b"]), batch)
    assert batch.rows[late.LATE] == []


def test_the_recorded_day_is_the_utc_day() -> None:
    """11 pm in New York on Friday 22 November is Saturday 23 November UTC: still 0 days."""
    moment = datetime(2024, 11, 23, 4, 0, tzinfo=UTC)
    one = Fact(1, "1001", "separated", SimpleNamespace(
        timestamp=moment, client_id="s", postings=None), "2024-11-22", [], [], None)
    assert row(one)[3:] == ("separate", "2024-11-22", "2024-11-23", 0, 5, 0)
    assert date.fromisoformat(row(one)[5]) == date(2024, 11, 23)


@given(st.dates(date(2009, 1, 1), date(2036, 12, 31)), st.integers(-10, 5_000))
def test_the_fast_count_equals_the_day_by_day_count(start: date, span: int) -> None:
    """`late.elapsed` counts in constant time what `business_days_after` counts day by day."""
    end = date.fromordinal(start.toordinal() + span)
    assert late.elapsed(start, end) == business_days_after(start, end)
