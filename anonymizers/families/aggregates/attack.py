"""The aggregates family as an attacker sees it.

Targets are the window's persons, each as the sequence of its dominant zones per bin (the
verifier's derivation from raw data): a point is a (zone, bin) pair, which is what the
release lets an attacker say of a person. Records are the published cells: a presence
cell is one point (its zone in its bin), an origin-destination cell two (its origin in the
bin before, its destination in its bin), each standing for the persons it counts. A cell
links nothing across bins, so knowledge of points in two bins matches no presence cell:
an attacker learns from the table only which cells a known point falls in, and every
published cell stands for at least k persons.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import psycopg

from anonymizers.attacks.adapters.base import (
    AttackInput,
    KeyCoder,
    every_record,
    observations_from_sequences,
    records_from_sequences,
)
from anonymizers.attacks.models import MODELS
from anonymizers.db.sqlfiles import fetch_columns
from anonymizers.families.aggregates.verifier import published_table

__all__ = ["attack_input"]

COVERED = tuple(MODELS)


def attack_input(conn: psycopg.Connection, schema: str) -> AttackInput:
    _, cells, _ = published_table(conn, schema)
    found = fetch_columns(conn, "aggregates/verify/080_read_person_bins.sql")
    persons = np.unique(np.asarray(found["user_id"], dtype=object), return_inverse=True)[1]
    coder = KeyCoder()
    points: dict[int, list[tuple[int, str]]] = defaultdict(list)
    where: dict[tuple[int, str], list[int]] = defaultdict(list)
    for person, bin_, zone in zip(persons.tolist(), found["bin"], found["zone_key"],
                                  strict=True):
        points[person].append((int(bin_), str(zone)))
        where[(int(bin_), str(zone))].append(person)
    order = sorted(points)
    targets = [coder.encode([f"{zone}@{b}" for b, zone in sorted(points[p])]) for p in order]
    records, holders = [], []
    for bin_, origin, zone in sorted(cells, key=lambda c: (c[0], c[1] or "", c[2])):
        if origin is None:
            records.append(coder.encode([f"{zone}@{bin_}"]))
            holders.append(np.unique(np.asarray(where[(bin_, zone)], np.int64)))
        else:
            records.append(coder.encode([f"{origin}@{bin_ - 1}", f"{zone}@{bin_}"]))
            holders.append(np.intersect1d(where[(bin_ - 1, origin)], where[(bin_, zone)]))
    return AttackInput(observations_from_sequences(np.asarray(order, np.int64), targets),
                       every_record(records_from_sequences(records, holders)), COVERED,
                       COVERED, "person", "targets: the window's persons as their dominant "
                       "zone per bin; records: the published cells")
