"""Business days as EMTS counts them: weekdays that are not US federal holidays as observed.

§80.1452(b)-(c) give each submission a number of business days; a pending EMTS posting expires
when it has waited longer than the window (EMTS practice: 10 business days, the buyer's
§80.1452(c) deadline). Holidays come from the `holidays` package, not a hand-written list.
"""

from __future__ import annotations

from datetime import date, timedelta
from functools import lru_cache

import holidays

ONE_DAY = timedelta(days=1)


@lru_cache(maxsize=256)
def federal_holidays(year: int) -> frozenset[date]:
    """The US federal holidays of `year` as observed (a Saturday's on Friday, a Sunday's on
    Monday), per the `holidays` package."""
    return frozenset(holidays.country_holidays("US", years=year, observed=True))


def is_business_day(day: date) -> bool:
    return day.weekday() < 5 and day not in federal_holidays(day.year)


def business_days_after(start: date, end: date) -> int:
    """How many business days lie after `start` up to and including `end` (0 if none)."""
    count, day = 0, start + ONE_DAY
    while day <= end:
        count += is_business_day(day)
        day += ONE_DAY
    return count
