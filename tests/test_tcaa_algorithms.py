"""The pure TCAA algorithms (Jiang & Hu 2021): synchronization, similarities, clustering,
generalization and IL, on hand examples and against brute force (no database)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonymizers.errors import InputError
from anonymizers.families.clustering.tcaa import (
    SynchronizedPieces,
    direction_similarity_rows,
    distance_bounds,
    distance_similarity_rows,
    information_loss,
    initial_seeds,
    similarity_rows,
    synchronize_on_grid,
    tcaa,
    tclustering,
    tgeneralizing,
    tsynchzing,
)

# --- tiny helpers ---------------------------------------------------------------------------


def make_fixes(trajectories: list[tuple[int, int, list[tuple[float, float, float]]]]
               ) -> tuple[np.ndarray, ...]:
    """(traj, person, [(t, x, y), ...]) triples -> the five fix arrays, in the given order."""
    rows = [(tr, pe, *fix) for tr, pe, fixes in trajectories for fix in fixes]
    traj, person, t, x, y = (np.array(c) for c in zip(*rows, strict=True))
    return traj.astype(np.int64), person.astype(np.int64), t, x, y


def grid(trajectories: list[tuple[int, int, list[tuple[float, float, float]]]],
         window: tuple[float, float] = (0.0, 7200.0), interval: float = 600.0,
         slice_seconds: float = 3600.0) -> SynchronizedPieces:
    return synchronize_on_grid(*make_fixes(trajectories), *window, interval=interval,
                               slice_seconds=slice_seconds)


def random_pieces(rng: np.random.Generator, n: int, times: int,
                  stationary: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Random walks; a share of the pieces stand still for some or all segments."""
    X = np.cumsum(rng.normal(0, 10, (n, times)), axis=1) + rng.uniform(0, 100, (n, 1))
    Y = np.cumsum(rng.normal(0, 10, (n, times)), axis=1) + rng.uniform(0, 100, (n, 1))
    still = rng.random((n, times - 1)) < stationary
    for i, j in zip(*np.nonzero(still), strict=True):
        X[i, j + 1:] -= X[i, j + 1] - X[i, j]
        Y[i, j + 1:] -= Y[i, j + 1] - Y[i, j]
    return X, Y


# --- brute force (plain loops over pairs: tests only) ---------------------------------------


def brute_bounds(X: np.ndarray, Y: np.ndarray) -> tuple[list[float], list[float]]:
    lo, hi = [], []
    for j in range(X.shape[1]):
        d = [math.dist((X[p, j], Y[p, j]), (X[q, j], Y[q, j]))
             for p in range(len(X)) for q in range(len(X)) if p != q]
        lo.append(min(d) if d else 0.0)
        hi.append(max(d) if d else 0.0)
    return lo, hi


