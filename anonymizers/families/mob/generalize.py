"""Generalize and GenEquivClass (seed 003, Algorithms 4-5): one region per object and time point.

At each time point t, every MOB set S(O) with t in T(O) must share one region, and sets that
overlap must merge (Example 3: O1, O2 and O3 end up together at t2): the equivalence classes
at t are the connected components of the sets active at t (Definition 4; Example 5 and
Figure 6 take the whole of S(O), which is what we do). Each class is published as its least
upper bound: the smallest axis-parallel rectangle of whole cells holding its members' cells
at t. An object in no class at t keeps its own cell (a lattice cell: privacy rule 2).

The union-find runs on numpy arrays, all unions of a time point at once, in rounds: find the
roots of both ends of every pending union (full path compression by pointer jumping); each
root that still has a union to do is hung under the root of larger (size, index) among its
partners (union by size; hanging only ever goes up that order, so no cycle can form); repeat
until every union joins one root.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from anonymizers.errors import InputError
from anonymizers.families.mob.anonymity import MobSets
from anonymizers.families.mob.moving_objects import MovingObjects

__all__ = ["Generalization", "equivalence_classes", "generalize"]


@dataclass(frozen=True, eq=False)
class Generalization:
    """The region of every published object at every time point it has a position.

    Attributes
    ----------
    obj, t
        int32 object and time-point index of each row; rows sorted by (obj, t).
    cls
        int32 equivalence class of the row (unique over all time points), -1 where the
        object is in no class at t and keeps its own cell.
    x0, y0, x1, y1
        int32 inclusive cell ranges of the region: the class's least upper bound, or the
        object's own cell (x0 = x1, y0 = y1).
    n_classes
        Number of (time point, class) pairs.

    References
    ----------
    .. [1] Yarovoy, Bonchi, Lakshmanan, Wang. Anonymizing Moving Objects: How to Hide a MOB
       in a Crowd? EDBT 2009, §5.2, Algorithm 4.
    """

    obj: np.ndarray
    t: np.ndarray
    cls: np.ndarray
    x0: np.ndarray
    y0: np.ndarray
    x1: np.ndarray
    y1: np.ndarray
    n_classes: int

    def as_rows(self) -> np.ndarray:
        """(rows, 7) int64: object, time point, class (-1: none), x0, y0, x1, y1."""
        return np.column_stack([self.obj, self.t, self.cls, self.x0, self.y0, self.x1,
                                self.y1]).astype(np.int64)

    def columns(self) -> dict[str, np.ndarray]:
        """The rows by column of ``mob_regions`` (class_id -1: none, the object's own cell)."""
        return {"object_index": self.obj, "t_index": self.t, "class_id": self.cls,
                "x0": self.x0, "y0": self.y0, "x1": self.x1, "y1": self.y1}

    def class_sizes(self) -> np.ndarray:
        """Number of members of each class, by class id."""
        return np.bincount(self.cls[self.cls >= 0], minlength=self.n_classes)


def generalize(objects: MovingObjects, sets: MobSets) -> Generalization:
    """Regions of every published (object, time point) from MOB sets (Algorithm 4).

    Parameters
    ----------
    objects
        The moving objects.
    sets
        MOB sets and time sets (:func:`~anonymizers.families.mob.anonymity.extreme_union`
        or :func:`~anonymizers.families.mob.anonymity.symmetric_anonymization`).

    Returns
    -------
    Generalization
        One row per present, unsuppressed (object, time point).

    Raises
    ------
    InputError
        If the sets do not fit the objects: a suppressed object in a set, or a member of
        S(O) without a position at a time point of T(O).

    References
    ----------
    .. [1] Yarovoy, Bonchi, Lakshmanan, Wang. Anonymizing Moving Objects: How to Hide a MOB
       in a Crowd? EDBT 2009, §5.2, Algorithms 4-5, Example 5, Figure 6.
    """
    _check_sets(objects, sets)
    regions = _Regions(objects)
    for t, (first, member) in enumerate(_unions_by_time(sets, objects.n_times)):
        if not (objects.present[member, t].all() and objects.present[first, t].all()):
            raise InputError(f"a member of a MOB set has no position at time point {t} "
                             "of the set's time set")
        regions.add_classes(t, *equivalence_classes(objects.n_objects, first, member))
    return regions.published(sets.suppressed)


class _Regions:
    """Dense (objects x time points) class ids and rectangles, filled one time point at a time.

    Every cell starts as its own region (class -1); :meth:`add_classes` overwrites the
    members of the classes of one time point with their least upper bound.
    """

    def __init__(self, objects: MovingObjects) -> None:
        self.objects = objects
        self.cls = np.full(objects.cx.shape, -1, dtype=np.int32)
        self.x0, self.y0 = objects.cx.copy(), objects.cy.copy()
        self.x1, self.y1 = objects.cx.copy(), objects.cy.copy()
        self.n_classes = 0

    def add_classes(self, t: int, nodes: np.ndarray, label: np.ndarray) -> None:
        """Classes ``label`` (0 ..) of the objects ``nodes`` at time point ``t``."""
        x, y = self.objects.cx[nodes, t], self.objects.cy[nodes, t]
        n_here = int(label.max()) + 1 if label.size else 0
        self.cls[nodes, t] = self.n_classes + label
        self.x0[nodes, t] = _reduce(np.minimum, x, label, n_here)[label]
        self.y0[nodes, t] = _reduce(np.minimum, y, label, n_here)[label]
        self.x1[nodes, t] = _reduce(np.maximum, x, label, n_here)[label]
        self.y1[nodes, t] = _reduce(np.maximum, y, label, n_here)[label]
        self.n_classes += n_here

    def published(self, suppressed: np.ndarray) -> Generalization:
        """The rows of every present, unsuppressed (object, time point)."""
        keep = self.objects.present & ~suppressed[:, None]
        obj, t = np.nonzero(keep)
        return Generalization(obj.astype(np.int32), t.astype(np.int32), self.cls[keep],
                              self.x0[keep], self.y0[keep], self.x1[keep], self.y1[keep],
                              self.n_classes)


def equivalence_classes(n: int, first: np.ndarray,
                        member: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Connected components of the unions (first[i], member[i]) (Algorithm 5, one time point).

    Parameters
    ----------
    n
        Number of objects (indices are 0 .. n - 1).
    first, member
        Equal-length int arrays: each pair must end in one class.

    Returns
    -------
    nodes, label : numpy.ndarray
        The objects in some pair, ascending, and the class of each (0 .. classes - 1,
        numbered in order of each class's smallest object).

    References
    ----------
    .. [1] Yarovoy et al., EDBT 2009, §5.2, Algorithm 5 (GenEquivClass).
    .. [2] Galil, Italiano. Data structures and algorithms for disjoint set union problems.
       ACM Computing Surveys 23(3), 1991.
    """
    nodes, local = _compact(n, np.concatenate([first, member]))
    parent = _union_find(nodes.size, local[:first.size], local[first.size:])
    is_root = parent == np.arange(nodes.size)
    numbering = np.cumsum(is_root) - 1
    # numbering by root would follow the root's index; renumber by smallest member instead
    label = numbering[parent]
    order = np.full(int(is_root.sum()), nodes.size, dtype=np.int64)
    np.minimum.at(order, label, np.arange(nodes.size))
    rank = np.empty_like(order)
    rank[np.argsort(order)] = np.arange(order.size)
    return nodes, rank[label]


def _union_find(size: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Roots after every union (a[i], b[i]) on ``size`` nodes: union by size, path compression."""
    parent = np.arange(size, dtype=np.int64)
    weight = np.ones(size, dtype=np.int64)
    while a.size:
        _compress(parent)
        ra, rb = parent[a], parent[b]
        pending = ra != rb
        a, b = np.compress(pending, a), np.compress(pending, b)
        ra, rb = np.compress(pending, ra), np.compress(pending, rb)
        if not a.size:
            break
        key_a, key_b = weight[ra] * size + ra, weight[rb] * size + rb
        low = np.where(key_a < key_b, ra, rb)
        target = np.full(size, -1, dtype=np.int64)
        np.maximum.at(target, low, np.maximum(key_a, key_b))  # the largest partner wins
        hung = np.flatnonzero(target >= 0)
        parent[hung] = target[hung] % size
        _compress(parent)
        weight = np.bincount(parent, minlength=size)  # component sizes, at the roots
    _compress(parent)
    return parent


def _compress(parent: np.ndarray) -> None:
    """Point every node at its root (pointer jumping: path lengths halve each pass)."""
    while True:
        grand = parent[parent]
        if np.array_equal(grand, parent):
            return
        parent[:] = grand


def _compact(n: int, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct ``values`` ascending, and each value's index among them."""
    mark = np.zeros(n, dtype=bool)
    mark[values] = True
    nodes = np.flatnonzero(mark)
    index = np.zeros(n, dtype=np.int64)
    index[nodes] = np.arange(nodes.size)
    return nodes, index[values]


def _reduce(ufunc: np.ufunc, values: np.ndarray, label: np.ndarray, n_labels: int) -> np.ndarray:
    """``ufunc`` (minimum / maximum) of ``values`` per label (every label has a value)."""
    info = np.iinfo(values.dtype)
    out = np.full(n_labels, info.max if ufunc is np.minimum else info.min, dtype=values.dtype)
    ufunc.at(out, label, values)
    return out


def _unions_by_time(sets: MobSets, n_times: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """For each time point t, the pairs (first member, member) of every S(O) with t in T(O)."""
    n = sets.n_objects
    owners = np.repeat(np.arange(n), np.diff(sets.time_indptr))
    order = np.argsort(sets.times, kind="stable")
    owners = owners[order]
    bounds = np.zeros(n_times + 1, dtype=np.int64)
    np.cumsum(np.bincount(sets.times, minlength=n_times), out=bounds[1:])
    sizes = np.diff(sets.set_indptr)
    for t in range(n_times):
        active = owners[bounds[t]:bounds[t + 1]]
        active = active[sizes[active] > 0]
        starts, lengths = sets.set_indptr[active], sizes[active]
        offset = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
        member = sets.set_members[offset + np.arange(int(lengths.sum()))]
        yield np.repeat(sets.set_members[starts], lengths), member


def _check_sets(objects: MovingObjects, sets: MobSets) -> None:
    if sets.n_objects != objects.n_objects:
        raise InputError(f"MOB sets of {sets.n_objects} objects for {objects.n_objects}")
    if sets.times.size and sets.times.max() >= objects.n_times:
        raise InputError("a time set holds a time point beyond the objects' time points")
    if sets.suppressed[sets.set_members].any():
        raise InputError("a suppressed object is a member of a MOB set")
