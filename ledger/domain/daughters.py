"""Daughter batch-RINs (§80.1428(d)): once a batch-RIN is divided, each daughter is a batch-RIN
of its own, named by its own 38-character code, and the parent's code names no held block
(refused by `ledger.rules.s1428_rins.check_not_parent`).

A division is kept as cut points: the first serial of every daughter but the first. Blocks a
party holds, picks or is named are cut there, so contiguous daughters are never merged back.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence

from ledger.domain.rin import RinBlock

Cuts = Mapping[str, Sequence[int]]  # batch identity YYYYCCCCFFFFFBBBBB → sorted cut serials


def inner_cuts(block: RinBlock, cuts: Cuts) -> list[int]:
    """The cut serials c with start < c <= end: where `block` spans two daughters."""
    points = cuts.get(block.key.batch_name, ())
    return [c for c in points if block.start < c <= block.end]


def pieces(start: int, end: int, points: Iterable[int]) -> list[tuple[int, int]]:
    """Serials start..end cut before each of the sorted `points` inside them."""
    out, first = [], start
    for point in points:
        if first < point <= end:
            out.append((first, point - 1))
            first = point
    out.append((first, end))
    return out


def cut(blocks: Iterable[RinBlock], cuts: Cuts) -> list[RinBlock]:
    """`blocks` divided at the cut points, each piece inside one daughter."""
    return [
        RinBlock(block.key, first, last) for block in blocks
        for first, last in pieces(block.start, block.end, cuts.get(block.key.batch_name, ()))
    ]


def add_cut(cuts: dict[str, list[int]], batch: str, serial: int) -> None:
    """Record that a daughter starts at `serial` (kept sorted, each point once)."""
    points = cuts.setdefault(batch, [])
    at = bisect_right(points, serial)
    if not (at and points[at - 1] == serial):
        points.insert(at, serial)
