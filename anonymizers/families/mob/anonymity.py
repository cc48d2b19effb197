"""Extreme Union and Symmetric Anonymization (seed 003, Algorithms 2-3): who hides whom, and when.

Both return MOB sets S(O) and time sets T(O) for :func:`anonymizers.families.mob.generalize`:
every member of S(O) is made indistinguishable at every time point of T(O). Extreme Union:
S(O) = AG(O) (O and k - 1 others from GenAG), T(O) = union of the QIDs of AG(O). Symmetric
Anonymization: S(O) = HS(O), T(O) = QID(O).

Real data breaks the paper's assumption that every object is present at every time point.
The policy, which keeps Definition 3 (every I-node of degree >= k, a symmetric attack graph)
on what is published:

* *Eligibility.* O' may hide O iff O' is present at every time of QID(O) and O is present
  at every time of QID(O') (mutual: symmetry will generalize O with O' at QID(O')'s times,
  so both must have a position there). The relation is symmetric. Only eligible objects are
  GenAG candidates (:func:`anonymizers.families.mob.genag.gen_ag`).
* *Suppression.* An object with a non-empty QID that has fewer than k - 1 eligible,
  unsuppressed objects is suppressed: not published, in no set, not a candidate. Suppressing
  one can leave another short, so this runs to a fixed point *before* any set is built
  (:func:`suppressed_objects`); the sets are then built among unsuppressed objects only,
  and Extreme Union runs its own fixed point on top (below). The counts are in the result.
* *Empty QIDs.* Objects with an empty QID are never subjects (nothing identifies them) but
  are candidates, and are suppressed only as ``excluded`` (below).
* *Excluded objects* (``excluded``) are suppressed from the start, whatever their QID:
  :mod:`anonymizers.families.mob.stand_ins` excludes the objects a suppressed one could
  pass for, so that who was published can be told from the release and the raw data.
* *Extreme Union* generalizes the members of AG(O) at the union of their QIDs, so they must
  be pairwise eligible. AG(O) takes GenAG's ranking in order and accepts a candidate only if
  it is eligible with every member accepted so far, asking GenAG for a longer ranking when
  the first runs out (a greedy choice: it can miss a compatible group that exists, finding
  one is a clique problem). A subject that cannot reach k members is suppressed; every group that
  contained it is rebuilt without it, which may suppress more, until nothing changes. No
  final group contains a suppressed object: a group is rebuilt whenever one of its members
  is suppressed, and suppressed objects are never candidates again.
* *Symmetric Anonymization* follows Algorithm 3 in object-index order: HS(O) starts as
  {O}, slack(O) = k - |HS(O)|; a subject with slack > 0 takes its top-slack candidates
  from GenAG, excluding HS(O)'s members, and joins each one's hiding set (symmetry).

Parallel runs (``workers`` > 1, forked processes; Linux) give the same sets. Extreme Union's
groups are independent given the suppressed objects. Symmetric Anonymization first ranks
the top k - 1 candidates of every subject in parallel, then runs Algorithm 3's loop taking,
for a subject with slack s, the first s ranked objects not already in HS(O): GenAG with HS(O)
excluded returns exactly those, since the k - 1 - s members of HS(O) other than O are
candidates of O and can hide at most k - 1 - s of the first k - 1.

Why the slack always fits (Symmetric Anonymization). After the suppression fixed point,
every subject O has E(O) >= k - 1 eligible unsuppressed objects. Every member O' != O of
HS(O) is eligible for O: either GenAG chose O' for O (GenAG only returns eligible objects),
or O' chose O and O was eligible for O', hence O' for O (the relation is symmetric). So
|HS(O)| - 1 of the E(O) eligible objects are in HS(O), and E(O) - (|HS(O)| - 1) >=
k - |HS(O)| = slack(O) eligible objects remain outside it for GenAG to return.
"""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from anonymizers.errors import InputError, PrivacyViolation
from anonymizers.families.mob.genag import HilbertLists, build_hilbert_lists, eligible_mask, gen_ag
from anonymizers.families.mob.moving_objects import MovingObjects

__all__ = ["MobSets", "Rankings", "Suppression", "extreme_union", "suppressed_objects",
           "symmetric_anonymization"]

_SCAN_BYTES = 256  # bytes of candidate bits (up to 2,048 objects) tested at once
_CHUNKS_PER_WORKER = 16  # subjects are dealt to workers in this many chunks each
_SHARED: dict[str, Any] = {}  # what forked workers read (inherited, never pickled)


