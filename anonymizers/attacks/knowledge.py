"""What an attacker knows and what a release shows, as integer arrays the attack models read.

An attack (:mod:`anonymizers.attacks.models`) takes two tables:

* :class:`Observations`: what can be known about each *target*: one row per observed point
  of a unit (a person's whole data, or one trajectory of them), in time order, with the
  location and time as the release lets the attacker express them (the published cell,
  place or exact coordinates, and a time key truncated to the attack's precision).
* :class:`Records`: what the release publishes: one row per item of each published record
  (a published trajectory, a trajectory group, or, for the raw data itself, a person's
  whole data), in order, with the same location and time keys, and each record's
  *anonymity set*: the persons it can stand for.

Counting persons, not records, is what privacy rule 1 asks: a knowledge instance that
matches records R is attributed to the persons of the union of their anonymity sets.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import numpy as np

from anonymizers.errors import InputError
from anonymizers.sequences import ranges

__all__ = ["NO_TIME", "PRECISIONS", "Observations", "Records", "WholeRecords", "group_bounds",
           "time_keys", "top_two_keys"]

NO_TIME: Final = -1
# Truncation of a timestamp to a calendar unit: a time key counts units since the epoch
# (months: 12 * year + month).  Keys never collide across units, unlike skmob 1.3.1's
# date_time_precision, which concatenates digits without separators and whose "Hour",
# "Minute" and "Second" use the month where the hour belongs (documented in the README).
PRECISIONS: Final = ("year", "month", "day", "hour", "minute", "second")
_PAIRS_AT_ONCE = 1 << 22  # (key, record) pairs compared at once when ranking keys


def time_keys(epoch_seconds: np.ndarray, precision: str) -> np.ndarray:
    """The time key of each instant (seconds since the epoch, UTC) at ``precision``."""
    if precision not in PRECISIONS:
        raise InputError(f"time precision {precision!r} is not one of {', '.join(PRECISIONS)}")
    seconds = np.asarray(epoch_seconds, dtype="datetime64[s]")
    unit = {"year": "Y", "month": "M", "day": "D", "hour": "h", "minute": "m", "second": "s"}
    return seconds.astype(f"datetime64[{unit[precision]}]").astype(np.int64)


def group_bounds(keys: np.ndarray) -> np.ndarray:
    """Start offsets of the runs of equal values of ``keys`` (sorted by key), plus the end."""
    keys = np.asarray(keys)
    if keys.size == 0:
        return np.zeros(1, dtype=np.int64)
    starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
    return np.concatenate((starts, [keys.size])).astype(np.int64)


def _check_grouped(name: str, ids: np.ndarray) -> None:
    if ids.size and np.any(ids[1:] < ids[:-1]):
        raise InputError(f"{name} must be grouped in increasing id order")


@dataclass(frozen=True)
class Observations:
    """Observed points of each target unit, grouped by unit and in time order.

    Attributes
    ----------
    unit : np.ndarray of int64 (or int32)
        The unit (a person's whole data, or one of their trajectories) each row belongs to;
        rows of a unit are contiguous, units in increasing order.
    person : np.ndarray of int64
        The person of each row (constant within a unit).
    location : np.ndarray of int64 (or int32)
        Location key: what the attacker can say of the point in the release's terms.
    time : np.ndarray of int64
        Time key at the attack's precision, :data:`NO_TIME` where unknown.
    """

    unit: np.ndarray
    person: np.ndarray
    location: np.ndarray
    time: np.ndarray

    def __post_init__(self) -> None:
        n = self.unit.size
        if any(array.size != n for array in (self.person, self.location, self.time)):
            raise InputError("observation arrays differ in length")
        _check_grouped("observations", self.unit)

    @property
    def bounds(self) -> np.ndarray:
        return group_bounds(self.unit)

    def of_units(self, chosen: np.ndarray) -> Observations:
        """The rows of the units at positions ``chosen`` (increasing), as arrays of their
        own: an attack of a sample of targets keeps those, not every unit's rows (at 25M
        fixes, 16 million rows of which the release's attack reads 50 trajectories').

        Examples
        --------
        >>> seen = Observations(np.array([0, 0, 3, 5, 5]), np.array([7, 7, 8, 9, 9]),
        ...                     np.array([1, 2, 1, 4, 2]), np.full(5, NO_TIME))
        >>> seen.of_units(np.array([0, 2])).location.tolist()
        [1, 2, 4, 2]
        """
        bounds = self.bounds
        if chosen.size == bounds.size - 1:
            return self
        starts, sizes = bounds[chosen], bounds[chosen + 1] - bounds[chosen]
        rows = ranges(starts, sizes)
        return Observations(self.unit[rows], self.person[rows], self.location[rows],
                            self.time[rows])


@dataclass(frozen=True)
class WholeRecords:
    """What the attack models read of whole records when a :class:`Records` holds only the
    items some targets can match (:meth:`Records.restricted_to`).

    Attributes
    ----------
    totals : np.ndarray of int64
        Each record's number of items (a share of visits divides by it).
    top_two : callable
        ``top_two(records)``: the two most frequent location keys of each of the sorted
        record ids ``records`` (ties: the smaller key; -1 where fewer), as an (n, 2) array.
        Asked only for the records that hold the known keys, so an adapter may find them
        on demand instead of for every record.
    """

    totals: np.ndarray
    top_two: Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Records:
    """Published records, one row per item, and each record's anonymity set.

    Attributes
    ----------
    record : np.ndarray of int64 (or int32)
        Record id of each item, 0..n_records-1, items of a record contiguous and in order.
    location, time : np.ndarray of int64 (location: or int32)
        Keys of each item, as in :class:`Observations`; a record that publishes no time
        has :data:`NO_TIME`, which matches any known time.
    set_offsets, set_persons : np.ndarray of int64
        Anonymity set ``s`` is ``set_persons[set_offsets[s]:set_offsets[s+1]]`` (distinct
        persons); record ``r`` has set ``set_of[r]``.
    set_of : np.ndarray of int64 or None
        The anonymity set of each record; None: set ``r`` is record ``r``'s. Records that
        stand for the same persons share one set: the records of a generalization release
        of 1M fixes had 75 million set members, but only 1.2 million in distinct sets.
    whole : WholeRecords or None
        Set when the items are only those at the locations some targets know (see
        :meth:`restricted_to`): the sizes and top locations of the whole records.
    """

    record: np.ndarray
    location: np.ndarray
    time: np.ndarray
    set_offsets: np.ndarray
    set_persons: np.ndarray
    set_of: np.ndarray | None = None
    whole: WholeRecords | None = None

    def __post_init__(self) -> None:
        n = self.record.size
        if self.location.size != n or self.time.size != n:
            raise InputError("record arrays differ in length")
        _check_grouped("records", self.record)
        n_sets = self.set_offsets.size - 1
        if self.set_of is None and self.record.size and self.record[-1] >= n_sets:
            raise InputError("one anonymity set per record is needed")
        if self.set_of is not None and self.set_of.size and (
                self.set_of.min() < 0 or self.set_of.max() >= n_sets
                or (self.record.size and self.record[-1] >= self.set_of.size)):
            raise InputError("every record needs one of the anonymity sets")
        if self.whole is not None and self.whole.totals.size != self.n_records:
            raise InputError("the whole records' totals need one size per record")

    @property
    def n_records(self) -> int:
        return int(self.set_offsets.size - 1 if self.set_of is None else self.set_of.size)

    @property
    def record_sets(self) -> np.ndarray:
        """The anonymity set of each record (``set_of``, or each record its own)."""
        if self.set_of is None:
            return np.arange(self.set_offsets.size - 1, dtype=np.int64)
        return self.set_of

    @classmethod
    def of_persons(cls, observations: Observations) -> Records:
        """The raw data as a release of itself: one record per unit, standing for its person."""
        bounds = observations.bounds
        units = observations.unit[bounds[:-1]]
        record = np.searchsorted(units, observations.unit).astype(np.int64)
        persons = observations.person[bounds[:-1]].astype(np.int64)
        return cls(record, observations.location, observations.time,
                   np.arange(persons.size + 1, dtype=np.int64), persons)

    def restricted_to(self, locations: np.ndarray) -> Records:
        """The items at ``locations`` only, with what the models read of whole records.

        Against targets that know no other location every model's outcome is the same:
        a known location's items are all kept, so a record holds it as often, and holds a
        known sequence in the same order (deleting other items keeps a subsequence); the
        share of visits and the two most visited locations are read from :attr:`whole`.
        An attack of a sample of targets needs no more of a release whose records are
        large: MOB's objects as every occupied cell their regions hold were 489 million
        items at 5M fixes, against a few thousand at the sampled targets' cells.

        Examples
        --------
        >>> whole = Records(np.array([0, 0, 0, 1]), np.array([4, 5, 4, 5]),
        ...                 np.full(4, NO_TIME), np.array([0, 1, 2]), np.array([7, 8]))
        >>> part = whole.restricted_to(np.array([5]))
        >>> part.record.tolist(), part.whole.totals.tolist()
        ([0, 1], [3, 1])
        >>> part.whole.top_two(np.array([0, 1])).tolist()
        [[4, 5], [5, -1]]
        """
        keep = np.isin(self.location, locations)
        whole = self.whole
        if whole is None:
            pairs, count = np.unique(np.column_stack([self.record, self.location]), axis=0,
                                     return_counts=True)
            tops = top_two_keys(pairs[:, 0], pairs[:, 1], count, self.n_records)
            whole = WholeRecords(np.bincount(self.record, minlength=self.n_records),
                                 tops.__getitem__)
        return Records(self.record[keep], self.location[keep], self.time[keep],
                       self.set_offsets, self.set_persons, self.set_of, whole)


def top_two_keys(record: np.ndarray, key: np.ndarray, count: np.ndarray,
                 n_records: int) -> np.ndarray:
    """Each record's two most frequent keys (ties: the smaller key), -1 where fewer, from
    the distinct (record, key) pairs and how often each record holds its key.

    A pair's score packs its count above its key, inverted so that a smaller key scores
    higher; each record's best score, then its best among the others, by one unbuffered
    maximum each. (A sort of every pair by record, count and key took half a gigabyte
    of temporaries at 25M fixes.)"""
    tops = np.full((n_records, 2), -1, dtype=np.int64)
    if key.size == 0:
        return tops
    if int(key.min()) < 0 or int(key.max()) >= 1 << 32:
        raise InputError("location keys must be non-negative and below 2**32")
    low = np.int64((1 << 32) - 1)
    # (count << 32) | (low - key), built in place: one array of the pairs' size at a time.
    score = count.astype(np.int64)
    np.left_shift(score, 32, out=score)
    score += low
    score -= key
    for column in range(2):
        best = np.full(n_records, -1, dtype=np.int64)
        np.maximum.at(best, record, score)
        held = best >= 0
        tops[held, column] = low - (best[held] & low)
        for first in range(0, score.size, _PAIRS_AT_ONCE):  # the next round finds the second
            last = first + _PAIRS_AT_ONCE
            part = score[first:last]
            part[part == best[record[first:last]]] = -1
    return tops
