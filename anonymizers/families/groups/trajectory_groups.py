"""Trajectory groups (Nordström 2012, Part I): sequences of places followed by k individuals.

The thesis' trajectory anonymizers, as pure numpy (no database, no Airflow):

* :func:`overlapping_trajectory_groups` is Algorithms 1-3: every contiguous subsequence
  travelled by at least ``k`` distinct individuals, with its counts. Its output must go
  through the interval filter (:mod:`.interval_filter`, §4.3.2, §4.5.1).
* :func:`nonoverlapping_trajectory_groups` is Algorithms 4-5: a greedy that moves up to ``k``
  sub-trajectories at a time from the best group by eq. 2 (``S = n l^2``) into the anonymized
  set, removing the moved sub-trajectories' overlapping siblings, so that no part of a
  trajectory is counted twice. It returns the published groups *and* the private assignment.
* :func:`origin_destination_groups` is the "Origin - destination groups" part of §4.3.3,
  run after the nonoverlapping anonymizer.

Input
-----
Trajectories are sequences of place codes (the thesis' routes and stations, which it treats
alike, §3.2), given per visit as three integer arrays ``traj``, ``person``, ``place``, sorted by
``traj`` then visit order. A *window* is a contiguous run of visits of one trajectory; the
*length* of a sequence is its number of places (§4.3.2: 10 routes give 55 groups).

Decisions where the thesis is open or silent
--------------------------------------------
* *Minimum length* 1: Algorithm 2 yields every ``sequence[i:j]``, ``i < j``, and Figure 1
  publishes a group of one route.
* *Counts* (§4.1). A group qualifies when at least ``k`` distinct individuals travelled it;
  the number the thesis then attaches to it is the number of trajectories. Algorithms 2-3
  collect subsequences in a *set*, so a trajectory travelling a sequence twice counts once.
  Both counts are returned; publish ``n_trajectories`` (the thesis) through the interval
  filter.
* *Pruning* (not in the thesis, exact): a window is extended by one place only if the
  sequences of both its prefix and its suffix were followed by ``k`` individuals, since a
  sequence's individuals are a subset of each of its subsequences' (anti-monotony). The output
  is that of Algorithm 1 without the infrequent long subsequences ever being built.
* *Exact keys, no hashing*: at length ``l`` a window's key is ``(rank of its prefix among the
  frequent (l - 1)-sequences) * n_places + its last place``, which is below
  ``n_visits * n_places`` and so fits in 64 bits; equal keys are equal sequences.
* *Group order*: by length, then lexicographically by place code.
* *Candidates* of Algorithm 4 are the windows (occurrences) of frequent sequences. A trajectory
  is counted at most once per group: once one of its windows is moved into a group, its other
  windows of that group are removed, like its siblings.
* *Siblings* (Algorithm 5, "subseq ∩ otherSubseq ≠ ∅") are read as windows of the *same
  trajectory* that share a visit (overlapping position ranges); §4.3.3 says "the same original
  trajectory". Windows of different trajectories of one person are not siblings (§4.1 counts a
  person once per trajectory). A trajectory that revisits a place may thus have two disjoint
  windows with common places in two groups.
* *Score* (eq. 2): ``n`` is the number of distinct individuals still in the group ("the number
  of people"), ``l`` its length. Ties go to the longer sequence, then the first in group order.
* *A move* takes up to ``k`` trajectories of *distinct* individuals: the group's remaining
  windows in a uniformly random order (``rng.permutation``), the first window of each
  individual in that order, the first ``k`` individuals. A new group so gets ``k`` distinct
  individuals even when people have several trajectories (the thesis assumes one each).
* *Dropping* (Algorithm 4's last step): a group not yet in the anonymized set that has fewer
  than ``k`` distinct individuals left can never reach ``k`` and is dropped. Removing a group's
  own windows changes no other group, so dropping it when it is next selected is equivalent.
* *Origin-destination groups* (§4.3.3): the origin and destination of a member are the first
  and last place of its *original* trajectory (the group's own sequence is public already).
  A common group is one place ``c`` "together with all its neighboring nodes", the closed
  neighbourhood ``N[c]``; neighbours are the pairs given (one route each, undirected, as the
  roads of §5.1 go both ways). A trajectory is in at most one origin and one destination group
  over the whole release, not per trajectory group, since its origin is one fact. The thesis
  suggests "an approach similar to the main ... algorithm" with "some score function": we run
  the same greedy (moves of up to ``k`` individuals, dropping groups that cannot reach ``k``
  individuals) with score ``n / |N[c]|``, the individuals per place, so a tight group beats a
  wide one of equal size; ties go to the smaller ``N[c]``, the lower centre, the lower group.
  A published common group names the whole ``N[c]``, never only the places actually used.

Publishing
----------
Publish a group's sequence and its ``n_trajectories``, never the assignment or the members.
The overlapping output only through :func:`.interval_filter.interval_filter` with
``I_s = ceil(k/2)`` or ``k`` (§4.3.2, §4.5.1; §6 recommends ``k``). The nonoverlapping output
and its origin-destination groups need no filter (§4.5.1), unless releases overlap in time or
in demographic partitioning, which requires ``I_s = k`` (§4.5.2-§4.5.3). The thesis argues
with one trajectory per person; with several, one person's *different* trajectories may be in
groups whose sequences share places (different trips), while no visit is counted twice.

Cost. Overlapping: one sort of the surviving windows per length, O(W log W) in all, W the
number of windows examined, memory O(n_visits). Nonoverlapping and origin-destination: the
windows of all frequent sequences are kept (group, trajectory and start as int32, a person
and a stop looked up; with the pool's index by trajectory, (group, person) pair number and
live flag about 22 bytes a window, built a block at a time); a lazy max-heap of
groups (scores only decrease), and per move a random prefix of about 4k of the group's windows
(its whole random order only when the prefix holds fewer than k persons) and the moved
trajectories' windows: linear in the windows, where shuffling a group's live windows at every
move was quadratic in the largest groups.

References
----------
.. [1] Nordström, M. Methods for Anonymizing Patterns of Human Mobility. MSc thesis, Chalmers
   University of Technology, report 2012:2 (§3.2, §4.1, §4.3 with Algorithms 1-5 and eq. 2,
   §4.3.3 origin-destination groups, §4.5.1).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace

import numpy as np

from anonymizers.checks import checked_k, generator
from anonymizers.counting import distinct_values
from anonymizers.errors import InputError
from anonymizers.memory import compact_type
from anonymizers.sequences import ranges

__all__ = [
    "GroupAssignment",
    "NonoverlappingGroups",
    "OriginDestinationGroups",
    "TrajectoryGroups",
    "group_score",
    "nonoverlapping_trajectory_groups",
    "origin_destination_groups",
    "overlapping_group_windows",
    "overlapping_trajectory_groups",
]

# Rows handled at once where every window's temporaries would not fit: candidates whose
# keys are unpacked or whose (group, person) pairs are numbered (whole groups), windows
# sorted by trajectory, rows of origin-destination candidates. Bounds the int64
# temporaries to about 100 MB.
BLOCK = 8_000_000


# --- Results --------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class TrajectoryGroups:
    """Trajectory groups: one sequence of places each, with how many travelled it.

    Attributes
    ----------
    offsets
        int (G + 1,): group ``i``'s sequence is ``places[offsets[i]:offsets[i + 1]]``.
    places
        int: the sequences' place codes (the caller's codes), concatenated.
    n_persons
        int (G,): distinct individuals counted in the group (at least ``k``).
    n_trajectories
        int (G,): distinct trajectories counted in the group; the number the thesis attaches
        to a group (§4.1), to be published through the interval filter.

    References
    ----------
    .. [1] Nordström 2012, §3.2 (trajectory group), §4.1.
    """

    offsets: np.ndarray
    places: np.ndarray
    n_persons: np.ndarray
    n_trajectories: np.ndarray

    @property
    def n_groups(self) -> int:
        return int(self.n_persons.size)

    @property
    def length(self) -> np.ndarray:
        """int (G,): number of places in every group's sequence."""
        return np.diff(self.offsets)

    def sequence(self, i: int) -> np.ndarray:
        """The place codes of group ``i``."""
        return self.places[self.offsets[i]:self.offsets[i + 1]]