@dataclass(frozen=True, eq=False)
class MobSets:
    """MOB sets S(O) and time sets T(O) of every object, and who was suppressed.

    Attributes
    ----------
    method
        ``"extreme_union"`` or ``"symmetric"``.
    k
        The anonymity threshold.
    set_indptr, set_members
        CSR: S(O_i) = ``set_members[set_indptr[i]:set_indptr[i + 1]]``, sorted, O_i itself
        included; empty for suppressed objects and for objects in no set.
    time_indptr, times
        CSR: T(O_i), sorted time-point indices; empty where S(O_i) is empty or generalizes
        nothing (objects with an empty QID).
    suppressed
        bool (n_objects,): objects not published at all.
    n_subjects
        Objects with a non-empty QID (suppressed ones included).

    References
    ----------
    .. [1] Yarovoy, Bonchi, Lakshmanan, Wang. Anonymizing Moving Objects: How to Hide a MOB
       in a Crowd? EDBT 2009, §5.1.2-5.1.3, §5.2 (MOB sets).
    """

    method: str
    k: int
    set_indptr: np.ndarray
    set_members: np.ndarray
    time_indptr: np.ndarray
    times: np.ndarray
    suppressed: np.ndarray
    n_subjects: int

    @property
    def n_objects(self) -> int:
        return int(self.suppressed.size)

    @property
    def n_suppressed(self) -> int:
        return int(self.suppressed.sum())

    def members(self, i: int) -> np.ndarray:
        """S(O_i)."""
        return self.set_members[self.set_indptr[i]:self.set_indptr[i + 1]]

    def times_of(self, i: int) -> np.ndarray:
        """T(O_i)."""
        return self.times[self.time_indptr[i]:self.time_indptr[i + 1]]

    def published_objects(self) -> np.ndarray:
        """Indices of the objects that are published (all but the suppressed)."""
        return np.flatnonzero(~self.suppressed)

    def counts(self) -> dict[str, int]:
        """Objects, subjects and suppressed objects: what a manifest reports."""
        return {"objects": self.n_objects, "subjects": self.n_subjects,
                "suppressed": self.n_suppressed}


def suppressed_objects(objects: MovingObjects, k: int,
                       excluded: np.ndarray | None = None) -> np.ndarray:
    """Objects with a QID that cannot find k - 1 eligible unsuppressed objects (fixed point).

    Each subject looks for k - 1 eligible objects (its *witnesses*) among the unsuppressed
    objects present at every time of its QID (an AND of one bitset of objects per time
    point), in index order, a chunk at a time: a subject costs a few bitset bytes per QID
    time, not a scan of every object (which made the many subjects that end up suppressed
    quadratic: minutes at 150,000 objects). After a round, only the subjects whose
    witnesses were just suppressed look again.

    Parameters
    ----------
    objects
        The moving objects.
    k
        Anonymity threshold (>= 1).
    excluded
        bool (n_objects,): objects suppressed whatever their QID (the start of the fixed
        point; :mod:`anonymizers.families.mob.stand_ins` says why). None: none.

    Returns
    -------
    numpy.ndarray
        bool (n_objects,): True for suppressed objects, ``excluded`` among them.

    References
    ----------
    .. [1] Yarovoy et al., EDBT 2009, §5 (the paper assumes every object present at every
       time point, where nothing is ever suppressed; see this module's policy).
    """
    return Suppression(objects, k).exclude(excluded)


