"""The planner's moves kept between steps (anonymizers.families.generalization.moves)."""

from __future__ import annotations

import numpy as np
import pytest

from anonymizers.families.generalization.moves import TrajectoryMoves


def make_moves(rows: list[tuple[int, int, int, int]]) -> TrajectoryMoves:
    """(trajectory, person, from, to) rows."""
    return TrajectoryMoves.from_arrays(*(np.array(column, dtype=np.int64).reshape(-1)
                                         for column in zip(*rows, strict=True))
                                       if rows else [[]] * 4)


def counted(moves: TrajectoryMoves) -> dict[tuple[int, int], int]:
    counts = moves.counts()
    return {(int(a), int(b)): int(n) for a, b, n in
            zip(counts.from_cell, counts.to_cell, counts.persons, strict=True)}


def test_a_person_counts_once_however_many_trajectories_and_moves() -> None:
    moves = make_moves([(1, 7, 10, 11), (1, 7, 10, 11), (2, 7, 10, 11), (3, 8, 10, 11),
                        (3, 8, 11, 10)])
    assert counted(moves) == {(10, 11): 2, (11, 10): 1}


def test_replacing_a_trajectory_drops_all_its_moves_even_when_it_has_none_left() -> None:
    moves = make_moves([(1, 7, 10, 11), (2, 8, 10, 11), (2, 8, 11, 12), (3, 9, 12, 13)])
    moves.replace([2, 3], [3], [9], [13], [12])
    assert counted(moves) == {(10, 11): 1, (13, 12): 1}
    assert sorted(moves.trajectory.tolist()) == [1, 3]


@pytest.mark.parametrize("rows", [[], [(1, 7, 10, 11)]], ids=["no-moves", "one-move"])
def test_flows_between_pairs_are_zero_where_nobody_moved(rows) -> None:
    counts = make_moves(rows).counts()
    found = counts.between(np.array([10, 11, 3]), np.array([11, 10, 4]))
    assert found.tolist() == ([1, 0, 0] if rows else [0, 0, 0])
    assert counts.between(np.array([], dtype=np.int64), np.array([], dtype=np.int64)).size == 0


def test_flows_between_match_the_counts_on_random_moves() -> None:
    rng = np.random.default_rng(5)
    rows = [tuple(int(v) for v in row) for row in
            rng.integers([0, 0, 0, 0], [50, 20, 30, 30], size=(2000, 4))]
    rows = [row for row in rows if row[2] != row[3]]
    moves = make_moves(rows)
    brute: dict[tuple[int, int], set[int]] = {}
    for _, person, a, b in rows:
        brute.setdefault((a, b), set()).add(person)
    assert counted(moves) == {pair: len(people) for pair, people in brute.items()}
    a, b = rng.integers(0, 32, size=(2, 500))
    assert moves.counts().between(a, b).tolist() == [
        len(brute.get((int(x), int(y)), ())) for x, y in zip(a, b, strict=True)]


def test_ids_too_large_for_one_key_per_move_are_refused_not_wrapped() -> None:
    big = np.iinfo(np.int32).max
    with pytest.raises(OverflowError, match="64-bit key"):
        make_moves([(1, big, big, big - 1)]).counts()
