"""MLA end to end (seed 001): cluster, align, publish only regions of k persons, measure.

One entry function per clustering method, :func:`mla_heuristic`, :func:`mla_kmeans` and
:func:`mla_iterative_kmeans`, each taking points sorted by trajectory then time and returning
an :class:`MlaRelease`.

What we publish, where the paper is open:

* Clusters. Every published cluster has at least ``k`` distinct persons; smaller ones are
  merged into their nearest cluster or suppressed (:func:`repair_clusters`).
* Columns. Progressive SA over a cluster yields columns; a member aligned with a gap has no
  point there. The paper publishes every column for every member (Fig. 3), even one whose
  region is a single person's cell; we publish a column, as the DGH node of the points it has
  (clipped to the grid), only when those points belong to at least ``k`` distinct persons,
  and otherwise drop it and suppress its points. Then, so that the cluster's whole published
  sequence is matched in order by at least ``k`` persons (not only each region by some k),
  columns are dropped, least populated first, until k persons have a trajectory with a point
  in every remaining column (:func:`_columns_matched_in_full`). The alignment knows the
  first rule (its skip budget, :mod:`~anonymizers.families.clustering.mla_alignment`), so
  it pays to fill columns rather than lose them. Every published region holds at least
  ``k`` persons' points, and a member's points keep their order in the published sequence.
  A cluster left with no column is not published.
* Loss (eq. 3-4 with suppression as generalization to the root): a point in a published
  region costs the region's DGH heights on x, y and t; every other point (aligned with a gap,
  in a dropped column, in an unpublished cluster) costs the grid's bits per point.
* Length increase (§5.1, Fig. 4c-d): per trajectory of a published cluster, the number of
  published regions minus its number of points, averaged (negative when suppression
  outweighs alignment).
* Area per location (eq. 5-6): ``S`` is the published region's area, ``n`` its points;
  suppressed points release nothing and are not counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from anonymizers.checks import checked_k
from anonymizers.errors import InputError
from anonymizers.families.clustering.mla_alignment import progressive_alignment
from anonymizers.families.clustering.mla_clustering import (
    TrajectoryCells,
    heuristic_clusters,
    iterative_kprime_means_clusters,
    kprime_means_clusters,
    repair_clusters,
)
from anonymizers.families.clustering.mla_loss import (
    Grid,
    full_suppression_bits,
    lca_height,
    root_distances,
)

__all__ = [
    "MlaCluster",
    "MlaRelease",
    "mla_heuristic",
    "mla_iterative_kmeans",
    "mla_kmeans",
]


@dataclass(frozen=True, eq=False)
class MlaCluster:
    """One published cluster: its generalized trajectory and who is behind it.

    Attributes
    ----------
    trajectories
        Trajectory ids (as given) of the members, ascending.
    persons
        Distinct person ids of the members (at least ``k``).
    regions
        float64 (r, 6): ``x_lo, x_hi, y_lo, y_hi`` (metres) and ``t_lo, t_hi`` (epoch
        seconds) of each published region, in sequence order; half-open cell edges.
    region_points, region_persons
        int64 (r,): points generalized into each region, and their distinct persons (>= k).
    matched_persons
        Distinct persons with a point in every region, in order (>= k): the cluster's size
        as published.
    suppressed_points
        Members' points not published (gaps and dropped columns).
    loss_bits
        Eq. 3 summed over the members, suppressions included.
    length_increase
        Mean over members of ``r`` minus the member's number of points.

    References
    ----------
    .. [1] Shaham et al., MLA, §3.1.2 and §4.2.
    """

    trajectories: np.ndarray
    persons: np.ndarray
    regions: np.ndarray
    region_points: np.ndarray
    region_persons: np.ndarray
    matched_persons: int
    suppressed_points: int
    loss_bits: int
    length_increase: float


@dataclass(frozen=True, eq=False)
class MlaRelease:
    """What the pipeline publishes from one MLA run, with the paper's metrics.

    Attributes
    ----------
    method, k, grid
        The method's name, the privacy requirement and the discretization.
    clusters
        The published clusters.
    point_cluster, point_region
        int64 per input point: its cluster and region index, -1 where it is suppressed.
    loss_bits, full_suppression_bits
        Total loss (eq. 4 over x, y and t) and its upper bound, every point suppressed.
    suppressed_points
        Input points not published.
    merged_clusters, suppressed_clusters, suppressed_trajectories
        Below-``k`` clusters merged by the repair; clusters not published (below ``k`` with
        nothing to merge into, or with no column of ``k`` persons) and their trajectories.
    below_k_share
        Share of trajectories in clusters of fewer than ``k`` persons before the repair (the
        paper's Fig. 5b for k'-means).
    length_increase, area_per_location
        §5.1's average increase in trajectory length and eq. 6 (square metres).

    References
    ----------
    .. [1] Shaham et al., MLA, §3.2.3 (eq. 5-6) and §5.1 (Fig. 4, the 474,572-bit bound).
    """

    method: str
    k: int
    grid: Grid
    clusters: tuple[MlaCluster, ...]
    point_cluster: np.ndarray
    point_region: np.ndarray
    loss_bits: int
    full_suppression_bits: int
    suppressed_points: int
    merged_clusters: int
    suppressed_clusters: int
    suppressed_trajectories: int
    below_k_share: float
    length_increase: float
    area_per_location: float

    @property
    def cluster_loss_bits(self) -> np.ndarray:
        """int64 per published cluster: its loss in bits (Fig. 4b averages these)."""
        return np.array([c.loss_bits for c in self.clusters], dtype=np.int64)

    def summary(self) -> dict[str, Any]:
        """The scalar figures, for logs and benchmark tables."""
        per_cluster = self.cluster_loss_bits
        return {
            "method": self.method, "k": self.k, "clusters": len(self.clusters),
            "loss_bits": self.loss_bits, "full_suppression_bits": self.full_suppression_bits,
            "mean_cluster_loss_bits": float(per_cluster.mean()) if len(per_cluster) else 0.0,
            "suppressed_points": self.suppressed_points,
            "merged_clusters": self.merged_clusters,
            "suppressed_clusters": self.suppressed_clusters,
            "suppressed_trajectories": self.suppressed_trajectories,
            "below_k_share": self.below_k_share, "length_increase": self.length_increase,
            "area_per_location_m2": self.area_per_location,
        }


def mla_heuristic(traj: np.ndarray, person: np.ndarray, t: np.ndarray, x: np.ndarray,
                  y: np.ndarray, *, k: int, epsilon: float = 10.0, time_bin: float = 3600.0,
                  seed: int = 0, grid: Grid | None = None) -> MlaRelease:
    """MLA with heuristic clustering (Algorithms 2-3), repaired to ``k`` persons per cluster.

    Parameters
    ----------
    traj, person
        Trajectory and person id of every point; one person per trajectory.
    t, x, y
        Epoch seconds and projected metres; points sorted by ``traj`` then ``t``.
    k
        Distinct persons every published cluster and region must hold.
    epsilon, time_bin
        Grid cell side (metres) and time bin (seconds); the paper uses 10 m and hours.
    seed
        Seeds the random first member of each cluster.
    grid
        A fixed grid; by default the smallest aligned grid covering the points.

    Returns
    -------
    MlaRelease

    References
    ----------
    .. [1] Shaham et al., MLA, §4.3.1, Algorithms 2 and 3.
    """
    data, ids, grid = _prepare(traj, person, t, x, y, epsilon, time_bin, grid)
    clusters = heuristic_clusters(data, checked_k(k), grid.bits_per_point,
                                  np.random.default_rng(seed))
    return _release("mla_heuristic", clusters, data, ids, grid, k)


def mla_kmeans(traj: np.ndarray, person: np.ndarray, t: np.ndarray, x: np.ndarray,
               y: np.ndarray, *, k: int, epsilon: float = 10.0, time_bin: float = 3600.0,
               seed: int = 0, grid: Grid | None = None) -> MlaRelease:
    """MLA with plain k'-means on ``<d_x, d_y, d_t>``, repaired to ``k`` persons per cluster.

    Parameters and returns as :func:`mla_heuristic`; ``seed`` seeds k-means.
    ``below_k_share`` reports how much the paper's method would have left below ``k``.

    References
    ----------
    .. [1] Shaham et al., MLA, §4.3.2 and §5.2 (Fig. 5).
    """
    data, ids, grid = _prepare(traj, person, t, x, y, epsilon, time_bin, grid)
    features = root_distances(data.lengths, grid.depths)
    clusters = kprime_means_clusters(features, checked_k(k), seed)
    return _release("mla_kmeans", clusters, data, ids, grid, k)


def mla_iterative_kmeans(traj: np.ndarray, person: np.ndarray, t: np.ndarray, x: np.ndarray,
                         y: np.ndarray, *, k: int, epsilon: float = 10.0,
                         time_bin: float = 3600.0, seed: int = 0,
                         grid: Grid | None = None) -> MlaRelease:
    """MLA with iterative k'-means (Algorithm 4), repaired to ``k`` persons per cluster.

    Parameters and returns as :func:`mla_heuristic`; ``seed`` seeds k-means.

    References
    ----------
    .. [1] Shaham et al., MLA, §4.3.2, Algorithm 4.
    """
    data, ids, grid = _prepare(traj, person, t, x, y, epsilon, time_bin, grid)
    features = root_distances(data.lengths, grid.depths)
    clusters = iterative_kprime_means_clusters(features, data.person, checked_k(k), seed)
    return _release("mla_iterative_kmeans", clusters, data, ids, grid, k)


def _release(method: str, clusters: Sequence[np.ndarray], data: TrajectoryCells,
             ids: np.ndarray, grid: Grid, k: int) -> MlaRelease:
    features = root_distances(data.lengths, grid.depths)
    repair = repair_clusters(clusters, data.person, features, k)
    point_cluster = np.full(len(data.cells), -1, dtype=np.int64)
    point_region = np.full(len(data.cells), -1, dtype=np.int64)
    published: list[MlaCluster] = []
    growth: list[np.ndarray] = []
    unpublished = list(repair.suppressed)
    for members in repair.clusters:
        cluster, points, regions = _publish(np.sort(members), data, ids, grid, k)
        if cluster is None:
            unpublished.append(members)
            continue
        point_cluster[points] = np.where(regions >= 0, len(published), -1)
        point_region[points] = regions
        growth.append(len(cluster.regions) - data.lengths[np.sort(members)])
        published.append(cluster)
    return _assemble(method, k, grid, data, published, point_cluster, point_region, growth,
                     repair.merged, unpublished, repair.below_k_share)


def _assemble(method: str, k: int, grid: Grid, data: TrajectoryCells,
              published: list[MlaCluster], point_cluster: np.ndarray,
              point_region: np.ndarray, growth: list[np.ndarray], merged: int,
              unpublished: list[np.ndarray], below_k_share: float) -> MlaRelease:
    suppressed = int((point_region < 0).sum())
    lost_clusters = sum(int(data.lengths[m].sum()) for m in unpublished) * grid.bits_per_point
    return MlaRelease(
        method=method, k=int(k), grid=grid, clusters=tuple(published),
        point_cluster=point_cluster, point_region=point_region,
        loss_bits=sum(c.loss_bits for c in published) + lost_clusters,
        full_suppression_bits=full_suppression_bits(len(data.cells), grid),
        suppressed_points=suppressed, merged_clusters=merged,
        suppressed_clusters=len(unpublished),
        suppressed_trajectories=sum(len(m) for m in unpublished),
        below_k_share=below_k_share,
        length_increase=float(np.concatenate(growth).mean()) if growth else 0.0,
        area_per_location=_area_per_location(published),
    )


def _publish(members: np.ndarray, data: TrajectoryCells, ids: np.ndarray, grid: Grid, k: int
             ) -> tuple[MlaCluster | None, np.ndarray, np.ndarray]:
    """Align one cluster and keep its columns of ``k`` persons: cluster, points, regions."""
    points = _point_index(members, data)
    lengths = data.lengths[members]
    owner_person = np.repeat(data.person[members], lengths)
    budget = int(np.unique(owner_person).size) - k
    alignment = progressive_alignment(data.cells[points], lengths, grid.bits_per_point, budget)
    column = alignment.point_column
    column_persons = _persons_per_column(column, owner_person, len(alignment.count))
    owner = np.repeat(np.arange(members.size), lengths)
    presence = _presence(column, owner, members.size, len(alignment.count))
    keep = _columns_matched_in_full(presence, data.person[members], column_persons >= k, k)
    rank = np.cumsum(keep) - 1
    region = np.where((column >= 0) & keep[np.maximum(column, 0)], rank[column], -1)
    if not keep.any():
        return None, points, region
    heights = lca_height(alignment.lo[keep], alignment.hi[keep])
    suppressed = int((region < 0).sum())
    loss = int((alignment.count[keep] * heights.sum(axis=1)).sum())
    mask = (np.int64(1) << heights) - 1
    node_lo = alignment.lo[keep] & ~mask
    cluster = MlaCluster(
        trajectories=ids[members], persons=np.unique(owner_person),
        regions=grid.region_bounds(node_lo, node_lo | mask),
        region_points=alignment.count[keep], region_persons=column_persons[keep],
        matched_persons=int(np.unique(data.person[members][presence[:, keep].all(axis=1)]).size),
        suppressed_points=suppressed, loss_bits=loss + suppressed * grid.bits_per_point,
        length_increase=float((int(keep.sum()) - lengths).mean()),
    )
    return cluster, points, region


def _presence(column: np.ndarray, owner: np.ndarray, n_members: int,
              n_columns: int) -> np.ndarray:
    """bool (members, columns): which member has a point in which column."""
    aligned = column >= 0
    presence = np.zeros((n_members, n_columns), dtype=bool)
    presence[owner[aligned], column[aligned]] = True
    return presence


def _columns_matched_in_full(presence: np.ndarray, member_person: np.ndarray,
                             keep: np.ndarray, k: int) -> np.ndarray:
    """The columns to publish: a subset of ``keep`` in which at least ``k`` distinct persons
    have a trajectory with a point in *every* kept column, so that the cluster's whole
    generalized trajectory (not only each region) is matched by k persons in order.

    Greedy: while fewer than k persons match all kept columns, drop the kept column that
    the fewest member trajectories have a point in (its points are suppressed). It ends
    with at least one column when ``keep`` has one, since each kept column holds k persons.
    """
    keep = keep.copy()
    while keep.any():
        full = presence[:, keep].all(axis=1)
        if np.unique(member_person[full]).size >= k:
            break
        present = np.where(keep, presence.sum(axis=0), np.iinfo(np.int64).max)
        keep[int(np.argmin(present))] = False
    return keep


def _persons_per_column(column: np.ndarray, person: np.ndarray, n_columns: int) -> np.ndarray:
    aligned = column >= 0
    pairs = np.unique(np.column_stack([column[aligned], person[aligned]]), axis=0)
    return np.bincount(pairs[:, 0], minlength=n_columns).astype(np.int64)


def _point_index(members: np.ndarray, data: TrajectoryCells) -> np.ndarray:
    """Indices of the members' points, member by member, in time order."""
    lengths = data.lengths[members]
    offsets = data.starts[members] - (np.cumsum(lengths) - lengths)
    return np.repeat(offsets, lengths) + np.arange(int(lengths.sum()))


