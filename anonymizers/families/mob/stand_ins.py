"""Suppressed objects that could pass for a published one, and the anonymization without them.

Definition 3 is a property of the published persons: the attacker of Definition 2 knows
who they are. A release does not say who they are; it publishes objects, and anyone
holding the raw data (the verifier, or an attacker) finds each object's person as the
one it is a distorted version of (seed 003 §3: present exactly when the object is, inside
its region at every time point). A suppressed person S can be one too: present exactly
when a published object O is and inside O's regions every time (on a city's streets at
5-minute time points, two persons often share 100 m cells all along). Then the release
reads as well with S published in place of O's person, and S, suppressed because it could
not be hidden among k, has fewer than k candidates: no one can prove Definition 3 of such
a release, whoever was really published (the first MOB release of the 1M-fix synthetic
city had five such persons, with one or two candidates each, and the gate refused it).

With presence hidden (:mod:`..outside_qids`) every object has a region at every time
point, the withheld one where its person has no position, and S passes for O when its
cell is inside O's region at every time point S has a position (whenever O's person has
none, O's withheld region holds it).

So O's person is suppressed as well (``excluded``) and the anonymization runs again, to a
fixed point: every round suppresses at least one more published object, so it ends. The
published persons are then the only persons with a full match, which the verifier checks
(``anonymizers.verifiers.mob``).

References
----------
.. [1] Yarovoy, Bonchi, Lakshmanan, Wang. Anonymizing Moving Objects: How to Hide a MOB in a
   Crowd? EDBT 2009, §3 (distorted versions), Definitions 1-3.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from anonymizers.families.mob.anonymity import MobSets, Suppression
from anonymizers.families.mob.generalize import Generalization, generalize
from anonymizers.families.mob.moving_objects import MovingObjects
from anonymizers.families.mob.outside_qids import OutsideQids, publish_outside_qids

__all__ = ["UnambiguousRelease", "anonymize_without_stand_ins", "stand_in_targets"]

log = logging.getLogger(__name__)

_PAIRS = 4_000_000  # (suppressed, published) pairs compared at once

Anonymization = Callable[..., MobSets]  # extreme_union or symmetric_anonymization


@dataclass(frozen=True)
class UnambiguousRelease:
    """MOB sets and regions of a release no suppressed object could pass for, and how many
    published objects were suppressed for that (``excluded``) in how many ``rounds``."""

    sets: MobSets
    regions: Generalization
    excluded: int
    rounds: int


def anonymize_without_stand_ins(objects: MovingObjects, k: int, anonymize: Anonymization,
                                outside: OutsideQids | None = None,
                                **options: object) -> UnambiguousRelease:
    """Run ``anonymize`` (with ``options``), Generalize and publish the rows outside every
    QID by ``outside`` (None: own cells, as in the paper), suppressing the objects that a
    suppressed object could pass for, until there are none."""
    suppression = Suppression(objects, k)
    excluded = np.zeros(objects.n_objects, dtype=bool)
    rounds = 0
    while True:
        rounds += 1
        sets = anonymize(objects, k, suppression=suppression, **options)
        regions = generalize(objects, sets)
        if outside is not None:
            regions = publish_outside_qids(objects, sets, regions, outside)
        targets = stand_in_targets(objects, sets.suppressed, regions,
                                   outside is not None and outside.presence_hidden)
        if not targets.size:
            return UnambiguousRelease(sets, regions, int(excluded.sum()), rounds)
        log.info("MOB round %d: %d published object(s) a suppressed one could pass for; "
                 "suppressing them and anonymizing again", rounds, targets.size)
        excluded[targets] = True
        suppression.exclude(excluded)


def stand_in_targets(objects: MovingObjects, suppressed: np.ndarray,
                     regions: Generalization, presence_hidden: bool = False) -> np.ndarray:
    """The published objects some suppressed object could pass for: present at exactly the
    same time points, its cell inside their region at every one (``presence_hidden``: its
    cell inside their region at every time point it has a position, where a published
    object whose person has none holds every cell).

    Parameters
    ----------
    objects
        The moving objects.
    suppressed
        bool (n_objects,): the objects not published.
    regions
        The published regions (:func:`~anonymizers.families.mob.generalize.generalize`):
        one row per present, unsuppressed (object, time point), sorted by (object, time).

    Returns
    -------
    numpy.ndarray
        int64 indices of those published objects, ascending.
    """
    if presence_hidden:
        return _covered_by(objects, np.flatnonzero(suppressed), np.flatnonzero(~suppressed),
                           regions)
    signature = _presence_signatures(objects.present)
    first_row = np.searchsorted(regions.obj, np.arange(objects.n_objects))
    found: list[np.ndarray] = []
    for hidden, shown in _groups_with_both(signature, suppressed):
        times = np.flatnonzero(objects.present[hidden[0]])
        found.append(_passed_for(objects, regions, first_row, hidden, shown, times))
    return (np.unique(np.concatenate(found)) if found
            else np.zeros(0, dtype=np.int64))


def _presence_signatures(present: np.ndarray) -> np.ndarray:
    """One id per distinct row of ``present`` (objects present at the same time points)."""
    packed = np.ascontiguousarray(np.packbits(present, axis=1))
    rows = packed.view(np.dtype((np.void, packed.shape[1]))).ravel()
    return np.unique(rows, return_inverse=True)[1].reshape(-1).astype(np.int64)


def _groups_with_both(signature: np.ndarray,
                      suppressed: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(suppressed objects, published objects) of every presence signature holding both."""
    order = np.lexsort((suppressed, signature))
    ordered = signature[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    ends = np.r_[starts[1:], order.size]
    for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
        members = order[start:end]
        hidden = suppressed[members]  # published first (False sorts first), then suppressed
        if hidden.any() and not hidden.all():
            yield members[hidden], members[~hidden]


def _passed_for(objects: MovingObjects, regions: Generalization, first_row: np.ndarray,
                hidden: np.ndarray, shown: np.ndarray, times: np.ndarray) -> np.ndarray:
    """The objects of ``shown`` whose region holds the cell of some object of ``hidden`` at
    every one of ``times`` (the time points all of them are present at)."""
    found: list[np.ndarray] = []
    per_chunk = max(1, _PAIRS // shown.size)
    for start in range(0, hidden.size, per_chunk):
        part = hidden[start:start + per_chunk]
        pair_hidden = np.repeat(part, shown.size)
        pair_shown = np.tile(shown, part.size)
        for position, t in enumerate(times.tolist()):
            row = first_row[pair_shown] + position  # the shown object's region at t
            x, y = objects.cx[pair_hidden, t], objects.cy[pair_hidden, t]
            inside = ((regions.x0[row] <= x) & (x <= regions.x1[row])
                      & (regions.y0[row] <= y) & (y <= regions.y1[row]))
            pair_hidden, pair_shown = pair_hidden[inside], pair_shown[inside]
            if not pair_shown.size:
                break
        found.append(pair_shown)
    return np.concatenate(found)


def _covered_by(objects: MovingObjects, hidden: np.ndarray, shown: np.ndarray,
                regions: Generalization) -> np.ndarray:
    """The objects of ``shown`` whose region, at every time point some object of ``hidden``
    has a position, holds its cell or is withheld (their person has no position then)."""
    key = regions.obj.astype(np.int64) * objects.n_times + regions.t
    found: list[np.ndarray] = [np.zeros(0, dtype=np.int64)]
    for one in hidden.tolist():
        candidates = shown
        for t in np.flatnonzero(objects.present[one]).tolist():
            wanted = candidates * objects.n_times + t
            row = np.minimum(np.searchsorted(key, wanted), key.size - 1)
            absent = key[row] != wanted  # withheld: holds every cell
            x, y = objects.cx[one, t], objects.cy[one, t]
            inside = ((regions.x0[row] <= x) & (x <= regions.x1[row])
                      & (regions.y0[row] <= y) & (y <= regions.y1[row]))
            candidates = candidates[absent | inside]
            if not candidates.size:
                break
        found.append(candidates)
    return np.unique(np.concatenate(found)).astype(np.int64)