@dataclass(frozen=True, eq=False)
class GroupAssignment:
    """Private: which part of which trajectory was counted in which group. Never publish.

    Row ``a`` says that visits ``start[a] .. stop[a] - 1`` of trajectory ``traj[a]``, counted
    from its first visit (0), of individual ``person[a]`` spell group ``group[a]``'s sequence
    and were counted in it: rows ``r + start[a] .. r + stop[a] - 1`` of the input arrays, ``r``
    the trajectory's first row. Within one trajectory the ranges never overlap, and a
    trajectory is in a group at most once.

    Attributes
    ----------
    group
        int (A,): index into the published :class:`TrajectoryGroups`.
    traj, person
        int (A,): the caller's trajectory and person ids.
    start, stop
        int (A,): the half-open range of visit positions within the trajectory.

    References
    ----------
    .. [1] Nordström 2012, §4.3.3 and Algorithms 4-5.
    """

    group: np.ndarray
    traj: np.ndarray
    person: np.ndarray
    start: np.ndarray
    stop: np.ndarray


@dataclass(frozen=True, eq=False)
class NonoverlappingGroups:
    """Output of the nonoverlapping anonymizer.

    Attributes
    ----------
    groups
        The published trajectory groups (counts taken from the assignment).
    assignment
        The private assignment that produced them (for verification only).

    References
    ----------
    .. [1] Nordström 2012, §4.3.3, Algorithm 4.
    """

    groups: TrajectoryGroups
    assignment: GroupAssignment


@dataclass(frozen=True, eq=False)
class OriginDestinationGroups:
    """Common origin and destination groups attached to trajectory groups (§4.3.3).

    Attributes
    ----------
    group
        int (D,): index of the trajectory group (in :attr:`NonoverlappingGroups.groups`)
        the common group belongs to.
    is_origin
        bool (D,): origin group if True, destination group if False.
    centre
        int (D,): the place whose closed neighbourhood the common group is.
    node_offsets, nodes
        The places of common group ``i`` are ``nodes[node_offsets[i]:node_offsets[i + 1]]``:
        the centre and every place sharing a neighbour pair with it, ascending.
    n_persons, n_trajectories
        int (D,): distinct individuals (at least ``k``) and trajectories whose original
        trajectory started (origin) or ended (destination) in the group's places; publish
        ``n_trajectories``, as for trajectory groups.
    member_group, member_traj, member_person
        int (M,), private: common group index, trajectory id and person id of every counted
        trajectory. A trajectory is in at most one origin and at most one destination group.

    References
    ----------
    .. [1] Nordström 2012, §4.3.3, "Origin - destination groups".
    """

    group: np.ndarray
    is_origin: np.ndarray
    centre: np.ndarray
    node_offsets: np.ndarray
    nodes: np.ndarray
    n_persons: np.ndarray
    n_trajectories: np.ndarray
    member_group: np.ndarray
    member_traj: np.ndarray
    member_person: np.ndarray

    def node_set(self, i: int) -> np.ndarray:
        """The places of common group ``i``."""
        return self.nodes[self.node_offsets[i]:self.node_offsets[i + 1]]


# --- Validated, encoded input ---------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class _Sequences:
    """Trajectories in internal order (by person, then trajectory id), places densely coded.

    Internal order puts one person's trajectories together, so that in windows sorted by
    (sequence, position) persons and trajectories arrive in runs and are counted by run starts.
    """

    code: np.ndarray  # (N,) dense place code of every visit
    visit_traj: np.ndarray  # (N,) internal trajectory index of every visit
    remaining: np.ndarray  # (N,) visits from this one to the end of its trajectory, included
    start: np.ndarray  # (T,) first visit of every trajectory
    length: np.ndarray  # (T,)
    traj_id: np.ndarray  # (T,) the caller's trajectory id
    person: np.ndarray  # (T,) dense person code
    person_values: np.ndarray  # dense person code -> the caller's id
    place_values: np.ndarray  # dense place code -> the caller's code