class Suppression:
    """The suppression fixed point of :func:`suppressed_objects`, kept between runs that
    exclude more and more objects (:mod:`anonymizers.families.mob.stand_ins`).

    Excluding more can only suppress more, so the fixed point after :meth:`exclude` is the
    one a fresh start from all the excluded objects reaches; only the subjects that lost a
    witness look again, instead of every subject.
    """

    def __init__(self, objects: MovingObjects, k: int) -> None:
        _check_k(k)
        n = objects.n_objects
        self.objects, self.k = objects, k
        self.suppressed = np.zeros(n, dtype=bool)
        # bit o of row t: object o is present at time point t (np.packbits' bit order)
        self._present_at = np.packbits(objects.present.T, axis=1)
        self._witnesses = np.full((n, max(k - 1, 0)), -1, dtype=np.int64)
        self._subjects = objects.qid_sizes > 0
        self._fresh = self._subjects.copy()  # subjects that never looked for witnesses

    def exclude(self, excluded: np.ndarray | None = None) -> np.ndarray:
        """Suppress ``excluded`` (bool per object, None: nothing more) and whoever is then
        short of witnesses, to the fixed point; a copy of the suppressed mask."""
        suppressed = self.suppressed
        suppressed |= _excluded_mask(suppressed.size, excluded)
        todo = np.flatnonzero((self._fresh | self._lost()) & self._subjects & ~suppressed)
        while todo.size:
            self._fresh[todo] = False
            live = np.packbits(~suppressed)
            short = [s for s in todo.tolist() if not self._find_witnesses(s, live)]
            suppressed[short] = True
            # any live subject, checked in this round or before, may have lost a witness
            todo = np.flatnonzero(self._lost() & self._subjects & ~suppressed)
        return suppressed.copy()

    def _find_witnesses(self, subject: int, live: np.ndarray) -> bool:
        """Fill the witnesses of ``subject`` with k - 1 eligible objects among ``live``
        (packed bits of the unsuppressed objects), if there are."""
        need = self.k - 1
        if need == 0:
            return True
        both = np.bitwise_and.reduce(self._present_at[self.objects.qid(subject)], axis=0)
        both &= live
        both[subject >> 3] &= ~np.uint8(0x80 >> (subject & 7))  # not itself
        occupied = np.flatnonzero(both)  # bytes holding a candidate
        found: list[np.ndarray] = []
        have = 0
        for start in range(0, occupied.size, _SCAN_BYTES):
            part = occupied[start:start + _SCAN_BYTES]
            byte, bit = np.nonzero(np.unpackbits(both[part][:, None], axis=1))
            candidates = part[byte] * 8 + bit
            found.append(candidates[eligible_mask(self.objects, subject, candidates)]
                         [:need - have])
            have += found[-1].size
            if have == need:
                self._witnesses[subject] = np.concatenate(found)
                return True
        return False

    def _lost(self) -> np.ndarray:
        """Per object: a witness of it is suppressed."""
        return _any_marked(self._witnesses, self.suppressed)


def symmetric_anonymization(objects: MovingObjects, k: int, lists: HilbertLists | None = None,
                            workers: int = 1, suppression: Suppression | None = None,
                            rankings: Rankings | None = None) -> MobSets:
    """Hiding sets HS(O) by Algorithm 3, with T(O) = QID(O).

    Parameters
    ----------
    objects
        The moving objects.
    k
        Anonymity threshold (>= 1).
    lists
        Hilbert lists of ``objects`` if already built (:func:`build_hilbert_lists`).
    workers
        Processes ranking candidates (1: none forked). The result does not depend on it.
    suppression
        The suppression fixed point to start from (:class:`Suppression`: the objects it
        excluded stay suppressed); a fresh one of ``objects`` and ``k`` if None.
    rankings
        GenAG's rankings of an earlier run on the same objects (:class:`Rankings`, brought
        up to date here); None: ranked afresh.

    Returns
    -------
    MobSets
        For every published subject, |HS(O)| >= k, and O' in HS(O) iff O in HS(O').

    References
    ----------
    .. [1] Yarovoy, Bonchi, Lakshmanan, Wang. Anonymizing Moving Objects: How to Hide a MOB
       in a Crowd? EDBT 2009, §5.1.3, Algorithm 3 (Symmetric Anonymization), Theorem 3.
    """
    _check_workers(workers)
    suppressed = _suppression_of(objects, k, suppression).exclude()
    lists = _lists_of(objects, lists)
    subjects = np.flatnonzero((objects.qid_sizes > 0) & ~suppressed)
    ranked = None
    if rankings is not None:
        if rankings.lists is not lists or rankings.k != k:
            raise InputError("the rankings were made for other Hilbert lists or another k")
        ranked = rankings.of(subjects, suppressed, workers)
    elif workers > 1:
        ranked = _parallel(_rank_chunk, subjects, workers, lists=lists, count=k - 1,
                           allowed=~suppressed)
    picked = _hiding_picks(lists, k, suppressed, subjects, ranked)
    set_indptr, members = _symmetric_sets(objects, picked, suppressed)
    time_indptr, times = _own_qids(objects, suppressed)
    return MobSets("symmetric", k, set_indptr, members, time_indptr, times, suppressed,
                   int((objects.qid_sizes > 0).sum()))


