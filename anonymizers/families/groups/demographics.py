"""Demographic classes (Nordström 2012, Part II): k-anonymous boxes of one group's demographics.

The thesis' demographic data anonymizer, as pure numpy (no database, no Airflow). Its input is
the demographic attributes of the individuals of *one* trajectory group (§4, prerequisites of
part II); its output is equivalence classes, axis-parallel boxes of atomic intervals, each with
the number of individuals it holds:

* :func:`genetic_demographic_classes` is §4.4.4: a genetic algorithm over binary space
  partitions of the domain (the chromosomes), with the four mutations (split, merge, move
  split, branch swap), the subtree crossover, the recursive initial chromosomes, elitism, and
  the Kullback penalty (§4.4.3, Algorithm 6, eq. 30) as the fitness to minimise.
* :func:`mondrian_demographic_classes` is the baseline of §5.2: strict Mondrian (LeFevre et
  al. 2006) with the thesis' modification: points of one atomic interval are never separated,
  and an attribute whose median cut leaves fewer than ``k`` on a side is skipped for the next.
* :func:`hide_boundaries` is §4.4.5, applied to the classes of either anonymizer before they
  are published.
* :func:`kullback_penalty` (Algorithm 6 on the leaves of a partition),
  :func:`classes_kullback_penalty` and :func:`discernability_metric` (eq. 32) are the thesis'
  two measures of information loss (§5.2, Figures 18-19), for both anonymizers.

Input
-----
``points`` is an ``(n, d)`` numeric array, one row per individual, one column per attribute;
categorical attributes are integer codes in an order the caller chooses (§5.2 places all
values "in a continuous ordering"). The public :class:`AtomicGrid` (:func:`atomic_grid`)
gives every attribute's domain ``[lower, upper)`` and the number of atomic intervals it is cut
into (§4.4.3: "uniform interval sizes for each demographic data"; §4.4.1: e.g. five years of
age as the smallest interval). Every bound the anonymizers publish is an atomic boundary.

Decisions where the thesis is open or silent
--------------------------------------------
* *Domains are half-open*, ``[lower, upper)``, the thesis' ``[a..b)``; atomic interval ``i`` of
  attribute ``j`` is ``[e_i, e_{i+1})`` with ``e_i = lower + (upper - lower) i / bins``. For
  integers up to ``M`` pass ``upper = M + 1`` (or a round number above). A value outside its
  domain is an error, never clipped: the domain is public, the data must fit it.
* *Rows are individuals*. Classes qualify with ``k`` rows and count rows; the caller passes
  each person of the group once (§4.1 counts distinct individuals). The thesis' number
  attached to a class is its trajectories (§4.1): sum them over the private assignment.
* *Suppression* (§3.1, §4.4.3): a leaf of the partition with fewer than ``k`` individuals
  (an empty leaf too) is suppressed: not published at all ("not represented at all", §3.1),
  its individuals assigned ``-1``. Algorithm 6 charges them as one region of uniform density
  (eq. 18), so the GA's constraint is kept by the fitness, and an under-``k`` class is never
  returned. Mondrian never suppresses. Published classes then tile the domain except for the
  suppressed region, which is the complement of their union.
* *Logarithm*: natural (nats); the base only scales the penalty.
* *k = 1* is accepted although Algorithm 6 says ``k >= 2``: no point is then suppressed and
  the suppressed term is ``0 log 0 = 0``, as the thesis defines.
* *Initial chromosomes* (§4.4.4): ``population - random_trees`` by the thesis' recursive
  function (a split chosen uniformly among all splits leaving ``k`` on both sides, until
  none is left), and ``random_trees`` (default 4 of 40, "a few") "completely random valid
  trees": a number of leaves uniform in ``1 .. max(1, n // k)``, grown from the domain by
  splitting a uniformly chosen divisible leaf at a uniformly chosen split.
* *Selection* is not named by the thesis ("better chromosomes have a higher probability of
  being selected", §4.4.2): binary tournament, the lower penalty wins, ties to the first.
* *Crossover*: each pair of selected parents is crossed with probability
  ``crossover_rate`` and yields both offspring. "A cut between a random child and its
  parent": a node drawn uniformly among all non-root nodes (branches and leaves). A tree that
  is a single leaf has no such cut and the parents are copied.
* *Mutations*: "each mutation was also applied with a probability of 0.8" (§5.2) is read as
  each of the four mutations applied independently with probability ``mutation_rate`` to
  every offspring, in the order of §4.4.4 (split, merge, move split, branch swap). The elite
  is copied unmutated (§5.2).
* *Repairs* (§4.4.4): a branch whose split is no longer strictly inside its interval becomes
  a leaf. After a move split we run this check on the moved branch's subtree, which converts
  exactly the branches the thesis searches for (those with the moved split: the other side's
  intervals only grow). After a branch swap the check runs on the subtree now rooted at the
  swapped branch (its parent's interval did not change); after a crossover on the inserted
  subtree.
* *Output* of the GA: the best chromosome of the last generation, which elitism makes the
  best of all generations (§4.4.2); ties go to the first in the population.
* *Mondrian* works on atomic intervals, as the thesis' methods may not put points "on the
  same boundary in different equivalence classes" (§5.2). The attribute order is by
  normalised range: the range of the partition's atomic interval indices divided by the
  group's (LeFevre's normalisation by the data), ties to the lower attribute; an attribute
  constant in the group is never cut. The cut of an attribute is at its lower median ``m``
  (left: atomic intervals up to ``m``, LeFevre's ``<= splitVal``); if a side has fewer than
  ``k`` points the next attribute is tried, and a partition no attribute can cut is a class.
  Classes are the regions of the partition (they tile the domain), not the points' bounding
  boxes, so that the Kullback penalty compares the two anonymizers on one footing.
* *Boundary hiding* (§4.4.5) averages the ``ceil(k/2)`` lowest and highest values: ``k/2``
  rounded up, so that for ``k >= 3`` no single value sets a bound (the thesis assumes
  ``k > 2``; for ``k <= 2`` one value does, and nothing is hidden). Values are the raw ones
  (Figure 11: ages), every bound is moved, the domain's own edges too. Atomic intervals are
  half-open, so the lower bound is the start of the atomic interval holding ``a_low`` and the
  upper bound the end of the one holding ``a_high``: the hidden box holds both averages, lies
  inside the class's box and is never empty. Counts are unchanged ("we still say that the
  same number of people are in this new interval").
* *Class order*: lexicographic by lower corner (attribute 0 first), for both anonymizers.

Publishing
----------
Per class: its hidden bounds (:func:`hide_boundaries`) and its count ``n``, or the number of
its members' trajectories (§4.1), through the interval filter when §4.5 requires it (the
overlapping trajectory anonymizer, concurrent releases of several partitionings, overlapping
time windows: ``I_s = k``). Never publish the assignment, the unhidden bounds, the
suppressed region's count, or classes below ``k`` (none are returned). Hidden boxes are
disjoint but need not tile the domain and need not hold all their members. With the
overlapping anonymizer §4.5.1 further asks for ``k`` above every attribute's number of
atomic intervals; that is the caller's choice of grid, not checked here.

Cost
----
Points are reduced once to atomic intervals. Up to ``2**22`` atomic intervals the GA counts a
box's points in ``O(2^d)`` from a summed-area table of all of them, so a fitness costs
``O(nodes 2^d)`` whatever ``n``. Beyond (the eight Adults attributes of §5.2 have ~3e8) it
counts with the points: a fitness routes every point down the tree, ``O(n depth)`` in numpy,
and the recursive initial chromosome passes each box's points down to its children. Its
Python loops are over tree nodes and chromosomes, never over individuals. Mondrian loops over
partitions (each of at least ``k`` individuals) with numpy inside. Boundary hiding is a sort
per attribute.

References
----------
.. [1] Nordström, M. Methods for Anonymizing Patterns of Human Mobility. MSc thesis, Chalmers
   University of Technology, report 2012:2 (§3.1, §4 prerequisites of part II, §4.1, §4.4
   with eqs. 3-32 and Algorithm 6, §4.4.4, §4.4.5, §4.5.1-§4.5.2, §5.2).
.. [2] LeFevre, K., DeWitt, D. J., Ramakrishnan, R. Mondrian multidimensional k-anonymity.
   ICDE 2006.
.. [3] Bayardo, R. J., Agrawal, R. Data privacy through optimal k-anonymization. ICDE 2005
   (the discernability metric).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np

from anonymizers.checks import checked_k, generator
from anonymizers.errors import InputError

__all__ = [
    "AtomicGrid",
    "ClassBounds",
    "DemographicClasses",
    "GeneticClasses",
    "atomic_grid",
    "classes_kullback_penalty",
    "discernability_metric",
    "genetic_demographic_classes",
    "hide_boundaries",
    "kullback_penalty",
    "mondrian_demographic_classes",
]

_MAX_TABLE_CELLS = 2**22  # summed-area table of the GA (32 MiB of int64); above: points
_MAX_CELLS = 2**62  # class sizes must fit in int64


# --- Results --------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class AtomicGrid:
    """The atomic intervals (§4.4.3): every attribute's domain cut into equal intervals.

    Attributes
    ----------
    lower, upper
        float (d,): attribute ``j`` takes values in ``[lower[j], upper[j])``. Public.
    bins
        int (d,): number of atomic intervals of every attribute.

    References
    ----------
    .. [1] Nordström 2012, §4.4.1 (coarse smallest intervals), §4.4.3 (atomic intervals).
    """

    lower: np.ndarray
    upper: np.ndarray
    bins: np.ndarray

    @property
    def n_dims(self) -> int:
        return int(self.bins.size)

    @property
    def n_cells(self) -> int:
        """Number of atomic intervals of the whole domain, ``S(D)``."""
        return math.prod(int(b) for b in self.bins)

    def edges(self, dim: int) -> np.ndarray:
        """float (bins[dim] + 1,): the atomic boundaries of attribute ``dim``, ascending."""
        return self.values(np.arange(int(self.bins[dim]) + 1), dim)

    def values(self, index: np.ndarray, dim: int) -> np.ndarray:
        """Atomic boundaries number ``index`` of attribute ``dim``."""
        lo, hi, b = float(self.lower[dim]), float(self.upper[dim]), int(self.bins[dim])
        index = np.asarray(index)
        # The domain's upper end is published as given, not as a rounded product.
        return np.where(index == b, hi, lo + (hi - lo) * index / b)

    def cells(self, points: np.ndarray) -> np.ndarray:
        """int (n, d): the atomic interval of every value (values inside the domain)."""
        x = np.asarray(points, float)
        return np.stack([self._cells_1d(x[:, j], j) for j in range(self.n_dims)], axis=1)

    def _cells_1d(self, values: np.ndarray, dim: int) -> np.ndarray:
        # Searching the published edges makes e_i <= x < e_{i+1} exact, rounding included.
        cell = np.searchsorted(self.edges(dim), values, side="right") - 1
        return np.clip(cell, 0, int(self.bins[dim]) - 1).astype(np.int64)


@dataclass(frozen=True, eq=False)
class ClassBounds:
    """Boxes of atomic intervals, one per class: ``[lower, upper)`` per attribute.

    Attributes
    ----------
    grid
        The atomic grid the boxes are on.
    cell_lower, cell_upper
        int (C, d): the boxes as half-open ranges of atomic boundary numbers.

    References
    ----------
    .. [1] Nordström 2012, §3.1 (equivalence class), §4.4.3 (anonymized interval).
    """

    grid: AtomicGrid
    cell_lower: np.ndarray
    cell_upper: np.ndarray

    @property
    def lower(self) -> np.ndarray:
        """float (C, d): the inclusive lower bounds, in the attributes' units."""
        return self._values(self.cell_lower)

    @property
    def upper(self) -> np.ndarray:
        """float (C, d): the exclusive upper bounds, in the attributes' units."""
        return self._values(self.cell_upper)

    @property
    def size(self) -> np.ndarray:
        """int (C,): number of atomic intervals of every box, ``S(A_j)``."""
        return np.prod(self.cell_upper - self.cell_lower, axis=1, dtype=np.int64)

    def _values(self, index: np.ndarray) -> np.ndarray:
        out = np.empty(index.shape, float)
        for j in range(self.grid.n_dims):
            out[:, j] = self.grid.values(index[:, j], j)
        return out


