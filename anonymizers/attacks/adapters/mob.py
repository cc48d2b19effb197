"""The MOB family (seed 003) as an attacker sees it.

Targets are the persons of the window, each as the grid cell it occupies at each time
point (the verifier's derivation: the last fix at or before the time point, seed 003
§6.1). Records are the published objects; object o holds cell c at time t when its region
at t contains c (items are only the cells some target occupies, which is all a match can
use). An object stands for the persons it fully matches: present exactly when it is,
inside its region every time (§3's distorted versions, as the verifier pairs them).

MOB's privacy model bounds one attacker: the one of Definition 2, who knows every
published person's positions at their QID times and discards every edge of the attack
graph in no perfect matching (``yarovoy_matching``: 1 / the person's candidate objects).
An attacker who knows positions at other times is not bounded by it (positions outside
every QID are published as lattice cells, §5): skmob's models measure that risk and report
it without a bound.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import psycopg

from anonymizers.attacks.adapters.base import AttackInput
from anonymizers.attacks.knowledge import Observations, Records
from anonymizers.attacks.models import MODELS
from anonymizers.attacks.suite import ModelRun
from anonymizers.verifiers.attack_graph import Regions
from anonymizers.verifiers.mob import MobView, derive_mob_view

__all__ = ["MATCHING", "attack_input"]

MATCHING = "yarovoy_matching"
_CHUNK_CELLS = 8_000_000  # regions x cells compared at once


def attack_input(conn: psycopg.Connection, schema: str) -> AttackInput:
    view = derive_mob_view(conn, schema)
    cells = view.cells
    distinct, code = np.unique(np.column_stack([cells.x, cells.y]), axis=0,
                               return_inverse=True)
    code = code.reshape(-1).astype(np.int64)
    observations = Observations(cells.person, cells.person.copy(), code,
                                cells.t.astype(np.int64))
    return AttackInput(observations, _records(view, distinct, code),
                       (*MODELS,), (MATCHING,),
                       "person", "targets: the window's persons as grid cells on the time "
                       "grid; records: the published objects",
                       (_matching_run(view),))


def _records(view: MobView, distinct: np.ndarray, code: np.ndarray) -> Records:
    """Objects holding, at each time point, the cells their region contains that some
    target occupies at that time point (no other item can match an observation).

    Compared time point by time point: a region is tested only against the cells occupied
    at its own time, so the work and memory follow what can match (at most regions x
    persons at a time point), not regions x every cell of the window: a whole T-Drive day
    of mob_extreme_union, whose regions span most of the city, took 21.6 GB the other way.
    """
    regions, cells = view.regions, view.cells
    occupied = np.unique(np.column_stack([cells.t.astype(np.int64), code]), axis=0)
    by_time = np.argsort(regions.t, kind="stable")
    times, starts = np.unique(regions.t[by_time], return_index=True)
    ends = np.append(starts[1:], by_time.size)
    rows, located = [], []
    for t, start, end in zip(times, starts, ends, strict=True):
        lo, hi = np.searchsorted(occupied[:, 0], [t, t + 1])
        if lo == hi:
            continue
        here = occupied[lo:hi, 1]
        for row, cell in _inside(regions, by_time[start:end], distinct[here]):
            rows.append(row)
            located.append(here[cell])
    row = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    cell = np.concatenate(located) if located else np.zeros(0, dtype=np.int64)
    order = np.lexsort((cell, regions.t[row], regions.obj[row]))
    row, cell = row[order], cell[order]
    sets_order = np.lexsort((view.full_person, view.full_object))
    holders = view.full_object[sets_order]
    offsets = np.searchsorted(holders, np.arange(regions.n_objects + 1)).astype(np.int64)
    return Records(regions.obj[row].astype(np.int64), cell.astype(np.int64),
                   regions.t[row].astype(np.int64), offsets,
                   view.full_person[sets_order].astype(np.int64))


def _inside(regions: Regions, rows: np.ndarray, cells: np.ndarray
            ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(region row, index into ``cells``) of every cell inside a region of ``rows``, in
    chunks of at most _CHUNK_CELLS comparisons."""
    ux, uy = cells[:, 0], cells[:, 1]
    step = max(1, _CHUNK_CELLS // max(1, len(cells)))
    for start in range(0, rows.size, step):
        part = rows[start:start + step]
        inside = ((regions.x0[part, None] <= ux) & (ux <= regions.x1[part, None])
                  & (regions.y0[part, None] <= uy) & (uy <= regions.y1[part, None]))
        row, cell = np.nonzero(inside)
        yield part[row], cell


def _matching_run(view: MobView) -> ModelRun:
    """Definition 2's attacker: each published person's chance is 1 / their candidates."""
    candidates = np.maximum(view.candidates, 1).astype(np.float64)
    risk = 1.0 / candidates
    return ModelRun(MATCHING, 0, view.published_persons.astype(np.int64), risk, risk,
                    int(view.published_persons.size))
