"""The MOB family (seed 003) as an attacker sees it.

Targets are the persons of the window, each as the grid cell it occupies at each time
point (the verifier's derivation: the last fix at or before the time point, seed 003
§6.1). Records are the published objects; object o holds cell c at time t when its region
at t contains c (items are only the cells some target occupies, which is all a match can
use). An object stands for the persons it fully matches: inside its region every time
they have a position and, where the release publishes presence (``presence``
``published``), present exactly when it is (§3's distorted versions, as the verifier
pairs them). With presence hidden every object has a region at every time point, the
withheld one where its person has no position, so it holds every occupied cell then.

Those records are never built whole: the objects' regions hold 489 million occupied cells
at 5M fixes. An attack gets the items at its targets' cells (the occupied cells there,
each stabbed into the regions of its time point) and, from every object's regions, how
many occupied cells they hold and, for the objects a home/work attacker looks at, their
two most held cells (:class:`~anonymizers.attacks.knowledge.WholeRecords`).

MOB's privacy model bounds one attacker: the one of Definition 2, who knows every
published person's positions at their QID times and discards every edge of the attack
graph in no perfect matching (``yarovoy_matching``: 1 / the person's candidate objects).
An attacker who knows positions at other times is not bounded by it (positions outside
every QID are published by the release's ``outside_qids`` rule,
:mod:`anonymizers.families.mob.outside_qids`): skmob's models measure that risk and report
it without a bound.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import psycopg

from anonymizers.attacks.adapters.base import AttackInput
from anonymizers.attacks.knowledge import Observations, Records, WholeRecords, top_two_keys
from anonymizers.attacks.models import MODELS
from anonymizers.attacks.suite import ModelRun
from anonymizers.errors import InputError
from anonymizers.families.mob.verifier import MobView, derive_mob_view
from anonymizers.families.mob.verifier_attack_graph import Regions
from anonymizers.sequences import ranges, sized_runs

__all__ = ["MATCHING", "OccupiedCells", "attack_input"]

MATCHING = "yarovoy_matching"
_CHUNK_ITEMS = 4_000_000  # region columns, or held cells, expanded at once


def attack_input(conn: psycopg.Connection, schema: str) -> AttackInput:
    view = derive_mob_view(conn, schema)
    cells = view.cells
    distinct, code = np.unique(np.column_stack([cells.x, cells.y]), axis=0,
                               return_inverse=True)
    code = code.reshape(-1).astype(np.int64)
    observations = Observations(cells.person, cells.person.copy(), code,
                                cells.t.astype(np.int64))
    occupied = OccupiedCells(cells.t, code, distinct, view.regions.n_times)
    return AttackInput(observations, partial(_records, view, occupied),
                       (*MODELS,), (MATCHING,),
                       "person", "targets: the window's persons as grid cells on the time "
                       "grid; records: the published objects",
                       (_matching_run(view),))


class OccupiedCells:
    """The distinct (time point, cell) pairs some person occupies, and which of them each
    region holds, column by column of the region: a region's cells of one grid column
    with an occupied cell at its time point are one run of this sorted table.

    Parameters
    ----------
    t, code : np.ndarray of int64
        Time point and cell code of every person's position (repeats allowed).
    distinct : np.ndarray of int64, shape (cells, 2)
        Grid column and row of each cell code.
    n_times : int
        Time points of the grid.
    """

    def __init__(self, t: np.ndarray, code: np.ndarray, distinct: np.ndarray,
                 n_times: int) -> None:
        low = distinct.min(axis=0) if distinct.size else np.zeros(2, dtype=np.int64)
        high = distinct.max(axis=0) if distinct.size else np.zeros(2, dtype=np.int64)
        self.x_min, self.y_min = int(low[0]), int(low[1])
        self.width, self.height = int(high[0] - low[0] + 1), int(high[1] - low[1] + 1)
        if float(n_times) * self.width * self.height >= 2.0 ** 62:
            raise InputError("the persons' cells spread over too many grid cells to index")
        keys = self._key(np.asarray(t, dtype=np.int64), distinct[code, 0], distinct[code, 1])
        self.keys, first = np.unique(keys, return_index=True)
        self.code = code[first]
        self.t = np.asarray(t, dtype=np.int64)[first]
        self.distinct = distinct

    def _key(self, t: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return (t * self.width + (x - self.x_min)) * self.height + (y - self.y_min)

    def at_cells(self, codes: np.ndarray) -> np.ndarray:
        """Rows of the occupied pairs whose cell is one of ``codes``."""
        return np.flatnonzero(np.isin(self.code, codes))

    def column_runs(self, regions: Regions, rows: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(position in ``rows``, first row, past the last row) of the occupied pairs each
        region of ``rows`` holds in each of its grid columns (clipped to the occupied). A
        region spanning every occupied row of the grid holds one run for all its columns
        (keys order by time point, column, row): a withheld region is one run, not one per
        column of the window's whole width."""
        x_max, y_max = self.x_min + self.width - 1, self.y_min + self.height - 1
        x0, x1 = np.maximum(regions.x0[rows], self.x_min), np.minimum(regions.x1[rows], x_max)
        y0, y1 = np.maximum(regions.y0[rows], self.y_min), np.minimum(regions.y1[rows], y_max)
        tall = (y0 == self.y_min) & (y1 == y_max)
        columns = np.where((x0 <= x1) & (y0 <= y1), np.where(tall, 1, x1 - x0 + 1), 0)
        which = np.repeat(np.arange(rows.size), columns)
        x = ranges(x0, columns)
        last_x = np.where(tall[which], x1[which], x)
        t = regions.t[rows][which]
        first = np.searchsorted(self.keys, self._key(t, x, y0[which]))
        last = np.searchsorted(self.keys, self._key(t, last_x, y1[which]), side="right")
        return which, first, last

    def held_counts(self, regions: Regions) -> np.ndarray:
        """How many occupied pairs each region holds, a few million columns at a time."""
        counts = np.zeros(regions.obj.size, dtype=np.int64)
        columns = np.clip(regions.x1 - regions.x0 + 1, 1, self.width)
        for start, stop in sized_runs(columns, _CHUNK_ITEMS):
            rows = np.arange(start, stop)
            which, first, last = self.column_runs(regions, rows)
            counts[start:stop] = np.bincount(which, last - first, minlength=rows.size)
        return counts


