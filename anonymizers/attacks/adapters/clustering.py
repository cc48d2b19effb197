"""The clustering family (TCAA, seed 002; MLA, seed 001) as an attacker sees it.

TCAA: targets are the persons of the window, each as their position at every published time
point (the verifier's linear interpolation between fixes, seed 002 §3). Each position is
a key of its own, held by every group whose rectangle at that time point contains it: the
attacker knows where the target was and when, and a release of rectangles per time point
answers exactly that (a position is matched only against the rectangles of its own time,
so location-only knowledge can only match fewer groups: a higher, conservative risk). A
group stands for the persons inside its rectangle at every one of its time points (its
support, as the verifier counts it), which TCAA's model makes at least k for every group,
so every attack that applies is covered.

MLA's aligned releases (regions over intervals, in order) are read fix by fix: targets are
the window's trajectories, each fix a key held by the groups one of whose regions holds it;
a group stands for the persons with a trajectory that passes its regions in order (the
verifier's chain), at least k by the model.
"""

from __future__ import annotations

import numpy as np
import psycopg

from anonymizers.attacks.adapters.base import AttackInput
from anonymizers.attacks.knowledge import Observations, Records
from anonymizers.attacks.models import MODELS
from anonymizers.db.sqlfiles import run_sql_file
from anonymizers.verifiers.base import read_release
from anonymizers.verifiers.clustering import ALIGNED_METHODS, support_window

__all__ = ["attack_input"]

# Every position is a key of its own, visited once: a share of visits (probability) and
# the two most visited places (home/work) mean nothing here, so those two are not run.
COVERED = tuple(m for m in MODELS if m not in ("location_probability", "home_work"))


def attack_input(conn: psycopg.Connection, schema: str) -> AttackInput:
    release = read_release(conn, schema)
    window = support_window(release)
    if release.manifest["method"] in ALIGNED_METHODS:
        return _aligned_input(conn, schema, window)
    with conn.transaction():
        run_sql_file(conn, "verify/clustering_support.sql", window, release=schema)
        hits = run_sql_file(conn, "attacks/clustering_hits.sql", release=schema)
        members = run_sql_file(conn, "attacks/clustering_members.sql", release=schema)
    persons, person_of = np.unique([row[0] for row in hits], return_inverse=True)
    time_of = np.unique([row[1] for row in hits], return_inverse=True)[1]
    key = np.arange(len(hits), dtype=np.int64)  # one key per (person, time point) position
    observations = Observations(person_of.astype(np.int64), person_of.astype(np.int64), key,
                                time_of.astype(np.int64))
    return AttackInput(observations, _records(hits, 2, time_of, members, persons), COVERED,
                       COVERED, "person", "targets: the window's persons at the published "
                       "time points; records: the published groups")


def _aligned_input(conn: psycopg.Connection, schema: str,
                   window: dict[str, object]) -> AttackInput:
    """MLA: targets are the window's trajectories, fix by fix; a group holds a fix when
    one of its regions (a rectangle over an interval) does."""
    with conn.transaction():
        run_sql_file(conn, "verify/clustering_sequence_fixes.sql", window)
        run_sql_file(conn, "verify/clustering_sequence_support.sql", release=schema)
        hits = run_sql_file(conn, "attacks/mla_hits.sql")
        members = run_sql_file(conn, "attacks/mla_members.sql")
    unit = np.unique([row[0] for row in hits], return_inverse=True)[1]
    persons, person_of = np.unique([row[1] for row in hits], return_inverse=True)
    time_of = np.unique([row[2] for row in hits], return_inverse=True)[1]
    key = np.arange(len(hits), dtype=np.int64)  # one key per fix
    observations = Observations(unit.astype(np.int64), person_of.astype(np.int64), key,
                                time_of.astype(np.int64))
    return AttackInput(observations, _records(hits, 3, time_of, members, persons), COVERED,
                       COVERED, "trajectory", "targets: the window's trajectories fix by "
                       "fix; records: the published groups (regions over intervals)")


def _records(hits: list[tuple], column: int, time_of: np.ndarray, members: list[tuple],
             persons: np.ndarray) -> Records:
    """Groups holding the keys (rows of ``hits``) whose group list (``column``) names them,
    in time order, with their members as anonymity sets."""
    group_ids = sorted({g for row in hits for g in row[column]} | {row[0] for row in members})
    index = {g: i for i, g in enumerate(group_ids)}
    record = np.array([index[g] for row in hits for g in row[column]], dtype=np.int64)
    holds = np.array([i for i, row in enumerate(hits) for _ in row[column]], dtype=np.int64)
    order = np.lexsort((holds, time_of[holds], record))
    member_group = np.array([index[row[0]] for row in members], dtype=np.int64)
    member_person = np.searchsorted(persons, [row[1] for row in members]).astype(np.int64)
    by_group = np.lexsort((member_person, member_group))
    offsets = np.searchsorted(member_group[by_group],
                              np.arange(len(group_ids) + 1)).astype(np.int64)
    return Records(record[order], holds[order], time_of[holds][order].astype(np.int64),
                   offsets, member_person[by_group])
