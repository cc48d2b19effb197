"""Merge decisions of progressive generalization (Algorithm 3 + the thin-generator rule)."""

from __future__ import annotations

import numpy as np
import pytest

from anonymizers.families.generalization.progressive import (
    CellStatistics,
    NeighbourFlows,
    coinciding,
    pair_counts,
    plan_merges,
    rms_distance,
)


def cells(points_per_cell: dict[int, list[tuple[float, float]]],
          persons: dict[int, int], near: dict[int, int] | None = None) -> CellStatistics:
    """Statistics of cells given their fixes; centroids are the means of the fixes."""
    ids = sorted(points_per_cell)
    arrays = [np.array(points_per_cell[i], dtype=float) for i in ids]
    return CellStatistics(
        cell_id=np.array(ids), n_points=np.array([len(a) for a in arrays]),
        sx=np.array([a[:, 0].sum() for a in arrays]), sy=np.array([a[:, 1].sum() for a in arrays]),
        sxxyy=np.array([(a ** 2).sum() for a in arrays]),
        generator_persons=np.array([persons[i] for i in ids]),
        centroid_x=np.array([a[:, 0].mean() for a in arrays]),
        centroid_y=np.array([a[:, 1].mean() for a in arrays]),
        near_owners=np.array([(near or persons)[i] for i in ids]))


def flows(rows: list[tuple[int, int, int, int]]) -> NeighbourFlows:
    a, b, ab, ba = (np.array(column) for column in zip(*rows, strict=True))
    return NeighbourFlows(a, b, ab, ba)


LINE = {1: [(0, 0), (10, 0)], 2: [(100, 0), (110, 0)], 3: [(200, 0), (210, 0)],
        4: [(300, 0), (310, 0)]}
MANY = {1: 9, 2: 9, 3: 9, 4: 9}


def test_pair_count_is_min_if_both_directions_else_max():
    counted = pair_counts(flows([(1, 2, 3, 5), (2, 3, 0, 4), (3, 4, 0, 0)]))
    assert counted.tolist() == [3, 4, 0]


def test_pairs_below_k_merge_in_increasing_count_without_sharing_a_cell():
    plan = plan_merges(cells(LINE, MANY), flows([(1, 2, 2, 2), (2, 3, 1, 0), (3, 4, 3, 3)]),
                       k=5, max_displacement=None)
    # (2,3) has the smallest count and goes first; (1,2) shares cell 2; (3,4) shares cell 3.
    assert plan.merges == [(2, 3)]
    assert plan.pairs_below_k == 3 and plan.drops == []


def test_pairs_at_or_above_k_and_pairs_without_traffic_are_left_alone():
    plan = plan_merges(cells(LINE, MANY), flows([(1, 2, 5, 7), (2, 3, 0, 0)]), k=5,
                       max_displacement=None)
    assert not plan.changes and plan.pairs_below_k == 0


def test_max_displacement_removes_pairs_whose_merge_spreads_too_far():
    plan = plan_merges(cells(LINE, MANY), flows([(1, 2, 1, 1)]), k=5, max_displacement=20.0)
    assert plan.merges == [] and plan.rejected_by_displacement == 1
    plan = plan_merges(cells(LINE, MANY), flows([(1, 2, 1, 1)]), k=5, max_displacement=80.0)
    assert plan.merges == [(1, 2)]
    assert plan.merged_rms_m[0] == pytest.approx(np.sqrt(np.mean(
        (np.array([0, 10, 100, 110]) - 55.0) ** 2)))


def test_a_generator_of_fewer_than_k_persons_is_merged_with_its_busiest_neighbour_first():
    persons = {1: 9, 2: 2, 3: 9, 4: 9}
    plan = plan_merges(cells(LINE, persons), flows([(1, 2, 1, 1), (2, 3, 7, 6), (3, 4, 1, 1)]),
                       k=5, max_displacement=None)
    assert plan.merges[0] == (2, 3)  # busiest neighbour of the thin cell, before any pair
    assert plan.thin_generators == 1 and plan.drops == []


def test_a_thin_generator_that_cannot_merge_is_dropped():
    persons = {1: 9, 2: 1, 3: 9, 4: 9}
    plan = plan_merges(cells(LINE, persons), flows([(1, 2, 6, 6), (2, 3, 6, 6)]), k=5,
                       max_displacement=1.0)
    assert plan.merges == [] and plan.drops == [2]


def test_after_the_step_budget_only_thin_generators_are_handled():
    persons = {1: 9, 2: 1, 3: 9, 4: 9}
    plan = plan_merges(cells(LINE, persons), flows([(1, 2, 6, 6), (3, 4, 1, 1)]), k=5,
                       max_displacement=None, include_pairs=False)
    assert plan.merges == [(2, 1)]


def test_a_generator_with_fewer_than_k_owners_nearby_is_dropped():
    plan = plan_merges(cells(LINE, MANY, near={1: 9, 2: 9, 3: 2, 4: 9}),
                       flows([(1, 2, 6, 6), (3, 4, 6, 6)]), k=5, max_displacement=None)
    assert plan.drops == [3] and plan.far_generators == 1 and plan.merges == []


def test_a_refused_pair_is_rejected_like_one_over_max_displacement():
    """A pair whose merged generator (mean of per-person means, snapped) turned out too far
    from its fixes is refused: the next pair by count gets its cells."""
    flowing = flows([(1, 2, 1, 1), (2, 3, 2, 2)])
    assert plan_merges(cells(LINE, MANY), flowing, k=5, max_displacement=None).merges == [(1, 2)]
    plan = plan_merges(cells(LINE, MANY), flowing, k=5, max_displacement=None,
                       refused={(1, 2)})
    assert plan.merges == [(2, 3)] and plan.rejected_by_displacement == 1


def test_rms_distance_to_a_generator_off_the_fixes_centroid():
    stats = cells(LINE, MANY)
    fixes = np.array(LINE[1] + LINE[2], dtype=float)
    for x, y in [(55.0, 0.0), (80.0, 30.0)]:  # the centroid, and a generator elsewhere
        expected = np.sqrt(np.mean(np.sum((fixes - (x, y)) ** 2, axis=1)))
        assert rms_distance(stats, [0, 1], x, y) == pytest.approx(expected)


def test_generators_on_one_lattice_point_are_found_together():
    xy = np.array([[0.0, 50.0], [100.0, 0.0], [0.0, 50.0], [100.0, 0.0], [50.0, 50.0]])
    assert coinciding([4, 7, 9, 2, 5], xy) == [[4, 9], [7, 2]]
    assert coinciding([1, 2], np.array([[0.0, 0.0], [0.0, 50.0]])) == []