def _checked_sequences(traj: np.ndarray, person: np.ndarray, place: np.ndarray) -> _Sequences:
    traj_a, person_a, place_a = (_integer_array(name, a) for name, a in
                                 (("traj", traj), ("person", person), ("place", place)))
    if not traj_a.size == person_a.size == place_a.size:
        raise InputError("traj, person and place must have one entry per visit (same lengths)")
    if traj_a.size == 0:
        raise InputError("no visits: pass at least one trajectory")
    same = traj_a[1:] == traj_a[:-1]
    if (traj_a[1:] < traj_a[:-1]).any():
        raise InputError("visits must be sorted by traj, then visit order: sort them first")
    if (person_a[1:] != person_a[:-1])[same].any():
        bad = traj_a[1:][same & (person_a[1:] != person_a[:-1])][0]
        raise InputError(f"trajectory {bad} has visits of several persons: one person per "
                         "trajectory")
    return _encoded(traj_a, person_a, place_a, np.flatnonzero(np.r_[True, ~same]))


def _integer_array(name: str, values: np.ndarray) -> np.ndarray:
    a = np.asarray(values)
    if a.ndim != 1 or (a.size and not np.issubdtype(a.dtype, np.integer)):
        raise InputError(f"{name} must be a 1-d integer array (one entry per visit)")
    return a.astype(np.int64, copy=False)


def _encoded(traj: np.ndarray, person: np.ndarray, place: np.ndarray,
             first: np.ndarray) -> _Sequences:
    length = np.diff(np.r_[first, traj.size])
    person_values, person_code = np.unique(person[first], return_inverse=True)
    place_values, place_code = _dense_codes(place)
    order = np.lexsort((traj[first], person_code))
    start = np.r_[0, np.cumsum(length[order])[:-1]]
    rows = _ranges(first[order], first[order] + length[order])
    # Per-visit columns as int32 when they fit: they live through the whole greedy.
    dtype = compact_type(traj.size)
    visit_traj = np.repeat(np.arange(order.size, dtype=dtype), length[order])
    remaining = np.repeat((start + length[order]).astype(dtype), length[order])
    remaining -= np.arange(traj.size, dtype=dtype)
    return _Sequences(
        code=place_code[rows].astype(dtype), visit_traj=visit_traj, remaining=remaining,
        start=start, length=length[order], traj_id=traj[first][order],
        person=person_code[order].astype(np.int64), person_values=person_values,
        place_values=place_values)


def _dense_codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, return_inverse=True)``, by a lookup table when the span is small."""
    low, high = int(values.min()), int(values.max())
    if high - low > 4 * values.size:
        return np.unique(values, return_inverse=True)
    # Place codes usually span a small range: a table avoids sorting every visit.
    present = np.zeros(high - low + 1, bool)
    present[values - low] = True
    code = np.cumsum(present) - 1
    return np.flatnonzero(present) + low, code[values - low]


def _ranges(starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
    """Concatenated ``arange(starts[i], stops[i])`` (:func:`anonymizers.sequences.ranges`
    by bounds)."""
    return ranges(starts, stops - starts)


# --- Algorithms 1-3: all frequent subsequences, one length at a time ------------------------

@dataclass(frozen=True, eq=False)
class _Level:
    """The frequent sequences of one length, in lexicographic order."""

    length: int
    first_window: np.ndarray  # (G_l,) first visit of one window spelling each sequence
    n_persons: np.ndarray
    n_trajectories: np.ndarray
    window: np.ndarray  # first visits of all windows of frequent sequences
    window_group: np.ndarray  # their sequence's rank at this level


def _frequent_levels(seqs: _Sequences, k: int, keep_windows: bool) -> list[_Level]:
    """Windows of growing length whose sequence has at least k distinct individuals.

    Without ``keep_windows`` only one window per sequence is kept once a level is extended.
    """
    n = seqs.code.size
    rank_at = np.zeros(n, np.int64)  # rank of the frequent sequence starting at a visit
    pos, key = np.arange(n), seqs.code
    levels: list[_Level] = []
    while pos.size:
        level = _count_level(seqs, key, pos, len(levels) + 1, k)
        if level.n_persons.size == 0:
            break
        pos, key = _extend(seqs, level, rank_at)
        if not keep_windows:
            level = replace(level, window=pos[:0], window_group=pos[:0])
        levels.append(level)
    return levels


def _count_level(seqs: _Sequences, key: np.ndarray, pos: np.ndarray, length: int,
                 k: int) -> _Level:
    skey, spos = _sorted_windows(key, pos, seqs.code.size)
    first = np.r_[True, skey[1:] != skey[:-1]]
    group = np.cumsum(first) - 1
    traj = seqs.visit_traj[spos]
    n_traj = _distinct_runs(first, traj, group)
    n_persons = _distinct_runs(first, seqs.person[traj], group)
    frequent = n_persons >= k
    member = frequent[group]
    # The windows are kept until the candidates are made: int32 halves them.
    dtype = compact_type(seqs.code.size)
    return _Level(length=length, first_window=spos[first][frequent],
                  n_persons=n_persons[frequent], n_trajectories=n_traj[frequent],
                  window=spos[member].astype(dtype),
                  window_group=(np.cumsum(frequent, dtype=dtype) - 1)[group[member]])


def _sorted_windows(key: np.ndarray, pos: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Windows sorted by (key, position)."""
    bits = max(1, (n - 1).bit_length())
    if int(key.max()).bit_length() + bits <= 63:
        # Sorting packed values is several times faster than an argsort of the keys.
        packed = np.sort((key.astype(np.int64) << bits) | pos)
        return packed >> bits, packed & ((1 << bits) - 1)
    order = np.lexsort((pos, key))
    return key[order], pos[order]


def _distinct_runs(first: np.ndarray, values: np.ndarray, group: np.ndarray) -> np.ndarray:
    """Distinct values per group, when values come in runs within each group."""
    new = first.copy()
    new[1:] |= values[1:] != values[:-1]
    return np.bincount(group[new], minlength=int(group[-1]) + 1)


def _extend(seqs: _Sequences, level: _Level, rank_at: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray]:
    """Windows one place longer whose prefix and suffix are frequent, with their keys."""
    window, group = _by_position(level.window, level.window_group, seqs.code.size)
    frequent_here = np.zeros(seqs.code.size, bool)
    frequent_here[window] = True
    rank_at[window] = group
    grow = window[seqs.remaining[window] > level.length]
    grow = grow[frequent_here[grow + 1]]  # the suffix starts one visit later
    n_places = seqs.place_values.size
    return grow, rank_at[grow] * n_places + seqs.code[grow + level.length]


