"""The TCAA verifier's group members (anonymizers.families.clustering.verifier_support) against the
definition, brute force: inside every one of the group's rectangles at its time point."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from anonymizers.families.clustering import verifier_support as clustering_support
from anonymizers.families.clustering.verifier_support import (
    Boxes,
    Positions,
    Support,
    group_members,
    members_and_box_persons,
)


@st.composite
def positions_and_boxes(draw):
    """Small integer coordinates, so that positions fall on rectangle edges; persons with
    two positions at one time point; groups with two rectangles at one time point; and
    rectangles at time points where nobody is. Coordinates are scaled by a factor, so
    that the bands of y the search cuts (as high as the median rectangle) do not fall on
    whole numbers; a point on an edge stays on it (the same product of the same numbers)."""
    scale = draw(st.sampled_from([1.0, 0.37, 1000.3]))
    n = draw(st.integers(0, 40))
    person = draw(st.lists(st.integers(0, 6), min_size=n, max_size=n))
    t = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    xy = draw(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=n,
                       max_size=n))
    m = draw(st.integers(0, 15))
    boxes = draw(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4), st.integers(0, 4),
                                    st.integers(0, 4), st.integers(0, 3), st.integers(0, 3)),
                          min_size=m, max_size=m))
    positions = Positions(np.array(sorted(person), dtype=np.int64),
                          np.array(t, dtype=np.float64),
                          np.array([p[0] * scale for p in xy], dtype=np.float64),
                          np.array([p[1] * scale for p in xy], dtype=np.float64))
    columns = {"group_id": [b[0] for b in boxes], "t": [float(b[1]) for b in boxes],
               "x0": [b[2] * scale for b in boxes], "y0": [b[3] * scale for b in boxes],
               "x1": [(b[2] + b[4]) * scale for b in boxes],
               "y1": [(b[3] + b[5]) * scale for b in boxes]}
    return positions, Boxes.from_columns(columns)


def brute_force(positions: Positions, boxes: Boxes) -> set[tuple[int, int]]:
    members = set()
    for g in set(boxes.group.tolist()):
        mine = np.flatnonzero(boxes.group == g)
        for p in set(positions.person.tolist()):
            rows = np.flatnonzero(positions.person == p)
            if all(any(positions.t[r] == boxes.t[b]
                       and boxes.x0[b] <= positions.x[r] <= boxes.x1[b]
                       and boxes.y0[b] <= positions.y[r] <= boxes.y1[b] for r in rows)
                   for b in mine):
                members.add((g, p))
    return members


@settings(max_examples=200, deadline=None)
@given(positions_and_boxes(), st.sampled_from([1, 3, 4_000_000]))
def test_members_are_the_persons_inside_every_rectangle_of_the_group(case, chunk):
    positions, boxes = case
    patch = clustering_support._CHUNK_PAIRS
    clustering_support._CHUNK_PAIRS = chunk  # a few groups at a time, or all at once
    try:
        group, person = group_members(positions, boxes)
    finally:
        clustering_support._CHUNK_PAIRS = patch
    assert set(zip(group.tolist(), person.tolist(), strict=True)) == brute_force(
        positions, boxes)
    assert len(group) == len(set(zip(group.tolist(), person.tolist(), strict=True)))


def test_rectangles_hold_the_points_of_their_time_point_on_closed_boxes():
    """What the attack asks of the rectangles, against the brute-force definition, with
    points on every edge: a rectangle holds a point of its own time point inside or on its
    boundary."""
    rng = np.random.default_rng(8)
    t = rng.integers(0, 4, 300).astype(np.float64)
    xy = rng.integers(0, 6, (300, 2)).astype(np.float64)
    rows = [(int(g), float(t0), float(x0), float(y0), float(x0 + w), float(y0 + h))
            for g, t0, x0, y0, w, h in rng.integers(0, 4, (30, 6))]
    boxes = Boxes.from_columns(dict(zip(("group_id", "t", "x0", "y0", "x1", "y1"),
                                        (list(c) for c in zip(*rows, strict=True)),
                                        strict=True)))
    point, box = boxes.holding(t, xy[:, 0], xy[:, 1])
    expected = {(i, g) for i in range(t.size) for g, t0, x0, y0, x1, y1 in rows
                if t0 == t[i] and x0 <= xy[i, 0] <= x1 and y0 <= xy[i, 1] <= y1}
    assert set(zip(point.tolist(), boxes.group[box].tolist(), strict=True)) == expected
    assert len(expected) > 30


def test_members_of_an_unpublished_group_id_support_no_published_group():
    """Rectangles of group 2, which the groups table does not hold, hold 9 persons: they
    are not counted for group 3 (the id after it) nor for any other."""
    empty = np.zeros(0)
    support = Support(Positions(empty, empty, empty, empty),
                      Boxes(*(np.zeros(0),) * 6), np.array([1, 3]), [5, 5],
                      np.array([1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 4]),
                      np.array([0, 1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0]))
    assert support.rows() == [(1, 5, 2), (3, 5, 0)]


@settings(max_examples=200, deadline=None)
@given(positions_and_boxes(), st.sampled_from([1, 3, 4_000_000]))
def test_each_rectangle_counts_the_distinct_persons_inside_it_at_its_time_point(case, chunk):
    """The persons of each rectangle (anyone, not only its group's members), found in the
    pass that finds the members, against the definition."""
    positions, boxes = case
    patch = clustering_support._CHUNK_PAIRS
    clustering_support._CHUNK_PAIRS = chunk
    try:
        group, person, box_persons = members_and_box_persons(positions, boxes)
    finally:
        clustering_support._CHUNK_PAIRS = patch
    expected = [len({int(positions.person[r]) for r in range(positions.t.size)
                     if positions.t[r] == boxes.t[b]
                     and boxes.x0[b] <= positions.x[r] <= boxes.x1[b]
                     and boxes.y0[b] <= positions.y[r] <= boxes.y1[b]})
                for b in range(boxes.t.size)]
    assert box_persons.tolist() == expected
    assert set(zip(group.tolist(), person.tolist(), strict=True)) == brute_force(positions,
                                                                                 boxes)
