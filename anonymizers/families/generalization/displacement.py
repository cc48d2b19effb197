"""Measure how far a spatial generalization moved the points: Andrienko's displacement measures.

A generalized trajectory replaces every original point by the representative (centroid)
of the area that contains it.  The *displacement* of a point is the distance from the
point to that representative.  Andrienko & Andrienko (ref. [5] of Monreale et al.,
Section 6.1.2) judge the quality of a generalization with local measures, per area (the
average and the maximum displacement of its points), and global ones over the whole
territory (the sum, average and maximum displacement).

Only the aggregates survive here (privacy rule 3 of DESIGN.md): a
maximum displacement is the distance of one fix, and on T-Drive the published maximum plus
the clip box solved to one taxi's exact position. So no maximum is computed at all, and
every figure is an aggregate over at least ``k`` distinct persons: the global sum and
average need ``k`` persons in all, and the average of the local averages is taken over the
areas with at least ``k`` persons (an area's own average over fewer is one person's
figure). Progressive generalization bounds its merges by a local average of its own
(:mod:`anonymizers.families.generalization.progressive`), not by anything from here.

Everything is vectorized (``np.bincount`` / ``np.unique``) and knows nothing about
databases: coordinates are plain metres in a projected CRS.

References
----------
.. [1] A. Monreale, G. Andrienko, N. Andrienko, F. Giannotti, D. Pedreschi, S. Rinzivillo,
   S. Wrobel, "Movement Data Anonymity through Generalization", Transactions on Data
   Privacy 3 (2010), 91-121, Section 6.1.2.
.. [2] N. Andrienko and G. Andrienko, "Spatial generalization and aggregation of massive
   movement data", IEEE Transactions on Visualization and Computer Graphics 17(2) (2011).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from anonymizers.counting import distinct_per_group, distinct_values
from anonymizers.errors import InputError

__all__ = ["LocalDisplacements", "displacement_measures", "local_displacements"]


@dataclass(frozen=True)
class LocalDisplacements:
    """Per-area displacement figures, one entry per area that holds at least one point.

    These are about the persons of each area, some of which may be fewer than k: they are
    inputs to aggregates, not figures to publish as they are.

    Attributes
    ----------
    area : np.ndarray of int
        Area ids, sorted increasingly.
    count : np.ndarray of int
        Number of points in each area.
    persons : np.ndarray of int
        Distinct owners (persons) of the area's points.
    total : np.ndarray of float
        Sum of the displacements of the area's points (metres).
    mean : np.ndarray of float
        Average displacement of the area's points (metres): Andrienko's local average.
    """

    area: np.ndarray
    count: np.ndarray
    persons: np.ndarray
    total: np.ndarray
    mean: np.ndarray


def local_displacements(
    point_xy: np.ndarray, representative_xy: np.ndarray, area: np.ndarray, owner: np.ndarray
) -> LocalDisplacements:
    """Compute the local (per-area) average displacement and who it is about.

    Parameters
    ----------
    point_xy : np.ndarray, shape (n, 2)
        Original points, in metres.
    representative_xy : np.ndarray, shape (n, 2)
        The representative point (cell centroid) each original point is replaced by.
    area : np.ndarray of int, shape (n,)
        Id of the area (cell) holding each point; any integers, not necessarily dense.
    owner : np.ndarray of int, shape (n,)
        Owner (person) of each point; any integers.

    Returns
    -------
    LocalDisplacements
        Per-area point counts, distinct persons, total and average displacement.

    Raises
    ------
    ValueError
        If the shapes disagree, an id is not an integer or a coordinate is not finite.

    References
    ----------
    .. [1] Monreale et al., Trans. Data Privacy 3 (2010), Section 6.1.2.
    """
    distance = _displacements(point_xy, representative_xy)
    areas, owners = _ids(area, distance.shape, "area"), _ids(owner, distance.shape, "owner")
    ids, dense = np.unique(areas, return_inverse=True)
    dense = dense.reshape(-1)
    count = np.bincount(dense, minlength=ids.size)
    total = np.bincount(dense, weights=distance, minlength=ids.size)
    persons = distinct_per_group(dense, owners, ids.size)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = total / count
    return LocalDisplacements(ids, count, persons, total, mean)


def displacement_measures(
    point_xy: np.ndarray, representative_xy: np.ndarray, area: np.ndarray,
    owner: np.ndarray, k: int,
) -> dict[str, float | int]:
    """Summarize Andrienko's displacement measures as aggregates over at least k persons.

    Parameters
    ----------
    point_xy : np.ndarray, shape (n, 2)
        Original points, in metres (projected CRS).
    representative_xy : np.ndarray, shape (n, 2)
        Representative (cell centroid) of each point, in the same CRS.
    area : np.ndarray of int, shape (n,)
        Id of the area (cell) holding each point.
    owner : np.ndarray of int, shape (n,)
        Owner (person) of each point.
    k : int
        Fewest distinct persons an aggregate may be computed over.

    Returns
    -------
    dict
        All distances in metres:

        ``n_points``, ``n_persons``, ``n_areas``
            Points measured, their distinct owners, and areas holding points.
        ``n_areas_k``
            Areas whose points belong to at least ``k`` persons.
        ``local_mean_avg``
            Average, over those ``n_areas_k`` areas, of the area's average displacement
            (each area weighs the same, whatever its number of points); NaN without one.
        ``global_sum``, ``global_mean``
            Sum and average (over points) of all displacements; NaN when the points
            belong to fewer than ``k`` persons.

        There is no maximum: it is one point's displacement, a figure about one person.

    Raises
    ------
    ValueError
        If the shapes disagree, an id is not an integer, a coordinate is not finite, or
        ``k`` is below 1.

    References
    ----------
    .. [1] Monreale et al., Trans. Data Privacy 3 (2010), Section 6.1.2.
    .. [2] N. Andrienko and G. Andrienko, "Spatial generalization and aggregation of
       massive movement data", IEEE TVCG 17(2) (2011).

    Examples
    --------
    >>> xy = np.array([[3.0, 0.0], [0.0, 4.0], [10.0, 0.0]])
    >>> m = displacement_measures(xy, np.zeros((3, 2)), np.array([7, 7, 2]),
    ...                           np.array([0, 1, 0]), k=2)
    >>> m["local_mean_avg"], m["global_mean"]  # area 2 has one person: not in the local
    (3.5, 5.666666666666667)
    """
    if k < 1:
        raise InputError(f"k must be at least 1, got {k}")
    local = local_displacements(point_xy, representative_xy, area, owner)
    n_points = int(local.count.sum())
    n_persons = int(distinct_values(np.asarray(owner)).size)
    supported = local.persons >= k
    nan = float("nan")
    enough = n_persons >= k
    return {
        "n_points": n_points,
        "n_persons": n_persons,
        "n_areas": int(local.area.size),
        "n_areas_k": int(supported.sum()),
        "local_mean_avg": float(local.mean[supported].mean()) if supported.any() else nan,
        "global_sum": float(local.total.sum()) if enough else nan,
        "global_mean": float(local.total.sum()) / n_points if enough and n_points else nan,
    }


def _ids(values: np.ndarray, shape: tuple[int, ...], name: str) -> np.ndarray:
    """``values`` as integer ids of the given shape."""
    ids = np.asarray(values)
    if ids.shape != shape or not (np.issubdtype(ids.dtype, np.integer) or ids.size == 0):
        raise InputError(f"{name} must be {shape[0]} integer ids, got {ids.shape}")
    return ids.astype(np.int64)


def _displacements(point_xy: np.ndarray, representative_xy: np.ndarray) -> np.ndarray:
    """Euclidean distance from each point to its representative, after shape checks."""
    points = np.asarray(point_xy, dtype=np.float64)
    representatives = np.asarray(representative_xy, dtype=np.float64)
    if points.ndim != 2 or points.shape[1] != 2 or points.shape != representatives.shape:
        raise InputError(
            f"point_xy and representative_xy must both have shape (n, 2), "
            f"got {points.shape} and {representatives.shape}"
        )
    if not (np.isfinite(points).all() and np.isfinite(representatives).all()):
        raise InputError("coordinates must be finite; drop or repair NaN/inf points first")
    return np.hypot(*(points - representatives).T)