class Rankings:
    """GenAG's top k - 1 candidates of every subject, kept between the rounds of
    :mod:`anonymizers.families.mob.stand_ins`, where each round suppresses a few more.

    GenAG's top list is exact, ties to the smaller object: removing objects that are not
    in a subject's list leaves the list as it is, so only the subjects whose list holds a
    newly suppressed object are ranked again.
    """

    def __init__(self, lists: HilbertLists, k: int) -> None:
        _check_k(k)
        self.lists, self.k = lists, k
        n = lists.objects.n_objects
        self._rows = np.full((n, max(k - 1, 0)), -1, dtype=np.int64)
        self._ranked = np.zeros(n, dtype=bool)

    def of(self, subjects: np.ndarray, suppressed: np.ndarray, workers: int) -> np.ndarray:
        """The ranked candidates of ``subjects`` among the unsuppressed objects, one row
        each (-1 where there are fewer), as :func:`_rank_chunk` would rank them now."""
        lost = _any_marked(self._rows[subjects], suppressed)
        todo = subjects[~self._ranked[subjects] | lost]
        if todo.size:
            shared: dict[str, Any] = {"lists": self.lists, "count": self.k - 1,
                                      "allowed": ~suppressed}
            self._rows[todo] = (_parallel(_rank_chunk, todo, workers, **shared)
                                if workers > 1 else _rank_chunk(todo, **shared))
            self._ranked[todo] = True
        return self._rows[subjects]


