"""The window's fixes and the Voronoi cells they visit, kept in memory through progressive
generalization (seed 000, Algorithm 3).

Every step of Algorithm 3 counts, per pair of neighbouring cells, the persons moving
between them, and needs per-cell sums of the fixes; a step then merges or drops a few
generators. The cells are Voronoi cells clipped to a box, so a fix's cell is its nearest
generator (a fix outside the box is a gap), and only the fixes of the cells whose polygon
changed can change cell. :class:`FixCells` keeps every fix's cell and every crossing
(a cell a segment between two fixes runs through without a fix in it) as flat arrays, and
after a step looks again only at the fixes of the changed cells and at the segments that
touch them ("only the fixes of changed cells; never all fixes again"). Once the
cells are final, the visits a release publishes are made from them
(:meth:`FixCells.visits`). The same rules in SQL (``120_membership.sql``,
``126_segments.sql``, ``128_crossings.sql``) are the reference the tests hold this
module to.

The rules, as in the SQL:

* a fix on the bisector of two generators (a shared edge) is in the cell of the smaller id;
* a segment visits the cells of the lower envelope of the lines
  ``q_g - 2 s p_g`` (``q_g = |A - g|^2``, ``p_g = d.(g - A)``, the point ``A + s d``), in
  increasing order of ``p``; it is walked from its first cell to the next neighbour whose
  line it meets first, until its last fix (or the box's edge, after or before a gap);
* a cell met with no length inside it is not a crossing; its ends' cells are not either.

References
----------
Monreale, A., Andrienko, G., Andrienko, N., Giannotti, F., Pedreschi, D., Rinzivillo, S.,
Wrobel, S. (2010). Movement data anonymity through generalization. Transactions on Data
Privacy 3, 91-121. §6.1, Algorithm 3.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

import numpy as np
from scipy.spatial import cKDTree

from anonymizers.counting import distinct_values

__all__ = ["GAP", "CellDisplacement", "CellSums", "FixCells", "GroupSupport", "Tessellation",
           "Visits"]

GAP = -1  # the cell of a fix outside the clip box
# Fixes (or segments) per pass of a query, a sum or a walk: bounds their temporary arrays
# (at 25M fixes, the window's own arrays take 625 MB; a walk's step holds a few arrays of
# rows x neighbours).
QUERY_ROWS = 1 << 21
# Fixes whose visits are made and written at a time: a part's events, visits, ids and CSV
# are the step's largest temporaries at the end (2M fixes: about 450 MB on the 5M city).
VISIT_ROWS = 1 << 19
WALK_ROWS = 1 << 18
TIES = 8  # generators looked at when a fix is exactly as far from two


@dataclass(frozen=True)
class Tessellation:
    """The generators (ids ascending, positions), the clip box and the pairs of cells
    sharing an edge, as ``110_voronoi_cells.sql`` and ``112_cell_edges.sql`` built them:
    ids ``a < b``, and the stretch ``low..high`` of the generators' bisector the two
    polygons share, measured from the generators' midpoint along (ay - by, bx - ax),
    normalized."""

    ids: np.ndarray
    x: np.ndarray
    y: np.ndarray
    box: tuple[float, float, float, float]  # x_min, y_min, x_max, y_max
    a: np.ndarray
    b: np.ndarray
    low: np.ndarray
    high: np.ndarray

    @cached_property
    def tree(self) -> cKDTree:
        return cKDTree(np.column_stack([self.x, self.y]))

    @cached_property
    def neighbours(self) -> np.ndarray:
        """Row i: the generator indices sharing an edge with generator i, padded with -1."""
        a, b = np.searchsorted(self.ids, self.a), np.searchsorted(self.ids, self.b)
        source, target = np.concatenate([a, b]), np.concatenate([b, a])
        order = np.argsort(source, kind="stable")
        source, target = source[order], target[order]
        degree = np.bincount(source, minlength=len(self.ids))
        table = np.full((len(self.ids), max(int(degree.max(initial=0)), 1)), -1, np.int64)
        starts = np.concatenate([[0], np.cumsum(degree)[:-1]])
        table[source, np.arange(len(source)) - starts[source]] = target
        return table

    @cached_property
    def edge_vectors(self) -> tuple[np.ndarray, ...]:
        """Per row of :attr:`neighbours`: h - g and h + g (x and y) for generator g of the
        row and each neighbour h; zeros for padding."""
        h = self.neighbours
        real = h >= 0
        g = np.broadcast_to(np.arange(len(self.ids))[:, None], h.shape)
        return tuple(np.where(real, a[h] + sign * a[g], 0.0)
                     for sign, a in ((-1, self.x), (-1, self.y), (1, self.x), (1, self.y)))

    @cached_property
    def _pair_keys(self) -> tuple[int, np.ndarray, np.ndarray]:
        width = int(self.ids.max(initial=0)) + 1
        keys = self.a * width + self.b
        order = np.argsort(keys)
        return width, keys[order], order

    def straight(self, ax: np.ndarray, ay: np.ndarray, dx: np.ndarray, dy: np.ndarray,
                 c1: np.ndarray, c2: np.ndarray) -> np.ndarray:
        """Segments A -> A + d from cell ``c1`` into a neighbouring cell ``c2`` that meet
        the two generators' bisector inside their shared edge, a millimetre or more from
        its ends (as ``128_crossings.sql`` decides): cells are convex, so such a segment
        crosses no other cell and needs no walk."""
        width, keys, order = self._pair_keys
        if not len(keys):
            return np.zeros(len(ax), dtype=bool)
        a, b = np.minimum(c1, c2).astype(np.int64), np.maximum(c1, c2).astype(np.int64)
        probe = a * width + b
        at = np.minimum(np.searchsorted(keys, probe), len(keys) - 1)
        found = (a != GAP) & (keys[at] == probe)
        edge = order[at]
        i, j = np.searchsorted(self.ids, self.a[edge]), np.searchsorted(self.ids, self.b[edge])
        ex, ey = self.x[j] - self.x[i], self.y[j] - self.y[i]
        along = dx * ex + dy * ey
        with np.errstate(divide="ignore", invalid="ignore"):
            s = (ex * (self.x[i] + self.x[j] - 2 * ax) + ey * (self.y[i] + self.y[j] - 2 * ay)
                 ) / (2 * along)
            px = ax + s * dx - (self.x[i] + self.x[j]) / 2
            py = ay + s * dy - (self.y[i] + self.y[j]) / 2
            t = (px * -ey + py * ex) / np.hypot(ex, ey)
        return (found & (s >= 0) & (s <= 1) & (t >= self.low[edge] + 0.001)
                & (t <= self.high[edge] - 0.001))

    def inside(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Points in the clip box, its boundary included (ST_Intersects)."""
        x_min, y_min, x_max, y_max = self.box
        return (x >= x_min) & (x <= x_max) & (y >= y_min) & (y <= y_max)

    def nearest(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Index of the nearest generator of each point; of two or more equally near, the
        one of the smallest id (ids are ascending: the smallest index)."""
        found = np.empty(len(x), dtype=np.int64)
        k = min(2, len(self.ids))
        for start in range(0, len(x), QUERY_ROWS):
            part = slice(start, start + QUERY_ROWS)
            xy = np.column_stack([x[part], y[part]])
            distance, index = self.tree.query(xy, k=k, workers=-1)
            if k == 1:
                found[part] = index
                continue
            found[part] = index[:, 0]
            tied = np.flatnonzero(distance[:, 0] == distance[:, 1])
            if tied.size:
                found[start + tied] = self._smallest_of_equally_near(xy[tied])
        return found

    def _smallest_of_equally_near(self, xy: np.ndarray) -> np.ndarray:
        distance, index = self.tree.query(xy, k=min(TIES, len(self.ids)), workers=-1)
        index = np.where(distance == distance[:, :1], index, len(self.ids))
        return index.min(axis=1)


class CellSums(NamedTuple):
    """Per generator (aligned with the tessellation's ids): its fixes, the sums of their x,
    y and x^2 + y^2; and over all fixes in a cell, the sum and the largest of their
    distances to their generator (progressive generalization's log)."""

    n_points: np.ndarray
    sx: np.ndarray
    sy: np.ndarray
    sxxyy: np.ndarray
    distance_sum: float
    distance_max: float


class CellDisplacement(NamedTuple):
    """Per generator (aligned with the tessellation's ids): its fixes, the sum of their
    distances to it, their distinct persons; and the persons with a fix in any cell."""

    n_points: np.ndarray
    distance_sum: np.ndarray
    persons: np.ndarray
    persons_in_cells: int


class Visits(NamedTuple):
    """Visits of trajectories: trajectory number (0.. in fix order), visit number within
    it (1..), cell, entry and exit time (microseconds), memberships in the visit."""

    trajectory: np.ndarray
    visit_no: np.ndarray
    cell: np.ndarray
    t_enter: np.ndarray
    t_exit: np.ndarray
    n_points: np.ndarray


@dataclass(frozen=True)
class GroupSupport:
    """Per group of cells (aligned arrays): the mean of its persons' mean fixes, the
    persons and the fixes it is computed from."""

    group: np.ndarray
    n_persons: np.ndarray
    n_points: np.ndarray
    x: np.ndarray
    y: np.ndarray


@dataclass(frozen=True)
class _Crossings:
    """Cells run through between two fixes: segment (index of its first fix), where along
    it the cell is entered (0..1), and the cell's id. Sorted by segment, then entry."""

    segment: np.ndarray
    s: np.ndarray
    cell: np.ndarray

    @classmethod
    def empty(cls) -> _Crossings:
        return cls(np.zeros(0, np.int64), np.zeros(0), np.zeros(0, np.int32))

    def without(self, segments: np.ndarray) -> _Crossings:
        """Those not on the given segments (a boolean mask over every segment)."""
        keep = ~segments[self.segment]
        return _Crossings(self.segment[keep], self.s[keep], self.cell[keep])

    @classmethod
    def concatenated(cls, parts: list[_Crossings]) -> _Crossings:
        """All of them, sorted by segment and entry: each part is, and two parts share no
        segment, so a stable sort by segment merges their runs."""
        segment = np.concatenate([part.segment for part in parts])
        s = np.concatenate([part.s for part in parts])
        order = np.argsort(segment, kind="stable")
        return cls(segment[order], s[order],
                   np.concatenate([part.cell for part in parts])[order])


class FixCells:
    """Every fix's cell (a generator id, or :data:`GAP`) and every crossing.

    Parameters
    ----------
    continues : np.ndarray of bool
        Per fix: the next fix is of the same trajectory (fixes in trajectory and time order).
    person : np.ndarray of int
        Per fix: its person's code.
    x, y : np.ndarray of float
        The fixes' positions, in the tessellation's metric CRS.

    Examples
    --------
    Two generators 100 m apart; a trajectory walks from the first cell into the second:

    >>> cells = Tessellation(np.array([1, 2]), np.array([0.0, 100.0]), np.array([0.0, 0.0]),
    ...                      (-50.0, -50.0, 150.0, 50.0), np.array([1]), np.array([2]),
    ...                      np.array([-50.0]), np.array([50.0]))
    >>> fixes = FixCells(np.array([True, True, False]), np.array([0, 0, 0]),
    ...                  np.array([0.0, 40.0, 90.0]), np.zeros(3))
    >>> fixes.locate(cells)
    >>> fixes.cell.tolist()
    [1, 1, 2]
    >>> [m.tolist() for m in fixes.moves()]
    [[0], [1], [2]]
    """

    def __init__(self, continues: np.ndarray, person: np.ndarray, x: np.ndarray,
                 y: np.ndarray) -> None:
        self.continues = np.asarray(continues, dtype=bool)
        self.person = np.asarray(person, dtype=np.int32)
        self.x, self.y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
        self.cell = np.full(len(self.x), GAP, dtype=np.int32)
        self.crossings = _Crossings.empty()

    def __len__(self) -> int:
        return len(self.x)

    def locate(self, cells: Tessellation) -> None:
        """Every fix's cell and every crossing, from scratch."""
        self._place(cells, None)
        self.crossings = _Crossings.empty()
        self._cross(cells, self.continues)

    def update(self, cells: Tessellation, changed: np.ndarray, box_moved: bool) -> int:
        """After a step: ``changed`` holds the ids of the previous cells whose polygon
        changed or that are gone; when the box moved, the gaps are looked at again too.
        Returns how many fixes were looked at again."""
        again = np.isin(self.cell, np.asarray(changed, dtype=np.int32))
        if box_moved:
            again |= self.cell == GAP
        fixes = np.flatnonzero(again)
        self._place(cells, fixes)
        segments = np.zeros(len(self), dtype=bool)  # whose crossings are computed again
        segments[fixes] = True
        segments[fixes[fixes > 0] - 1] = True
        segments[self.crossings.segment[np.isin(self.crossings.cell, changed)]] = True
        if box_moved:
            gap = self.cell == GAP
            segments |= gap
            segments[:-1] |= gap[1:]
        segments &= self.continues
        self.crossings = self.crossings.without(segments)
        self._cross(cells, segments)
        return int(fixes.size)

    def _place(self, cells: Tessellation, fixes: np.ndarray | None) -> None:
        """The cell of the given fixes (of all of them: None), QUERY_ROWS at a time."""
        total = len(self) if fixes is None else len(fixes)
        for start in range(0, total, QUERY_ROWS):
            part = (slice(start, min(start + QUERY_ROWS, total)) if fixes is None
                    else fixes[start:start + QUERY_ROWS])
            x, y = self.x[part], self.y[part]
            inside = cells.inside(x, y)
            found = np.full(len(x), GAP, dtype=np.int32)
            found[inside] = cells.ids[cells.nearest(x[inside], y[inside])]
            self.cell[part] = found

    def _cross(self, cells: Tessellation, segments: np.ndarray) -> None:
        """Crossings of the marked segments (a mask over fixes: segment i runs from fix i
        to fix i + 1) whose ends are in two cells or in a gap."""
        parts = [self.crossings]
        for start in range(0, len(self), QUERY_ROWS):
            first = start + np.flatnonzero(segments[start:start + QUERY_ROWS])
            c1, c2 = self.cell[first], self.cell[first + 1]
            first = first[(c1 != c2) | (c1 == GAP)]
            for chunk in range(0, len(first), WALK_ROWS):
                ends = first[chunk:chunk + WALK_ROWS]
                found = _walk(cells, self.x[ends], self.y[ends], self.x[ends + 1],
                              self.y[ends + 1], self.cell[ends], self.cell[ends + 1])
                parts.append(_Crossings(ends[found.segment], found.s, found.cell))
        self.crossings = _Crossings.concatenated(parts)

    def statistics(self, cells: Tessellation) -> CellSums:
        """The fixes' sums per generator of ``cells``, QUERY_ROWS fixes at a time."""
        n = len(cells.ids)
        counts, sx, sy, sxxyy = (np.zeros(n, np.int64), np.zeros(n), np.zeros(n),
                                 np.zeros(n))
        distance_sum, distance_max = 0.0, 0.0
        for at, x, y, _person in self._in_cells(cells):
            counts += np.bincount(at, minlength=n)
            sx += np.bincount(at, weights=x, minlength=n)
            sy += np.bincount(at, weights=y, minlength=n)
            sxxyy += np.bincount(at, weights=x * x + y * y, minlength=n)
            distance = np.hypot(x - cells.x[at], y - cells.y[at])
            distance_sum += float(distance.sum())
            distance_max = max(distance_max, float(distance.max(initial=0.0)))
        return CellSums(counts, sx, sy, sxxyy, distance_sum, distance_max)

    def displacement(self, cells: Tessellation) -> CellDisplacement:
        """Per generator of ``cells``: its fixes, the sum of their distances to it and
        their distinct persons; and the distinct persons with a fix in any cell (Andrienko's
        displacement, ``040_displacement.sql``). QUERY_ROWS fixes at a time."""
        n, persons = len(cells.ids), int(self.person.max(initial=0)) + 1
        counts, distance = np.zeros(n, np.int64), np.zeros(n)
        pairs = []
        for at, x, y, person in self._in_cells(cells):
            counts += np.bincount(at, minlength=n)
            distance += np.bincount(at, weights=np.hypot(x - cells.x[at], y - cells.y[at]),
                                    minlength=n)
            pairs.append(distinct_values(at.astype(np.int64) * persons + person))
        distinct = distinct_values(np.concatenate(pairs)) if pairs else np.zeros(0, np.int64)
        return CellDisplacement(counts, distance, np.bincount(distinct // persons, minlength=n),
                                int(distinct_values(distinct % persons).size))

    def _in_cells(self, cells: Tessellation
                  ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
        """The fixes in a cell, QUERY_ROWS fixes at a time: the index of their generator
        in ``cells``, their x, y and person."""
        for start in range(0, len(self), QUERY_ROWS):
            part = slice(start, start + QUERY_ROWS)
            located = self.cell[part] != GAP
            yield (np.searchsorted(cells.ids, self.cell[part][located]),
                   self.x[part][located], self.y[part][located], self.person[part][located])

    def moves(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(person, from cell, to cell) of every move: consecutive memberships of a
        trajectory (fixes in cells, crossings between them; gaps are no membership) in
        two cells (Algorithm 3, lines 1-4). Whole trajectories of about QUERY_ROWS fixes
        at a time: all at once, the memberships' temporaries took about 800 MB at 25M
        fixes, the step's largest."""
        parts = [(np.zeros(0, np.int32),) * 3]
        start = 0
        while start < len(self):
            stop = self._trajectories_end(start + QUERY_ROWS)
            parts.append(self._moves_of(start, stop))
            start = stop
        person, from_cell, to_cell = (np.concatenate(column) for column in zip(*parts, strict=True))
        return person, from_cell, to_cell

    def _moves_of(self, start: int, stop: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`moves` of fixes ``start:stop`` (whole trajectories)."""
        lo, hi = np.searchsorted(self.crossings.segment, [start, stop])
        segment = self.crossings.segment[lo:hi] - start
        fixes = stop - start
        # Where each fix goes among the memberships: after the crossings of the segments
        # before it.
        at_fix = np.bincount(segment + 1, minlength=fixes + 1)[:-1]
        np.cumsum(at_fix, out=at_fix)
        at_fix += np.arange(fixes)
        at_crossing = np.arange(segment.size) + segment + 1
        cell = np.empty(fixes + segment.size, dtype=np.int32)
        cell[at_fix], cell[at_crossing] = self.cell[start:stop], self.crossings.cell[lo:hi]
        person = np.empty_like(cell)
        person[at_fix] = self.person[start:stop]
        person[at_crossing] = self.person[start + segment]
        trajectory = np.zeros_like(cell)
        trajectory[at_fix[1:]] = ~self.continues[start:stop - 1]
        np.cumsum(trajectory, out=trajectory)
        kept = cell != GAP
        cell, person, trajectory = cell[kept], person[kept], trajectory[kept]
        move = trajectory[1:] == trajectory[:-1]
        move &= cell[1:] != cell[:-1]
        return person[1:][move], cell[:-1][move], cell[1:][move]

    def trajectories(self) -> tuple[np.ndarray, np.ndarray]:
        """Each trajectory's fixes and length (the sum of the segments between its
        consecutive fixes, 0 for one fix), in trajectory order; whole trajectories of
        about QUERY_ROWS fixes at a time."""
        counts, lengths = [np.zeros(0, np.int64)], [np.zeros(0)]
        start = 0
        while start < len(self):
            stop = self._trajectories_end(start + QUERY_ROWS)
            continues = self.continues[start:stop - 1]
            segment = np.zeros(stop - start)  # the segment ending at each fix
            segment[1:] = np.hypot(np.diff(self.x[start:stop]), np.diff(self.y[start:stop]))
            segment[1:][~continues] = 0.0  # a trajectory's first fix ends none of its own
            first = np.flatnonzero(np.r_[True, ~continues])
            lengths.append(np.add.reduceat(segment, first))
            counts.append(np.diff(np.r_[first, stop - start]))
            start = stop
        return np.concatenate(counts), np.concatenate(lengths)

    def visits(self, times: np.ndarray) -> Iterator[Visits]:
        """The trajectories' visits (seed 000, Definition 3), whole trajectories of about
        VISIT_ROWS fixes at a time: the memberships (fixes in cells, and crossings entered
        at ``t1 + (t2 - t1) s``, to the microsecond) in order, gaps left out, consecutive
        repeats of a cell one visit; what ``050_visits.sql`` makes of memberships in SQL.

        Parameters
        ----------
        times : np.ndarray of int64
            Each fix's time, in microseconds.
        """
        first_trajectory, start = 0, 0
        while start < len(self):
            stop = self._trajectories_end(start + VISIT_ROWS)
            found = self._visits_of(times, start, stop, first_trajectory)
            first_trajectory += int(np.count_nonzero(~self.continues[start:stop]))
            start = stop
            yield found

    def _trajectories_end(self, at: int) -> int:
        """The first fix from ``at`` on that starts a trajectory (or the end)."""
        for window in range(at - 1, len(self), QUERY_ROWS):
            ends = np.flatnonzero(~self.continues[window:window + QUERY_ROWS])
            if ends.size:
                return window + int(ends[0]) + 1
        return len(self)

    def _visits_of(self, times: np.ndarray, start: int, stop: int,
                   first_trajectory: int) -> Visits:
        """The visits of fixes ``start:stop`` (whole trajectories, the first numbered
        ``first_trajectory``)."""
        located = start + np.flatnonzero(self.cell[start:stop] != GAP)
        lo, hi = np.searchsorted(self.crossings.segment, [start, stop])
        segment = self.crossings.segment[lo:hi]
        fix = np.concatenate((located, segment))
        if not fix.size:
            return Visits(*(np.zeros(0, kind) for kind in (np.int64, np.int32, np.int32,
                                                            np.int64, np.int64, np.int32)))
        # A fix comes before the crossings of the segment it starts, those in entry order.
        is_crossing = np.r_[np.zeros(located.size, bool), np.ones(segment.size, bool)]
        s = np.r_[np.zeros(located.size), self.crossings.s[lo:hi]]
        order = np.lexsort((s, is_crossing, fix))
        fix, is_crossing, s = fix[order], is_crossing[order], s[order]
        cell = np.r_[self.cell[located], self.crossings.cell[lo:hi]][order]
        t = times[fix]
        span = times[np.minimum(fix[is_crossing] + 1, len(self) - 1)] - t[is_crossing]
        t[is_crossing] += np.rint(span * s[is_crossing]).astype(np.int64)
        starts_trajectory = np.r_[True, ~self.continues[start:stop - 1]]
        trajectory = (first_trajectory - 1 + np.cumsum(starts_trajectory))[fix - start]
        first = np.flatnonzero(np.r_[True, (trajectory[1:] != trajectory[:-1])
                                     | (cell[1:] != cell[:-1])])
        last = np.r_[first[1:] - 1, fix.size - 1]
        visit_trajectory = trajectory[first]
        new = np.r_[True, visit_trajectory[1:] != visit_trajectory[:-1]]
        number = np.arange(first.size)
        visit_no = number - np.maximum.accumulate(np.where(new, number, 0)) + 1
        return Visits(visit_trajectory, visit_no.astype(np.int32), cell[first],
                      t[first], t[last], (last - first + 1).astype(np.int32))

    def group_support(self, groups: np.ndarray, members: np.ndarray) -> GroupSupport:
        """The mean over each group's persons of their mean fix in the group's cells
        (``members[i]`` is in group ``groups[i]``): each person weighs the same (DESIGN
        privacy rule 2). Groups without fixes are left out."""
        groups, members = np.asarray(groups, np.int64), np.asarray(members, np.int64)
        fixes = np.flatnonzero(np.isin(self.cell, members))
        group = _group_of(members, groups, self.cell[fixes])
        persons = int(self.person.max(initial=0)) + 1
        pairs, inverse = np.unique(group * persons + self.person[fixes], return_inverse=True)
        n = np.bincount(inverse)
        mean_x = np.bincount(inverse, weights=self.x[fixes]) / n
        mean_y = np.bincount(inverse, weights=self.y[fixes]) / n
        owners, per_group = np.unique(pairs // persons, return_inverse=True)
        n_persons = np.bincount(per_group)
        return GroupSupport(owners, n_persons, np.bincount(per_group, weights=n).astype(np.int64),
                            np.bincount(per_group, weights=mean_x) / n_persons,
                            np.bincount(per_group, weights=mean_y) / n_persons)


def _group_of(members: np.ndarray, groups: np.ndarray, cells: np.ndarray) -> np.ndarray:
    order = np.argsort(members)
    return groups[order][np.searchsorted(members[order], cells)]


@dataclass(frozen=True)
class _Visits:
    """Cells a walk ran through that count as crossings: walk row, entry (0..1), id."""

    segment: np.ndarray
    s: np.ndarray
    cell: np.ndarray


def _box_span(box: tuple[float, float, float, float], ax: np.ndarray, ay: np.ndarray,
              dx: np.ndarray, dy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each segment A + s d enters and leaves the box (Liang-Barsky), within 0..1;
    ``enter > leave`` when it misses the box.

    A segment that does not move along an axis (a parked taxi's fixes, a street along
    it) stays at one coordinate there: outside the box's range on that axis it misses
    the box, whatever it does along the other."""
    x_min, y_min, x_max, y_max = box
    enter, leave = np.zeros(len(ax)), np.ones(len(ax))
    with np.errstate(divide="ignore", invalid="ignore"):
        for a, d, low, high in ((ax, dx, x_min, x_max), (ay, dy, y_min, y_max)):
            moving = d != 0
            t1, t2 = (low - a) / d, (high - a) / d
            enter = np.where(moving, np.maximum(enter, np.minimum(t1, t2)), enter)
            leave = np.where(moving, np.minimum(leave, np.maximum(t1, t2)), leave)
            missing = ~moving & ((a < low) | (a > high))
            enter, leave = np.where(missing, 1.0, enter), np.where(missing, 0.0, leave)
    return enter, leave


def _walk(cells: Tessellation, ax: np.ndarray, ay: np.ndarray, bx: np.ndarray,
          by: np.ndarray, c1: np.ndarray, c2: np.ndarray) -> _Visits:
    """The crossings of each segment A -> B whose ends are in cells ``c1`` and ``c2``
    (ids, or GAP): walked from cell to neighbouring cell, all segments a step at a time."""
    dx, dy = bx - ax, by - ay
    enter, leave = _box_span(cells.box, ax, ay, dx, dy)
    start = np.where(c1 == GAP, enter, 0.0)
    stop = np.where(c2 == GAP, leave, 1.0)
    # A segment between two gaps may miss the box; most of the others go straight into
    # the next cell.
    rows = np.flatnonzero((start < stop) & ~cells.straight(ax, ay, dx, dy, c1, c2))
    current = np.searchsorted(cells.ids, c1[rows])
    from_gap = c1[rows] == GAP
    if from_gap.any():
        s0 = start[rows[from_gap]]
        current[from_gap] = cells.nearest(ax[rows[from_gap]] + s0 * dx[rows[from_gap]],
                                          ay[rows[from_gap]] + s0 * dy[rows[from_gap]])
    s_in = start[rows]
    found: list[tuple[np.ndarray, ...]] = []
    while rows.size:
        following, s_next = _next_cell(cells, ax[rows], ay[rows], dx[rows], dy[rows],
                                       current)
        s_out = np.minimum(s_next, stop[rows])
        found.append((rows, s_in, s_out, current))
        going = s_next < stop[rows]
        rows, current, s_in = rows[going], following[going], s_next[going]
    if not found:
        return _Visits(np.zeros(0, np.int64), np.zeros(0), np.zeros(0, np.int32))
    row, s_in, s_out, index = (np.concatenate(part) for part in zip(*found, strict=True))
    cell = cells.ids[index].astype(np.int32)
    crossing = (s_out > s_in) & (cell != c1[row]) & (cell != c2[row])
    row, s_in, cell = row[crossing], s_in[crossing], cell[crossing]
    order = np.lexsort((s_in, row))
    return _Visits(row[order], np.clip(s_in[order], 0.0, 1.0), cell[order])


def _next_cell(cells: Tessellation, ax: np.ndarray, ay: np.ndarray, dx: np.ndarray,
               dy: np.ndarray, current: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For segments now in generator ``current``: the neighbour whose line the segment
    meets first going on, and where (inf: none ahead).

    With e = h - g and m = h + g for the current generator g and a neighbour h, the lines
    meet at s = (q_h - q_g) / (2 (p_h - p_g)) = e.(m - 2A) / (2 d.e): ahead when d.e > 0
    (p grows: the segment moves away from the lines of the others). Padding has e = 0."""
    ex, ey, mx, my = (table[current] for table in cells.edge_vectors)
    ahead = dx[:, None] * ex + dy[:, None] * ey
    meet = ex * (mx - 2 * ax[:, None]) + ey * (my - 2 * ay[:, None])
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(ahead > 0, meet / (2 * ahead), np.inf)
    best = np.argmin(s, axis=1)
    rows = np.arange(len(current))
    return cells.neighbours[current, best], s[rows, best]
