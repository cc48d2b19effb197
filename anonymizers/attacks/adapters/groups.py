"""The trajectory-groups family (seed 004) as an attacker sees it.

Targets are the window's trajectories as sequences of places (the verifier's derivation:
a visit is a run of consecutive fixes at one place). Records are the published trajectory
groups; a group stands for every person with a trajectory that spells it, i.e. holds its
places as consecutive visits (Nordström §3.2, counted in persons as §4.1 asks). Groups
publish no time, and each is a piece of trajectories, so knowledge spanning two groups
of a trajectory matches neither: the attacker is not helped by it.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import psycopg

from anonymizers.attacks.adapters.base import AttackInput, KeyCoder, sequence_input
from anonymizers.attacks.models import MODELS
from anonymizers.db.sqlfiles import run_sql_file
from anonymizers.verifiers.groups import derive_place_sequences

__all__ = ["attack_input", "spelling_persons"]

COVERED = tuple(MODELS)


def attack_input(conn: psycopg.Connection, schema: str) -> AttackInput:
    _, persons, places = derive_place_sequences(conn, schema)
    coder = KeyCoder()
    person_ids = np.unique(persons, return_inverse=True)[1].astype(np.int64)
    targets = [coder.encode(sequence) for sequence in places]
    groups = [coder.encode(list(row[0])) for row in
              run_sql_file(conn, "attacks/published_groups.sql", release=schema)]
    return sequence_input(person_ids, targets, groups,
                          spelling_persons(groups, targets, person_ids), COVERED,
                          "targets: the window's trajectories as place sequences; "
                          "records: the published trajectory groups")


def spelling_persons(groups: list[np.ndarray], sequences: list[np.ndarray],
                     persons: np.ndarray) -> list[np.ndarray]:
    """For each group, the persons with a sequence holding its places consecutively."""
    wanted = {tuple(g.tolist()) for g in groups}
    lengths = {len(g) for g in wanted}
    spellers: dict[tuple[int, ...], set[int]] = defaultdict(set)
    for sequence, person in zip(sequences, persons.tolist(), strict=True):
        values = sequence.tolist()
        for length in lengths:
            for start in range(len(values) - length + 1):
                window = tuple(values[start:start + length])
                if window in wanted:
                    spellers[window].add(person)
    return [np.array(sorted(spellers[tuple(g.tolist())]), dtype=np.int64) for g in groups]
