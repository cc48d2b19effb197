"""Which persons support each group of a TCAA release: inside its rectangle at every one of
its time points (seed 002, Definitions 4-6), from positions the verifier derived itself.

The positions come from ``sql/verify/clustering_positions.sql`` (raw fixes interpolated at
the published time points, in PostGIS); the matching against the rectangles is here, in
numpy. The rectangles of a TCAA release are large and overlap (5M-fix city: 194,340
rectangles of 5.3 km² on average, each position inside 27 of them), so the (rectangle,
position) pairs are many: 65.6 million. An SQL join of positions and rectangles on the
time point took minutes for them, and its DISTINCT count per (group, person) more; here,
per time point, a binary search of the rectangle's x range in the positions sorted by x,
then the y test, a few groups at a time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import psycopg

from anonymizers.db.sqlfiles import fetch_columns, run_sql_file
from anonymizers.sequences import ranges, sized_runs

__all__ = ["Boxes", "Positions", "Support", "derive_support", "group_members"]

_CHUNK_PAIRS = 4_000_000  # (rectangle, candidate position) pairs tested at once


@dataclass(frozen=True)
class Positions:
    """Positions at the published time points: person (0..n-1), t (epoch seconds), x, y."""

    person: np.ndarray
    t: np.ndarray
    x: np.ndarray
    y: np.ndarray

    @classmethod
    def from_columns(cls, columns: dict[str, list[Any]]) -> Positions:
        return cls(np.array(columns["person"], dtype=np.int64),
                   np.array(columns["t"], dtype=np.float64),
                   np.array(columns["x"], dtype=np.float64),
                   np.array(columns["y"], dtype=np.float64))

    @property
    def n_persons(self) -> int:
        return int(self.person.max()) + 1 if self.person.size else 0

    def sorted_by_time_and_x(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(row order by (t, x), the distinct time points, where each one's rows start
        in that order plus the end)."""
        order = np.lexsort((self.x, self.t))
        times, starts = np.unique(self.t[order], return_index=True)
        return order, times, np.append(starts, order.size)