def _symmetric_sets(objects: MovingObjects, picked: list[np.ndarray],
                    suppressed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """HS(O) = {O} + what O picked + who picked O (Algorithm 3, lines 8-10), as CSR."""
    n = objects.n_objects
    source = np.repeat(np.arange(n), [p.size for p in picked])
    target = np.concatenate(picked) if picked else np.empty(0, dtype=np.int64)
    rows = np.concatenate([source, target])  # each pick is an edge both ways
    cols = np.concatenate([target, source])
    in_set = np.zeros(n, dtype=bool)
    in_set[rows] = True
    in_set[objects.qid_sizes > 0] = True
    return _csr_with_self(n, rows, cols, in_set & ~suppressed)


def _hiding_picks(lists: HilbertLists, k: int, suppressed: np.ndarray, subjects: np.ndarray,
                  ranked: np.ndarray | None) -> list[np.ndarray]:
    """Algorithm 3, lines 5-10: the objects each subject picks (HS is picks + pickers).

    ``ranked`` (one row of k - 1 ranked candidates per subject) replaces the GenAG calls
    when given; see the module docstring for why the picks are the same.
    """
    n = lists.objects.n_objects
    picked: list[np.ndarray] = [np.empty(0, dtype=np.int64)] * n
    chosen_by: list[list[int]] = [[] for _ in range(n)]
    slack = np.full(n, k - 1, dtype=np.int64)
    allowed = ~suppressed
    for row, subject in enumerate(subjects.tolist()):
        need = int(slack[subject])
        if need <= 0:
            continue
        members = chosen_by[subject]
        if ranked is not None:
            taken = {-1, *members}  # -1 pads rows with fewer than k - 1 candidates
            picks = np.array([c for c in ranked[row].tolist() if c not in taken][:need],
                             dtype=np.int64)
        else:
            allowed[members] = False  # HS(O)'s members are not picked twice
            picks, _ = gen_ag(lists, subject, need, allowed)
            allowed[members] = True
        if picks.size < need:
            raise PrivacyViolation(f"object {subject}: GenAG found {picks.size} of {need} "
                                   "hiding objects after the suppression fixed point (a bug: "
                                   "see the proof in the module docstring)")
        picked[subject] = picks
        slack[picks] -= 1  # each pick's HS gains the subject
        slack[subject] = 0
        for other in picks.tolist():
            chosen_by[other].append(subject)
    return picked


def _rank_chunk(subjects: np.ndarray, lists: HilbertLists, count: int,
                allowed: np.ndarray) -> np.ndarray:
    """GenAG's top ``count`` of each subject, one row each (-1 where there are fewer)."""
    rows = np.full((subjects.size, count), -1, dtype=np.int64)
    for row, subject in enumerate(subjects.tolist()):
        best, _ = gen_ag(lists, subject, count, allowed)
        rows[row, :best.size] = best
    return rows


def _parallel(work: Callable[..., np.ndarray], subjects: np.ndarray, workers: int,
              **shared: Any) -> np.ndarray:
    """``work(chunk, **shared)`` over chunks of ``subjects`` in forked processes, stacked.

    The shared arrays reach the workers through fork (copy-on-write), not pickling.
    """
    if subjects.size < 2 * workers:  # not worth a process
        return work(subjects, **shared)
    chunks = np.array_split(subjects, max(1, workers * _CHUNKS_PER_WORKER))
    _SHARED.clear()
    _SHARED.update(shared)
    pool = multiprocessing.get_context("fork").Pool(workers, initializer=_default_signals)
    try:
        parts = pool.map(partial(_run_shared, work), chunks, chunksize=1)
        pool.close()  # workers leave on their own; terminate() is for failures only
    except BaseException:
        pool.terminate()
        raise
    finally:
        pool.join()
        _SHARED.clear()
    return np.concatenate(parts)


def _default_signals() -> None:
    """Forked workers drop the handlers they inherited: a parent that runs Airflow code
    handles SIGTERM itself, and a worker that inherited that handler survives the pool's
    terminate() and blocks its join forever."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _run_shared(work: Callable[..., np.ndarray], chunk: np.ndarray) -> np.ndarray:
    return work(chunk, **_SHARED)


def extreme_union(objects: MovingObjects, k: int, lists: HilbertLists | None = None,
                  workers: int = 1, suppression: Suppression | None = None) -> MobSets:
    """Anonymization groups AG(O) by Algorithm 2, with T(O) = union of the QIDs of AG(O).

    Parameters
    ----------
    objects
        The moving objects.
    k
        Anonymity threshold (>= 1).
    lists
        Hilbert lists of ``objects`` if already built (:func:`build_hilbert_lists`).
    workers
        Processes building groups (1: none forked). The result does not depend on it.
    suppression
        The suppression fixed point to start from (:class:`Suppression`: the objects it
        excluded stay suppressed); a fresh one of ``objects`` and ``k`` if None.

    Returns
    -------
    MobSets
        For every published subject, |AG(O)| = k, members pairwise eligible, none
        suppressed.

    References
    ----------
    .. [1] Yarovoy, Bonchi, Lakshmanan, Wang. Anonymizing Moving Objects: How to Hide a MOB
       in a Crowd? EDBT 2009, §5.1.2, Algorithm 2 (Extreme Union), Theorem 2.
    """
    _check_workers(workers)
    suppressed = _suppression_of(objects, k, suppression).exclude()
    lists = _lists_of(objects, lists)
    bits = _BitRows.of(objects)
    groups = np.full((objects.n_objects, k), -1, dtype=np.int64)
    todo = np.flatnonzero((objects.qid_sizes > 0) & ~suppressed)
    while todo.size:
        shared: dict[str, Any] = {"lists": lists, "bits": bits, "k": k,
                                  "allowed": ~suppressed}
        built = (_parallel(_group_chunk, todo, workers, **shared) if workers > 1
                 else _group_chunk(todo, **shared))
        groups[todo] = built
        failed = todo[built[:, 0] < 0]
        suppressed[failed] = True
        # a group holding a newly suppressed member is rebuilt without it
        todo = np.flatnonzero(_any_marked(groups, suppressed) & ~suppressed)
    return _union_sets(objects, groups, suppressed, k)


def _group_chunk(subjects: np.ndarray, lists: HilbertLists, bits: _BitRows, k: int,
                 allowed: np.ndarray) -> np.ndarray:
    """AG of each subject as a row (the subject first), or a row of -1 if it falls short."""
    rows = np.full((subjects.size, k), -1, dtype=np.int64)
    for row, subject in enumerate(subjects.tolist()):
        group = _anonymization_group(lists, bits, subject, k, allowed)
        if group is not None:
            rows[row] = [subject, *group]
    return rows


class _BitRows:
    """Presence and QID of each object as Python ints: fast subset tests one pair at a time.

    Each int is the object's :func:`~anonymizers.families.mob.moving_objects.pack_bits`
    words read as one number; presence and QID share that layout, which is all a subset
    test needs.
    """

    def __init__(self, present: list[int], qid: list[int]) -> None:
        self.present, self.qid = present, qid

    @classmethod
    def of(cls, objects: MovingObjects) -> _BitRows:
        def rows(words: np.ndarray) -> list[int]:
            return [int.from_bytes(row.tobytes(), "little") for row in words]
        return cls(rows(objects.present_bits), rows(objects.qid_bits))


def _anonymization_group(lists: HilbertLists, bits: _BitRows, subject: int, k: int,
                         allowed: np.ndarray) -> list[int] | None:
    """AG(subject) minus the subject: GenAG's ranking kept pairwise eligible; None if short."""
    need, count = k - 1, max(k - 1, 1)
    while True:
        ranking, _ = gen_ag(lists, subject, count, allowed)
        accepted = _compatible_prefix(bits, subject, ranking.tolist(), need)
        if len(accepted) == need:
            return accepted
        if ranking.size < count:  # GenAG has nothing more to offer
            return None
        count *= 2  # the longer ranking starts with the same candidates


def _compatible_prefix(bits: _BitRows, subject: int, ranking: list[int],
                       need: int) -> list[int]:
    """Candidates in ranking order, each eligible with every one accepted before it."""
    union_qid, common_present = bits.qid[subject], bits.present[subject]
    accepted: list[int] = []
    for cand in ranking:
        if len(accepted) == need:
            break
        if union_qid & ~bits.present[cand] or bits.qid[cand] & ~common_present:
            continue
        accepted.append(cand)
        union_qid |= bits.qid[cand]
        common_present &= bits.present[cand]
    return accepted


def _union_sets(objects: MovingObjects, groups: np.ndarray, suppressed: np.ndarray,
                k: int) -> MobSets:
    """MobSets of Extreme Union: S = AG(O), T = the union of its members' QIDs."""
    n, m = objects.n_objects, objects.n_times
    has = groups[:, 0] >= 0
    subjects = np.flatnonzero(has)
    members = np.sort(groups[subjects], axis=1)
    set_indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.where(has, k, 0), out=set_indptr[1:])
    union = np.bitwise_or.reduce(objects.qid_bits[members], axis=1)  # (subjects, words)
    matrix = np.unpackbits(union.view(np.uint8), axis=1, count=m).astype(bool)
    rows, times = np.nonzero(matrix)
    time_indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(subjects[rows], minlength=n), out=time_indptr[1:])
    return MobSets("extreme_union", k, set_indptr, members.ravel(), time_indptr,
                   times.astype(np.int32), suppressed, int((objects.qid_sizes > 0).sum()))