def brute_simd(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    lo, hi = brute_bounds(X, Y)
    n, times = X.shape
    out = np.zeros((n, n))
    for p in range(n):
        for q in range(n):
            total = 0.0
            for j in range(times):
                d = math.dist((X[p, j], Y[p, j]), (X[q, j], Y[q, j]))
                total += 1.0 if hi[j] == lo[j] else 1 - (d - lo[j]) / (hi[j] - lo[j])
            out[p, q] = total / times
    return out


def brute_cos(a: tuple[float, float], b: tuple[float, float], min_move: float) -> float:
    la, lb = math.hypot(*a), math.hypot(*b)
    if la <= min_move and lb <= min_move:
        return 1.0
    if la <= min_move or lb <= min_move:
        return 0.0
    return (a[0] * b[0] + a[1] * b[1]) / (la * lb)


def brute_simo(X: np.ndarray, Y: np.ndarray, min_move: float = 0.0) -> np.ndarray:
    n, times = X.shape
    out = np.zeros((n, n))
    for p in range(n):
        for q in range(n):
            cosines = [brute_cos((X[p, i + 1] - X[p, i], Y[p, i + 1] - Y[p, i]),
                                 (X[q, i + 1] - X[q, i], Y[q, i + 1] - Y[q, i]), min_move)
                       for i in range(times - 1)]
            out[p, q] = sum(cosines) / (times - 1)
    return out


# --- Algorithm 1 ----------------------------------------------------------------------------


def test_tsynchzing_interpolates_on_the_union_of_times() -> None:
    a = np.array([[0.0, 0.0, 0.0], [10.0, 10.0, 20.0]])
    b = np.array([[0.0, 5.0, 5.0], [4.0, 5.0, 9.0], [10.0, 5.0, 5.0]])
    c = np.array([[0.0, 1.0, 1.0], [5.0, 6.0, 1.0], [10.0, 6.0, 11.0]])
    sa, sb, sc = tsynchzing([a, b, c])
    assert sa[:, 0].tolist() == [0.0, 4.0, 5.0, 10.0]
    assert np.allclose(sa[:, 1:], [[0, 0], [4, 8], [5, 10], [10, 20]])
    assert np.allclose(sb[:, 1:], [[5, 5], [5, 9], [5, 8 + 1 / 3], [5, 5]])
    assert np.allclose(sc[:, 1:], [[1, 1], [5, 1], [6, 1], [6, 11]])


@pytest.mark.parametrize("trajectories", [
    [np.array([[0.0, 0, 0], [10, 1, 1]]), np.array([[1.0, 0, 0], [10, 1, 1]])],  # start
    [np.array([[0.0, 0, 0], [10, 1, 1]]), np.array([[0.0, 0, 0], [9, 1, 1]])],  # end
    [np.array([[0.0, 0, 0], [0, 1, 1]])],  # time not increasing
    [np.zeros((2, 2))],  # not t, x, y
], ids=["start", "end", "repeated-time", "shape"])
def test_tsynchzing_refuses_what_breaks_assumption_1(trajectories: list[np.ndarray]) -> None:
    with pytest.raises(InputError):
        tsynchzing(trajectories)


# --- the grid policy ------------------------------------------------------------------------


def test_grid_interpolates_and_never_extrapolates() -> None:
    pieces = grid([
        (0, 10, [(0.0, 0.0, 0.0), (7200.0, 7200.0, -720.0)]),  # both slices
        (1, 11, [(600.0, 0.0, 0.0), (7200.0, 1.0, 1.0)]),  # starts after slice 0's start
        (2, 12, [(0.0, 0.0, 0.0), (2999.0, 1.0, 1.0)]),  # ends before slice 0's last point
    ])
    assert pieces.piece_traj.tolist() == [0, 0, 1]
    assert pieces.piece_slice.tolist() == [0, 1, 1]
    assert pieces.piece_person.tolist() == [10, 10, 11]
    assert pieces.points_per_slice == 6  # half-open slices: 3600 s is slice 1's alone
    assert np.allclose(pieces.times[1], 3600 + 600 * np.arange(6))
    assert np.allclose(pieces.X[0], 600 * np.arange(6))
    assert np.allclose(pieces.Y[1], -360 - 60 * np.arange(6))
    assert np.allclose(pieces.X[2], (pieces.times[1] - 600) / 6600)
    assert pieces.uncovered_trajectories.tolist() == [2]
    assert pieces.uncovered_persons.tolist() == [12]


def test_grid_gap_across_a_slice_boundary_is_interpolated_across() -> None:
    pieces = grid([(5, 1, [(0.0, 0.0, 0.0), (3000.0, 300.0, 0.0), (4200.0, 300.0, 1200.0),
                           (7200.0, 0.0, 1200.0)])])
    assert pieces.piece_slice.tolist() == [0, 1]
    # 3600 s lies in the gap 3000 -> 4200: half way; it is slice 1's first point only
    assert np.allclose([pieces.X[0, -1], pieces.Y[0, -1]], [300.0, 0.0])
    assert np.allclose([pieces.X[1, 0], pieces.Y[1, 0]], [300.0, 600.0])
    assert np.allclose(pieces.Y[1, 1], 1200.0)


def test_a_gap_longer_than_max_gap_splits_the_trajectory() -> None:
    """Fixes 1,200 s apart are interpolated across with max_gap 1,200 and not with 1,199: the
    slice whose first point falls in the gap gets no piece from that trajectory; the slice
    before it, covered by the run before the gap, keeps its piece."""
    every_600 = [t for t in np.arange(0.0, 7201.0, 600.0) if t != 3600.0]  # 3000 -> 4200
    fixes = [(5, 1, [(t, t / 10, 0.0) for t in every_600]),
             (6, 2, [(t, 0.0, 0.0) for t in np.arange(3600.0, 7201.0, 600.0)])]
    arrays = make_fixes(fixes)
    across = synchronize_on_grid(*arrays, 0.0, 7200.0, interval=600.0, slice_seconds=3600.0,
                                 max_gap=1200.0)
    assert across.piece_traj.tolist() == [5, 5, 6]
    split = synchronize_on_grid(*arrays, 0.0, 7200.0, interval=600.0, slice_seconds=3600.0,
                                max_gap=1199.0)
    assert list(zip(split.piece_traj.tolist(), split.piece_slice.tolist(),
                    strict=True)) == [(5, 0), (6, 1)]
    assert np.allclose(split.X[0], across.X[0])  # the same fixes give the same positions
    with pytest.raises(InputError, match="max_gap"):
        synchronize_on_grid(*arrays, 0.0, 7200.0, max_gap=0.0)


def test_grid_keeps_one_piece_per_person_and_slice() -> None:
    pieces = grid([
        (3, 1, [(0.0, 0.0, 0.0), (3600.0, 0.0, 0.0)]),
        (4, 1, [(0.0, 9.0, 9.0), (100.0, 9.0, 9.0), (3600.0, 9.0, 9.0)]),  # more fixes
        (6, 2, [(0.0, 1.0, 1.0), (3600.0, 1.0, 1.0)]),
        (7, 2, [(0.0, 2.0, 2.0), (3600.0, 2.0, 2.0)]),  # tie: the lower id 6 wins
    ], window=(0.0, 3600.0))
    assert pieces.piece_traj.tolist() == [4, 6]
    assert pieces.piece_person.tolist() == [1, 2]
    assert pieces.n_duplicate_pieces == 2
    assert pieces.uncovered_trajectories.tolist() == [3, 7]
    assert pieces.uncovered_persons.size == 0


def test_grid_matches_per_trajectory_interpolation() -> None:
    rng = np.random.default_rng(3)
    trajectories = []
    for i in range(60):
        start, end = sorted(rng.uniform(-600, 11_400, 2))
        t = np.sort(np.r_[start, end, rng.uniform(start, end, rng.integers(0, 30))])
        trajectories.append((i, i, list(zip(t, rng.normal(size=t.size),
                                            rng.normal(size=t.size), strict=True))))
    pieces = grid(trajectories, window=(0.0, 10_800.0), interval=300.0)
    expected = 0
    for i, _, fixes in trajectories:
        t, x, _ = np.array(fixes).T
        for s, start in enumerate(pieces.slice_start):
            if t[0] <= start and t[-1] >= start + 3600 - 300:  # the last point
                row = np.flatnonzero((pieces.piece_traj == i) & (pieces.piece_slice == s))
                assert row.size == 1
                assert np.allclose(pieces.X[row[0]], np.interp(pieces.times[s], t, x))
                expected += 1
    assert pieces.n_pieces == expected


def test_grid_of_no_fixes_is_empty() -> None:
    empty = np.zeros(0)
    pieces = synchronize_on_grid(empty.astype(np.int64), empty.astype(np.int64), empty, empty,
                                 empty, 0.0, 3600.0)
    assert pieces.n_pieces == 0 and pieces.X.shape == (0, 12)
    assert pieces.uncovered_persons.size == 0
    assert tcaa(pieces, 3).size == 0


@pytest.mark.parametrize("fixes", [
    [(0, 1, [(10.0, 0.0, 0.0), (5.0, 0.0, 0.0)])],  # time unsorted
    [(1, 1, [(0.0, 0.0, 0.0)]), (0, 1, [(0.0, 0.0, 0.0)])],  # trajectories unsorted
    [(0, 1, [(0.0, 0.0, 0.0)]), (0, 2, [(1.0, 0.0, 0.0)])],  # two persons
    [(0, 1, [(0.0, math.nan, 0.0)])],  # not finite
], ids=["time", "trajectory", "person", "nan"])
def test_grid_refuses_bad_fixes(fixes: list) -> None:
    with pytest.raises(InputError):
        grid(fixes)


@pytest.mark.parametrize(("window", "interval", "slice_seconds"), [
    ((0.0, 5000.0), 600.0, 3600.0), ((0.0, 3600.0), 700.0, 3600.0),
    ((0.0, 3600.0), 0.0, 3600.0), ((10.0, 0.0), 600.0, 3600.0),
], ids=["window", "interval", "zero", "reversed"])
def test_grid_refuses_a_grid_that_does_not_divide(window: tuple[float, float],
                                                  interval: float, slice_seconds: float) -> None:
    with pytest.raises(InputError):
        grid([(0, 1, [(0.0, 0.0, 0.0)])], window, interval, slice_seconds)


# --- eqs. 2-6 -------------------------------------------------------------------------------


@pytest.mark.parametrize("case", ["random", "duplicates", "collinear", "equal", "one", "two",
                                  "circle"])
def test_distance_bounds_equal_brute_force(case: str) -> None:
    rng = np.random.default_rng(7)
    X, Y = rng.normal(size=(25, 3)), rng.normal(size=(25, 3))
    if case == "duplicates":
        X[5], Y[5] = X[3], Y[3]
    elif case == "collinear":
        Y = 2 * X + 1
    elif case == "equal":
        X, Y = np.ones((6, 3)), np.ones((6, 3))
    elif case == "one":
        X, Y = X[:1], Y[:1]
    elif case == "two":
        X, Y = X[:2], Y[:2]
    elif case == "circle":
        angle = np.linspace(0, 2 * np.pi, 25, endpoint=False)[:, None] + np.arange(3)
        X, Y = np.cos(angle), np.sin(angle)
    lo, hi = brute_bounds(X, Y)
    bounds = distance_bounds(X, Y)
    assert np.allclose(bounds.minimum, lo) and np.allclose(bounds.maximum, hi)


@pytest.mark.parametrize("stationary", [0.0, 0.4, 1.0])
@pytest.mark.parametrize("lam", [0.0, 0.6, 1.0])
def test_similarities_equal_brute_force(stationary: float, lam: float) -> None:
    rng = np.random.default_rng(int(10 * stationary + 100 * lam))
    X, Y = random_pieces(rng, 14, 5, stationary)
    simd, simo = brute_simd(X, Y), brute_simo(X, Y)
    assert np.allclose(distance_similarity_rows(X, Y), simd)
    assert np.allclose(direction_similarity_rows(X, Y), simo)
    rows = np.array([3, 0, 13])
    assert np.allclose(similarity_rows(X, Y, rows, lam=lam),
                       (lam * simo + (1 - lam) * simd)[rows])


def test_direction_similarity_min_move_and_negative_cosines() -> None:
    X = np.array([[0.0, 1.0, 1.5], [0.0, -1.0, -1.2], [0.0, 0.3, 0.3]])
    Y = np.zeros((3, 3))
    for min_move in (0.0, 0.25, 0.4):
        assert np.allclose(direction_similarity_rows(X, Y, min_move=min_move),
                           brute_simo(X, Y, min_move))
    assert direction_similarity_rows(X, Y)[0, 1] == -1.0  # eq. 5, not the paper's [0, 1]


def test_degenerate_time_points_give_simd_one() -> None:
    X = np.array([[0.0, 5.0], [0.0, 6.0]])  # two pieces: min = max distance
    assert np.allclose(distance_similarity_rows(X, np.zeros((2, 2))), 1.0)
    assert np.allclose(distance_similarity_rows(np.ones((4, 2)), np.ones((4, 2))), 1.0)


def test_similarity_rows_refuses_bad_arguments() -> None:
    X = np.zeros((3, 2))
    for call in (lambda: similarity_rows(X, X, lam=1.5),
                 lambda: similarity_rows(X, X, np.array([3])),
                 lambda: similarity_rows(X[:, :1], X[:, :1]),
                 lambda: similarity_rows(X, np.zeros((3, 3)))):
        with pytest.raises(InputError):
            call()


# --- Algorithm 2 ----------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 40), k=st.integers(1, 8), times=st.integers(2, 4),
       seed=st.integers(0, 2**16), stationary=st.sampled_from([0.0, 0.5]))