@dataclass(frozen=True, eq=False)
class DemographicClasses:
    """Demographic equivalence classes of one trajectory group, each of at least ``k``.

    Attributes
    ----------
    bounds
        The classes' boxes: leaves of a partition of the domain, disjoint. Publish them only
        through :func:`hide_boundaries`.
    n
        int (C,): individuals in every class, at least ``k``.
    assignment
        int (N,), private: the class of every input row, ``-1`` if suppressed. Never publish.
    k
        The anonymity threshold the classes were made with.

    References
    ----------
    .. [1] Nordström 2012, §4.4.3 (anonymized intervals, suppression), §4.4.4.
    """

    bounds: ClassBounds
    n: np.ndarray
    assignment: np.ndarray
    k: int

    @property
    def n_classes(self) -> int:
        return int(self.n.size)

    @property
    def n_points(self) -> int:
        """``N(D)``: individuals given, suppressed ones included."""
        return int(self.assignment.size)

    @property
    def n_suppressed(self) -> int:
        """``N(I_suppr)``: individuals in no published class."""
        return self.n_points - int(self.n.sum())


@dataclass(frozen=True, eq=False)
class GeneticClasses:
    """Output of the genetic algorithm.

    Attributes
    ----------
    classes
        The published classes of the best chromosome (its leaves of at least ``k``).
    best_penalty
        float (generations + 1,): the lowest Kullback penalty of every generation's
        population, the initial population first. Non-increasing (elitism); the last is the
        penalty of ``classes``.

    References
    ----------
    .. [1] Nordström 2012, §4.4.2, §4.4.4, §5.2.
    """

    classes: DemographicClasses
    best_penalty: np.ndarray


