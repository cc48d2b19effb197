"""Split a dataset's rows into leaf tables by trajectory, so that they load in parallel.

A dataset's partition of raw.points is itself partitioned into leaves, each created,
filled, indexed and analysed on a connection of its own, so a load keeps every core busy
instead of one. Leaves are cut between trajectories in traj_id byte order ("C"
collation, the order Arrow and Python sort strings in); a trajectory never straddles two.

The partition key is not traj_id but a surrogate ``traj_key`` (bigint) that the loader
gives every trajectory: the leaf's number in the high 32 bits, the trajectory's rank in
the dataset (0, 1, 2, ... in traj_id byte order, over the trajectories kept) in the low
ones. Leaf n is then FOR VALUES FROM (n * 2^32) TO ((n + 1) * 2^32), with a CHECK of the
same range: bounds that depend on nothing but the leaf's number. Partition bounds and
CHECK constraints are printed to anyone by pg_get_expr and pg_get_constraintdef (the
catalog is world-readable); bounds on traj_id named raw trajectories, which name their
person ('381_0001'): issue 7, finding 3. traj_key orders a dataset's trajectories as
traj_id does; nothing outside the loader relies on it.

The price of the leaves is paid by queries that read a whole dataset: an Append over the
leaves, 2-11 % slower than one table (README, "How a load runs"). Windows cut by time read
the same.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from anonymizers.loading.binary_copy import PointRows

__all__ = ["KEY_STRIDE", "MAX_LEAVES", "MIN_LEAF_ROWS", "Leaf", "LeafPlan", "plan_leaves",
           "split_leaves"]

# One leaf per core (of this machine, where the embedded cluster runs; a remote server
# has as many, as a rule), at most 4; and a leaf holds MIN_LEAF_ROWS rows at least: a
# smaller dataset loads in well under a second, and one table reads it fastest.
MAX_LEAVES = min(os.cpu_count() or 1, 4)
MIN_LEAF_ROWS = 200_000
KEY_STRIDE = 1 << 32  # traj_key range of one leaf: room for 4 billion trajectories


@dataclass
class Leaf:
    """Rows whose traj_key lies in [lower, upper): the leaf's own key range."""

    number: int
    rows: PointRows

    @property
    def lower(self) -> int:
        return self.number * KEY_STRIDE

    @property
    def upper(self) -> int:
        return (self.number + 1) * KEY_STRIDE


@dataclass
class LeafPlan:
    """Per row (in load order): its leaf and its trajectory's traj_key."""

    leaf_of_row: np.ndarray
    traj_key: np.ndarray  # int64
    leaves: int


def plan_leaves(traj_codes: np.ndarray, n_codes: int) -> LeafPlan:
    """Leaves of about equal row counts, cut between trajectories, and the rows' keys.

    ``traj_codes`` numbers each row's traj_id in byte order, among ``n_codes`` ids read
    (some may have lost every row to the validation: the ranks skip them).
    """
    rows_per_code = np.bincount(traj_codes, minlength=n_codes)
    parts = max(1, min(MAX_LEAVES, len(traj_codes) // MIN_LEAF_ROWS))
    cuts = _cuts(rows_per_code, parts)
    leaf_of_code = np.searchsorted(cuts, np.arange(n_codes), side="right")
    rank = np.cumsum(rows_per_code > 0) - 1  # of the kept trajectories, in byte order
    key_of_code = leaf_of_code.astype(np.int64) * KEY_STRIDE + rank
    return LeafPlan(leaf_of_code[traj_codes], key_of_code[traj_codes], len(cuts) + 1)


def split_leaves(rows: PointRows, plan: LeafPlan) -> list[Leaf]:
    """The rows of each leaf of ``plan``, in load order (``rows.traj_key`` is the plan's)."""
    return [Leaf(number, rows.take(np.flatnonzero(plan.leaf_of_row == number)))
            for number in range(plan.leaves)]


def _cuts(rows_per_code: np.ndarray, parts: int) -> np.ndarray:
    """The first code of every leaf but the first; no leaf is left empty.

    A cut goes after the first code at which the cumulative row count reaches its share.
    Distinct cuts then enclose rows between them; only a cut past the last code with rows
    (one trajectory can hold most rows) would leave the last leaf empty, so it is dropped.
    """
    cumulative = np.cumsum(rows_per_code)
    targets = cumulative[-1] * np.arange(1, parts) / parts
    cuts = np.unique(np.searchsorted(cumulative, targets) + 1)
    return cuts[cuts <= np.flatnonzero(rows_per_code)[-1]]
