"""The pure MLA algorithms of seed 001: DGH loss, DynamicSA, progressive SA, the three
clusterings and the k-persons publication rule, on the paper's examples and against brute force."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonymizers.errors import InputError
from anonymizers.families.clustering.mla import (
    MlaRelease,
    mla_heuristic,
    mla_iterative_kmeans,
    mla_kmeans,
)
from anonymizers.families.clustering.mla_alignment import (
    Profile,
    dynamic_sa,
    progressive_alignment,
)
from anonymizers.families.clustering.mla_clustering import (
    iterative_kprime_means_clusters,
    person_count,
    repair_clusters,
)
from anonymizers.families.clustering.mla_loss import (
    Grid,
    dgh_depth,
    full_suppression_bits,
    generalization_loss,
    lca_loss,
    lca_node,
    lemma2_loss,
    node_leaves,
    root_distances,
)

METHODS = [mla_heuristic, mla_kmeans, mla_iterative_kmeans]
EPS = 10.0
HOUR = 3600.0


def make_points(trajectories: list[tuple[int, list[tuple[int, int, int]]]]
                ) -> dict[str, np.ndarray]:
    """Columns for the entry functions from ``(person, [(x cell, y cell, hour), ...])``.

    Points sit in the middle of their cell, so the grid built from them puts the smallest
    cell of each axis at 0 only if some point has 0 there; tests that read cells back use
    the release's grid.
    """
    traj, person, t, x, y = [], [], [], [], []
    for index, (who, points) in enumerate(trajectories):
        for cx, cy, ct in points:
            traj.append(index)
            person.append(who)
            x.append((cx + 0.5) * EPS)
            y.append((cy + 0.5) * EPS)
            t.append((ct + 0.5) * HOUR)
    return {"traj": np.array(traj), "person": np.array(person), "t": np.array(t),
            "x": np.array(x), "y": np.array(y)}


def run(method, data: dict[str, np.ndarray], k: int, seed: int = 0) -> MlaRelease:
    return method(data["traj"], data["person"], data["t"], data["x"], data["y"], k=k,
                  epsilon=EPS, time_bin=HOUR, seed=seed)


# --- §3.1: DGH trees and information loss (Examples 1-3, Lemmas 1-2, §5.1 bound) ----------

def test_example_1_depths_and_lca() -> None:
    """4 x 8 map: x needs 3 bits, y 2; '000' and '010' generalize to their LCA '0'."""
    assert dgh_depth(8) == 3 and dgh_depth(4) == 2 and dgh_depth(1) == 0
    assert lca_node(np.array([0b000, 0b010])) == (2, 0b0)
    lo, hi = node_leaves(2, 0b0)
    assert (int(lo), int(hi)) == (0, 3)


def test_example_2_generalizing_10_to_1_costs_one_bit() -> None:
    lo_10, hi_10 = node_leaves(1, 0b10)
    lo_1, hi_1 = node_leaves(2, 0b1)
    assert (int(lo_10), int(hi_10), int(lo_1), int(hi_1)) == (4, 5, 4, 7)
    assert generalization_loss(hi_10 - lo_10 + 1, hi_1 - lo_1 + 1) == 1.0


def test_example_3_lemma_2() -> None:
    """|(log2 8 - log2 2) - (log2 8 - log2 4)| = 1 bit, the same as eq. 1."""
    assert lemma2_loss(height_i=1, height_j=2, depth=3) == 1
    assert lemma2_loss(1, 2, 3) == generalization_loss(2, 4)


def test_lemma_1_two_leaves_to_their_lca() -> None:
    """'000' and '010' to '0': 2 + 2 bits."""
    assert lca_loss(np.array([0b000, 0b010])) == 4
    assert lca_loss(np.array([5, 5, 5])) == 0


def test_full_suppression_bound_of_tdrive() -> None:
    """474,572 bits = 27,916 samples x (7 + 7 + 3): 100 cells padded to 128, <= 8 bins."""
    grid = Grid(0.0, 0.0, 0.0, 10.0, 86400.0, nx=100, ny=100, nt=7)
    assert grid.bits_per_point == 17
    assert full_suppression_bits(27_916, grid) == 474_572


def test_root_distances_are_length_times_depth() -> None:
    assert root_distances(np.array([1, 3]), np.array([7, 7, 3])).tolist() == [
        [7, 7, 3], [21, 21, 9]]


def test_grid_covering_aligns_and_refuses_outside_points() -> None:
    grid = Grid.covering(np.array([13.0, 41.0]), np.array([5.0, 5.0]),
                         np.array([7200.5, 9000.0]), 10.0, 3600.0)
    assert (grid.x0, grid.y0, grid.t0, grid.nx, grid.ny, grid.nt) == (10.0, 0.0, 7200.0, 4, 1, 1)
    with pytest.raises(InputError):
        grid.cells(np.array([55.0]), np.array([5.0]), np.array([7200.0]))
    with pytest.raises(InputError):
        Grid.covering(np.array([1.0]), np.array([1.0]), np.array([1.0]), 0.0, 3600.0)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-5e6, 5e6, allow_nan=False), min_size=1, max_size=20),
       st.sampled_from([2.5, 10.0, 50.0, 0.1]))
def test_anchored_grid_nodes_are_blocks_of_one_absolute_lattice(values, epsilon) -> None:
    """Every DGH node of the pipeline's grid is a block of a lattice that depends on ε only:
    moving the data inside its block, or adding data, never moves an edge."""
    x = np.array(values)
    grid = Grid.anchored(x, x, epsilon, 3600.0, 24)
    cells = grid.cells(x, x, np.zeros_like(x))
    assert (cells[:, 0] >= 0).all() and (cells[:, 0] < grid.nx).all()
    assert grid.nx == 2 ** grid.depths[0]
    # a wider block of the lattice is cut into blocks of the narrower depth, one of them it
    wider = Grid.anchored(np.r_[x, x.min() - grid.nx * epsilon], x, epsilon, 3600.0, 24)
    steps = (grid.x0 - wider.x0) / (grid.nx * epsilon)
    assert wider.nx >= grid.nx and abs(steps - round(steps)) * grid.nx * epsilon < 1e-6
    inside = Grid.anchored(np.r_[grid.x0 + epsilon / 2, x], x, epsilon, 3600.0, 24)
    assert (inside.x0, inside.nx) == (grid.x0, grid.nx)


def test_anchored_grid_does_not_follow_the_data_minimum() -> None:
    """Two windows whose westmost fixes differ get the same grid (a grid starting at the
    minimum would publish it to ε in every region edge)."""
    a = Grid.anchored(np.array([4_400_013.0, 4_400_900.0]), np.array([0.0, 1.0]), 10.0,
                      3600.0, 24)
    b = Grid.anchored(np.array([4_400_087.0, 4_400_900.0]), np.array([0.0, 1.0]), 10.0,
                      3600.0, 24)
    assert (a.x0, a.nx) == (b.x0, b.nx)


def test_anchored_grid_straddles_zero_like_anywhere_else() -> None:
    grid = Grid.anchored(np.array([-5.0, 7.0]), np.array([-5.0, 7.0]), 10.0, 3600.0, 24)
    assert grid.nx <= 4


@settings(max_examples=300, deadline=None)
@given(st.integers(-10**6 + 1, 10**6), st.sampled_from([0.1, 2.5, 10.0, 3.3]))
def test_cells_agree_with_the_published_edges(index, epsilon) -> None:
    """A point on (or one ulp off) a cell edge is in the cell whose published bounds hold
    it by plain float comparison, as the verifier's SQL compares."""
    grid = Grid.anchored(np.array([-1e7, 1e7]), np.array([0.0]), epsilon, 3600.0, 1)
    edge = grid.x0 + (index + 10**6) * epsilon
    x = np.array([np.nextafter(edge, -np.inf), edge, np.nextafter(edge, np.inf)])
    cells = grid.cells(x, np.zeros(3), np.zeros(3))
    bounds = grid.region_bounds(cells, cells)
    assert ((bounds[:, 0] <= x) & (x < bounds[:, 1])).all()


