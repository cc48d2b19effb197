"""The pure MOB algorithms of seed 003: Hilbert index, GenAG, Extreme Union, Symmetric
Anonymization and Generalize, on the paper's examples and against brute force."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from itertools import chain
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mob_helpers import (
    EXAMPLE_4_HILBERT,
    brute_force_suppressed,
    brute_force_top,
    classes_at,
    example_1,
    example_4,
    mobs,
    random_objects,
    scalar_xy2d,
)
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from anonymizers.errors import InputError
from anonymizers.families.mob.anonymity import (
    MobSets,
    extreme_union,
    suppressed_objects,
    symmetric_anonymization,
)
from anonymizers.families.mob.genag import _Search, build_hilbert_lists, gen_ag
from anonymizers.families.mob.generalize import equivalence_classes, generalize
from anonymizers.families.mob.hilbert import MAX_ORDER, hilbert_cell, hilbert_index, order_for
from anonymizers.families.mob.moving_objects import MovingObjects

# Figure 3 of the paper, 1-based, top row (y = 7) first. Rows 1, 2, 7 and 8 are printed in
# full in the figure; in rows 3-6 some numbers are hidden under the MOB symbols, and every
# visible one agrees with this table (the classic xy2d curve + 1, y upwards).
FIGURE_3 = [[22, 23, 26, 27, 38, 39, 42, 43],
            [21, 24, 25, 28, 37, 40, 41, 44],
            [20, 19, 30, 29, 36, 35, 46, 45],
            [17, 18, 31, 32, 33, 34, 47, 48],
            [16, 13, 12, 11, 54, 53, 52, 49],
            [15, 14, 9, 10, 55, 56, 51, 50],
            [2, 3, 8, 7, 58, 57, 62, 63],
            [1, 4, 5, 6, 59, 60, 61, 64]]


def _grid(order: int) -> np.ndarray:
    """Hilbert index of every cell, indexed [y, x] with y = 0 at the bottom."""
    side = 1 << order
    ys, xs = np.meshgrid(np.arange(side), np.arange(side), indexing="ij")
    return hilbert_index(xs, ys, order)


# --- Hilbert index -------------------------------------------------------------------------

def test_hilbert_8x8_is_figure_3() -> None:
    assert (_grid(3)[::-1] + 1).tolist() == FIGURE_3


def test_hilbert_4x4_is_the_classic_curve() -> None:
    assert _grid(2)[::-1].tolist() == [[5, 6, 9, 10], [4, 7, 8, 11], [3, 2, 13, 12],
                                       [0, 1, 14, 15]]


@pytest.mark.parametrize("order", range(1, 8))
def test_hilbert_consecutive_indices_are_adjacent_cells(order: int) -> None:
    x, y = hilbert_cell(np.arange(4 ** order), order)
    assert (np.abs(np.diff(x)) + np.abs(np.diff(y)) == 1).all()
    assert sorted(zip(x.tolist(), y.tolist(), strict=True)) == [
        (i, j) for i in range(1 << order) for j in range(1 << order)]


@settings(max_examples=50, deadline=None)
@given(order=st.integers(0, MAX_ORDER), seed=st.integers(0, 2**32 - 1))
def test_hilbert_round_trip_and_scalar(order: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 1 << order, 40)
    y = rng.integers(0, 1 << order, 40)
    d = hilbert_index(x, y, order)
    assert d.tolist() == [scalar_xy2d(order, int(a), int(b)) for a, b in zip(x, y, strict=True)]
    back_x, back_y = hilbert_cell(d, order)
    assert np.array_equal(back_x, x) and np.array_equal(back_y, y)


def test_order_for() -> None:
    assert [order_for(1, 1), order_for(2, 1), order_for(8, 5), order_for(9, 1),
            order_for(1000, 1000)] == [0, 1, 3, 4, 10]
    with pytest.raises(InputError):
        order_for(0, 3)
    with pytest.raises(InputError):
        hilbert_index(np.array([8]), np.array([0]), 3)


# --- the data model ------------------------------------------------------------------------

def test_from_rows_builds_presence_cells_and_sorted_qids() -> None:
    objects = MovingObjects.from_rows(3, 4, [0, 0, 1, 2, 2], [0, 3, 1, 2, 3],
                                      [5, 6, 7, 8, 9], [-1, -2, -3, -4, -5],
                                      [2, 0, 2, 0], [3, 3, 2, 0])
    assert objects.present.tolist() == [[True, False, False, True], [False, True, False, False],
                                        [False, False, True, True]]
    assert objects.cx[2].tolist() == [0, 0, 8, 9] and objects.cy[0, 3] == -2
    assert [objects.qid(i).tolist() for i in range(3)] == [[0, 3], [], [2, 3]]
    assert objects.qid_matrix.sum() == 4


@pytest.mark.parametrize(("qids", "message"), [
    ([[1]], "no position"),
    ([[5]], "outside"),
])
def test_qid_must_be_where_the_object_is_present(qids: list[list[int]], message: str) -> None:
    with pytest.raises(InputError, match=message):
        mobs([[0, 0]], [[0, 0]], qids, present=[[True, False]])


def test_bad_arrays_are_input_errors() -> None:
    cells = np.zeros((2, 3), dtype=np.int32)
    with pytest.raises(InputError):
        MovingObjects(cells, cells, np.ones((2, 2), dtype=bool), np.zeros(3, np.int64),
                      np.zeros(0, np.int32))
    with pytest.raises(InputError, match="sorted"):
        MovingObjects(cells, cells, np.ones((2, 3), dtype=bool), np.array([0, 2, 2]),
                      np.array([2, 1], dtype=np.int32))
    with pytest.raises(InputError, match="more than one cell"):
        MovingObjects.from_rows(1, 2, [0, 0], [1, 1], [0, 0], [0, 0], [], [])


# --- GenAG ---------------------------------------------------------------------------------

@st.composite
def _small_mods(draw: st.DrawFn) -> tuple[MovingObjects, np.ndarray | None, int]:
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    n, m = draw(st.integers(1, 25)), draw(st.integers(1, 6))
    side = draw(st.sampled_from([1, 2, 3, 8, 64]))  # small grids: many ties
    objects = random_objects(rng, n, m, side, draw(st.sampled_from([1.0, 0.8, 0.5])), 0.5)
    allowed = rng.random(n) < 0.7 if draw(st.booleans()) else None
    return objects, allowed, draw(st.integers(0, 9))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_small_mods())
def test_gen_ag_is_the_brute_force_top_k(case: tuple[MovingObjects, np.ndarray | None,
                                                     int]) -> None:
    objects, allowed, count = case
    lists = build_hilbert_lists(objects)
    for subject in np.flatnonzero(objects.qid_sizes > 0).tolist():
        got = gen_ag(lists, subject, count, allowed)
        want = brute_force_top(lists, subject, count, allowed)
        assert got[0].tolist() == want[0].tolist()
        assert got[1].tolist() == want[1].tolist()


def test_gen_ag_does_not_stop_when_an_unseen_object_can_tie() -> None:
    # subject O5 at H = (20, 20); O3 at (20, 24) scores 4; O1 at (22, 22) scores 4 too, and
    # wins the tie by its smaller index. With the cursors at radius 1, O1 is unseen and the
    # threshold is 2 + 2 = 4: the paper's "<=" would stop and return O3.
    hilbert = np.array([[0, 0], [22, 22], [63, 63], [20, 24], [60, 60], [20, 20]])
    x, y = hilbert_cell(hilbert, 3)
    lists = build_hilbert_lists(MovingObjects.from_arrays(x, y, None,
                                                          [[], [], [], [], [], [0, 1]]))
    search = _Search.start(lists, 5, 1, None)
    search.radius = 1
    search.advance()
    assert (search.threshold, search.best_obj.tolist(), search.best_score.tolist()) == (
        4, [3], [4])
    assert not search.done()
    assert gen_ag(lists, 5, 1)[0].tolist() == [1]


def test_gen_ag_stops_before_reading_the_whole_lists() -> None:
    rng = np.random.default_rng(3)
    n, m = 4000, 6
    start = rng.integers(0, 1000, (n, 2))
    walk = start[:, None, :] + rng.integers(-2, 3, (n, m, 2)).cumsum(axis=1)
    walk = np.clip(walk, 0, 1023)
    objects = MovingObjects.from_arrays(walk[..., 0], walk[..., 1], None, [[0, 2, 5]] * n)
    lists = build_hilbert_lists(objects)
    search = _Search.start(lists, 0, 15, None)
    while not search.done():
        search.advance()
    assert search.seen.sum() < n // 4  # the threshold stopped it
    assert search.best_obj.tolist() == brute_force_top(lists, 0, 15)[0].tolist()


def test_gen_ag_refuses_an_empty_qid_and_bad_arguments() -> None:
    lists = build_hilbert_lists(example_1())
    with pytest.raises(InputError, match="empty QID"):
        gen_ag(build_hilbert_lists(mobs([[0], [1]], [[0], [0]], [[0], []])), 1, 1)
    with pytest.raises(InputError):
        gen_ag(lists, 7, 1)
    with pytest.raises(InputError):
        gen_ag(lists, 0, 1, np.ones(2, dtype=bool))


# --- Example 4 and 5 (Figures 5 and 6) -----------------------------------------------------

def _sets_1_based(sets: MobSets) -> list[tuple[set[int], list[int]]]:
    return [(set((sets.members(i) + 1).tolist()), (sets.times_of(i) + 1).tolist())
            for i in range(sets.n_objects)]


def test_example_4_gen_ag_finds_the_papers_neighbours() -> None:
    lists = build_hilbert_lists(example_4())
    assert lists.order == 3 and np.array_equal(lists.hilbert, EXAMPLE_4_HILBERT)
    nearest = [int(gen_ag(lists, i, 1)[0][0]) + 1 for i in range(5)]
    assert nearest == [2, 4, 4, 2, 1]  # AG(O1) = {O1, O2}, ..., AG(O5) = {O5, O1}


def test_example_4_extreme_union_is_figure_5a() -> None:
    sets = extreme_union(example_4(), 2)
    assert _sets_1_based(sets) == [({1, 2}, [1, 2, 3]), ({2, 4}, [3, 4]), ({3, 4}, [2, 4]),
                                   ({4, 2}, [3, 4]), ({5, 1}, [1, 2, 3, 4])]
    assert sets.n_suppressed == 0


def test_example_4_symmetric_is_figure_5b() -> None:
    sets = symmetric_anonymization(example_4(), 2)
    assert _sets_1_based(sets) == [({1, 2, 5}, [1, 2]), ({2, 1}, [3]), ({3, 4}, [2, 4]),
                                   ({4, 3}, [4]), ({5, 1}, [1, 3, 4])]


def _classes(sets: MobSets) -> list[set[frozenset[int]]]:
    objects = example_4()
    gen = generalize(objects, sets)
    return [classes_at(gen, t, one_based=True) for t in range(4)]


def test_example_5_extreme_union_classes_are_figure_6a() -> None:
    f = frozenset
    assert _classes(extreme_union(example_4(), 2)) == [
        {f({1, 2, 5})}, {f({1, 2, 5}), f({3, 4})}, {f({1, 2, 4, 5})}, {f({1, 5}), f({2, 3, 4})}]


def test_example_5_symmetric_classes_are_figure_6b() -> None:
    f = frozenset
    assert _classes(symmetric_anonymization(example_4(), 2)) == [
        {f({1, 2, 5})}, {f({1, 2, 5}), f({3, 4})}, {f({1, 2, 5})}, {f({1, 5}), f({3, 4})}]


# --- Examples 1 and 3 ----------------------------------------------------------------------

def _given_sets(n: int, members: list[list[int]], times: list[list[int]]) -> MobSets:
    set_indptr = np.cumsum([0] + [len(s) for s in members])
    time_indptr = np.cumsum([0] + [len(t) for t in times])
    return MobSets("given", 2, set_indptr, np.array([*chain(*members)], dtype=np.int64),
                   time_indptr, np.array([*chain(*times)], dtype=np.int32),
                   np.zeros(n, dtype=bool), n)


def test_example_1_regions_are_figure_1c() -> None:
    # AS(O1) = {O1, O2} at t1, {O2, O3} at t2 (the 2-anonymity scheme of Figure 1(b))
    sets = _given_sets(3, [[0, 1], [1, 2], [1, 2]], [[0], [1], [1]])
    gen = generalize(example_1(), sets)
    paper = {(o + 1, t + 1): (x0 + 1, y0 + 1, x1 + 1, y1 + 1) for o, t, _, x0, y0, x1, y1
             in gen.as_rows().tolist()}
    assert paper == {(1, 1): (1, 2, 2, 3), (2, 1): (1, 2, 2, 3), (3, 1): (6, 6, 6, 6),
                     (1, 2): (5, 3, 5, 3), (2, 2): (2, 6, 3, 7), (3, 2): (2, 6, 3, 7)}


def test_example_1_symmetric_follows_the_papers_walk_through() -> None:
    sets = symmetric_anonymization(example_1(), 2)
    assert _sets_1_based(sets) == [({1, 2}, [1]), ({1, 2, 3}, [2]), ({2, 3}, [2])]
    gen = generalize(example_1(), sets)
    assert classes_at(gen, 0, True) == {frozenset({1, 2})}
    assert classes_at(gen, 1, True) == {frozenset({1, 2, 3})}


def test_example_3_overlapping_groups_force_o1_o2_o3_together_at_t2() -> None:
    objects = mobs([[0, 1, 2], [1, 3, 5], [2, 6, 7]], [[0, 0, 0], [1, 1, 1], [2, 2, 2]],
                   [[0, 1], [1, 2], [1, 2]])
    sets = _given_sets(3, [[0, 1], [1, 2], [1, 2]], [[0, 1], [1, 2], [1, 2]])
    gen = generalize(objects, sets)
    f = frozenset
    assert [classes_at(gen, t) for t in range(3)] == [{f({0, 1})}, {f({0, 1, 2})}, {f({1, 2})}]
    at_t2 = gen.as_rows()[gen.t == 1]
    assert {tuple(r) for r in at_t2[:, 3:].tolist()} == {(1, 0, 6, 2)}


def test_union_find_matches_connected_components() -> None:
    rng = np.random.default_rng(5)
    for _ in range(30):
        n = int(rng.integers(2, 300))
        a, b = rng.integers(0, n, (2, int(rng.integers(0, 400))))
        nodes, label = equivalence_classes(n, a, b)
        graph = coo_matrix((np.ones(a.size), (a, b)), shape=(n, n))
        _, oracle = connected_components(graph, directed=False)
        assert nodes.tolist() == sorted(set(a.tolist()) | set(b.tolist()))
        pairs = {(int(x), int(y)) for x, y in zip(label, oracle[nodes], strict=True)}
        assert len(pairs) == len(set(label.tolist())) == len(set(oracle[nodes].tolist()))


# --- properties on random data -------------------------------------------------------------

@st.composite
def _mods(draw: st.DrawFn) -> tuple[MovingObjects, int]:
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n, m = draw(st.integers(1, 40)), draw(st.integers(1, 8))
    objects = random_objects(rng, n, m, draw(st.sampled_from([2, 16, 256])),
                             draw(st.sampled_from([1.0, 0.9, 0.6])),
                             draw(st.sampled_from([0.1, 0.3, 0.7])))
    return objects, draw(st.integers(1, 6))


def _check_sets(objects: MovingObjects, sets: MobSets, k: int) -> None:
    """Everything returned satisfies the policy in anonymity.py's docstring."""
    suppressed = sets.suppressed
    assert not suppressed[sets.set_members].any()
    assert np.array_equal(suppressed & (objects.qid_sizes == 0),
                          np.zeros_like(suppressed))
    for i in range(objects.n_objects):
        members, times = sets.members(i), sets.times_of(i)
        if suppressed[i]:
            assert members.size == 0 and times.size == 0
            continue
        if objects.qid_sizes[i]:
            assert members.size >= k and i in members
            assert set(objects.qid(i).tolist()) <= set(times.tolist())
        assert objects.present[np.ix_(members, times)].all()


