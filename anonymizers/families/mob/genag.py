"""Hilbert lists and GenAG (seed 003, Algorithm 1): the k - 1 objects nearest a subject on its QID.

Each time point t has a Hilbert list L_t: the objects present at t sorted by the Hilbert
index H_t of their cell (ties by object index). The deviation of O' from the subject O at t
is |H_t(O) - H_t(O')|; the score of O' is its sum over QID(O). GenAG returns the ``count``
candidates of least score, ties broken by the smaller object index, and it is *exact*: the
same set as scoring every candidate.

How it runs (the paper's BPA2 adaptation, batched for numpy): on every list of QID(O) the
cursors bestAbove / bestBelow move away from the subject in rounds. A round moves them, on
every list, past all entries whose deviation is at most a radius r (step 4 of Algorithm 1
repeated while the local score it would take is <= r; each list's new cursors come from one
binary search on keys that carry their time point, so all lists are searched at once). The
first radius would take about ``_FIRST`` entries per list at the mean density and grows
``_GROWTH``-fold until K candidates are known; then it jumps to S_K // p (S_K the K-th best
score, p = |QID(O)|): once every list is read to that radius, the threshold exceeds S_K.
The newly seen objects (marked in one boolean array, so each is handled once) are filtered
and scored at once by random access to the (objects x time points) Hilbert matrix, over
column chunks so that a candidate whose partial sum already loses to the current K-th best
is dropped early (deviations are >= 0: exact). The threshold is the sum over the lists of
the smaller deviation at the two frontiers: no unseen object can score less. We stop when
the K-th best score is *strictly* below the threshold (the paper stops at <=, which can miss
an unseen object that ties and has a smaller index); or when a list is exhausted, since an
object never seen on a list is absent at that time point and cannot be a candidate.

Candidates (the anonymizers' policy for objects that are not present everywhere): an object
O' != O is a candidate iff ``allowed[O']`` (caller's mask) and it is *eligible* for O: O' is
present at every time point of QID(O) and O is present at every time point of QID(O').
The relation is symmetric, which the symmetric anonymization needs (see
:mod:`anonymizers.families.mob.anonymity`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from anonymizers.errors import InputError
from anonymizers.families.mob.hilbert import hilbert_index, order_for
from anonymizers.families.mob.moving_objects import MovingObjects

__all__ = ["HilbertLists", "build_hilbert_lists", "eligible_mask", "gen_ag"]

_INF = np.iinfo(np.int64).max  # deviation beyond the end of a list
_CHUNK = 24  # QID time points scored per pass before dropping hopeless candidates
_FIRST = 1024  # entries per list the first round expects to see, at the mean density
_GROWTH = 4  # radius factor per round while fewer than K candidates are known
_BLOCK = 64  # keys per block of the coarse index that binary searches start from


@dataclass(frozen=True, eq=False)
class HilbertLists:
    """The Hilbert lists L_t of every time point, with random access by object.

    Attributes
    ----------
    objects
        The moving objects the lists index.
    order
        Order of the Hilbert curve (cells shifted so that the smallest present cell is 0).
    hilbert
        int64 (n_objects, n_times): H_t(O); 0 where O is absent.
    entries
        int64 (n_times, n_objects): row t is L_t: the first ``n_present[t]`` entries are
        the present objects in increasing (H_t, object); the rest are the absent ones.
    keys
        int64 (n_times, n_objects): ``t * stride + H_t`` of each entry of ``entries``
        (``t * stride + stride - 1`` if absent), so that ``keys.ravel()`` is sorted and one
        binary search finds a deviation range on any list.
    stride
        ``4 ** order + 1``: larger than every Hilbert index.
    coarse
        Every ``_BLOCK``-th key of ``keys.ravel()``: a search probes this small array
        first, then one block, instead of ~log2(n_times * n_objects) cold cache lines.
    n_present
        int64 (n_times,): length of each list.
    position
        int32 (n_objects, n_times): position of O in L_t, -1 where O is absent.
    """

    objects: MovingObjects
    order: int
    hilbert: np.ndarray
    entries: np.ndarray
    keys: np.ndarray
    stride: int
    coarse: np.ndarray
    n_present: np.ndarray
    position: np.ndarray

    def search(self, values: np.ndarray, side: Literal["left", "right"]) -> np.ndarray:
        """``np.searchsorted(keys.ravel(), values, side)``, through the coarse index."""
        flat = self.keys.ravel()
        block = np.searchsorted(self.coarse, values, side) - 1
        start = np.maximum(block, 0) * _BLOCK
        window = np.minimum(start[:, None] + np.arange(_BLOCK), flat.size - 1)
        keys = flat[window]
        below = (keys < values[:, None]) if side == "left" else (keys <= values[:, None])
        inside = start[:, None] + np.arange(_BLOCK) < flat.size
        return np.where(block < 0, 0, start + (below & inside).sum(axis=1))


def build_hilbert_lists(objects: MovingObjects) -> HilbertLists:
    """Hilbert index of every present (object, time point) and the sorted list of each time.

    Parameters
    ----------
    objects
        The moving objects; cells may be any int32, the grid is shifted to start at 0.

    Returns
    -------
    HilbertLists

    References
    ----------
    .. [1] Yarovoy, Bonchi, Lakshmanan, Wang. Anonymizing Moving Objects: How to Hide a MOB
       in a Crowd? EDBT 2009, §5.1 (Hilbert lists L_t, Figures 3-4).
    """
    present = objects.present
    n, m = present.shape
    hilbert = np.zeros((n, m), dtype=np.int64)
    order = 0
    if present.any():
        x, y = objects.cx[present].astype(np.int64), objects.cy[present].astype(np.int64)
        x -= x.min()
        y -= y.min()
        order = order_for(int(x.max()) + 1, int(y.max()) + 1)
        hilbert[present] = hilbert_index(x, y, order)
    stride = 4 ** order + 1
    if m * stride >= 2 ** 62:  # keys and summed deviations must stay inside int64
        raise InputError(f"{m} time points on a Hilbert curve of order {order} overflow "
                         "64-bit keys: use fewer time points or larger cells")
    keys = np.where(present, hilbert, stride - 1).T
    # stable: equal Hilbert indices stay in object order, the tie rule of GenAG
    entries = np.argsort(keys, axis=1, kind="stable")
    keys = np.take_along_axis(keys, entries, axis=1)
    keys += np.arange(m, dtype=np.int64)[:, None] * stride
    position = np.full((n, m), -1, dtype=np.int32)
    position[entries, np.arange(m)[:, None]] = np.arange(n, dtype=np.int32)[None, :]
    position[~present] = -1
    coarse = keys.ravel()[::_BLOCK].copy()
    return HilbertLists(objects, order, hilbert, entries, keys, stride, coarse,
                        present.sum(axis=0).astype(np.int64), position)


def eligible_mask(objects: MovingObjects, subject: int, candidates: np.ndarray) -> np.ndarray:
    """Which ``candidates`` are eligible for ``subject`` (mutual presence at the QIDs).

    Candidate c is eligible iff c is present at every time point of QID(subject) and
    subject is present at every time point of QID(c). The subject itself comes out True
    (it is present at its own QID); callers exclude it.
    """
    ok = np.ones(candidates.size, dtype=bool)
    q_s, p_s = objects.qid_bits[subject], objects.present_bits[subject]
    present_words, qid_words = objects.present_bits_by_word, objects.qid_bits_by_word
    for word in range(q_s.size):
        if q_s[word]:  # c must hold every QID bit of the subject
            ok &= (np.take(present_words[word], candidates) & q_s[word]) == q_s[word]
        if ~p_s[word]:  # c's QID bits must all be where the subject is present
            ok &= (np.take(qid_words[word], candidates) & ~p_s[word]) == 0
    return ok


def gen_ag(lists: HilbertLists, subject: int, count: int,
           allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The ``count`` candidates of least summed Hilbert deviation from ``subject`` on its QID.

    Parameters
    ----------
    lists
        Hilbert lists of the moving objects (:func:`build_hilbert_lists`).
    subject
        Index of the subject O; QID(O) must not be empty.
    count
        K: how many to return (k - 1 for an anonymization group of k).
    allowed
        Optional bool (n_objects,): only objects marked True may be returned. Eligibility
        (see the module docstring) is checked in addition, and O itself is never returned.

    Returns
    -------
    objects, scores : numpy.ndarray
        int64 arrays of length ``min(count, number of candidates)``, in increasing
        (score, object): the top-K of Algorithm 1 and their summed deviations.

    References
    ----------
    .. [1] Yarovoy, Bonchi, Lakshmanan, Wang. Anonymizing Moving Objects: How to Hide a MOB
       in a Crowd? EDBT 2009, §5.1.1, Algorithm 1 (GenAG).
    .. [2] Akbarinia, Pacitti, Valduriez. Best Position Algorithms for Top-k Queries.
       VLDB 2007 (BPA2).
    """
    search = _Search.start(lists, subject, count, allowed)
    while not search.done():
        search.advance()
    return search.best_obj, search.best_score


