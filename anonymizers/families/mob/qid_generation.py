"""Synthetic quasi-identifiers in the configurations of Yarovoy et al. (2009), §6.2.

A QID is a set of time points per moving object (§3). The paper measures its algorithms on
generated QIDs of several shapes (random, disjoint, one chain, several chains, a random
graph) and leaves the exact recipes out; the ones below are ours, written down in
:func:`generate_qids`. Everything is numpy over the presence matrix (or its list of
present cells); the only Python loops run once per chain link or chain head.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from anonymizers.errors import InputError

__all__ = ["DEFAULT_CHAIN_LENGTH", "DEFAULT_MEAN_DEGREE", "STRATEGIES", "GraphQids",
           "check_parameters", "generate_qids", "graph_qids"]

STRATEGIES = ("random", "disjoint", "chain", "chains", "graph")
DEFAULT_CHAIN_LENGTH = 8  # `chains`: each chain has 2..this many QIDs
DEFAULT_MEAN_DEGREE = 2.0  # `graph`: edges drawn per person, on average, before capping

Qids = tuple[np.ndarray, np.ndarray]  # (object index, time index), sorted by object, time


def generate_qids(presence: np.ndarray, strategy: str, max_size: int, seed: int, *,
                  chain_length: int = DEFAULT_CHAIN_LENGTH,
                  mean_degree: float = DEFAULT_MEAN_DEGREE) -> Qids:
    """QIDs of one configuration: which time points of which object an attacker knows.

    Every generated time point is one at which the object is present, no QID has more
    than ``max_size`` time points, and the result depends on nothing but the arguments.
    Each object draws a target size uniformly in 1..``max_size``, capped by the number
    of time points at which it is present. The configurations, as the QID *overlap graph*
    (one node per object with a QID, an edge where two QIDs share a time point):

    ``random``
        Every present object gets a uniform random subset of its present time points of
        its target size. Overlaps happen as they fall.
    ``disjoint``
        No time point is in two QIDs (the overlap graph has no edge). Time points are
        dealt in rounds: each free time point goes to one of the objects present at it
        that still want time points, uniformly at random, and an object keeps a random
        subset of what it was dealt, up to its target. Objects can end with fewer time
        points than their target, or none (then no QID): there are only so many time
        points, and with more objects than time points some must go without.
    ``chain``
        The overlap graph is one path: consecutive QIDs share exactly one time point
        (their link), no other two QIDs share any. Built by a greedy random walk from a
        random object, in both directions: from the current object, a random free time
        point at which it and some object not yet in the chain are present, then a random
        such object. The walk stops where no link is left, so the chain holds the objects
        it reached, not necessarily all (each link uses up a time point); the others have
        no QID. Each link is in both QIDs; the rest of a QID (up to its target, at least
        its links) is dealt from free time points as in ``disjoint``. With ``max_size``
        1 an object has room for one link only: the chain is at most two objects.
    ``chains``
        Several such paths, with no time point shared between two of them (the overlap
        graph is a disjoint union of paths of 2..``chain_length`` QIDs). Heads are taken
        in a random order; each walks forward for a length drawn uniformly in
        2..``chain_length`` or until stuck; an object with no possible link never heads
        a chain, and objects no walk reached have no QID.
    ``graph``
        A random graph G over the present objects, and QIDs such that two objects
        adjacent in G share at least one time point. Non-adjacent objects may share time
        points as well (the overlap graph contains G, it need not equal it): see
        :func:`graph_qids`, which also returns G.

    Parameters
    ----------
    presence
        Boolean matrix, objects x time points: where each object has a position.
    strategy
        One of :data:`STRATEGIES`.
    max_size
        Largest number of time points in a QID (at least 1).
    seed
        Seed of the random generator (numpy's PCG64).
    chain_length
        ``chains`` only: the longest chain, at least 2.
    mean_degree
        ``graph`` only: edges drawn per object, on average (before the cap: no object is
        in more edges than its target size).

    Returns
    -------
    objects, times
        Integer arrays of equal length: object index and time index of each QID time
        point, sorted by object then time.

    References
    ----------
    Yarovoy, Bonchi, Lakshmanan, Wang. Anonymizing Moving Objects: How to Hide a MOB in a
    Crowd? EDBT 2009. §3 (QID as a function from objects to sets of time points), §6.2
    (QID configurations: random, disjoint, single chain, multiple chains, random graph).

    Examples
    --------
    >>> presence = np.ones((3, 4), dtype=bool)
    >>> objects, times = generate_qids(presence, "disjoint", 2, seed=1)
    >>> len(set(times.tolist())) == len(times)
    True
    """
    presence = _checked(presence, strategy, max_size, chain_length)
    rng = np.random.default_rng(seed)
    sizes = _target_sizes(presence, max_size, rng)
    if strategy == "random":
        return _random(presence, sizes, rng)
    if strategy == "disjoint":
        return _deal_exclusive(presence, sizes, np.ones(presence.shape[1], bool), rng)
    if strategy == "graph":
        objects, times, _ = _graph(presence, sizes, mean_degree, rng)
        return objects, times
    return _chains(presence, sizes, max_size, strategy, chain_length, rng)


@dataclass
class GraphQids:
    """QIDs of the ``graph`` configuration and the random graph they realise."""

    objects: np.ndarray
    times: np.ndarray
    edges: np.ndarray = field(repr=False)  # (n_edges, 2) object indices, smaller first
    edge_times: np.ndarray = field(repr=False)  # the time point each edge shares


def graph_qids(presence: np.ndarray, max_size: int, seed: int,
               mean_degree: float = DEFAULT_MEAN_DEGREE) -> GraphQids:
    """The ``graph`` configuration of :func:`generate_qids`, with its graph.

    The random graph G is drawn over co-presence: about ``n * mean_degree / 2`` times, a
    present (object, time point) cell is drawn uniformly among those whose time point has
    another object present, and joined to one of those other objects, uniformly; the edge
    is labelled with that time point. Repeated pairs count once (the first draw's label).
    Taken in the order drawn, an edge is kept if it is among the first s edges of both
    its ends, s the end's target size (so no QID outgrows its size; a dropped edge still
    counts towards that limit, which keeps this vectorised). Each object's QID is the
    labels of its kept edges plus a uniform random choice of its other present time
    points up to its target size. So adjacent objects share at least their edge's time
    point; non-adjacent ones share time points when their random choices or labels
    coincide. Objects with no edge have a random QID, as in ``random``.

    Returns
    -------
    GraphQids
        The QIDs (as :func:`generate_qids` returns them, identical for the same
        arguments) and G's edges with their time points.

    References
    ----------
    Yarovoy et al., EDBT 2009, §6.2 ("QIDs formed following a random graph approach").
    """
    presence = _checked(presence, "graph", max_size, DEFAULT_CHAIN_LENGTH)
    rng = np.random.default_rng(seed)
    sizes = _target_sizes(presence, max_size, rng)
    objects, times, (edges, edge_times) = _graph(presence, sizes, mean_degree, rng)
    return GraphQids(objects, times, edges, edge_times)


def check_parameters(strategy: str, max_size: int,
                     chain_length: int = DEFAULT_CHAIN_LENGTH) -> None:
    """An InputError unless :func:`generate_qids` accepts these parameters."""
    if strategy not in STRATEGIES:
        raise InputError(f"unknown QID strategy {strategy!r}; use one of "
                         f"{', '.join(STRATEGIES)}.")
    if max_size < 1:
        raise InputError(f"max_size must be at least 1 (got {max_size}).")
    if chain_length < 2:
        raise InputError(f"chain_length must be at least 2 (got {chain_length}).")


def _checked(presence: np.ndarray, strategy: str, max_size: int,
             chain_length: int) -> np.ndarray:
    check_parameters(strategy, max_size, chain_length)
    matrix = np.asarray(presence, dtype=bool)
    if matrix.ndim != 2:
        raise InputError(f"presence must be a matrix objects x time points, got shape "
                         f"{matrix.shape}.")
    return matrix


def _target_sizes(presence: np.ndarray, max_size: int, rng: np.random.Generator) -> np.ndarray:
    """Uniform in 1..max_size per object, capped by its present time points (0 if none)."""
    drawn = rng.integers(1, max_size + 1, size=presence.shape[0])
    return np.minimum(drawn, presence.sum(axis=1))


def _sample_per_group(groups: np.ndarray, quota: np.ndarray,
                      rng: np.random.Generator) -> np.ndarray:
    """Mask of a uniform random choice of min(quota[g], size of g) members of each group g."""
    order = np.lexsort((rng.random(len(groups)), groups))
    ordered = groups[order]
    rank = np.arange(len(groups)) - np.searchsorted(ordered, ordered, side="left")
    chosen = np.zeros(len(groups), dtype=bool)
    chosen[order] = rank < quota[ordered]
    return chosen


def _random(presence: np.ndarray, sizes: np.ndarray, rng: np.random.Generator) -> Qids:
    objects, times = np.nonzero(presence)
    keep = _sample_per_group(objects, sizes, rng)
    return objects[keep], times[keep]


def _deal_exclusive(presence: np.ndarray, need: np.ndarray, free: np.ndarray,
                    rng: np.random.Generator) -> Qids:
    """Free time points, each to at most one object, up to ``need`` per object."""
    objects, times = np.nonzero(presence)
    n_objects, n_times = presence.shape
    need, free = need.copy(), free.copy()
    taken = np.zeros(len(objects), dtype=bool)
    one_each = np.ones(n_times, dtype=np.int64)
    while True:
        open_cells = np.flatnonzero(~taken & free[times] & (need[objects] > 0))
        if not len(open_cells):
            break
        dealt = open_cells[_sample_per_group(times[open_cells], one_each, rng)]
        # Every object dealt something keeps at least one, so each round makes progress.
        kept = dealt[_sample_per_group(objects[dealt], need, rng)]
        taken[kept] = True
        need -= np.bincount(objects[kept], minlength=n_objects)
        free[times[kept]] = False
    return objects[taken], times[taken]


@dataclass
class _Walker:
    """Greedy random walks that link objects into paths by time points used only once."""

    presence: np.ndarray
    rng: np.random.Generator
    free: np.ndarray = field(init=False)  # time points in no QID yet
    unassigned: np.ndarray = field(init=False)  # objects in no chain yet
    waiting: np.ndarray = field(init=False)  # per time point: unassigned objects present

    def __post_init__(self) -> None:
        self.free = np.asarray(self.presence.any(axis=0))
        self.unassigned = np.ones(self.presence.shape[0], dtype=bool)
        self.waiting = self.presence.sum(axis=0)

    def assign(self, obj: int) -> None:
        self.unassigned[obj] = False
        self.waiting -= self.presence[obj]

    def can_link(self, obj: int) -> bool:
        """Whether ``obj`` (not assigned yet) shares a free time point with another."""
        others = self.waiting - self.presence[obj]
        return bool((self.presence[obj] & self.free & (others > 0)).any())

    def link(self, obj: int) -> tuple[int, int] | None:
        """(time point, next object) from an assigned ``obj``, both random, or None."""
        candidates = np.flatnonzero(self.presence[obj] & self.free & (self.waiting > 0))
        if not len(candidates):
            return None
        time = int(self.rng.choice(candidates))
        following = int(self.rng.choice(np.flatnonzero(self.presence[:, time] & self.unassigned)))
        self.free[time] = False
        self.assign(following)
        return time, following

    def walk(self, start: int, links: int) -> tuple[list[int], list[int]]:
        """Objects and link times of a path from ``start`` (assigned) of up to ``links``."""
        path: list[int] = [start]
        times: list[int] = []
        while len(times) < links and (step := self.link(path[-1])) is not None:
            times.append(step[0])
            path.append(step[1])
        return path, times


def _chains(presence: np.ndarray, sizes: np.ndarray, max_size: int, strategy: str,
            chain_length: int, rng: np.random.Generator) -> Qids:
    """``chain`` and ``chains``: the paths' links, then fillers from free time points."""
    walker = _Walker(presence, rng)
    links: list[tuple[int, int]] = []  # (object, time point), each link twice
    for head in rng.permutation(presence.shape[0]).tolist():
        if not walker.unassigned[head] or not walker.can_link(head):
            continue
        walker.assign(head)
        if strategy == "chain":
            path, times = _both_ways(walker, head, max_size)
        else:
            length = int(rng.integers(2, chain_length + 1))
            # An object inside a path needs two time points: max_size 1 allows pairs only.
            path, times = walker.walk(head, length - 1 if max_size >= 2 else 1)
        links += [(obj, time) for i, time in enumerate(times) for obj in path[i:i + 2]]
        if strategy == "chain":
            break  # one chain: the first head that can link
    return _with_fillers(presence, sizes, links, walker.free, rng)


def _both_ways(walker: _Walker, head: int, max_size: int) -> tuple[list[int], list[int]]:
    """A greedy path through ``head``: walked forward, then backward from it."""
    unlimited = walker.presence.shape[0]
    path, times = walker.walk(head, unlimited if max_size >= 2 else 1)
    if max_size < 2:
        return path, times
    back, back_times = walker.walk(head, unlimited)
    return back[:0:-1] + path, back_times[::-1] + times


def _with_fillers(presence: np.ndarray, sizes: np.ndarray, links: list[tuple[int, int]],
                  free: np.ndarray, rng: np.random.Generator) -> Qids:
    """Each linked object's links plus free time points dealt exclusively, up to its size."""
    linked = np.array(links, dtype=np.int64).reshape(-1, 2)
    n_links = np.bincount(linked[:, 0], minlength=presence.shape[0])
    need = np.where(n_links > 0, np.maximum(sizes - n_links, 0), 0)
    extra_objects, extra_times = _deal_exclusive(presence, need, free, rng)
    return _sorted(np.r_[linked[:, 0], extra_objects], np.r_[linked[:, 1], extra_times])


def _sorted(objects: np.ndarray, times: np.ndarray) -> Qids:
    """Distinct (object, time) pairs, sorted by object then time."""
    pairs = np.unique(np.stack([objects, times], axis=1).astype(np.int64), axis=0)
    return pairs[:, 0], pairs[:, 1]


def _graph(presence: np.ndarray, sizes: np.ndarray, mean_degree: float,
           rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray,
                                              tuple[np.ndarray, np.ndarray]]:
    """QIDs of ``graph`` and the kept edges with their time points."""
    edges, edge_times = _draw_edges(presence, mean_degree, rng)
    keep = _within_sizes(edges, sizes, presence.shape[0])
    edges, edge_times = edges[keep], edge_times[keep]
    linked_objects = np.r_[edges[:, 0], edges[:, 1]]
    linked_times = np.r_[edge_times, edge_times]
    objects, times = np.nonzero(presence)
    is_link = np.zeros(presence.shape, dtype=bool)
    is_link[linked_objects, linked_times] = True
    others = ~is_link[objects, times]
    need = np.maximum(sizes - is_link.sum(axis=1), 0)
    fill = np.flatnonzero(others)[_sample_per_group(objects[others], need, rng)]
    qid_objects, qid_times = _sorted(np.r_[linked_objects, objects[fill]],
                                     np.r_[linked_times, times[fill]])
    order = np.lexsort((edges[:, 1], edges[:, 0]))
    return qid_objects, qid_times, (edges[order], edge_times[order])


def _draw_edges(presence: np.ndarray, mean_degree: float,
                rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Random co-present pairs (smaller object first) with their time point, first draws."""
    times, objects = np.nonzero(presence.T)  # cells by time point, then object
    per_time = np.bincount(times, minlength=presence.shape[1])
    start = np.r_[0, np.cumsum(per_time)[:-1]]
    shared = np.flatnonzero(per_time[times] >= 2)
    n_present = int(presence.any(axis=1).sum())
    n_draws = round(n_present * mean_degree / 2)
    if not len(shared) or n_draws <= 0:
        return np.empty((0, 2), dtype=np.int64), np.empty(0, dtype=np.int64)
    cell = rng.choice(shared, size=n_draws)
    time = times[cell]
    own = cell - start[time]  # the drawn object's place among those present then
    other = rng.integers(0, per_time[time] - 1)
    other += other >= own  # any place but its own
    pairs = np.sort(np.stack([objects[cell], objects[start[time] + other]], axis=1), axis=1)
    _, first = np.unique(pairs[:, 0] * presence.shape[0] + pairs[:, 1], return_index=True)
    first.sort()  # keep the order of drawing
    return pairs[first].astype(np.int64), time[first].astype(np.int64)


def _within_sizes(edges: np.ndarray, sizes: np.ndarray, n_objects: int) -> np.ndarray:
    """Mask of the edges that are among the first sizes[v] edges of both ends v."""
    ends = np.r_[edges[:, 0], edges[:, 1]]
    edge_of = np.r_[np.arange(len(edges)), np.arange(len(edges))]
    order = np.lexsort((edge_of, ends))
    ordered = ends[order]
    rank = np.empty(len(ends), dtype=np.int64)
    rank[order] = np.arange(len(ends)) - np.searchsorted(ordered, ordered, side="left")
    fits = rank < sizes[ends]
    return fits[:len(edges)] & fits[len(edges):]
