"""The trajectory-groups family (seed 004) as an attacker sees it.

Targets are the window's trajectories as sequences of places (the verifier's derivation:
a visit is a run of consecutive fixes at one place). Records are the published trajectory
groups; a group stands for every person with a trajectory that spells it, i.e. holds its
places as consecutive visits (Nordström §3.2, counted in persons as §4.1 asks). Groups
publish no time, and each is a piece of trajectories, so knowledge spanning two groups
of a trajectory matches neither: the attacker is not helped by it.
"""

from __future__ import annotations

import numpy as np
import psycopg

from anonymizers.attacks.adapters.base import AttackInput, KeyCoder, sequence_input
from anonymizers.attacks.models import MODELS
from anonymizers.counting import distinct_values
from anonymizers.db.sqlfiles import fetch_columns
from anonymizers.families.groups.verifier import derive_place_sequences
from anonymizers.sequences import ranges

__all__ = ["attack_input", "spelling_persons"]

COVERED = tuple(MODELS)


def attack_input(conn: psycopg.Connection, schema: str) -> AttackInput:
    _, persons, places = derive_place_sequences(conn, schema)
    coder = KeyCoder()
    person_ids = np.unique(persons, return_inverse=True)[1].astype(np.int64)
    targets = [coder.encode(sequence) for sequence in places]
    groups = [coder.encode(list(places)) for places in
              fetch_columns(conn, "groups/attacks/published_groups.sql",
                            release=schema)["places"]]
    return sequence_input(person_ids, targets, groups,
                          spelling_persons(groups, targets, person_ids), COVERED,
                          "targets: the window's trajectories as place sequences; "
                          "records: the published trajectory groups")


def spelling_persons(groups: list[np.ndarray], sequences: list[np.ndarray],
                     persons: np.ndarray) -> list[np.ndarray]:
    """For each group, the persons with a sequence holding its places consecutively.

    One length at a time, every window of the sequences is hashed (a polynomial in wrapping
    64-bit arithmetic), looked up among the groups' hashes of that length, and a found
    window is compared place by place, so a collision never counts. A Python set of every
    window's tuple took minutes at 25M fixes.
    """
    if not groups:
        return []
    flat = np.concatenate(sequences) if sequences else np.zeros(0, np.int64)
    sizes = np.fromiter((len(s) for s in sequences), np.int64, count=len(sequences))
    sequence_end = np.repeat(np.cumsum(sizes), sizes)
    owner = np.repeat(np.asarray(persons, np.int64), sizes)
    group_sizes = np.fromiter((len(g) for g in groups), np.int64, count=len(groups))
    found = [_spelled(flat, sequence_end, owner, groups, np.flatnonzero(group_sizes == n), n)
             for n in np.unique(group_sizes).tolist()]
    base = int(owner.max()) + 1 if owner.size else 1
    pairs = distinct_values(np.concatenate([g * base + p for g, p in found]))
    group, person = pairs // base, pairs % base
    return np.split(person, np.searchsorted(group, np.arange(1, len(groups))))


_HASH_BASE = np.uint64(0x9E3779B97F4A7C15)  # odd: the hash of a window is a polynomial in it


def _spelled(flat: np.ndarray, sequence_end: np.ndarray, owner: np.ndarray,
             groups: list[np.ndarray], members: np.ndarray,
             n: int) -> tuple[np.ndarray, np.ndarray]:
    """(group, person) of every window of ``n`` places equal to one of ``groups[members]``."""
    start = np.flatnonzero(np.arange(flat.size) + n <= sequence_end)
    places = np.stack([np.asarray(groups[g], np.int64) for g in members.tolist()])
    window_hash = _polynomial_hash([flat[start + i] for i in range(n)])
    order = np.argsort(_polynomial_hash(list(places.T)))
    sorted_hash = _polynomial_hash(list(places[order].T))
    lo = np.searchsorted(sorted_hash, window_hash, side="left")
    hi = np.searchsorted(sorted_hash, window_hash, side="right")
    # Every group with the window's hash (almost always none or one) is a candidate.
    start = np.repeat(start, hi - lo)
    candidate = order[ranges(lo, hi - lo)]
    equal = np.ones(start.size, bool)
    for i in range(n):  # the places themselves: equal hashes of different windows never count
        equal &= flat[start + i] == places[candidate, i]
    return members[candidate[equal]], owner[start[equal]]


def _polynomial_hash(columns: list[np.ndarray]) -> np.ndarray:
    value = np.zeros(columns[0].size if columns else 0, np.uint64)
    for column in columns:
        value = value * _HASH_BASE + column.astype(np.uint64)
    return value
