"""The window's raw fixes, streamed from one query in chunks of whole trajectories.

A verifier that re-derives a release from the raw data must not hold the window's fixes
whole: at 25 million fixes their arrays alone pass the 2 GB a Python process may use,
and one Python string per fix for the trajectory and person ids costs more
than the numbers. The fixes come in (trajectory, time) order from one query, read into
Arrow while the server sends them (:mod:`anonymizers.db.arrow_reads`; ids stay Arrow
strings, dictionary-encoded per chunk), in chunks of about ``chunk_fixes`` fixes that
never split a trajectory, so that memory grows with the chunk, not with the window.
Trajectories and persons are numbered as one factorization of the whole window would
number them: in order of first appearance.

:class:`PersonsNear` counts, chunk by chunk, the distinct persons with a fix near given
points (the verifier's check of data-derived generators).
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import psycopg
import pyarrow as pa
import pyarrow.compute as pc
import shapely

from anonymizers.counting import distinct_values
from anonymizers.db.arrow_reads import read_groups
from anonymizers.db.groups import CHUNK_ROWS
from anonymizers.db.labels import FirstSeenCodes

__all__ = ["CHUNK_FIXES", "Fixes", "Numbering", "PersonsNear", "window_fixes"]

# Fixes per chunk, about: the chunk's GEOS points and crossing segments are the
# derivation's largest transient objects (anonymizers.db.groups.CHUNK_ROWS says what it
# cost).
CHUNK_FIXES = CHUNK_ROWS

COLUMN_TYPES = {"traj_id": pa.string(), "user_id": pa.string(), "x": pa.float64(),
                "y": pa.float64()}


@dataclass
class Fixes:
    """Fixes of whole trajectories in (trajectory, time) order: fix i is (x[i], y[i]) of
    trajectory traj[i] of person owner[i], both numbered over the whole window."""

    traj: np.ndarray
    owner: np.ndarray
    x: np.ndarray
    y: np.ndarray

    def __len__(self) -> int:
        return len(self.x)


@dataclass
class Numbering:
    """Trajectory and person numbers across chunks, in order of first appearance (what
    ``pandas.factorize(sort=False)`` of the whole window gives). Holds one entry per
    person, nothing per fix."""

    trajectories: int = 0
    persons: FirstSeenCodes = field(default_factory=FirstSeenCodes)

    def number(self, table: pa.Table) -> Fixes:
        """The fixes of ``table`` (columns traj_id, user_id, x, y; whole trajectories, each in one
        run of rows) with numbers following those of the chunks before it."""
        # A trajectory lies in one chunk, so its numbers are the chunk's own, shifted.
        traj = pc.dictionary_encode(table["traj_id"].combine_chunks())
        fixes = Fixes(traj=traj.indices.to_numpy().astype(np.int64) + self.trajectories,
                      owner=self.persons.encode(table["user_id"]),
                      x=table["x"].to_numpy(), y=table["y"].to_numpy())
        self.trajectories += len(traj.dictionary)
        return fixes


def window_fixes(conn: psycopg.Connection, params: dict[str, Any],
                 chunk_fixes: int = CHUNK_FIXES) -> Generator[Fixes, None, None]:
    """The fixes of ``sql/verify/derive_sequences.sql`` (bound to ``params``), chunk by
    chunk of whole trajectories, read on a connection of their own in the snapshot of
    ``conn``'s transaction (:mod:`anonymizers.db.arrow_reads`)."""
    numbering = Numbering()
    for table in read_groups(conn, "verify/derive_sequences.sql", COLUMN_TYPES, params,
                             chunk_rows=chunk_fixes, before=("verify/fixes_scan_serial.sql",)):
        yield numbering.number(table)


class PersonsNear:
    """How many distinct persons have a fix within ``reach`` of each of the points
    (x[i], y[i]), counted over chunks of fixes whose owners are numbered across chunks,
    up to ``enough`` (exact below it; None: no cap).

    Keeps only distinct (point, person) pairs, never the fixes. Without a cap, those of
    each chunk are merged into the pairs found before once they are as many (a merge per
    chunk sorted all the pairs found so far each time: at 25M fixes, most of the
    verifier's ten minutes). With ``enough``, a point that reached it keeps no pairs and
    takes no more: the check only asks whether k persons were near, and in a release that
    passes every point reaches k within the first chunks (25M fixes: merging every pair
    took 24 s). The pairs kept are then fewer than ``enough`` per point, so each chunk's
    are merged at once, and :meth:`wanted` tells the points still short of it: a chunk
    needs no search for the others (25M fixes: the search was a third of the
    derivation's time).
    """

    def __init__(self, x: np.ndarray, y: np.ndarray, reach: float,
                 enough: int | None = None) -> None:
        self.size = len(x)
        self.reach = reach
        self.enough = enough
        self._points = shapely.points(x, y)
        self._tree = shapely.STRtree(self._points)
        self._pairs = np.zeros(0, dtype=np.int64)  # point << 32 | owner, sorted, distinct
        self._pending: list[np.ndarray] = []  # the chunks' own distinct pairs, not merged
        self._pending_size = 0
        self._reached = np.zeros(self.size, dtype=bool)  # points that have enough persons

    def add(self, fixes: Fixes) -> None:
        self.add_pairs(self.pairs_of(fixes, self.wanted()))

    def wanted(self) -> np.ndarray | None:
        """The points still short of ``enough`` persons (None: all of them)."""
        return None if self.enough is None else np.flatnonzero(~self._reached)

    def pairs_of(self, fixes: Fixes, points: np.ndarray | None = None) -> np.ndarray:
        """The distinct (point, person) pairs of a chunk, as ``point << 32 | owner``: what
        :meth:`add` keeps of it (its own call, so a forked worker can find them), for the
        given ``points`` only (their numbers, as :meth:`wanted` gives them; None: all)."""
        if not self.size or not len(fixes) or (points is not None and not points.size):
            return np.zeros(0, dtype=np.int64)
        tree = self._tree if points is None else shapely.STRtree(self._points[points])
        # dwithin is symmetric: the fixes query the tree of the (few) points.
        fix, point = tree.query(shapely.points(fixes.x, fixes.y), predicate="dwithin",
                                distance=self.reach)
        if points is not None:
            point = points[point]
        return distinct_values((point.astype(np.int64) << 32) | fixes.owner[fix])

    def add_pairs(self, found: np.ndarray) -> None:
        """Keep the pairs :meth:`pairs_of` found in a chunk."""
        found = found[~self._reached[found >> 32]] if self._reached.any() else found
        if not found.size:
            return
        self._pending.append(found)
        self._pending_size += found.size
        if self.enough is not None or self._pending_size >= max(self._pairs.size, MERGE_FROM):
            self._merge()

    def _merge(self) -> None:
        if not self._pending:
            return
        self._pairs = distinct_values(np.concatenate([self._pairs, *self._pending]))
        self._pending, self._pending_size = [], 0
        if self.enough is not None:
            reached = np.bincount(self._pairs >> 32, minlength=self.size) >= self.enough
            self._reached |= reached
            self._pairs = self._pairs[~reached[self._pairs >> 32]]

    def counts(self) -> np.ndarray:
        """Distinct persons near each point, in the order of the points (at most
        ``enough``)."""
        self._merge()
        counts = np.bincount(self._pairs >> 32, minlength=self.size)
        if self.enough is not None:
            counts[self._reached] = self.enough
        return counts


# Pairs pending before the first merge (then: as many as merged already): 32 MB.
MERGE_FROM = 4_000_000
