"""Tests for the release metrics: displacement, cluster preservation and re-identification risk.

Hand-made examples check each measure against values computed by hand from seed 000
(Monreale et al. 2010, Sections 6.1.2, 8.3 and 8.4); brute-force oracles written from the
definitions check the vectorized code on random inputs; and the key privacy property is
checked end to end: on data anonymized by KAM_CUT or KAM_REC, no simulated attack
succeeds with probability above 1/k (Theorem 10).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.cluster import DBSCAN

from anonymizers.errors import InputError
from anonymizers.families.generalization.cluster_preservation import (
    NOISE,
    SUPPRESSED,
    cluster_preservation,
    cluster_preservation_of_sample,
    cluster_preservation_report,
    optics_labels,
    resample_route,
    route_distance_matrix,
    route_similarity,
    sample_objects,
)
from anonymizers.families.generalization.displacement import (
    displacement_measures,
    local_displacements,
)
from anonymizers.families.generalization.prefix_tree import kam_cut, kam_rec
from anonymizers.families.generalization.reidentification import (
    NO_CELL,
    ConcatenatedSequences,
    generalize_observations,
    reidentification_risk,
    reidentification_risk_of_sample,
    sample_trajectories,
)

# --------------------------------------------------------------------------- strategies

coordinate = st.floats(-5_000, 5_000, allow_nan=False, allow_infinity=False)
routes = st.lists(st.tuples(coordinate, coordinate), min_size=1, max_size=8).map(
    lambda points: np.array(points, dtype=np.float64)
)
labels = st.integers(-1, 3)


def line(*points: tuple[float, float]) -> np.ndarray:
    """A route from its vertices."""
    return np.array(points, dtype=np.float64)


# --------------------------------------------------------------------------- displacement


def test_displacement_measures_by_hand() -> None:
    # Area 7: displacements 3 and 4 (3-4-5 triangles) of persons 0 and 1; area 2: one point
    # 10 m off, of person 0 alone.
    points = line((3, 0), (0, 4), (10, 0))
    representatives = line((0, 0), (0, 0), (0, 0))
    result = displacement_measures(points, representatives, np.array([7, 7, 2]),
                                   np.array([0, 1, 0]), k=2)
    assert result == pytest.approx(
        {
            "n_points": 3,
            "n_persons": 2,
            "n_areas": 2,
            "n_areas_k": 1,
            "local_mean_avg": 3.5,  # area 2 has one person: its average is theirs
            "global_sum": 17.0,
            "global_mean": 17 / 3,
        }
    )


def test_no_order_statistic_is_computed() -> None:
    """Issue 7, finding 5: the largest displacement was one taxi's fix; nothing like it is
    computed any more, and nothing at all over fewer than k persons."""
    points = line((3, 0), (0, 4), (2_334_000, 0))
    result = displacement_measures(points, np.zeros((3, 2)), np.array([1, 1, 2]),
                                   np.array([0, 1, 2]), k=2)
    assert not [name for name in result if "max" in name or "min" in name]
    assert 2_334_000 not in result.values()
    assert not {"max", "min"} & set(vars(local_displacements(
        points, np.zeros((3, 2)), np.array([1, 1, 2]), np.array([0, 1, 2]))))
    lonely = displacement_measures(points, np.zeros((3, 2)), np.array([1, 1, 2]),
                                   np.array([0, 0, 0]), k=2)
    assert all(math.isnan(lonely[name]) for name in
               ("local_mean_avg", "global_sum", "global_mean"))


def test_local_displacements_per_area() -> None:
    local = local_displacements(
        line((3, 0), (0, 4), (10, 0)), np.zeros((3, 2)), np.array([7, 7, 2]),
        np.array([5, 5, -1])
    )
    assert local.area.tolist() == [2, 7]
    assert local.count.tolist() == [1, 2]
    assert local.persons.tolist() == [1, 1]
    assert local.mean.tolist() == [10.0, 3.5]
    assert local.total.tolist() == [10.0, 7.0]


def test_displacement_measures_without_points() -> None:
    empty = np.zeros(0, dtype=int)
    result = displacement_measures(np.zeros((0, 2)), np.zeros((0, 2)), empty, empty, k=2)
    assert result["n_points"] == 0 and result["n_persons"] == 0
    assert math.isnan(result["global_mean"]) and math.isnan(result["local_mean_avg"])


@pytest.mark.parametrize(
    ("points", "representatives", "area", "owner"),
    [
        (np.zeros((2, 2)), np.zeros((3, 2)), np.zeros(2, dtype=int), np.zeros(2, dtype=int)),
        (np.zeros((2, 2)), np.zeros((2, 2)), np.zeros(3, dtype=int), np.zeros(2, dtype=int)),
        (np.zeros((2, 2)), np.zeros((2, 2)), np.zeros(2), np.zeros(2, dtype=int)),
        (np.zeros((2, 2)), np.zeros((2, 2)), np.zeros(2, dtype=int), np.zeros(3, dtype=int)),
        (np.zeros((2, 2)), np.zeros((2, 2)), np.zeros(2, dtype=int), np.zeros(2)),
        (np.full((1, 2), np.nan), np.zeros((1, 2)), np.zeros(1, dtype=int),
         np.zeros(1, dtype=int)),
        (np.zeros(4), np.zeros(4), np.zeros(2, dtype=int), np.zeros(2, dtype=int)),
    ],
)
def test_displacement_measures_rejects_bad_input(
    points: np.ndarray, representatives: np.ndarray, area: np.ndarray, owner: np.ndarray
) -> None:
    with pytest.raises(InputError):
        displacement_measures(points, representatives, area, owner, k=2)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(coordinate, coordinate, st.integers(-3, 3), st.integers(0, 4)),
                min_size=1, max_size=30), st.integers(1, 4))
def test_displacement_measures_match_a_loop(rows: list[tuple[float, float, int, int]],
                                            k: int) -> None:
    points = np.array([(x, y) for x, y, _, _ in rows])
    area = np.array([a for _, _, a, _ in rows])
    owner = np.array([o for _, _, _, o in rows])
    representatives = np.zeros_like(points) + 1.0
    by_area: dict[int, list[float]] = {}
    persons: dict[int, set[int]] = {}
    for (x, y), a, o in zip(points.tolist(), area.tolist(), owner.tolist(), strict=True):
        by_area.setdefault(a, []).append(math.hypot(x - 1.0, y - 1.0))
        persons.setdefault(a, set()).add(o)
    everything = [d for ds in by_area.values() for d in ds]
    result = displacement_measures(points, representatives, area, owner, k)
    assert result["n_areas"] == len(by_area)
    kept = [sum(ds) / len(ds) for a, ds in by_area.items() if len(persons[a]) >= k]
    assert result["n_areas_k"] == len(kept)
    if kept:
        assert result["local_mean_avg"] == pytest.approx(sum(kept) / len(kept))
    else:
        assert math.isnan(result["local_mean_avg"])
    if len(set(owner.tolist())) >= k:
        assert result["global_sum"] == pytest.approx(sum(everything))
    else:
        assert math.isnan(result["global_sum"]) and math.isnan(result["global_mean"])


# --------------------------------------------------------------------------- route similarity


def brute_route_similarity(a: np.ndarray, b: np.ndarray, samples: int = 32) -> float:
    """Oracle: the documented definition with plain loops."""

    def to_polyline(point: np.ndarray, polyline: np.ndarray) -> float:
        best = math.inf
        for start, stop in itertools.pairwise(polyline):
            direction = stop - start
            length2 = float(direction @ direction)
            t = 0.0 if length2 == 0 else min(1.0, max(0.0, (point - start) @ direction / length2))
            best = min(best, float(np.hypot(*(point - start - t * direction))))
        return best

    ra, rb = resample_route(a, samples), resample_route(b, samples)
    there = np.mean([to_polyline(p, rb) for p in ra])
    back = np.mean([to_polyline(p, ra) for p in rb])
    return float((there + back) / 2)


def test_resample_route_is_even_along_the_path() -> None:
    route = line((0, 0), (1000, 0), (1000, 1000))
    resampled = resample_route(route, 5)
    assert resampled.tolist() == [[0, 0], [500, 0], [1000, 0], [1000, 500], [1000, 1000]]
    assert resample_route(line((7, 7)), 4).tolist() == [[7, 7]] * 4
    assert resample_route(line((1, 2), (1, 2), (1, 2)), 3).tolist() == [[1, 2]] * 3


@pytest.mark.parametrize(
    ("route", "samples"),
    [(np.zeros((0, 2)), 32), (np.zeros((3, 3)), 32), (line((0, 0)), 1), (line((np.inf, 0)), 32)],
)
def test_resample_route_rejects_bad_input(route: np.ndarray, samples: int) -> None:
    with pytest.raises(InputError):
        resample_route(route, samples)


def test_route_similarity_of_identical_routes_is_zero() -> None:
    route = line((0, 0), (700, 300), (1500, 300), (1500, -200))
    assert route_similarity(route, route) == 0.0
    # More vertices on the same path change nothing: the mean is per metre, not per fix.
    denser = line((0, 0), (350, 150), (700, 300), (1000, 300), (1500, 300), (1500, -200))
    assert route_similarity(route, denser) == pytest.approx(0.0, abs=1e-6)


def test_route_similarity_of_parallel_routes() -> None:
    south = line((0, 0), (1000, 0))
    north = line((0, 100), (250, 100), (1000, 100))  # sampled differently
    assert route_similarity(south, north) == pytest.approx(100.0)


def test_route_similarity_penalises_the_unmatched_part() -> None:
    short, long = line((0, 0), (1000, 0)), line((0, 0), (2000, 0))
    along = np.linspace(0, 2000, 32)
    expected = (0.0 + np.maximum(along - 1000, 0).mean()) / 2
    assert route_similarity(short, long) == pytest.approx(expected)


def test_route_similarity_of_one_point_routes() -> None:
    assert route_similarity(line((0, 0)), line((3, 4))) == pytest.approx(5.0)
    point, road = line((500, 100)), line((0, 0), (1000, 0))
    back = np.hypot(np.linspace(0, 1000, 32) - 500, 100).mean()
    assert route_similarity(point, road) == pytest.approx((100 + back) / 2)


@settings(max_examples=60, deadline=None)
@given(routes, routes)
def test_route_similarity_properties(a: np.ndarray, b: np.ndarray) -> None:
    distance = route_similarity(a, b)
    assert distance >= 0
    assert distance == route_similarity(b, a)
    assert distance == pytest.approx(brute_route_similarity(a, b), abs=1e-6)
    assert route_similarity(a, a) == pytest.approx(0.0, abs=1e-6)


@settings(max_examples=25, deadline=None)
@given(st.lists(routes, min_size=0, max_size=6))
def test_route_distance_matrix_is_the_pairwise_similarity(many: list[np.ndarray]) -> None:
    matrix = route_distance_matrix(many)
    assert matrix.shape == (len(many), len(many))
    assert np.array_equal(matrix, matrix.T)
    assert np.all(np.diag(matrix) == 0)
    for i in range(len(many)):
        for j in range(i + 1, len(many)):
            assert matrix[i, j] == pytest.approx(route_similarity(many[i], many[j]), abs=1e-6)


@settings(max_examples=25, deadline=None)
@given(st.lists(routes, min_size=2, max_size=8), st.floats(0, 3_000))
def test_route_distance_matrix_cutoff_is_exact_below_it(
    many: list[np.ndarray], cutoff: float
) -> None:
    exact = route_distance_matrix(many)
    bounded = route_distance_matrix(many, cutoff=cutoff)
    assert np.array_equal(bounded, bounded.T)
    near = exact <= cutoff
    assert np.array_equal(bounded <= cutoff, near)
    assert np.allclose(bounded[near], exact[near], atol=1e-6)
    assert np.all(bounded[~near] <= exact[~near] + 1e-6)  # lower bounds elsewhere


# --------------------------------------------------------------------------- OPTICS


def distances_on_a_line(positions: Sequence[float]) -> np.ndarray:
    values = np.asarray(positions, dtype=np.float64)
    return np.abs(values[:, None] - values[None, :])


def test_optics_labels_finds_two_groups_and_noise() -> None:
    positions = [0, 10, 20, 30, 40, 1000, 1010, 1020, 1030, 1040, 5000]
    result = optics_labels(distances_on_a_line(positions), max_distance=15, min_neighbors=3)
    assert len(set(result[:5])) == 1 and len(set(result[5:10])) == 1
    assert result[0] != result[5] and min(result[0], result[5]) >= 0
    assert result[10] == NOISE


def test_optics_min_neighbors_counts_the_object_itself() -> None:
    together = np.zeros((3, 3))
    assert optics_labels(together, 1.0, 3).tolist() == [0, 0, 0]
    assert optics_labels(together, 1.0, 4).tolist() == [NOISE] * 3  # fewer objects than 4
    apart = distances_on_a_line([0, 100, 200])
    assert optics_labels(apart, 1.0, 2).tolist() == [NOISE] * 3


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.integers(0, 300), min_size=1, max_size=30),
    st.integers(1, 30),
    st.integers(2, 5),
)
def test_optics_labels_agree_with_dbscan(
    positions: list[int], eps: int, min_neighbors: int
) -> None:
    # Same noise, same partition of the core objects; border objects may pick either cluster.
    distances = distances_on_a_line(positions)
    ours = optics_labels(distances, float(eps), min_neighbors)
    model = DBSCAN(eps=eps, min_samples=min_neighbors, metric="precomputed").fit(distances)
    assert np.array_equal(ours == NOISE, model.labels_ == NOISE)
    core = model.core_sample_indices_
    pairs = {(int(a), int(b)) for a, b in zip(ours[core], model.labels_[core], strict=True)}
    assert len(pairs) == len({a for a, _ in pairs}) == len({b for _, b in pairs})


@pytest.mark.parametrize(
    ("distances", "max_distance", "min_neighbors"),
    [(np.zeros((2, 3)), 1.0, 2), (np.zeros((2, 2)), 0.0, 2), (np.zeros((2, 2)), 1.0, 1)],
)
def test_optics_labels_rejects_bad_parameters(
    distances: np.ndarray, max_distance: float, min_neighbors: int
) -> None:
    with pytest.raises(InputError):
        optics_labels(distances, max_distance, min_neighbors)


# --------------------------------------------------------------------------- cluster comparison


def brute_preservation(original: list[int], anonymized: list[int]) -> dict[str, float]:
    """Oracle: Section 8.3 with sets, ties to the smaller then lower-labelled cluster."""
    members = {c: {i for i, x in enumerate(original) if x == c} for c in set(original) if c >= 0}
    images = {c: {i for i, x in enumerate(anonymized) if x == c} for c in set(anonymized) if c >= 0}
    noise = {i for i, x in enumerate(original) if x == NOISE}
    rows = []
    for cluster in members.values():
        best = max(
            images, key=lambda j: (len(cluster & images[j]), -len(images[j]), -j), default=None
        )
        overlap = len(cluster & images[best]) if best is not None else 0
        if overlap == 0:
            rows.append((0.0, 0.0, 0.0))
            continue
        rows.append(
            (
                overlap / len(images[best]),
                overlap / len(cluster),
                overlap / len(images[best] - noise),
            )
        )

    def f(p: float, r: float) -> float:
        return 0.0 if p + r == 0 else 2 * p * r / (p + r)

    return {
        "precision": float(np.mean([p for p, _, _ in rows])),
        "recall": float(np.mean([r for _, r, _ in rows])),
        "f_measure": float(np.mean([f(p, r) for p, r, _ in rows])),
        "precision_star": float(np.mean([s for _, _, s in rows])),
        "f_measure_star": float(np.mean([f(s, r) for _, r, s in rows])),
    }


MEASURES = ("precision", "recall", "f_measure", "precision_star", "f_measure_star")


def measures(result: dict) -> dict[str, float]:
    return {name: result[name] for name in MEASURES}


def test_identical_clusterings_score_one() -> None:
    original = np.array([0, 0, 0, 1, 1, 1, NOISE])
    for anonymized in (original, np.array([5, 5, 5, 2, 2, 2, NOISE])):  # labels are names
        result = cluster_preservation(original, anonymized)
        assert measures(result) == dict.fromkeys(MEASURES, 1.0)
        assert result["n_clusters_original"] == result["n_clusters_anonymized"] == 2
        assert result["note"] == ""


def test_split_cluster_halves_the_recall() -> None:
    result = cluster_preservation(np.array([0, 0, 0, 0]), np.array([0, 0, 1, 1]))
    assert result["recall"] == 0.5 and result["precision"] == 1.0
    assert result["f_measure"] == pytest.approx(2 / 3)


def test_merged_clusters_halve_the_precision() -> None:
    result = cluster_preservation(np.array([0, 0, 1, 1]), np.array([0, 0, 0, 0]))
    assert result["precision"] == 0.5 and result["recall"] == 1.0


def test_promoted_noise_lowers_precision_but_not_precision_star() -> None:
    result = cluster_preservation(np.array([0, 0, 0, NOISE, NOISE]), np.zeros(5, dtype=int))
    assert result["precision"] == pytest.approx(3 / 5)
    assert result["precision_star"] == 1.0 > result["precision"]
    assert result["f_measure_star"] == 1.0 > result["f_measure"]


def test_suppressed_objects_lower_the_recall() -> None:
    result = cluster_preservation(np.array([0, 0, 0, 0]), np.array([0, 0, SUPPRESSED, SUPPRESSED]))
    assert result["recall"] == 0.5 and result["precision"] == 1.0
    assert result["n_suppressed"] == 2


def test_cluster_without_counterpart_scores_zero() -> None:
    result = cluster_preservation(np.array([0, 0, 1, 1]), np.array([0, 0, NOISE, SUPPRESSED]))
    assert measures(result) == dict.fromkeys(MEASURES, 0.5)
    assert result["n_unmatched"] == 1
    nothing = cluster_preservation(np.array([0, 0]), np.array([NOISE, SUPPRESSED]))
    assert measures(nothing) == dict.fromkeys(MEASURES, 0.0)


def test_ties_go_to_the_smaller_anonymized_cluster() -> None:
    original = np.array([0, 0, 0, 0, NOISE, NOISE])
    result = cluster_preservation(original, np.array([1, 1, 0, 0, 0, 0]))
    assert result["precision"] == 1.0 and result["recall"] == 0.5


def test_no_original_cluster_gives_nan_with_a_note() -> None:
    result = cluster_preservation(np.array([NOISE, NOISE]), np.array([0, 0]))
    assert all(math.isnan(result[name]) for name in MEASURES)
    assert "no original clusters" in result["note"]
    empty = cluster_preservation(np.zeros(0, dtype=int), np.zeros(0, dtype=int))
    assert math.isnan(empty["f_measure"])


@pytest.mark.parametrize(
    ("original", "anonymized"),
    [
        (np.array([0, 0]), np.array([0])),
        (np.array([SUPPRESSED, 0]), np.array([0, 0])),
        (np.array([0, 0]), np.array([-3, 0])),
        (np.array([0.0, 1.0]), np.array([0, 0])),
    ],
)
def test_cluster_preservation_rejects_bad_labels(
    original: np.ndarray, anonymized: np.ndarray
) -> None:
    with pytest.raises(InputError):
        cluster_preservation(original, anonymized)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(labels, st.integers(SUPPRESSED, 3)), min_size=0, max_size=25),
)
def test_cluster_preservation_matches_the_definition(pairs: list[tuple[int, int]]) -> None:
    original = [o for o, _ in pairs]
    anonymized = [a for _, a in pairs]
    result = cluster_preservation(np.array(original, dtype=int), np.array(anonymized, dtype=int))
    if not any(o >= 0 for o in original):
        assert all(math.isnan(result[name]) for name in MEASURES)
        return
    values = measures(result)
    assert all(0.0 <= value <= 1.0 for value in values.values())
    assert values["precision_star"] >= values["precision"]
    assert values == pytest.approx(brute_preservation(original, anonymized))


def bundles() -> tuple[list[np.ndarray], list[np.ndarray | None]]:
    """Three bundles of eight near-parallel roads 1 km apart, plus two lone routes.

    The anonymized version of a bundle road is the bundle's centre line (generalization
    pulls similar routes together); two roads of the first bundle are suppressed.
    """
    original: list[np.ndarray] = []
    anonymized: list[np.ndarray | None] = []
    for bundle in range(3):
        for offset in range(8):
            y = 1000.0 * bundle + 5.0 * offset
            original.append(line((0, y), (2500, y + 3), (5000, y)))
            suppressed = bundle == 0 and offset < 2
            anonymized.append(
                None if suppressed else line((0, 1000 * bundle), (5000, 1000 * bundle))
            )
    for lone in (line((0, 8000), (0, 12000)), line((9000, 0), (9500, 9000))):
        original.append(lone)
        anonymized.append(lone)
    return original, anonymized


def test_cluster_preservation_report_on_bundles() -> None:
    original, anonymized = bundles()
    result = cluster_preservation_report(original, anonymized, 100.0, 10.0, 3, 1000, 0)
    assert result["sample_size"] == len(original)
    assert result["n_clusters_original"] == result["n_clusters_anonymized"] == 3
    assert result["n_suppressed"] == 2
    assert result["precision"] == 1.0
    assert result["recall"] == pytest.approx((6 / 8 + 1 + 1) / 3)
    assert result["f_measure"] == pytest.approx((2 * 0.75 / 1.75 + 1 + 1) / 3)


def test_cluster_preservation_report_samples_deterministically() -> None:
    original, anonymized = bundles()
    first = cluster_preservation_report(original, anonymized, 100.0, 10.0, 3, 12, 7)
    again = cluster_preservation_report(original, anonymized, 100.0, 10.0, 3, 12, 7)
    assert first["sample_size"] == 12
    assert first == again or all(
        first[key] == again[key] or (math.isnan(first[key]) and math.isnan(again[key]))
        for key in first
    )
    with pytest.raises(InputError):
        cluster_preservation_report(original, anonymized[:-1], 100.0, 10.0, 3, 12, 7)


# --------------------------------------------------------------------------- re-identification


def test_generalize_observations_collapses_repeats() -> None:
    assert generalize_observations([3, 3, 5, 5, 5, 3, NO_CELL, NO_CELL, 2]) == (3, 5, 3, -1, 2)
    assert generalize_observations([]) == ()


def risk(
    inputs: Sequence[Sequence[int]],
    owners: Sequence[int],
    published: Sequence[Sequence[int]],
    published_owners: Sequence[int],
    k: int,
    observed: Sequence[Sequence[int]] | None = None,
    observations: Sequence[int] = range(1, 8),
) -> dict:
    """reidentification_risk with one observed point per cell visit unless told otherwise."""
    cells = observed if observed is not None else inputs
    return reidentification_risk(
        [np.asarray(c) for c in cells],
        np.asarray(owners),
        [tuple(p) for p in published],
        np.asarray(published_owners),
        [tuple(s) for s in inputs],
        observations,
        k,
        None,
        0,
    )


def by_j(result: dict) -> dict[int, dict]:
    return {row["observations"]: row for row in result["by_observations"]}


A, B, C, D = 0, 1, 2, 3


def test_risk_by_hand_after_kam_cut() -> None:
    # Three people drive ABC, a fourth ABD; KAM_CUT with k = 2 publishes ABC x3 and AB.
    inputs = [(A, B, C)] * 3 + [(A, B, D)]
    owners = [0, 1, 2, 3]
    published = kam_cut(inputs, owners, 2)
    assert [p.cells for p in published] == [(A, B, C)] * 3 + [(A, B)]
    result = risk(inputs, owners, [p.cells for p in published], owners, 2)
    rows = by_j(result)
    # j = 1, 2: everybody's A, AB are in all four published sequences -> 1/4.
    assert rows[1]["mean"] == rows[2]["mean"] == 0.25
    # j = 3: ABC has three candidates (1/3); ABD none (0).
    assert rows[3]["n"] == 4 and rows[3]["mean"] == pytest.approx((3 * (1 / 3) + 0) / 4)
    assert rows[3]["fraction_zero"] == 0.25
    assert rows[4]["n"] == 0 and math.isnan(rows[4]["mean"])
    assert result["max"] == pytest.approx(1 / 3)
    assert result["max"] <= result["bound"] == 0.5


def test_risk_with_fewer_than_k_candidates_uses_theorem_10_case_2() -> None:
    # ABC is driven by three people but published whole only once: c = 1 < k = 2, M = 3.
    inputs = [(A, B, C)] * 3
    result = risk(inputs, [0, 1, 2], [(A, B, C), (A, B), (A, B)], [0, 1, 2], 2)
    assert by_j(result)[3]["max"] == pytest.approx(1 / 3)


def test_observed_points_outside_published_cells_cannot_be_matched() -> None:
    inputs = [(A, B)] * 3
    observed = [(A, A, NO_CELL, B)] * 3
    result = risk(inputs, [0, 1, 2], inputs, [0, 1, 2], 2, observed=observed)
    rows = by_j(result)
    assert rows[2]["mean"] == pytest.approx(1 / 3)  # A, A -> g(S) = A
    assert rows[3]["fraction_zero"] == 1.0 and rows[4]["max"] == 0.0


def test_a_non_anonymized_release_identifies_a_unique_trajectory() -> None:
    # Publishing every input as is: the only person who drove through D is found for sure.
    inputs = [(A, B, C), (A, B, C), (A, B, C), (A, D)]
    owners = [0, 1, 2, 3]
    result = risk(inputs, owners, inputs, owners, 2)
    assert result["max"] == 1.0 > result["bound"]
    assert by_j(result)[2]["max"] == 1.0


def test_risk_counts_distinct_owners() -> None:
    # Person 0 drove ABC twice: two published sequences but only two people -> 1/2, not 1/3.
    inputs = [(A, B, C), (A, B, C), (A, B, C)]
    result = risk(inputs, [0, 0, 1], inputs, [0, 0, 1], 2)
    assert result["max"] == 0.5


def test_risk_samples_trajectories() -> None:
    inputs = [(A, B, C)] * 5
    result = reidentification_risk(
        [np.array(s) for s in inputs], np.arange(5), inputs, np.arange(5), inputs, [1], 2, 2, 3
    )
    assert result["n_trajectories"] == 2 and by_j(result)[1]["n"] == 2


@pytest.mark.parametrize(
    "change",
    [
        {"owners": np.arange(2)},
        {"published_owners": np.arange(1)},
        {"k": 0},
        {"observations": [0, 1]},
        {"max_trajectories": -1},
    ],
)
def test_risk_rejects_bad_arguments(change: dict) -> None:
    arguments = {
        "observed_cells": [np.array([A, B])] * 3,
        "owners": np.arange(3),
        "published": [(A, B)] * 3,
        "published_owners": np.arange(3),
        "input_sequences": [(A, B)] * 3,
        "observations": [1, 2],
        "k": 2,
        "max_trajectories": 2,
        "rng": 0,
    }
    with pytest.raises(InputError):
        reidentification_risk(**{**arguments, **change})


def brute_risk(
    observed: list[list[int]],
    owners: list[int],
    published: list[tuple[int, ...]],
    published_owners: list[int],
    inputs: list[tuple[int, ...]],
    j: int,
    k: int,
) -> list[float]:
    """Oracle: Theorem 10's probability with plain subsequence tests."""

    def contains(sequence: Sequence[int], pattern: Sequence[int]) -> bool:
        remaining = iter(sequence)
        return all(any(cell == item for item in remaining) for cell in pattern)

    result = []
    for points in observed:
        if len(points) < j:
            continue
        pattern = generalize_observations(points[:j])
        c = len(
            {o for s, o in zip(published, published_owners, strict=True) if contains(s, pattern)}
        )
        m = len({o for s, o in zip(inputs, owners, strict=True) if contains(s, pattern)})
        result.append(0.0 if c == 0 else 1 / c if c >= k else 1 / max(m, c))
    return result