# --- Algorithm 1: DynamicSA ---------------------------------------------------------------

def plain_dynamic_sa(p: np.ndarray, q: np.ndarray, bits: int) -> tuple[int, list]:
    """Algorithm 1 cell by cell, as printed; returns TotLoss and the matched pairs."""
    m, n = len(p), len(q)
    table = [[0] * (n + 1) for _ in range(m + 1)]
    for i in range(m):
        table[i + 1][0] = table[i][0] + bits
    for j in range(n):
        table[0][j + 1] = table[0][j] + bits
    code = {}
    for i in range(m):
        for j in range(n):
            lemma_1 = sum(2 * (int(a) ^ int(b)).bit_length() for a, b in zip(p[i], q[j],
                                                                              strict=True))
            options = [table[i][j] + lemma_1, table[i + 1][j] + bits, table[i][j + 1] + bits]
            code[i, j] = int(np.argmin(options))
            table[i + 1][j + 1] = options[code[i, j]]
    pairs, i, j = [], m, n
    while i > 0 and j > 0:
        if code[i - 1, j - 1] == 0:
            pairs.append((i - 1, j - 1))
        i, j = (i - 1, j - 1) if code[i - 1, j - 1] == 0 else (
            (i, j - 1) if code[i - 1, j - 1] == 1 else (i - 1, j))
    return table[m][n], pairs[::-1]


