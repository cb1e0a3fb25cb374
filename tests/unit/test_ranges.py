"""SerialSet properties: gallon-RINs are never created or destroyed, pieces never overlap or
go empty, and every set is in normal form (sorted, disjoint, non-adjacent intervals)."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from ledger.domain.ranges import RangeError, SerialSet

HIGH = 2_000  # small serials so that overlaps and adjacency happen often


@st.composite
def intervals(draw: st.DrawFn) -> list[tuple[int, int]]:
    out = []
    for _ in range(draw(st.integers(0, 8))):
        start = draw(st.integers(1, HIGH))
        out.append((start, draw(st.integers(start, min(start + 300, HIGH)))))
    return out


serial_sets = intervals().map(SerialSet.of)


def members(s: SerialSet) -> set[int]:
    """The set as plain integers (the model the properties are checked against)."""
    return {n for start, end in s for n in range(start, end + 1)}


def assert_normal(s: SerialSet) -> None:
    for start, end in s.intervals:
        assert start <= end, "no empty interval"
    for (_, end), (start, _) in pairwise(s.intervals):
        assert end + 1 < start, "sorted, disjoint and not touching"


@given(intervals())
def test_of_normalises_and_keeps_every_serial(raw: list[tuple[int, int]]) -> None:
    s = SerialSet.of(raw)
    assert_normal(s)
    assert members(s) == {n for a, b in raw for n in range(a, b + 1)}
    assert len(s) == len(members(s))


@given(serial_sets, st.data())
def test_take_lowest_conserves_and_takes_the_lowest(s: SerialSet, data: st.DataObject) -> None:
    count = data.draw(st.integers(0, len(s)))
    taken, rest = s.take_lowest(count)
    assert_normal(taken)
    assert_normal(rest)
    assert len(taken) == count
    assert len(taken) + len(rest) == len(s)
    assert not taken.overlaps(rest)
    assert members(taken) | members(rest) == members(s)
    assert members(taken) == set(sorted(members(s))[:count])


@given(serial_sets)
def test_take_more_than_held_is_refused(s: SerialSet) -> None:
    with pytest.raises(RangeError):
        s.take_lowest(len(s) + 1)


@given(serial_sets, st.data())
def test_split_sizes_partitions_into_non_empty_consecutive_pieces(
    s: SerialSet, data: st.DataObject
) -> None:
    assume(len(s) > 0)
    cuts = sorted(data.draw(st.sets(st.integers(1, len(s) - 1), max_size=5))) if len(s) > 1 else []
    bounds = [0, *cuts, len(s)]
    sizes = [b - a for a, b in pairwise(bounds)]
    pieces = s.split_sizes(sizes)
    assert [len(p) for p in pieces] == sizes
    assert all(pieces), "no empty piece"
    assert sum(len(p) for p in pieces) == len(s)
    for piece in pieces:
        assert_normal(piece)
    for left, right in pairwise(pieces):
        assert max(members(left)) < min(members(right)), "lowest serials first"
    union = SerialSet()
    for piece in pieces:
        union = union.union(piece)
    assert union == s


@given(serial_sets)
def test_split_sizes_must_sum_to_the_whole(s: SerialSet) -> None:
    with pytest.raises(RangeError):
        s.split_sizes([len(s) + 1])
    with pytest.raises(RangeError):
        s.split_sizes([0, len(s)])


@given(serial_sets, serial_sets)
def test_union_of_disjoint_sets_adds_counts(a: SerialSet, b: SerialSet) -> None:
    b = b.subtract(b.intersection(a))
    merged = a.union(b)
    assert_normal(merged)
    assert len(merged) == len(a) + len(b)
    assert members(merged) == members(a) | members(b)


@given(serial_sets, serial_sets)
def test_union_of_overlapping_sets_is_refused(a: SerialSet, b: SerialSet) -> None:
    assume(a.overlaps(b))
    with pytest.raises(RangeError):
        a.union(b)


@given(serial_sets, st.data())
def test_subtract_a_subset_conserves(s: SerialSet, data: st.DataObject) -> None:
    chosen = sorted(data.draw(st.sets(st.sampled_from(sorted(members(s))))) if s else [])
    part = SerialSet.of((n, n) for n in chosen)
    rest = s.subtract(part)
    assert_normal(rest)
    assert len(rest) + len(part) == len(s)
    assert not rest.overlaps(part)
    assert members(rest) == members(s) - members(part)
    assert rest.union(part) == s


@given(serial_sets, serial_sets)
def test_subtract_what_is_not_held_is_refused(a: SerialSet, b: SerialSet) -> None:
    assume(not a.issuperset(b))
    with pytest.raises(RangeError):
        a.subtract(b)


@given(serial_sets, serial_sets)
def test_intersection_and_overlap_agree_with_the_model(a: SerialSet, b: SerialSet) -> None:
    both = a.intersection(b)
    assert_normal(both)
    assert members(both) == members(a) & members(b)
    assert a.overlaps(b) == bool(members(a) & members(b))
    assert a.issuperset(b) == (members(b) <= members(a))


@given(serial_sets, serial_sets)
def test_difference_agrees_with_the_model_whatever_the_other_holds(a: SerialSet, b: SerialSet
                                                                   ) -> None:
    rest = a.difference(b)
    assert_normal(rest)
    assert members(rest) == members(a) - members(b)


def test_hand_example_difference() -> None:
    held = SerialSet(((1, 100), (201, 300)))
    assert held.difference(SerialSet(((50, 250), (400, 500)))).intervals == ((1, 49), (251, 300))


def test_hand_example_take_and_split() -> None:
    s = SerialSet.of([(1, 100), (201, 300)])  # 100 + 100 = 200 serials
    taken, rest = s.take_lowest(150)  # 100 from the first run + 50 from 201
    assert taken.intervals == ((1, 100), (201, 250))
    assert rest.intervals == ((251, 300),)
    assert [p.intervals for p in s.split_sizes([60, 140])] == [((1, 60),), ((61, 100), (201, 300))]


def test_of_merges_touching_intervals_and_refuses_reversed_ones() -> None:
    assert SerialSet.of([(5, 9), (1, 4), (20, 20)]).intervals == ((1, 9), (20, 20))
    with pytest.raises(RangeError):
        SerialSet.of([(5, 4)])