def test_clusters_have_k_to_2k_minus_1_pieces(n: int, k: int, times: int, seed: int,
                                             stationary: float) -> None:
    X, Y = random_pieces(np.random.default_rng(seed), n, times, stationary)
    labels = tclustering(X, Y, k, rng=seed)
    if n < k:
        assert (labels == -1).all()
        return
    sizes = np.bincount(labels)
    assert (labels >= 0).all()
    assert sizes.size == n // k and sizes.min() >= k and sizes.max() <= 2 * k - 1


def brute_tclustering(sim: np.ndarray, k: int, order: np.ndarray) -> np.ndarray:
    """Algorithm 2 from a full Sim matrix, given the seeds in the order they start clusters."""
    labels = np.full(len(sim), -1)
    free = [p for p in range(len(sim)) if p not in set(order.tolist())]
    for cluster, seed in enumerate(order):
        members = [int(seed)]
        while len(members) < k:
            best = max(free, key=lambda p: (sum(sim[p, q] for q in members), -p))
            members.append(best)
            free.remove(best)
        labels[members] = cluster
    for p in free:  # lines 11-14, leftovers in index order
        sums = [sum(sim[p, q] for q in np.flatnonzero(labels == c)) for c in range(len(order))]
        labels[p] = int(np.argmax(sums))
    return labels


