"""Background-knowledge attacks: what an attacker who knows some points of a person learns.

Each model fixes what the attacker knows about a target unit (a few of its locations,
their order, their times, their frequencies, its two favourite places, or its first
points) and which published records that knowledge matches.  The risk of an instance of
knowledge is ``1 / c``, ``c`` the number of distinct persons behind the matching records;
a unit's risk is the maximum over its instances.  The eight models of scikit-mobility
1.3.1 (Pellungrini et al.) give the same numbers as its ``skmob.privacy.attacks`` on the
same input (``tests/test_attacks_skmob.py``), with two deliberate differences documented in
the README: time keys that do not collide, and home/work as the two *most* frequent
locations.  :class:`PrefixAttack` is Monreale et al.'s §8.4 attacker (the first j points).

Instead of skmob's loop over every combination × every person × pandas merge, a model
walks the instances depth first, intersecting sorted arrays of the records that hold each
known item (:class:`~anonymizers.attacks.index.RecordIndex`), pruning instances that
already match nothing; when a unit has more instances than ``max_instances``, a seeded
random sample of them is evaluated.

References
----------
.. [1] R. Pellungrini, L. Pappalardo, F. Pratesi, A. Monreale, "A Data Mining Approach to
   Assess Privacy Risk in Human Mobility Data", ACM TIST 9(3), 2017.
.. [2] A. Monreale et al., "Movement Data Anonymity through Generalization", Transactions
   on Data Privacy 3 (2010), §8.4.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from math import comb
from typing import Any, ClassVar

import numpy as np

from anonymizers.attacks.index import AnonymitySets, RecordIndex, intersect
from anonymizers.attacks.knowledge import NO_TIME, Records, top_two_keys
from anonymizers.errors import InputError

__all__ = [
    "MODELS",
    "OTHER_ATTACKS",
    "AttackModel",
    "HomeWorkAttack",
    "LocationAttack",
    "LocationFrequencyAttack",
    "LocationProbabilityAttack",
    "LocationProportionAttack",
    "LocationSequenceAttack",
    "LocationTimeAttack",
    "Outcome",
    "PrefixAttack",
    "Target",
    "UniqueLocationAttack",
    "describe",
]

_EMPTY = np.zeros(0, dtype=np.int64)
_TIME_BITS = 32  # a location-and-time key packs the time key into the low bits
_SAMPLE_CELLS = 4_000_000  # largest random matrix drawn at once to sample instances


@dataclass(frozen=True)
class Target:
    """One target unit: its person and its observed points in time order."""

    person: int
    location: np.ndarray
    time: np.ndarray


@dataclass(frozen=True)
class Outcome:
    """Best instance of an attack on one unit.

    ``risk`` is skmob's: max over instances of 1 / (persons behind the matching records),
    0 when no instance matches anything.  ``success`` counts only instances whose
    candidates include the target's own person: the chance that the attacker's pick is right.
    """

    risk: float
    success: float
    instances: int


class _Best:
    """Running maximum of risk and success over the instances of one unit."""

    def __init__(self, sets: AnonymitySets, person: int) -> None:
        self.sets, self.person = sets, person
        self.own = sets.records_of(person)
        self.risk = self.success = 0.0
        self.instances = 0

    def score(self, records: np.ndarray) -> None:
        self.instances += 1
        if records.size == 0:
            return
        hits_own = bool(intersect(records, self.own).size)
        # 1 / (largest anonymity set) bounds 1 / count from above: when that cannot raise
        # the risk (nor the success, for an instance that finds the target), the union of
        # the sets, the costly part, is not needed. Exact: the outcome is the same.
        largest = self.sets.largest(records)  # 0: no record stands for anyone
        if largest and 1.0 / largest <= self.risk and (
                not hits_own or 1.0 / largest <= self.success):
            return
        count = self.sets.count(records)
        if count:
            self.risk = max(self.risk, 1.0 / count)
            if hits_own:
                self.success = max(self.success, 1.0 / count)

    @property
    def done(self) -> bool:
        return self.success >= 1.0

    def outcome(self) -> Outcome:
        return Outcome(self.risk, self.success, self.instances)


class AttackModel(ABC):
    """An attacker's background knowledge of length ``knowledge_length`` and how it matches.

    Parameters
    ----------
    knowledge_length : int
        Number of known points (or locations), >= 1; a unit with fewer is known entirely.
    max_instances : int or None
        Evaluate every instance when a unit has at most this many (``None``: always),
        else this many sampled instances.
    seed : int
        Seed of that sample.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    ordered: ClassVar[bool] = False

    def __init__(self, knowledge_length: int, max_instances: int | None = 10_000,
                 seed: int = 0) -> None:
        if knowledge_length < 1:
            raise InputError("knowledge_length must be at least 1")
        self.knowledge_length = knowledge_length
        self.max_instances = max_instances
        self.rng = np.random.default_rng(seed)

    def prepare(self, records: Records, shared: dict[str, Any] | None = None) -> None:
        """Index the published records; ``shared`` keeps the indexes for the next model
        over the same records (one index per kind of key, one table of anonymity sets)."""
        shared = {} if shared is None else shared
        self.records = records
        self.timed = bool(np.any(records.time != NO_TIME))
        keys = self.record_keys(records)
        kind = "timed" if keys is not records.location else "location"
        if kind not in shared:
            shared[kind] = RecordIndex(records.record, keys, records.n_records,
                                       None if records.whole is None else records.whole.totals)
        if "sets" not in shared:
            shared["sets"] = AnonymitySets(records)
        self.index, self.sets = shared[kind], shared["sets"]

    def record_keys(self, records: Records) -> np.ndarray:
        return records.location

    def target_keys(self, target: Target) -> np.ndarray:
        return np.asarray(target.location, dtype=np.int64)

    def attack(self, target: Target) -> Outcome:
        best = _Best(self.sets, target.person)
        self.search(target, best)
        return best.outcome()

    @abstractmethod
    def search(self, target: Target, best: _Best) -> None:
        """Score every (or a sample of every) instance of knowledge about ``target``."""

    def _choose(self, n: int, size: int) -> Iterator[tuple[int, ...]] | None:
        """A sample of ``size``-subsets of ``range(n)`` when there are too many, else None."""
        if self.max_instances is None or comb(n, size) <= self.max_instances:
            return None
        if self.max_instances * n > _SAMPLE_CELLS:
            return iter(dict.fromkeys(
                tuple(sorted(self.rng.choice(n, size, replace=False).tolist()))
                for _ in range(self.max_instances)))
        # Random subsets: the first ``size`` of a random permutation of each row.
        keys = self.rng.random((self.max_instances, n))
        draws = np.sort(np.argpartition(keys, size - 1, axis=1)[:, :size], axis=1)
        return iter(dict.fromkeys(map(tuple, draws.tolist())))

    def _subsets(self, sets: Sequence[np.ndarray], best: _Best,
                 leaf: LeafCheck | None = None) -> None:
        """Score the intersections of every ``knowledge_length``-subset of ``sets``."""
        size = min(self.knowledge_length, len(sets))
        sample = self._choose(len(sets), size)
        if sample is not None:
            for chosen in sample:
                self._score_subset(sets, chosen, best, leaf)
            return
        self._depth_first(sets, 0, size, None, (), best, leaf)

    def _score_subset(self, sets: Sequence[np.ndarray], chosen: tuple[int, ...], best: _Best,
                      leaf: LeafCheck | None) -> None:
        current = sets[chosen[0]]
        for i in chosen[1:]:
            current = intersect(current, sets[i])
        best.score(leaf(current, chosen) if leaf else current)

    def _depth_first(self, sets: Sequence[np.ndarray], start: int, left: int,
                     current: np.ndarray | None, chosen: tuple[int, ...], best: _Best,
                     leaf: LeafCheck | None) -> None:
        if left == 0:
            assert current is not None
            best.score(leaf(current, chosen) if leaf else current)
            return
        for i in range(start, len(sets) - left + 1):
            if best.done:
                return
            nxt = sets[i] if current is None else intersect(current, sets[i])
            if nxt.size == 0:
                best.instances += comb(len(sets) - i - 1, left - 1)
                continue  # no extension matches anything: all score 0
            self._depth_first(sets, i + 1, left - 1, nxt, (*chosen, i), best, leaf)


