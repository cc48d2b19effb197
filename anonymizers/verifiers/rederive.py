"""The verifier's own generalization of raw fixes over a release's published cells.

Independent of the anonymizer: PostGIS only projects the fixes (the same projection the
release used); which cell holds a fix, and which cells a segment between two fixes
crosses, is decided here with GEOS through shapely, not by the anonymizer's SQL.

Rules (the methods' documented generalization):
- a fix belongs to the published cell containing it (the smallest id on a shared edge),
  or to OUTSIDE when no published cell contains it;
- with ``crossings`` (the Voronoi methods), a segment between two consecutive fixes also
  visits every published cell it runs through (with length inside it), in the order it
  enters them; the grid baseline uses fixes only;
- consecutive repeats are collapsed.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd
import shapely

from anonymizers.verifiers.containment import SupportIndex
from anonymizers.verifiers.point_location import OUTSIDE, CellLocator

__all__ = ["OUTSIDE", "CellLocator", "Derived", "derive_visits"]


@dataclass
class Derived:
    """Cell visits as flat arrays: visit v is cell[v] of trajectory traj[v] of owner[v]."""

    traj: np.ndarray
    owner: np.ndarray
    cell: np.ndarray

    @classmethod
    def concat(cls, parts: list[Derived]) -> Derived:
        """The visits of ``parts`` (of consecutive runs of trajectories) one after another.
        Empties ``parts``: each column's pieces are dropped once joined, so the visits are
        held about once and a third, not twice (16 million visits at 25M fixes)."""
        if not parts:
            return cls(*(np.zeros(0, dtype=np.int64) for _ in range(3)))
        columns = [[part.traj for part in parts], [part.owner for part in parts],
                   [part.cell for part in parts]]
        parts.clear()
        joined = []
        while columns:
            joined.append(np.concatenate(columns.pop(0)))
        return cls(*joined)

    @property
    def n_trajectories(self) -> int:
        return int(self.traj.max()) + 1 if len(self.traj) else 0

    def support_index(self) -> SupportIndex:
        """The trajectories' sequences of published cells (OUTSIDE dropped) as an index."""
        inside = self.cell != OUTSIDE
        first = np.searchsorted(self.traj, np.arange(self.n_trajectories))
        return SupportIndex(self.cell[inside], self.traj[inside], self.owner[first])

    def sequences(self, drop_outside: bool) -> tuple[list[tuple[int, ...]], list[int]]:
        """One cell tuple and one owner per trajectory."""
        keep = self.cell != OUTSIDE if drop_outside else np.ones(len(self.cell), dtype=bool)
        bounds = np.searchsorted(self.traj[keep], np.arange(self.n_trajectories + 1))
        cells = self.cell[keep].tolist()
        sequences = [tuple(cells[a:b]) for a, b in itertools.pairwise(bounds)]
        first = np.searchsorted(self.traj, np.arange(self.n_trajectories))
        return sequences, self.owner[first].tolist()


def _crossings(tree: shapely.STRtree, ids: np.ndarray, traj: np.ndarray, x: np.ndarray,
               y: np.ndarray, cell: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(segment, fraction, cell) of every cell entered between two fixes without a fix in it.

    A crossing's segment is the index of the segment's first fix, its fraction that of
    the segment travelled when entering the cell (in [0, 1)): sorting by the two orders
    all events.
    """
    start = np.flatnonzero((traj[1:] == traj[:-1]) & ((cell[1:] != cell[:-1]) | (
        cell[1:] == OUTSIDE)))
    coords = np.stack([np.column_stack([x[start], y[start]]),
                       np.column_stack([x[start + 1], y[start + 1]])], axis=1)
    lines = shapely.linestrings(coords)
    # Boxes first, then the segment's own two cells out, and only then the polygon test
    # (on the prepared cells): the two cells of its ends always meet a segment, and were
    # most of the tests (25M-fix city: the tree's query with the predicate was half the
    # derivation's time).
    seg, hit = tree.query(lines)
    endpoint = (ids[hit] == cell[start[seg]]) | (ids[hit] == cell[start[seg] + 1])
    seg, hit = seg[~endpoint], hit[~endpoint]
    meets = shapely.intersects(tree.geometries[hit], lines[seg])
    seg, hit = seg[meets], hit[meets]
    inside = shapely.intersection(lines[seg], tree.geometries[hit])
    real = shapely.length(inside) > 0
    seg, hit, inside = seg[real], hit[real], inside[real]
    coordinates, owner = shapely.get_coordinates(inside, return_index=True)
    along = shapely.line_locate_point(lines[seg[owner]], shapely.points(coordinates),
                                      normalized=True)
    entry = pd.Series(along).groupby(owner).min().to_numpy()
    return start[seg], entry, ids[hit]


def derive_visits(traj: np.ndarray, owner: np.ndarray, x: np.ndarray, y: np.ndarray,
                  cells: CellLocator, crossings: bool) -> Derived:
    """Fixes (sorted by trajectory and time) -> collapsed cell visits over ``cells``
    (built once per release: its lattice serves every chunk).

    The visits of a run of whole trajectories do not depend on the fixes around it, so a
    window derived chunk by chunk (:meth:`Derived.concat`) gives the same visits as one
    call over all of it.
    """
    cell = cells.locate(x, y)
    index = np.arange(len(x), dtype=np.int64)
    fraction = np.zeros(len(x))
    event_cell = cell
    if crossings and len(x) > 1:
        cross_index, cross_fraction, cross_cell = _crossings(cells.tree, cells.ids, traj, x, y,
                                                             cell)
        index = np.r_[index, cross_index]
        fraction = np.r_[fraction, cross_fraction]
        event_cell = np.r_[cell, cross_cell]
    # The fix index and the fraction are separate keys, not one float (index + fraction):
    # a float's fraction would lose precision as the index grows, making the order of
    # close crossings depend on where the trajectory lies in the window or chunk.
    order = np.lexsort((fraction, index))
    event_traj, event_cell = traj[index[order]], event_cell[order]
    starts = np.r_[True, (event_traj[1:] != event_traj[:-1]) | (event_cell[1:] != event_cell[:-1])]
    first_fix = np.searchsorted(traj, event_traj[starts])
    return Derived(event_traj[starts], owner[first_fix], event_cell[starts])
