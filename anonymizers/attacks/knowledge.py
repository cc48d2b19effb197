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

from dataclasses import dataclass
from typing import Final

import numpy as np

from anonymizers.errors import InputError
from anonymizers.sequences import ranges

__all__ = ["NO_TIME", "PRECISIONS", "Observations", "Records", "group_bounds",
           "time_keys"]

NO_TIME: Final = -1
# Truncation of a timestamp to a calendar unit: a time key counts units since the epoch
# (months: 12 * year + month).  Keys never collide across units, unlike skmob 1.3.1's
# date_time_precision, which concatenates digits without separators and whose "Hour",
# "Minute" and "Second" use the month where the hour belongs (documented in the README).
PRECISIONS: Final = ("year", "month", "day", "hour", "minute", "second")


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
    """

    record: np.ndarray
    location: np.ndarray
    time: np.ndarray
    set_offsets: np.ndarray
    set_persons: np.ndarray
    set_of: np.ndarray | None = None

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