class LeafCheck:
    """A filter applied to the matching records of a complete instance."""

    def __call__(self, records: np.ndarray, chosen: tuple[int, ...]) -> np.ndarray:
        raise NotImplementedError


class _PointsAttack(AttackModel):
    """Knowledge of j of the target's points: every j-subset of them (in time order), or
    a sample of them when there are too many."""

    def search(self, target: Target, best: _Best) -> None:
        keys = self.target_keys(target)
        size = min(self.knowledge_length, keys.size)
        sample = self._choose(keys.size, size)
        if sample is None:
            self.exhaustive(keys, size, best)
            return
        for chosen in sample:
            self.score_points(keys[list(chosen)], best)

    @abstractmethod
    def score_points(self, points: np.ndarray, best: _Best) -> None:
        """Score the instance made of ``points`` (keys in time order)."""

    @abstractmethod
    def exhaustive(self, keys: np.ndarray, size: int, best: _Best) -> None:
        """Score every distinct instance of ``size`` of ``keys``."""


class _MultisetAttack(_PointsAttack):
    """Known points as a multiset of keys: a record matches if it holds each key at least
    as often as the knowledge does (skmob's LocationAttack and LocationTimeAttack)."""

    def score_points(self, points: np.ndarray, best: _Best) -> None:
        values, counts = np.unique(points, return_counts=True)
        self._score_multiset(values, counts, best)

    def exhaustive(self, keys: np.ndarray, size: int, best: _Best) -> None:
        values, limits = np.unique(keys, return_counts=True)
        self._multisets(values, limits, 0, size, None, best)

    def _score_multiset(self, values: np.ndarray, counts: np.ndarray, best: _Best) -> None:
        current: np.ndarray | None = None
        for key, count in zip(values.tolist(), counts.tolist(), strict=True):
            held = self.index.holding(key, count)
            current = held if current is None else intersect(current, held)
        best.score(current if current is not None else _EMPTY)

    def _multisets(self, values: np.ndarray, limits: np.ndarray, i: int, left: int,
                   current: np.ndarray | None, best: _Best) -> None:
        """Every multiset of ``left`` more keys from ``values[i:]``, each at most its limit."""
        if left == 0:
            best.score(current if current is not None else _EMPTY)
            return
        if i == values.size or best.done or int(limits[i:].sum()) < left:
            return
        key = int(values[i])
        for take in range(min(int(limits[i]), left), -1, -1):
            if take == 0:
                self._multisets(values, limits, i + 1, left, current, best)
                continue
            held = self.index.holding(key, take)
            nxt = held if current is None else intersect(current, held)
            if nxt.size or left == take:
                self._multisets(values, limits, i + 1, left - take, nxt, best)


