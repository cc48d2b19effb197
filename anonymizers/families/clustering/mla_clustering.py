"""MLA's clustering (seed 001, §4.3): heuristic, k'-means and iterative k'-means, and the repair.

Sizes count distinct persons, never trajectories: a person with two trajectories in one
cluster hides nobody. The paper's algorithms are followed with that one change (Alg. 2 adds
trajectories of new persons until the cluster has ``k`` persons; Alg. 4 keeps clusters of
``k`` persons and stops when fewer than ``2k`` persons are left).

k'-means runs on the ``<d_x, d_y, d_t>`` representation of §4.3.2 (part A of eq. 8). Its
points are often equal (every trajectory of one length has the same vector), and k-means
cannot make more non-empty clusters than there are distinct vectors, so ``k'`` is capped at
that number: equal vectors end in one cluster either way.

The repair is the project's rule, not the paper's: MLA's plain k'-means leaves up to ~20% of
trajectories in clusters below ``k`` (Fig. 5b), which we never publish. Below-``k`` clusters
are merged, fewest persons first (ties: lowest index), into the cluster whose centroid in the
clustering representation is nearest (ties: lowest index); when all is one cluster and it
still has fewer than ``k`` persons, it is suppressed.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from anonymizers.checks import checked_k
from anonymizers.families.clustering.mla_alignment import Profile

__all__ = [
    "Repair",
    "TrajectoryCells",
    "heuristic_clusters",
    "iterative_kprime_means_clusters",
    "kprime_means_clusters",
    "person_count",
    "repair_clusters",
]


@dataclass(frozen=True, eq=False)
class TrajectoryCells:
    """Discretized trajectories laid end to end, each in time order.

    Attributes
    ----------
    cells
        int64 (P, 3): x cell, y cell and time bin of every point.
    lengths
        int64 (n,): points per trajectory (all >= 1).
    person
        int64 (n,): person index of each trajectory.
    """

    cells: np.ndarray
    lengths: np.ndarray
    person: np.ndarray

    @property
    def owner(self) -> np.ndarray:
        """int64 (P,): the trajectory of each point."""
        return np.repeat(np.arange(len(self.lengths)), self.lengths)

    @property
    def starts(self) -> np.ndarray:
        """int64 (n,): index of each trajectory's first point."""
        return np.concatenate([[0], np.cumsum(self.lengths)[:-1]]).astype(np.int64)

    def points_of(self, trajectory: int) -> np.ndarray:
        """int64 (l, 3): the cells of one trajectory."""
        start = int(self.starts[trajectory])
        return self.cells[start:start + int(self.lengths[trajectory])]


@dataclass(frozen=True, eq=False)
class Repair:
    """Clusters after the project's privacy repair.

    Attributes
    ----------
    clusters
        Trajectory indices of each cluster kept, every one with at least ``k`` persons.
    suppressed
        Trajectory indices of clusters that could not reach ``k`` persons.
    merged
        Number of below-``k`` clusters merged into another one.
    below_k_share
        Share of trajectories that were in clusters of fewer than ``k`` persons before it.
    """

    clusters: tuple[np.ndarray, ...]
    suppressed: tuple[np.ndarray, ...]
    merged: int
    below_k_share: float


def person_count(members: np.ndarray, person: np.ndarray) -> int:
    """Number of distinct persons among trajectories ``members``."""
    return int(np.unique(person[members]).size)


def heuristic_clusters(data: TrajectoryCells, k: int, bits_per_point: int,
                       rng: np.random.Generator) -> list[np.ndarray]:
    """Algorithm 2: grow each cluster from a random trajectory by least added loss.

    Each step aligns the cluster's profile (progressive SA so far) with every remaining
    trajectory of a person not yet in the cluster, in one batched DynamicSA sweep, and adds
    the cheapest, until the cluster holds ``k`` persons or no candidate is left.

    References
    ----------
    .. [1] Shaham et al., MLA, §4.3.1, Algorithm 2.
    """
    checked_k(k)
    owner = data.owner
    waiting = np.ones(len(data.lengths), dtype=bool)
    clusters = []
    while waiting.any():
        first = int(rng.choice(np.flatnonzero(waiting)))
        waiting[first] = False
        clusters.append(_grow(data, owner, waiting, first, k, bits_per_point))
    return clusters


def _grow(data: TrajectoryCells, owner: np.ndarray, waiting: np.ndarray, first: int, k: int,
          bits_per_point: int) -> np.ndarray:
    # The cluster is grown to k persons, so a column any member skips will not be published.
    profile = Profile(data.points_of(first), bits_per_point, skip_budget=0)
    members = [first]
    while len(np.unique(data.person[members])) < k:
        open_ = waiting & ~np.isin(data.person, data.person[members])
        candidates = np.flatnonzero(open_)
        if candidates.size == 0:
            break
        losses = profile.added_losses(data.cells[open_[owner]], data.lengths[candidates])
        pick = int(candidates[np.argmin(losses)])
        profile.add(data.points_of(pick))
        waiting[pick] = False
        members.append(pick)
    return np.array(members, dtype=np.int64)


