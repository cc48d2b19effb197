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

import numpy as np
import psycopg

from anonymizers.attacks.adapters.base import AttackInput
from anonymizers.attacks.knowledge import Observations, Records
from anonymizers.attacks.models import MODELS
from anonymizers.attacks.suite import ModelRun
from anonymizers.verifiers.mob import MobView, derive_mob_view

__all__ = ["MATCHING", "attack_input"]

MATCHING = "yarovoy_matching"
_CHUNK_CELLS = 8_000_000  # regions x cells compared at once


def attack_input(conn: psycopg.Connection, schema: str) -> AttackInput:
    view = derive_mob_view(conn, schema)
    cells = view.cells
    distinct, code = np.unique(np.column_stack([cells.x, cells.y]), axis=0,
                               return_inverse=True)
    observations = Observations(cells.person, cells.person.copy(),
                                code.reshape(-1).astype(np.int64), cells.t.astype(np.int64))
    return AttackInput(observations, _records(view, distinct), (*MODELS,), (MATCHING,),
                       "person", "targets: the window's persons as grid cells on the time "
                       "grid; records: the published objects",
                       (_matching_run(view),))


def _records(view: MobView, distinct: np.ndarray) -> Records:
    """Objects holding, at each time point, the target cells their region contains."""
    regions = view.regions
    rows, located = [], []
    step = max(1, _CHUNK_CELLS // max(1, len(distinct)))
    ux, uy = distinct[:, 0], distinct[:, 1]
    for start in range(0, len(regions.obj), step):
        part = slice(start, start + step)
        inside = ((regions.x0[part, None] <= ux) & (ux <= regions.x1[part, None])
                  & (regions.y0[part, None] <= uy) & (uy <= regions.y1[part, None]))
        row, cell = np.nonzero(inside)
        rows.append(row + start)
        located.append(cell)
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


def _matching_run(view: MobView) -> ModelRun:
    """Definition 2's attacker: each published person's chance is 1 / their candidates."""
    candidates = np.maximum(view.candidates, 1).astype(np.float64)
    risk = 1.0 / candidates
    return ModelRun(MATCHING, 0, view.published_persons.astype(np.int64), risk, risk,
                    int(view.published_persons.size))