class LocationAttack(_MultisetAttack):
    name = "location"
    description = "knows j visited locations (with repetitions)"


class LocationTimeAttack(_MultisetAttack):
    name = "location_time"
    description = "knows j visited locations and when (at the time key's precision)"

    def record_keys(self, records: Records) -> np.ndarray:
        if not np.any(records.time != NO_TIME):
            return records.location  # the release publishes no time: time knowledge is moot
        return _pack(records.location, records.time)

    def target_keys(self, target: Target) -> np.ndarray:
        if not self.timed:
            return np.asarray(target.location, dtype=np.int64)
        return _pack(np.asarray(target.location), np.asarray(target.time))


def _pack(location: np.ndarray, time: np.ndarray) -> np.ndarray:
    if location.size and (location.min() < 0 or location.max() >= 1 << (63 - _TIME_BITS)):
        raise InputError("location keys must be dense non-negative ids")
    if time.size and (time.min() < 0 or time.max() >= 1 << _TIME_BITS):
        raise InputError("time keys out of range for a location-and-time key")
    return (location.astype(np.int64) << _TIME_BITS) | time.astype(np.int64)


class LocationSequenceAttack(_PointsAttack):
    name = "location_sequence"
    description = "knows j visited locations in the order of the visits"
    ordered = True

    def score_points(self, points: np.ndarray, best: _Best) -> None:
        best.score(self.index.containing(points))

    def exhaustive(self, keys: np.ndarray, size: int, best: _Best) -> None:
        self._sequences(keys, -1, size, None, best)

    def _sequences(self, keys: np.ndarray, after: int, left: int,
                   state: tuple[np.ndarray, np.ndarray] | None, best: _Best) -> None:
        """Every subsequence of ``left`` more keys after position ``after`` (each distinct
        subsequence once: each key is taken at its first occurrence)."""
        if left == 0:
            best.score(state[0] if state else _EMPTY)
            return
        seen: set[int] = set()
        for position in range(after + 1, keys.size - left + 1):
            key = int(keys[position])
            if key in seen or best.done:
                continue
            seen.add(key)
            nxt = self.index.start(key) if state is None else self.index.advance(*state, key)
            if nxt[0].size or left == 1:
                self._sequences(keys, position, left - 1, nxt, best)
            else:
                best.instances += 1


class PrefixAttack(LocationSequenceAttack):
    """Monreale §8.4: the attacker knows the first j points of a unit, in order."""

    name = "prefix"
    description = "knows the first j points of a trajectory, in order (Monreale §8.4)"

    def search(self, target: Target, best: _Best) -> None:
        keys = self.target_keys(target)
        if keys.size:
            best.score(self.index.containing(keys[: self.knowledge_length]))


