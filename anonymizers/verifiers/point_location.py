"""Which published cell holds each point, without a geometry object per point.

The verifier (and the attack's on-demand input) map every fix of a window onto the
published cells: 25 million fixes in a large window. Building one GEOS point per
fix and querying an STRtree with it cost about 2 µs per fix, most of it the point objects.
Here the cells are indexed once on a lattice of square buckets:

* a bucket that meets no cell holds only points outside every cell;
* a bucket that meets one cell, which covers it (boundary included), holds only points of
  that cell: no geometry test is needed for them;
* only the points of the other buckets, those an edge runs through, are tested, against
  the cells meeting their bucket, with ``shapely.intersects_xy`` on prepared polygons.

The result is exactly that of an ``intersects`` query per point (a point on a shared edge
is in both cells, and the smaller id is taken), for any set of polygons, overlapping or
not: a bucket is decided without tests only when a single cell meets it at all.
"""

from __future__ import annotations

import numpy as np
import shapely

__all__ = ["OUTSIDE", "CellLocator"]

OUTSIDE = -1
# Buckets per cell, about: an edge crosses a share of the buckets that shrinks as they get
# finer (about 4 / sqrt(BUCKETS_PER_CELL) for square cells: a quarter here).
BUCKETS_PER_CELL = 256
MAX_BUCKETS = 1 << 22  # 4M buckets: 32 MB per int64 array of them
_MIXED = -2  # a bucket whose points must be tested


class CellLocator:
    """The cell (by id) holding each point, or :data:`OUTSIDE`.

    Parameters
    ----------
    ids : np.ndarray of int
        Id of each cell; on a shared edge the smaller id wins.
    polygons : np.ndarray of shapely geometries
        The cells, aligned with ``ids``.
    """

    def __init__(self, ids: np.ndarray, polygons: np.ndarray) -> None:
        self.ids = np.asarray(ids, dtype=np.int64)
        self.polygons = np.asarray(polygons, dtype=object)
        shapely.prepare(self.polygons)
        self.tree = shapely.STRtree(self.polygons)
        self._lattice()

    def _lattice(self) -> None:
        """Bucket size, origin and shape, and what each bucket holds (a cell index, -1:
        nothing, _MIXED: test its points)."""
        n = len(self.polygons)
        if n == 0:
            self.size, self.x0, self.y0, self.nx, self.ny = 1.0, 0.0, 0.0, 0, 0
            self.decided = np.zeros(0, dtype=np.int64)
            return
        xmin, ymin, xmax, ymax = shapely.total_bounds(self.polygons).tolist()
        width, height = max(xmax - xmin, 1e-9), max(ymax - ymin, 1e-9)
        buckets = min(MAX_BUCKETS, BUCKETS_PER_CELL * n)
        self.size = max(np.sqrt(width * height / buckets), 1e-9)
        self.x0, self.y0 = xmin, ymin
        self.nx = int(np.floor(width / self.size)) + 1
        self.ny = int(np.floor(height / self.size)) + 1
        self._classify()

    def _classify(self) -> None:
        """Which cells meet each bucket: none, one covering it, or the candidates."""
        col = np.tile(np.arange(self.nx), self.ny)  # bucket b is (b % nx, b // nx)
        row = np.repeat(np.arange(self.ny), self.nx)
        # Each box grown by a hair: a point that rounding puts in a bucket lies in its box
        # (a hair far above the rounding of the coordinates, however large they are).
        x0, y0 = self.x0 + col * self.size, self.y0 + row * self.size
        largest = max(abs(self.x0), abs(self.y0), abs(x0[-1]) + self.size,
                      abs(y0[-1]) + self.size)
        hair = max(self.size * 1e-6, float(np.spacing(largest)) * 1024)
        boxes = shapely.box(x0 - hair, y0 - hair, x0 + self.size + hair, y0 + self.size + hair)
        bucket, cell = self.tree.query(boxes, predicate="intersects")
        meeting = np.bincount(bucket, minlength=boxes.size)
        decided = np.full(boxes.size, OUTSIDE, dtype=np.int64)
        decided[meeting > 1] = _MIXED
        single = meeting[bucket] == 1
        covers = np.zeros(bucket.size, dtype=bool)
        covers[single] = shapely.covers(self.polygons[cell[single]], boxes[bucket[single]])
        decided[bucket[single & ~covers]] = _MIXED
        decided[bucket[single & covers]] = cell[single & covers]
        self.decided = decided
        # Candidates of the mixed buckets, by bucket: rows candidate_starts[b]:[b + 1].
        mixed_pairs = decided[bucket] == _MIXED
        order = np.argsort(bucket[mixed_pairs], kind="stable")
        self.candidate_cells = cell[mixed_pairs][order]
        self.candidate_starts = np.searchsorted(bucket[mixed_pairs][order],
                                                np.arange(boxes.size + 1))

    def _buckets(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Bucket of each point, -1 off the lattice. A point on a bucket's edge may go to
        either bucket: both (closed, grown) boxes hold it, so either decides it right."""
        col = np.floor((x - self.x0) / self.size)
        row = np.floor((y - self.y0) / self.size)
        on = (col >= 0) & (col < self.nx) & (row >= 0) & (row < self.ny)
        bucket = np.full(x.size, -1, dtype=np.int64)
        bucket[on] = row[on].astype(np.int64) * self.nx + col[on].astype(np.int64)
        return bucket

    def locate(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Id of the cell holding each point (smallest id on a shared edge), or OUTSIDE."""
        x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
        cell = np.full(x.size, OUTSIDE, dtype=np.int64)
        if self.decided.size == 0 or x.size == 0:
            return cell
        bucket = self._buckets(x, y)
        state = np.where(bucket >= 0, self.decided[np.maximum(bucket, 0)], OUTSIDE)
        inside = state >= 0
        cell[inside] = self.ids[state[inside]]
        tested = np.flatnonzero(state == _MIXED)
        if tested.size:
            cell[tested] = self._test(tested, bucket[tested], x[tested], y[tested])
        return cell

    def _test(self, points: np.ndarray, bucket: np.ndarray, x: np.ndarray,
              y: np.ndarray) -> np.ndarray:
        """Cells of points in mixed buckets: each against every candidate of its bucket."""
        first, last = self.candidate_starts[bucket], self.candidate_starts[bucket + 1]
        counts = last - first
        point = np.repeat(np.arange(points.size), counts)
        pair = np.repeat(first - np.cumsum(counts) + counts, counts) + np.arange(counts.sum())
        candidate = self.candidate_cells[pair]
        hit = shapely.intersects_xy(self.polygons[candidate], x[point], y[point])
        found = np.full(points.size, np.iinfo(np.int64).max)
        np.minimum.at(found, point[hit], self.ids[candidate[hit]])
        found[found == np.iinfo(np.int64).max] = OUTSIDE
        return found
