"""Group points into spatial clusters of a desired radius (step 2 of Algorithm 2, seed 000 §6.1).

The cluster centroids of the characteristic points generate the Voronoi cells of the
data-driven tessellation.  The method is Andrienko & Andrienko's [1]_ grouping with a
desired radius r, in two phases:

1. **Grouping** (:func:`group_points`): points are taken in input order; a point joins
   the group with the nearest centroid within r, whose centroid is then updated
   incrementally, or starts a new group.  A grid of square cells of side r (as
   movingpandas) indexes the groups by the cell of their *current* centroid; r is the
   smallest side for which the 3x3 cells around a point hold every centroid within r.
2. **Redistribution** (:func:`redistribute`): with the group centroids fixed as seeds,
   every point moves to its nearest seed (a k-d tree query, so no search range is needed
   and no point is dropped), centroids become the means of their new members, and
   groups left empty are removed.

Compared with movingpandas 0.23 (``PointClusterer`` / ``_Grid``), which implements the
same method, a grid cell here holds any number of groups (movingpandas keeps one per
cell and loses the earlier group when a second one starts in the same cell), groups move
with their centroid, redistributed centroids are recomputed, and empty groups are removed.
Centroids are updated from running sums in O(1) (movingpandas re-averages all members on
every addition, which is quadratic in the group size).

The centroids steer the grouping only. What is published as a Voronoi generator is
:func:`lattice_generators`: per cluster the mean of its persons' mean positions (each
person weighs the same, so one person's many points cannot pull it to their place),
rounded to a lattice of ``snap`` metres that does not depend on the data; clusters that
round onto the same lattice point are merged (Voronoi needs distinct sites). This is
privacy rule 2 of the release machinery (``../shared/DESIGN.md``), not part of [1]_.

References
----------
.. [1] N. Andrienko and G. Andrienko, "Spatial generalization and aggregation of massive
   movement data", IEEE Transactions on Visualization and Computer Graphics 17(2)
   (2011), 205-219 (spatial grouping of characteristic points).
.. [2] A. Monreale, G. Andrienko, N. Andrienko, F. Giannotti, D. Pedreschi,
   S. Rinzivillo, S. Wrobel, "Movement Data Anonymity through Generalization",
   Transactions on Data Privacy 3 (2010), 91-121, Section 6.1, Algorithm 2 (step
   ``SpatialClusters(P, r)``); its experiments use r = 500 m.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import chain
from numbers import Real
from typing import Any

import numpy as np
from scipy.spatial import cKDTree

from anonymizers.errors import InputError

__all__ = [
    "LatticeGenerators",
    "PointClusters",
    "cluster_points",
    "cluster_radius_stats",
    "group_points",
    "lattice_generators",
    "person_weighted_means",
    "redistribute",
    "snap_to_lattice",
]

# Grid cells are a hair wider than r, so floating-point rounding of the cell index can
# never put a centroid within r of a point outside the point's 3x3 neighbourhood.
_CELL_SLACK = 1e-6


@dataclass(frozen=True, eq=False)  # eq=False: comparing arrays with == is ambiguous
class PointClusters:
    """Spatial clusters of points.

    Parameters
    ----------
    labels : numpy.ndarray
        Cluster of every input point (int64, in input order), in ``0 .. n_clusters - 1``;
        every cluster has at least one point.
    centroids : numpy.ndarray
        ``(n_clusters, 2)`` float64, the mean ``(x, y)`` of each cluster's points.
    """

    labels: np.ndarray
    centroids: np.ndarray

    def __len__(self) -> int:
        """Number of clusters."""
        return int(self.centroids.shape[0])


def cluster_points(x: np.ndarray, y: np.ndarray, radius: float) -> PointClusters:
    """Group points into spatial clusters of desired radius ``radius`` (Andrienko 2011).

    Parameters
    ----------
    x, y : numpy.ndarray
        Coordinates in metres of a metric CRS, in a deterministic order (the result
        depends on it: groups grow in input order; the caller sorts the points).
    radius : float
        Desired cluster radius r in metres (the paper's experiments use 500).

    Returns
    -------
    PointClusters
        Dense labels and member-mean centroids; no cluster is empty.

    Raises
    ------
    InputError
        If ``radius`` is not a positive finite number, or the coordinates are not 1-D
        arrays of one length without NaN or infinite values.

    Notes
    -----
    :func:`group_points` followed by :func:`redistribute`.  The same input always gives
    the same output.  Guarantees: every point is labelled with the seed (grouping
    centroid) nearest to it; every centroid is the mean of its members; hence every
    point is at most ``2 * D`` from its centroid, D being the largest distance of a
    member of its cluster to that cluster's seed.  D is usually about r, but there is no
    hard bound in terms of r: a centroid moves as points join, by at most r / n for the
    n-th member, and can drift about ``r * ln(n)`` away from its earliest members in the
    worst order (e.g. collinear points each added r ahead of the current centroid).

    References
    ----------
    .. [1] N. Andrienko and G. Andrienko, IEEE TVCG 17(2) (2011), 205-219.
    .. [2] A. Monreale et al., Trans. Data Privacy 3 (2010), 91-121, Algorithm 2.
    """
    x_a, y_a = _validated_points(x, y)
    return redistribute(x_a, y_a, group_points(x_a, y_a, radius))


def group_points(x: np.ndarray, y: np.ndarray, radius: float) -> np.ndarray:
    """Phase 1: incremental grouping in input order; returns the group centroids (seeds).

    Parameters
    ----------
    x, y : numpy.ndarray
        Coordinates in metres, in the order the points are grouped.
    radius : float
        Desired radius r: a point joins the nearest group whose centroid is within r
        (distance <= r; ties go to the earlier group), else it starts a new group.

    Returns
    -------
    numpy.ndarray
        ``(n_groups, 2)`` centroids in the order the groups were started.

    Raises
    ------
    InputError
        On a bad radius or bad coordinates (see :func:`cluster_points`).

    References
    ----------
    .. [1] N. Andrienko and G. Andrienko, IEEE TVCG 17(2) (2011), 205-219.
    """
    radius = _validated_radius(radius)
    x_a, y_a = _validated_points(x, y)
    if x_a.size == 0:
        return np.zeros((0, 2))
    # Relative coordinates keep sums of many points exact enough and cell indices small.
    x0, y0 = float(x_a.min()), float(y_a.min())
    cell = radius * (1.0 + _CELL_SLACK)
    stride = math.floor(float(y_a.max() - y0) / cell) + 3  # >= max row + 3: no wrap
    # The same expression as for centroids in _grid_grouping, so a point and a centroid at
    # the same position always share a cell.
    keys = (np.floor((x_a - x0) / cell) * stride + np.floor((y_a - y0) / cell)).astype(np.int64)
    cx, cy = _grid_grouping(_as_python(x_a - x0), _as_python(y_a - y0), _as_python(keys),
                            radius * radius, cell, stride)
    return np.column_stack((np.asarray(cx) + x0, np.asarray(cy) + y0))


# Points turned into Python numbers at a time by _grid_grouping's feeders: whole lists of
# 15 million points (a 25M-fix window) took more than a gigabyte.
_FEED = 1 << 16


def _as_python(values: np.ndarray) -> Iterator[Any]:
    """The values as Python numbers (floats or ints), converted a slice of :data:`_FEED`
    at a time."""
    return chain.from_iterable(values[start:start + _FEED].tolist()
                               for start in range(0, values.size, _FEED))


def _grid_grouping(
    xs: Iterable[float], ys: Iterable[float], keys: Iterable[int], r2: float, cell: float,
    stride: int,
) -> tuple[list[float], list[float]]:
    """The sequential core of :func:`group_points`, on plain Python numbers for speed."""
    neighbours = [di * stride + dj for di in (-1, 0, 1) for dj in (-1, 0, 1)]
    grid: dict[int, list[int]] = {}  # cell key -> groups whose centroid lies in that cell
    # cell key -> groups in its 3x3 neighbourhood; dropped when one of those cells changes.
    # Groups rarely start or change cells, so most points need one look-up instead of 9.
    around: dict[int, list[int]] = {}
    key_of: list[int] = []  # group -> its cell key
    cx: list[float] = []
    cy: list[float] = []
    sx: list[float] = []
    sy: list[float] = []
    count: list[int] = []
    floor = math.floor

    def forget_around(key: int) -> None:
        for offset in neighbours:
            around.pop(key + offset, None)

    for px, py, key in zip(xs, ys, keys, strict=True):
        candidates = around.get(key)
        if candidates is None:
            candidates = [g for offset in neighbours for g in grid.get(key + offset, ())]
            around[key] = candidates
        best, best_d2 = -1, r2
        for g in candidates:
            d2 = (cx[g] - px) ** 2 + (cy[g] - py) ** 2
            if d2 < best_d2 or (d2 == best_d2 and (best < 0 or g < best)):
                best, best_d2 = g, d2
        if best < 0:
            key_of.append(key)
            cx.append(px)
            cy.append(py)
            sx.append(px)
            sy.append(py)
            count.append(1)
            grid.setdefault(key, []).append(len(cx) - 1)
            forget_around(key)
            continue
        count[best] += 1
        sx[best] += px
        sy[best] += py
        cx[best] = sx[best] / count[best]
        cy[best] = sy[best] / count[best]
        new_key = floor(cx[best] / cell) * stride + floor(cy[best] / cell)
        if new_key != key_of[best]:  # the centroid moved to another cell: move the group
            grid[key_of[best]].remove(best)
            forget_around(key_of[best])
            grid.setdefault(new_key, []).append(best)
            forget_around(new_key)
            key_of[best] = new_key
    return cx, cy


def redistribute(x: np.ndarray, y: np.ndarray, seeds: np.ndarray) -> PointClusters:
    """Phase 2: assign every point to its nearest seed, recompute means, drop empty groups.

    Parameters
    ----------
    x, y : numpy.ndarray
        Coordinates in metres.
    seeds : numpy.ndarray
        ``(n_seeds, 2)`` centroids from :func:`group_points` (at least one if there
        are points).

    Returns
    -------
    PointClusters
        Clusters numbered in seed order with the empty ones left out; cluster ``c`` is
        the ``c``-th seed that received a point.

    Raises
    ------
    InputError
        On bad coordinates or when there are points but no seeds.

    References
    ----------
    .. [1] N. Andrienko and G. Andrienko, IEEE TVCG 17(2) (2011), 205-219.
    """
    x_a, y_a = _validated_points(x, y)
    seeds_a = np.asarray(seeds, dtype=np.float64).reshape(-1, 2)
    if x_a.size == 0:
        return PointClusters(np.zeros(0, dtype=np.int64), np.zeros((0, 2)))
    if seeds_a.shape[0] == 0:
        raise InputError("redistribute needs at least one seed when there are points")
    x0, y0 = float(x_a.min()), float(y_a.min())
    points = np.column_stack((x_a - x0, y_a - y0))
    _, nearest = cKDTree(seeds_a - (x0, y0)).query(points, k=1)
    counts = np.bincount(nearest, minlength=seeds_a.shape[0])
    keep = counts > 0
    new_id = np.cumsum(keep) - 1
    labels = new_id[nearest].astype(np.int64)
    n = counts[keep].astype(np.float64)
    mean_x = np.bincount(labels, weights=points[:, 0])[: n.size] / n + x0
    mean_y = np.bincount(labels, weights=points[:, 1])[: n.size] / n + y0
    return PointClusters(labels, np.column_stack((mean_x, mean_y)))


def cluster_radius_stats(x: np.ndarray, y: np.ndarray, clusters: PointClusters) -> dict:
    """Distances from the points to their cluster centroid, for quality metrics.

    Parameters
    ----------
    x, y : numpy.ndarray
        The coordinates that were clustered.
    clusters : PointClusters
        The result of :func:`cluster_points` on them.

    Returns
    -------
    dict
        ``n_points``, ``n_clusters``, ``mean_distance_m`` and ``max_distance_m`` (member to
        its centroid; 0.0 when there are no points).

    Raises
    ------
    InputError
        If the coordinates do not match the labels.
    """
    x_a, y_a = _validated_points(x, y)
    if clusters.labels.shape != x_a.shape:
        raise InputError(f"{x_a.size} points but {clusters.labels.size} labels")
    centre = clusters.centroids[clusters.labels]
    distance = np.hypot(x_a - centre[:, 0], y_a - centre[:, 1])
    return {
        "n_points": int(x_a.size),
        "n_clusters": len(clusters),
        "mean_distance_m": float(distance.mean()) if distance.size else 0.0,
        "max_distance_m": float(distance.max()) if distance.size else 0.0,
    }


# --------------------------------------------------------------------------- generators


@dataclass(frozen=True, eq=False)
class LatticeGenerators:
    """Publishable positions of clusters (see :func:`lattice_generators`).

    Parameters
    ----------
    labels : numpy.ndarray
        Group of every input point (int64, dense ``0 .. n - 1``): the clusters, with those
        that snapped onto one lattice point merged.
    positions : numpy.ndarray
        ``(n, 2)`` distinct lattice points, one per group.
    n_points, n_persons : numpy.ndarray
        Points and distinct persons each position is computed from.
    snap_merges : int
        Clusters merged into another because both snapped onto one lattice point.
    """

    labels: np.ndarray
    positions: np.ndarray
    n_points: np.ndarray
    n_persons: np.ndarray
    snap_merges: int

    def __len__(self) -> int:
        """Number of generators."""
        return int(self.positions.shape[0])


def snap_to_lattice(xy: np.ndarray, snap: float) -> np.ndarray:
    """Round coordinates to the nearest multiple of ``snap`` (a lattice anchored at the
    CRS origin, so it does not depend on the data).

    Examples
    --------
    >>> snap_to_lattice(np.array([[124.9, -26.0]]), 50.0).tolist()
    [[100.0, -50.0]]
    """
    if not 0 < snap < math.inf:
        raise InputError(f"snap must be a positive number of metres, got {snap!r}")
    return np.round(np.asarray(xy, dtype=np.float64) / snap) * snap


def person_weighted_means(labels: np.ndarray, persons: np.ndarray, x: np.ndarray,
                          y: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Per group, the mean over its persons of each person's mean position.

    Parameters
    ----------
    labels, persons : numpy.ndarray
        Group and person (integer codes) of every point.
    x, y : numpy.ndarray
        Coordinates of the points.
    n_groups : int
        Number of groups (labels are ``0 .. n_groups - 1``).

    Returns
    -------
    tuple of numpy.ndarray
        ``(n_groups, 2)`` positions (NaN for a group without points) and the number of
        distinct persons of each group.

    Examples
    --------
    One person with three points at x = 0 and one with a point at x = 10 weigh the same:

    >>> means, n = person_weighted_means(np.zeros(4, dtype=int), np.array([0, 0, 0, 1]),
    ...                                  np.array([0.0, 0.0, 0.0, 10.0]), np.zeros(4), 1)
    >>> means.tolist(), n.tolist()
    ([[5.0, 0.0]], [2])
    """
    x_a, y_a = _validated_points(x, y)
    if x_a.size == 0:
        return np.full((n_groups, 2), np.nan), np.zeros(n_groups, dtype=np.int64)
    x0, y0 = float(x_a.min()), float(y_a.min())  # relative sums stay exact enough
    labels_a = np.asarray(labels, dtype=np.int64)
    persons_a = np.asarray(persons, dtype=np.int64)
    persons_a = persons_a - persons_a.min()
    # One integer per (group, person) pair: a 1-D unique sorts far less than rows of two.
    width = int(persons_a.max()) + 1
    pairs, pair_of = np.unique(labels_a * width + persons_a, return_inverse=True)
    pair_of = pair_of.reshape(-1)
    count = np.bincount(pair_of)
    person_x = np.bincount(pair_of, weights=x_a - x0) / count
    person_y = np.bincount(pair_of, weights=y_a - y0) / count
    group = pairs // width
    n_persons = np.bincount(group, minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.column_stack((np.bincount(group, person_x, n_groups) / n_persons + x0,
                                 np.bincount(group, person_y, n_groups) / n_persons + y0))
    return means, n_persons


def lattice_generators(labels: np.ndarray, persons: np.ndarray, x: np.ndarray, y: np.ndarray,
                       snap: float) -> LatticeGenerators:
    """Publishable generators of clusters: person-weighted means snapped to a lattice.

    Parameters
    ----------
    labels : numpy.ndarray
        Cluster of every point (dense, e.g. :attr:`PointClusters.labels`).
    persons : numpy.ndarray
        Person (integer code) of every point.
    x, y : numpy.ndarray
        Coordinates in metres of a metric CRS.
    snap : float
        Lattice spacing in metres.

    Returns
    -------
    LatticeGenerators
        One distinct lattice point per group, in the order of each group's first cluster.

    Notes
    -----
    A position is :func:`person_weighted_means` rounded by :func:`snap_to_lattice`. When
    several clusters round onto one lattice point, they become one group whose position is
    recomputed from all their points (and rounded again), until all positions differ.

    Examples
    --------
    Two clusters 20 m apart round onto one 50 m lattice point and are merged:

    >>> g = lattice_generators(np.array([0, 1]), np.array([0, 1]), np.array([0.0, 20.0]),
    ...                        np.zeros(2), 50.0)
    >>> g.positions.tolist(), g.n_persons.tolist(), g.snap_merges
    ([[0.0, 0.0]], [2], 1)
    """
    x_a, y_a = _validated_points(x, y)
    labels_a = np.asarray(labels, dtype=np.int64)
    merges = 0
    while True:
        n_groups = int(labels_a.max()) + 1 if labels_a.size else 0
        means, n_persons = person_weighted_means(labels_a, persons, x_a, y_a, n_groups)
        snapped = snap_to_lattice(means, snap)
        _, first, group_of = np.unique(snapped, axis=0, return_index=True,
                                       return_inverse=True)
        if first.size == n_groups:
            return LatticeGenerators(labels_a, snapped, np.bincount(labels_a, minlength=n_groups),
                                     n_persons, merges)
        merges += n_groups - first.size
        # Number the merged groups in the order of their first cluster (deterministic).
        rank = np.empty(first.size, dtype=np.int64)
        rank[np.argsort(first, kind="stable")] = np.arange(first.size)
        labels_a = rank[group_of.reshape(-1)][labels_a]


# --------------------------------------------------------------------------- validation


def _validated_radius(radius: float) -> float:
    # bool is a Real subclass, but True as a radius is certainly a mistake
    if isinstance(radius, bool) or not isinstance(radius, Real) or not 0 < radius < math.inf:
        raise InputError(f"radius must be a positive finite number of metres, got {radius!r}")
    return float(radius)


def _validated_points(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    try:
        x_a = np.asarray(x, dtype=np.float64)
        y_a = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"x and y must be numeric: {exc}") from None
    if x_a.ndim != 1 or y_a.ndim != 1 or x_a.size != y_a.size:
        raise InputError(f"x and y must be 1-D of one length, got {x_a.shape} and {y_a.shape}")
    if not (np.isfinite(x_a).all() and np.isfinite(y_a).all()):
        raise InputError("x and y must not hold NaN or infinite values")
    return x_a, y_a