class _VectorAttack(AttackModel):
    """Knowledge over a unit's distinct locations (its frequency vector)."""

    def frequency(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.unique(keys, return_counts=True)

    def search(self, target: Target, best: _Best) -> None:
        values, counts = self.frequency(self.target_keys(target))
        sets = [self.matching(int(v), int(c), counts) for v, c in zip(values, counts, strict=True)]
        self._subsets(sets, best, self.leaf(values, counts))

    def matching(self, key: int, count: int, counts: np.ndarray) -> np.ndarray:
        return self.index.holding(key)

    def leaf(self, values: np.ndarray, counts: np.ndarray) -> LeafCheck | None:
        return None


class UniqueLocationAttack(_VectorAttack):
    name = "unique_location"
    description = "knows j distinct visited locations"


class _ToleranceAttack(_VectorAttack):
    def __init__(self, knowledge_length: int, tolerance: float = 0.0,
                 max_instances: int | None = 10_000, seed: int = 0) -> None:
        if not 0.0 <= tolerance <= 1.0:
            raise InputError("tolerance must lie in [0, 1]")
        super().__init__(knowledge_length, max_instances, seed)
        self.tolerance = tolerance

    def _within(self, known: np.ndarray | float, published: np.ndarray) -> np.ndarray:
        # skmob's test, tolerance relative to the published value
        margin = published * self.tolerance
        return (known >= published - margin) & (known <= published + margin)


class LocationFrequencyAttack(_ToleranceAttack):
    name = "location_frequency"
    description = "knows how often the target visited j locations"

    def matching(self, key: int, count: int, counts: np.ndarray) -> np.ndarray:
        records, published = self.index.counts(key)
        return records[self._within(float(count), published.astype(np.float64))]


class LocationProbabilityAttack(_ToleranceAttack):
    name = "location_probability"
    description = "knows the share of the target's visits at j locations"

    def matching(self, key: int, count: int, counts: np.ndarray) -> np.ndarray:
        records, published = self.index.counts(key)
        share = published / self.index.totals[records]
        return records[self._within(count / int(counts.sum()), share)]


class LocationProportionAttack(_ToleranceAttack):
    name = "location_proportion"
    description = ("knows the target's visits to j locations relative to the most visited "
                   "of them")

    def leaf(self, values: np.ndarray, counts: np.ndarray) -> LeafCheck | None:
        return _Proportions(self, values, counts)


class _Proportions(LeafCheck):
    """Records whose visit counts at the known locations have the known proportions."""

    def __init__(self, model: LocationProportionAttack, values: np.ndarray,
                 counts: np.ndarray) -> None:
        self.model, self.values, self.counts = model, values, counts

    def __call__(self, records: np.ndarray, chosen: tuple[int, ...]) -> np.ndarray:
        if records.size == 0:
            return records
        published = np.empty((records.size, len(chosen)))
        for column, i in enumerate(chosen):
            holders, counts = self.model.index.counts(int(self.values[i]))
            published[:, column] = counts[np.searchsorted(holders, records)]
        known = self.counts[list(chosen)].astype(np.float64)
        known = known / known.max()
        published = published / published.max(axis=1, keepdims=True)
        return records[np.all(self.model._within(known, published), axis=1)]


class HomeWorkAttack(AttackModel):
    """Knows the target's two most visited locations (home and work)."""

    name = "home_work"
    description = "knows the target's two most visited locations"

    def __init__(self, knowledge_length: int = 2, max_instances: int | None = 10_000,
                 seed: int = 0) -> None:
        super().__init__(knowledge_length, max_instances, seed)

    def prepare(self, records: Records, shared: dict[str, Any] | None = None) -> None:
        super().prepare(records, shared)
        if records.whole is not None:
            self._tops_of = records.whole.top_two
            return
        pairs = self.index.pairs
        self._tops_of = top_two_keys(pairs.record, pairs.key, pairs.count,
                                     records.n_records).__getitem__

    def search(self, target: Target, best: _Best) -> None:
        values, counts = np.unique(self.target_keys(target), return_counts=True)
        if values.size == 0:
            return
        known = values[np.lexsort((values, -counts))[:2]].tolist()
        # A record whose top two hold a key holds it: only those are ranked.
        candidates = self.index.holding(known[0])
        for key in known[1:]:
            candidates = intersect(candidates, self.index.holding(key))
        tops = self._tops_of(candidates)
        matches = np.ones(candidates.size, dtype=bool)
        for key in known:
            matches &= np.any(tops == key, axis=1)
        best.score(candidates[matches].astype(np.int64))


# Attacks a family adapter measures itself, by name: what their attacker knows.
OTHER_ATTACKS: dict[str, str] = {
    "yarovoy_matching": ("knows every published person's positions at their QID times and "
                         "drops the attack graph's edges in no perfect matching (Yarovoy "
                         "Definition 2)"),
}


def describe(name: str) -> str:
    """What the attacker of model or attack ``name`` knows."""
    return MODELS[name].description if name in MODELS else OTHER_ATTACKS[name]


MODELS: dict[str, type[AttackModel]] = {
    model.name: model for model in (
        LocationAttack, LocationSequenceAttack, LocationTimeAttack, UniqueLocationAttack,
        LocationFrequencyAttack, LocationProbabilityAttack, LocationProportionAttack,
        HomeWorkAttack, PrefixAttack)
}
