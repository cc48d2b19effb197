"""The generalization family (seed 000) as an attacker sees it.

Targets are the window's trajectories, each as the sequence of published cells its fixes
visit (the verifier's derivation: fixes and, for the Voronoi methods, the cells crossed
between them; fixes outside every published cell dropped; consecutive repeats collapsed,
also those a dropped stretch leaves next to each other): the attacker maps what they
observed onto the published cells, as in Monreale's Definition 4. Inside the run that
builds a release, the same sequences are read from the visits the run made.
Records are the distinct published trajectories (copies of a sequence match alike and stand
for the same persons, so they are one record); a record stands for every person with a
trajectory whose cell sequence contains it (Definition 9's support, counted in persons).
The release publishes no time and no per-person linkage, so location-and-time knowledge
is location knowledge, and frequencies are those within one trajectory.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import psycopg
import pyarrow as pa

from anonymizers.attacks.adapters.base import AttackInput, DistinctSets, every_record
from anonymizers.attacks.index import RecordIndex
from anonymizers.attacks.knowledge import NO_TIME, Observations, Records
from anonymizers.attacks.models import MODELS
from anonymizers.counting import distinct_values
from anonymizers.db.groups import copy_columns, copy_sequences
from anonymizers.db.sqlfiles import fetch_columns, run_sql_file
from anonymizers.errors import ReleaseError
from anonymizers.families.generalization.verifier import derive_release_visits
from anonymizers.memory import compact_type, give_back
from anonymizers.sequences import relabel
from anonymizers.verifiers.base import read_release
from anonymizers.verifiers.rederive import OUTSIDE

__all__ = ["Flat", "attack_input", "containing_persons"]

READS_WORK = True  # inside its run, the targets come from {work}.visits
# Every model reads a sequence of cells; the privacy model (k-anonymity of every published
# sequence in persons) bounds all of them by 1/k.
COVERED = tuple(MODELS)


@dataclass(frozen=True)
class Flat:
    """Sequences one after another, as two arrays: sequence ``i`` is
    ``items[starts[i]:starts[i + 1]]``. (No Python object per sequence: a 25M-fix city has
    two million trajectories, and a tuple or array each took gigabytes.)"""

    items: np.ndarray
    starts: np.ndarray

    @classmethod
    def of(cls, sequences: Sequence[Sequence[int]]) -> Flat:
        lengths = np.fromiter(map(len, sequences), dtype=np.int64, count=len(sequences))
        items = np.fromiter((c for s in sequences for c in s), dtype=np.int64,
                            count=int(lengths.sum()))
        return cls(items, np.concatenate(([0], np.cumsum(lengths))).astype(np.int64))

    @classmethod
    def grouped(cls, items: np.ndarray, sequence_of: np.ndarray, n: int) -> Flat:
        """From items already grouped by sequence (``sequence_of`` non-decreasing)."""
        return cls(items, np.searchsorted(sequence_of, np.arange(n + 1)).astype(np.int64))

    def __len__(self) -> int:
        return self.starts.size - 1

    def __iter__(self) -> Iterator[np.ndarray]:
        for a, b in zip(self.starts[:-1].tolist(), self.starts[1:].tolist(), strict=True):
            yield self.items[a:b]

    @property
    def sequence_of(self) -> np.ndarray:
        """The sequence of each item (int32 where the sequences are that few)."""
        return np.repeat(np.arange(len(self), dtype=compact_type(len(self))),
                         np.diff(self.starts))


def attack_input(conn: psycopg.Connection, schema: str, work: str | None = None
                 ) -> AttackInput:
    """The attack's targets and records for release (or build) ``schema``.

    The targets are the window's trajectories over the published cells: derived from raw
    fixes by the verifier's own derivation, or, inside the run that builds the release
    (``work``: its work schema), read from the visits the run generalized them into
    (``{work}.visits``), which the tests hold equal to that derivation. The metrics step
    reads them so: at 25M fixes the suite beside the family's measures took 149.8 s
    deriving them and 93.3 s reading them. The gate's verifier never reads them: it
    derives its own."""
    if work is None:
        release = read_release(conn, schema)
        derived, _ = derive_release_visits(conn, schema, release.dataset_id, release.manifest)
        owners = derived.owner[np.searchsorted(derived.traj,
                                               np.arange(derived.n_trajectories))]
        visits = (derived.traj, derived.cell)
        del derived  # the largest arrays here at 25M fixes: gone before the indexes
    else:
        owners, visits = _generalized_visits(conn, work)
    targets, persons = _targets(*visits, owners)
    del visits
    give_back("the targets' visits")
    published = _published(conn, schema)
    # The keys stand for the cells from here on (containment is the same over either), so
    # the cell ids' arrays go at once.
    target_keys, published_keys = _dense_keys(targets.items, published.items)
    targets, published = Flat(target_keys, targets.starts), Flat(published_keys,
                                                                 published.starts)
    unit = targets.sequence_of
    offsets, members, set_of = containing_persons(published, targets, persons, unit,
                                                  ordered=True)
    give_back("the anonymity sets")
    # Nothing published has a time: one NO_TIME seen through a view, not an array of them.
    observations = Observations(unit, persons[unit], targets.items,
                                np.broadcast_to(np.int64(NO_TIME), unit.size))
    records = Records(published.sequence_of, published.items,
                      np.broadcast_to(np.int64(NO_TIME), published.items.size), offsets,
                      members, set_of)
    return AttackInput(observations, every_record(records), COVERED, COVERED, "trajectory",
                       "targets: the window's trajectories over the published cells; "
                       "records: the distinct published trajectories")


def _generalized_visits(conn: psycopg.Connection, work: str
                        ) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """The person of each trajectory number, and (trajectory number, published cell) of
    each visit of the run's ``{work}.visits`` to a published cell, in order."""
    run_sql_file(conn, "generalization/attacks/work_numbers.sql", work=work)
    owners = copy_columns(conn, "generalization/attacks/work_owners.sql",
                          {"owner": pa.int64()})["owner"]
    numbers, visits = copy_sequences(conn, "generalization/065_visit_sequences.sql",
                                     work=work, numbers=("pg_temp", "attack_trajectories"))
    found = fetch_columns(conn, "generalization/085_published_cells.sql", work=work)
    published, _ = relabel(visits, np.array(found["cell_id"], dtype=np.int64),
                           np.array(found["release_cell_id"], dtype=np.int64))
    return owners, (np.repeat(numbers, published.lengths()), published.flat)