# --- Validated input ------------------------------------------------------------------------

def atomic_grid(domain: np.ndarray, bins: int | np.ndarray) -> AtomicGrid:
    """The atomic intervals of a demographic domain (§4.4.3).

    Parameters
    ----------
    domain
        float (d, 2): every attribute's public ``[lower, upper)``, ``lower < upper``.
    bins
        int or int (d,): atomic intervals per attribute, at least 1 (e.g. 24 for ages
        ``[0, 120)`` in five-year steps, or the number of codes of a categorical attribute
        with domain ``[0, n_codes)``).

    Returns
    -------
    AtomicGrid

    Raises
    ------
    InputError
        On a domain that is not ``(d, 2)`` finite numbers with ``lower < upper``, or bins
        that are not positive integers (one per attribute), or edges too fine for float64.

    References
    ----------
    .. [1] Nordström 2012, §4.4.3 ("uniform interval sizes for each demographic data").

    Examples
    --------
    >>> g = atomic_grid(np.array([[0, 120], [0, 2]]), np.array([24, 2]))
    >>> g.edges(0)[:3].tolist(), g.n_cells
    ([0.0, 5.0, 10.0], 48)
    """
    dom = np.asarray(domain)
    if dom.ndim != 2 or dom.shape[1] != 2 or dom.shape[0] == 0 or not _is_real(dom):
        raise InputError("domain must be a (d, 2) array of numbers: [lower, upper) of every "
                         "attribute")
    dom = dom.astype(float)
    if not np.isfinite(dom).all() or (dom[:, 0] >= dom[:, 1]).any():
        raise InputError("every attribute's domain must be finite with lower < upper")
    b = np.asarray(bins)
    if b.dtype == bool or not np.issubdtype(b.dtype, np.integer) or b.ndim > 1:
        raise InputError("bins must be a positive integer or one per attribute")
    b = np.broadcast_to(b, (dom.shape[0],)) if b.ndim == 0 else b
    if b.size != dom.shape[0] or (b < 1).any():
        raise InputError(f"bins must be {dom.shape[0]} positive integers, one per attribute")
    grid = AtomicGrid(lower=dom[:, 0].copy(), upper=dom[:, 1].copy(), bins=b.astype(np.int64))
    if grid.n_cells > _MAX_CELLS:
        raise InputError("too many atomic intervals (over 2**62): use fewer bins")
    if any((np.diff(grid.edges(j)) <= 0).any() for j in range(grid.n_dims)):
        raise InputError("atomic intervals too narrow for float64: use fewer bins")
    return grid


def _is_real(a: np.ndarray) -> bool:
    return a.dtype != bool and (np.issubdtype(a.dtype, np.integer)
                                or np.issubdtype(a.dtype, np.floating))


def _checked_points(points: np.ndarray, grid: AtomicGrid, k: int) -> np.ndarray:
    """float (n, d) points inside the grid's domain, at least ``k`` of them."""
    x = np.asarray(points)
    if x.ndim != 2 or x.shape[1] != grid.n_dims:
        raise InputError(f"points must be an (n, {grid.n_dims}) array: one row per individual, "
                         "one column per attribute of the grid")
    if not _is_real(x):
        raise InputError("points must be numbers: encode categorical attributes as integer "
                         "codes")
    x = x.astype(float)
    if not np.isfinite(x).all():
        raise InputError("points contain NaN or infinite values: drop or impute them first")
    outside = (x < grid.lower) | (x >= grid.upper)
    if outside.any():
        j = int(np.flatnonzero(outside.any(axis=0))[0])
        raise InputError(f"attribute {j} has values outside its domain "
                         f"[{grid.lower[j]}, {grid.upper[j]}): widen the domain (the upper "
                         "bound is exclusive: for integers up to M pass M + 1)")
    if x.shape[0] < k:
        raise InputError(f"{x.shape[0]} individuals, fewer than k = {k}: the group cannot be "
                         "published; suppress it before anonymizing its demographics")
    return x


def _check_count(name: str, value: int, least: int) -> None:
    if isinstance(value, bool) or not (isinstance(value, int | np.integer) and value >= least):
        raise InputError(f"{name} must be an integer of at least {least}")


def _check_rate(name: str, value: float) -> None:
    if isinstance(value, bool) or not (isinstance(value, int | float | np.floating)
                                       and 0.0 <= value <= 1.0):
        raise InputError(f"{name} must be a probability in [0, 1]")


# --- Information loss: the Kullback penalty (§4.4.3) and the discernability metric ----------

def kullback_penalty(counts: np.ndarray, sizes: np.ndarray, k: int) -> float:
    """The Kullback penalty of the leaves of a partition (Algorithm 6, eq. 30).

    ``KP = - sum_j N(A_j) log(N(A_j) / (N(D) S(A_j)))`` over the leaves with at least ``k``
    points, plus the same term for the union of the others (the suppressed region, eq. 18).
    ``KP = N(D) (K[a_s; o_s] + H(o'_s))``: eq. 23 times ``N(D)``, the Kullback information of
    eq. 5 plus the entropy of the discretized data, a constant (eq. 21).

    Parameters
    ----------
    counts
        int (m,): points in every leaf, ``N(A_j)`` (not all zero).
    sizes
        int (m,): atomic intervals in every leaf, ``S(A_j)``, positive.
    k
        Leaves with fewer points are suppressed.

    Returns
    -------
    float
        In nats; ``>= 0`` (eq. 31).

    Raises
    ------
    InputError
        On counts and sizes of different shapes, negative counts, no points, sizes below 1
        or a bad ``k``.

    References
    ----------
    .. [1] Nordström 2012, §4.4.3, eqs. 14-31, Algorithm 6.

    Examples
    --------
    >>> round(kullback_penalty(np.array([2, 2]), np.array([1, 3]), k=2), 4)  # 2 log 2 + 2 log 6
    4.9698
    """
    checked_k(k)
    n, s = np.asarray(counts), np.asarray(sizes)
    if n.ndim != 1 or n.shape != s.shape or not (_is_integer(n) and _is_integer(s)):
        raise InputError("counts and sizes must be integer arrays of one entry per leaf")
    if (n < 0).any() or n.sum() == 0 or (s < 1).any():
        raise InputError("counts must be non-negative with some points, sizes at least 1")
    return _leaf_penalty(n, s, k)


