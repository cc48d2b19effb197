"""Tests for the spatial grouping of points (Andrienko & Andrienko 2011).

The grid-indexed grouping is checked against a brute-force oracle written from the
published algorithm; the redistribution against its guarantees (nearest seed, member
means, dense non-empty labels) and the distance bound they imply.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonymizers.errors import InputError
from anonymizers.families.generalization.point_clustering import (
    PointClusters,
    cluster_points,
    cluster_radius_stats,
    group_points,
    lattice_generators,
    person_weighted_means,
    redistribute,
    snap_to_lattice,
)


def brute_force_groups(x: np.ndarray, y: np.ndarray, radius: float) -> np.ndarray:
    """Phase 1 without an index: every point looks at every centroid (same arithmetic)."""
    cx: list[float] = []
    cy: list[float] = []
    sx: list[float] = []
    sy: list[float] = []
    count: list[int] = []
    for px, py in zip((x - x.min()).tolist(), (y - y.min()).tolist(), strict=True):
        d2 = [(gx - px) ** 2 + (gy - py) ** 2 for gx, gy in zip(cx, cy, strict=True)]
        within = [g for g, d in enumerate(d2) if d <= radius * radius]
        if not within:
            cx.append(px)
            cy.append(py)
            sx.append(px)
            sy.append(py)
            count.append(1)
            continue
        best = min(within, key=lambda g: (d2[g], g))
        count[best] += 1
        sx[best] += px
        sy[best] += py
        cx[best] = sx[best] / count[best]
        cy[best] = sy[best] / count[best]
    return np.column_stack((np.asarray(cx) + x.min(), np.asarray(cy) + y.min()))


# Coordinates on a 1 cm lattice over a few km, so that hypothesis can produce exact ties
# and points exactly r apart.
coordinate = st.integers(0, 400_000).map(lambda cm: cm / 100.0)


@st.composite
def point_sets(draw: st.DrawFn, max_size: int = 120) -> tuple[np.ndarray, np.ndarray, float]:
    n = draw(st.integers(1, max_size))
    x = np.array(draw(st.lists(coordinate, min_size=n, max_size=n)))
    y = np.array(draw(st.lists(coordinate, min_size=n, max_size=n)))
    radius = draw(st.sampled_from([1.0, 50.0, 250.0, 500.0, 1234.5, 10_000.0]))
    return x, y, radius


def nearest_seed_distance(x: np.ndarray, y: np.ndarray, seeds: np.ndarray) -> np.ndarray:
    return np.hypot(x[:, None] - seeds[None, :, 0], y[:, None] - seeds[None, :, 1]).min(axis=1)


# --------------------------------------------------------------------------- examples


def test_two_separated_blobs_give_two_clusters_at_their_means() -> None:
    rng = np.random.default_rng(0)
    a = rng.normal((1000.0, 2000.0), 60.0, size=(200, 2))
    b = rng.normal((9000.0, 2500.0), 60.0, size=(150, 2))
    points = np.concatenate((a, b))[rng.permutation(350)]
    clusters = cluster_points(points[:, 0], points[:, 1], 500.0)
    assert len(clusters) == 2
    in_a = points[:, 0] < 5000
    for members in (in_a, ~in_a):
        (label,) = np.unique(clusters.labels[members])
        np.testing.assert_allclose(clusters.centroids[label], points[members].mean(axis=0))


def test_single_point_and_empty_input() -> None:
    one = cluster_points(np.array([3.0]), np.array([4.0]), 10.0)
    assert one.labels.tolist() == [0] and one.centroids.tolist() == [[3.0, 4.0]]
    empty = cluster_points(np.array([]), np.array([]), 10.0)
    assert len(empty) == 0 and empty.labels.shape == (0,) and empty.centroids.shape == (0, 2)
    assert cluster_radius_stats(np.array([]), np.array([]), empty)["max_distance_m"] == 0.0


def test_groups_follow_their_centroid_across_cells() -> None:
    # Each point is within r of the current centroid.  The last one lies two cells from
    # the first point's cell: it finds the group only because the group is indexed by
    # its current centroid (x = 107 after four points), not where it started.
    x = np.array([0.0, 99.0, 149.0, 180.0, 205.0])
    seeds = group_points(x, np.zeros(5), 100.0)
    assert seeds.shape == (1, 2)
    assert seeds[0, 0] == pytest.approx(x.mean())


def test_centroid_drift_has_no_hard_bound_in_r() -> None:
    # Each point arrives just within r ahead of the current centroid: one group whose
    # centroid ends up r * (H_n - 1) from the first point, here more than 2 r.
    radius, n = 100.0, 12
    x = [0.0]
    for _ in range(n - 1):
        x.append(float(np.mean(x)) + 0.999 * radius)
    clusters = cluster_points(np.array(x), np.zeros(n), radius)
    assert len(clusters) == 1
    assert clusters.centroids[0, 0] - x[0] > 2 * radius


def test_stats_report_member_distances() -> None:
    x, y = np.array([0.0, 2.0, 100.0]), np.array([0.0, 0.0, 0.0])
    clusters = cluster_points(x, y, 10.0)
    stats = cluster_radius_stats(x, y, clusters)
    assert stats == {
        "n_points": 3,
        "n_clusters": 2,
        "mean_distance_m": pytest.approx(2 / 3),
        "max_distance_m": pytest.approx(1.0),
    }


# --------------------------------------------------------------------------- properties


@settings(max_examples=150, deadline=None)
@given(data=point_sets())
def test_grid_grouping_equals_brute_force(data: tuple[np.ndarray, np.ndarray, float]) -> None:
    x, y, radius = data
    np.testing.assert_array_equal(group_points(x, y, radius), brute_force_groups(x, y, radius))


@settings(max_examples=150, deadline=None)
@given(data=point_sets())
def test_labels_are_dense_and_clusters_non_empty(
    data: tuple[np.ndarray, np.ndarray, float],
) -> None:
    x, y, radius = data
    clusters = cluster_points(x, y, radius)
    assert clusters.labels.dtype == np.int64 and clusters.labels.shape == x.shape
    assert clusters.centroids.shape == (len(clusters), 2)
    assert np.array_equal(np.unique(clusters.labels), np.arange(len(clusters)))
    for c in range(len(clusters)):
        members = clusters.labels == c
        np.testing.assert_allclose(
            clusters.centroids[c], [x[members].mean(), y[members].mean()], rtol=0, atol=1e-6
        )


def seed_of_clusters(
    x: np.ndarray, y: np.ndarray, seeds: np.ndarray, clusters: PointClusters
) -> np.ndarray:
    """For each cluster, a seed that is a nearest seed of all its members (asserted to
    exist), chosen increasing: clusters are numbered in seed order.  Ties between seeds
    may go either way, so the oracle accepts any nearest seed."""
    distance = np.hypot(x[:, None] - seeds[None, :, 0], y[:, None] - seeds[None, :, 1])
    is_nearest = distance <= distance.min(axis=1, keepdims=True) + 1e-9
    chosen, previous = [], -1
    for c in range(len(clusters)):
        shared = np.flatnonzero(is_nearest[clusters.labels == c].all(axis=0))
        shared = shared[shared > previous]
        assert shared.size, f"cluster {c} has no seed nearest to all its members"
        previous = int(shared[0])
        chosen.append(previous)
    return np.asarray(chosen, dtype=np.int64)


@settings(max_examples=150, deadline=None)
@given(data=point_sets())
def test_every_point_goes_to_its_nearest_seed(data: tuple[np.ndarray, np.ndarray, float]) -> None:
    x, y, radius = data
    seeds = group_points(x, y, radius)
    seed_of_clusters(x, y, seeds, cluster_points(x, y, radius))


@settings(max_examples=150, deadline=None)
@given(data=point_sets())
def test_distance_to_centroid_is_bounded_by_the_seeds(
    data: tuple[np.ndarray, np.ndarray, float],
) -> None:
    # Guaranteed: a centroid is the mean of members within D of their seed, so it is
    # within D of the seed too, and every member within 2 D of the centroid.
    x, y, radius = data
    seeds = group_points(x, y, radius)
    clusters = redistribute(x, y, seeds)
    own_seed = seeds[seed_of_clusters(x, y, seeds, clusters)][clusters.labels]
    to_seed = np.hypot(x - own_seed[:, 0], y - own_seed[:, 1])
    spread = np.zeros(len(clusters))
    np.maximum.at(spread, clusters.labels, to_seed)
    centre = clusters.centroids[clusters.labels]
    to_centroid = np.hypot(x - centre[:, 0], y - centre[:, 1])
    assert np.all(to_centroid <= 2 * spread[clusters.labels] + 1e-6)


@settings(max_examples=100, deadline=None)
@given(data=point_sets())
def test_result_is_deterministic(data: tuple[np.ndarray, np.ndarray, float]) -> None:
    x, y, radius = data
    first, second = cluster_points(x, y, radius), cluster_points(x.copy(), y.copy(), radius)
    assert np.array_equal(first.labels, second.labels)
    assert np.array_equal(first.centroids, second.centroids)


def test_points_within_r_of_a_seed_in_realistic_data() -> None:
    # Not a guarantee (see test_centroid_drift_has_no_hard_bound_in_r), but the grouping
    # must behave on spread-out data: nearly every point is within r of its seed.
    rng = np.random.default_rng(7)
    x, y = rng.uniform(0, 20_000, 20_000), rng.uniform(0, 20_000, 20_000)
    seeds = group_points(x, y, 500.0)
    assert np.quantile(nearest_seed_distance(x[:2000], y[:2000], seeds), 0.99) <= 500.0
    assert math.isfinite(cluster_radius_stats(x, y, cluster_points(x, y, 500.0))["max_distance_m"])


# --------------------------------------------------------------- publishable generators


def test_a_person_with_most_points_weighs_as_much_as_any_other() -> None:
    """One person parked at (0, 0) with 90% of a cluster's points, two others passing at
    x = 300 and x = 600: the generator is the mean of the three persons' means (300, 0),
    snapped, not the points' centroid near the parked person."""
    x = np.r_[np.zeros(90), np.full(5, 300.0), np.full(5, 600.0)]
    y = np.r_[np.random.default_rng(1).normal(0.0, 1.0, 90), np.zeros(10)]
    persons = np.r_[np.zeros(90), np.ones(5), np.full(5, 2)].astype(int)
    labels = np.zeros(100, dtype=np.int64)
    means, n_persons = person_weighted_means(labels, persons, x, y, 1)
    assert means[0] == pytest.approx([300.0, y[:90].mean() / 3]) and n_persons.tolist() == [3]
    assert x.mean() == pytest.approx(45.0)  # where the old centroid was: near the car
    generators = lattice_generators(labels, persons, x, y, 50.0)
    assert generators.positions.tolist() == [[300.0, 0.0]]
    assert generators.n_points.tolist() == [100] and generators.n_persons.tolist() == [3]


