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

Since every key is one person's, the records an attack of some targets gets hold only
their keys (the groups holding each of their positions or fixes, found for them): the
models run here read nothing else of a record. At 5M fixes, every position against every
rectangle took most of a TCAA release's 651 s of metrics.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import psycopg

from anonymizers.attacks.adapters.base import AttackInput
from anonymizers.attacks.knowledge import Observations, Records
from anonymizers.attacks.models import MODELS
from anonymizers.db.sqlfiles import fetch_columns, run_sql_file
from anonymizers.families.clustering.verifier import declared_traits, support_window
from anonymizers.families.clustering.verifier_support import derive_support
from anonymizers.verifiers.base import read_release

__all__ = ["Regions", "attack_input", "region_hits"]

# Every position is a key of its own, visited once: a share of visits (probability) and
# the two most visited places (home/work) mean nothing here, so those two are not run.
COVERED = tuple(m for m in MODELS if m not in ("location_probability", "home_work"))


def attack_input(conn: psycopg.Connection, schema: str) -> AttackInput:
    release = read_release(conn, schema)
    window = support_window(release)
    if declared_traits(release).aligned:
        return _aligned_input(conn, schema, window)
    support = derive_support(conn, schema, window)
    positions, boxes = support.positions, support.boxes
    # One key per distinct position (a person's fix at a time point ends one segment and
    # starts the next): the attacker knows where the target was and when.
    distinct = np.unique(np.column_stack([positions.person, positions.t, positions.x,
                                          positions.y]), axis=0)
    person = distinct[:, 0].astype(np.int64)
    t, xy = distinct[:, 1], distinct[:, 2:4]
    time_of = np.unique(t, return_inverse=True)[1].astype(np.int64)
    observations = Observations(person, person.copy(), np.arange(t.size, dtype=np.int64),
                                time_of)
    sets = _anonymity_sets(support.groups, support.member_group, support.member_person)

    def records_for(targets: Observations) -> Records:
        keys = targets.location
        point, box = boxes.holding(t[keys], xy[keys, 0], xy[keys, 1])
        return _records(keys[point], boxes.group[box], time_of, sets)

    return AttackInput(observations, records_for, COVERED, COVERED, "person",
                       "targets: the window's persons at the published time points; "
                       "records: the published groups")


def _aligned_input(conn: psycopg.Connection, schema: str,
                   window: dict[str, object]) -> AttackInput:
    """MLA: targets are the window's trajectories, fix by fix; a group holds a fix when
    one of its regions (a rectangle over an interval) does."""
    with conn.transaction():
        run_sql_file(conn, "clustering/verify/sequence_fixes.sql", window)
        run_sql_file(conn, "clustering/verify/sequence_support.sql", release=schema)
        fixes = fetch_columns(conn, "clustering/attacks/mla_fixes.sql")
        regions = Regions.from_columns(fetch_columns(conn, "clustering/attacks/mla_regions.sql"))
        members = fetch_columns(conn, "clustering/attacks/mla_members.sql")
    unit = np.unique(fixes["traj"], return_inverse=True)[1]
    persons, person_of = np.unique(fixes["person"], return_inverse=True)
    t_us = np.array(fixes["t_us"], dtype=np.int64)
    time_of = np.unique(t_us, return_inverse=True)[1]
    key = np.arange(t_us.size, dtype=np.int64)  # one key per fix
    observations = Observations(unit.astype(np.int64), person_of.astype(np.int64), key,
                                time_of.astype(np.int64))
    xy = np.column_stack([np.array(fixes["x"], dtype=np.float64),
                          np.array(fixes["y"], dtype=np.float64)])
    sets = _anonymity_sets(np.unique(regions.group_id),
                           np.array(members["group_id"], dtype=np.int64),
                           np.searchsorted(persons, members["person"]))

    def records_for(targets: Observations) -> Records:
        # Only the targets' fixes: each fix is a key of its own, no one else's matches it.
        holds, groups = region_hits(t_us[targets.location], xy[targets.location], regions)
        return _records(targets.location[holds], groups, time_of, sets)

    return AttackInput(observations, records_for, COVERED, COVERED, "trajectory",
                       "targets: the window's trajectories fix by fix; records: the "
                       "published groups (regions over intervals)")