def _area_per_location(clusters: Sequence[MlaCluster]) -> float:
    """Eq. 6 with eq. 5's ``S`` taken as the published region's area."""
    if not clusters:
        return 0.0
    regions = np.concatenate([c.regions for c in clusters])
    points = np.concatenate([c.region_points for c in clusters]).astype(np.float64)
    area = (regions[:, 1] - regions[:, 0]) * (regions[:, 3] - regions[:, 2])
    return float((points * area).sum() / points.sum())


def _prepare(traj: np.ndarray, person: np.ndarray, t: np.ndarray, x: np.ndarray,
             y: np.ndarray, epsilon: float, time_bin: float, grid: Grid | None
             ) -> tuple[TrajectoryCells, np.ndarray, Grid]:
    """Check the input and discretize it: trajectories of cells, their ids, the grid."""
    traj_a, person_a = _ints(traj, "traj"), _ints(person, "person")
    t_a, x_a, y_a = (_floats(v, name) for v, name in ((t, "t"), (x, "x"), (y, "y")))
    if len({len(traj_a), len(person_a), len(t_a), len(x_a), len(y_a)}) != 1:
        raise InputError("traj, person, t, x and y must have the same length")
    _check_order(traj_a, t_a)
    first = np.flatnonzero(np.r_[True, traj_a[1:] != traj_a[:-1]])
    lengths = np.diff(np.r_[first, len(traj_a)]).astype(np.int64)
    if (np.repeat(person_a[first], lengths) != person_a).any():
        raise InputError("each trajectory must belong to one person")
    grid = grid or Grid.covering(x_a, y_a, t_a, epsilon, time_bin)
    data = TrajectoryCells(grid.cells(x_a, y_a, t_a), lengths, person_a[first])
    return data, traj_a[first], grid


def _check_order(traj: np.ndarray, t: np.ndarray) -> None:
    if len(traj) == 0:
        raise InputError("no points: MLA needs at least one trajectory")
    step = np.diff(traj)
    if (step < 0).any():
        raise InputError("points must be sorted by traj (then t)")
    if ((step == 0) & (np.diff(t) < 0)).any():
        raise InputError("points of a trajectory must be sorted by t")


def _ints(values: np.ndarray, name: str) -> np.ndarray:
    array = np.asarray(values)
    if array.ndim != 1 or not np.issubdtype(array.dtype, np.integer):
        raise InputError(f"{name} must be a 1-D integer array, got {array.dtype} {array.shape}")
    return array.astype(np.int64)


def _floats(values: np.ndarray, name: str) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1 or not np.isfinite(array).all():
        raise InputError(f"{name} must be a 1-D array of finite numbers")
    return array
