"""The long hostile profile: `RIN_LONG=1` runs the hostile-input stream and the state machine at
sizes far beyond the default run's; without it every test keeps its default size.

Tests record what they ran with `tally`; conftest prints the tallies at the end of the session,
so a run's counts are in its output without `-s`.
"""

from __future__ import annotations

import os
from collections import Counter

LONG = os.environ.get("RIN_LONG") == "1"
TALLIES: dict[str, Counter[str]] = {}


def sized(default: int, long: int) -> int:
    """`long` under the long profile, else `default`."""
    return long if LONG else default


def tally(section: str) -> Counter[str]:
    """The counter that `section`'s tests add to; printed at the end of the session."""
    return TALLIES.setdefault(section, Counter())


def merge(tallies: dict[str, dict[str, int]]) -> None:
    """Add another process's tallies (a pytest-xdist worker's, see conftest) to this one's."""
    for section, counts in tallies.items():
        tally(section).update(counts)


def summary() -> list[str]:
    """One line per section that counted anything, with its counts."""
    profile = "long (RIN_LONG=1)" if LONG else "default"
    return [
        f"{section} [{profile} profile]: "
        + ", ".join(f"{name} {n:,}" for name, n in sorted(counts.items()))
        for section, counts in TALLIES.items() if counts
    ]