def _by_position(window: np.ndarray, group: np.ndarray,
                 n: int) -> tuple[np.ndarray, np.ndarray]:
    """Windows and their groups in position order."""
    # In position order every later gather and scatter over the visits is monotone, which
    # is several times faster than in sequence order, where each access misses the cache.
    bits = max(1, int(group.max()).bit_length())
    if (n - 1).bit_length() + bits <= 63:
        packed = np.sort((window.astype(np.int64) << bits) | group)
        return packed >> bits, packed & ((1 << bits) - 1)
    order = np.argsort(window)
    return window[order], group[order]


def _groups(seqs: _Sequences, levels: list[_Level]) -> TrajectoryGroups:
    if not levels:
        empty = np.zeros(0, np.int64)
        return TrajectoryGroups(np.zeros(1, np.int64), empty, empty, empty)
    lengths = np.concatenate([np.full(lv.first_window.size, lv.length) for lv in levels])
    codes = np.concatenate([seqs.code[lv.first_window[:, None] + np.arange(lv.length)].ravel()
                            for lv in levels])
    return TrajectoryGroups(
        offsets=np.r_[0, np.cumsum(lengths)], places=seqs.place_values[codes],
        n_persons=np.concatenate([lv.n_persons for lv in levels]),
        n_trajectories=np.concatenate([lv.n_trajectories for lv in levels]))


def overlapping_trajectory_groups(traj: np.ndarray, person: np.ndarray, place: np.ndarray,
                                  k: int) -> TrajectoryGroups:
    """Every subsequence travelled by at least k distinct individuals (Algorithms 1-3).

    Parameters
    ----------
    traj, person, place
        int (N,): trajectory id, person id and place code of every visit, sorted by ``traj``
        then visit order; a trajectory has one person.
    k
        Minimum number of distinct individuals per group (§4.1).

    Returns
    -------
    TrajectoryGroups
        Ordered by length, then lexicographically. Publish only through the interval filter
        (§4.3.2), with ``I_s`` of ``ceil(k/2)`` or ``k``.

    Raises
    ------
    InputError
        On empty, unsorted, mismatched or non-integer arrays, a trajectory with two persons,
        or ``k < 1``.

    References
    ----------
    .. [1] Nordström 2012, §4.3.2, Algorithms 1-3; §4.1 (distinct individuals).

    Examples
    --------
    >>> g = overlapping_trajectory_groups(np.array([0, 0, 1, 1]), np.array([7, 7, 8, 8]),
    ...                                   np.array([3, 4, 4, 5]), k=2)
    >>> g.places.tolist(), g.n_persons.tolist()
    ([4], [2])
    """
    checked_k(k)
    seqs = _checked_sequences(traj, person, place)
    return _groups(seqs, _frequent_levels(seqs, k, keep_windows=False))


def overlapping_group_windows(traj: np.ndarray, person: np.ndarray, place: np.ndarray,
                              k: int) -> NonoverlappingGroups:
    """The overlapping anonymizer's groups with every window that spells them (private).

    The groups are those of :func:`overlapping_trajectory_groups`; the ``assignment`` lists
    every occurrence of every group's sequence in every trajectory (a trajectory travelling
    a sequence twice has two rows for it), which is what the demographic anonymizer and a
    verifier need to know who is in a group. Its memory is one row per occurrence.

    Parameters
    ----------
    traj, person, place, k
        As in :func:`overlapping_trajectory_groups`.

    Returns
    -------
    NonoverlappingGroups
        ``groups`` as :func:`overlapping_trajectory_groups` returns them and the windows as
        its ``assignment`` (sorted by group, trajectory id, start); never publish them.

    References
    ----------
    .. [1] Nordström 2012, §4.3.2, Algorithms 1-3.

    Examples
    --------
    >>> r = overlapping_group_windows(np.array([0, 0, 1, 1]), np.array([7, 7, 8, 8]),
    ...                               np.array([3, 4, 4, 5]), k=2)
    >>> r.groups.places.tolist(), r.assignment.traj.tolist(), r.assignment.start.tolist()
    ([4], [0, 1], [1, 0])
    """
    checked_k(k)
    seqs = _checked_sequences(traj, person, place)
    levels = _frequent_levels(seqs, k, keep_windows=True)
    groups = _groups(seqs, levels)
    c = _window_candidates(seqs, levels) if levels else _empty_candidates()
    return NonoverlappingGroups(groups=groups, assignment=GroupAssignment(
        group=c.group.astype(np.int64), traj=seqs.traj_id[c.traj],
        person=seqs.person_values[c.person()], start=c.start.astype(np.int64),
        stop=c.stop().astype(np.int64)))


# --- Algorithms 4-5: the greedy over the initial set ----------------------------------------

def group_score(n_persons: np.ndarray, length: np.ndarray) -> np.ndarray:
    """Eq. 2: S(G) = n l^2, longer sequences before more individuals.

    Examples
    --------
    >>> group_score(np.array([3, 2]), np.array([2, 3])).tolist()
    [12.0, 18.0]
    """
    return np.asarray(n_persons, float) * np.asarray(length, float) ** 2


@dataclass(frozen=True, eq=False)
class _Candidates:
    """Things the greedy can move into groups, sorted by group, trajectory id, start.

    Two candidates of one trajectory are siblings if their ranges overlap or their group is
    the same; moving one removes the other.
    """

    group: np.ndarray
    traj: np.ndarray  # internal trajectory index
    start: np.ndarray
    traj_person: np.ndarray  # (T,) dense person code of every internal trajectory
    group_length: np.ndarray  # (G,) length of every group's sequence

    # A candidate's person and stop are looked up, not stored: two columns fewer of the
    # hundred million candidates at 25M fixes.
    def person(self, idx: np.ndarray | slice = slice(None)) -> np.ndarray:
        return self.traj_person[self.traj[idx]]

    def stop(self, idx: np.ndarray | slice = slice(None)) -> np.ndarray:
        return self.start[idx] + self.group_length[self.group[idx]]