def _check_regions(objects: MovingObjects, sets: MobSets) -> None:
    gen = generalize(objects, sets)
    published = objects.present & ~sets.suppressed[:, None]
    assert gen.obj.size == published.sum()
    x, y = objects.cx[gen.obj, gen.t], objects.cy[gen.obj, gen.t]
    assert ((gen.x0 <= x) & (x <= gen.x1) & (gen.y0 <= y) & (y <= gen.y1)).all()
    own = gen.cls < 0
    assert (gen.x0[own] == x[own]).all() and (gen.y1[own] == y[own]).all()
    for cls in np.unique(gen.cls[~own]).tolist():
        rows = gen.cls == cls
        assert np.unique(gen.t[rows]).size == 1
        boxes = np.unique(gen.as_rows()[rows][:, 3:], axis=0)
        assert boxes.tolist() == [[x[rows].min(), y[rows].min(), x[rows].max(), y[rows].max()]]
        assert rows.sum() >= sets.k
    for i in range(objects.n_objects):  # each set is inside one class at each of its times
        for t in sets.times_of(i).tolist():
            classes = gen.cls[np.isin(gen.obj, sets.members(i)) & (gen.t == t)]
            assert classes.size == sets.members(i).size and np.unique(classes).size == 1


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_mods())
def test_symmetric_anonymization_invariants(case: tuple[MovingObjects, int]) -> None:
    objects, k = case
    sets = symmetric_anonymization(objects, k)
    _check_sets(objects, sets, k)
    for i in range(objects.n_objects):
        assert sets.times_of(i).tolist() == ([] if sets.suppressed[i]
                                             else objects.qid(i).tolist())
        for j in sets.members(i).tolist():
            assert i in sets.members(j)  # symmetric
    assert np.array_equal(sets.suppressed, brute_force_suppressed(objects, k))
    _check_regions(objects, sets)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_mods())