@pytest.mark.parametrize(("n", "k", "seed"), [(23, 5, 0), (20, 4, 1), (31, 3, 2), (9, 8, 3)])
def test_tclustering_equals_brute_force_algorithm_2(n: int, k: int, seed: int) -> None:
    X, Y = random_pieces(np.random.default_rng(seed), n, 4, stationary=0.2)
    seeds = initial_seeds(X, Y, n // k, k)
    order = seeds[np.random.default_rng(seed).permutation(seeds.size)]
    sim = 0.6 * brute_simo(X, Y) + 0.4 * brute_simd(X, Y)
    assert tclustering(X, Y, k, rng=seed).tolist() == brute_tclustering(sim, k, order).tolist()


def test_fewer_pieces_than_k_publish_nothing() -> None:
    X, Y = random_pieces(np.random.default_rng(0), 4, 3)
    assert tclustering(X, Y, 5).tolist() == [-1] * 4


@pytest.mark.parametrize("seed", range(4))
def test_far_apart_groups_of_parallel_trajectories_are_recovered(seed: int) -> None:
    rng = np.random.default_rng(seed)
    k, groups, times = 5, 3, 6
    heading = rng.uniform(0, 2 * np.pi, groups)
    origin = rng.uniform(0, 1e6, (groups, 2))
    group = rng.permutation(np.repeat(np.arange(groups), k))
    steps = 50 * np.arange(times)
    X = origin[group, :1] + np.cos(heading[group])[:, None] * steps + rng.normal(0, 5, (15, 1))
    Y = origin[group, 1:] + np.sin(heading[group])[:, None] * steps + rng.normal(0, 5, (15, 1))
    labels = tclustering(X, Y, k, rng=seed)
    for c in range(groups):
        assert np.unique(group[labels == c]).size == 1
    assert np.bincount(labels).tolist() == [k] * groups


@pytest.mark.parametrize("seed", range(3))
def test_lambda_one_groups_by_direction_and_zero_by_distance(seed: int) -> None:
    # A and B close but opposite, C and D close but opposite, the pairs 100 m apart.
    forward, back = np.arange(3.0), np.arange(3.0)[::-1]
    X = np.array([forward, back, forward, back])
    Y = np.array([[0.0] * 3, [1.0] * 3, [100.0] * 3, [101.0] * 3])
    by_distance = tclustering(X, Y, 2, lam=0.0, rng=seed)
    by_direction = tclustering(X, Y, 2, lam=1.0, rng=seed)
    assert by_distance[0] == by_distance[1] != by_distance[2] == by_distance[3]
    assert by_direction[0] == by_direction[2] != by_direction[1] == by_direction[3]


def test_clustering_is_reproducible_from_its_seed() -> None:
    X, Y = random_pieces(np.random.default_rng(11), 200, 5)
    first = tclustering(X, Y, 4, rng=np.random.default_rng(5))
    assert (tclustering(X, Y, 4, rng=np.random.default_rng(5)) == first).all()
    assert (tclustering(X, Y, 4, rng=5) == first).all()


def test_first_seed_is_the_densest_and_seeds_spread() -> None:
    X, Y = random_pieces(np.random.default_rng(2), 30, 4)
    k, lam = 3, 0.6
    sim = lam * brute_simo(X, Y) + (1 - lam) * brute_simd(X, Y)
    np.fill_diagonal(sim, -np.inf)
    density = np.sort(sim, axis=1)[:, -(k - 1):].mean(axis=1)
    seeds = initial_seeds(X, Y, 10, k, lam=lam, alpha=0.8)
    assert seeds[0] == np.argmax(density)
    assert np.unique(seeds).size == 10
    score = 0.8 * (1 - sim[:, seeds[:1]].max(axis=1)) + 0.2 * density
    score[seeds[0]] = -np.inf
    assert seeds[1] == np.argmax(score)


def test_tclustering_refuses_bad_arguments() -> None:
    X, Y = random_pieces(np.random.default_rng(0), 6, 3)
    for call in (lambda: tclustering(X, Y, 0), lambda: tclustering(X, Y, 2, alpha=2.0),
                 lambda: tclustering(X, Y, 2, lam=-0.1), lambda: tclustering(X[:, :1], Y[:, :1], 2),
                 lambda: initial_seeds(X, Y, 2, 7)):
        with pytest.raises(InputError):
            call()


# --- Algorithm 3 and eq. 1 ------------------------------------------------------------------


def test_tgeneralizing_boxes_equal_brute_force() -> None:
    rng = np.random.default_rng(4)
    X, Y = rng.normal(size=(20, 3)), rng.normal(size=(20, 3))
    labels = rng.integers(-1, 5, 20)
    labels[:6] = np.arange(-1, 5)
    boxes = tgeneralizing(X, Y, labels)
    assert boxes.cluster.tolist() == [0, 1, 2, 3, 4]
    for i, c in enumerate(boxes.cluster):
        member = labels == c
        assert np.allclose(boxes.xmin[i], X[member].min(axis=0))
        assert np.allclose(boxes.xmax[i], X[member].max(axis=0))
        assert np.allclose(boxes.ymin[i], Y[member].min(axis=0))
        assert np.allclose(boxes.ymax[i], Y[member].max(axis=0))


@pytest.mark.parametrize("snap", [0.1, 1.0, 25.0, 0.7])
def test_snap_is_outward_and_on_the_lattice(snap: float) -> None:
    rng = np.random.default_rng(int(snap * 10))
    X, Y = rng.uniform(-1e4, 1e4, (40, 3)), rng.uniform(-1e4, 1e4, (40, 3))
    X[:4] = np.round(X[:4] / snap) * snap  # on the lattice already
    labels = rng.integers(0, 6, 40)
    exact, snapped = tgeneralizing(X, Y, labels), tgeneralizing(X, Y, labels, snap=snap)
    for lo, hi in (("xmin", "xmax"), ("ymin", "ymax")):
        a, b = getattr(snapped, lo), getattr(snapped, hi)
        assert (a <= getattr(exact, lo)).all() and (b >= getattr(exact, hi)).all()
        assert (getattr(exact, lo) - a < snap * (1 + 1e-9)).all()
        assert (b - getattr(exact, hi) < snap * (1 + 1e-9)).all()
        for v in (a, b):
            assert np.allclose(v / snap, np.round(v / snap), rtol=0, atol=1e-6)


def test_information_loss_of_a_hand_example() -> None:
    # 4 pieces, 2 time points; whole set 4 x 2 at t1 and 4 x 4 at t2.
    X = np.array([[0.0, 0.0], [1.0, 2.0], [3.0, 3.0], [4.0, 4.0]])
    Y = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [2.0, 4.0]])
    labels = np.array([0, 0, 1, 1])
    # cluster 0: 1 x 1 then 2 x 1; cluster 1: 1 x 0 then 1 x 2
    expected = (1 / 8 + 2 / 16 + 0 / 8 + 2 / 16) / (2 * 2)
    assert information_loss(X, Y, labels) == pytest.approx(expected)
    assert information_loss(X, Y, np.zeros(4, np.int64)) == pytest.approx(1.0)
    with pytest.raises(InputError):
        information_loss(X, Y, np.full(4, -1))