def kprime_means_clusters(features: np.ndarray, k: int, seed: int) -> list[np.ndarray]:
    """Plain k'-means with ``k' = floor(n / k)`` (at least 1) on ``<d_x, d_y, d_t>``.

    References
    ----------
    .. [1] Shaham et al., MLA, §4.3.2 (eq. 9-10) and Algorithm 4, line 2.
    """
    checked_k(k)
    return _kmeans_groups(np.arange(len(features)), features, k, seed)


def iterative_kprime_means_clusters(features: np.ndarray, person: np.ndarray, k: int,
                                    seed: int) -> list[np.ndarray]:
    """Algorithm 4: keep the clusters of ``k`` persons, re-cluster the rest, until < 2k.

    The pool's size is counted in persons. If a round keeps no cluster (possible only when
    persons have several trajectories) the pool becomes one cluster, as at the end.

    References
    ----------
    .. [1] Shaham et al., MLA, §4.3.2, Algorithm 4.
    """
    checked_k(k)
    pool = np.arange(len(features))
    clusters: list[np.ndarray] = []
    for round_ in range(len(features) + 1):
        groups = _kmeans_groups(pool, features[pool], k, seed + round_)
        kept = [g for g in groups if person_count(g, person) >= k]
        clusters.extend(kept)
        if kept:
            pool = np.setdiff1d(pool, np.concatenate(kept))
        if not kept or person_count(pool, person) < 2 * k:
            break
    if pool.size:
        clusters.append(pool)
    return clusters


def _kmeans_groups(members: np.ndarray, features: np.ndarray, k: int, seed: int
                   ) -> list[np.ndarray]:
    from sklearn.cluster import KMeans  # heavy import, only when clustering runs

    n_distinct = len(np.unique(features, axis=0))
    n_clusters = max(1, min(len(members) // k, n_distinct))
    if n_clusters == 1:
        return [members]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # equal points: sklearn warns, the labels are right
        labels = KMeans(n_clusters=n_clusters, n_init=1, random_state=seed).fit_predict(
            features)
    return [members[labels == c] for c in np.unique(labels)]


def repair_clusters(clusters: Sequence[np.ndarray], person: np.ndarray, features: np.ndarray,
                    k: int) -> Repair:
    """Merge clusters of fewer than ``k`` persons into their nearest, or suppress them.

    Parameters
    ----------
    clusters
        Trajectory indices per cluster (a partition of the trajectories).
    person
        int64 (n,): person of each trajectory.
    features
        float64 (n, d): the clustering representation; distances are between centroids.
    k
        Persons every published cluster needs.

    Returns
    -------
    Repair

    References
    ----------
    .. [1] Shaham et al., MLA, §4.3.2 and Fig. 5b (the share this repair removes).
    """
    checked_k(k)
    groups = [np.asarray(c, dtype=np.int64) for c in clusters if len(c)]
    sizes = np.array([person_count(g, person) for g in groups], dtype=np.int64)
    n_traj = sum(len(g) for g in groups)
    share = sum(len(g) for g, s in zip(groups, sizes, strict=True) if s < k) / max(n_traj, 1)
    sums = np.array([features[g].sum(axis=0) for g in groups]).reshape(len(groups), -1)
    counts = np.array([len(g) for g in groups], dtype=np.float64)
    alive = np.ones(len(groups), dtype=bool)
    merged = 0
    while alive.sum() > 1 and (sizes[alive] < k).any():
        small = int(np.argmin(np.where(alive & (sizes < k), sizes, np.iinfo(np.int64).max)))
        target = _nearest(sums, counts, alive, small)
        groups[target] = np.sort(np.concatenate([groups[target], groups[small]]))
        sizes[target] = person_count(groups[target], person)
        sums[target] += sums[small]
        counts[target] += counts[small]
        alive[small] = False
        merged += 1
    kept = tuple(groups[g] for g in np.flatnonzero(alive & (sizes >= k)))
    dropped = tuple(groups[g] for g in np.flatnonzero(alive & (sizes < k)))
    return Repair(kept, dropped, merged, float(share))


def _nearest(sums: np.ndarray, counts: np.ndarray, alive: np.ndarray, small: int) -> int:
    centroids = sums / counts[:, None]
    distance = np.linalg.norm(centroids - centroids[small], axis=1)
    distance[~alive] = np.inf
    distance[small] = np.inf
    return int(np.argmin(distance))
