"""The attack adapters' own derivations against plain references."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonymizers.families.groups import attack as groups_adapter
from anonymizers.families.groups.attack import spelling_persons


def plain_spelling_persons(groups: list[np.ndarray], sequences: list[np.ndarray],
                           persons: np.ndarray) -> list[np.ndarray]:
    """Every window of every sequence as a tuple, looked up among the groups'."""
    wanted = {tuple(g.tolist()) for g in groups}
    spellers: dict[tuple[int, ...], set[int]] = defaultdict(set)
    for sequence, person in zip(sequences, persons.tolist(), strict=True):
        values = sequence.tolist()
        for length in {len(g) for g in wanted}:
            for start in range(len(values) - length + 1):
                if (window := tuple(values[start:start + length])) in wanted:
                    spellers[window].add(person)
    return [np.array(sorted(spellers[tuple(g.tolist())]), dtype=np.int64) for g in groups]


places = st.lists(st.integers(0, 3), max_size=7).map(lambda v: np.array(v, np.int64))
trips = st.lists(st.tuples(st.integers(0, 9), places), max_size=25)
group_lists = st.lists(st.lists(st.integers(0, 3), min_size=1, max_size=5).map(
    lambda v: np.array(v, np.int64)), max_size=12)


def check(groups: list[np.ndarray], trips: list[tuple[int, np.ndarray]]) -> None:
    sequences = [s for _, s in trips]
    persons = np.array([p for p, _ in trips], np.int64)
    found = spelling_persons(groups, sequences, persons)
    expected = plain_spelling_persons(groups, sequences, persons)
    assert len(found) == len(expected)
    assert all(np.array_equal(a, b) for a, b in zip(found, expected, strict=True))


@settings(max_examples=200, deadline=None)
@given(groups=group_lists, trips=trips)
def test_spelling_persons_are_the_plain_lookup_of_every_window(groups, trips) -> None:
    check(groups, trips)


@settings(max_examples=100, deadline=None)
@given(groups=group_lists, trips=trips)
def test_spelling_persons_are_exact_when_every_hash_collides(groups, trips) -> None:
    """With base 0 a window's hash is its last place: groups and windows of one length
    collide all the time, and only the comparison place by place may decide."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(groups_adapter, "_HASH_BASE", np.uint64(0))
        check(groups, trips)