def _candidates(parts: Iterable[tuple[np.ndarray, np.ndarray, np.ndarray]], size: int,
                group_length: np.ndarray, seqs: _Sequences) -> _Candidates:
    """The ``size`` candidates of ``parts`` of (group, internal trajectory, start), sorted by
    group, trajectory id and start; ``stop`` is ``start`` plus the group's length.

    The three keys are packed into one integer, written part by part into one array and
    sorted in place, which needs a third of the memory of a lexsort of three columns; the
    columns are then taken out one at a time, int32 when they fit (the 5M-fix city has 24.5
    million candidates).
    """
    n_traj = seqs.traj_id.size
    bits_s = int(seqs.length.max()).bit_length()
    bits_t = max(1, (n_traj - 1).bit_length())
    bits_g = max(1, (group_length.size - 1).bit_length())
    by_rank = np.argsort(seqs.traj_id)  # internal index of every trajectory id, ascending
    rank = np.empty(n_traj, np.int64)
    rank[by_rank] = np.arange(n_traj)
    dtype = compact_type(max(group_length.size, n_traj, int(seqs.length.max()) + 1))
    if bits_g + bits_t + bits_s > 63:
        group, traj, start = (np.concatenate(a) for a in zip(*parts, strict=True))
        order = np.lexsort((start, rank[traj], group))
        group, traj, start = (a[order].astype(dtype) for a in (group, traj, start))
    else:
        key = np.empty(size, np.int64)
        at = 0
        for g, t, s in parts:
            part = key[at:at + g.size]
            part[:] = g  # widened to int64 before the shift
            part <<= bits_t + bits_s
            part |= rank[t] << bits_s
            part |= s
            at += g.size
        key.sort()
        group, traj, start = _unpacked(key, bits_t, bits_s, by_rank.astype(dtype))
        del key
    return _Candidates(group=group, traj=traj, start=start,
                       traj_person=seqs.person.astype(dtype),
                       group_length=group_length.astype(dtype))


