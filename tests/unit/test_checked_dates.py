"""A date string checked once is not parsed again (ledger/domain/strict_types.py
`CHECKED_DATES`), and the memory changes no answer: refused strings stay refused however often
they come, accepted ones give the same date, and the memory stays bounded."""

from __future__ import annotations

from datetime import date

import pytest

from ledger.domain import strict_types
from ledger.domain.strict_types import check_date


@pytest.mark.parametrize("text", ["2024-02-30", "2007-12-31", "2100-01-01", "20240210",
                                  "2024-W06-6", "2024-1-05"])
def test_a_refused_date_is_refused_every_time(text: str) -> None:
    for _ in range(3):
        with pytest.raises(ValueError):
            check_date(text)
    assert text not in strict_types.CHECKED_DATES


def test_an_accepted_date_is_remembered_as_the_same_date() -> None:
    first = check_date("2024-02-29")
    assert first == date(2024, 2, 29)
    assert strict_types.CHECKED_DATES["2024-02-29"] == first
    assert check_date("2024-02-29") == first


def test_the_memory_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(strict_types, "DATES_REMEMBERED", 5)
    monkeypatch.setattr(strict_types, "CHECKED_DATES", {})
    for day in range(1, 29):
        assert check_date(f"2024-03-{day:02d}") == date(2024, 3, day)
        assert len(strict_types.CHECKED_DATES) <= 5