@dataclass(frozen=True)
class Boxes:
    """Published rectangles: group, time point (epoch seconds), closed bounds; sorted by
    time point."""

    group: np.ndarray
    t: np.ndarray
    x0: np.ndarray
    y0: np.ndarray
    x1: np.ndarray
    y1: np.ndarray

    @classmethod
    def from_columns(cls, columns: dict[str, list[Any]]) -> Boxes:
        t = np.array(columns["t"], dtype=np.float64)
        order = np.argsort(t, kind="stable")
        return cls(np.array(columns["group_id"], dtype=np.int64)[order], t[order],
                   *(np.array(columns[c], dtype=np.float64)[order]
                     for c in ("x0", "y0", "x1", "y1")))

    def holding(self, t: np.ndarray, x: np.ndarray, y: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
        """(point, rectangle) of every rectangle holding one of the points (t, x, y) at its
        time point: for a few points, each against the rectangles of its time point."""
        first = np.searchsorted(self.t, t)
        last = np.searchsorted(self.t, t, side="right")
        point = np.repeat(np.arange(t.size), last - first)
        box = ranges(first, last - first)
        inside = self.contains(box, x[point], y[point])
        return point[inside], box[inside]

    def contains(self, box: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return ((self.x0[box] <= x) & (x <= self.x1[box])
                & (self.y0[box] <= y) & (y <= self.y1[box]))


@dataclass(frozen=True)
class Support:
    """The verifier's derivation of a TCAA release: positions, rectangles, each group's
    published size, and its members (pairs of group id and person)."""

    positions: Positions
    boxes: Boxes
    groups: np.ndarray
    n_persons: list[int | None]
    member_group: np.ndarray
    member_person: np.ndarray

    def rows(self) -> list[tuple[int, int | None, int]]:
        """(group_id, published n_persons, support) of every group, by group id. Members of
        a rectangle's group id that names no published group count for no group (a
        release without the foreign key must not lend them to its neighbour id)."""
        at = np.searchsorted(self.groups, self.member_group)
        published = at < self.groups.size
        published[published] = self.groups[at[published]] == self.member_group[published]
        support = np.bincount(at[published], minlength=self.groups.size)
        return list(zip(self.groups.tolist(), self.n_persons, support.tolist(), strict=True))


def derive_support(conn: psycopg.Connection, schema: str, window: dict[str, Any]) -> Support:
    """Positions from raw fixes (SQL), rectangles and groups of release ``schema``, and
    each group's members."""
    with conn.transaction():  # the temporary tables live until its commit
        run_sql_file(conn, "verify/clustering_positions.sql", window, release=schema)
        positions = Positions.from_columns(fetch_columns(
            conn, "verify/clustering_position_rows.sql"))
    boxes = Boxes.from_columns(fetch_columns(conn, "verify/clustering_boxes.sql",
                                             release=schema))
    groups = fetch_columns(conn, "verify/clustering_groups.sql", release=schema)
    member_group, member_person = group_members(positions, boxes)
    return Support(positions, boxes, np.array(groups["group_id"], dtype=np.int64),
                   groups["n_persons"], member_group, member_person)


def group_members(positions: Positions, boxes: Boxes) -> tuple[np.ndarray, np.ndarray]:
    """The (group, person) pairs with the person inside every one of the group's rectangles
    (at its time point; any of the person's positions there), sorted by group, person.

    A person counts once per rectangle however many positions it has in it, and is a
    member when the rectangles holding it are all of the group's (as SQL's
    count(DISTINCT seq) against the group's count of regions did)."""
    order, times, starts = positions.sorted_by_time_and_x()
    xs = positions.x[order]
    lo, hi = _x_ranges(xs, times, starts, boxes)
    groups, box_group = np.unique(boxes.group, return_inverse=True)
    boxes_of = np.bincount(box_group, minlength=groups.size)
    by_group = np.argsort(box_group, kind="stable")
    box_starts = np.concatenate(([0], np.cumsum(boxes_of)))
    pairs = np.bincount(box_group, weights=hi - lo, minlength=groups.size)
    n_persons = max(positions.n_persons, 1)
    found = [np.zeros(0, dtype=np.int64)]
    for first, last in sized_runs(pairs, _CHUNK_PAIRS):
        chosen = by_group[box_starts[first]:box_starts[last]]
        sizes = hi[chosen] - lo[chosen]
        box = np.repeat(chosen, sizes)
        row = order[ranges(lo[chosen], sizes)]
        # x lies in [x0, x1] by the search; the y test, then once per (rectangle, person).
        inside = (boxes.y0[box] <= positions.y[row]) & (positions.y[row] <= boxes.y1[box])
        held = np.unique(box[inside] * n_persons + positions.person[row[inside]])
        code, count = np.unique(box_group[held // n_persons] * n_persons + held % n_persons,
                                return_counts=True)
        found.append(code[count == boxes_of[code // n_persons]])
    codes = np.concatenate(found)
    return groups[codes // n_persons], codes % n_persons


def _x_ranges(xs: np.ndarray, times: np.ndarray, starts: np.ndarray,
              boxes: Boxes) -> tuple[np.ndarray, np.ndarray]:
    """For each rectangle, the rows of ``xs`` (positions sorted by time point, then x) at
    its time point with x0 <= x <= x1 (an empty range at a time point with no position).
    The rectangles come sorted by time point, so each time point's are one run."""
    lo = np.zeros(boxes.t.size, dtype=np.int64)
    hi = np.zeros(boxes.t.size, dtype=np.int64)
    if boxes.t.size == 0:
        return lo, hi
    values, first = np.unique(boxes.t, return_index=True)
    last = np.append(first[1:], boxes.t.size)
    slot = np.searchsorted(times, values)
    for s, b0, b1 in zip(slot.tolist(), first.tolist(), last.tolist(), strict=True):
        if s == times.size or times[s] != boxes.t[b0]:
            continue
        start, stop = int(starts[s]), int(starts[s + 1])
        lo[b0:b1] = start + np.searchsorted(xs[start:stop], boxes.x0[b0:b1], side="left")
        hi[b0:b1] = start + np.searchsorted(xs[start:stop], boxes.x1[b0:b1], side="right")
    return lo, hi
