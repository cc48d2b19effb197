"""Inverted indexes over published records: which records hold a key, how often, and who
they stand for.

The attack models ask three questions many times: which records hold location key ``x``
at least ``m`` times (:meth:`RecordIndex.holding`), where the next ``x`` after a matched
position lies (:meth:`RecordIndex.advance`, for ordered knowledge), and how many persons a
set of records stands for (:meth:`AnonymitySets.count`).  Each is a slice of a sorted
array or one ``np.searchsorted``, instead of skmob's groupby over every person per
knowledge instance.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from anonymizers.attacks.knowledge import Records, group_bounds
from anonymizers.counting import distinct_values
from anonymizers.memory import compact_type
from anonymizers.sequences import ranges
from anonymizers.verifiers.containment import shared_prefix_length

__all__ = ["BITSET_BUDGET", "BITSET_RATIO", "AnonymitySets", "KeyPairs", "RecordIndex",
           "intersect"]

_EMPTY = np.zeros(0, dtype=np.int64)
# Shorter side of an intersection from which a mask beats binary search.
_MASK_FROM = 512
# Members gathered at once when counting a union of anonymity sets (8 bytes each).
_CHUNK_MEMBERS = 1 << 22
# Largest person bitset table (large sets x 64-bit words) kept in memory: 128 MB. (25M-fix
# release, the attack at release settings: 256 MB of bitsets peaked at 1,939 MiB, 128 MB at
# 1,662 MiB, the models' run 133 s against 149 s, each with another job beside it.)
BITSET_BUDGET = 16 * 1024 * 1024
# A set gets a bitset when it is at most this many times the size of its array of persons.
BITSET_RATIO = 8


def intersect(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Intersection of two sorted arrays of distinct non-negative ids (no concatenation
    and sort as in np.intersect1d): a binary search of the shorter in the longer, or, when
    the shorter is long too, a lookup in a mask of the longer's ids (the searches of long
    posting lists were most of the attack suite's time on a 5M-fix city)."""
    if a.size == 0 or b.size == 0:
        return _EMPTY
    if a.size > b.size:
        a, b = b, a
    if a.size >= _MASK_FROM:
        mask = np.zeros(int(max(a[-1], b[-1])) + 1, dtype=bool)
        mask[b] = True
        return a[mask[a]]
    at = np.searchsorted(b, a)
    at[at == b.size] = 0
    return a[b[at] == a]


@dataclass(frozen=True)
class KeyPairs:
    """Each distinct (key, record) pair and how often the record holds the key, sorted by
    key; key ``key_values[i]``'s pairs are rows ``key_starts[i]:key_starts[i + 1]``."""

    key: np.ndarray
    record: np.ndarray
    count: np.ndarray
    key_values: np.ndarray
    key_starts: np.ndarray