def _records(view: MobView, occupied: OccupiedCells, targets: Observations) -> Records:
    """The objects' items at the cells of ``targets`` (every time point some person
    occupies one of those cells inside an object's region), in time order, with the
    whole objects' item counts and their top two cells on demand."""
    regions = view.regions
    at = occupied.at_cells(np.unique(targets.location))
    cell = occupied.distinct[occupied.code[at]]
    query, row = view.index.stab(occupied.t[at], cell[:, 0], cell[:, 1])
    obj, t, code = regions.obj[row], regions.t[row], occupied.code[at][query]
    order = np.lexsort((code, t, obj))
    sets_order = np.lexsort((view.full_person, view.full_object))
    holders = view.full_object[sets_order]
    offsets = np.searchsorted(holders, np.arange(regions.n_objects + 1)).astype(np.int64)
    held = occupied.held_counts(regions)
    totals = np.bincount(regions.obj, held, minlength=regions.n_objects).astype(np.int64)
    return Records(obj[order].astype(np.int64), code[order].astype(np.int64),
                   t[order].astype(np.int64), offsets,
                   view.full_person[sets_order].astype(np.int64),
                   whole=WholeRecords(totals, _TopTwo(regions, occupied, totals)))


class _TopTwo:
    """Each object's two most held cells, found the first time the object is asked for:
    its regions' occupied cells, a few million at a time."""

    def __init__(self, regions: Regions, occupied: OccupiedCells, totals: np.ndarray) -> None:
        self.regions, self.occupied, self.totals = regions, occupied, totals
        self.region_starts = np.searchsorted(regions.obj, np.arange(regions.n_objects + 1))
        self.tops = np.full((regions.n_objects, 2), -1, dtype=np.int64)
        self.known = np.zeros(regions.n_objects, dtype=bool)

    def __call__(self, objects: np.ndarray) -> np.ndarray:
        missing = np.unique(objects[~self.known[objects]])
        for first, last in sized_runs(self.totals[missing], _CHUNK_ITEMS):
            self._rank(missing[first:last])
        return self.tops[objects]

    def _rank(self, objects: np.ndarray) -> None:
        starts = self.region_starts[objects]
        sizes = self.region_starts[objects + 1] - starts
        rows = ranges(starts, sizes)
        which, first, last = self.occupied.column_runs(self.regions, rows)
        held = self.occupied.code[ranges(first, last - first)]
        local = np.searchsorted(objects, self.regions.obj[rows])[np.repeat(which, last - first)]
        # (object, cell) pairs as one integer: a sort of numbers, not of rows.
        cells = np.int64(self.occupied.distinct.shape[0])
        pairs, count = np.unique(local * cells + held, return_counts=True)
        self.tops[objects] = top_two_keys(pairs // cells, pairs % cells, count, objects.size)
        self.known[objects] = True


def _matching_run(view: MobView) -> ModelRun:
    """Definition 2's attacker: each published person's chance is 1 / their candidates."""
    candidates = np.maximum(view.candidates, 1).astype(np.float64)
    risk = 1.0 / candidates
    return ModelRun(MATCHING, 0, view.published_persons.astype(np.int64), risk, risk,
                    int(view.published_persons.size))
