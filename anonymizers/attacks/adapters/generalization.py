"""The generalization family (seed 000) as an attacker sees it.

Targets are the window's trajectories, each as the sequence of published cells its fixes
visit (the verifier's derivation: fixes and, for the Voronoi methods, the cells crossed
between them; consecutive repeats collapsed; fixes outside every cell dropped): the
attacker maps what they observed onto the published cells, as in Monreale's Definition 4.
Records are the published trajectories; a record stands for every person with a
trajectory whose cell sequence contains it (Definition 9's support, counted in persons).
The release publishes no time and no per-person linkage, so location-and-time knowledge
is location knowledge, and frequencies are those within one trajectory.
"""

from __future__ import annotations

import numpy as np
import psycopg

from anonymizers.attacks.adapters.base import (
    AttackInput,
    KeyCoder,
    records_from_sequences,
    sequence_input,
)
from anonymizers.attacks.index import RecordIndex
from anonymizers.attacks.models import MODELS
from anonymizers.db.sqlfiles import run_sql_file
from anonymizers.verifiers.base import read_release
from anonymizers.verifiers.generalization import derive_release_visits

__all__ = ["attack_input", "containing_persons"]

# Every model reads a sequence of cells; the privacy model (k-anonymity of every published
# sequence in persons) bounds all of them by 1/k.
COVERED = tuple(MODELS)


def attack_input(conn: psycopg.Connection, schema: str) -> AttackInput:
    release = read_release(conn, schema)
    derived, _ = derive_release_visits(conn, schema, release.dataset_id, release.manifest)
    inputs, owners = derived.sequences(drop_outside=True)
    coder = KeyCoder()
    order = np.argsort(np.asarray(owners, dtype=np.int64), kind="stable")
    targets = [coder.encode(inputs[i]) for i in order.tolist()]
    persons = np.asarray(owners, dtype=np.int64)[order]
    published = [coder.encode(tuple(row[0])) for row in
                 run_sql_file(conn, "attacks/published_sequences.sql", release=schema)]
    return sequence_input(persons, targets, published,
                          containing_persons(published, targets, persons), COVERED,
                          "targets: the window's trajectories over the published cells; "
                          "records: the published trajectories")


def containing_persons(patterns: list[np.ndarray], sequences: list[np.ndarray],
                       owners: np.ndarray) -> list[np.ndarray]:
    """For each pattern, the persons owning a sequence that contains it as a subsequence."""
    as_records = records_from_sequences(sequences, [np.zeros(0)] * len(sequences))
    index = RecordIndex(as_records.record, as_records.location, as_records.n_records)
    persons: dict[int, np.ndarray] = {}  # by id of the records array: equal patterns share it
    found = []
    for records in index.containing_each(patterns):
        if id(records) not in persons:
            persons[id(records)] = np.unique(owners[records])
        found.append(persons[id(records)])
    return found