class RecordIndex:
    """Records by item key: for each key the records holding it, their counts and positions.

    Parameters
    ----------
    record, keys : np.ndarray of int64
        Record id and key of each item (records contiguous, items in order).
    n_records : int
        Number of records (ids 0..n_records-1; a record may have no item).
    totals : np.ndarray of int64 or None
        Each record's number of items, when the items given are only some of them
        (:class:`~anonymizers.attacks.knowledge.WholeRecords`); None: the items given.
    """

    def __init__(self, record: np.ndarray, keys: np.ndarray, n_records: int,
                 totals: np.ndarray | None = None) -> None:
        self.record = record
        self.keys = keys
        # Where each record's items start (an empty record starts where the next does).
        self.record_bounds = np.searchsorted(record, np.arange(n_records + 1)).astype(np.int64)
        self.totals = np.diff(self.record_bounds) if totals is None else totals
        self._positions(keys)
        self._holding: dict[tuple[int, int], np.ndarray] = {}

    @cached_property
    def pairs(self) -> KeyPairs:
        """The distinct (key, record) pairs. Built on first use: the subsequence search
        (:meth:`containing_each`) needs only the positions, and at 25M fixes this table of
        every target's items cost hundreds of megabytes.

        The positions are already sorted by key, each key's in increasing order, and a
        record's items are contiguous: so the records of each key's positions are sorted
        too, and the pairs are the runs of (key, record) along them, with no other sort."""
        k_sorted = self.keys[self.position_order]
        r_sorted = self.record[self.position_order]
        new = np.concatenate(([True], (k_sorted[1:] != k_sorted[:-1])
                              | (r_sorted[1:] != r_sorted[:-1]))) if self.keys.size else _EMPTY
        starts = np.flatnonzero(new).astype(compact_type(self.keys.size))
        del new
        key = k_sorted[starts]
        del k_sorted
        count = np.diff(starts, append=self.keys.size).astype(np.int32)
        # Records as int32 when they fit: tens of millions of pairs at 25M fixes.
        record = r_sorted[starts].astype(compact_type(self.totals.size))
        return KeyPairs(key, record, count, *self._key_slices(key))

    @staticmethod
    def _key_slices(sorted_keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        bounds = group_bounds(sorted_keys)
        return sorted_keys[bounds[:-1]], bounds

    def _positions(self, keys: np.ndarray) -> None:
        # Positions of each key in the concatenation of all records, grouped by key; a
        # stable sort keeps each key's positions increasing, as advance() needs.
        self.position_order = np.argsort(keys, kind="stable").astype(compact_type(keys.size))
        self.position_values, self.position_starts = self._key_slices(keys[self.position_order])

    def _slice(self, values: np.ndarray, starts: np.ndarray, key: int) -> slice:
        at = int(np.searchsorted(values, key))
        if at == values.size or values[at] != key:
            return slice(0, 0)
        return slice(int(starts[at]), int(starts[at + 1]))

    def holding(self, key: int, at_least: int = 1) -> np.ndarray:
        """Sorted records holding ``key`` at least ``at_least`` times (memoized: the same
        keys come back for target after target)."""
        found = self._holding.get((key, at_least))
        if found is None:
            pairs = self.pairs
            part = self._slice(pairs.key_values, pairs.key_starts, key)
            records, counts = pairs.record[part], pairs.count[part]
            found = records if at_least <= 1 else records[counts >= at_least]
            self._holding[(key, at_least)] = found
        return found

    def counts(self, key: int) -> tuple[np.ndarray, np.ndarray]:
        """Records holding ``key`` and how many times each does."""
        pairs = self.pairs
        part = self._slice(pairs.key_values, pairs.key_starts, key)
        return pairs.record[part], pairs.count[part]

    def start(self, key: int) -> tuple[np.ndarray, np.ndarray]:
        """Records holding ``key`` and the position of its first occurrence in each."""
        positions = self.position_order[self._slice(self.position_values,
                                                    self.position_starts, key)]
        records = self.record[positions]
        first = np.concatenate(([True], records[1:] != records[:-1])) if records.size else _EMPTY
        return records[first], positions[first]

    def advance(self, records: np.ndarray, positions: np.ndarray,
                key: int) -> tuple[np.ndarray, np.ndarray]:
        """Of ``records`` matched up to ``positions``, those holding ``key`` later, and where.

        Greedy leftmost matching decides subsequence containment, so the next occurrence
        after the matched position is the one to take.
        """
        occurrences = self.position_order[self._slice(self.position_values,
                                                      self.position_starts, key)]
        if occurrences.size == 0 or records.size == 0:
            return _EMPTY, _EMPTY
        nxt = np.searchsorted(occurrences, positions, side="right")
        found = nxt < occurrences.size
        candidate = occurrences[np.minimum(nxt, occurrences.size - 1)]
        ends = self.record_bounds[records + 1]
        keep = found & (candidate < ends)
        return records[keep], candidate[keep]

    def containing(self, pattern: np.ndarray) -> np.ndarray:
        """Sorted records holding ``pattern`` as a subsequence (in order, gaps allowed)."""
        if pattern.size == 0:
            return _EMPTY
        records, positions = self.start(int(pattern[0]))
        for key in pattern[1:].tolist():
            records, positions = self.advance(records, positions, key)
        return records

    def containing_each(self, patterns: Iterable[np.ndarray]) -> list[np.ndarray]:
        """``containing(p)`` for every pattern ``p`` (equal patterns get one shared array);
        :meth:`each_containing` says how."""
        listed = list(patterns)
        found: list[np.ndarray] = [_EMPTY] * len(listed)
        for i, records in self.each_containing(listed):
            found[i] = records
        return found

    def each_containing(self, patterns: Iterable[np.ndarray], *, ordered: bool = False
                        ) -> Iterator[tuple[int, np.ndarray]]:
        """``(i, containing(patterns[i]))`` for every pattern, in the patterns' lexicographic
        order (equal patterns one after another, with one shared array); ``ordered``: in
        the order given, which the caller chose so that patterns sharing a prefix come
        together (the results are the same in any order; only the time differs). A caller
        that keeps only what it derives from each array holds one path of the prefix
        tree's matches at a time: at 25M fixes all the arrays together were most of a
        gigabyte.

        Matching a pattern key by key leaves, after each prefix, the matched records and
        where each matched. Patterns in lexicographic order share their longest common
        prefix with the one before, so with those states kept on a stack each pattern only
        matches its own suffix. A k-anonymous release's sequences share prefixes by
        construction (a prefix tree), so this costs about one pass over the matched records
        per prefix-tree node, against one per pattern from its first key, which grows with
        the square of the records (24k patterns of a 1M-fix city: 25.7 s that way).
        Sorting here makes a tuple per pattern: at 25M fixes, 1.9 million of them and their
        integers took about 800 MB, which a caller whose patterns come ordered does without.
        """
        if ordered:
            keyed: Iterable[tuple[list[int], int]] = ((p.tolist(), i)
                                                      for i, p in enumerate(patterns))
        else:
            keyed = sorted((p.tolist(), i) for i, p in enumerate(patterns))
        states: list[tuple[np.ndarray, np.ndarray]] = []
        previous: list[int] | None = None
        for key, i in keyed:
            if key != previous:
                shared = shared_prefix_length(key, previous or [])
                del states[shared:]
                for depth in range(shared, len(key)):
                    states.append(self.start(key[0]) if depth == 0
                                  else self.advance(*states[-1], key[depth]))
                previous = key
            yield i, states[-1][0] if key else _EMPTY


class AnonymitySets:
    """The persons behind sets of records (the union of their anonymity sets).

    Records may share an anonymity set (``Records.set_of``); everything here works on the
    distinct sets. A union is counted as the bitwise OR of one bitset of persons per large
    set, plus the members of the small sets that OR leaves out. The large sets are those
    whose bitset is at most :data:`BITSET_RATIO` times their array of persons, largest
    first while :data:`BITSET_BUDGET` words last: a few sets of a popular cell hold most of
    the members (5M-fix city: 500 of 25k sets hold half of 7M members), and merging their
    arrays was most of the suite's time. Counts are memoized by set of sets: many
    instances of knowledge match the same records.

    Memory: besides the records' own arrays, one array per record and the bitsets. No
    index of sets by person (a 25M-fix city has tens of millions of members):
    :meth:`records_of`, asked once per target, scans the members instead.
    """

    def __init__(self, records: Records) -> None:
        self.offsets = records.set_offsets
        self.persons = records.set_persons
        self.set_of = records.record_sets
        sizes = np.diff(self.offsets)
        self.sizes = sizes
        self.singletons = bool(np.all(sizes == 1))
        self._records_by_set = np.argsort(self.set_of, kind="stable")
        self._set_starts = np.searchsorted(self.set_of[self._records_by_set],
                                           np.arange(sizes.size + 1))
        self._ids = self._bit_ids()
        self._words = (int(self._ids.max(initial=-1)) + 64) // 64
        self._row = np.full(sizes.size, -1, dtype=np.int64)  # bitset row of a large set
        self._bits = self._bitsets()
        self._memo: dict[bytes, int] = {}
        self._records_of: dict[int, np.ndarray] = {}

    def _bit_ids(self) -> np.ndarray:
        """Each member's bit: the person itself when persons are small non-negative
        numbers (the adapters number them 0, 1, ...), else its rank among them."""
        persons = self.persons
        if persons.size == 0 or (int(persons.min()) >= 0
                                 and int(persons.max()) < 4 * persons.size + 4096):
            return persons
        return np.unique(persons, return_inverse=True)[1].reshape(-1)

    def _bitsets(self) -> np.ndarray:
        """One bitset of persons per large set (rows by ``_row``), set by set: no
        temporary array over all members."""
        if self.singletons or self._words == 0:
            return np.zeros((0, self._words), dtype=np.uint64)
        by_size = np.argsort(-self.sizes, kind="stable")
        worth = by_size[self.sizes[by_size] * BITSET_RATIO >= self._words]
        large = worth[:BITSET_BUDGET // self._words]
        self._row[large] = np.arange(large.size)
        bits = np.zeros((large.size, self._words), dtype=np.uint64)
        one = np.uint64(1)
        for row, chosen in enumerate(large.tolist()):
            ids = self._ids[self.offsets[chosen]:self.offsets[chosen + 1]]
            np.bitwise_or.at(bits[row], ids // 64, np.left_shift(one, (ids % 64).astype(
                np.uint64)))
        return bits

    def _members_of_sets(self, sets: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Distinct ``values`` (per member of a set) of the members of ``sets``."""
        return distinct_values(np.concatenate([*self._member_chunks(sets, values), _EMPTY]))

    def _member_chunks(self, sets: np.ndarray, values: np.ndarray) -> Iterator[np.ndarray]:
        """``values`` of the members of ``sets``, about :data:`_CHUNK_MEMBERS` at a time
        (a union over a popular cell's records reaches most of the members: at 25M fixes,
        tens of millions, and three arrays of them at once were over a gigabyte)."""
        sizes = self.sizes[sets]
        ends = np.cumsum(sizes)
        first = 0
        while first < sets.size:
            done = int(ends[first - 1]) if first else 0
            last = max(int(np.searchsorted(ends, done + _CHUNK_MEMBERS, side="right")),
                       first + 1)
            chunk = sets[first:last]
            yield values[ranges(self.offsets[chunk], sizes[first:last])]
            first = last

    def members(self, records: np.ndarray) -> np.ndarray:
        """Distinct persons of the anonymity sets of ``records``."""
        sets = distinct_values(self.set_of[records])
        if self.singletons:  # set s is persons[s]
            return distinct_values(self.persons[sets])
        return self._members_of_sets(sets, self.persons)

    def largest(self, records: np.ndarray) -> int:
        """Size of the largest anonymity set among ``records``: a lower bound of
        :meth:`count`, far cheaper than the union."""
        return int(self.sizes[self.set_of[records]].max(initial=0))

    def count(self, records: np.ndarray) -> int:
        if records.size == 0:
            return 0
        if self.singletons:
            return int(distinct_values(self.persons[self.set_of[records]]).size)
        sets = distinct_values(self.set_of[records])
        # Keyed by a digest of the sets: a popular cell's instance matches records of
        # hundreds of thousands of sets, megabytes of key kept per instance otherwise.
        key = hashlib.blake2b(sets.tobytes(), digest_size=16).digest()
        found = self._memo.get(key)
        if found is None:
            found = self._union_size(sets)
            self._memo[key] = found
        return found

    def _union_size(self, sets: np.ndarray) -> int:
        """Distinct persons of ``sets``: the OR of the large ones' bitsets, with the small
        ones' members marked on it chunk by chunk."""
        rows = self._row[sets]
        union = np.zeros(self._words, dtype=np.uint64)
        for row in rows[rows >= 0].tolist():  # in place: no copy of the chosen rows
            np.bitwise_or(union, self._bits[row], out=union)
        small = sets[rows < 0]
        if small.size == 0:
            return int(np.bitwise_count(union).sum())
        # Bit b of word w is id 64 w + b (words little-endian, bits from the lowest).
        seen = np.unpackbits(union.astype("<u8").view(np.uint8), bitorder="little").view(bool)
        for ids in self._member_chunks(small, self._ids):
            seen[ids] = True
        return int(np.count_nonzero(seen))

    def records_of(self, person: int) -> np.ndarray:
        """Sorted records whose anonymity set holds ``person`` (memoized: every model and
        knowledge length asks again for the same targets)."""
        found = self._records_of.get(person)
        if found is None:
            found = self._records_of[person] = self._find_records_of(person)
        return found

    def _find_records_of(self, person: int) -> np.ndarray:
        at = np.flatnonzero(self.persons == person)
        # The set holding member position p: the last whose offset is at most p (an empty
        # set shares its offset with the next one and is skipped by side="right").
        sets = distinct_values(np.searchsorted(self.offsets, at, side="right") - 1)
        parts = [self._records_by_set[self._set_starts[s]:self._set_starts[s + 1]]
                 for s in sets.tolist()]
        return np.sort(np.concatenate(parts)) if parts else _EMPTY