def _csr_with_self(n: int, rows: np.ndarray, cols: np.ndarray,
                   in_set: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """CSR of the sets {O} + {cols of rows == O} for the objects marked ``in_set``."""
    selves = np.flatnonzero(in_set)
    rows = np.concatenate([rows, selves])
    cols = np.concatenate([cols, selves])
    order = np.lexsort((cols, rows))
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
    return indptr, cols[order]


def _own_qids(objects: MovingObjects, suppressed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """T(O) = QID(O) for every unsuppressed object (CSR)."""
    sizes = np.where(suppressed, 0, objects.qid_sizes)
    keep = np.repeat(~suppressed, objects.qid_sizes)
    indptr = np.zeros(objects.n_objects + 1, dtype=np.int64)
    np.cumsum(sizes, out=indptr[1:])
    return indptr, objects.qid_times[keep]


def _any_marked(rows: np.ndarray, marked: np.ndarray) -> np.ndarray:
    """Per row of object indices (-1: none): whether it holds an object ``marked``."""
    return np.any(marked[np.maximum(rows, 0)] & (rows >= 0), axis=1)


def _suppression_of(objects: MovingObjects, k: int,
                    suppression: Suppression | None) -> Suppression:
    if suppression is None:
        return Suppression(objects, k)
    if suppression.objects is not objects or suppression.k != k:
        raise InputError("the suppression was computed for other moving objects or another k")
    return suppression


def _excluded_mask(n: int, excluded: np.ndarray | None) -> np.ndarray:
    """A fresh bool (n,) copy of ``excluded`` (all False for None)."""
    if excluded is None:
        return np.zeros(n, dtype=bool)
    mask = np.asarray(excluded)
    if mask.dtype != bool or mask.shape != (n,):
        raise InputError(f"excluded must be a bool array of one value per object ({n}), "
                         f"got {mask.dtype} {mask.shape}")
    return mask.copy()


def _lists_of(objects: MovingObjects, lists: HilbertLists | None) -> HilbertLists:
    if lists is None:
        return build_hilbert_lists(objects)
    if lists.objects is not objects:
        raise InputError("the Hilbert lists were built for other moving objects")
    return lists


def _check_workers(workers: int) -> None:
    if not isinstance(workers, int | np.integer) or workers < 1:
        raise InputError(f"workers must be an integer >= 1, got {workers!r}")


def _check_k(k: int) -> None:
    if not isinstance(k, int | np.integer) or k < 1:
        raise InputError(f"k must be an integer >= 1, got {k!r}")