def test_generators_lie_on_the_lattice_and_clusters_on_one_point_are_merged() -> None:
    # Clusters 0 and 2 snap onto (1000, 0); together their mean of per-person means is
    # still there. Cluster 1 is elsewhere. Group numbers follow the first cluster.
    x = np.array([990.0, 1010.0, 5000.0, 5020.0, 1020.0])
    y = np.array([0.0, 10.0, 70.0, 80.0, -10.0])
    labels = np.array([0, 0, 1, 1, 2])
    persons = np.array([0, 1, 0, 1, 2])
    generators = lattice_generators(labels, persons, x, y, 50.0)
    assert generators.positions.tolist() == [[1000.0, 0.0], [5000.0, 100.0]]
    assert generators.labels.tolist() == [0, 0, 1, 1, 0]
    assert generators.n_persons.tolist() == [3, 2] and generators.snap_merges == 1
    assert len(generators) == 2


@settings(max_examples=100, deadline=None)
@given(data=point_sets(), snap=st.sampled_from([1.0, 50.0, 333.3]))
def test_lattice_generators_are_distinct_lattice_points(
    data: tuple[np.ndarray, np.ndarray, float], snap: float,
) -> None:
    x, y, radius = data
    clusters = cluster_points(x, y, radius)
    persons = (np.arange(x.size) % 3).astype(np.int64)
    generators = lattice_generators(clusters.labels, persons, x, y, snap)
    steps = generators.positions / snap
    np.testing.assert_allclose(steps, np.round(steps), rtol=0, atol=1e-9)
    assert len(np.unique(generators.positions, axis=0)) == len(generators)
    assert len(generators) == len(clusters) - generators.snap_merges
    assert np.array_equal(np.unique(generators.labels), np.arange(len(generators)))
    assert generators.n_points.sum() == x.size