@dataclass(frozen=True)
class Regions:
    """Published regions as the verifier matches fixes against them (the columns of
    ``sql/clustering/attacks/mla_regions.sql``): the closed rectangle [x0, x1] x [y0, y1]
    over t_start_us <= t < t_end_us (microseconds since the epoch), grouped by group_id."""

    group_id: np.ndarray
    t_start_us: np.ndarray
    t_end_us: np.ndarray
    x0: np.ndarray
    y0: np.ndarray
    x1: np.ndarray
    y1: np.ndarray

    @classmethod
    def from_columns(cls, columns: Mapping[str, Sequence[Any]]) -> Regions:
        return cls(np.array(columns["group_id"], dtype=np.int64),
                   np.array(columns["t_start_us"], dtype=np.int64),
                   np.array(columns["t_end_us"], dtype=np.int64),
                   *(np.array(columns[c], dtype=np.float64) for c in ("x0", "y0", "x1", "y1")))

    def runs(self) -> list[tuple[int, int, int]]:
        """(group_id, first, end) of every run of consecutive regions of one group."""
        first = np.ones(self.group_id.size, dtype=bool)
        first[1:] = self.group_id[1:] != self.group_id[:-1]
        starts = np.flatnonzero(first)
        ends = np.append(starts[1:], self.group_id.size)[:starts.size]  # none if empty
        return list(zip(self.group_id[starts].tolist(), starts.tolist(), ends.tolist(),
                        strict=True))


def region_hits(t_us: np.ndarray, xy: np.ndarray,
                regions: Regions) -> tuple[np.ndarray, np.ndarray]:
    """The distinct (fix, group) pairs where one of the group's regions holds the fix.

    A region holds a fix at ``t_us`` and ``xy`` when t_start <= t < t_end and the point is
    in the closed rectangle, as the verifier matches them. MLA's regions are coarse and
    overlap in time (each fix of a T-Drive morning lies in half of them), so the pairs are
    found group by group with one mask per group over the fixes of each region's interval:
    the join of every fix with every region (SQL) made 20 million rows for 35,000 fixes.
    """
    by_time = np.argsort(t_us, kind="stable")
    sorted_t = t_us[by_time]
    holds: list[np.ndarray] = []
    groups: list[np.ndarray] = []
    r = regions
    for group_id, first, end in r.runs():
        inside = np.zeros(t_us.size, dtype=bool)
        for i in range(first, end):
            span = by_time[np.searchsorted(sorted_t, r.t_start_us[i]):
                           np.searchsorted(sorted_t, r.t_end_us[i])]
            x, y = xy[span, 0], xy[span, 1]
            held = (x >= r.x0[i]) & (x <= r.x1[i]) & (y >= r.y0[i]) & (y <= r.y1[i])
            inside[span[held]] = True
        fixes = np.flatnonzero(inside)
        holds.append(fixes)
        groups.append(np.full(fixes.size, group_id, dtype=np.int64))
    if not holds:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(holds).astype(np.int64), np.concatenate(groups)


@dataclass(frozen=True)
class _Sets:
    """Every published group (a record each, by id) and its members as anonymity sets."""

    group_ids: np.ndarray
    offsets: np.ndarray
    persons: np.ndarray


def _anonymity_sets(published: np.ndarray, member_group: np.ndarray,
                    member_person: np.ndarray) -> _Sets:
    """The members (pairs of group id and person number) of every group of ``published``
    (ids) by group; a group of members but no region is a record too."""
    group_ids = np.union1d(published, member_group)
    record = np.searchsorted(group_ids, member_group)
    by_group = np.lexsort((member_person, record))
    offsets = np.searchsorted(record[by_group], np.arange(group_ids.size + 1))
    return _Sets(group_ids, offsets.astype(np.int64),
                 np.asarray(member_person, dtype=np.int64)[by_group])


def _records(holds: np.ndarray, groups: np.ndarray, time_of: np.ndarray,
             sets: _Sets) -> Records:
    """Groups holding the keys ``holds`` (pairs of key and group id ``groups``), in time
    order, with their members as anonymity sets."""
    record = np.searchsorted(sets.group_ids, groups).astype(np.int64)
    order = np.lexsort((holds, time_of[holds], record))
    return Records(record[order], holds[order], time_of[holds][order].astype(np.int64),
                   sets.offsets, sets.persons)
