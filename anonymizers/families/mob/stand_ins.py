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

So O's person is suppressed as well (``excluded``) and the anonymization runs again, to a
fixed point: every round suppresses at least one more published object, so it ends. The
published persons are then the only persons with a full match, which the verifier checks
(``anonymizers.families.mob.verifier``).

References
----------
.. [1] Yarovoy, Bonchi, Lakshmanan, Wang. Anonymizing Moving Objects: How to Hide a MOB in a
   Crowd? EDBT 2009, §3 (distorted versions), Definitions 1-3.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

import numpy as np

from anonymizers.families.mob.anonymity import MobSets, Suppression
from anonymizers.families.mob.generalize import Generalization, generalize
from anonymizers.families.mob.moving_objects import MovingObjects
from anonymizers.families.mob.outside_qids import OutsideQids, publish_outside_qids

__all__ = ["UnambiguousRelease", "anonymize_without_stand_ins", "stand_in_targets",
           "with_blanks"]

log = logging.getLogger(__name__)

_PAIRS = 4_000_000  # (suppressed, published) pairs compared at once

Anonymization = Callable[..., MobSets]  # extreme_union or symmetric_anonymization


@dataclass(frozen=True)
class UnambiguousRelease:
    """MOB sets and regions of a release no suppressed object could pass for, and how many
    published objects were suppressed for that (``excluded``) in how many ``rounds``;
    ``blank`` marks the objects published with no location (presence hidden: the
    suppressed ones, and more to make k), whose rows ``regions`` holds."""

    sets: MobSets
    regions: Generalization
    excluded: int
    rounds: int
    blank: np.ndarray

    def published_objects(self) -> np.ndarray:
        """Indices of the published objects, blank ones included."""
        return np.flatnonzero(~self.sets.suppressed | self.blank)


def anonymize_without_stand_ins(objects: MovingObjects, k: int, anonymize: Anonymization,
                                outside: OutsideQids | None = None,
                                **options: object) -> UnambiguousRelease:
    """Run ``anonymize`` (with ``options``), Generalize and publish the rows outside every
    QID by ``outside`` (None: own cells, as in the paper), suppressing the objects that a
    suppressed object could pass for, until there are none; with presence hidden, blank
    the suppressed objects instead (:func:`with_blanks`)."""
    if outside is not None and outside.presence_hidden:
        sets = anonymize(objects, k, suppression=Suppression(objects, k), **options)
        regions = publish_outside_qids(objects, sets, generalize(objects, sets), outside)
        return with_blanks(objects, sets, regions, outside.box)
    suppression = Suppression(objects, k)
    excluded = np.zeros(objects.n_objects, dtype=bool)
    rounds = 0
    while True:
        rounds += 1
        sets = anonymize(objects, k, suppression=suppression, **options)
        regions = generalize(objects, sets)
        if outside is not None:
            regions = publish_outside_qids(objects, sets, regions, outside)
        targets = stand_in_targets(objects, sets.suppressed, regions)
        if not targets.size:
            return UnambiguousRelease(sets, regions, int(excluded.sum()), rounds,
                                      np.zeros(objects.n_objects, dtype=bool))
        log.info("MOB round %d: %d published object(s) a suppressed one could pass for; "
                 "suppressing them and anonymizing again", rounds, targets.size)
        excluded[targets] = True
        suppression.exclude(excluded)


def with_blanks(objects: MovingObjects, sets: MobSets, regions: Generalization,
                box: tuple[int, int, int, int]) -> UnambiguousRelease:
    """Every object published: the suppressed ones blank (the withheld ``box`` at every
    time point they have a position), with as many of the others, present at the fewest
    time points, as make at least k blank ones (none if nobody is suppressed)."""
    blank = sets.suppressed.copy()
    short = sets.k - int(blank.sum())
    if 0 < short < sets.k:
        others = np.flatnonzero(~blank)
        fewest = others[np.argsort(objects.present[others].sum(axis=1), kind="stable")]
        blank[fewest[:short]] = True
    kept = ~blank[regions.obj]
    obj, t = np.nonzero(objects.present & blank[:, None])
    n = obj.size
    columns = {name: np.concatenate([getattr(regions, name)[kept],
                                     np.full(n, value, dtype=getattr(regions, name).dtype)])
               for name, value in zip(("x0", "y0", "x1", "y1"), box, strict=True)}
    rows = {"obj": np.concatenate([regions.obj[kept], obj.astype(regions.obj.dtype)]),
            "t": np.concatenate([regions.t[kept], t.astype(regions.t.dtype)]),
            "cls": np.concatenate([regions.cls[kept], np.full(n, -1, dtype=regions.cls.dtype)])}
    order = np.lexsort((rows["t"], rows["obj"]))
    merged = replace(regions, obj=rows["obj"][order], t=rows["t"][order],
                     cls=rows["cls"][order], x0=columns["x0"][order],
                     y0=columns["y0"][order], x1=columns["x1"][order],
                     y1=columns["y1"][order])
    return UnambiguousRelease(sets, merged, 0, 1, blank)


def stand_in_targets(objects: MovingObjects, suppressed: np.ndarray,
                     regions: Generalization) -> np.ndarray:
    """The published objects some suppressed object could pass for: present at exactly the
    same time points, its cell inside their region at every one.

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