def brute_force_loss(p: np.ndarray, q: np.ndarray, bits: int) -> int:
    """The least loss over every order-keeping matching of p and q."""
    best = (len(p) + len(q)) * bits
    for size in range(1, min(len(p), len(q)) + 1):
        for left in itertools.combinations(range(len(p)), size):
            for right in itertools.combinations(range(len(q)), size):
                lemma_1 = sum(2 * (int(a) ^ int(b)).bit_length()
                              for i, j in zip(left, right, strict=True)
                              for a, b in zip(p[i], q[j], strict=True))
                best = min(best, lemma_1 + (len(p) + len(q) - 2 * size) * bits)
    return best


cells_strategy = st.lists(st.tuples(*[st.integers(0, 15)] * 3), max_size=6).map(
    lambda rows: np.array(rows, dtype=np.int64).reshape(-1, 3))


@settings(max_examples=150, deadline=None)
@given(p=cells_strategy, q=cells_strategy, bits=st.integers(1, 14))
def test_dynamic_sa_equals_the_cell_by_cell_dp(p: np.ndarray, q: np.ndarray, bits: int) -> None:
    result = dynamic_sa(p, q, bits)
    loss, pairs = plain_dynamic_sa(p, q, bits)
    assert result.loss_bits == loss
    assert [tuple(r) for r in result.pairs.tolist()] == pairs
    structure = np.full(len(p), -1)
    for i, j in pairs:
        structure[i] = j
    assert result.structure.tolist() == structure.tolist()


@settings(max_examples=60, deadline=None)
@given(p=cells_strategy.filter(lambda a: len(a) <= 4),
       q=cells_strategy.filter(lambda a: len(a) <= 4), bits=st.integers(1, 14))
def test_dynamic_sa_is_optimal(p: np.ndarray, q: np.ndarray, bits: int) -> None:
    assert dynamic_sa(p, q, bits).loss_bits == brute_force_loss(p, q, bits)


@settings(max_examples=30, deadline=None)
@given(p=cells_strategy.map(lambda a: a << 16), q=cells_strategy.map(lambda a: a << 16),
       bits=st.integers(1, 80))
def test_dynamic_sa_beyond_16_bit_cells(p: np.ndarray, q: np.ndarray, bits: int) -> None:
    """Axes longer than 2**16 cells take the exact float path instead of the lookup table."""
    assert dynamic_sa(p, q, bits).loss_bits == plain_dynamic_sa(p, q, bits)[0]


def test_dynamic_sa_generalized_trajectory_is_the_lca_nodes() -> None:
    p = np.array([[0, 0, 0], [4, 3, 1]])
    q = np.array([[1, 0, 0], [6, 3, 1]])
    result = dynamic_sa(p, q, bits_per_point=12)
    assert result.pairs.tolist() == [[0, 0], [1, 1]]
    assert result.loss_bits == 2 * 1 + 2 * 2  # x: '000'+'001' -> '00'; '100'+'110' -> '1'
    assert result.lo.tolist() == [[0, 0, 0], [4, 3, 1]]
    assert result.hi.tolist() == [[1, 0, 0], [7, 3, 1]]


@settings(max_examples=40, deadline=None)
@given(base=cells_strategy.filter(len), others=st.lists(cells_strategy, min_size=1, max_size=5),
       bits=st.integers(1, 14))
def test_batched_added_losses_equal_one_by_one(base: np.ndarray, others: list[np.ndarray],
                                               bits: int) -> None:
    for budget in (None, 0):
        profile = Profile(base, bits, skip_budget=budget)
        lengths = np.array([len(o) for o in others])
        batched = profile.added_losses(np.concatenate(others), lengths)
        alone = [int(Profile(base, bits, budget).added_losses(o, [len(o)])[0]) for o in others]
        assert batched.tolist() == alone
        if budget == 0:  # a one-trajectory profile with budget 0 is Algorithm 1's tr_1
            assert alone == [dynamic_sa(base, o, bits).loss_bits for o in others]


