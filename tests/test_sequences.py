"""Tests for integer sequences stored end to end (anonymizers.sequences)."""

from __future__ import annotations

import numpy as np
import pytest

from anonymizers.errors import InputError
from anonymizers.sequences import ConcatenatedSequences, ranges


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint16])
def test_the_integer_type_of_the_elements_is_kept(dtype) -> None:
    # 16 million cells take 64 MB as int32: a read of that type is not doubled.
    sequences = ConcatenatedSequences(np.array([4, 1, 5], dtype=dtype), np.array([0, 1, 3]))
    assert sequences.flat.dtype == dtype and list(sequences) == [[4], [1, 5]]


def test_elements_that_are_not_integers_are_rejected() -> None:
    with pytest.raises(InputError, match="integers"):
        ConcatenatedSequences(np.array([1.5, 2.0]), np.array([0, 2]))


def test_no_sequences_and_empty_sequences() -> None:
    assert len(ConcatenatedSequences(np.array([]), np.array([0]))) == 0
    empties = ConcatenatedSequences(np.array([], dtype=np.int32), np.array([0, 0, 0]))
    assert list(empties) == [[], []] and empties.lengths().tolist() == [0, 0]


def test_ranges_lists_every_position_of_every_range_in_order() -> None:
    starts, sizes = np.array([7, 0, 3, 3]), np.array([2, 0, 3, 1])
    expected = [p for start, size in zip(starts, sizes, strict=True)
                for p in range(start, start + size)]
    assert ranges(starts, sizes).tolist() == expected
    assert ranges(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)).size == 0