def test_extreme_union_invariants(case: tuple[MovingObjects, int]) -> None:
    objects, k = case
    sets = extreme_union(objects, k)
    _check_sets(objects, sets, k)
    assert sets.suppressed[brute_force_suppressed(objects, k)].all()
    for i in np.flatnonzero((objects.qid_sizes > 0) & ~sets.suppressed).tolist():
        members = sets.members(i)
        assert members.size == k
        union = np.flatnonzero(objects.qid_matrix[members].any(axis=0))
        assert sets.times_of(i).tolist() == union.tolist()
    _check_regions(objects, sets)


def test_suppression_is_the_fixed_point() -> None:
    # a chain of suppressions, each found only after the previous one
    objects = mobs([[0, 0], [1, 1], [2, 2], [3, 3]], [[0, 0]] * 4, [[0], [1], [1], []],
                   present=[[True, True], [True, True], [False, True], [True, False]])
    assert np.array_equal(suppressed_objects(objects, 3), brute_force_suppressed(objects, 3))
    # k = 3: O0 has eligible {O1, O3}; O1 has {O0, O2} (O3 absent at t1); O2 has {O1}: out,
    # so O1 keeps only O0 and goes too, then O0 keeps only O3 and goes as well
    assert suppressed_objects(objects, 3).tolist() == [True, True, True, False]
    sets = symmetric_anonymization(objects, 3)
    assert sets.n_suppressed == 3 and sets.published_objects().tolist() == [3]
    assert generalize(objects, sets).obj.tolist() == [3]