# --- progressive SA -----------------------------------------------------------------------

def test_progressive_alignment_keeps_order_and_suppresses_gaps() -> None:
    members = [np.array([[0, 0, 0], [8, 8, 1], [15, 15, 2], [3, 3, 3]]),  # the basis
               np.array([[0, 1, 0], [15, 14, 2]]),
               np.array([[9, 8, 1], [14, 15, 2], [3, 2, 3]])]
    result = progressive_alignment(np.concatenate(members), [4, 2, 3], bits_per_point=12)
    assert result.order[0] == 0
    columns = np.split(result.point_column, [4, 6])
    assert columns[0].tolist() == [0, 1, 2, 3]
    assert columns[1].tolist() == [0, 2] and columns[2].tolist() == [1, 2, 3]
    assert result.count.tolist() == [2, 2, 3, 2]
    heights = [0 + 1 + 0, 1 + 0 + 0, 1 + 1 + 0, 0 + 1 + 0]  # per column: x, y, t
    assert result.loss_bits == sum(c * h for c, h in zip(result.count, heights, strict=True))


def test_progressive_alignment_suppresses_a_point_aligned_with_a_gap() -> None:
    """Joining (15, 15, 15) to any column costs 2 x 12 bits, suppressing it 12."""
    basis = np.array([[0, 0, 0], [0, 0, 1], [0, 0, 2]])
    other = np.array([[0, 0, 0], [15, 15, 15]])
    result = progressive_alignment(np.concatenate([basis, other]), [3, 2], bits_per_point=12)
    assert result.point_column.tolist() == [0, 1, 2, 0, -1]
    assert result.loss_bits == 12
    result = progressive_alignment(np.concatenate([other, basis]), [2, 3], bits_per_point=12)
    assert result.order.tolist() == [1, 0]  # the longest is the basis wherever it sits
    assert result.point_column.tolist() == [0, -1, 0, 1, 2]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(members=st.lists(cells_strategy.filter(len), min_size=1, max_size=6),
       budget=st.sampled_from([None, 0, 1, 3]))
def test_progressive_alignment_invariants(members: list[np.ndarray], budget: int | None) -> None:
    lengths = np.array([len(m) for m in members])
    result = progressive_alignment(np.concatenate(members), lengths, 12, budget)
    assert result.order[0] == int(np.argmax(lengths))
    assert sorted(result.order.tolist()) == list(range(len(members)))
    cells = np.concatenate(members)
    for column in np.split(result.point_column, np.cumsum(lengths)[:-1]):
        kept = column[column >= 0]
        assert (np.diff(kept) > 0).all()  # order kept, one point per column at most
    aligned = result.point_column >= 0
    assert np.bincount(result.point_column[aligned], minlength=len(result.count)).tolist() == \
        result.count.tolist()
    for c in range(len(result.count)):
        inside = cells[result.point_column == c]
        assert (inside >= result.lo[c]).all() and (inside <= result.hi[c]).all()
    heights = [sum(lca_node(cells[result.point_column == c][:, a])[0] for a in range(3))
               for c in range(len(result.count))]
    assert result.loss_bits == int(np.dot(result.count, heights)) + 12 * int((~aligned).sum())


# --- clustering and the k-persons repair --------------------------------------------------

def test_iterative_kmeans_clusters_have_k_persons_but_the_last() -> None:
    rng = np.random.default_rng(3)
    lengths = rng.integers(1, 30, 60)
    features = root_distances(lengths, np.array([7, 7, 3]))
    person = np.arange(60)
    clusters = iterative_kprime_means_clusters(features, person, 4, seed=1)
    assert sorted(np.concatenate(clusters).tolist()) == list(range(60))
    assert all(person_count(c, person) >= 4 for c in clusters[:-1])


def test_repair_merges_into_the_nearest_and_suppresses_when_impossible() -> None:
    features = np.array([[1.0], [1.1], [5.0], [5.2], [9.0]])
    person = np.arange(5)
    repair = repair_clusters([np.array([0, 1]), np.array([2, 3]), np.array([4])], person,
                             features, 2)
    assert [c.tolist() for c in repair.clusters] == [[0, 1], [2, 3, 4]]
    assert repair.merged == 1 and repair.suppressed == () and repair.below_k_share == 0.2
    alone = repair_clusters([np.array([0, 1, 2])], np.array([0, 0, 1]), features[:3], 3)
    assert alone.clusters == () and len(alone.suppressed) == 1 and alone.below_k_share == 1.0


