"""The persons moving between cells (anonymizers.families.generalization.moves)."""

from __future__ import annotations

import numpy as np
import pytest

from anonymizers.families.generalization.moves import MoveCounts, count_moves


def make_counts(rows: list[tuple[int, int, int]]) -> MoveCounts:
    """(person, from, to) rows."""
    return count_moves(*(np.array(column, dtype=np.int64) for column in zip(*rows, strict=True))
                       if rows else [[]] * 3)


def counted(counts: MoveCounts) -> dict[tuple[int, int], int]:
    return {(int(a), int(b)): int(n) for a, b, n in
            zip(counts.from_cell, counts.to_cell, counts.persons, strict=True)}


def test_a_person_counts_once_however_many_trajectories_and_moves() -> None:
    counts = make_counts([(7, 10, 11), (7, 10, 11), (7, 10, 11), (8, 10, 11), (8, 11, 10)])
    assert counted(counts) == {(10, 11): 2, (11, 10): 1}


@pytest.mark.parametrize("rows", [[], [(7, 10, 11)]], ids=["no-moves", "one-move"])
def test_flows_between_pairs_are_zero_where_nobody_moved(rows) -> None:
    counts = make_counts(rows)
    found = counts.between(np.array([10, 11, 3]), np.array([11, 10, 4]))
    assert found.tolist() == ([1, 0, 0] if rows else [0, 0, 0])
    assert counts.between(np.array([], dtype=np.int64), np.array([], dtype=np.int64)).size == 0


def test_flows_between_match_the_counts_on_random_moves() -> None:
    rng = np.random.default_rng(5)
    rows = [tuple(int(v) for v in row) for row in
            rng.integers([0, 0, 0], [20, 30, 30], size=(2000, 3))]
    rows = [row for row in rows if row[1] != row[2]]
    counts = make_counts(rows)
    brute: dict[tuple[int, int], set[int]] = {}
    for person, a, b in rows:
        brute.setdefault((a, b), set()).add(person)
    assert counted(counts) == {pair: len(people) for pair, people in brute.items()}
    a, b = rng.integers(0, 32, size=(2, 500))
    assert counts.between(a, b).tolist() == [
        len(brute.get((int(x), int(y)), ())) for x, y in zip(a, b, strict=True)]


def test_ids_too_large_for_one_key_per_move_are_refused_not_wrapped() -> None:
    big = np.iinfo(np.int32).max
    with pytest.raises(OverflowError, match="64-bit key"):
        make_counts([(big, big, big - 1)])
