"""Shared pieces of the attack adapters: dense keys, records from sequences."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from anonymizers.attacks.knowledge import NO_TIME, Observations, Records
from anonymizers.attacks.suite import ModelRun

__all__ = ["AttackInput", "DistinctSets", "KeyCoder", "RecordsFor", "distinct_sets",
           "every_record", "observations_from_sequences", "records_from_sequences",
           "sequence_input"]

# The published records as some targets (the attacked ones) can match them: every record,
# or only the items at their locations with what the models read of whole records
# (:meth:`~anonymizers.attacks.knowledge.Records.restricted_to`).
RecordsFor = Callable[[Observations], Records]


@dataclass(frozen=True)
class AttackInput:
    """Targets and published records of one release, and the models that apply to it.

    ``models`` are the attacks the release's form supports; ``covered`` those its privacy
    model bounds by 1/k (the others are measured and reported, not bounded).
    ``records_for(targets)`` gives the records to attack the units of ``targets`` (some
    units of ``observations``) with: built for them, a release whose records are large
    is never expanded whole for the few targets an attack samples.
    """

    observations: Observations
    records_for: RecordsFor
    models: tuple[str, ...]
    covered: tuple[str, ...]
    unit: str  # what a target unit is: "person" or "trajectory"
    note: str
    # Attacks the family measures itself (not instances of knowledge over records).
    runs: tuple[ModelRun, ...] = ()


class KeyCoder:
    """Dense integer keys for location labels, shared by targets and records."""

    def __init__(self) -> None:
        self._codes: dict[Hashable, int] = {}

    def encode(self, labels: Sequence[Hashable]) -> np.ndarray:
        codes = self._codes
        return np.fromiter((codes.setdefault(label, len(codes)) for label in labels),
                           dtype=np.int64, count=len(labels))


def every_record(records: Records) -> RecordsFor:
    """Records built whole, for any targets."""
    return lambda targets: records


def observations_from_sequences(persons: np.ndarray,
                                sequences: Sequence[np.ndarray]) -> Observations:
    """One target unit per sequence, of person ``persons[i]`` (units sorted by person)."""
    lengths = np.fromiter((len(s) for s in sequences), dtype=np.int64, count=len(sequences))
    unit = np.repeat(np.arange(len(sequences), dtype=np.int64), lengths)
    person = np.repeat(np.asarray(persons, dtype=np.int64), lengths)
    location = np.concatenate(sequences) if sequences else np.zeros(0, dtype=np.int64)
    return Observations(unit, person, location.astype(np.int64), np.full(unit.size, NO_TIME))


def records_from_sequences(sequences: Sequence[np.ndarray],
                           anonymity_sets: Sequence[np.ndarray]) -> Records:
    """Records whose items are the given location keys, without times; records with equal
    anonymity sets share one (the records of a k-anonymous release repeat theirs)."""
    lengths = np.fromiter((len(s) for s in sequences), dtype=np.int64, count=len(sequences))
    record = np.repeat(np.arange(len(sequences), dtype=np.int64), lengths)
    location = np.concatenate(sequences) if sequences else np.zeros(0, dtype=np.int64)
    distinct, set_of = distinct_sets(anonymity_sets)
    offsets, persons = distinct.packed()
    return Records(record, location.astype(np.int64), np.full(record.size, NO_TIME), offsets,
                   persons, set_of)


def distinct_sets(sets: Sequence[np.ndarray]) -> tuple[DistinctSets, np.ndarray]:
    """The distinct arrays of ``sets`` (as int64) and which one each is (by content; an
    array object met again is not hashed again)."""
    distinct = DistinctSets()
    by_object: dict[int, int] = {}
    set_of = np.empty(len(sets), dtype=np.int64)
    for i, members in enumerate(sets):
        found = by_object.get(id(members))
        if found is None:
            found = by_object[id(members)] = distinct.add(np.asarray(members, dtype=np.int64))
        set_of[i] = found
    return distinct, set_of


class DistinctSets:
    """Arrays kept once per distinct content, numbered in the order first added.

    Contents are looked up by a 16-byte digest, not by the bytes themselves: a dictionary
    keyed by each set's bytes held every member a second time (at 25M fixes, 95 million
    members in 237k distinct anonymity sets). A digest match is confirmed on the arrays.
    The members are copied one after another into blocks of :attr:`BLOCK` (a set larger
    than that gets a block of its own), so :meth:`packed` joins a few blocks, each freed
    once copied, instead of holding every set as an array of its own next to the result
    (at 25M fixes that was twice 363 MiB, and a heap left in pieces).
    """

    BLOCK = 1 << 24

    def __init__(self) -> None:
        self._blocks: list[np.ndarray] = []
        self._used: list[int] = []  # members in each block
        self._where: list[tuple[int, int, int]] = []  # each set's block, start, size
        self._by_digest: dict[bytes, list[int]] = {}

    def __len__(self) -> int:
        return len(self._where)

    def __getitem__(self, number: int) -> np.ndarray:
        block, start, size = self._where[number]
        return self._blocks[block][start:start + size]

    def add(self, members: np.ndarray) -> int:
        """The number of the set equal to ``members`` (added if new). All sets added must
        have one integer type (the first one's)."""
        if self._blocks and members.dtype != self._blocks[0].dtype:
            raise TypeError(f"sets of {self._blocks[0].dtype}, not {members.dtype}")
        digest = hashlib.blake2b(members.tobytes(), digest_size=16).digest()
        same = self._by_digest.setdefault(digest, [])
        for number in same:
            if np.array_equal(self[number], members):
                return number
        same.append(len(self._where))
        self._store(members)
        return same[-1]

    def _store(self, members: np.ndarray) -> None:
        if not self._blocks or self._used[-1] + members.size > self._blocks[-1].size:
            self._blocks.append(np.empty(max(self.BLOCK, members.size), dtype=members.dtype))
            self._used.append(0)
        block, start = len(self._blocks) - 1, self._used[-1]
        self._blocks[block][start:start + members.size] = members
        self._used[block] += members.size
        self._where.append((block, start, members.size))

    def packed(self) -> tuple[np.ndarray, np.ndarray]:
        """The sets one after another (offsets, members). The sets are stored in their
        order, so this joins the blocks' used parts; the blocks go as they are copied, and
        the sets are then views of the result."""
        sizes = np.fromiter((size for _, _, size in self._where), dtype=np.int64,
                            count=len(self._where))
        offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
        members = np.empty(int(offsets[-1]), dtype=self._blocks[0].dtype if self._blocks
                           else np.int64)
        at = 0
        for block, used in enumerate(self._used):
            members[at:at + used] = self._blocks[block][:used]
            self._blocks[block] = members[at:at + used]  # a view: the block goes
            at += used
        self._by_digest.clear()
        return offsets, members


def sequence_input(persons: np.ndarray, targets: Sequence[np.ndarray],
                   published: Sequence[np.ndarray], holders: Sequence[np.ndarray],
                   covered: tuple[str, ...], note: str) -> AttackInput:
    """Targets that are trajectories (person ``persons[i]``'s sequence ``targets[i]``) and
    records that are published sequences with their anonymity sets, without times."""
    return AttackInput(observations_from_sequences(persons, targets),
                       every_record(records_from_sequences(published, holders)), covered,
                       covered, "trajectory", note)
