"""The pure trajectory-group algorithms (Nordström 2012): the thesis' examples, brute force and
plain-Python references on random inputs, the privacy properties, and bad inputs."""

from __future__ import annotations

from collections import defaultdict
from itertools import pairwise
from typing import NamedTuple

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonymizers.errors import InputError
from anonymizers.families.groups import trajectory_groups
from anonymizers.families.groups.interval_filter import (
    interval_filter,
    thesis_interval_size,
)
from anonymizers.families.groups.trajectory_groups import (
    NonoverlappingGroups,
    TrajectoryGroups,
    _Candidates,
    _Pool,
    _sorted_windows,
    group_score,
    nonoverlapping_trajectory_groups,
    origin_destination_groups,
    overlapping_trajectory_groups,
)
from anonymizers.verifiers.base import interval_count

Trips = list[tuple[int, list[int]]]  # (person, places) per trajectory

# --- tiny helpers ---------------------------------------------------------------------------


def traj_ids(n: int) -> list[int]:
    """Sparse, non-contiguous trajectory ids, so ids are never mistaken for indices."""
    return [3 * i + 5 for i in range(n)]


def make_sequences(trips: Trips) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(person, places) per trajectory -> the traj, person, place arrays, sorted by traj."""
    ids = traj_ids(len(trips))
    traj = [t for t, (_, places) in zip(ids, trips, strict=True) for _ in places]
    person = [p for p, places in trips for _ in places]
    place = [x for _, places in trips for x in places]
    return np.array(traj, np.int64), np.array(person, np.int64), np.array(place, np.int64)


def as_dict(groups: TrajectoryGroups) -> dict[tuple[int, ...], tuple[int, int]]:
    return {tuple(groups.sequence(i).tolist()): (int(groups.n_persons[i]),
                                                 int(groups.n_trajectories[i]))
            for i in range(groups.n_groups)}


def assignment_rows(result: NonoverlappingGroups) -> list[tuple]:
    a = result.assignment
    return sorted((tuple(result.groups.sequence(int(g)).tolist()), int(t), int(p), int(s),
                   int(e)) for g, t, p, s, e in zip(a.group, a.traj, a.person, a.start,
                                                     a.stop, strict=True))


trips_strategy = st.lists(
    st.tuples(st.integers(-2, 3), st.lists(st.integers(-1, 3), min_size=1, max_size=6)),
    min_size=1, max_size=9)

# --- brute force and plain-Python references (loops: tests only) ----------------------------


def brute_overlapping(trips: Trips, k: int) -> dict[tuple[int, ...], tuple[int, int]]:
    persons: dict[tuple[int, ...], set[int]] = defaultdict(set)
    trajs: dict[tuple[int, ...], set[int]] = defaultdict(set)
    for tid, (p, places) in zip(traj_ids(len(trips)), trips, strict=True):
        for i in range(len(places)):
            for j in range(i + 1, len(places) + 1):
                persons[tuple(places[i:j])].add(p)
                trajs[tuple(places[i:j])].add(tid)
    return {s: (len(persons[s]), len(trajs[s])) for s in persons if len(persons[s]) >= k}


class Cand(NamedTuple):
    group: int
    tid: int
    person: int
    start: int
    stop: int


def reference_pick(members: list[Cand], alive: list[Cand], k: int,
                   rng: np.random.Generator) -> list[Cand]:
    """Up to k live members of distinct persons, each person's first in a random order of all
    members: a prefix holding about 4k live ones first, the rest of the order only if the
    prefix holds fewer than k persons (the draws ``_Pool.pick`` makes)."""
    live = sum(m in alive for m in members)
    first = rng.choice(len(members), size=min(len(members), -(-4 * k * len(members) // live)),
                       replace=False).tolist()
    picked: list[Cand] = []

    def walk(order: list[int]) -> None:
        for i in order:
            if (members[i] in alive and members[i].person not in {c.person for c in picked}
                    and len(picked) < k):
                picked.append(members[i])

    walk(first)
    if len(picked) < k and len(first) < len(members):
        rest = sorted(set(range(len(members))) - set(first))
        picked.clear()
        walk(first + [rest[i] for i in rng.permutation(len(rest))])
    return picked


def reference_greedy(cands: list[Cand], weight: dict[int, float], tie: dict[int, tuple],
                     k: int, rng: np.random.Generator) -> list[Cand]:
    """Algorithm 4 as written, recomputing every score at every step."""
    every = sorted(cands, key=lambda c: (c.group, c.tid, c.start))
    alive = list(every)
    published: set[int] = set()
    moved: list[Cand] = []
    while True:
        persons: dict[int, set[int]] = defaultdict(set)
        for c in alive:
            persons[c.group].add(c.person)
        eligible = [g for g in persons if g in published or len(persons[g]) >= k]
        if not eligible:
            return moved
        g = min(eligible, key=lambda g: (-(len(persons[g]) * weight[g]), tie[g]))
        picked = reference_pick([c for c in every if c.group == g], alive, k, rng)
        moved += picked
        published.add(g)
        alive = [c for c in alive if not any(
            c.tid == m.tid and (c.group == g or (c.start < m.stop and c.stop > m.start))
            for m in picked)]


def reference_nonoverlapping(trips: Trips, k: int, seed: int) -> list[tuple]:
    sequences = sorted(brute_overlapping(trips, k), key=lambda s: (len(s), s))
    gid = {s: i for i, s in enumerate(sequences)}
    cands = [Cand(gid[tuple(places[i:j])], tid, p, i, j)
             for tid, (p, places) in zip(traj_ids(len(trips)), trips, strict=True)
             for i in range(len(places)) for j in range(i + 1, len(places) + 1)
             if tuple(places[i:j]) in gid]
    weight = {g: float(len(s) ** 2) for s, g in gid.items()}
    tie = {g: (-len(s), g) for s, g in gid.items()}
    moved = reference_greedy(cands, weight, tie, k, np.random.default_rng(seed))
    return sorted((sequences[c.group], c.tid, c.person, c.start, c.stop) for c in moved)


def closed_neighbourhood(c: int, pairs: list[tuple[int, int]]) -> list[int]:
    return sorted({c} | {b for a, b in pairs if a == c} | {a for a, b in pairs if b == c})


def reference_od(trips: Trips, result: NonoverlappingGroups, k: int,
                 pairs: list[tuple[int, int]], seed: int) -> list[tuple]:
    rng = np.random.default_rng(seed)
    by_tid = dict(zip(traj_ids(len(trips)), trips, strict=True))
    out = []
    for origin in (True, False):
        keys = sorted({(int(g), c) for g, t in zip(result.assignment.group,
                                                    result.assignment.traj, strict=True)
                       for c in closed_neighbourhood(by_tid[int(t)][1][0 if origin else -1],
                                                     pairs)})
        cid = {key: i for i, key in enumerate(keys)}
        cands = [Cand(cid[(int(g), c)], int(t), int(p), 0, 1) for g, t, p in zip(
            result.assignment.group, result.assignment.traj, result.assignment.person,
            strict=True) for c in closed_neighbourhood(by_tid[int(t)][1][0 if origin else -1],
                                                       pairs)]
        size = {i: len(closed_neighbourhood(c, pairs)) for (g, c), i in cid.items()}
        moved = reference_greedy(cands, {i: 1.0 / s for i, s in size.items()},
                                 {i: (size[i], keys[i][1], keys[i][0]) for i in size}, k, rng)
        out += [(keys[c.group][0], origin, keys[c.group][1], c.tid, c.person) for c in moved]
    return sorted(out)


def od_rows(od) -> list[tuple]:
    return sorted((int(od.group[g]), bool(od.is_origin[g]), int(od.centre[g]), int(t), int(p))
                  for g, t, p in zip(od.member_group, od.member_traj, od.member_person,
                                     strict=True))


# --- the thesis' worked examples ------------------------------------------------------------


def test_five_people_on_one_sequence_of_ten_routes_give_55_groups() -> None:
    """§4.3.2: k = 5, five people on the same 10-route sequence: (10 + 1) 10 / 2 = 55 groups."""
    trips = [(p, list(range(10))) for p in range(5)]
    groups = overlapping_trajectory_groups(*make_sequences(trips), k=5)
    assert groups.n_groups == 55
    assert set(groups.n_persons.tolist()) == {5}
    assert sorted(as_dict(groups)) == sorted(tuple(range(i, j)) for j in range(11)
                                             for i in range(j))


def test_figure_1_only_the_shared_route_is_published() -> None:
    """Figure 1: k = 2, two trajectories sharing one route: that route is the only group."""
    groups = overlapping_trajectory_groups(*make_sequences([(1, [10, 11, 12]),
                                                            (2, [20, 11, 21, 22])]), k=2)
    assert as_dict(groups) == {(11,): (2, 2)}


def test_algorithm_2_yields_n_n_plus_1_over_2_subsequences() -> None:
    groups = overlapping_trajectory_groups(*make_sequences([(0, [4, 8, 15, 16, 23, 42])]), k=1)
    assert groups.n_groups == 6 * 7 // 2


def test_k_counts_individuals_and_the_published_number_trajectories() -> None:
    """§4.1: one person k times is not shown; k people once and another person k times show
    as 2k trajectories."""
    k = 4
    alone = [(9, [1, 2, 3])] * k
    assert overlapping_trajectory_groups(*make_sequences(alone), k=k).n_groups == 0
    mixed = [(p, [1, 2, 3]) for p in range(k)] + alone
    groups = as_dict(overlapping_trajectory_groups(*make_sequences(mixed), k=k))
    assert groups[(1, 2, 3)] == (k + 1, 2 * k)


def test_a_trajectory_counts_once_per_sequence_it_repeats() -> None:
    """Algorithms 2-3 collect subsequences in a set."""
    groups = as_dict(overlapping_trajectory_groups(*make_sequences([(0, [1, 2, 1, 2])]), k=1))
    assert groups[(1, 2)] == (1, 1)
    assert groups[(1, 2, 1, 2)] == (1, 1)


def test_interval_filter_thesis_example() -> None:
    """§4.2: k = 10, I_s = 5: intervals {10..14}, {15..19}, {20..24}; 16 -> {15, ..., 19}."""
    iv = interval_filter(np.arange(10, 25), k=10, interval_size=5)
    assert iv.n_min.tolist() == [10] * 5 + [15] * 5 + [20] * 5
    assert iv.n_max.tolist() == [14] * 5 + [19] * 5 + [24] * 5
    sixteen = interval_filter(np.array([16]), 10, 5)
    assert (int(sixteen.n_min[0]), int(sixteen.n_max[0])) == (15, 19)


def test_interval_filter_figures_13_and_14() -> None:
    """Figures 13-14 (k = 10, I_s = 5) show groups as [10..15) and [30..35)."""
    iv = interval_filter(np.array([14, 30, 34]), 10, thesis_interval_size(10, half=True))
    assert list(zip(iv.n_min.tolist(), (iv.n_max + 1).tolist(), strict=True)) == [
        (10, 15), (30, 35), (30, 35)]


@pytest.mark.parametrize("k", [2, 5, 10, 11])
@pytest.mark.parametrize("half", [False, True])
def test_nested_groups_in_consecutive_intervals_differ_by_1_to_2_is_minus_1(
        k: int, half: bool) -> None:
    """§4.5.1 (Figure 12): counts in consecutive intervals differ by [1, 2 I_s)."""
    size = thesis_interval_size(k, half)
    counts = np.arange(k, k + 6 * size)
    iv = interval_filter(counts, k, size)
    a, b = np.meshgrid(counts, counts, indexing="ij")
    consecutive = iv.n_min[None, :] == iv.n_min[:, None] + size
    assert (b - a)[consecutive].min() == 1
    assert (b - a)[consecutive].max() == 2 * size - 1


def test_thesis_interval_sizes() -> None:
    assert (thesis_interval_size(10), thesis_interval_size(10, half=True)) == (10, 5)
    assert thesis_interval_size(7, half=True) == 4  # ceil: I_s >= k/2 (§4.5.1)


# --- a hand example of Algorithm 4 (the thesis' Figure 4 is an image, not in the text) -----


@pytest.mark.parametrize("seed", range(4))
def test_nonoverlapping_hand_example(seed: int) -> None:
    """k = 2. Scores: ABC and BCD 18 (tie: ABC first), BC 12, ... ABC takes persons 1 and 2;
    their overlapping windows go; BCD, BC, ... keep person 3 only and are dropped; D keeps
    persons 1 (its last visit) and 3 and is published."""
    a, b, c, d = 1, 2, 3, 4
    trips = [(1, [a, b, c, d]), (2, [a, b, c]), (3, [b, c, d])]
    result = nonoverlapping_trajectory_groups(*make_sequences(trips), k=2, seed=seed)
    t1, t2, t3 = traj_ids(3)
    assert assignment_rows(result) == [((a, b, c), t1, 1, 0, 3), ((a, b, c), t2, 2, 0, 3),
                                       ((d,), t1, 1, 3, 4), ((d,), t3, 3, 2, 3)]
    assert as_dict(result.groups) == {(d,): (2, 2), (a, b, c): (2, 2)}


@pytest.mark.parametrize("seed", range(6))
def test_score_ties_go_to_the_longer_sequence(seed: int) -> None:
    """k = 2: A (8 persons, score 8) ties with AB (2 persons, 2 * 2^2 = 8). AB goes first and
    takes persons 1 and 2 whatever the seed; had A gone first, it would take them at random."""
    a, b = 1, 2
    trips = [(1, [a, b]), (2, [a, b])] + [(p, [a]) for p in range(3, 9)]
    result = nonoverlapping_trajectory_groups(*make_sequences(trips), k=2, seed=seed)
    assert as_dict(result.groups) == {(a,): (6, 6), (a, b): (2, 2)}


def test_eq_2_prefers_length() -> None:
    assert group_score(np.array([3, 2, 100]), np.array([2, 3, 1])).tolist() == [12, 18, 100]


# --- overlapping: brute force ---------------------------------------------------------------


@settings(max_examples=80, deadline=None)
@given(trips=trips_strategy, k=st.integers(1, 4))
def test_overlapping_equals_brute_force(trips: Trips, k: int) -> None:
    groups = overlapping_trajectory_groups(*make_sequences(trips), k=k)
    assert as_dict(groups) == brute_overlapping(trips, k)
    keys = [(int(n), tuple(groups.sequence(i).tolist()))
            for i, n in enumerate(groups.length)]
    assert keys == sorted(keys)  # by length, then lexicographic
    assert (groups.n_persons >= k).all()


def test_overlapping_on_long_shared_sequences_matches_brute_force() -> None:
    rng = np.random.default_rng(3)
    base = rng.integers(0, 5, 40).tolist()
    trips = [(int(p), base[int(s):int(s) + int(n)]) for p, s, n in
             zip(rng.integers(0, 6, 25), rng.integers(0, 10, 25), rng.integers(5, 30, 25),
                 strict=True)]
    for k in (1, 2, 3, 6):
        assert as_dict(overlapping_trajectory_groups(*make_sequences(trips), k)) == \
            brute_overlapping(trips, k)


def test_window_sort_falls_back_exactly_when_keys_do_not_pack() -> None:
    key = np.array([2**62, 5, 2**62, 5, 7])
    pos = np.array([4, 3, 0, 1, 2])
    skey, spos = _sorted_windows(key, pos, 5)
    assert skey.tolist() == [5, 5, 7, 2**62, 2**62]
    assert spos.tolist() == [1, 3, 2, 0, 4]
    skey, spos = _sorted_windows(key % 8, pos, 5)  # the packed path
    assert list(zip(skey.tolist(), spos.tolist(), strict=True)) == sorted(
        zip((key % 8).tolist(), pos.tolist(), strict=True))


# --- nonoverlapping: reference and privacy properties ---------------------------------------


def check_nonoverlapping(trips: Trips, result: NonoverlappingGroups, k: int) -> None:
    """Every group >= k individuals; ranges spell the group; no trajectory counted twice in
    overlapping ranges or twice in a group; published counts match the assignment."""
    by_tid = dict(zip(traj_ids(len(trips)), trips, strict=True))
    rows = assignment_rows(result)
    persons: dict[tuple, set[int]] = defaultdict(set)
    trajs: dict[tuple, list[int]] = defaultdict(list)
    ranges: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for seq, tid, p, start, stop in rows:
        assert by_tid[tid][0] == p
        assert tuple(by_tid[tid][1][start:stop]) == seq
        persons[seq].add(p)
        trajs[seq].append(tid)
        ranges[tid].append((start, stop))
    for spans in ranges.values():
        spans.sort()
        assert all(a[1] <= b[0] for a, b in pairwise(spans))
    assert all(len(t) == len(set(t)) for t in trajs.values())
    assert all(len(p) >= k for p in persons.values())
    assert as_dict(result.groups) == {s: (len(persons[s]), len(trajs[s])) for s in persons}


@settings(max_examples=60, deadline=None)
@given(trips=trips_strategy, k=st.integers(1, 3), seed=st.integers(0, 2**32))
def test_nonoverlapping_equals_reference_and_is_private(trips: Trips, k: int,
                                                         seed: int) -> None:
    result = nonoverlapping_trajectory_groups(*make_sequences(trips), k=k, seed=seed)
    assert assignment_rows(result) == reference_nonoverlapping(trips, k, seed)
    check_nonoverlapping(trips, result, k)
    assert set(as_dict(result.groups)) <= set(brute_overlapping(trips, k))


class CountingGenerator(np.random.Generator):
    """A Generator that counts its permutations (the greedy's draws of a whole order)."""

    permutations = 0

    def permutation(self, x, axis=0):  # type: ignore[no-untyped-def]
        self.permutations += 1
        return super().permutation(x, axis)


@pytest.mark.parametrize("seed", range(8))
def test_nonoverlapping_equals_reference_on_large_groups_of_few_persons(seed: int) -> None:
    """Groups far larger than 4k, most of their windows one person's: the greedy draws a
    prefix of the random order first and the rest only when the prefix holds too few
    persons, and both must pick what the reference picks."""
    rng = np.random.default_rng(seed)
    trips = [(int(rng.integers(0, 6)), rng.integers(0, 3, rng.integers(1, 6)).tolist())
             for _ in range(70)]
    k = 2 + seed % 2
    result = nonoverlapping_trajectory_groups(*make_sequences(trips), k=k, seed=seed)
    assert assignment_rows(result) == reference_nonoverlapping(trips, k, seed)
    check_nonoverlapping(trips, result, k)


@pytest.mark.parametrize("block", [1, 3, 50])
def test_blocks_of_candidates_give_the_reference_groups(
        block: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Candidates are unpacked, their (group, person) pairs numbered and the common
    groups' candidates built a block at a time; blocks smaller than one group, of a few
    groups and of all of them give the same moves and common groups."""
    trips = random_trips(3, n=120, n_places=4)
    pairs = [(0, 1), (1, 2), (3, 0)]
    monkeypatch.setattr(trajectory_groups, "BLOCK", block)
    for k, seed in ((2, 5), (3, 6)):
        arrays = make_sequences(trips)
        result = nonoverlapping_trajectory_groups(*arrays, k=k, seed=seed)
        assert assignment_rows(result) == reference_nonoverlapping(trips, k, seed)
        check_nonoverlapping(trips, result, k)
        od = origin_destination_groups(*arrays, result, k, np.array(pairs), seed=seed)
        assert od.group.size and od_rows(od) == reference_od(trips, result, k, pairs, seed)


def test_a_pick_is_each_person_s_first_in_a_uniformly_random_order() -> None:
    """One group: person 0 has 40 windows, persons 1-4 one each; k = 2. In a uniformly
    random order of the 44, person 1 is among the first two persons with probability
    1/44 + (40/44)(1/4) + (3/44)(1/43) = 0.2516. The greedy draws 8 of the order first and
    the rest only when those 8 are all person 0's (about half the picks), so both draws
    are used here."""
    person = np.r_[np.zeros(40, np.int64), np.arange(1, 5)]
    size = person.size
    zeros = np.zeros(size, np.int64)
    c = _Candidates(group=zeros, traj=np.arange(size), start=zeros, traj_person=person,
                    group_length=np.ones(1, np.int64))
    trials = 4000
    rngs = [CountingGenerator(np.random.PCG64(s)) for s in range(trials)]
    picks = [_Pool(c, 1, size).pick(0, 2, rng) for rng in rngs]
    assert 0.3 < sum(rng.permutations for rng in rngs) / trials < 0.6  # C(40,8)/C(44,8)
    assert all(p.size == 2 and len(set(person[p].tolist())) == 2 for p in picks)
    share = np.bincount(np.concatenate([person[p] for p in picks]), minlength=5) / trials
    exact = 1 / 44 + 40 / 44 / 4 + 3 / 44 / 43
    assert share[0] == pytest.approx(1 - 4 / 44 * 3 / 43, abs=0.01)
    assert np.abs(share[1:] - exact).max() < 4 * np.sqrt(exact * (1 - exact) / trials)


def random_trips(seed: int, n: int = 40, n_places: int = 5) -> Trips:
    rng = np.random.default_rng(seed)
    return [(int(rng.integers(0, n // 2)), rng.integers(0, n_places,
                                                        rng.integers(1, 8)).tolist())
            for _ in range(n)]


def test_nonoverlapping_is_deterministic_under_a_seed_and_uses_it() -> None:
    arrays = make_sequences(random_trips(0))
    runs = [assignment_rows(nonoverlapping_trajectory_groups(*arrays, k=3, seed=s))
            for s in (7, 7, 8, 9, 10)]
    assert runs[0] == runs[1]
    assert any(r != runs[0] for r in runs[2:])
    generator = nonoverlapping_trajectory_groups(*arrays, k=3,
                                                 seed=np.random.default_rng(7))
    assert assignment_rows(generator) == runs[0]


def test_nonoverlapping_larger_random_input_is_private() -> None:
    trips = random_trips(1, n=300, n_places=6)
    result = nonoverlapping_trajectory_groups(*make_sequences(trips), k=4, seed=1)
    assert result.groups.n_groups > 0
    check_nonoverlapping(trips, result, 4)


def test_nothing_frequent_publishes_nothing() -> None:
    arrays = make_sequences([(0, [1, 2]), (1, [3, 4])])
    assert overlapping_trajectory_groups(*arrays, k=2).n_groups == 0
    result = nonoverlapping_trajectory_groups(*arrays, k=2)
    assert result.groups.n_groups == 0 and result.assignment.traj.size == 0
    od = origin_destination_groups(*arrays, result, 2, np.zeros((0, 2), np.int64))
    assert od.group.size == 0 and od.member_traj.size == 0


# --- origin-destination groups --------------------------------------------------------------


def test_origin_destination_hand_example() -> None:
    """k = 2: persons 1-4 share the route 7-8 and start at 1, 2, 3 and 5, on a path
    1 - 2 - 3. N[1], N[2], N[3] all score one origin per place (2/2, 3/3, 2/2): the tie goes
    to the smaller neighbourhood, then the lower centre, so N[1] = {1, 2} takes persons 1 and
    2, and person 3 alone can no longer reach k. All four end at 8: N[8] = {8}."""
    trips = [(1, [1, 7, 8]), (2, [2, 7, 8]), (3, [3, 7, 8]), (4, [5, 7, 8])]
    arrays = make_sequences(trips)
    result = nonoverlapping_trajectory_groups(*arrays, k=2, seed=0)
    assert as_dict(result.groups) == {(7, 8): (4, 4)}
    od = origin_destination_groups(*arrays, result, 2, np.array([[1, 2], [3, 2]]))
    assert od.centre.tolist() == [1, 8] and od.is_origin.tolist() == [True, False]
    assert od.node_set(0).tolist() == [1, 2] and od.node_set(1).tolist() == [8]
    assert od.n_persons.tolist() == [2, 4] and od.n_trajectories.tolist() == [2, 4]
    t1, t2 = traj_ids(2)
    assert od.member_traj[od.member_group == 0].tolist() == [t1, t2]


pairs_strategy = st.lists(st.tuples(st.integers(-1, 3), st.integers(-1, 3)), max_size=5)


@settings(max_examples=50, deadline=None)
@given(trips=trips_strategy, k=st.integers(1, 3), pairs=pairs_strategy,
       seed=st.integers(0, 2**32))
def test_origin_destination_equals_reference_and_is_private(
        trips: Trips, k: int, pairs: list[tuple[int, int]], seed: int) -> None:
    arrays = make_sequences(trips)
    result = nonoverlapping_trajectory_groups(*arrays, k=k, seed=seed)
    od = origin_destination_groups(*arrays, result, k, np.array(pairs, np.int64).reshape(-1, 2),
                                   seed=seed)
    rows = od_rows(od)
    assert rows == reference_od(trips, result, k, pairs, seed)
    by_tid = dict(zip(traj_ids(len(trips)), trips, strict=True))
    in_group = set(zip(result.assignment.group.tolist(), result.assignment.traj.tolist(),
                       strict=True))
    for g, origin, centre, tid, _ in rows:
        assert (g, tid) in in_group
        end = by_tid[tid][1][0 if origin else -1]
        assert end in closed_neighbourhood(centre, pairs)
    for i in range(od.group.size):
        assert od.node_set(i).tolist() == closed_neighbourhood(int(od.centre[i]), pairs)
        members = od.member_group == i
        assert len(set(od.member_person[members].tolist())) == od.n_persons[i] >= k
        assert members.sum() == od.n_trajectories[i]
    for origin in (True, False):
        tids = [tid for _, o, _, tid, _ in rows if o == origin]
        assert len(tids) == len(set(tids))  # one origin and one destination group at most


# --- interval filter properties -------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(k=st.integers(1, 40), size=st.integers(1, 40), extra=st.lists(
    st.integers(0, 500), min_size=1, max_size=20))
def test_interval_holds_the_count_and_matches_the_verifier(k: int, size: int,
                                                           extra: list[int]) -> None:
    counts = k + np.array(extra)
    iv = interval_filter(counts, k, size)
    assert iv.contains(counts).all()
    assert (iv.n_max - iv.n_min == size - 1).all()
    assert ((iv.n_min - k) % size == 0).all()
    assert iv.n_min.tolist() == [interval_count(int(n), k, size) for n in counts]


@settings(max_examples=30, deadline=None)
@given(trips=trips_strategy, k=st.integers(1, 3), half=st.booleans())
def test_published_overlapping_counts_lie_in_their_intervals(trips: Trips, k: int,
                                                             half: bool) -> None:
    groups = overlapping_trajectory_groups(*make_sequences(trips), k=k)
    for counts in (groups.n_trajectories, groups.n_persons):
        assert interval_filter(counts, k, thesis_interval_size(k, half)).contains(counts).all()


# --- bad inputs -----------------------------------------------------------------------------

GOOD = make_sequences([(1, [1, 2]), (2, [1, 2])])


@pytest.mark.parametrize(("traj", "person", "place"), [
    (GOOD[0], GOOD[1][:-1], GOOD[2]),  # lengths differ
    (GOOD[0], GOOD[1], GOOD[2].astype(float)),  # float places
    (GOOD[0].astype(bool), GOOD[1], GOOD[2]),  # bool ids
    (GOOD[0].reshape(2, 2), GOOD[1].reshape(2, 2), GOOD[2].reshape(2, 2)),  # 2-d
    (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)),  # empty
    (GOOD[0][::-1], GOOD[1][::-1], GOOD[2]),  # not sorted by traj
    (GOOD[0], np.array([1, 3, 2, 2]), GOOD[2]),  # two persons in one trajectory
], ids=["lengths", "float", "bool", "2d", "empty", "unsorted", "two-persons"])
@pytest.mark.parametrize("anonymize", [
    lambda t, p, x: overlapping_trajectory_groups(t, p, x, 2),
    lambda t, p, x: nonoverlapping_trajectory_groups(t, p, x, 2),
    lambda t, p, x: origin_destination_groups(
        t, p, x, nonoverlapping_trajectory_groups(*GOOD, 2), 2, np.zeros((0, 2), np.int64)),
], ids=["overlapping", "nonoverlapping", "od"])
def test_bad_sequences_raise(anonymize, traj, person, place) -> None:
    with pytest.raises(InputError):
        anonymize(traj, person, place)


@pytest.mark.parametrize("k", [0, -1, 1.5, True, "2"])
def test_bad_k_raises(k) -> None:
    with pytest.raises(InputError, match="k must"):
        overlapping_trajectory_groups(*GOOD, k)
    with pytest.raises(InputError, match="k must"):
        nonoverlapping_trajectory_groups(*GOOD, k)


@pytest.mark.parametrize("seed", [-1, 1.0, "x", True])
def test_bad_seed_raises(seed) -> None:
    with pytest.raises(InputError, match="seed"):
        nonoverlapping_trajectory_groups(*GOOD, 2, seed=seed)


@pytest.mark.parametrize("neighbours", [np.array([1, 2]), np.array([[1.0, 2.0]]),
                                        np.array([[1, 2, 3]])])
def test_bad_neighbours_raise(neighbours: np.ndarray) -> None:
    result = nonoverlapping_trajectory_groups(*GOOD, 2)
    with pytest.raises(InputError, match="neighbours"):
        origin_destination_groups(*GOOD, result, 2, neighbours)


def test_groups_from_other_sequences_raise() -> None:
    result = nonoverlapping_trajectory_groups(*GOOD, 2)
    other = make_sequences([(1, [1, 3]), (2, [1, 3])])
    with pytest.raises(InputError, match="groups do not come"):
        origin_destination_groups(*other, result, 2, np.zeros((0, 2), np.int64))


@pytest.mark.parametrize(("counts", "k", "size"), [
    (np.array([9, 12]), 10, 5),  # below k: never published
    (np.array([12.0]), 10, 5),  # not a count
    (np.array([12]), 0, 5),
    (np.array([12]), 10, 0),
    (np.array([12]), 10, True),
])
def test_bad_interval_filter_input_raises(counts: np.ndarray, k: int, size: int) -> None:
    with pytest.raises(InputError):
        interval_filter(counts, k, size)