def _is_integer(a: np.ndarray) -> bool:
    return a.dtype != bool and np.issubdtype(a.dtype, np.integer)


def _leaf_penalty(n: np.ndarray, s: np.ndarray, k: int) -> float:
    kept = n >= k
    total = float(n.sum())
    regions_n = np.r_[n[kept], n[~kept].sum()].astype(float)
    regions_s = np.r_[s[kept], s[~kept].sum()].astype(float)
    return _region_penalty(regions_n, regions_s, total)


def _region_penalty(n: np.ndarray, s: np.ndarray, total: float) -> float:
    """``- sum N log(N / (N(D) S))`` over regions, with ``0 log 0 = 0`` (eq. 3)."""
    full = n > 0
    n, s = n[full], s[full]
    return float(-np.sum(n * (np.log(n) - math.log(total) - np.log(s))))


def classes_kullback_penalty(classes: DemographicClasses) -> float:
    """The Kullback penalty of an anonymizer's output (eq. 30), for either anonymizer.

    The suppressed region is the domain outside the published classes, holding the
    suppressed individuals; Algorithm 6 depends on the suppressed leaves only through it.

    Parameters
    ----------
    classes
        The output of :func:`genetic_demographic_classes` or
        :func:`mondrian_demographic_classes` (unhidden bounds).

    Returns
    -------
    float

    References
    ----------
    .. [1] Nordström 2012, §4.4.3, eq. 30, Algorithm 6; §5.2, Figure 18.
    """
    size = classes.bounds.size
    n = np.r_[classes.n, classes.n_suppressed].astype(float)
    s = np.r_[size, classes.bounds.grid.n_cells - int(size.sum())].astype(float)
    return _region_penalty(n, s, float(classes.n_points))


def discernability_metric(classes: DemographicClasses) -> float:
    """Eq. 32: ``sum N(A_j)^2`` over published classes plus ``N(D)`` per suppressed point.

    References
    ----------
    .. [1] Nordström 2012, eq. 32 and §5.2, Figure 19; Bayardo and Agrawal 2005.
    """
    n = classes.n.astype(float)
    return float(np.sum(n * n) + classes.n_points * classes.n_suppressed)


# --- Counting points in boxes of atomic intervals --------------------------------------------