@st.composite
def anonymized_datasets(draw: st.DrawFn) -> tuple:
    """Random trips, their owners, a KAM_CUT or KAM_REC release, and observed points."""
    n = draw(st.integers(2, 14))
    inputs = [tuple(draw(st.lists(st.integers(0, 4), min_size=1, max_size=6))) for _ in range(n)]
    per_trip = draw(st.booleans())  # k counting trajectories instead of persons
    owners = list(range(n)) if per_trip else [draw(st.integers(0, n - 1)) for _ in range(n)]
    k = draw(st.integers(2, 3))
    method = draw(st.sampled_from(["kam_cut", "kam_rec"]))
    release = kam_cut(inputs, owners, k) if method == "kam_cut" else kam_rec(inputs, owners, k, 0.4)
    # Each cell visit is observed by one to three GPS points.
    observed = [[cell for cell in trip for _ in range(draw(st.integers(1, 3)))] for trip in inputs]
    published = [item.cells for item in release]
    published_owners = [owners[item.source] for item in release]
    return inputs, owners, published, published_owners, observed, k


@settings(max_examples=150, deadline=None)
@given(anonymized_datasets())
def test_risk_after_kam_cut_or_kam_rec_never_exceeds_one_over_k(dataset: tuple) -> None:
    inputs, owners, published, published_owners, observed, k = dataset
    observations = range(1, 19)
    result = risk(inputs, owners, published, published_owners, k, observed, observations)
    assert not result["max"] > 1 / k  # Theorem 10 (NaN cannot happen: every trip has points)
    for j, row in by_j(result).items():
        expected = brute_risk(observed, owners, published, published_owners, inputs, j, k)
        assert row["n"] == len(expected)
        if expected:
            assert row["mean"] == pytest.approx(np.mean(expected))
            assert row["max"] == pytest.approx(max(expected))