def test_person_with_two_trajectories_counts_once() -> None:
    """k'-means puts A's two equal-length trajectories together: one person, merged."""
    data = make_points([(0, [(0, 0, 0), (1, 1, 1), (2, 2, 2)]),
                        (0, [(0, 0, 0), (1, 1, 1), (2, 2, 2)]),
                        (1, [(0, 0, 0), (1, 1, 1), (2, 2, 2), (3, 3, 3), (4, 4, 4)]),
                        (2, [(0, 1, 0), (1, 1, 1), (2, 2, 2), (3, 3, 3), (4, 4, 4)])])
    release = run(mla_kmeans, data, k=2)
    assert release.below_k_share == 0.5 and release.merged_clusters == 1
    assert len(release.clusters) == 1
    assert release.clusters[0].persons.tolist() == [0, 1, 2]
    assert_publishable(release, data, 2)
    for method in METHODS:
        assert_publishable(run(method, data, k=2), data, 2)
        assert_publishable(run(method, data, k=3), data, 3)


@pytest.mark.parametrize("method", METHODS)
def test_fewer_persons_than_k_publishes_nothing(method) -> None:
    data = make_points([(0, [(0, 0, 0), (1, 1, 1)]), (1, [(0, 0, 0)]), (1, [(2, 2, 2)]),
                        (2, [(5, 5, 5), (6, 6, 6)])])
    release = run(method, data, k=4)
    assert release.clusters == ()
    assert (release.point_region == -1).all() and (release.point_cluster == -1).all()
    assert release.suppressed_points == 6 and release.suppressed_trajectories == 4
    assert release.loss_bits == release.full_suppression_bits
    assert release.area_per_location == 0.0


def test_kmeans_reports_its_below_k_share() -> None:
    """Five one-point trajectories and one long one: k'-means leaves the long one alone."""
    data = make_points([(p, [(p, 0, 0)]) for p in range(5)]
                       + [(5, [(j, 1, j) for j in range(20)])])
    release = run(mla_kmeans, data, k=2)
    assert release.below_k_share == pytest.approx(1 / 6)
    assert release.merged_clusters == 1
    assert_publishable(release, data, 2)


def test_worked_release_two_persons_one_region() -> None:
    """x cells 0 and 1 generalize to '0...0' of height 1: 2 bits, a 20 m x 10 m region."""
    data = make_points([(0, [(0, 0, 0)]), (1, [(1, 0, 0)])])
    release = run(mla_kmeans, data, k=2)
    (cluster,) = release.clusters
    assert cluster.regions.tolist() == [[0.0, 20.0, 0.0, 10.0, 0.0, HOUR]]
    assert release.loss_bits == cluster.loss_bits == 2
    assert release.full_suppression_bits == 2 * (1 + 0 + 0)
    assert release.area_per_location == 200.0 and release.length_increase == 0.0


def test_columns_below_k_persons_are_dropped() -> None:
    """Only the first column holds all three persons; the long basis's tail is suppressed."""
    data = make_points([(0, [(0, 0, 0), (5, 5, 5), (6, 6, 6)]), (1, [(0, 0, 0)]),
                        (2, [(0, 0, 0)])])
    release = run(mla_kmeans, data, k=3)
    (cluster,) = release.clusters
    assert len(cluster.regions) == 1 and cluster.region_persons.tolist() == [3]
    assert cluster.suppressed_points == 2 and release.point_region.tolist() == [0, -1, -1, 0, 0]
    assert release.loss_bits == 2 * release.grid.bits_per_point
    assert cluster.length_increase == pytest.approx(((1 - 3) + 0 + 0) / 3)


@pytest.mark.parametrize("bad", [
    {"traj": np.array([1, 0])},
    {"t": np.array([2.0, 1.0])},
    {"person": np.array([0, 1])},
    {"x": np.array([0.0])},
    {"x": np.array([np.nan, 1.0])},
    {"traj": np.array([0.5, 0.5])},
])
def test_bad_input_is_an_input_error(bad: dict) -> None:
    data = {"traj": np.array([0, 0]), "person": np.array([0, 0]), "t": np.array([1.0, 2.0]),
            "x": np.array([0.0, 1.0]), "y": np.array([0.0, 1.0]), **bad}
    with pytest.raises(InputError):
        run(mla_kmeans, data, k=2)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("k", [0, -1, 2.0, True])