def test_parallel_workers_give_the_same_sets() -> None:
    objects = random_objects(np.random.default_rng(11), 600, 12, 64, 0.9, 0.3)
    for method in (symmetric_anonymization, extreme_union):
        one, two = method(objects, 4), method(objects, 4, workers=2)
        assert np.array_equal(one.set_indptr, two.set_indptr)
        assert np.array_equal(one.set_members, two.set_members)
        assert np.array_equal(one.times, two.times)
        assert np.array_equal(one.suppressed, two.suppressed)


def test_parallel_workers_finish_under_a_parent_that_handles_sigterm() -> None:
    # Airflow installs a SIGTERM handler; forked workers inherited it, survived the pool's
    # terminate() and hung the run (CI timed out here). Replayed in a fresh interpreter.
    script = textwrap.dedent("""
        import signal, sys
        import numpy as np
        sys.path.insert(0, sys.argv[1])
        from mob_helpers import random_objects
        from anonymizers.families.mob.anonymity import extreme_union, symmetric_anonymization
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        objects = random_objects(np.random.default_rng(11), 300, 8, 64, 0.9, 0.3)
        for _ in range(3):
            symmetric_anonymization(objects, 4, workers=2)
            extreme_union(objects, 4, workers=2)
    """)
    done = subprocess.run([sys.executable, "-c", script, str(Path(__file__).parent)],
                          timeout=120, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_bad_k_and_workers_are_input_errors() -> None:
    with pytest.raises(InputError):
        symmetric_anonymization(example_4(), 0)
    with pytest.raises(InputError):
        extreme_union(example_4(), 2, workers=0)


def test_generalize_refuses_sets_that_do_not_fit() -> None:
    objects = mobs([[0, 1], [1, 1]], [[0, 0], [0, 0]], [[1], [0]],
                   present=[[True, True], [True, False]])
    with pytest.raises(InputError, match="no position"):
        generalize(objects, _given_sets(2, [[0, 1], []], [[1], []]))


def test_generalization_columns_for_the_release_tables() -> None:
    gen = generalize(example_4(), symmetric_anonymization(example_4(), 2))
    columns = gen.columns()
    assert list(columns) == ["object_index", "t_index", "class_id", "x0", "y0", "x1", "y1"]
    assert np.array_equal(np.column_stack(list(columns.values())), gen.as_rows())
    assert gen.class_sizes().tolist() == [3, 3, 2, 3, 2, 2]