def concatenated(sequences: Sequence[Sequence[int]]) -> ConcatenatedSequences:
    lengths = [len(s) for s in sequences]
    return ConcatenatedSequences(np.array([c for s in sequences for c in s], dtype=np.int64),
                                 np.concatenate(([0], np.cumsum(lengths))).astype(np.int64))


def test_concatenated_sequences_read_like_lists() -> None:
    lists = [[3, 1], [], [4, 1, 5]]
    flat = concatenated(lists)
    assert len(flat) == 3 and list(flat) == lists and flat[-1] == [4, 1, 5]
    assert flat[0:2] == lists[0:2] and flat.lengths().tolist() == [2, 0, 3]
    with pytest.raises(IndexError):
        flat[3]
    with pytest.raises(InputError):
        ConcatenatedSequences(np.arange(3), np.array([0, 2]))


@settings(max_examples=60, deadline=None)
@given(anonymized_datasets(), st.integers(1, 16), st.integers(0, 2**32 - 1))
def test_risk_of_a_sample_drawn_first_equals_the_risk_sampling_itself(
    dataset: tuple, sample: int, seed: int
) -> None:
    """Issue 12: the metrics step draws the attacked trajectories, reads only their fixes and
    passes the sequences end to end: the figures are those of reidentification_risk."""
    inputs, owners, published, published_owners, observed, k = dataset
    observed = [np.asarray(cells) for cells in observed]
    whole = reidentification_risk(observed, np.asarray(owners), published,
                                  np.asarray(published_owners), inputs, range(1, 6), k,
                                  sample, np.random.default_rng(seed))
    chosen = sample_trajectories(len(inputs), sample, np.random.default_rng(seed))
    drawn = reidentification_risk_of_sample(
        [observed[i][:5] for i in chosen], np.asarray(owners), concatenated(published),
        np.asarray(published_owners), concatenated(inputs), range(1, 6), k)
    assert repr(drawn) == repr(whole)  # repr: NaN equals NaN


def test_cluster_report_of_a_sample_drawn_first_equals_the_report() -> None:
    original, anonymized = bundles()
    whole = cluster_preservation_report(original, anonymized, 100.0, 10.0, 3, 12, 7)
    chosen = sample_objects(len(original), 12, 7)
    drawn = cluster_preservation_of_sample([original[i] for i in chosen],
                                           [anonymized[i] for i in chosen], 100.0, 10.0, 3)
    assert repr(drawn) == repr(whole)
