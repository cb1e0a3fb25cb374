"""Argument types the scripts share (scripts/simulate.py, scripts/national.py): a bad value is
argparse's usage error (exit 2) naming the option, never a run that silently makes something
else (`--years 0` made the default fifteen years) or a traceback at its end."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable


def checked(text: str, convert: Callable[[str], float], holds: Callable[[float], bool],
            kind: str, wanted: str) -> float:
    """`text` converted, if it is a `kind` and `holds`; else argparse's error saying why."""
    try:
        value = convert(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a {kind}") from None
    if not holds(value):
        raise argparse.ArgumentTypeError(f"{text} is not {wanted}")
    return value


def positive_int(text: str) -> int:
    """A whole number of 1 or more (years, parties)."""
    return int(checked(text, int, lambda v: v >= 1, "whole number", "1 or more"))


def positive_float(text: str) -> float:
    """A finite number above 0 (a scale)."""
    return checked(text, float, lambda v: math.isfinite(v) and v > 0, "number",
                   "a number above 0")


def share(text: str) -> float:
    """A fraction from 0 to 1 (a share of lines)."""
    return checked(text, float, lambda v: 0 <= v <= 1, "number", "from 0 to 1")
