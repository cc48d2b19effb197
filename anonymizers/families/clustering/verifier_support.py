"""Which persons support each group of a TCAA release: inside its rectangle at every one of
its time points (seed 002, Definitions 4-6), from positions the verifier derived itself.

The positions come from ``sql/clustering/verify/positions.sql`` (raw fixes interpolated at
the published time points, in PostGIS); the matching against the rectangles is here, in
numpy. The rectangles of a TCAA release are large and overlap (5M-fix city: 194,340
rectangles of 5.3 km² on average, each position inside 27 of them), so the (rectangle,
position) pairs are many: 65.6 million. An SQL join of positions and rectangles on the
time point took minutes for them, and its DISTINCT count per (group, person) more; here,
per time point, the positions in bands of y as high as the median rectangle, sorted by x
within a band: a binary search of the rectangle's x range in each band it crosses, then
the y test, a few groups at a time. The distinct (rectangle, person) pairs are taken by a
sort (``counting.distinct_values``): numpy 2.4's hashing ``np.unique`` took 130 of the 5M
city's 160 s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import psycopg

from anonymizers.counting import distinct_values
from anonymizers.db.sqlfiles import fetch_columns, run_sql_file
from anonymizers.sequences import ranges, sized_runs

__all__ = ["Boxes", "GroupSupport", "Positions", "Support", "derive_support", "group_members",
           "members_and_box_persons"]

_CHUNK_PAIRS = 4_000_000  # (rectangle, candidate position) pairs tested at once


class GroupSupport(NamedTuple):
    """One published group: its id, its published (interval-filtered) size and the
    distinct persons the verifier finds consistent with it."""

    group_id: int
    n_persons: int | None
    support: int


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
    published size, its members (pairs of group id and person), and the distinct persons
    inside each rectangle at its time point (``box_persons``, in the order of ``boxes``;
    anyone of the window, not only the group's members)."""

    positions: Positions
    boxes: Boxes
    groups: np.ndarray
    n_persons: list[int | None]
    member_group: np.ndarray
    member_person: np.ndarray
    box_persons: np.ndarray | None = None

    def rows(self) -> list[GroupSupport]:
        """(group_id, published n_persons, support) of every group, by group id. Members of
        a rectangle's group id that names no published group count for no group (a
        release without the foreign key must not lend them to its neighbour id)."""
        at = np.searchsorted(self.groups, self.member_group)
        published = at < self.groups.size
        published[published] = self.groups[at[published]] == self.member_group[published]
        support = np.bincount(at[published], minlength=self.groups.size)
        return [GroupSupport(*row) for row in zip(self.groups.tolist(), self.n_persons,
                                                  support.tolist(), strict=True)]

    def region_rows(self) -> list[tuple[int, float, int]]:
        """(group_id, time point in epoch seconds, distinct persons inside) of every
        published rectangle, by time point then group id."""
        if self.box_persons is None:
            raise ValueError("this derivation did not count the persons of each rectangle")
        return list(zip(self.boxes.group.tolist(), self.boxes.t.tolist(),
                        self.box_persons.tolist(), strict=True))


def derive_support(conn: psycopg.Connection, schema: str, window: dict[str, Any]) -> Support:
    """Positions from raw fixes (SQL), rectangles and groups of release ``schema``, and
    each group's members."""
    with conn.transaction():  # the temporary tables live until its commit
        run_sql_file(conn, "clustering/verify/positions.sql", window, release=schema)
        positions = Positions.from_columns(fetch_columns(
            conn, "clustering/verify/position_rows.sql"))
    boxes = Boxes.from_columns(fetch_columns(conn, "clustering/verify/boxes.sql",
                                             release=schema))
    groups = fetch_columns(conn, "clustering/verify/groups.sql", release=schema)
    member_group, member_person, box_persons = members_and_box_persons(positions, boxes)
    return Support(positions, boxes, np.array(groups["group_id"], dtype=np.int64),
                   groups["n_persons"], member_group, member_person, box_persons)


def group_members(positions: Positions, boxes: Boxes) -> tuple[np.ndarray, np.ndarray]:
    """The (group, person) pairs with the person inside every one of the group's rectangles
    (at its time point; any of the person's positions there), sorted by group, person.

    A person counts once per rectangle however many positions it has in it, and is a
    member when the rectangles holding it are all of the group's (as SQL's
    count(DISTINCT seq) against the group's count of regions did)."""
    member_group, member_person, _ = members_and_box_persons(positions, boxes)
    return member_group, member_person


