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
from dataclasses import dataclass
from numbers import Real

import numpy as np
from scipy.spatial import cKDTree

from anonymizers.errors import InputError

__all__ = [
    "PointClusters",
    "cluster_points",
    "cluster_radius_stats",
    "group_points",
    "redistribute",
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
    xs, ys = (x_a - x0).tolist(), (y_a - y0).tolist()
    stride = math.floor(float(y_a.max() - y0) / cell) + 3  # >= max row + 3: no wrap
    # The same expression as for centroids in _grid_grouping, so a point and a centroid at
    # the same position always share a cell.
    keys = (np.floor((x_a - x0) / cell) * stride + np.floor((y_a - y0) / cell)).astype(np.int64)
    cx, cy = _grid_grouping(xs, ys, keys.tolist(), radius * radius, cell, stride)
    return np.column_stack((np.asarray(cx) + x0, np.asarray(cy) + y0))


def _grid_grouping(
    xs: list[float], ys: list[float], keys: list[int], r2: float, cell: float, stride: int
) -> tuple[list[float], list[float]]:
    """The sequential core of :func:`group_points`, on plain lists for speed."""
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
