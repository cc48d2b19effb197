"""The pure demographic anonymizers (Nordström 2012, §4.4): the thesis' equations and examples,
plain-Python references and brute force on random inputs, the privacy properties, bad inputs."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import anonymizers.families.groups.demographics as demographics_module
from anonymizers.errors import InputError
from anonymizers.families.groups.demographics import (
    AtomicGrid,
    ClassBounds,
    DemographicClasses,
    _branch_swap_mutation,
    _Context,
    _Counter,
    _crossed,
    _crossover,
    _fixed,
    _initial_population,
    _is_valid,
    _leaf_boxes,
    _merge_mutation,
    _move_split_mutation,
    _moved_split,
    _random_tree,
    _split_mutation,
    _swapped,
    _tournament,
    atomic_grid,
    classes_kullback_penalty,
    discernability_metric,
    genetic_demographic_classes,
    hide_boundaries,
    kullback_penalty,
    mondrian_demographic_classes,
)

L = (-1, 0)  # a leaf, in the preorder trees of the GA

# --- tiny helpers ---------------------------------------------------------------------------


def make_grid(*bins: int, lower: float = 0.0, width: float = 1.0) -> AtomicGrid:
    """Every attribute ``[lower, lower + width * bins)`` in ``bins`` atomic intervals."""
    return atomic_grid(np.array([[lower, lower + width * b] for b in bins]), np.array(bins))


def column(*values: float) -> np.ndarray:
    return np.array(values, float)[:, None]


def root_of(*bins: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    return (0,) * len(bins), tuple(bins)


def boxes(classes: DemographicClasses) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    b = classes.bounds
    return [(tuple(lo), tuple(hi)) for lo, hi in zip(b.cell_lower.tolist(),
                                                     b.cell_upper.tolist(), strict=True)]


def inside(cell: tuple[int, ...], box: tuple[tuple[int, ...], tuple[int, ...]]) -> bool:
    return all(lo <= c < hi for c, lo, hi in zip(cell, *box, strict=True))


def all_cells(bins: tuple[int, ...]) -> list[tuple[int, ...]]:
    return list(itertools.product(*(range(b) for b in bins)))


@st.composite
def groups(draw, max_dims: int = 3, max_bins: int = 6, max_points: int = 24, max_k: int = 4):
    """(points, grid, k): values on and between atomic boundaries, often clustered."""
    d = draw(st.integers(1, max_dims))
    bins = draw(st.lists(st.integers(1, max_bins), min_size=d, max_size=d))
    k = draw(st.integers(1, max_k))
    lower = draw(st.sampled_from([0.0, -10.0, 2.5]))
    width = draw(st.sampled_from([1.0, 0.5, 5.0]))
    # Quarter steps put values on boundaries and inside atomic intervals alike.
    centres = draw(st.lists(st.tuples(*(st.integers(0, 4 * b - 1) for b in bins)),
                            min_size=1, max_size=4))
    rows = draw(st.lists(st.tuples(st.sampled_from(centres),
                                   st.tuples(*(st.integers(-2, 2) for _ in bins))),
                         min_size=k, max_size=max_points))
    q = np.array([[min(max(c + j, 0), 4 * b - 1) for c, j, b in zip(centre, jitter, bins,
                                                                   strict=True)]
                  for centre, jitter in rows])
    grid = make_grid(*bins, lower=lower, width=width)
    return lower + q * (width / 4), grid, k


# --- plain-Python references and brute force (loops: tests only) ---------------------------


def direct_kp(cells: list[tuple[int, ...]], leaves: list, bins: tuple[int, ...],
              k: int) -> tuple[float, float, float]:
    """Eqs. 14-23 over every atomic interval: N(D) * (-sum p_i log p0_i), sum p0_i (eq. 20)
    and N(D) * H(p). Atomic intervals in no leaf, and leaves below k, are suppressed."""
    total = len(cells)
    count = Counter(cells)
    universe = all_cells(bins)
    owner = {c: next((j for j, box in enumerate(leaves) if inside(c, box)), None)
             for c in universe}
    n_leaf = [sum(count[c] for c in universe if owner[c] == j) for j in range(len(leaves))]
    size = [math.prod(h - lo for lo, h in zip(*box, strict=True)) for box in leaves]
    suppressed = [c for c in universe if owner[c] is None or n_leaf[owner[c]] < k]
    n_s = sum(count[c] for c in suppressed)
    kp = sum_p0 = entropy = 0.0
    for c in universe:
        j = owner[c]
        if j is not None and n_leaf[j] >= k:
            p0 = n_leaf[j] / total / size[j]  # eq. 16
        else:
            p0 = n_s / total / len(suppressed)  # eq. 18
        sum_p0 += p0
        p = count[c] / total  # eq. 14
        if p > 0:
            kp -= p * math.log(p0)
            entropy -= p * math.log(p)
    return total * kp, sum_p0, total * entropy


def reference_mondrian(cells: list[tuple[int, ...]], bins: tuple[int, ...],
                       k: int) -> list[tuple[tuple[int, ...], tuple[int, ...], int]]:
    """§5.2's Mondrian, recursively: (lower, upper, count) of every class, sorted."""
    d = len(bins)
    span = [max(c[j] for c in cells) - min(c[j] for c in cells) for j in range(d)]
    out = []

    def recurse(members: list[tuple[int, ...]], lo: list[int], hi: list[int]) -> None:
        extent = [max(c[j] for c in members) - min(c[j] for c in members) for j in range(d)]
        order = sorted(range(d), key=lambda j: (-(extent[j] / max(span[j], 1)), j))
        for j in order:
            if extent[j] == 0:
                continue
            values = sorted(c[j] for c in members)
            median = values[(len(values) - 1) // 2]
            left = [c for c in members if c[j] <= median]
            right = [c for c in members if c[j] > median]
            if len(left) >= k and len(right) >= k:
                recurse(left, lo, [*hi[:j], median + 1, *hi[j + 1:]])
                recurse(right, [*lo[:j], median + 1, *lo[j + 1:]], hi)
                return
        out.append((tuple(lo), tuple(hi), len(members)))

    recurse(cells, [0] * d, list(bins))
    return sorted(out)


def mondrian_can_cut(members: list[tuple[int, ...]], k: int) -> bool:
    """Whether some attribute's lower-median cut leaves k on both sides (§5.2's rule)."""
    for j in range(len(members[0])):
        values = sorted(c[j] for c in members)
        below = sum(v <= values[(len(values) - 1) // 2] for v in values)
        if below >= k and len(values) - below >= k:
            return True
    return False


def reference_hidden(points: np.ndarray, classes: DemographicClasses) -> list:
    """§4.4.5 per class and attribute: the grid edge at or below the mean of the ceil(k/2)
    lowest values, the first edge above the mean of the ceil(k/2) highest."""
    grid, m = classes.bounds.grid, -(-classes.k // 2)
    out = []
    for i in range(classes.n_classes):
        members = points[classes.assignment == i]
        lows, highs = [], []
        for j in range(grid.n_dims):
            values = sorted(members[:, j].tolist())
            a_low, a_high = sum(values[:m]) / m, sum(values[-m:]) / m
            edges = grid.edges(j).tolist()
            lows.append(max(e for e in edges if e <= a_low))
            highs.append(min(e for e in edges if e > a_high))
        out.append((lows, highs))
    return out


def check_classes(points: np.ndarray, grid: AtomicGrid, k: int,
                  classes: DemographicClasses) -> None:
    """Every class >= k; disjoint boxes on the grid; each counted point inside its class's
    published bounds and in no other; suppressed points in none; sorted; counts match."""
    b = classes.bounds
    assert (classes.n >= k).all()
    assert classes.n.tolist() == np.bincount(classes.assignment[classes.assignment >= 0],
                                             minlength=classes.n_classes).tolist()
    assert (b.cell_lower >= 0).all() and (b.cell_upper <= grid.bins).all()
    assert (b.cell_lower < b.cell_upper).all()
    assert boxes(classes) == sorted(boxes(classes))
    cover = np.zeros(tuple(grid.bins), int)
    for lo, hi in boxes(classes):
        cover[tuple(slice(a, z) for a, z in zip(lo, hi, strict=True))] += 1
    assert cover.max(initial=0) <= 1  # disjoint
    within = (b.lower[:, None, :] <= points[None]) & (points[None] < b.upper[:, None, :])
    holds = within.all(axis=2)  # (C, n): published box holds the raw value
    for i, a in enumerate(classes.assignment.tolist()):
        assert holds[:, i].tolist() == [c == a for c in range(classes.n_classes)]
    assert classes.n_points == len(points)


# --- the thesis' equations and worked claims ------------------------------------------------


def test_algorithm_6_on_a_hand_partition() -> None:
    """Two leaves of 2 points, in 1 and 3 atomic intervals: 2 log(4/2) + 2 log(12/2)."""
    assert kullback_penalty(np.array([2, 2]), np.array([1, 3]), k=2) == pytest.approx(
        2 * math.log(2) + 2 * math.log(6))
    # All suppressed (k = 3): one region of 4 points in 4 atomic intervals.
    assert kullback_penalty(np.array([2, 2]), np.array([1, 3]), k=3) == pytest.approx(
        4 * math.log(4))


def test_the_whole_domain_as_one_class_costs_n_log_s() -> None:
    """One anonymized interval: p0 = 1 / S(D) everywhere, KP = N(D) log S(D)."""
    grid = make_grid(5, 4)
    x = np.array([[0.5, 0.5], [4.5, 3.5], [2, 2]])
    single = mondrian_demographic_classes(x, grid, k=3)
    assert single.n_classes == 1
    assert classes_kullback_penalty(single) == pytest.approx(3 * math.log(20))


def test_kullback_penalty_rewards_density_where_discernability_does_not() -> None:
    """§4.4.3: k..2k points in a subinterval I' of a large interval: I' as its own interval
    has a lower penalty; the discernability metric (eq. 32) cannot tell the two apart."""
    grid, k = make_grid(8), 3
    x = column(0.1, 0.4, 0.6, 0.9)
    counts_wide, counts_tight = np.array([4]), np.array([4, 0])
    wide = kullback_penalty(counts_wide, np.array([8]), k)
    tight = kullback_penalty(counts_tight, np.array([1, 7]), k)
    assert (wide, tight) == pytest.approx((4 * math.log(8), 0.0))
    ga = genetic_demographic_classes(x, grid, k, seed=0).classes
    assert boxes(ga) == [((0,), (1,))]
    assert discernability_metric(ga) == discernability_metric(
        mondrian_demographic_classes(x, grid, k)) == 16


def test_suppressing_an_outlier_can_be_optimal() -> None:
    """§4.4.3 and §4.4.1 ("this method suppresses outliers"): with most points in I' and one
    far away, suppressing it beats one class over everything; the GA finds it, Mondrian
    (which never suppresses) cannot."""
    grid, k = make_grid(100), 3
    x = column(0.2, 0.5, 0.7, 99.5)
    together = kullback_penalty(np.array([4]), np.array([100]), k)
    apart = kullback_penalty(np.array([3, 1]), np.array([1, 99]), k)
    assert apart == pytest.approx(3 * math.log(4 / 3) + math.log(4 * 99))
    assert apart < together == pytest.approx(4 * math.log(100))
    ga = genetic_demographic_classes(x, grid, k, seed=1).classes
    assert boxes(ga) == [((0,), (1,))] and ga.assignment.tolist() == [0, 0, 0, -1]
    assert classes_kullback_penalty(ga) == pytest.approx(apart)
    mondrian = mondrian_demographic_classes(x, grid, k)
    assert mondrian.n_suppressed == 0
    assert classes_kullback_penalty(mondrian) == pytest.approx(together)


def test_figure_11_boundary_hiding_with_k_over_2_equal_2() -> None:
    """Figure 11: k = 4, k/2 = 2: the bounds move to the atomic boundaries around the means
    of the two lowest and the two highest ages. Five-year atomic intervals."""
    grid = make_grid(24, width=5.0)  # ages [0, 120)
    ages = column(31, 33, 36, 38, 41, 44, 47, 52)
    classes = mondrian_demographic_classes(ages, grid, k=4)
    assert boxes(classes) == [((0,), (8,)), ((8,), (24,))]  # [0, 40), [40, 120)
    hidden = hide_boundaries(ages, classes)
    # Means: (31 + 33) / 2 = 32 and (36 + 38) / 2 = 37 | 42.5 and 49.5.
    assert hidden.lower.ravel().tolist() == [30.0, 40.0]
    assert hidden.upper.ravel().tolist() == [40.0, 50.0]
    assert classes.n.tolist() == [4, 4]  # "the same number of people"


def test_boundary_hiding_does_not_follow_a_single_individual() -> None:
    """§4.4.5: "a single point never decides exactly [where] the boundary is". The lowest
    individual moves from 29 to 31, across an atomic boundary: the class's tight box would
    follow, the hidden bound (mean of two) does not."""
    grid = make_grid(24, width=5.0)
    for lowest, tight in ((29, 25.0), (31, 30.0)):
        ages = column(lowest, 38, 39, 39, 56, 57, 58, 59)
        classes = mondrian_demographic_classes(ages, grid, k=4)
        assert boxes(classes)[0] == ((0,), (8,))
        assert grid.edges(0)[grid.cells(ages)[0, 0]] == tight
        hidden = hide_boundaries(ages, classes)
        assert hidden.lower[0, 0] == 30.0  # (29 + 38) / 2 = 33.5, (31 + 38) / 2 = 34.5


def test_mondrian_skips_an_attribute_whose_median_cut_leaves_fewer_than_k() -> None:
    """§5.2: attribute 0 is as wide as attribute 1 (normalised) and goes first, but its median
    cut leaves one point above; the cut falls back on attribute 1."""
    grid = make_grid(10, 10)
    x = np.array([[0, 0], [0, 1], [0, 5], [9, 6]])
    classes = mondrian_demographic_classes(x, grid, k=2)
    assert boxes(classes) == [((0, 0), (10, 2)), ((0, 2), (10, 10))]
    assert classes.n.tolist() == [2, 2]


def test_mondrian_order_follows_the_normalised_range() -> None:
    """After the first cut, the lower partition spans 4 of attribute 0's 9 atomic intervals
    of range and 2 of attribute 1's 3: attribute 1 is the wider, normalised, and is cut
    first (by raw width attribute 0 would be)."""
    grid = make_grid(10, 4)
    x = np.array([[0, 0], [4, 0], [1, 2], [3, 2], [9, 3], [9, 3], [9, 3], [9, 1]])
    classes = mondrian_demographic_classes(x, grid, k=2)
    assert boxes(classes) == [((0, 0), (5, 1)), ((0, 1), (5, 4)), ((5, 0), (10, 4))]
    assert reference_mondrian([tuple(c) for c in x.astype(int).tolist()], (10, 4), 2) == [
        (lo, hi, n) for (lo, hi), n in zip(boxes(classes), classes.n.tolist(), strict=True)]


# --- the chromosomes: binary space partitions and their operators (§4.4.4) -----------------


def test_move_split_out_of_range_is_replaced_by_the_child_beyond() -> None:
    """Figure 8: a split moved one step past its valid range is removed; the child on the
    other side takes its place."""
    root = root_of(4)
    tree = ((0, 1), L, (0, 2), L, L)  # [0, 1) | [1, 2) [2, 4)
    assert _moved_split(tree, root, 0, -1) == ((0, 2), L, L)  # the upper child stays
    tree = ((0, 3), (0, 1), L, L, L)
    assert _moved_split(tree, root, 0, +1) == ((0, 1), L, L)  # the lower child stays


def test_move_split_in_range_removes_branches_on_the_moved_split() -> None:
    """§4.4.4: a branch below with the moved-to split is no longer valid: made a leaf."""
    root = root_of(6)
    tree = ((0, 2), L, (0, 3), L, (0, 5), L, L)
    assert _moved_split(tree, root, 0, +1) == ((0, 3), L, L)
    assert _moved_split(tree, root, 0, -1) == ((0, 1), L, (0, 3), L, (0, 5), L, L)


def test_branch_swap_figure_9() -> None:
    """b (split of y) under p (split of x) swaps with p: p replaces b's child c_i, and c_i
    takes b's old place under p."""
    root = root_of(4, 4)
    c0, c1, right = ((0, 1), L, L), ((1, 3), L, L), ((1, 1), L, L)
    tree = ((0, 2), (1, 2), *c0, *c1, *right)
    assert _swapped(tree, root, 1, 0) == ((1, 2), (0, 2), *c0, *right, *c1)
    # p now splits y >= 2, where its upper child's split y < 1 is outside: a leaf.
    assert _swapped(tree, root, 1, 1) == ((1, 2), *c0, (0, 2), *c1, L)


def test_branch_swap_fixes_splits_outside_their_new_interval() -> None:
    root = root_of(4)
    tree = ((0, 2), (0, 1), L, L, L)
    # p (x < 2) goes below b (x < 1), in b's lower child: inside [0, 1) it cannot split.
    assert _swapped(tree, root, 1, 0) == ((0, 1), L, L)
    assert _swapped(tree, root, 1, 1) == ((0, 1), L, (0, 2), L, L)


def test_crossover_figure_10_swaps_subtrees_and_fixes_them() -> None:
    """Figure 10: the subtrees below the two cuts change places; a split that is not inside
    its new interval makes its branch a leaf."""
    root = root_of(8)
    a = ((0, 4), (0, 2), L, L, L)  # [0, 2) [2, 4) | [4, 8)
    b = ((0, 6), L, (0, 7), L, L)  # [0, 6) | [6, 7) [7, 8)
    child_a, child_b = _crossed(a, b, root, 1, 2)  # a's [0, 4) <-> b's [6, 8)
    assert child_a == ((0, 4), L, L)  # x < 7 is not inside [0, 4)
    assert child_b == ((0, 6), L, L)  # nor x < 2 inside [6, 8)
    child_a, child_b = _crossed(a, b, root, 4, 2)  # a's [4, 8) <-> b's [6, 8)
    assert child_a == ((0, 4), (0, 2), L, L, (0, 7), L, L)
    assert child_b == ((0, 6), L, L)


def test_crossover_keeps_valid_inserted_splits() -> None:
    root = root_of(8)
    a = ((0, 4), (0, 1), L, L, L)
    b = ((0, 6), (0, 3), L, L, L)
    child_a, child_b = _crossed(a, b, root, 1, 1)
    assert child_a == ((0, 4), (0, 3), L, L, L)
    assert child_b == ((0, 6), (0, 1), L, L, L)


def test_split_mutation_of_a_single_leaf_always_splits_it() -> None:
    """|L_split| = 1: the leaf is chosen with probability 1, split uniformly."""
    rng = np.random.default_rng(0)
    root = root_of(3, 2)
    seen = Counter(_split_mutation((L,), root, rng)[0] for _ in range(3000))
    assert set(seen) == {(0, 1), (0, 2), (1, 1)}
    assert all(abs(v / 3000 - 1 / 3) < 0.05 for v in seen.values())


def test_merge_mutation_of_one_branch_always_merges_it() -> None:
    rng = np.random.default_rng(0)
    assert _merge_mutation(((0, 1), L, L), rng) == (L,)
    # Only branches with a leaf child may merge: the root here has two branch children.
    tree = ((0, 4), (0, 2), L, L, (0, 6), L, L)
    for _ in range(50):
        assert _merge_mutation(tree, rng)[0] == (0, 4)


def test_split_and_merge_choose_each_candidate_with_probability_one_over_their_number(
        ) -> None:
    """Two divisible leaves (two mergeable branches), each chosen independently with
    probability 1/2: on average one mutation, none or both a quarter of the time."""
    rng = np.random.default_rng(1)
    root = root_of(8)
    splits = Counter(len(_split_mutation(((0, 4), L, L), root, rng)) for _ in range(4000))
    assert set(splits) == {3, 5, 7}  # 0, 1 or 2 leaves split
    assert abs(splits[3] / 4000 - 0.25) < 0.03 and abs(splits[7] / 4000 - 0.25) < 0.03
    tree = ((0, 4), (0, 2), L, L, (0, 6), L, L)
    merges = Counter(_merge_mutation(tree, rng) for _ in range(4000))
    assert abs(merges[tree] / 4000 - 0.25) < 0.03
    assert abs(merges[((0, 4), L, L)] / 4000 - 0.25) < 0.03


def test_move_split_goes_up_or_down_with_equal_probability() -> None:
    rng = np.random.default_rng(2)
    moved = Counter(_move_split_mutation(((0, 4), L, L), root_of(8), rng)[0]
                    for _ in range(2000))
    assert set(moved) == {(0, 3), (0, 5)}
    assert abs(moved[(0, 3)] / 2000 - 0.5) < 0.05


def test_branch_swap_never_selects_the_root() -> None:
    rng = np.random.default_rng(3)
    tree = ((0, 4), (0, 2), L, L, L)
    assert {_branch_swap_mutation(tree, root_of(8), rng) for _ in range(200)} == {
        _swapped(tree, root_of(8), 1, 0), _swapped(tree, root_of(8), 1, 1)}


def test_tournament_selection_favours_the_lower_penalty() -> None:
    """Binary tournament: of two chromosomes, the better is picked 3/4 of the time."""
    rng = np.random.default_rng(4)
    picks = Counter(_tournament(np.array([2.0, 1.0]), rng) for _ in range(4000))
    assert abs(picks[1] / 4000 - 0.75) < 0.03


def test_recursive_initial_chromosomes_on_a_larger_group() -> None:
    rng = np.random.default_rng(6)
    x = np.c_[rng.integers(0, 12, 80), rng.integers(0, 5, 80)]
    grid, k = make_grid(12, 5), 4
    root = root_of(12, 5)
    counter = _Counter(grid.cells(x), grid.bins)
    ctx = _Context(root=root, counter=counter, k=k, n_points=80)
    trees = _initial_population(ctx, grid.cells(x), 8, 0, rng)
    assert len(set(trees)) > 1  # the split is drawn at random
    for tree in trees:
        lo, hi = _leaf_boxes(tree, root)
        n = counter.counts(lo, hi)
        assert ((n >= k) | (n == 0)).all() and n.sum() == 80 and len(n) >= 80 // (2 * k)


def test_operators_on_trees_they_cannot_change() -> None:
    rng = np.random.default_rng(0)
    root = root_of(1, 1)  # a single atomic interval: nothing to split
    for op in (lambda t: _split_mutation(t, root, rng), lambda t: _merge_mutation(t, rng),
               lambda t: _move_split_mutation(t, root, rng),
               lambda t: _branch_swap_mutation(t, root, rng)):
        assert op((L,)) == (L,)
    assert _branch_swap_mutation(((0, 1), L, L), root_of(2), rng) == ((0, 1), L, L)
    assert _crossover((L,), ((0, 1), L, L), root_of(2), rng) == ((L,), ((0, 1), L, L))


def leaf_cover(tree, root) -> np.ndarray:
    lo, hi = _leaf_boxes(tree, root)
    cover = np.zeros(root[1], int)
    for a, z in zip(lo.tolist(), hi.tolist(), strict=True):
        cover[tuple(slice(x, y) for x, y in zip(a, z, strict=True))] += 1
    return cover


@settings(max_examples=80, deadline=None)
@given(bins=st.lists(st.integers(1, 7), min_size=1, max_size=3), sizes=st.tuples(
    st.integers(1, 12), st.integers(1, 12)), seed=st.integers(0, 2**32 - 1))
def test_every_operator_keeps_trees_valid_partitions(bins: list[int], sizes: tuple[int, int],
                                                     seed: int) -> None:
    """§4.4.4: every chromosome holds a valid tree; its leaves tile the domain (Figure 7)."""
    rng = np.random.default_rng(seed)
    root = root_of(*bins)
    a, b = (_random_tree(root, n, rng) for n in sizes)
    results = [a, b, _split_mutation(a, root, rng), _merge_mutation(a, rng),
               _move_split_mutation(a, root, rng), _branch_swap_mutation(a, root, rng),
               *_crossover(a, b, root, rng)]
    n_cells = math.prod(bins)
    assert [len(_leaf_boxes(t, root)[0]) for t in (a, b)] == [min(n, n_cells) for n in sizes]
    for tree in results:
        assert _is_valid(tree, root)
        assert (leaf_cover(tree, root) == 1).all()
    assert _fixed(a, root) == a


# --- the Kullback penalty against a direct computation of eq. 23 ---------------------------


@settings(max_examples=80, deadline=None)
@given(group=groups(), n_leaves=st.integers(1, 10), seed=st.integers(0, 2**32 - 1))
def test_algorithm_6_equals_eq_23_on_random_partitions(group, n_leaves: int,
                                                       seed: int) -> None:
    """Algorithm 6 (eq. 30) = N(D) (-sum p_i log p0_i) over atomic intervals (eqs. 19, 23);
    sum p0_i = 1 (eq. 20); KP >= N(D) H(p) since K[a_s; o_s] >= 0; KP >= 0 (eq. 31)."""
    points, grid, k = group
    root = root_of(*grid.bins.tolist())
    tree = _random_tree(root, n_leaves, np.random.default_rng(seed))
    lo, hi = _leaf_boxes(tree, root)
    cells = grid.cells(points)
    counts = _Counter(cells, grid.bins).counts(lo, hi)
    kp = kullback_penalty(counts, np.prod(hi - lo, axis=1), k)
    leaves = [(tuple(a), tuple(z)) for a, z in zip(lo.tolist(), hi.tolist(), strict=True)]
    direct, sum_p0, entropy = direct_kp([tuple(c) for c in cells.tolist()], leaves,
                                        tuple(grid.bins.tolist()), k)
    assert kp == pytest.approx(direct, abs=1e-9)
    assert sum_p0 == pytest.approx(1.0)
    assert kp >= entropy - 1e-9 and kp >= 0


# --- both anonymizers: privacy properties and references ------------------------------------


@settings(max_examples=60, deadline=None)
@given(group=groups())
def test_mondrian_equals_reference_and_is_private(group) -> None:
    points, grid, k = group
    classes = mondrian_demographic_classes(points, grid, k)
    check_classes(points, grid, k, classes)
    assert classes.n_suppressed == 0
    assert int(classes.bounds.size.sum()) == grid.n_cells  # tiles the domain
    cells = [tuple(c) for c in grid.cells(points).tolist()]
    assert [(lo, hi, n) for (lo, hi), n in zip(boxes(classes), classes.n.tolist(),
                                               strict=True)] == reference_mondrian(
        cells, tuple(grid.bins.tolist()), k)
    for i in range(classes.n_classes):
        assert not mondrian_can_cut([c for c, a in zip(cells, classes.assignment, strict=True)
                                     if a == i], k)
    leaves = boxes(classes)
    assert classes_kullback_penalty(classes) == pytest.approx(
        direct_kp(cells, leaves, tuple(grid.bins.tolist()), k)[0], abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(group=groups(max_points=18), seed=st.integers(0, 2**32 - 1),
       generations=st.integers(0, 3))
def test_ga_is_private_elitist_and_its_penalty_is_eq_23(group, seed: int,
                                                        generations: int) -> None:
    """Every published class >= k, disjoint, covering its members; elitism: the best penalty
    never rises from the initial population's best, which is the minimum of eq. 23 over the
    initial chromosomes; the result's penalty is the last best."""
    points, grid, k = group
    result = genetic_demographic_classes(points, grid, k, population=6,
                                         generations=generations, random_trees=2, seed=seed)
    classes = result.classes
    check_classes(points, grid, k, classes)
    assert result.best_penalty.size == generations + 1
    assert (np.diff(result.best_penalty) <= 1e-9).all()
    cells = [tuple(c) for c in grid.cells(points).tolist()]
    bins = tuple(grid.bins.tolist())
    assert classes_kullback_penalty(classes) == pytest.approx(result.best_penalty[-1])
    assert result.best_penalty[-1] == pytest.approx(direct_kp(cells, boxes(classes), bins,
                                                              k)[0], abs=1e-9)
    root = root_of(*bins)
    ctx = _Context(root=root, counter=_Counter(grid.cells(points), grid.bins), k=k,
                   n_points=len(points))
    initial = _initial_population(ctx, grid.cells(points), 6, 2,
                                  np.random.default_rng(seed))
    penalties = []
    for tree in initial:
        lo, hi = _leaf_boxes(tree, root)
        leaves = [(tuple(a), tuple(z)) for a, z in zip(lo.tolist(), hi.tolist(), strict=True)]
        penalties.append(direct_kp(cells, leaves, bins, k)[0])
    assert result.best_penalty[0] == pytest.approx(min(penalties), abs=1e-9)


@settings(max_examples=30, deadline=None)
@given(group=groups(max_points=18), seed=st.integers(0, 2**32 - 1))
def test_recursive_initial_chromosomes_have_no_leaf_below_k(group, seed: int) -> None:
    """§4.4.4: "no points are suppressed using this method", and no k-split is left undone."""
    points, grid, k = group
    root = root_of(*grid.bins.tolist())
    counter = _Counter(grid.cells(points), grid.bins)
    ctx = _Context(root=root, counter=counter, k=k, n_points=len(points))
    for tree in _initial_population(ctx, grid.cells(points), 3, 0,
                                    np.random.default_rng(seed)):
        assert _is_valid(tree, root)
        lo, hi = _leaf_boxes(tree, root)
        n = counter.counts(lo, hi)
        assert ((n >= k) | (n == 0)).all() and n.sum() == len(points)
        assert n.max() >= k
        for a, z, count in zip(lo.tolist(), hi.tolist(), n.tolist(), strict=True):
            for j in range(len(a)):
                for s in range(a[j] + 1, z[j]):
                    below = counter.counts(np.array([a]), np.array([[*z[:j], s, *z[j + 1:]]]))
                    assert not (below[0] >= k and count - below[0] >= k)


def test_ga_is_deterministic_under_a_seed_and_uses_it() -> None:
    rng = np.random.default_rng(5)
    x = np.c_[rng.normal(40, 12, 120).clip(0, 99), rng.integers(0, 2, 120)]
    grid = atomic_grid(np.array([[0, 100], [0, 2]]), np.array([20, 2]))

    def run(seed):
        r = genetic_demographic_classes(x, grid, 5, population=10, generations=5, seed=seed)
        return boxes(r.classes), r.classes.assignment.tolist(), r.best_penalty.tolist()

    first = run(3)
    assert run(3) == first
    assert run(np.random.default_rng(3)) == first
    assert any(run(s) != first for s in (4, 5, 6))


def test_ga_beats_or_matches_mondrian_on_skewed_data() -> None:
    """§5.2 (Figure 18): the GA's Kullback penalty is below Mondrian's (here, one sample)."""
    rng = np.random.default_rng(11)
    x = np.c_[rng.gamma(3, 8, 300).clip(0, 99.9), rng.lognormal(1, 0.6, 300).clip(0, 19.9)]
    grid = atomic_grid(np.array([[0, 100], [0, 20]]), np.array([20, 20]))
    ga = genetic_demographic_classes(x, grid, 10, seed=0)
    mondrian = mondrian_demographic_classes(x, grid, 10)
    check_classes(x, grid, 10, ga.classes)
    assert classes_kullback_penalty(ga.classes) < classes_kullback_penalty(mondrian)


def test_ga_returns_the_best_initial_chromosome_without_generations() -> None:
    x = column(0, 0, 1, 1, 6, 7, 7, 7)
    grid = make_grid(8)
    r = genetic_demographic_classes(x, grid, 2, generations=0, seed=2)
    assert r.best_penalty.size == 1
    assert classes_kullback_penalty(r.classes) == pytest.approx(r.best_penalty[0])
    longer = genetic_demographic_classes(x, grid, 2, generations=10, seed=2)
    assert longer.best_penalty[0] == r.best_penalty[0] >= longer.best_penalty[-1]


# --- boundary hiding (§4.4.5) ---------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(group=groups(), use_ga=st.booleans())
def test_boundary_hiding_equals_reference_inside_the_class(group, use_ga: bool) -> None:
    """Hidden bounds: the thesis' rule; atomic boundaries inside the class's box, never
    empty; so still disjoint; between the atomic intervals of the lowest (highest) value
    and of the ceil(k/2)-th lowest (highest); counts unchanged."""
    points, grid, k = group
    if use_ga:
        classes = genetic_demographic_classes(points, grid, k, population=4, generations=2,
                                              random_trees=1, seed=0).classes
    else:
        classes = mondrian_demographic_classes(points, grid, k)
    hidden = hide_boundaries(points, classes)
    expected = reference_hidden(points, classes)
    assert [(lo, hi) for lo, hi in zip(hidden.lower.tolist(), hidden.upper.tolist(),
                                       strict=True)] == expected
    b = classes.bounds
    assert (b.cell_lower <= hidden.cell_lower).all() and (hidden.cell_upper <= b.cell_upper).all()
    assert (hidden.cell_lower < hidden.cell_upper).all()
    m = -(-k // 2)
    cells = grid.cells(points)
    for i in range(classes.n_classes):
        member = np.sort(cells[classes.assignment == i], axis=0)
        assert (member[0] <= hidden.cell_lower[i]).all()
        assert (hidden.cell_lower[i] <= member[m - 1]).all()
        assert (member[-m] < hidden.cell_upper[i]).all()
        assert (hidden.cell_upper[i] <= member[-1] + 1).all()


def test_boundary_hiding_and_penalty_of_no_class() -> None:
    """Everything suppressed: no bounds to hide; the penalty is one suppressed region."""
    grid = make_grid(4)
    x = column(0.5, 3.5)
    empty = DemographicClasses(
        bounds=ClassBounds(grid=grid, cell_lower=np.zeros((0, 1), np.int64),
                           cell_upper=np.zeros((0, 1), np.int64)),
        n=np.zeros(0, np.int64), assignment=np.array([-1, -1]), k=2)
    assert hide_boundaries(x, empty).lower.shape == (0, 1)
    assert classes_kullback_penalty(empty) == pytest.approx(2 * math.log(4))
    assert discernability_metric(empty) == 4  # N(D) per suppressed point


def test_published_bounds_are_the_grid_edges_and_hold_the_members() -> None:
    """Bounds are atomic boundaries of the public grid; the domain's upper end as given."""
    grid = atomic_grid(np.array([[0.2, 0.9]]), 7)  # 0.2 + 0.7 * 7 / 7 != 0.9 in float64
    x = column(0.2, 0.25, 0.3, 0.3, 0.8, np.nextafter(0.9, 0))
    classes = mondrian_demographic_classes(x, grid, 2)
    assert classes.bounds.upper[-1, 0] == 0.9
    assert set(classes.bounds.lower.ravel().tolist()) <= set(grid.edges(0).tolist())
    check_classes(x, grid, 2, classes)


# --- bad inputs -----------------------------------------------------------------------------

GRID = make_grid(10, 4)
GOOD = np.array([[1.0, 0], [2, 1], [3, 2], [9, 3]])


@pytest.mark.parametrize("points", [
    np.array([1.0, 2, 3, 4]),  # 1-d
    np.array([[1.0], [2], [3], [4]]),  # one attribute, the grid has two
    np.array([[1.0, 0], [np.nan, 1], [3, 2], [9, 3]]),  # NaN
    np.array([[1.0, 0], [np.inf, 1], [3, 2], [9, 3]]),  # infinite
    np.array([[1.0, 0], [2, 1], [3, 2], [-0.5, 3]]),  # below the domain
    np.array([[1.0, 0], [2, 1], [3, 2], [10, 3]]),  # at the exclusive upper bound
    np.array([[1.0, 0], [2, 1], [3, 4], [9, 3]]),  # above, second attribute
    np.array([[True, False], [True, True], [False, False], [True, False]]),  # bool
    np.array([["1", "0"], ["2", "1"], ["3", "2"], ["9", "3"]]),  # strings
    np.array([[1.0, 0], [2, 1]]),  # fewer than k = 3
    np.zeros((0, 2)),  # nobody
], ids=["1d", "columns", "nan", "inf", "below", "upper", "above", "bool", "str", "few",
        "empty"])
@pytest.mark.parametrize("anonymize", [
    lambda x: genetic_demographic_classes(x, GRID, 3, population=2, generations=1),
    lambda x: mondrian_demographic_classes(x, GRID, 3),
], ids=["ga", "mondrian"])
def test_bad_points_raise(anonymize, points: np.ndarray) -> None:
    with pytest.raises(InputError):
        anonymize(points)


@pytest.mark.parametrize("k", [0, -1, 1.5, True, "2", None])
def test_bad_k_raises(k) -> None:
    with pytest.raises(InputError, match="k must"):
        genetic_demographic_classes(GOOD, GRID, k)
    with pytest.raises(InputError, match="k must"):
        mondrian_demographic_classes(GOOD, GRID, k)
    with pytest.raises(InputError, match="k must"):
        kullback_penalty(np.array([4]), np.array([40]), k)


def test_fewer_than_k_individuals_says_so() -> None:
    with pytest.raises(InputError, match="fewer than k = 5"):
        mondrian_demographic_classes(GOOD, GRID, 5)


@pytest.mark.parametrize(("domain", "bins"), [
    (np.array([0.0, 10]), 10),  # not (d, 2)
    (np.array([[0.0, 10, 20]]), 10),
    (np.zeros((0, 2)), 1),  # no attribute
    (np.array([[10.0, 0]]), 10),  # lower > upper
    (np.array([[1.0, 1]]), 1),  # empty
    (np.array([[0.0, np.nan]]), 10),
    (np.array([[0.0, np.inf]]), 10),
    (np.array([["0", "1"]]), 1),
    (np.array([[0.0, 10]]), 0),  # no atomic interval
    (np.array([[0.0, 10]]), 2.5),
    (np.array([[0.0, 10]]), True),
    (np.array([[0.0, 10], [0, 1]]), np.array([10, 1, 1])),  # one per attribute
    (np.array([[0.0, 10]] * 4), np.array([2**16] * 4)),  # over 2**62 atomic intervals
    (np.array([[1e16, 1e16 + 4]]), 8),  # edges collapse in float64
])
def test_bad_grid_raises(domain: np.ndarray, bins) -> None:
    with pytest.raises(InputError):
        atomic_grid(domain, bins)


@pytest.mark.parametrize("kwargs", [
    {"population": 0}, {"population": 2.0}, {"generations": -1}, {"generations": True},
    {"crossover_rate": 1.5}, {"crossover_rate": -0.1}, {"mutation_rate": "0.8"},
    {"mutation_rate": True}, {"random_trees": -1}, {"random_trees": 41},
    {"seed": -1}, {"seed": 1.0}, {"seed": "x"}, {"seed": True},
])
def test_bad_ga_parameters_raise(kwargs: dict) -> None:
    with pytest.raises(InputError):
        genetic_demographic_classes(GOOD, GRID, 2, **kwargs)


@settings(max_examples=25, deadline=None)
@given(group=groups(max_points=30), seed=st.integers(0, 2**32 - 1))
def test_counting_with_points_gives_the_table_s_result(group, seed: int) -> None:
    """Above 2**22 atomic intervals the GA counts with the points; on any grid both ways
    count alike, so one seed gives the same classes and penalties."""
    points, grid, k = group
    by_table = genetic_demographic_classes(points, grid, k, population=8, generations=4,
                                           random_trees=2, seed=seed)
    with patch.object(demographics_module, "_MAX_TABLE_CELLS", 0):
        by_points = genetic_demographic_classes(points, grid, k, population=8,
                                                generations=4, random_trees=2, seed=seed)
    assert by_points.best_penalty.tolist() == by_table.best_penalty.tolist()
    assert by_points.classes.assignment.tolist() == by_table.classes.assignment.tolist()
    assert by_points.classes.bounds.cell_lower.tolist() == \
        by_table.classes.bounds.cell_lower.tolist()


def test_the_ga_runs_on_a_grid_too_large_for_a_table() -> None:
    grid = atomic_grid(np.array([[0.0, 1]] * 2), np.array([2**12, 2**11]))
    rng = np.random.default_rng(0)
    points = rng.random((60, 2))
    result = genetic_demographic_classes(points, grid, 5, population=6, generations=3,
                                         random_trees=1)
    assert result.classes.n.sum() + result.classes.n_suppressed == 60
    assert (result.classes.n >= 5).all()


@pytest.mark.parametrize(("counts", "sizes"), [
    (np.array([2, 2]), np.array([1])),  # shapes differ
    (np.array([2.0, 2]), np.array([1, 1])),  # not counts
    (np.array([2, -1]), np.array([1, 1])),
    (np.array([0, 0]), np.array([1, 1])),  # no points
    (np.array([2, 2]), np.array([1, 0])),  # an empty leaf of no atomic interval
    (np.array([[2, 2]]), np.array([[1, 1]])),
])
def test_bad_kullback_input_raises(counts: np.ndarray, sizes: np.ndarray) -> None:
    with pytest.raises(InputError):
        kullback_penalty(counts, sizes, 2)


def test_hiding_with_other_points_raises() -> None:
    classes = mondrian_demographic_classes(GOOD, GRID, 2)
    for other in (GOOD[::-1], GOOD[:3], GOOD[:, :1]):
        with pytest.raises(InputError):
            hide_boundaries(other, classes)


def test_every_groups_classes_are_the_same_on_one_process_or_two(monkeypatch) -> None:
    """The demographic step spreads its sets of persons over forked processes; each is
    seeded by its persons, so the classes cannot depend on where they were made."""
    import pandas as pd

    from anonymizers.families.groups.steps import _all_classes, parse_demographic_grid

    rng = np.random.default_rng(7)
    persons = np.arange(400)
    values = pd.DataFrame({"person_index": persons,
                           "age": rng.integers(0, 100, persons.size).astype(float)})
    members = pd.DataFrame({"group_index": rng.integers(0, 12, 2_000),
                            "person_index": rng.integers(0, persons.size, 2_000)})
    grid = parse_demographic_grid("age:0:120:24")
    found = []
    for processes in ("1", "2"):
        monkeypatch.setenv("ANONYMIZERS_PROCESSES", processes)
        found.append(_all_classes(members, values, grid, 5, "ga", seed=11))
    for one, two in zip(*found, strict=True):
        if isinstance(one, pd.DataFrame):
            pd.testing.assert_frame_equal(one.reset_index(drop=True), two.reset_index(drop=True))
        else:
            assert one == two