def test_bad_k_is_an_input_error(method, k) -> None:
    with pytest.raises(InputError):
        run(method, make_points([(0, [(0, 0, 0)]), (1, [(0, 0, 0)])]), k=k)


# --- the publication rule on random data, for all three methods ---------------------------

def assert_publishable(release: MlaRelease, data: dict[str, np.ndarray], k: int) -> None:
    """Every cluster and region holds k persons; regions contain their points in order."""
    cells = release.grid.cells(data["x"], data["y"], data["t"])
    traj, person = data["traj"], data["person"]
    for index, cluster in enumerate(release.clusters):
        assert len(np.unique(cluster.persons)) == len(cluster.persons) >= k
        members = np.isin(traj, cluster.trajectories)
        assert (release.point_cluster[~members] != index).all()
        assert set(np.unique(person[members])) == set(cluster.persons.tolist())
        for r, region in enumerate(cluster.regions):
            inside = release.point_cluster == index
            inside &= release.point_region == r
            assert len(np.unique(person[inside])) == cluster.region_persons[r] >= k
            assert inside.sum() == cluster.region_points[r]
            lo, hi = region[0::2], region[1::2]
            edges_lo = np.array([release.grid.x0, release.grid.y0, release.grid.t0])
            step = np.array([release.grid.epsilon, release.grid.epsilon, release.grid.time_bin])
            assert (edges_lo + cells[inside] * step >= lo - 1e-6).all()
            assert (edges_lo + (cells[inside] + 1) * step <= hi + 1e-6).all()
    for t_id in np.unique(traj):
        regions = release.point_region[(traj == t_id) & (release.point_region >= 0)]
        assert (np.diff(regions) > 0).all()  # column order, one point per region
    for index, cluster in enumerate(release.clusters):  # k persons match every region
        mine = release.point_cluster == index
        full = {int(person[traj == t_id][0]) for t_id in cluster.trajectories
                if np.unique(release.point_region[mine & (traj == t_id)]).size
                == len(cluster.regions)}
        assert len(full) >= k
    assert release.suppressed_points == int((release.point_region < 0).sum())
    assert 0 <= release.loss_bits <= release.full_suppression_bits
    published = (release.point_region >= 0).sum()
    assert release.loss_bits >= (len(traj) - published) * release.grid.bits_per_point


datasets = st.lists(
    st.tuples(st.integers(0, 7),
              st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9), st.integers(0, 30)),
                       min_size=1, max_size=6).map(lambda ps: sorted(ps, key=lambda p: p[2]))),
    min_size=1, max_size=16)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trajectories=datasets, k=st.integers(1, 4), seed=st.integers(0, 3))
def test_every_method_publishes_only_k_persons(trajectories: list, k: int, seed: int) -> None:
    data = make_points(trajectories)
    n_persons = len({who for who, _ in trajectories})
    for method in METHODS:
        release = run(method, data, k, seed)
        assert_publishable(release, data, k)
        if n_persons < k:
            assert release.clusters == ()
        assert 0.0 <= release.below_k_share <= 1.0


def test_the_pipeline_grid_suppresses_outliers_instead_of_growing_the_hierarchy() -> None:
    """One GPS outlier 500 km away must not deepen the hierarchies (every region joined
    by it would span hundreds of km): the grid holds the central share, the rest is cut."""
    import pandas as pd

    from anonymizers.families.clustering.steps import _core_grid

    rng = np.random.default_rng(0)
    x = np.r_[rng.uniform(500_000, 501_000, 999), 1_000_000.0]
    y = np.r_[rng.uniform(4_400_000, 4_401_000, 999), 4_400_500.0]
    grid = _core_grid(pd.DataFrame({"x": x, "y": y}), 10.0, 3600, 24, 0.99)
    inside = grid.contains(x, y)
    assert grid.nx <= 256 and grid.ny <= 256  # ~100 cells of 10 m, one dyadic block
    assert not inside[-1] and inside[:-1].mean() > 0.98
    everything = _core_grid(pd.DataFrame({"x": x, "y": y}), 10.0, 3600, 24, 1.0)
    assert everything.contains(x, y).all() and everything.nx >= 50_000
