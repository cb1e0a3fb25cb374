"""The journal's `recorded` text: UTC, to the microsecond, so that text order is time order."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from projections.journal import stamp


def test_stamp_is_utc_iso_text_to_the_microsecond() -> None:
    assert stamp(datetime(2024, 2, 7, 9, 30, 5, 123456, tzinfo=UTC)) == (
        "2024-02-07T09:30:05.123456+00:00")
    # No microseconds: still six digits, or "…:05" would sort after "…:05.000001".
    assert stamp(datetime(2024, 2, 7, 9, 30, 5, tzinfo=UTC)) == "2024-02-07T09:30:05.000000+00:00"
    # 23:59:59.000001 at UTC−5 on 29 February is 04:59:59.000001 UTC on 1 March.
    eastern = timezone(timedelta(hours=-5))
    assert stamp(datetime(2024, 2, 29, 23, 59, 59, 1, tzinfo=eastern)) == (
        "2024-03-01T04:59:59.000001+00:00")
    # Before 1970 the second is still the one the time falls in.
    assert stamp(datetime(1969, 12, 31, 23, 59, 59, 500000, tzinfo=UTC)) == (
        "1969-12-31T23:59:59.500000+00:00")