def _targets(traj: np.ndarray, cell: np.ndarray, owners: np.ndarray
             ) -> tuple[Flat, np.ndarray]:
    """Each trajectory's published cells as one target: OUTSIDE dropped and the repeats
    this leaves next to each other collapsed, as Definition 3's visits are (a trajectory
    that leaves every published cell and comes back to the one it left has not moved in
    the release's terms). Targets are ordered by owner (stably: by trajectory within an
    owner); returned with each target's owner. ``owners``: the owner of each trajectory
    number, ``traj`` (non-decreasing) and ``cell``: the visits."""
    n = owners.size
    order = np.argsort(owners, kind="stable")
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    inside = cell != OUTSIDE
    traj, cell = traj[inside], cell[inside]
    kept = np.r_[True, (traj[1:] != traj[:-1]) | (cell[1:] != cell[:-1])]
    unit = rank[traj[kept]]
    visits = np.argsort(unit, kind="stable")  # keeps each trajectory's visits in order
    return (Flat.grouped(cell[kept][visits].astype(np.int64), unit[visits], n),
            owners[order].astype(np.int64))


def _published(conn: psycopg.Connection, schema: str) -> Flat:
    """The distinct published trajectories' cells, one record per row, in lexicographic
    order of their cells (published_items.sql), which the search for their persons relies
    on for speed (:func:`containing_persons`)."""
    _, records = copy_sequences(conn, "generalization/attacks/published_items.sql", release=schema)
    return Flat(records.flat, records.starts)


def _dense_keys(*parts: np.ndarray) -> tuple[np.ndarray, ...]:
    """Dense keys 0.. for the labels of ``parts`` (non-negative integers: cell ids),
    numbered in the order they are first met over the parts one after another (int32
    where they fit: the attack's indexes hold tens of millions of them). A table
    indexed by label, not a sort of every item: at 25M fixes the items are 32 million."""
    if any(p.size and int(p.min()) < 0 for p in parts):
        raise ReleaseError("a release's cell ids must be non-negative: the attack numbers "
                           "them by a table indexed by id")
    top = max((int(p.max()) for p in parts if p.size), default=-1)
    unseen = np.iinfo(np.int64).max
    first = np.full(top + 1, unseen, dtype=np.int64)
    offset = 0
    for part in parts:  # where each label is first met: the smallest position holding it
        np.minimum.at(first, part, offset + np.arange(part.size))
        offset += part.size
    present = np.flatnonzero(first < unseen)
    rank = np.zeros(top + 1, dtype=compact_type(present.size))
    rank[present[np.argsort(first[present], kind="stable")]] = np.arange(present.size)
    return tuple(rank[part] for part in parts)


def containing_persons(patterns: Flat, sequences: Flat, owners: np.ndarray,
                       sequence_of: np.ndarray | None = None, *, ordered: bool = False
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The persons owning a sequence that contains each pattern as a subsequence, as
    distinct sets one after another: (offsets, members, which set each pattern has).
    Members are int32 (persons are numbered 0..: 95 million members at 25M fixes), each
    pattern's matched sequences are turned into its set as they come, and equal sets are
    kept once. ``sequence_of`` is ``sequences.sequence_of`` when the caller has it;
    ``ordered``: the patterns come in lexicographic order (:meth:`RecordIndex.each_containing`)."""
    if sequence_of is None:
        sequence_of = sequences.sequence_of
    index = RecordIndex(sequence_of, sequences.items, len(sequences))
    persons = owners.astype(np.int32 if owners.size and owners.max() < 2**31 else np.int64)
    sets = DistinctSets()
    set_of = np.empty(len(patterns), dtype=np.int64)
    matched, number = None, -1
    for i, records in index.each_containing(patterns, ordered=ordered):
        if records is not matched:  # equal patterns come together, with one array
            matched, number = records, sets.add(distinct_values(persons[records]))
        set_of[i] = number
    offsets, members = sets.packed()
    return offsets, members, set_of
