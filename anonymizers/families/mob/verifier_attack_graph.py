"""The attack graph of a MOB release (Yarovoy et al. 2009, Definitions 1-3): build, match, prune.

Pure numpy/scipy, no database: the MOB verifier (:mod:`anonymizers.families.mob.verifier`) feeds it
integer cells and cell rectangles. Persons are I-nodes, published objects O-nodes; an
edge is an (I, O) pair of the index arrays ``person`` and ``obj``. A person whose QID is
empty is adjacent to every object ("universal"): such a person is one flag, not n edges.

Edge construction (Definition 1) never compares every person with every object: a
:class:`RegionIndex` answers "which regions contain this cell at this time point" with a
loose grid per size class of rectangles, only at the most selective time point of each
person; the candidates are then confirmed at the person's other time points by key lookup.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from scipy.sparse.csgraph import connected_components, maximum_bipartite_matching

from anonymizers.errors import InputError
from anonymizers.sequences import sized_runs

__all__ = [
    "Asymmetry",
    "AttackGraph",
    "Cells",
    "Pruning",
    "RegionIndex",
    "Regions",
    "asymmetric_edges",
    "attack_edges",
    "certifying_matching",
    "covering_edges",
    "degree_shortfalls",
    "full_match_edges",
    "maximum_matching",
    "perfect_matching",
    "prune_unmatchable",
    "symmetric_degree",
]

Ints = NDArray[np.int64]
Bools = NDArray[np.bool_]
UNMATCHED = -1
# Candidate (query, region) pairs expanded at once: bounds the verifier's memory (~100 MB).
CHUNK = 4_000_000
# Presence time points per person tried as the seed of its full match (the most selective).
SEED_SAMPLES = 8
# Swaps tried in all by certifying_matching.
SWAP_BUDGET = 10_000


def _ints(values: object) -> Ints:
    return np.ascontiguousarray(values, dtype=np.int64)


# --------------------------------------------------------------------------- the graph


@dataclass(frozen=True)
class AttackGraph:
    """A bipartite attack graph: explicit edges, plus persons adjacent to every object.

    Parameters
    ----------
    n_persons, n_objects : int
        Numbers of I-nodes and O-nodes.
    person, obj : ndarray of int64
        The explicit edges (I-node, O-node), unique, sorted by (person, obj).
    universal : ndarray of bool
        Per person: adjacent to every object (an empty QID, Definition 1 holds vacuously);
        such a person has no explicit edge.

    References
    ----------
    Yarovoy, Bonchi, Lakshmanan, Wang. Anonymizing Moving Objects: How to Hide a MOB in a
    Crowd? EDBT 2009, Definition 1 (attack graph).
    """

    n_persons: int
    n_objects: int
    person: Ints
    obj: Ints
    universal: Bools

    @classmethod
    def from_edges(cls, n_persons: int, n_objects: int, person: object, obj: object,
                   universal: object = None) -> AttackGraph:
        """The graph of the given edges (repeats collapse; a universal person's are implied)."""
        person, obj = _ints(person), _ints(obj)
        flags = (np.zeros(n_persons, dtype=bool) if universal is None
                 else np.asarray(universal, dtype=bool))
        if len(person) != len(obj) or len(flags) != n_persons:
            raise InputError("edge arrays and the universal flags do not fit the graph's sizes")
        if len(person) and (person.min() < 0 or person.max() >= n_persons
                            or obj.min() < 0 or obj.max() >= n_objects):
            raise InputError("an edge names a node outside the graph")
        codes = _unique(person * n_objects + obj)
        codes = codes[~flags[codes // max(n_objects, 1)]]
        return cls(n_persons, n_objects, codes // max(n_objects, 1), codes % max(n_objects, 1),
                   flags)

    @property
    def codes(self) -> Ints:
        """Each explicit edge as one sorted integer, person * n_objects + obj."""
        return self.person * self.n_objects + self.obj

    def person_degree(self) -> Ints:
        """Objects adjacent to each person (Definition 3(i) counts them)."""
        degree = np.bincount(self.person, minlength=self.n_persons).astype(np.int64)
        degree[self.universal] = self.n_objects
        return degree

    def object_degree(self) -> Ints:
        """Persons adjacent to each object."""
        explicit = np.bincount(self.obj, minlength=self.n_objects).astype(np.int64)
        return explicit + int(self.universal.sum())

    def biadjacency(self) -> sp.csr_matrix:
        """The explicit edges as a persons x objects sparse matrix."""
        data = np.ones(len(self.person), dtype=np.int8)
        return sp.csr_matrix((data, (self.person, self.obj)),
                             shape=(self.n_persons, self.n_objects))


def maximum_matching(graph: AttackGraph) -> Ints:
    """A maximum matching: the object of each person, or -1 (UNMATCHED).

    Hopcroft-Karp (scipy) on the explicit edges; universal persons then take the objects
    left free. That is maximum: any matching pairs at most the explicit maximum of the
    other persons, and each one fewer frees an object for at most one universal person.

    References
    ----------
    Yarovoy et al. 2009, Definition 1: "an assignment of individuals to MOBs is consistent
    provided there exists a perfect matching in the bipartite graph G".
    """
    if graph.n_persons == 0:
        return np.zeros(0, dtype=np.int64)
    match = _ints(maximum_bipartite_matching(graph.biadjacency(), perm_type="column"))
    free = np.ones(graph.n_objects, dtype=bool)
    free[match[match >= 0]] = False
    takers = np.flatnonzero(graph.universal)
    spare = np.flatnonzero(free)[:len(takers)]
    match[takers[:len(spare)]] = spare
    return match


def perfect_matching(graph: AttackGraph) -> Ints | None:
    """A perfect matching (object of each person), or None when there is none."""
    if graph.n_persons != graph.n_objects:
        return None
    match = maximum_matching(graph)
    return match if bool(np.all(match >= 0)) else None


def _check_perfect(graph: AttackGraph, matching: Ints) -> Ints:
    """``matching`` as an inverse (person of each object); raises unless it is perfect."""
    matching = _ints(matching)
    if graph.n_persons != graph.n_objects or len(matching) != graph.n_persons:
        raise InputError("a perfect matching pairs every person with one object")
    if np.any(matching < 0) or len(_unique(matching)) != graph.n_objects:
        raise InputError("the matching leaves a person or an object unpaired")
    explicit = ~graph.universal
    wanted = np.arange(graph.n_persons)[explicit] * graph.n_objects + matching[explicit]
    if np.any(_lookup(graph.codes, wanted) < 0):
        raise InputError("the matching uses a pair that is not an edge of the graph")
    inverse = np.empty(graph.n_objects, dtype=np.int64)
    inverse[matching] = np.arange(graph.n_persons)
    return inverse


# --------------------------------------------------------------------------- Definition 2


@dataclass(frozen=True)
class Pruning:
    """What the attacker of Definition 2 keeps.

    Attributes
    ----------
    kept : ndarray of bool
        Per explicit edge: part of some perfect matching.
    person_candidates : ndarray of int64
        Objects each person can still be assigned to.
    object_candidates : ndarray of int64
        Persons each object can still belong to.
    """

    kept: Bools
    person_candidates: Ints
    object_candidates: Ints


def _oriented(graph: AttackGraph, matching: Ints) -> sp.csr_matrix:
    """Nodes persons 0..n-1, objects n..2n-1, hub 2n: matched edges O->I, the others I->O;
    every universal person I->hub and hub->every object (so no n^2 edges: the reachability
    between persons and objects is that of the graph with all those edges)."""
    n = graph.n_persons
    matched = graph.obj == matching[graph.person]
    hub = 2 * n
    heads = [graph.person[~matched], n + matching, np.flatnonzero(graph.universal)]
    tails = [n + graph.obj[~matched], np.arange(n), np.full(int(graph.universal.sum()), hub)]
    if graph.universal.any():
        heads.append(np.full(n, hub))
        tails.append(n + np.arange(n))
    rows, cols = np.concatenate(heads), np.concatenate(tails)
    return sp.csr_matrix((np.ones(len(rows), dtype=np.int8), (rows, cols)),
                         shape=(2 * n + 1, 2 * n + 1))


def prune_unmatchable(graph: AttackGraph, matching: Ints) -> Pruning:
    """Remove every edge that lies in no perfect matching; count what each node keeps.

    Given one perfect matching M, orient M's edges O->I and all others I->O: an edge not
    in M lies in some perfect matching iff it closes an M-alternating cycle, i.e. iff its
    two ends are in one strongly connected component (the Dulmage-Mendelsohn fine
    decomposition). Which edges survive does not depend on the M chosen. One pass is the
    fixpoint of Definition 2's "repeat until no change": the edges removed lie in no
    perfect matching, so the perfect matchings, and hence the edges in one, stay the same.

    Parameters
    ----------
    graph : AttackGraph
    matching : ndarray of int64
        A perfect matching of ``graph`` (the object of each person).

    Returns
    -------
    Pruning

    References
    ----------
    Yarovoy et al. 2009, Definition 2 (attack model), Figure 2.
    """
    matching = _ints(matching)
    _check_perfect(graph, matching)
    n = graph.n_persons
    if n == 0:
        empty = np.zeros(0, dtype=np.int64)
        return Pruning(np.zeros(0, dtype=bool), empty, empty)
    _, label = connected_components(_oriented(graph, matching), directed=True,
                                    connection="strong")
    kept = (graph.obj == matching[graph.person]) | (label[graph.person] == label[n + graph.obj])
    obj_label = label[n:2 * n]
    # A universal person keeps exactly the objects of its component (hub edges).
    objects_in = np.bincount(obj_label, minlength=label.max() + 1)
    universal_in = np.bincount(label[:n][graph.universal], minlength=label.max() + 1)
    person_candidates = np.bincount(graph.person[kept], minlength=n).astype(np.int64)
    person_candidates[graph.universal] = objects_in[label[:n][graph.universal]]
    object_candidates = (np.bincount(graph.obj[kept], minlength=n)
                         + universal_in[obj_label]).astype(np.int64)
    return Pruning(kept, person_candidates, object_candidates)


# --------------------------------------------------------------------------- Definition 3


def degree_shortfalls(graph: AttackGraph, k: int) -> Ints:
    """Persons adjacent to fewer than k objects (Definition 3(i) fails for them).

    References
    ----------
    Yarovoy et al. 2009, Definition 3(i).
    """
    return np.flatnonzero(graph.person_degree() < k).astype(np.int64)


@dataclass(frozen=True)
class Asymmetry:
    """Edges without their mirror w.r.t. a perfect matching M.

    Attributes
    ----------
    person, obj : ndarray of int64
        Explicit edges (I_i, O_j) such that (I_{M^-1(j)}, O_{M(i)}) is not an edge.
    universal_person, universal_missing : ndarray of int64
        Universal persons i (adjacent to every O_j) whose object O_{M(i)} lacks that many
        of the mirrors (I_{M^-1(j)}, O_{M(i)}), i.e. the persons whose QID it fails.
    """

    person: Ints
    obj: Ints
    universal_person: Ints
    universal_missing: Ints

    @property
    def size(self) -> int:
        return len(self.person) + int(self.universal_missing.sum())


def asymmetric_edges(graph: AttackGraph, matching: Ints) -> Asymmetry:
    """Definition 3(ii) w.r.t. the perfect matching ``matching`` as the counterparts.

    Definition 3 pairs I_i with its own object O_i. Theorem 1's proof uses only that the
    pairs (I_p, O_p) form a perfect matching of G and that G is symmetric w.r.t. it, so
    any perfect matching M may stand for the true counterparts: if G is symmetric w.r.t.
    M and every person has degree >= k, the attacker of Definition 2 prunes no edge.

    References
    ----------
    Yarovoy et al. 2009, Definition 3(ii) and Theorem 1.
    """
    matching = _ints(matching)
    present = _mirror_present(graph, matching)
    universal, missing = _universal_mirrors(graph, matching)
    return Asymmetry(graph.person[~present], graph.obj[~present], universal[missing > 0],
                     missing[missing > 0])


def symmetric_degree(graph: AttackGraph, matching: Ints) -> Ints:
    """Each person's degree in the symmetric core of G w.r.t. the counterparts ``matching``:
    the edges (I_i, O_j) whose mirror (I_M^-1(j), O_M(i)) is an edge too.

    The core holds every counterpart edge (each is its own mirror) and is symmetric, so it
    satisfies Definition 3 wherever this degree is >= k; a perfect matching of the core is
    one of G, so by Theorem 1's proof no core edge can be pruned by the attacker of
    Definition 2, whatever other edges G has. Edges outside the core (an object's region
    that happens to hold another person's cell at all of that person's QID times) only
    add candidates: an edge added to a bipartite graph removes no perfect matching.

    References
    ----------
    Yarovoy et al. 2009, Definition 3 and Theorem 1.
    """
    matching = _ints(matching)
    present = _mirror_present(graph, matching)
    degree = np.bincount(graph.person[present], minlength=graph.n_persons).astype(np.int64)
    universal, missing = _universal_mirrors(graph, matching)
    degree[universal] = graph.n_objects - missing  # its edge to O_j is kept iff mirrored
    return degree


def certifying_matching(graph: AttackGraph, matching: Ints, k: int,
                        max_swaps: int = SWAP_BUDGET, core: Ints | None = None) -> Ints:
    """A perfect matching of G, reached from ``matching`` by swaps, under which fewer (best:
    no) persons of degree >= k have fewer than k edges in the symmetric core.

    Any perfect matching of G may stand for the counterparts (:func:`asymmetric_edges`),
    and who is whose counterpart is ambiguous when persons are distorted versions of
    several objects (on a 5M-fix city's MOB release 98,280 of 100,845 published persons
    were): a maximum matching of those full matches picked the anonymizer's own pairs for
    9,867 of them, and under it five persons had a core below k, none under the
    anonymizer's. So, for a person short in the core, two persons swap objects when that
    leaves fewer persons short (each swap keeps a perfect matching of G: both new pairs
    are edges; :meth:`_SwapSearch._swaps_for` says which), at most ``max_swaps`` in all.
    Only the persons whose core a swap changes are counted again: the two, and those
    adjacent to their two objects.

    References
    ----------
    Yarovoy et al. 2009, Definition 3(ii) and Theorem 1.
    """
    matching = _ints(matching).copy()
    core = symmetric_degree(graph, matching) if core is None else _ints(core).copy()
    return _SwapSearch(graph, matching, k, core).run(max_swaps)


class _SwapSearch:
    """State of :func:`certifying_matching`: the matching, its inverse, each person's core."""

    def __init__(self, graph: AttackGraph, matching: Ints, k: int, core: Ints) -> None:
        self.graph, self.matching, self.k, self.core = graph, matching, k, core
        self.inverse = _check_perfect(graph, matching)
        self.codes = graph.codes
        self.p_start, p_len = _spans(graph.person, graph.n_persons)
        self.p_end = self.p_start + p_len
        # Each object's persons, as 32-bit numbers: tens of millions of edges at 5M fixes.
        by_object = np.argsort(graph.obj, kind="stable")
        self.o_persons = graph.person[by_object].astype(np.int32)
        self.o_start, o_len = _spans(graph.obj[by_object], graph.n_objects)
        del by_object
        self.o_end = self.o_start + o_len
        self.counted = graph.person_degree() >= k

    def short(self, persons: Ints) -> int:
        return int(np.count_nonzero(self.counted[persons] & (self.core[persons] < self.k)))

    def run(self, budget: int) -> Ints:
        for i in np.flatnonzero(self.counted & (self.core < self.k)).tolist():
            if self.graph.universal[i]:
                continue
            for x, y in self._swaps_for(i):
                if budget == 0:
                    return self.matching
                budget -= 1
                if self._swap_if_better(x, y) and self.core[i] >= self.k:
                    break
        return self.matching

    def _swaps_for(self, i: int) -> Iterator[tuple[int, int]]:
        """Swaps that may give I_i more mirrored edges: I_i's own object traded with a
        mirrored neighbour's, then, for each edge (I_i, O) without its mirror, O's person
        I_j traded for a person I_l that mirrors it: (I_l, O), (I_l, O_M(i)) and
        (I_j, O_M(l)) edges."""
        graph = self.graph
        own = int(self.matching[i])
        objects = graph.obj[self.p_start[i]:self.p_end[i]]
        holders = self.inverse[objects]
        usable = (holders != i) & ~graph.universal[holders]
        mirrored = self._has_edge(holders, np.full(holders.size, own))
        for j in holders[usable & mirrored].tolist():
            yield i, j
        for o, j in zip(objects[usable & ~mirrored].tolist(),
                        holders[usable & ~mirrored].tolist(), strict=True):
            others = self.o_persons[self.o_start[o]:self.o_end[o]].astype(np.int64)
            others = others[(others != j) & (others != i) & ~graph.universal[others]]
            fits = (self._has_edge(others, np.full(others.size, own))
                    & self._has_edge(np.full(others.size, j), self.matching[others]))
            for other in others[fits].tolist():
                yield j, other

    def _has_edge(self, person: Ints, obj: Ints) -> Bools:
        graph = self.graph
        found = _lookup(self.codes, person * graph.n_objects + obj) >= 0
        return found | graph.universal[person]

    def _swap_if_better(self, i: int, j: int) -> bool:
        a, b = int(self.matching[i]), int(self.matching[j])
        touched = np.unique(np.concatenate((
            [i, j], self.o_persons[self.o_start[a]:self.o_end[a]],
            self.o_persons[self.o_start[b]:self.o_end[b]]))).astype(np.int64)
        touched = touched[~self.graph.universal[touched]]
        before = self.short(touched)
        self._swap(i, j, a, b)
        old = self.core[touched]
        self.core[touched] = self._core_of(touched)
        if self.short(touched) < before:
            return True
        self.core[touched] = old
        self._swap(i, j, b, a)
        return False

    def _swap(self, i: int, j: int, a: int, b: int) -> None:
        self.matching[i], self.matching[j] = b, a
        self.inverse[b], self.inverse[a] = i, j

    def _core_of(self, persons: Ints) -> Ints:
        """Symmetric-core degree of explicit ``persons`` under the current matching."""
        which, rows = _ranges(self.p_start[persons], self.p_end[persons] - self.p_start[persons])
        mirror = self.inverse[self.graph.obj[rows]]
        kept = self._has_edge(mirror, self.matching[persons[which]])
        return np.bincount(which[kept], minlength=persons.size).astype(np.int64)


def _mirror_present(graph: AttackGraph, matching: Ints) -> Bools:
    """Per explicit edge (I_i, O_j): whether (I_M^-1(j), O_M(i)) is an edge."""
    inverse = _check_perfect(graph, matching)
    mirror_person = inverse[graph.obj]
    wanted = mirror_person * graph.n_objects + matching[graph.person]
    return graph.universal[mirror_person] | (_lookup(graph.codes, wanted) >= 0)


def _universal_mirrors(graph: AttackGraph, matching: Ints) -> tuple[Ints, Ints]:
    """The universal persons u, and per u how many objects O_j lack the mirror of (u, O_j):
    the explicit persons whose edge to u's own object O_M(u) is missing."""
    explicit_in = np.bincount(graph.obj, minlength=graph.n_objects)
    universal = np.flatnonzero(graph.universal).astype(np.int64)
    others = graph.n_persons - len(universal)
    return universal, (others - explicit_in[matching[universal]]).astype(np.int64)


# --------------------------------------------------------------------------- Definition 1


@dataclass(frozen=True)
class Regions:
    """Published regions: object ``obj`` covers cells x0..x1 x y0..y1 at time point ``t``.

    Rows are sorted by (obj, t), at most one per (obj, t). Cells are integers (grid cell
    indices), bounds inclusive.
    """

    n_objects: int
    n_times: int
    obj: Ints
    t: Ints
    x0: Ints
    y0: Ints
    x1: Ints
    y1: Ints

    @classmethod
    def build(cls, n_objects: int, n_times: int, obj: object, t: object, x0: object,
              y0: object, x1: object, y1: object) -> Regions:
        obj_, t_ = _ints(obj), _ints(t)
        order = np.lexsort((t_, obj_))
        rows = [_ints(a)[order] for a in (obj_, t_, x0, y0, x1, y1)]
        key = rows[0] * n_times + rows[1]
        if np.any(key[1:] == key[:-1]):
            raise InputError("an object has two regions at one time point")
        if np.any(rows[2] > rows[4]) or np.any(rows[3] > rows[5]):
            raise InputError("a region's lower bound exceeds its upper bound")
        return cls(n_objects, n_times, *rows)

    @property
    def key(self) -> Ints:
        return self.obj * self.n_times + self.t

    @cached_property
    def _rows(self) -> _RowMap:
        return _RowMap(self.key, self.n_objects * self.n_times)

    def row_of(self, obj: Ints, t: Ints) -> Ints:
        """The row of each (obj, t), or -1 where the object is absent at t."""
        return self._rows.find(obj * self.n_times + t)

    def contains(self, rows: Ints, x: Ints, y: Ints) -> Bools:
        """Whether region ``rows`` contains cell (x, y) (False for row -1)."""
        safe = np.maximum(rows, 0)
        inside = ((self.x0[safe] <= x) & (x <= self.x1[safe])
                  & (self.y0[safe] <= y) & (y <= self.y1[safe]))
        return inside & (rows >= 0)


@dataclass(frozen=True)
class Cells:
    """True positions: person ``person`` is in cell (x, y) at time point ``t``.

    Rows are sorted by (person, t), at most one per (person, t).
    """

    n_persons: int
    n_times: int
    person: Ints
    t: Ints
    x: Ints
    y: Ints

    @classmethod
    def build(cls, n_persons: int, n_times: int, person: object, t: object, x: object,
              y: object) -> Cells:
        person_, t_ = _ints(person), _ints(t)
        order = np.lexsort((t_, person_))
        rows = [_ints(a)[order] for a in (person_, t_, x, y)]
        key = rows[0] * n_times + rows[1]
        if np.any(key[1:] == key[:-1]):
            raise InputError("a person has two cells at one time point")
        return cls(n_persons, n_times, *rows)

    @cached_property
    def _rows(self) -> _RowMap:
        return _RowMap(self.person * self.n_times + self.t, self.n_persons * self.n_times)

    def row_of(self, person: Ints, t: Ints) -> Ints:
        """The row of each (person, t), or -1 where the person has no position at t."""
        return self._rows.find(person * self.n_times + t)


class _RowMap:
    """Row of each key of a sorted key array: a dense table when the key space is not
    much larger than the rows (one memory access per look-up), else binary search."""

    def __init__(self, sorted_keys: Ints, key_space: int) -> None:
        self.keys = sorted_keys
        self.table: NDArray[np.int64] | None = None
        if key_space <= max(8 * len(sorted_keys), 1 << 24):
            self.table = np.full(key_space, -1, dtype=np.int64)
            self.table[sorted_keys] = np.arange(len(sorted_keys))

    def find(self, wanted: Ints) -> Ints:
        if self.table is None:
            return _lookup(self.keys, wanted)
        return self.table[wanted]


def _lookup(sorted_keys: Ints, wanted: Ints) -> Ints:
    """The position of each wanted key in ``sorted_keys``, or -1 where it is missing."""
    if len(sorted_keys) == 0:
        return np.full(len(wanted), -1, dtype=np.int64)
    # Searching in key order is several times faster (numpy reuses the last bound).
    order = np.argsort(wanted, kind="stable")
    at = np.empty(len(wanted), dtype=np.int64)
    at[order] = np.searchsorted(sorted_keys, wanted[order])
    at = np.minimum(at, len(sorted_keys) - 1)
    return np.where(sorted_keys[at] == wanted, at, -1).astype(np.int64)


def _unique(values: Ints) -> Ints:
    """Sorted distinct values (numpy's hash-based np.unique is slower on 10^6-10^7 ints)."""
    ordered = np.sort(values)
    return ordered[np.r_[True, ordered[1:] != ordered[:-1]]] if len(ordered) else ordered


def _spans(ids: Ints, n: int) -> tuple[Ints, Ints]:
    """First row and number of rows of each id 0..n-1 in the sorted array ``ids``."""
    start = np.searchsorted(ids, np.arange(n)).astype(np.int64)
    end = np.searchsorted(ids, np.arange(n), side="right").astype(np.int64)
    return start, end - start


def _ranges(start: Ints, length: Ints) -> tuple[Ints, Ints]:
    """For each i, the rows start[i] .. start[i] + length[i] - 1, with their owner i."""
    owner = np.repeat(np.arange(len(start), dtype=np.int64), length)
    offset = np.arange(len(owner), dtype=np.int64) - np.repeat(np.cumsum(length) - length,
                                                                length)
    return owner, np.repeat(start, length) + offset


def _chunks(sizes: Ints) -> Iterator[tuple[int, int]]:
    """Consecutive [start, stop) runs of items whose sizes add up to about CHUNK."""
    return sized_runs(sizes, CHUNK)


@dataclass(frozen=True)
class _SizeClass:
    """Regions at most 2**shift cells wide and high, keyed by (t, x0 >> shift,
    y0 >> shift): a cell can only lie in regions of its own bucket or of the bucket to its
    left, below, or both (a loose grid); a single cell only in its own."""

    shift: int
    bx_min: int
    by_min: int
    span_x: int
    span_y: int
    times: Bools  # time points at which the class has regions
    keys: Ints
    rows: Ints

    def bucket_ranges(self, t: Ints, x: Ints, y: Ints) -> Iterator[tuple[Ints, Ints, Ints]]:
        """Per neighbour bucket: the queries that may meet regions of this class, with the
        [lo, hi) ranges of ``keys`` they must look at."""
        asked = np.flatnonzero(self.times[t])
        qx, qy, qt = x[asked] >> self.shift, y[asked] >> self.shift, t[asked]
        reach = (0, 1) if self.shift else (0,)  # a single cell is in its own bucket only
        for dx in reach:
            for dy in reach:
                bx, by = qx - dx - self.bx_min, qy - dy - self.by_min
                valid = (bx >= 0) & (bx < self.span_x) & (by >= 0) & (by < self.span_y)
                key = (qt[valid] * self.span_x + bx[valid]) * self.span_y + by[valid]
                lo, hi = _search(self.keys, key)
                yield asked[valid], lo, hi


def _search(sorted_keys: Ints, wanted: Ints) -> tuple[Ints, Ints]:
    """searchsorted left and right of every wanted key (searched in key order: numpy then
    reuses its last bound, several times faster on large arrays)."""
    order = np.argsort(wanted)
    lo = np.empty(len(wanted), dtype=np.int64)
    hi = np.empty(len(wanted), dtype=np.int64)
    lo[order] = np.searchsorted(sorted_keys, wanted[order])
    hi[order] = np.searchsorted(sorted_keys, wanted[order], side="right")
    return lo, hi


class RegionIndex:
    """Which regions contain a cell at a time point: one loose grid per size class.

    A region at most w cells wide and high (2**(s-1) < w <= 2**s) goes into square buckets
    2**s cells wide, so the cells it covers lie in its bucket or the next one: four bucket
    look-ups per query and size class (one for single cells; only at time points where the
    class has regions),
    each a binary search in that class's sorted keys. Candidates per query are the
    regions of those buckets, a few times the regions overlapping the cell.

    References
    ----------
    Yarovoy et al. 2009, Definition 1 (D(I, t) contained in D*(O, t)).
    """

    def __init__(self, regions: Regions) -> None:
        self.regions = regions
        # Buckets at least as wide as the region and less than twice: 2**bits(w - 1).
        shift = _bit_length(np.maximum(regions.x1 - regions.x0, regions.y1 - regions.y0))
        order = np.argsort(shift, kind="stable")
        bounds = np.flatnonzero(np.r_[True, np.diff(shift[order]) != 0, True]) if len(shift) \
            else np.zeros(1, dtype=np.int64)
        self.classes = [self._size_class(order[lo:hi], int(shift[order[lo]]))
                        for lo, hi in itertools.pairwise(bounds)]

    def _size_class(self, members: Ints, shift: int) -> _SizeClass:
        regions = self.regions
        bx, by = regions.x0[members] >> shift, regions.y0[members] >> shift
        bx_min, by_min = int(bx.min()), int(by.min())
        span_x, span_y = int(bx.max()) - bx_min + 1, int(by.max()) - by_min + 1
        if float(regions.n_times) * span_x * span_y >= 2.0 ** 62:
            raise InputError("the published regions spread over too many cells to index")
        keys = (regions.t[members] * span_x + bx - bx_min) * span_y + by - by_min
        order = np.argsort(keys)
        times = np.zeros(regions.n_times, dtype=bool)
        times[regions.t[members]] = True
        return _SizeClass(shift, bx_min, by_min, span_x, span_y, times, keys[order],
                          members[order])

    def counts(self, t: Ints, x: Ints, y: Ints) -> Ints:
        """An upper bound of the regions containing each query cell (no expansion)."""
        total = np.zeros(len(t), dtype=np.int64)
        for size_class in self.classes:
            for asked, lo, hi in size_class.bucket_ranges(t, x, y):
                total[asked] += hi - lo
        return total

    def stab(self, t: Ints, x: Ints, y: Ints) -> tuple[Ints, Ints]:
        """Every (query, region row) with the region containing the query's cell at its t."""
        queries: list[Ints] = []
        rows: list[Ints] = []
        for found_q, found_r in self.stab_chunks(t, x, y):
            queries.append(found_q)
            rows.append(found_r)
        return _joined(queries), _joined(rows)

    def stab_chunks(self, t: Ints, x: Ints, y: Ints) -> Iterator[tuple[Ints, Ints]]:
        """:meth:`stab` in parts of about CHUNK candidates, queries in order: a caller that
        keeps a few of the pairs holds one part at a time, never all (on a 5M-fix city's
        MOB release, all the pairs of the full matches took over 17 GB)."""
        t, x, y = _ints(t), _ints(x), _ints(y)
        for start, stop in _chunks(self.counts(t, x, y)):
            found_q, found_r = self._stab_chunk(t[start:stop], x[start:stop], y[start:stop])
            yield start + found_q, found_r

    def _stab_chunk(self, t: Ints, x: Ints, y: Ints) -> tuple[Ints, Ints]:
        queries: list[Ints] = []
        rows: list[Ints] = []
        for size_class in self.classes:
            for asked, lo, hi in size_class.bucket_ranges(t, x, y):
                which, at = _ranges(lo, hi - lo)
                owner, candidate = asked[which], size_class.rows[at]
                inside = self.regions.contains(candidate, x[owner], y[owner])
                queries.append(owner[inside])
                rows.append(candidate[inside])
        return _joined(queries), _joined(rows)


def _joined(parts: list[Ints]) -> Ints:
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def _bit_length(values: Ints) -> Ints:
    """Bits of each non-negative integer (0 -> 0, 1 -> 1, 2..3 -> 2, 4..7 -> 3, ...)."""
    return np.frexp(values.astype(np.float64))[1].astype(np.int64)


def _cheapest(owner: Ints, cost: Ints) -> Ints:
    """Index of the lowest-cost entry of each owner (entries grouped by owner)."""
    order = np.lexsort((cost, owner))
    first = np.r_[True, owner[order][1:] != owner[order][:-1]]
    return order[first]


def _seeds(cells: Cells, index: RegionIndex,
           samples: int | None = SEED_SAMPLES) -> tuple[Ints, Ints, Ints]:
    """Each present person's most selective row (the row whose cell the fewest regions
    may hold) of up to ``samples`` evenly spaced ones (None: of all its rows), and every
    person's first row and number of rows."""
    p_start, p_len = _spans(cells.person, cells.n_persons)
    if samples is None:
        rows = np.arange(len(cells.person), dtype=np.int64)
    else:
        present = np.flatnonzero(p_len > 0)
        offsets = np.outer(p_len[present], np.arange(samples)) // samples
        rows = _unique((p_start[present, None] + offsets).ravel())
    cost = index.counts(cells.t[rows], cells.x[rows], cells.y[rows])
    return rows[_cheapest(cells.person[rows], cost)], p_start, p_len


def covering_edges(cells: Cells, regions: Regions, index: RegionIndex) -> tuple[Ints, Ints]:
    """Pairs (person, object) with the object's region containing the person's cell at
    every time point the person has a position: the object may be that person's
    counterpart when presence is hidden (every object has a region at every time point,
    so being present says nothing).

    Candidates come from one stab per person at its most selective row (of all its rows:
    a withheld region holds every cell, so some time points are much less selective than
    others), then the person's rows are looked up one after the other in the candidates'
    regions, each dropping the candidates that fail it.

    References
    ----------
    Yarovoy et al. 2009, §3: a distorted version "never lies".
    """
    seeds, p_start, p_len = _seeds(cells, index, samples=None)
    return _seed_pairs(cells, regions, index, seeds, lambda person, obj: _holds_everywhere(
        cells, regions, p_start[person], p_len[person], obj))


def _holds_everywhere(cells: Cells, regions: Regions, first: Ints, length: Ints,
                      obj: Ints) -> Bools:
    """For each candidate: the object's region contains the person's cell at each of the
    rows first .. first + length - 1 (checked row by row, survivors only)."""
    ok = np.ones(len(length), dtype=bool)
    alive = np.arange(len(length), dtype=np.int64)
    for j in range(int(length.max()) if len(length) else 0):
        alive = alive[length[alive] > j]
        if not alive.size:
            break
        at = first[alive] + j
        good = regions.contains(regions.row_of(obj[alive], cells.t[at]), cells.x[at],
                                cells.y[at])
        ok[alive[~good]] = False
        alive = alive[good]
    return ok


def full_match_edges(cells: Cells, regions: Regions, index: RegionIndex) -> tuple[Ints, Ints]:
    """Pairs (person, object) with the object present exactly when the person is, and
    containing the person's cell every time: the object may be that person's counterpart.

    Candidates come from one stab per person, at the most selective of up to
    SEED_SAMPLES of its time points; each is then compared row by row (same presence
    means the two sorted row ranges align).

    References
    ----------
    Yarovoy et al. 2009, §3: a distorted version "never lies": D(O, t) is contained in
    D*(O, t) at every time.
    """
    seeds, p_start, p_len = _seeds(cells, index)
    o_start, o_len = _spans(regions.obj, regions.n_objects)

    def full_match(person: Ints, obj: Ints) -> Bools:
        ok = p_len[person] == o_len[obj]
        ok[ok] = _aligned_match(cells, regions, p_start[person[ok]], o_start[obj[ok]],
                                p_len[person[ok]])
        return ok
    return _seed_pairs(cells, regions, index, seeds, full_match)


def _aligned_match(cells: Cells, regions: Regions, p_first: Ints, o_first: Ints,
                   length: Ints) -> Bools:
    """For each pair of equally long row ranges: same time points, cell inside region."""
    ok = np.ones(len(length), dtype=bool)
    for start, stop in _chunks(length):
        pair, p_row = _ranges(p_first[start:stop], length[start:stop])
        o_row = o_first[start:stop][pair] + (p_row - p_first[start:stop][pair])
        good = (cells.t[p_row] == regions.t[o_row]) & regions.contains(
            o_row, cells.x[p_row], cells.y[p_row])
        ok[start:stop] = np.bincount(pair[~good], minlength=stop - start) == 0
    return ok


def attack_edges(cells: Cells, qid_person: object, qid_t: object, regions: Regions,
                 index: RegionIndex) -> tuple[Ints, Ints, Bools]:
    """The edges of Definition 1: (I, O) iff O's region contains I's cell at every time
    point of QID(I) (and O is present then).

    QID time points at which the person has no position are dropped (they cannot link).
    Persons left with no QID point are returned as unobserved: they are adjacent to every
    object, which the caller marks as universal instead of listing n edges.

    Returns
    -------
    person, obj : ndarray of int64
        Explicit edges of the observed persons.
    observed : ndarray of bool
        Per person (0 .. cells.n_persons - 1): has at least one linkable QID time point.

    References
    ----------
    Yarovoy et al. 2009, Definition 1.
    """
    qp, qt = _ints(qid_person), _ints(qid_t)
    at = cells.row_of(qp, qt)
    keep = _unique(at[at >= 0])  # one row per (person, t), sorted by person
    observed = np.zeros(cells.n_persons, dtype=bool)
    observed[cells.person[keep]] = True
    if len(keep) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), observed
    cost = index.counts(cells.t[keep], cells.x[keep], cells.y[keep])
    seeds = keep[_cheapest(cells.person[keep], cost)]
    q_start, q_len = _spans(cells.person[keep], cells.n_persons)
    person, obj = _seed_pairs(cells, regions, index, seeds, lambda person, obj: _holds_at_qids(
        cells, regions, keep, q_start[person], q_len[person], obj))
    return person, obj, observed


def _seed_pairs(cells: Cells, regions: Regions, index: RegionIndex, seeds: Ints,
                holds: Callable[[Ints, Ints], Bools]) -> tuple[Ints, Ints]:
    """The (person, object) pairs whose region holds the cell of a person's ``seeds`` row
    and that ``holds`` accepts, kept one stab chunk at a time (:meth:`RegionIndex.stab_chunks`)."""
    persons: list[Ints] = []
    objects: list[Ints] = []
    for query, row in index.stab_chunks(cells.t[seeds], cells.x[seeds], cells.y[seeds]):
        person, obj = cells.person[seeds][query], regions.obj[row]
        ok = holds(person, obj)
        persons.append(person[ok])
        objects.append(obj[ok])
    return _joined(persons), _joined(objects)


def _holds_at_qids(cells: Cells, regions: Regions, qid_rows: Ints, first: Ints,
                   length: Ints, obj: Ints) -> Bools:
    """For each candidate: the object's region contains the cell at every QID row."""
    ok = np.ones(len(length), dtype=bool)
    for start, stop in _chunks(length):
        pair, at = _ranges(first[start:stop], length[start:stop])
        cell = qid_rows[at]
        row = regions.row_of(obj[start:stop][pair], cells.t[cell])
        good = regions.contains(row, cells.x[cell], cells.y[cell])
        ok[start:stop] = np.bincount(pair[~good], minlength=stop - start) == 0
    return ok