# --- Algorithm 4 over slices ----------------------------------------------------------------


def test_tcaa_clusters_each_slice_with_distinct_persons() -> None:
    rng = np.random.default_rng(9)
    trajectories = []
    for i in range(23):
        start = 0.0 if i < 17 else 3600.0  # slice 0 gets 17 pieces, slice 1 gets 23
        t = np.r_[start, np.sort(rng.uniform(start, 7200, 10)), 7200.0]
        trajectories.append((i, 100 + i, list(zip(t, rng.normal(0, 1e3, 12),
                                                  rng.normal(0, 1e3, 12), strict=True))))
    trajectories.append((23, 200, [(0.0, 0.0, 0.0), (3600.0, 1.0, 1.0)]))  # slice 0 only
    pieces = grid(trajectories)
    labels = tcaa(pieces, k=4, seed=1)
    assert (labels >= 0).all()
    for c in np.unique(labels):
        member = labels == c
        assert np.unique(pieces.piece_slice[member]).size == 1
        assert np.unique(pieces.piece_person[member]).size == member.sum()
        assert 4 <= member.sum() <= 7
    assert np.unique(labels).size == 18 // 4 + 23 // 4
    assert (tcaa(pieces, k=4, seed=1) == labels).all()
    assert (tcaa(pieces, k=19, seed=1)[pieces.piece_slice == 0] == -1).all()
