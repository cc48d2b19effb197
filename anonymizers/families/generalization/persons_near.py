"""The persons with a fix near a point, counted from the window's fixes in memory: the
rule on generators of progressive generalization (:mod:`.progressive`: a generator with
fixes of fewer than k persons within the radius r of it is dropped).

The database used to answer this with the fixes' GiST index, read nearest first and
stopping at k persons; at 25M fixes, building that index alone took 40 s of the step,
for a few hundred questions. Progressive generalization already holds every fix's
position and person (:class:`~.fix_cells.FixCells`), so the fixes are put once into
squares of side r, and a question looks only at the squares a disc of radius r around
the point can reach (at most nine). The answer is min(k, persons within r), whatever
the order the fixes are read in, so it is the database's exactly; the test suite holds
it to a ``count(DISTINCT)`` over ``ST_DWithin`` in PostGIS. The verifier checks the same
rule on the published generators with its own code.
"""

from __future__ import annotations

import numpy as np

from anonymizers.counting import distinct_values

__all__ = ["PersonsNear"]

# Fixes looked at, at a time, while fewer than k persons were found: in a busy place the
# first such batch around the point is almost always enough.
BATCH = 1 << 14


class PersonsNear:
    """How many distinct persons have a fix within ``reach`` of a point, up to a cap.

    Parameters
    ----------
    x, y : np.ndarray of float
        The fixes' positions (a metric CRS: ``reach`` is in its units).
    person : np.ndarray of int
        Each fix's person.
    reach : float
        The radius; a fix at exactly ``reach`` counts (``ST_DWithin``).

    Memory: one int32 per fix (the fixes in square order; int64 past 2**31 fixes) while it
    is alive, and a few temporary int64 arrays as long as the fixes while it is made.

    Examples
    --------
    >>> near = PersonsNear(np.array([0.0, 3.0, 4.0, 50.0]), np.array([0.0, 4.0, 0.0, 0.0]),
    ...                    np.array([7, 8, 7, 9]), reach=5.0)
    >>> near.count(0.0, 0.0, enough=5), near.count(0.0, 0.0, enough=1)
    (2, 1)
    >>> near.count(48.0, 0.0, enough=5), near.count(20.0, 0.0, enough=5)
    (1, 0)
    """

    def __init__(self, x: np.ndarray, y: np.ndarray, person: np.ndarray, reach: float) -> None:
        if not reach > 0:
            raise ValueError(f"reach must be positive (got {reach})")
        self._x, self._y, self._person, self._reach = x, y, person, float(reach)
        self._origin = (float(x.min()), float(y.min())) if x.size else (0.0, 0.0)
        self._rows = int(self._row(y.max())) + 1 if y.size else 1
        self._columns = int(self._column(x.max())) + 1 if x.size else 1
        squares = self._squares(x, y)
        self._order = np.argsort(squares, kind="stable").astype(
            np.int32 if x.size <= np.iinfo(np.int32).max else np.int64)
        squares = squares[self._order]
        first = np.flatnonzero(np.r_[True, squares[1:] != squares[:-1]]) if squares.size \
            else np.zeros(0, dtype=np.int64)
        self._keys, self._starts = squares[first], np.r_[first, squares.size]
        self._known: dict[tuple[float, float, int], int] = {}

    def _squares(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The square of each position: column * rows + row."""
        return self._column(x) * self._rows + self._row(y)

    def count(self, x: float, y: float, enough: int) -> int:
        """min(``enough``, distinct persons with a fix within ``reach`` of (x, y))."""
        key = (float(x), float(y), int(enough))
        if key not in self._known:
            self._known[key] = self._count(*key)
        return self._known[key]

    def counts(self, x: np.ndarray, y: np.ndarray, enough: int) -> np.ndarray:
        """:meth:`count` of each point (x[i], y[i])."""
        return np.array([self.count(px, py, enough) for px, py
                         in zip(x.tolist(), y.tolist(), strict=True)], dtype=np.int64)

    def _count(self, x: float, y: float, enough: int) -> int:
        found = np.zeros(0, dtype=self._person.dtype)
        for fixes in self._candidates(x, y):
            for start in range(0, fixes.size, BATCH):
                batch = fixes[start:start + BATCH]
                near = np.hypot(self._x[batch] - x, self._y[batch] - y) <= self._reach
                found = distinct_values(np.concatenate((found, self._person[batch[near]])))
                if found.size >= enough:
                    return enough
        return int(found.size)

    def _candidates(self, x: float, y: float) -> list[np.ndarray]:
        """The fixes of the squares a disc of radius ``reach`` around (x, y) can reach (the
        disc widened by a hair, against rounding at a square's edge), its centre's first."""
        if not self._keys.size:
            return []
        reach = self._reach * (1 + 1e-9)
        columns = range(max(int(self._column(x - reach)), 0),
                        min(int(self._column(x + reach)), self._columns - 1) + 1)
        rows = range(max(int(self._row(y - reach)), 0),
                     min(int(self._row(y + reach)), self._rows - 1) + 1)
        centre = (int(self._column(x)), int(self._row(y)))
        around = sorted(((c, r) for c in columns for r in rows),
                        key=lambda square: square != centre)
        keys = np.array([c * self._rows + r for c, r in around], dtype=np.int64)
        at = np.searchsorted(self._keys, keys)
        held = (at < self._keys.size) & (self._keys[np.minimum(at, self._keys.size - 1)] == keys)
        return [self._order[self._starts[i]:self._starts[i + 1]] for i in at[held].tolist()]

    def _column(self, x: float | np.ndarray) -> np.ndarray:
        """The column of squares of a position (or of each): one formula for the fixes put
        in squares and for the squares a question reads, so rounding agrees."""
        return np.floor((np.asarray(x) - self._origin[0]) / self._reach).astype(np.int64)

    def _row(self, y: float | np.ndarray) -> np.ndarray:
        return np.floor((np.asarray(y) - self._origin[1]) / self._reach).astype(np.int64)