def _unpacked(key: np.ndarray, bits_t: int, bits_s: int, traj_of_rank: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Group, internal trajectory and start of packed candidate keys, a block at a time
    (an int64 temporary of every key would be as large as the keys)."""
    dtype = traj_of_rank.dtype
    group, traj, start = (np.empty(key.size, dtype) for _ in range(3))
    for lo in range(0, key.size, BLOCK):
        block = key[lo:lo + BLOCK]
        start[lo:lo + block.size] = block & ((1 << bits_s) - 1)
        traj[lo:lo + block.size] = traj_of_rank[(block >> bits_s) & ((1 << bits_t) - 1)]
        group[lo:lo + block.size] = block >> (bits_t + bits_s)
    return group, traj, start


class _Pool:
    """The initial set while the greedy empties it: live candidates and persons per group."""

    def __init__(self, c: _Candidates, n_groups: int, n_trajectories: int) -> None:
        self.c = c
        self.alive = np.ones(c.group.size, bool)
        self.group_ptr = np.searchsorted(c.group, np.arange(n_groups + 1))
        self.by_traj, self.traj_ptr = _stable_order(c.traj, n_trajectories)
        self.pair, self.pair_count, self.persons = _group_person_pairs(c, n_groups)
        self.live = np.diff(self.group_ptr)  # live candidates per group

    def pick(self, g: int, k: int, rng: np.random.Generator) -> np.ndarray:
        """Up to k live candidates of group g of distinct persons: each person's first in a
        uniformly random order of the group's live candidates (§4.3.3, "at random").

        The order is drawn over all the group's candidates, live or not, and the dead are
        skipped: restricted to the live ones it is still uniformly random. Only a prefix is
        drawn, about 4k live candidates long (:func:`_first_draws`); the rest of the order
        only when the prefix holds fewer than k persons. So a pick costs about O(k) however
        large the group, where shuffling its live candidates made the greedy quadratic in the
        largest groups (5M-fix city: one group of 112,726 windows).
        """
        lo, size = int(self.group_ptr[g]), int(self.group_ptr[g + 1] - self.group_ptr[g])
        first = rng.choice(size, size=_first_draws(size, int(self.live[g]), k), replace=False)
        picked = self._first_of_each_person(lo + first, k)
        if picked.size < k and first.size < size:
            undrawn = np.ones(size, bool)
            undrawn[first] = False
            rest = np.flatnonzero(undrawn)
            order = np.concatenate([first, rest[rng.permutation(rest.size)]])
            picked = self._first_of_each_person(lo + order, k)
        return picked

    def _first_of_each_person(self, order: np.ndarray, k: int) -> np.ndarray:
        live = order[self.alive[order]]
        _, first = np.unique(self.c.person(live), return_index=True)
        return live[np.sort(first)[:k]]

    def siblings(self, moved: np.ndarray) -> np.ndarray:
        """Live candidates of the moved ones' trajectories that overlap them or share a group.

        The moved are of distinct persons, so of distinct trajectories: no candidate is
        found twice.
        """
        c, t = self.c, self.c.traj[moved]
        lo, hi = self.traj_ptr[t], self.traj_ptr[t + 1]
        idx = self.by_traj[_ranges(lo, hi)]
        owner = np.repeat(moved, hi - lo)
        live = self.alive[idx]
        idx, owner = idx[live], owner[live]
        hit = ((c.start[idx] < c.stop(owner)) & (c.stop(idx) > c.start[owner])
               | (c.group[idx] == c.group[owner]))
        return idx[hit]

    def remove(self, idx: np.ndarray) -> None:
        idx = idx[self.alive[idx]]
        self.alive[idx] = False
        np.subtract.at(self.live, self.c.group[idx], 1)
        pairs, first, counts = np.unique(self.pair[idx], return_index=True,
                                         return_counts=True)
        self.pair_count[pairs] -= counts
        emptied = self.pair_count[pairs] == 0
        np.subtract.at(self.persons, self.c.group[idx[first[emptied]]], 1)


def _stable_order(values: np.ndarray, n_values: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.argsort(values, kind="stable")`` in ``values``' own integer type, and where each
    value's run starts in it; sorted a range of values at a time, so that the argsort's
    int64 result never exists for all of them at once."""
    order = np.empty(values.size, values.dtype)
    ptr = np.r_[0, np.cumsum(np.bincount(values, minlength=n_values))]
    bounds = distinct_values(np.r_[0, np.searchsorted(
        ptr, np.arange(BLOCK, values.size, BLOCK)), n_values])
    for a, b in itertools.pairwise(bounds.tolist()):
        idx = np.flatnonzero((values >= a) & (values < b))
        order[ptr[a]:ptr[b]] = idx[np.argsort(values[idx], kind="stable")]
    return order, ptr


def _group_person_pairs(c: _Candidates, n_groups: int
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every candidate's (group, person) pair number, each pair's live candidates, and
    the persons of each group.

    The candidates come sorted by group, so the pairs are numbered a block of whole groups
    at a time: the sort's int64 keys and order exist for one block only. Nearly every pair
    has one candidate (25M-fix city: 118.8 million pairs of 127.6 million windows), so the
    pair numbers are int32 and the counts int16 when they fit; a pair's group is that of
    any of its candidates, and is not stored.
    """
    n_persons = int(c.traj_person.max()) + 1 if c.traj_person.size else 1
    dtype = compact_type(c.group.size)
    pair = np.empty(c.group.size, dtype)
    counts: list[np.ndarray] = []
    persons = np.zeros(n_groups, np.int64)
    lo, numbered = 0, 0
    while lo < c.group.size:
        hi = int(np.searchsorted(c.group, c.group[min(lo + BLOCK, c.group.size) - 1],
                                 side="right"))
        key = c.group[lo:hi].astype(np.int64) * n_persons + c.person(slice(lo, hi))
        order = np.argsort(key)
        key = key[order]
        new = np.empty(key.size, bool)
        new[:1] = True
        np.not_equal(key[1:], key[:-1], out=new[1:])
        persons += np.bincount(key[new] // n_persons, minlength=n_groups)
        counts.append(np.diff(np.append(np.flatnonzero(new), new.size)).astype(dtype))
        pair[lo + order] = np.cumsum(new, dtype=dtype) + (numbered - 1)
        numbered += counts[-1].size
        lo = hi
    most = max((int(part.max()) for part in counts), default=0)
    counts_dtype = np.int16 if most < 2**15 else dtype
    return pair, (np.concatenate(counts, dtype=counts_dtype, casting="same_kind") if counts
                  else np.zeros(0, counts_dtype)), persons


def _first_draws(size: int, live: int, k: int) -> int:
    """How much of a random order of a group's ``size`` candidates to draw first: enough to
    hold about 4k of its ``live`` ones (all of them once few are left)."""
    return min(size, -(-4 * k * size // max(live, 1)))


def _greedy(c: _Candidates, weight: np.ndarray, rank: np.ndarray, k: int,
            rng: np.random.Generator) -> np.ndarray:
    """Algorithm 4's loop: the moved candidates, in the order they were moved.

    Score of group g: (distinct persons left) * weight[g]; ties by the smaller rank[g].
    Scores only decrease, so the heap is fixed lazily when a stale entry comes up.
    """
    n_traj = int(c.traj.max()) + 1 if c.traj.size else 0
    pool, published = _Pool(c, weight.size, n_traj), np.zeros(weight.size, bool)
    heap = [(-float(n * w), int(r), g) for g, (n, w, r) in
            enumerate(zip(pool.persons.tolist(), weight.tolist(), rank.tolist(), strict=True))
            if n >= k]
    heapq.heapify(heap)
    moved: list[np.ndarray] = []
    while heap:
        stored, r, g = heapq.heappop(heap)
        n = int(pool.persons[g])
        if n == 0 or (n < k and not published[g]):
            continue  # empty, or can never reach k individuals: dropped
        if stored != -float(n * weight[g]):
            heapq.heappush(heap, (-float(n * weight[g]), r, g))
            continue
        picked = pool.pick(g, k, rng)
        moved.append(picked)
        published[g] = True
        pool.remove(pool.siblings(picked))
        heapq.heappush(heap, (-float(pool.persons[g] * weight[g]), r, g))
    return np.concatenate(moved) if moved else np.zeros(0, np.int64)


def _order_rank(*keys: np.ndarray) -> np.ndarray:
    """Rank of every item under np.lexsort(keys) (last key primary)."""
    order = np.lexsort(keys)
    rank = np.empty(order.size, np.int64)
    rank[order] = np.arange(order.size)
    return rank


def _window_candidates(seqs: _Sequences, levels: list[_Level]) -> _Candidates:
    """Every window of a frequent sequence as a candidate; empties ``levels`` as it goes,
    so that the levels' windows and the candidates are not held whole at once."""
    first_group = np.cumsum([0] + [lv.first_window.size for lv in levels])
    group_length = np.repeat([lv.length for lv in levels], np.diff(first_group))

    def parts() -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        for offset in first_group[:-1].tolist():
            level = levels.pop(0)
            traj = seqs.visit_traj[level.window]
            yield level.window_group + offset, traj, level.window - seqs.start[traj]

    return _candidates(parts(), sum(lv.window.size for lv in levels), group_length, seqs)


def nonoverlapping_trajectory_groups(traj: np.ndarray, person: np.ndarray, place: np.ndarray,
                                     k: int, seed: int | np.random.Generator = 0
                                     ) -> NonoverlappingGroups:
    """Groups in which no part of a trajectory is counted twice (Algorithms 4-5, eq. 2).

    Starting from the overlapping anonymizer's output (the initial set), repeatedly move up
    to ``k`` trajectories of distinct individuals from the group of highest score
    ``n l^2`` into the anonymized set, remove the moved windows' siblings, and drop groups that
    can no longer reach ``k`` individuals, until the initial set is empty.

    Parameters
    ----------
    traj, person, place
        As in :func:`overlapping_trajectory_groups`.
    k
        Minimum number of distinct individuals per published group.
    seed
        Seed or Generator for the random choice of the moved trajectories (§4.3.3: "selected
        at random"); a fixed seed gives a fixed result.

    Returns
    -------
    NonoverlappingGroups
        The published groups (ordered by length, then lexicographically; counts from the
        assignment) and the private assignment.

    Raises
    ------
    InputError
        As :func:`overlapping_trajectory_groups`, or on a bad seed.

    References
    ----------
    .. [1] Nordström 2012, §4.3.3, eq. 2, Algorithms 4-5.

    Examples
    --------
    >>> r = nonoverlapping_trajectory_groups(
    ...     np.array([0, 0, 0, 1, 1, 1]), np.array([1, 1, 1, 2, 2, 2]),
    ...     np.array([5, 6, 7, 5, 6, 8]), k=2)
    >>> r.groups.places.tolist(), r.assignment.start.tolist(), r.assignment.stop.tolist()
    ([5, 6], [0, 0], [2, 2])
    """
    checked_k(k)
    rng = generator(seed)
    seqs = _checked_sequences(traj, person, place)
    levels = _frequent_levels(seqs, k, keep_windows=True)
    initial = _groups(seqs, levels)
    if not levels:
        return _published(seqs, initial, _empty_candidates(), np.zeros(0, np.int64))
    candidates = _window_candidates(seqs, levels)  # empties levels
    length = initial.length
    moved = _greedy(candidates, length.astype(float) ** 2, _order_rank(
        np.arange(length.size), -length), k, rng)
    return _published(seqs, initial, candidates, moved)


def _empty_candidates() -> _Candidates:
    empty = np.zeros(0, np.int64)
    return _Candidates(empty, empty, empty, empty, empty)


def _published(seqs: _Sequences, initial: TrajectoryGroups, c: _Candidates,
               moved: np.ndarray) -> NonoverlappingGroups:
    used, group = np.unique(c.group[moved], return_inverse=True)
    order = np.lexsort((c.start[moved], seqs.traj_id[c.traj[moved]], group))
    moved, group = moved[order], group[order]
    n_persons = np.bincount(distinct_values(group * seqs.person_values.size + c.person(moved))
                            // seqs.person_values.size, minlength=used.size)
    places = initial.places[_ranges(initial.offsets[used], initial.offsets[used + 1])]
    groups = TrajectoryGroups(
        offsets=np.r_[0, np.cumsum(initial.length[used])], places=places,
        n_persons=n_persons, n_trajectories=np.bincount(group, minlength=used.size))
    assignment = GroupAssignment(
        group=group, traj=seqs.traj_id[c.traj[moved]],
        person=seqs.person_values[c.person(moved)], start=c.start[moved].astype(np.int64),
        stop=c.stop(moved).astype(np.int64))
    return NonoverlappingGroups(groups=groups, assignment=assignment)


# --- §4.3.3: origin-destination groups ------------------------------------------------------

@dataclass(frozen=True, eq=False)
class _Neighbourhoods:
    """Closed neighbourhoods N[c] of every place, places coded densely in ``universe``."""

    universe: np.ndarray  # sorted place codes: the data's and the neighbour pairs'
    ptr: np.ndarray  # N[c] = nodes[ptr[c]:ptr[c + 1]]
    nodes: np.ndarray  # ascending within each N[c]

    def size(self, c: np.ndarray) -> np.ndarray:
        return self.ptr[c + 1] - self.ptr[c]


def _closed_neighbourhoods(place_values: np.ndarray, neighbours: np.ndarray) -> _Neighbourhoods:
    pairs = np.asarray(neighbours)
    if pairs.ndim != 2 or pairs.shape[1] != 2 or (
            pairs.size and not np.issubdtype(pairs.dtype, np.integer)):
        raise InputError("neighbours must be an integer array of shape (E, 2): place pairs "
                         "joined by one route (an empty (0, 2) array if none)")
    pairs = pairs.astype(np.int64)
    universe = distinct_values(np.concatenate([place_values, pairs.ravel()]))
    a, b = np.searchsorted(universe, pairs[:, 0]), np.searchsorted(universe, pairs[:, 1])
    n, own = universe.size, np.arange(universe.size)
    edges = distinct_values(np.concatenate([a, b, own]) * n + np.concatenate([b, a, own]))
    return _Neighbourhoods(universe=universe,
                           ptr=np.searchsorted(edges // n, np.arange(n + 1)), nodes=edges % n)


def _assigned_trajectories(seqs: _Sequences, result: NonoverlappingGroups) -> np.ndarray:
    """Internal trajectory index of every assignment row, checked against the sequences."""
    order = np.argsort(seqs.traj_id)
    at = np.searchsorted(seqs.traj_id[order], result.assignment.traj)
    internal = order[np.minimum(at, order.size - 1)]
    if not _spells_groups(seqs, result, internal):
        raise InputError("groups do not come from these sequences: pass the result of "
                         "nonoverlapping_trajectory_groups on the same traj, person, place")
    return internal


def _spells_groups(seqs: _Sequences, result: NonoverlappingGroups,
                   internal: np.ndarray) -> bool:
    """Whether every assignment row's trajectory, person and visits spell its group."""
    a, g = result.assignment, result.groups
    if a.group.size == 0:
        return True
    if a.group.min() < 0 or a.group.max() >= g.n_groups:
        return False
    if not ((seqs.traj_id[internal] == a.traj).all()
            and (seqs.person_values[seqs.person[internal]] == a.person).all()
            and (a.start >= 0).all() and (a.stop <= seqs.length[internal]).all()
            and (a.stop - a.start == g.length[a.group]).all()):
        return False
    first = seqs.start[internal]
    spelled = seqs.place_values[seqs.code[_ranges(first + a.start, first + a.stop)]]
    return bool((spelled == g.places[_ranges(g.offsets[a.group], g.offsets[a.group + 1])]).all())


@dataclass(frozen=True, eq=False)
class _CommonGroups:
    """Published common groups of one kind (origin or destination)."""

    group: np.ndarray
    centre: np.ndarray  # dense code in the neighbourhoods' universe
    n_persons: np.ndarray
    n_trajectories: np.ndarray
    member_group: np.ndarray
    member_traj: np.ndarray  # internal trajectory index
    member_person: np.ndarray  # dense person code


def _common_groups(seqs: _Sequences, result: NonoverlappingGroups, internal: np.ndarray,
                   hood: _Neighbourhoods, k: int, rng: np.random.Generator,
                   origin: bool) -> _CommonGroups:
    """The greedy of Algorithm 4 over (trajectory group, N[c]) pairs, score n / |N[c]|."""
    keys, c = _common_candidates(seqs, result, internal, hood, origin)
    n = hood.universe.size
    size = hood.size(keys % n)
    moved = _greedy(c, 1.0 / size, _order_rank(keys // n, keys % n, size), k, rng)
    used, member = np.unique(c.group[moved], return_inverse=True)
    n_persons = np.bincount(distinct_values(member * seqs.person_values.size + c.person(moved))
                            // seqs.person_values.size, minlength=used.size)
    return _CommonGroups(group=keys[used] // n, centre=keys[used] % n, n_persons=n_persons,
                         n_trajectories=np.bincount(member, minlength=used.size),
                         member_group=member, member_traj=c.traj[moved],
                         member_person=c.person(moved))


def _common_candidates(seqs: _Sequences, result: NonoverlappingGroups, internal: np.ndarray,
                       hood: _Neighbourhoods, origin: bool) -> tuple[np.ndarray, _Candidates]:
    """Every (trajectory group, N[c]) pair a member's origin (or destination) lies in, as
    ``group * |universe| + c`` in ascending order, and a candidate per member and pair.

    Members are taken a block at a time, twice (the pairs, then the candidates), so that
    no temporary holds a row per candidate: at 25M fixes 110.9 million candidates, whose
    rows and keys built at once took the step to 8 GB.
    """
    visit = seqs.start[internal] + (0 if origin else seqs.length[internal] - 1)
    end = np.searchsorted(hood.universe, seqs.place_values[seqs.code[visit]])
    lo, hi = hood.ptr[end], hood.ptr[end + 1]  # c in N[end] iff end in N[c]
    cut = np.searchsorted(np.cumsum(hi - lo), np.arange(BLOCK, int((hi - lo).sum()),
                                                         BLOCK))
    blocks = list(itertools.pairwise(distinct_values(np.r_[0, cut, internal.size])))

    def rows_and_keys(a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
        row = np.repeat(np.arange(a, b), hi[a:b] - lo[a:b])
        return row, (result.assignment.group[row] * hood.universe.size
                     + hood.nodes[_ranges(lo[a:b], hi[a:b])])

    keys = distinct_values(np.concatenate(
        [np.zeros(0, np.int64)] + [distinct_values(rows_and_keys(a, b)[1]) for a, b in blocks]))

    def parts() -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        for a, b in blocks:
            row, key = rows_and_keys(a, b)
            # Each candidate spans its whole trajectory (start 0, length 1), so all of one
            # trajectory's candidates are siblings: it joins one common group at most.
            yield np.searchsorted(keys, key), internal[row], np.zeros(row.size, np.int32)

    return keys, _candidates(parts(), int((hi - lo).sum()), np.ones(keys.size, np.int64), seqs)


def origin_destination_groups(traj: np.ndarray, person: np.ndarray, place: np.ndarray,
                              groups: NonoverlappingGroups, k: int, neighbours: np.ndarray,
                              seed: int | np.random.Generator = 0) -> OriginDestinationGroups:
    """Common origin and destination groups of the nonoverlapping groups' members (§4.3.3).

    For every published trajectory group, the members whose original trajectory started (or
    ended) within one place's closed neighbourhood ``N[c]`` form a common group; groups of at
    least ``k`` individuals are chosen greedily (score ``n / |N[c]|``), each trajectory in at
    most one origin and one destination group.

    Parameters
    ----------
    traj, person, place
        The sequences ``groups`` was computed from.
    groups
        The result of :func:`nonoverlapping_trajectory_groups`.
    k
        Minimum number of distinct individuals per common group.
    neighbours
        int (E, 2): pairs of places joined by a single route (undirected). A place in no
        pair is a common group on its own.
    seed
        Seed or Generator of the random choice of the moved trajectories.

    Returns
    -------
    OriginDestinationGroups
        Sorted by trajectory group, origins before destinations, then centre.

    Raises
    ------
    InputError
        On bad sequences, neighbours, ``k`` or seed, or groups from other sequences.

    References
    ----------
    .. [1] Nordström 2012, §4.3.3, "Origin - destination groups".

    Examples
    --------
    >>> t, p, x = np.array([0, 0, 1, 1]), np.array([1, 1, 2, 2]), np.array([1, 9, 2, 9])
    >>> r = nonoverlapping_trajectory_groups(t, p, x, k=2)
    >>> od = origin_destination_groups(t, p, x, r, 2, np.array([[1, 2]]))
    >>> od.centre.tolist(), od.is_origin.tolist(), od.node_set(0).tolist()
    ([1, 9], [True, False], [1, 2])
    """
    checked_k(k)
    rng = generator(seed)
    seqs = _checked_sequences(traj, person, place)
    hood = _closed_neighbourhoods(seqs.place_values, neighbours)
    internal = _assigned_trajectories(seqs, groups)
    kinds = [_common_groups(seqs, groups, internal, hood, k, rng, origin)
             for origin in (True, False)]
    return _merged(seqs, hood, kinds)


def _merged(seqs: _Sequences, hood: _Neighbourhoods,
            kinds: list[_CommonGroups]) -> OriginDestinationGroups:
    origin, dest = kinds
    group = np.r_[origin.group, dest.group]
    is_origin = np.r_[np.ones(origin.group.size, bool), np.zeros(dest.group.size, bool)]
    centre = np.r_[origin.centre, dest.centre]
    order = np.lexsort((hood.universe[centre], ~is_origin, group))
    new = np.empty(order.size, np.int64)
    new[order] = np.arange(order.size)
    member = new[np.r_[origin.member_group, dest.member_group + origin.group.size]]
    by_member = np.lexsort((seqs.traj_id[np.r_[origin.member_traj, dest.member_traj]], member))
    sizes = hood.size(centre[order])
    return OriginDestinationGroups(
        group=group[order], is_origin=is_origin[order], centre=hood.universe[centre[order]],
        node_offsets=np.r_[0, np.cumsum(sizes)],
        nodes=hood.universe[hood.nodes[_ranges(hood.ptr[centre[order]],
                                               hood.ptr[centre[order] + 1])]],
        n_persons=np.r_[origin.n_persons, dest.n_persons][order],
        n_trajectories=np.r_[origin.n_trajectories, dest.n_trajectories][order],
        member_group=member[by_member],
        member_traj=seqs.traj_id[np.r_[origin.member_traj, dest.member_traj]][by_member],
        member_person=seqs.person_values[
            np.r_[origin.member_person, dest.member_person]][by_member])