def members_and_box_persons(positions: Positions, boxes: Boxes
                            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`group_members`, and the distinct persons inside each rectangle (int64, in
    the order of ``boxes``), from the same (rectangle, person) pairs."""
    order, range_box, lo, hi = _candidate_runs(positions, boxes)
    groups, box_group = np.unique(boxes.group, return_inverse=True)
    boxes_of = np.bincount(box_group, minlength=groups.size)
    range_group = box_group[range_box]
    by_group = np.argsort(range_group, kind="stable")
    range_starts = np.concatenate(([0], np.cumsum(np.bincount(range_group,
                                                              minlength=groups.size))))
    pairs = np.bincount(range_group, weights=hi - lo, minlength=groups.size)
    n_persons = max(positions.n_persons, 1)
    found = [np.zeros(0, dtype=np.int64)]
    box_persons = np.zeros(boxes.t.size, dtype=np.int64)
    for first, last in sized_runs(pairs, _CHUNK_PAIRS):
        chosen = by_group[range_starts[first]:range_starts[last]]
        sizes = hi[chosen] - lo[chosen]
        box = np.repeat(range_box[chosen], sizes)
        row = order[ranges(lo[chosen], sizes)]
        # x lies in [x0, x1] by the search; the y test, then once per (rectangle, person).
        inside = (boxes.y0[box] <= positions.y[row]) & (positions.y[row] <= boxes.y1[box])
        held = distinct_values(box[inside] * n_persons + positions.person[row[inside]])
        # A rectangle's runs are all in one chunk (its group's): each pair counted once.
        box_persons += np.bincount(held // n_persons, minlength=boxes.t.size)
        code, count = np.unique(box_group[held // n_persons] * n_persons + held % n_persons,
                                return_counts=True)
        found.append(code[count == boxes_of[code // n_persons]])
    codes = np.concatenate(found)
    return groups[codes // n_persons], codes % n_persons, box_persons


def _candidate_runs(positions: Positions, boxes: Boxes
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The positions' rows in an order by time point, band of y, then x; and for each
    rectangle and each band its y range crosses, the run of rows in that band at its time
    point with x0 <= x <= x1: (order, rectangle of each run, run start, run end).

    Bands are as high as the median rectangle. Searching x over all of a time point's
    positions made every rectangle a strip across the whole area, whose candidates grew
    with the square of the data (the 25M-fix city's attack spent over ten minutes here).
    x is compared exactly, through its rank among the time point's positions; a band is
    floor(y / height), monotone in y, so no position inside is missed, and the y test
    after is exact.
    """
    order = np.lexsort((positions.x, positions.t))  # by time point, then x
    empty = np.zeros(0, dtype=np.int64)
    if boxes.t.size == 0:
        return order, empty, empty, empty
    times, starts = np.unique(positions.t[order], return_index=True)
    starts = np.append(starts, order.size)
    height = max(float(np.median(boxes.y1 - boxes.y0)), 1.0)
    values, first = np.unique(boxes.t, return_index=True)
    last = np.append(first[1:], boxes.t.size)
    slot = np.searchsorted(times, values)
    runs: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for s, b0, b1 in zip(slot.tolist(), first.tolist(), last.tolist(), strict=True):
        if s == times.size or times[s] != boxes.t[b0]:
            continue
        start, stop = int(starts[s]), int(starts[s + 1])
        runs.append(_runs_at_time(positions, boxes, order, start, stop, b0, b1, height))
    if not runs:
        return order, empty, empty, empty
    box, lo, hi = (np.concatenate(parts) for parts in zip(*runs, strict=True))
    return order, box, lo, hi


def _runs_at_time(positions: Positions, boxes: Boxes, order: np.ndarray, start: int,
                  stop: int, b0: int, b1: int,
                  height: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The runs of rectangles ``b0:b1`` among the rows ``order[start:stop]`` (one time
    point, sorted by x), which it reorders by band, then x."""
    rows = order[start:stop]
    xs = positions.x[rows]
    band = np.floor(positions.y[rows] / height).astype(np.int64)
    low, n = int(band.min()), rows.size
    key = (band - low) * n + np.arange(n)  # band, then rank in x
    by_key = np.argsort(key)
    order[start:stop] = rows[by_key]
    key = key[by_key]
    rank_lo = np.searchsorted(xs, boxes.x0[b0:b1], side="left")
    rank_hi = np.searchsorted(xs, boxes.x1[b0:b1], side="right")
    top = int(band.max()) - low
    band_lo = np.clip(np.floor(boxes.y0[b0:b1] / height).astype(np.int64) - low, 0, None)
    band_hi = np.clip(np.floor(boxes.y1[b0:b1] / height).astype(np.int64) - low, None, top)
    bands = np.maximum(band_hi - band_lo + 1, 0)
    box = np.repeat(np.arange(b1 - b0), bands)
    band_of = ranges(band_lo[bands > 0], bands[bands > 0])
    lo = start + np.searchsorted(key, band_of * n + rank_lo[box])
    hi = start + np.searchsorted(key, band_of * n + rank_hi[box])
    return b0 + box, lo, hi
