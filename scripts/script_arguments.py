"""Argument types the scripts share (scripts/simulate.py, scripts/national.py): a bad value is
argparse's usage error (exit 2) naming the option, never a run that silently makes something
else (`--years 0` made the default fifteen years) or a traceback at its end."""

from __future__ import annotations

import argparse
import math


def positive_int(text: str) -> int:
    """A whole number of 1 or more (years, parties)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not 1 or more")
    return value


def positive_float(text: str) -> float:
    """A finite number above 0 (a scale)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"{text} is not a number above 0")
    return value


def share(text: str) -> float:
    """A fraction from 0 to 1 (a share of lines)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{text} is not from 0 to 1")
    return value
