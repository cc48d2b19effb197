"""Split a dataset's rows into leaf tables by traj_id range, so that they load in parallel.

A dataset's partition of raw.points is itself partitioned by range of traj_id (in "C"
collation: byte order, which is also the order Arrow and Python sort strings in). Each
leaf is created, filled, indexed and analysed on a connection of its own, so a load
keeps every core busy instead of one. A trajectory never straddles two leaves.

The price is paid by queries that read a whole dataset: an Append over the leaves, 2-11 %
slower than one table (README, "How a load runs"). Windows cut by time read the same.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from anonymizers.loading.binary_copy import PointRows

__all__ = ["MAX_LEAVES", "MIN_LEAF_ROWS", "Leaf", "split_leaves"]

# One leaf per core (of this machine, where the embedded cluster runs; a remote server
# has as many, as a rule), at most 4; and a leaf holds MIN_LEAF_ROWS rows at least: a
# smaller dataset loads in well under a second, and one table reads it fastest.
MAX_LEAVES = min(os.cpu_count() or 1, 4)
MIN_LEAF_ROWS = 200_000


@dataclass
class Leaf:
    """Rows whose traj_id lies in [lower, upper) in byte order; upper None: no upper end."""

    number: int
    lower: str  # "" for the first leaf: no traj_id sorts below it
    upper: str | None
    rows: PointRows


def split_leaves(rows: PointRows, traj_codes: np.ndarray, traj_names: list[str]) -> list[Leaf]:
    """Leaves of about equal row counts, cut between trajectories.

    ``traj_codes`` numbers each row's traj_id in byte order; ``traj_names[code]`` is the id.
    """
    parts = max(1, min(MAX_LEAVES, len(rows) // MIN_LEAF_ROWS))
    cuts = _cuts(np.bincount(traj_codes, minlength=len(traj_names)), parts)
    leaf_of_row = np.searchsorted(cuts, traj_codes, side="right")
    bounds = ["", *(traj_names[c] for c in cuts), None]
    return [Leaf(number, bounds[number], bounds[number + 1],
                 rows.take(np.flatnonzero(leaf_of_row == number)))
            for number in range(len(cuts) + 1)]


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