class _Search:
    """The state of one GenAG call: cursors on each QID list, seen objects, the top-K."""

    def __init__(self, lists: HilbertLists, subject: int, count: int,
                 allowed: np.ndarray | None, times: np.ndarray) -> None:
        self.lists, self.subject, self.count, self.allowed = lists, subject, count, allowed
        self.flat = lists.keys.ravel()
        self.times = times.astype(np.intp)
        n = lists.objects.n_objects
        self.h_subject = lists.hilbert[subject, self.times]
        self.k_subject = self.times * lists.stride + self.h_subject
        self.row_start = self.times * n
        self.row_end = self.row_start + lists.n_present[self.times]
        centre = self.row_start + lists.position[subject, self.times]
        # flat range seen on each list: [bestAbove, bestBelow + 1), the subject inside
        self.lo, self.hi = centre, centre + 1
        self.seen = np.zeros(n, dtype=bool)
        self.seen[subject] = True
        self.threshold = 0
        density = float(lists.n_present[self.times].mean()) / max(1, lists.stride - 1)
        self.radius = max(1, int(_FIRST / (2.0 * density)))
        self.best_obj = np.empty(0, dtype=np.int64)
        self.best_score = np.empty(0, dtype=np.int64)

    @classmethod
    def start(cls, lists: HilbertLists, subject: int, count: int,
              allowed: np.ndarray | None) -> _Search:
        objects = lists.objects
        if not 0 <= subject < objects.n_objects:
            raise InputError(f"subject {subject} is not an object index")
        if count < 0:
            raise InputError(f"GenAG needs count >= 0, got {count}")
        if allowed is not None and allowed.shape != (objects.n_objects,):
            raise InputError(f"allowed must be a bool mask of {objects.n_objects} objects")
        times = objects.qid(subject)
        if times.size == 0:
            raise InputError(f"object {subject} has an empty QID: it is never a subject")
        return cls(lists, subject, count, allowed, times)

    def done(self) -> bool:
        if self.count == 0 or self.threshold == _INF:
            return True
        return self.best_obj.size == self.count and int(self.best_score[-1]) < self.threshold

    def advance(self) -> None:
        """Move the cursors of every list past the entries within the radius; score the new."""
        lo = np.maximum(self.lists.search(self.k_subject - self.radius, "left"),
                        self.row_start)
        hi = np.minimum(self.lists.search(self.k_subject + self.radius, "right"),
                        self.row_end)
        fresh = self._mark_seen(np.concatenate([lo, self.hi]), np.concatenate([self.lo, hi]))
        self.lo, self.hi = lo, hi
        self.threshold = self._threshold()
        self._score(self._candidates(fresh))
        self.radius = self._next_radius()

    def _mark_seen(self, start: np.ndarray, stop: np.ndarray) -> np.ndarray:
        """Mark the objects at flat list positions [start, stop) seen; the new ones, ascending.

        One scatter per contiguous slice (a view), then a diff over the n objects: far
        cheaper than gathering the (many, mostly repeated) entries and de-duplicating them.
        """
        flat = self.lists.entries.ravel()
        before = self.seen.copy()
        for a, b in zip(start.tolist(), stop.tolist(), strict=True):
            self.seen[flat[a:b]] = True
        return np.flatnonzero(self.seen != before)

    def _threshold(self) -> int:
        """Sum over the lists of the least deviation an unseen entry can have."""
        above = np.where(self.lo > self.row_start,
                         self.k_subject - self.flat[np.maximum(self.lo - 1, 0)], _INF)
        inside = self.hi < self.row_end
        below = np.where(inside, self.flat[np.where(inside, self.hi, 0)] - self.k_subject, _INF)
        frontier = np.minimum(above, below)
        # a list seen to both ends: every unseen object is absent there, so not a candidate
        return _INF if (frontier == _INF).any() else int(frontier.sum())

    def _next_radius(self) -> int:
        """Grow; once K are known, jump to the radius that ends the search if S_K holds."""
        if self.best_obj.size < self.count:
            return _GROWTH * self.radius
        return max(self.radius * 3 // 2 + 1, int(self.best_score[-1]) // self.times.size)

    def _candidates(self, fresh: np.ndarray) -> np.ndarray:
        """The newly seen objects that may be returned."""
        if self.allowed is not None:
            fresh = np.compress(np.take(self.allowed, fresh), fresh)
        return np.compress(eligible_mask(self.lists.objects, self.subject, fresh), fresh)

    def _score(self, cands: np.ndarray) -> None:
        """Sum the deviations of ``cands``; keep the ``count`` best by (score, object)."""
        total = np.zeros(cands.size, dtype=np.int64)
        full = self.best_obj.size == self.count
        hilbert, m = self.lists.hilbert.ravel(), self.lists.objects.n_times
        for start in range(0, self.times.size, _CHUNK):
            cols = self.times[start:start + _CHUNK]
            gathered = np.take(hilbert, cands[:, None] * m + cols[None, :])
            total += np.abs(gathered - self.h_subject[None, start:start + _CHUNK]).sum(axis=1)
            if full and cands.size:
                kth_score, kth_obj = self.best_score[-1], self.best_obj[-1]
                alive = (total < kth_score) | ((total == kth_score) & (cands < kth_obj))
                cands, total = np.compress(alive, cands), np.compress(alive, total)
        objs = np.concatenate([self.best_obj, cands])
        scores = np.concatenate([self.best_score, total])
        keep = np.lexsort((objs, scores))[:self.count]
        self.best_obj, self.best_score = objs[keep], scores[keep]
