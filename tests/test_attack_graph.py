"""The attack graph of seed 003 (Yarovoy et al. 2009): Example 1, Figure 2, Theorem 1, plants."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import maximum_bipartite_matching

from anonymizers.errors import InputError
from anonymizers.families.mob.verifier_attack_graph import (
    AttackGraph,
    Cells,
    RegionIndex,
    Regions,
    asymmetric_edges,
    attack_edges,
    certifying_matching,
    degree_shortfalls,
    full_match_edges,
    maximum_matching,
    perfect_matching,
    prune_unmatchable,
    symmetric_degree,
)

# Figure 1(a)/(b): (x, y) at t1, t2 per individual; the regions of the unsafe 2-anonymity.
FIGURE_1_CELLS = {0: [(1, 2), (5, 3)], 1: [(2, 3), (2, 7)], 2: [(6, 6), (3, 6)]}
FIGURE_1B_REGIONS = {0: [(1, 2, 2, 3), (5, 3, 5, 3)],
                     1: [(1, 2, 2, 3), (2, 6, 3, 7)],
                     2: [(6, 6, 6, 6), (2, 6, 3, 7)]}
EXAMPLE_1_QIDS = [(0, 0), (1, 1), (2, 1)]  # QID(O1) = {t1}, QID(O2) = QID(O3) = {t2}
# Figure 2(b): every node has degree >= 2, yet (I2, O5) is in no perfect matching.
FIGURE_2B = [(0, 0), (0, 1), (1, 0), (1, 1), (1, 4), (2, 2), (2, 3), (3, 2), (3, 3), (4, 3),
             (4, 4)]


def graph(edges, n: int, universal=None) -> AttackGraph:
    return AttackGraph.from_edges(n, n, [a for a, _ in edges], [b for _, b in edges],
                                  universal)


def figure_1_cells() -> Cells:
    rows = [(p, t, x, y) for p, cells in FIGURE_1_CELLS.items() for t, (x, y) in
            enumerate(cells)]
    return Cells.build(3, 2, *map(list, zip(*rows, strict=True)))


def regions_of(table: dict[int, list[tuple[int, int, int, int]]], n_times: int = 2) -> Regions:
    rows = [(o, t, *box) for o, boxes in table.items() for t, box in enumerate(boxes)]
    return Regions.build(max(table) + 1, n_times, *map(list, zip(*rows, strict=True)))


def example_1_graph() -> AttackGraph:
    regions = regions_of(FIGURE_1B_REGIONS)
    person, obj, observed = attack_edges(figure_1_cells(), *zip(*EXAMPLE_1_QIDS, strict=True),
                                         regions, RegionIndex(regions))
    return AttackGraph.from_edges(3, 3, person, obj, ~observed)


# --------------------------------------------------------------------------- the paper


def test_example_1_passes_the_naive_degree_check_but_the_attacker_reidentifies_o1():
    g = example_1_graph()
    assert sorted(zip(g.person.tolist(), g.obj.tolist(), strict=True)) == [
        (0, 0), (0, 1), (1, 1), (1, 2), (2, 1), (2, 2)]  # Figure 2(a)
    assert len(degree_shortfalls(g, 2)) == 0  # every I-node has 2 neighbours
    matching = perfect_matching(g)
    assert matching is not None
    pruning = prune_unmatchable(g, matching)
    assert pruning.person_candidates.tolist() == [1, 2, 2]  # I1 -> O1 only
    assert pruning.object_candidates[0] == 1  # O1 is re-identified as I1
    asymmetry = asymmetric_edges(g, matching)
    assert list(zip(asymmetry.person, asymmetry.obj, strict=True)) == [(0, 1)]


def test_figure_2b_o5_is_reidentified_although_every_node_has_degree_two():
    g = graph(FIGURE_2B, 5)
    assert g.person_degree().min() >= 2 and g.object_degree().min() >= 2
    matching = perfect_matching(g)
    assert matching is not None
    pruning = prune_unmatchable(g, matching)
    pruned = {(int(a), int(b)) for a, b, keep in zip(g.person, g.obj, pruning.kept,
                                                      strict=True) if not keep}
    assert (1, 4) in pruned  # (I2, O5): no perfect matching uses it
    assert pruning.object_candidates[4] == 1 and pruning.person_candidates[4] == 1


def test_the_full_match_finds_each_counterpart_of_figure_1():
    regions = regions_of(FIGURE_1B_REGIONS)
    person, obj = full_match_edges(figure_1_cells(), regions, RegionIndex(regions))
    assert sorted(zip(person.tolist(), obj.tolist(), strict=True)) == [(0, 0), (1, 1), (2, 2)]


# --------------------------------------------------------------------------- plants


def test_a_planted_asymmetric_edge_is_caught():
    edges = [(i, j) for i in range(4) for j in range(4) if (i < 2) == (j < 2)]  # 2 blocks
    assert asymmetric_edges(graph(edges, 4), np.arange(4)).size == 0
    planted = asymmetric_edges(graph([*edges, (0, 2)], 4), np.arange(4))
    assert list(zip(planted.person, planted.obj, strict=True)) == [(0, 2)]


def test_the_symmetric_core_keeps_mirrored_edges_only():
    edges = [(i, j) for i in range(4) for j in range(4) if (i < 2) == (j < 2)]  # 2 blocks
    assert symmetric_degree(graph([*edges, (0, 2)], 4), np.arange(4)).tolist() == [2] * 4
    one_sided = [e for e in edges if e != (1, 0)]  # I0 -> O1 stays, its mirror goes
    assert symmetric_degree(graph(one_sided, 4), np.arange(4)).tolist() == [1, 1, 2, 2]
    universal = graph([(0, 0), (0, 1), (1, 0), (1, 1)], 3, [False, False, True])
    assert symmetric_degree(universal, np.arange(3)).tolist() == [2, 2, 1]


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 7), st.data())
def test_the_symmetric_degree_is_the_brute_force_one(n, data):
    sigma = data.draw(st.permutations(range(n)))  # the counterparts
    extra = data.draw(st.sets(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1))))
    flags = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    edges = {*enumerate(sigma), *extra}
    inverse = {o: i for i, o in enumerate(sigma)}

    def edge(i: int, o: int) -> bool:
        return flags[i] or (i, o) in edges

    expected = [sum(edge(i, o) and edge(inverse[o], sigma[i]) for o in range(n))
                for i in range(n)]
    g = graph(sorted(edges), n, flags)
    assert symmetric_degree(g, np.array(sigma)).tolist() == expected


def test_degree_k_minus_one_is_caught():
    edges = [(i, j) for i in range(3) for j in range(3)]
    assert len(degree_shortfalls(graph(edges, 3), 3)) == 0
    short = [e for e in edges if e != (1, 2)]
    assert degree_shortfalls(graph(short, 3), 3).tolist() == [1]


def test_an_object_matching_nobody_is_left_unmatched():
    regions = regions_of({**FIGURE_1B_REGIONS, 3: [(9, 9, 9, 9), (9, 9, 9, 9)]})
    person, obj = full_match_edges(figure_1_cells(), regions, RegionIndex(regions))
    full = AttackGraph.from_edges(3, 4, person, obj)
    matching = maximum_matching(full)
    assert sorted(set(range(4)) - set(matching.tolist())) == [3]


def test_a_universal_person_needs_its_object_to_satisfy_everyone():
    """An empty QID links I_u to every object; symmetry then asks (I_j, O_u) for all j."""
    edges = [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert asymmetric_edges(graph(edges, 3, [False, False, True]), np.arange(3)).size == 2
    full = [*edges, (0, 2), (1, 2)]
    g = graph(full, 3, [False, False, True])
    assert asymmetric_edges(g, np.arange(3)).size == 0
    assert g.person_degree().tolist() == [3, 3, 3]
    assert prune_unmatchable(g, np.arange(3)).person_candidates.tolist() == [3, 3, 3]


def test_a_matching_that_is_not_perfect_is_refused():
    g = graph([(0, 0), (1, 1)], 2)
    with pytest.raises(InputError, match="not an edge"):
        prune_unmatchable(g, np.array([1, 0]))
    with pytest.raises(InputError, match="unpaired"):
        asymmetric_edges(g, np.array([0, 0]))


# --------------------------------------------------------------------------- properties


@st.composite
def definition_3_graphs(draw):
    """A symmetric graph w.r.t. a random counterpart permutation, every degree >= k."""
    n = draw(st.integers(2, 10))
    k = draw(st.integers(2, n))
    sigma = np.array(draw(st.permutations(range(n))))
    universal = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    pairs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)),
                          max_size=3 * n))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    edges = {(i, int(sigma[i])) for i in range(n)}
    for i, j in pairs:
        edges |= {(i, int(sigma[j])), (j, int(sigma[i]))}
    for u in np.flatnonzero(universal):
        edges |= {(j, int(sigma[u])) for j in range(n)}
    for i in range(n):  # top up to k, symmetrically
        while len({o for p, o in edges if p == i}) < k and not universal[i]:
            j = int(rng.integers(n))
            edges |= {(i, int(sigma[j])), (j, int(sigma[i]))}
    return graph(sorted(edges), n, universal), sigma, k


@settings(max_examples=150, deadline=None)
@given(definition_3_graphs())
def test_theorem_1_a_definition_3_graph_loses_no_edge(case):
    g, sigma, k = case
    assert len(degree_shortfalls(g, k)) == 0
    assert asymmetric_edges(g, sigma).size == 0
    for matching in (sigma, perfect_matching(g)):  # any perfect matching gives the same
        pruning = prune_unmatchable(g, matching)
        assert pruning.kept.all()
        assert (pruning.person_candidates == g.person_degree()).all()
        assert (pruning.object_candidates == g.object_degree()).all()


def brute_force_kept(g: AttackGraph) -> dict[tuple[int, int], bool]:
    """Every edge (explicit or universal): is there a perfect matching through it?"""
    dense = g.biadjacency().toarray().astype(bool)
    dense[g.universal] = True
    kept = {}
    for i, o in zip(*np.nonzero(dense), strict=True):
        rest = np.delete(np.delete(dense, i, axis=0), o, axis=1)
        size = (maximum_bipartite_matching(sp.csr_matrix(rest), perm_type="column") >= 0).sum()
        kept[(int(i), int(o))] = bool(size == g.n_persons - 1)
    return kept


@st.composite
def graphs_with_a_perfect_matching(draw):
    n = draw(st.integers(1, 7))
    sigma = draw(st.permutations(range(n)))
    extra = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)),
                          max_size=2 * n * n))
    universal = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    return graph([*enumerate(sigma), *extra], n, universal)


@settings(max_examples=200, deadline=None)
@given(graphs_with_a_perfect_matching())
def test_pruning_agrees_with_brute_force(g):
    matching = perfect_matching(g)
    assert matching is not None
    pruning = prune_unmatchable(g, matching)
    truth = brute_force_kept(g)
    explicit = {(int(a), int(b)): bool(k) for a, b, k in zip(g.person, g.obj, pruning.kept,
                                                              strict=True)}
    assert explicit == {e: v for e, v in truth.items() if not g.universal[e[0]]}
    for i in range(g.n_persons):
        assert pruning.person_candidates[i] == sum(v for (p, _), v in truth.items() if p == i)
    for o in range(g.n_objects):
        assert pruning.object_candidates[o] == sum(v for (_, b), v in truth.items() if b == o)


@st.composite
def boxes_and_points(draw):
    coordinate = st.integers(-40, 40)
    n_times = draw(st.integers(1, 3))
    boxes = draw(st.lists(st.tuples(st.integers(0, n_times - 1), coordinate, coordinate,
                                    st.integers(0, 20), st.integers(0, 33)),
                          min_size=1, max_size=30))
    points = draw(st.lists(st.tuples(st.integers(0, n_times - 1), coordinate, coordinate),
                           min_size=1, max_size=30))
    return n_times, boxes, points


@settings(max_examples=150, deadline=None)
@given(boxes_and_points())
def test_the_region_index_finds_exactly_the_containing_regions(case):
    n_times, boxes, points = case
    rows = [(o, t, x, y, x + w, y + h) for o, (t, x, y, w, h) in enumerate(boxes)]
    regions = Regions.build(len(rows), n_times, *map(list, zip(*rows, strict=True)))
    t, x, y = (np.array(a) for a in zip(*points, strict=True))
    query, row = RegionIndex(regions).stab(t, x, y)
    found = sorted(zip(query.tolist(), regions.obj[row].tolist(), strict=True))
    truth = sorted((q, o) for (q, (pt, px, py)), (o, bt, x0, y0, x1, y1) in
                   itertools.product(enumerate(points), rows)
                   if pt == bt and x0 <= px <= x1 and y0 <= py <= y1)
    assert found == truth
    counts = RegionIndex(regions).counts(t, x, y)
    assert (counts >= np.bincount(query, minlength=len(points))).all()


def _short(g: AttackGraph, matching: np.ndarray, k: int) -> int:
    core, degree = symmetric_degree(g, matching), g.person_degree()
    return int(np.sum((core < k) & (degree >= k)))


def test_a_pairing_under_which_the_core_reaches_k_is_found_by_swaps():
    """I0 and I1 are both distorted versions of O0 and O1; the release was built with
    I0-O1, I1-O0 ({I0, I2} and {I1, I3} hide each other). Paired I0-O0, I1-O1, I2's edge
    to O1 and I3's to O0 lose their mirrors; swapping I0's and I1's objects restores them."""
    edges = [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 3), (2, 1), (2, 2), (3, 0), (3, 3)]
    g = graph(edges, 4)
    identity = np.arange(4)
    assert _short(g, identity, 2) == 2
    found = certifying_matching(g, identity, 2)
    assert found.tolist() == [1, 0, 2, 3] and _short(g, found, 2) == 0
    assert certifying_matching(g, identity, 2, max_swaps=0).tolist() == [0, 1, 2, 3]


@settings(max_examples=200, deadline=None)
@given(graphs_with_a_perfect_matching(), st.integers(1, 4))
def test_swaps_keep_a_perfect_matching_and_never_leave_more_persons_short(g, k):
    start = maximum_matching(g)
    found = certifying_matching(g, start, k)
    assert sorted(found.tolist()) == list(range(g.n_persons))
    assert all(g.universal[i] or (i, int(o)) in set(zip(g.person.tolist(), g.obj.tolist(),
                                                         strict=True))
               for i, o in enumerate(found.tolist()))
    assert _short(g, found, k) <= _short(g, start, k)
