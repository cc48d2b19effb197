"""Split a dataset's rows into leaf tables by trajectory, so that they load in parallel.

A dataset's partition of raw.points is itself partitioned into leaves, each created,
filled, indexed and analysed on a connection of its own, so a load keeps every core busy
instead of one. The rows stream in (the file is never held whole, readers.py), so the
leaves fill side by side: each trajectory, when its first row comes, goes to the leaf
that has received the fewest rows so far, and all its rows follow it there (a trajectory
never straddles two leaves). The number of leaves is fixed before the first row, from
the file's estimated size.

The partition key is not traj_id but a surrogate ``traj_key`` (bigint) that the loader
gives every trajectory: the leaf's number in the high 32 bits, the trajectory's rank in
the dataset (0, 1, 2, ... in the order the trajectories first come, over those kept: the
file's order, or traj_id byte order with --sort) in the low ones. Leaf n is then FOR
VALUES FROM (n * 2^32) TO ((n + 1) * 2^32), with a CHECK of the same range: bounds that
depend on nothing but the leaf's number. Partition bounds and CHECK constraints are
printed to anyone by pg_get_expr and pg_get_constraintdef (the catalog is world-
readable); bounds on traj_id named raw trajectories, which name their person
('381_0001'). Nothing outside the loader relies on traj_key.

The price of the leaves is paid by queries that read a whole dataset: an Append over the
leaves, 2-11 % slower than one table (README, "How a load runs"). Windows cut by time read
the same.
"""

from __future__ import annotations

import os
import queue
from dataclasses import dataclass, field

import numpy as np

__all__ = ["KEY_STRIDE", "MAX_LEAVES", "MIN_LEAF_ROWS", "Leaf", "LeafRouter", "leaf_count"]

# One leaf per core (of this machine, where the embedded cluster runs; a remote server
# has as many, as a rule), at most 4; and a leaf holds MIN_LEAF_ROWS rows at least: a
# smaller dataset loads in well under a second, and one table reads it fastest.
MAX_LEAVES = min(os.cpu_count() or 1, 4)
MIN_LEAF_ROWS = 200_000
KEY_STRIDE = 1 << 32  # traj_key range of one leaf: room for 4 billion trajectories
FEED_DEPTH = 2  # COPY buffers waiting per leaf: bounds what the loader holds


@dataclass
class Leaf:
    """Rows whose traj_key lies in [lower, upper): the leaf's own key range.

    ``feed`` carries its COPY stream from the loader to the connection that writes it.
    """

    number: int
    feed: queue.Queue = field(default_factory=lambda: queue.Queue(maxsize=FEED_DEPTH))
    rows: int = 0  # rows sent to it so far

    @property
    def lower(self) -> int:
        return self.number * KEY_STRIDE

    @property
    def upper(self) -> int:
        return (self.number + 1) * KEY_STRIDE


def leaf_count(estimated_rows: int) -> int:
    """How many leaves a dataset of about ``estimated_rows`` fixes is cut into."""
    return max(1, min(MAX_LEAVES, estimated_rows // MIN_LEAF_ROWS))


class LeafRouter:
    """Each trajectory's leaf and traj_key, given as its first kept row comes.

    Holds one key per trajectory read (O(trajectories)), nothing per row.
    """

    def __init__(self, leaves: int) -> None:
        self.load = np.zeros(leaves, dtype=np.int64)  # rows given to each leaf so far
        self.key = np.zeros(0, dtype=np.int64)  # per traj code; -1: no kept row yet
        self.trajectories = 0  # those with a key: the kept ones

    def route(self, traj: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(leaf, traj_key) of each row of a chunk (``traj``: codes, in load order)."""
        if len(self.key) <= int(traj.max()):
            grown = np.full(max(int(traj.max()) + 1, 2 * len(self.key)), -1, dtype=np.int64)
            grown[:len(self.key)] = self.key
            self.key = grown
        codes, first, counts = np.unique(traj, return_index=True, return_counts=True)
        known = self.key[codes] >= 0
        self.load += np.bincount(self.key[codes[known]] // KEY_STRIDE,
                                 weights=counts[known], minlength=len(self.load)).astype(np.int64)
        fresh = np.flatnonzero(~known)
        fresh = fresh[np.argsort(first[fresh])]  # in order of appearance
        load, leaves = self.load.tolist(), []
        for count in counts[fresh].tolist():  # plain ints: ~0.3 us a trajectory
            leaf = load.index(min(load))
            leaves.append(leaf)
            load[leaf] += count
        self.load = np.array(load, dtype=np.int64)
        ranks = np.arange(self.trajectories, self.trajectories + len(fresh), dtype=np.int64)
        self.key[codes[fresh]] = np.array(leaves, dtype=np.int64) * KEY_STRIDE + ranks
        self.trajectories += len(fresh)
        keys = self.key[traj]
        return keys // KEY_STRIDE, keys
