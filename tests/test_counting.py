"""Counts over integer-coded groups (anonymizers/counting.py) against plain Python."""

from __future__ import annotations

import numpy as np
import pytest

from anonymizers.counting import DistinctCounter, distinct_per_group, distinct_values


def test_distinct_counter_equals_a_set_over_many_calls_on_one_counter() -> None:
    """One counter serves many arrays: what earlier arrays left in its slots never counts."""
    rng = np.random.default_rng(5)
    counter = DistinctCounter(50)
    for size in [0, 1, 2, 7, 49, 50, 300, 5_000, 3, 0, 1]:
        values = rng.integers(0, rng.integers(1, 51), size=size)
        assert counter.count(values) == len(set(values.tolist()))


@pytest.mark.parametrize("values", [[0], [0, 0, 0], [4, 3, 2, 1, 0], [4] * 9 + [0]])
def test_distinct_counter_edge_values(values: list[int]) -> None:
    assert DistinctCounter(5).count(np.array(values)) == len(set(values))


def test_distinct_counter_of_no_values() -> None:
    assert DistinctCounter(0).count(np.zeros(0, dtype=np.int64)) == 0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_distinct_per_group_equals_sets_per_group(seed: int) -> None:
    rng = np.random.default_rng(seed)
    group = rng.integers(0, 12, size=400)
    member = rng.integers(-5, 30, size=400)
    expected = [len({m for g, m in zip(group, member, strict=True) if g == i})
                for i in range(15)]
    assert distinct_per_group(group, member, 15).tolist() == expected


def test_distinct_per_group_of_no_rows() -> None:
    assert distinct_per_group(np.zeros(0, np.int64), np.zeros(0, np.int64), 3).tolist() == [0] * 3


@pytest.mark.parametrize("values", [[], [3], [2, 2], [1, 2, 2, 5, 9, 9, 9], [5, 1, 5, 0],
                                    [1, 2, 1]])
def test_distinct_values_equals_np_unique_sorted_or_not(values: list[int]) -> None:
    array = np.array(values, dtype=np.int32)
    found = distinct_values(array)
    assert found.dtype == array.dtype
    np.testing.assert_array_equal(found, np.unique(array))