def test_snap_to_lattice_rounds_to_the_nearest_multiple() -> None:
    snapped = snap_to_lattice(np.array([[24.9, 25.1], [-74.0, 449_999_975.2]]), 50.0)
    assert snapped.tolist() == [[0.0, 50.0], [-50.0, 450_000_000.0]]
    with pytest.raises(InputError, match="snap"):
        snap_to_lattice(np.zeros((1, 2)), 0.0)


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("radius", [0.0, -1.0, math.nan, math.inf, True, "500"])
def test_bad_radius_raises(radius: object) -> None:
    with pytest.raises(InputError, match="radius"):
        cluster_points(np.array([0.0]), np.array([0.0]), radius)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("x", "y"),
    [
        (np.array([0.0, 1.0]), np.array([0.0])),
        (np.array([0.0, np.nan]), np.array([0.0, 1.0])),
        (np.array([0.0, 1.0]), np.array([np.inf, 1.0])),
        (np.zeros((2, 2)), np.zeros((2, 2))),
        (np.array(["a"]), np.array([1.0])),
    ],
)
def test_bad_points_raise(x: np.ndarray, y: np.ndarray) -> None:
    with pytest.raises(InputError):
        cluster_points(x, y, 10.0)


def test_stats_reject_mismatched_labels() -> None:
    clusters = PointClusters(np.zeros(2, dtype=np.int64), np.zeros((1, 2)))
    with pytest.raises(InputError):
        cluster_radius_stats(np.zeros(3), np.zeros(3), clusters)