class _Counter:
    """Points in any box of atomic intervals in O(2^d): a d-dimensional summed-area table."""

    def __init__(self, cells: np.ndarray, bins: np.ndarray) -> None:
        shape = tuple(int(b) for b in bins)
        flat = np.ravel_multi_index(tuple(cells.T), shape)
        table = np.zeros(tuple(b + 1 for b in shape), np.int64)
        table[(slice(1, None),) * len(shape)] = np.bincount(
            flat, minlength=math.prod(shape)).reshape(shape)
        for axis in range(len(shape)):
            np.cumsum(table, axis=axis, out=table)
        self.table = table.ravel()
        self.strides = np.array(table.strides, np.int64) // table.itemsize
        # Inclusion-exclusion: corner c takes hi where c is 1, with sign (-1)^(d - |c|).
        self.corners = [(np.array(c, bool), (-1) ** (len(shape) - sum(c)))
                        for c in itertools.product((0, 1), repeat=len(shape))]

    def counts(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """int (m,): points in the boxes ``[lo, hi)``, (m, d) each."""
        total = np.zeros(lo.shape[0], np.int64)
        for take_hi, sign in self.corners:
            total += sign * self.table[np.where(take_hi, hi, lo) @ self.strides]
        return total

    def split_counts(self, lo: np.ndarray, hi: np.ndarray, inside: np.ndarray
                     ) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
        """Points in the box, and below every split of it (see :func:`_box_splits`)."""
        dims, pos = _box_splits(lo, hi)
        below_hi = np.tile(hi, (dims.size, 1))
        below_hi[np.arange(dims.size), dims] = pos
        below = self.counts(np.tile(lo, (dims.size, 1)), below_hi)
        return int(self.counts(lo[None], hi[None])[0]), dims, pos, below

    def leaf_counts(self, tree: Tree, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """int (leaves,): points in every leaf box (preorder)."""
        return self.counts(lo, hi)


class _PointCounter:
    """Points in boxes by the points themselves, for domains too large for a table.

    A tree's leaves are counted by routing every point down the tree (O(n depth)); the
    splits of a box from the points inside it, which the recursive initial chromosome passes
    down (``inside``), by a histogram per attribute.
    """

    def __init__(self, cells: np.ndarray) -> None:
        self.cells = cells

    def split_counts(self, lo: np.ndarray, hi: np.ndarray, inside: np.ndarray
                     ) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
        dims, pos = _box_splits(lo, hi)
        sub = self.cells[inside]
        below = [np.cumsum(np.bincount(sub[:, d] - lo[d], minlength=hi[d] - lo[d]))[:-1]
                 for d in range(lo.size) if hi[d] - lo[d] > 1]
        return (int(inside.size), dims, pos,
                np.concatenate(below) if below else np.zeros(0, np.int64))

    def leaf_counts(self, tree: Tree, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        leaf = _route(tree, self.cells)
        return np.bincount(leaf, minlength=len(tree))[[i for i, (d, _) in enumerate(tree)
                                                       if d < 0]]


def _box_splits(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every valid split of a box: attribute and position, attributes then positions
    ascending."""
    width = hi - lo - 1
    dims = np.repeat(np.arange(lo.size), width)
    pos = lo[dims] + 1 + np.arange(dims.size) - np.repeat(np.cumsum(width) - width, width)
    return dims, pos


def _route(tree: Tree, cells: np.ndarray) -> np.ndarray:
    """The preorder index of the leaf holding every point (all points at once, one tree
    level per step)."""
    dim = np.array([d for d, _ in tree], np.int64)
    split = np.array([p for _, p in tree], np.int64)
    ends = _subtree_ends(tree)
    right = np.array([ends[i + 1] if d >= 0 else -1 for i, (d, _) in enumerate(tree)],
                     np.int64)
    node = np.zeros(cells.shape[0], np.int64)
    active = np.arange(cells.shape[0])
    while active.size:
        here = node[active]
        branch = dim[here] >= 0
        active, here = active[branch], here[branch]
        below = cells[active, dim[here]] < split[here]
        node[active] = np.where(below, here + 1, right[here])
    return node


# --- Chromosomes: binary space partitions in preorder ---------------------------------------
# A tree is a tuple of (dim, split) nodes in preorder, (-1, 0) for a leaf. A branch's left
# child (below its split) follows it, then its right child. Tuples are immutable, so parents
# and children share nothing mutable and a subtree is a contiguous slice.

Node = tuple[int, int]
Tree = tuple[Node, ...]
Box = tuple[tuple[int, ...], tuple[int, ...]]

_LEAF: Node = (-1, 0)


def _split_box(box: Box, dim: int, pos: int) -> tuple[Box, Box]:
    lo, hi = box
    return (lo, (*hi[:dim], pos, *hi[dim + 1:])), ((*lo[:dim], pos, *lo[dim + 1:]), hi)


def _node_boxes(tree: Tree, root: Box) -> list[Box]:
    """The interval of every node, in preorder."""
    out: list[Box] = []
    stack = [root]
    for dim, pos in tree:
        box = stack.pop()
        out.append(box)
        if dim >= 0:
            below, above = _split_box(box, dim, pos)
            stack += [above, below]
    return out


def _node_box(tree: Tree, root: Box, ends: list[int], i: int) -> Box:
    """The interval of node ``i``, walking down from the root."""
    box, j = root, 0
    while j != i:
        dim, pos = tree[j]
        below, above = _split_box(box, dim, pos)
        box, j = (below, j + 1) if i < ends[j + 1] else (above, ends[j + 1])
    return box


def _subtree_ends(tree: Tree) -> list[int]:
    """One past the last node of every node's subtree."""
    end = [0] * len(tree)
    done: list[int] = []  # roots of finished subtrees, the nearest last
    for i in range(len(tree) - 1, -1, -1):
        if tree[i][0] >= 0:
            done.pop()  # the left child, i + 1
            end[i] = end[done.pop()]  # the right child's end
        else:
            end[i] = i + 1
        done.append(i)
    return end


def _parents(tree: Tree) -> list[int]:
    parent = [-1] * len(tree)
    waiting: list[list[int]] = []  # branches still missing children: [index, missing]
    for i, (dim, _) in enumerate(tree):
        if waiting:
            parent[i] = waiting[-1][0]
            waiting[-1][1] -= 1
            if waiting[-1][1] == 0:
                waiting.pop()
        if dim >= 0:
            waiting.append([i, 2])
    return parent


def _fixed(tree: Tree, root: Box) -> Tree:
    """The tree with every branch whose split is not inside its interval made a leaf."""
    out: list[Node] = []
    ends = _subtree_ends(tree)
    stack, i = [root], 0
    while i < len(tree):
        dim, pos = tree[i]
        box = stack.pop()
        if dim >= 0 and box[0][dim] < pos < box[1][dim]:
            below, above = _split_box(box, dim, pos)
            stack += [above, below]
            out.append(tree[i])
            i += 1
        else:
            out.append(_LEAF)
            i = ends[i]
    return tuple(out)


def _is_valid(tree: Tree, root: Box) -> bool:
    """Whether the tree is a whole preorder tree with every split inside its interval."""
    ends = _subtree_ends(tree) if tree else [0]
    return bool(tree) and ends[0] == len(tree) and _fixed(tree, root) == tree


def _leaf_boxes(tree: Tree, root: Box) -> tuple[np.ndarray, np.ndarray]:
    boxes = [box for (dim, _), box in zip(tree, _node_boxes(tree, root), strict=True)
             if dim < 0]
    return (np.array([b[0] for b in boxes], np.int64).reshape(len(boxes), len(root[0])),
            np.array([b[1] for b in boxes], np.int64).reshape(len(boxes), len(root[0])))


def _n_splits(box: Box) -> int:
    """Number of valid splits of a box: atomic boundaries strictly inside it."""
    return sum(h - lo - 1 for lo, h in zip(*box, strict=True))


def _random_split(box: Box, rng: np.random.Generator) -> Node:
    """A split drawn uniformly among all valid splits of the box (it has some)."""
    r = int(rng.integers(_n_splits(box)))
    for dim, (lo, hi) in enumerate(zip(*box, strict=True)):
        if r < hi - lo - 1:
            return dim, lo + 1 + r
        r -= hi - lo - 1
    raise AssertionError("unreachable: r < number of splits")


# --- Initial chromosomes (§4.4.4) -----------------------------------------------------------

@dataclass(frozen=True, eq=False)
class _Context:
    """What every chromosome of one run is evaluated against."""

    root: Box
    counter: _Counter | _PointCounter
    k: int
    n_points: int
    # Penalties by chromosome: elitism and converging populations evaluate the same trees
    # again and again (a tree is a tuple, so it is its own key).
    known: dict[Tree, float] = field(default_factory=dict)

    def penalty(self, tree: Tree) -> float:
        found = self.known.get(tree)
        if found is None:
            lo, hi = _leaf_boxes(tree, self.root)
            found = _leaf_penalty(self.counter.leaf_counts(tree, lo, hi),
                                  np.prod(hi - lo, axis=1), self.k)
            self.known[tree] = found
        return found


def _k_split(box: Box, inside: np.ndarray, ctx: _Context,
             rng: np.random.Generator) -> Node | None:
    """A split drawn uniformly among those leaving at least k points on both sides;
    ``inside`` are the indices of the box's points."""
    lo, hi = np.array(box[0]), np.array(box[1])
    if inside.size < 2 * ctx.k or (hi - lo - 1).sum() == 0:
        return None
    total, dims, pos, below = ctx.counter.split_counts(lo, hi, inside)
    ok = np.flatnonzero((below >= ctx.k) & (total - below >= ctx.k))
    if ok.size == 0:
        return None
    pick = int(ok[rng.integers(ok.size)])
    return int(dims[pick]), int(pos[pick])


def _recursive_tree(ctx: _Context, cells: np.ndarray, rng: np.random.Generator) -> Tree:
    """The thesis' recursive initial chromosome: no leaf below k, nothing suppressed."""
    out: list[Node] = []
    stack = [(ctx.root, np.arange(cells.shape[0]))]
    while stack:
        box, inside = stack.pop()
        split = _k_split(box, inside, ctx, rng)
        out.append(_LEAF if split is None else split)
        if split is not None:
            below, above = _split_box(box, *split)
            low = cells[inside, split[0]] < split[1]
            stack += [(above, inside[~low]), (below, inside[low])]
    return tuple(out)


def _random_tree(root: Box, n_leaves: int, rng: np.random.Generator) -> Tree:
    """A completely random valid tree: random leaves split at random until n_leaves."""
    nodes: list[list] = [[_LEAF, root, -1, -1]]  # node, box, left, right
    divisible = [0] if _n_splits(root) else []
    for _ in range(n_leaves - 1):
        if not divisible:
            break
        i = divisible.pop(int(rng.integers(len(divisible))))
        split = _random_split(nodes[i][1], rng)
        nodes[i][0] = split
        for box in _split_box(nodes[i][1], *split):
            if _n_splits(box):
                divisible.append(len(nodes))
            nodes.append([_LEAF, box, -1, -1])
        nodes[i][2:] = [len(nodes) - 2, len(nodes) - 1]
    out: list[Node] = []
    stack = [0]
    while stack:
        node = nodes[stack.pop()]
        out.append(node[0])
        if node[2] >= 0:
            stack += [node[3], node[2]]
    return tuple(out)


def _initial_population(ctx: _Context, cells: np.ndarray, size: int, random_trees: int,
                        rng: np.random.Generator) -> list[Tree]:
    recursive = [_recursive_tree(ctx, cells, rng) for _ in range(size - random_trees)]
    most = max(1, ctx.n_points // ctx.k)  # more leaves of k points cannot be
    return recursive + [_random_tree(ctx.root, int(rng.integers(1, most + 1)), rng)
                        for _ in range(random_trees)]


# --- The four mutations and the crossover (§4.4.4) ------------------------------------------

def _split_mutation(tree: Tree, root: Box, rng: np.random.Generator) -> Tree:
    """Every divisible leaf is split with probability 1 / (number of divisible leaves)."""
    boxes = _node_boxes(tree, root)
    divisible = [i for i, (node, box) in enumerate(zip(tree, boxes, strict=True))
                 if node[0] < 0 and _n_splits(box)]
    if not divisible:
        return tree
    chosen = set(np.asarray(divisible)[rng.random(len(divisible)) < 1 / len(divisible)].tolist())
    out: list[Node] = []
    for i, node in enumerate(tree):
        out += [_random_split(boxes[i], rng), _LEAF, _LEAF] if i in chosen else [node]
    return tuple(out)


def _merge_mutation(tree: Tree, rng: np.random.Generator) -> Tree:
    """Every branch with a leaf child becomes a leaf with probability 1 / (their number)."""
    ends = _subtree_ends(tree)
    mergeable = [i for i, (dim, _) in enumerate(tree)
                 if dim >= 0 and (tree[i + 1][0] < 0 or tree[ends[i + 1]][0] < 0)]
    if not mergeable:
        return tree
    chosen = set(np.asarray(mergeable)[rng.random(len(mergeable)) < 1 / len(mergeable)].tolist())
    out: list[Node] = []
    i = 0
    while i < len(tree):
        out.append(_LEAF if i in chosen else tree[i])
        i = ends[i] if i in chosen else i + 1
    return tuple(out)


def _move_split_mutation(tree: Tree, root: Box, rng: np.random.Generator) -> Tree:
    branches = [i for i, (dim, _) in enumerate(tree) if dim >= 0]
    if not branches:
        return tree
    i = branches[int(rng.integers(len(branches)))]
    return _moved_split(tree, root, i, 1 if rng.random() < 0.5 else -1)


def _moved_split(tree: Tree, root: Box, i: int, step: int) -> Tree:
    """Branch ``i``'s split moved one atomic interval; out of range, a child replaces it."""
    ends = _subtree_ends(tree)
    box = _node_box(tree, root, ends, i)
    dim, pos = tree[i]
    below, above = tree[i + 1:ends[i + 1]], tree[ends[i + 1]:ends[i]]
    moved = pos + step
    if moved <= box[0][dim]:  # one below the lowest valid split: the upper child stays
        sub = above
    elif moved >= box[1][dim]:  # one above the highest: the lower child stays
        sub = below
    else:
        sub = ((dim, moved), *below, *above)
    # A child that takes its parent's place only grows, but the same check is cheap.
    return tree[:i] + _fixed(sub, box) + tree[ends[i]:]


def _branch_swap_mutation(tree: Tree, root: Box, rng: np.random.Generator) -> Tree:
    parent = _parents(tree)
    swappable = [i for i, (dim, _) in enumerate(tree) if dim >= 0 and parent[i] >= 0]
    if not swappable:
        return tree
    i = swappable[int(rng.integers(len(swappable)))]
    return _swapped(tree, root, i, int(rng.integers(2)))


def _swapped(tree: Tree, root: Box, b: int, which: int) -> Tree:
    """Branch ``b`` swapped with its parent ``p``: ``p`` takes the place of ``b``'s child
    ``which`` (0 lower, 1 upper), and that child the place ``b`` had under ``p``."""
    ends, p = _subtree_ends(tree), _parents(tree)[b]
    b_children = (tree[b + 1:ends[b + 1]], tree[ends[b + 1]:ends[b]])
    p_below, p_above = tree[p + 1:ends[p + 1]], tree[ends[p + 1]:ends[p]]
    moved, kept = b_children[which], b_children[1 - which]
    new_p = (tree[p], *moved, *p_above) if b == p + 1 else (tree[p], *p_below, *moved)
    new_b = (tree[b], *new_p, *kept) if which == 0 else (tree[b], *kept, *new_p)
    return tree[:p] + _fixed(new_b, _node_box(tree, root, ends, p)) + tree[ends[p]:]


def _crossover(a: Tree, b: Tree, root: Box, rng: np.random.Generator) -> tuple[Tree, Tree]:
    if len(a) == 1 or len(b) == 1:
        return a, b  # a single leaf has no child to cut above
    return _crossed(a, b, root, int(rng.integers(1, len(a))), int(rng.integers(1, len(b))))


def _crossed(a: Tree, b: Tree, root: Box, ia: int, ib: int) -> tuple[Tree, Tree]:
    """Both offspring of cutting ``a`` above node ``ia`` and ``b`` above node ``ib``."""
    ends_a, ends_b = _subtree_ends(a), _subtree_ends(b)
    box_a, box_b = _node_box(a, root, ends_a, ia), _node_box(b, root, ends_b, ib)
    return (a[:ia] + _fixed(b[ib:ends_b[ib]], box_a) + a[ends_a[ia]:],
            b[:ib] + _fixed(a[ia:ends_a[ia]], box_b) + b[ends_b[ib]:])


def _mutated(tree: Tree, root: Box, rate: float, rng: np.random.Generator) -> Tree:
    if rng.random() < rate:
        tree = _split_mutation(tree, root, rng)
    if rng.random() < rate:
        tree = _merge_mutation(tree, rng)
    if rng.random() < rate:
        tree = _move_split_mutation(tree, root, rng)
    if rng.random() < rate:
        tree = _branch_swap_mutation(tree, root, rng)
    return tree


# --- The genetic algorithm ------------------------------------------------------------------

def _tournament(fitness: np.ndarray, rng: np.random.Generator) -> int:
    i, j = (int(x) for x in rng.integers(fitness.size, size=2))
    return i if fitness[i] <= fitness[j] else j


def _next_generation(population: list[Tree], fitness: np.ndarray, ctx: _Context,
                     rates: tuple[float, float], rng: np.random.Generator
                     ) -> tuple[list[Tree], np.ndarray]:
    elite = int(np.argmin(fitness))
    trees, scores = [population[elite]], [float(fitness[elite])]  # elitism: unmutated
    while len(trees) < len(population):
        a, b = population[_tournament(fitness, rng)], population[_tournament(fitness, rng)]
        if rng.random() < rates[0]:
            a, b = _crossover(a, b, ctx.root, rng)
        for child in (a, b)[:len(population) - len(trees)]:
            child = _mutated(child, ctx.root, rates[1], rng)
            trees.append(child)
            scores.append(ctx.penalty(child))
    return trees, np.array(scores)


def genetic_demographic_classes(points: np.ndarray, grid: AtomicGrid, k: int, *,
                                population: int = 40, generations: int = 40,
                                crossover_rate: float = 0.8, mutation_rate: float = 0.8,
                                random_trees: int = 4,
                                seed: int | np.random.Generator = 0) -> GeneticClasses:
    """Demographic classes minimising the Kullback penalty, by the thesis' GA (§4.4.4).

    Chromosomes are binary space partitions of the grid's domain on atomic boundaries. Each
    generation keeps its best chromosome unmutated and fills the rest with offspring of
    tournament-selected parents: subtree crossover, then the split, merge, move split and
    branch swap mutations. Leaves with fewer than ``k`` individuals are suppressed, which the
    penalty charges (Algorithm 6); they are never published.

    Parameters
    ----------
    points
        float (n, d): one row per individual of the trajectory group, inside the domain.
    grid
        The public atomic intervals (:func:`atomic_grid`).
    k
        Minimum number of individuals per published class.
    population, generations, crossover_rate, mutation_rate
        40, 40, 0.8 and 0.8 in the thesis (§5.2).
    random_trees
        How many initial chromosomes are completely random trees ("a few", §4.4.4); the
        others come from the recursive function.
    seed
        Seed or Generator of every random choice; a fixed seed gives a fixed result.

    Returns
    -------
    GeneticClasses

    Raises
    ------
    InputError
        On bad points (shape, NaN, outside the domain, fewer than ``k``), ``k``, parameters
        or seed, or a grid too large for the counting table.

    References
    ----------
    .. [1] Nordström 2012, §4.4.2-§4.4.4, Algorithm 6, §5.2.

    Examples
    --------
    >>> grid = atomic_grid(np.array([[0, 8]]), 8)
    >>> x = np.array([[0], [0], [1], [1], [6], [7], [7], [7]])
    >>> r = genetic_demographic_classes(x, grid, k=2, seed=0)
    >>> r.classes.bounds.lower.ravel().tolist(), r.classes.bounds.upper.ravel().tolist()
    ([0.0, 6.0], [2.0, 8.0])
    """
    checked_k(k)
    _check_count("population", population, 1)
    _check_count("generations", generations, 0)
    _check_count("random_trees", random_trees, 0)
    if random_trees > population:
        raise InputError("random_trees must be at most population")
    _check_rate("crossover_rate", crossover_rate)
    _check_rate("mutation_rate", mutation_rate)
    rng = generator(seed)
    x = _checked_points(points, grid, k)
    cells = grid.cells(x)
    counter = (_Counter(cells, grid.bins) if grid.n_cells <= _MAX_TABLE_CELLS
               else _PointCounter(cells))
    ctx = _Context(root=((0,) * grid.n_dims, tuple(int(b) for b in grid.bins)),
                   counter=counter, k=int(k), n_points=x.shape[0])
    trees = _initial_population(ctx, cells, population, random_trees, rng)
    fitness = np.array([ctx.penalty(t) for t in trees])
    best = [float(fitness.min())]
    for _ in range(generations):
        trees, fitness = _next_generation(trees, fitness, ctx,
                                          (crossover_rate, mutation_rate), rng)
        best.append(float(fitness.min()))
    classes = _tree_classes(trees[int(np.argmin(fitness))], ctx, cells, grid)
    return GeneticClasses(classes=classes, best_penalty=np.array(best))


def _tree_classes(tree: Tree, ctx: _Context, cells: np.ndarray,
                  grid: AtomicGrid) -> DemographicClasses:
    lo, hi = _leaf_boxes(tree, ctx.root)
    leaves = [i for i, (d, _) in enumerate(tree) if d < 0]
    leaf_rank = np.full(len(tree), -1, np.int64)
    leaf_rank[leaves] = np.arange(len(leaves))
    leaf = leaf_rank[_route(tree, cells)]
    kept = np.bincount(leaf, minlength=len(leaves)) >= ctx.k
    new = np.where(kept, np.cumsum(kept) - 1, -1)
    return _classes(grid, lo[kept], hi[kept], new[leaf], ctx.k)


def _classes(grid: AtomicGrid, lo: np.ndarray, hi: np.ndarray, leaf: np.ndarray,
             k: int) -> DemographicClasses:
    """Classes in lexicographic order of their lower corners; ``leaf`` -1 if suppressed."""
    order = np.lexsort(lo.T[::-1]) if lo.size else np.zeros(0, np.int64)
    rank = np.empty(order.size, np.int64)
    rank[order] = np.arange(order.size)
    assignment = np.where(leaf >= 0, rank[np.maximum(leaf, 0)] if rank.size else -1, -1)
    return DemographicClasses(
        bounds=ClassBounds(grid=grid, cell_lower=lo[order], cell_upper=hi[order]),
        n=np.bincount(assignment[assignment >= 0], minlength=order.size),
        assignment=assignment.astype(np.int64), k=int(k))


# --- Mondrian, strict, with the thesis' modification (§5.2) ---------------------------------

def _mondrian_cut(cells: np.ndarray, span: np.ndarray, k: int) -> Node | None:
    """The median cut of the widest normalised attribute leaving k on both sides, else of
    the next widest, ...; None if no attribute has one."""
    if cells.shape[0] < 2 * k:
        return None
    extent = cells.max(axis=0) - cells.min(axis=0)
    width = extent / np.maximum(span, 1)
    for dim in np.argsort(-width, kind="stable"):
        if extent[dim] == 0:
            return None  # this attribute and the narrower ones are constant here
        column = cells[:, dim]
        median = np.partition(column, (column.size - 1) // 2)[(column.size - 1) // 2]
        below = int(np.count_nonzero(column <= median))
        if below >= k and column.size - below >= k:
            return int(dim), int(median) + 1
    return None


def mondrian_demographic_classes(points: np.ndarray, grid: AtomicGrid,
                                 k: int) -> DemographicClasses:
    """Strict Mondrian on atomic intervals, as the thesis' baseline (§5.2).

    Recursively cut every partition at the lower median of the attribute of widest
    normalised range; if a side would have fewer than ``k`` individuals, try the attribute
    of second widest range, and so on; a partition no attribute can cut is a class.

    Parameters
    ----------
    points
        float (n, d): one row per individual of the trajectory group, inside the domain.
    grid
        The public atomic intervals (:func:`atomic_grid`).
    k
        Minimum number of individuals per class.

    Returns
    -------
    DemographicClasses
        Tiling the domain; nothing suppressed.

    Raises
    ------
    InputError
        On bad points (shape, NaN, outside the domain, fewer than ``k``) or ``k``.

    References
    ----------
    .. [1] LeFevre, DeWitt and Ramakrishnan 2006 (strict multidimensional partitioning);
       Nordström 2012, §5.2 (modification).

    Examples
    --------
    >>> grid = atomic_grid(np.array([[0, 8]]), 8)
    >>> c = mondrian_demographic_classes(np.array([[0], [1], [1], [6], [7], [7]]), grid, 2)
    >>> c.bounds.cell_lower.ravel().tolist(), c.bounds.cell_upper.ravel().tolist(), c.n.tolist()
    ([0, 2], [2, 8], [3, 3])
    """
    checked_k(k)
    cells = grid.cells(_checked_points(points, grid, k))
    span = cells.max(axis=0) - cells.min(axis=0)
    los: list[tuple[int, ...]] = []
    his: list[tuple[int, ...]] = []
    leaf = np.full(cells.shape[0], -1, np.int64)
    stack: list[tuple[np.ndarray, Box]] = [
        (np.arange(cells.shape[0]), ((0,) * grid.n_dims, tuple(int(b) for b in grid.bins)))]
    while stack:
        members, box = stack.pop()
        cut = _mondrian_cut(cells[members], span, k)
        if cut is None:
            leaf[members] = len(los)
            los.append(box[0])
            his.append(box[1])
            continue
        below = cells[members, cut[0]] < cut[1]
        lower_box, upper_box = _split_box(box, *cut)
        stack += [(members[~below], upper_box), (members[below], lower_box)]
    return _classes(grid, np.array(los, np.int64), np.array(his, np.int64), leaf, k)


# --- Boundary hiding (§4.4.5) ---------------------------------------------------------------

def hide_boundaries(points: np.ndarray, classes: DemographicClasses) -> ClassBounds:
    """The bounds to publish: each moved to the grid around an average of ``ceil(k/2)`` values.

    In every attribute, ``a_low`` is the mean of a class's ``ceil(k/2)`` lowest values and
    ``a_high`` of its ``ceil(k/2)`` highest. The published lower bound is the atomic boundary
    at or below ``a_low`` (the start of its atomic interval), the upper bound the atomic
    boundary above ``a_high`` (the end of its atomic interval). Counts are unchanged.

    Parameters
    ----------
    points
        float (n, d): the points the classes were computed from, in the same order.
    classes
        The output of either anonymizer.

    Returns
    -------
    ClassBounds
        Row ``i`` is the hidden box of class ``i``, inside its unhidden box.

    Raises
    ------
    InputError
        If the points are not those the classes were computed from.

    References
    ----------
    .. [1] Nordström 2012, §4.4.5 and Figure 11; §4.4.1 rule 2.

    Examples
    --------
    >>> grid = atomic_grid(np.array([[0, 100]]), 20)  # ages in five-year intervals
    >>> ages = np.array([[21], [23], [27], [31], [33], [36], [38], [44]])
    >>> c = mondrian_demographic_classes(ages, grid, k=3)
    >>> c.bounds.lower.ravel().tolist(), c.bounds.upper.ravel().tolist()
    ([0.0, 35.0], [35.0, 100.0])
    >>> h = hide_boundaries(ages, c)  # means of the two lowest, highest: 22, 32 | 37, 41
    >>> h.lower.ravel().tolist(), h.upper.ravel().tolist()
    ([20.0, 35.0], [35.0, 45.0])
    """
    grid, b = classes.bounds.grid, classes.bounds
    x = _checked_points(points, grid, 1)
    members = np.flatnonzero(classes.assignment >= 0)
    cls = classes.assignment[members]
    if x.shape[0] != classes.n_points or not _inside(grid.cells(x[members]), b, cls):
        raise InputError("points are not those the classes were computed from: pass the same "
                         "points, in the same order")
    if classes.n_classes == 0:
        return b
    m = -(-classes.k // 2)
    start = np.r_[0, np.cumsum(classes.n)[:-1]].astype(np.int64)
    low = start[:, None] + np.arange(m)
    high = (start + classes.n)[:, None] - m + np.arange(m)
    lower, upper = b.cell_lower.copy(), b.cell_upper.copy()
    for j in range(grid.n_dims):  # a loop over attributes; numpy over classes and members
        values = x[members, j][np.lexsort((x[members, j], cls))]
        a_low, a_high = values[low].mean(axis=1), values[high].mean(axis=1)
        lower[:, j] = np.clip(grid._cells_1d(a_low, j), b.cell_lower[:, j], b.cell_upper[:, j] - 1)
        upper[:, j] = np.clip(grid._cells_1d(a_high, j) + 1, lower[:, j] + 1, b.cell_upper[:, j])
    return ClassBounds(grid=grid, cell_lower=lower, cell_upper=upper)


def _inside(cells: np.ndarray, bounds: ClassBounds, cls: np.ndarray) -> bool:
    return bool(((bounds.cell_lower[cls] <= cells) & (cells < bounds.cell_upper[cls])).all())
