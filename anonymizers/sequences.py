"""Integer sequences stored end to end (cell sequences read in bulk), as one sequence type.

Reading millions of cell sequences as Python lists costs an object per cell; stored end
to end they are two arrays. The prefix-tree methods and the linking attack take the
arrays as they are; anything else sees a sequence of lists.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import overload

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from anonymizers.errors import InputError

__all__ = ["ConcatenatedSequences", "int_lists", "ranges", "relabel", "sized_runs"]


class ConcatenatedSequences(Sequence[list[int]]):
    """Integer sequences stored end to end: sequence ``i`` is ``flat[starts[i]:starts[i + 1]]``.

    What a bulk read of many sequences gives without a Python object per element; the
    attack's index takes the arrays as they are, and anything else sees a sequence of lists.

    Parameters
    ----------
    flat : np.ndarray of int
        Every sequence's elements, one sequence after the other.
    starts : np.ndarray of int, shape (n + 1,)
        Where each sequence starts in ``flat``, then ``len(flat)``; non-decreasing.
    """

    def __init__(self, flat: np.ndarray, starts: np.ndarray) -> None:
        values = np.asarray(flat)
        if values.size == 0:
            values = values.astype(np.int64)
        if not np.issubdtype(values.dtype, np.integer):
            raise InputError(f"the elements must be integers, got {values.dtype}")
        self.flat = values.reshape(-1)  # its integer type kept: int32 halves 16M cells
        self.starts = np.asarray(starts, dtype=np.int64)
        if self.starts.size == 0 or self.starts[-1] != self.flat.size:
            raise InputError("starts must end with the number of elements of flat")

    def __len__(self) -> int:
        return int(self.starts.size - 1)

    @overload
    def __getitem__(self, index: int) -> list[int]: ...

    @overload
    def __getitem__(self, index: slice) -> list[list[int]]: ...

    def __getitem__(self, index: int | slice) -> list[int] | list[list[int]]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        i = range(len(self))[index]  # negative indices and IndexError as for a list
        return self.flat[self.starts[i]:self.starts[i + 1]].tolist()  # type: ignore[no-any-return]

    def __iter__(self) -> Iterator[list[int]]:
        for start, stop in zip(self.starts[:-1].tolist(), self.starts[1:].tolist(), strict=True):
            yield self.flat[start:stop].tolist()

    def lengths(self) -> np.ndarray:
        """Number of elements of each sequence."""
        return np.diff(self.starts)


def ranges(starts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """The positions ``starts[i] .. starts[i] + sizes[i] - 1`` of every range, one range
    after another, without a Python loop.

    Examples
    --------
    >>> ranges(np.array([5, 0, 9]), np.array([2, 0, 3])).tolist()
    [5, 6, 9, 10, 11]
    """
    # Each range's start repeated over its size, plus the position within it.
    return np.repeat(starts - (np.cumsum(sizes) - sizes), sizes) + np.arange(int(sizes.sum()))


def sized_runs(sizes: np.ndarray, budget: int) -> Iterator[tuple[int, int]]:
    """Consecutive ``[start, stop)`` runs of items whose sizes add up to at most ``budget``
    (a larger item alone): work over a few million expanded items at a time.

    Examples
    --------
    >>> list(sized_runs(np.array([2, 2, 5, 1, 1]), 4))
    [(0, 2), (2, 3), (3, 5)]
    """
    bound = np.cumsum(sizes)
    start = 0
    while start < len(sizes):
        base = bound[start - 1] if start else 0
        stop = max(int(np.searchsorted(bound, base + budget, side="right")), start + 1)
        yield start, stop
        start = stop


def int_lists(texts: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Integers separated by single spaces, one list per string ('' or null: an empty list),
    as (length of each list, all integers one list after another); parsed in Arrow, with no
    Python object per list.

    Examples
    --------
    >>> lengths, items = int_lists(pa.array(["3 1", "", None, "7"]))
    >>> lengths.tolist(), items.tolist()
    ([2, 0, 0, 1], [3, 1, 7])
    """
    parts = pc.split_pattern(texts, " ")  # '' -> [''], null -> null
    words = pc.list_flatten(parts)
    kept = pc.not_equal(words, "").to_numpy(zero_copy_only=False)
    owner = pc.list_parent_indices(parts).to_numpy(zero_copy_only=False)
    lengths = np.bincount(owner[kept], minlength=len(texts)).astype(np.int64)
    return lengths, pc.cast(words.filter(pa.array(kept)), pa.int64()).to_numpy(
        zero_copy_only=False)


def relabel(sequences: ConcatenatedSequences, labels: np.ndarray, values: np.ndarray
            ) -> tuple[ConcatenatedSequences, int]:
    """Each element ``labels[i]`` of the sequences replaced by ``values[i]`` (``labels``
    ascending); elements that are no label are left out. Returns the relabelled
    sequences and how many elements were left out.

    Examples
    --------
    >>> found, left_out = relabel(ConcatenatedSequences(np.array([1, 2, 3, 9]),
    ...                                                 np.array([0, 3, 3, 4])),
    ...                           np.array([1, 3]), np.array([10, 30]))
    >>> [list(s) for s in found], left_out
    ([[10, 30], [], []], 2)
    """
    flat = sequences.flat
    if not labels.size:
        return ConcatenatedSequences(flat[:0], np.zeros_like(sequences.starts)), int(flat.size)
    at = np.minimum(np.searchsorted(labels, flat), labels.size - 1)
    known = labels[at] == flat
    kept_before = np.r_[0, np.cumsum(known)]
    return (ConcatenatedSequences(values[at[known]], kept_before[sequences.starts]),
            int(flat.size - kept_before[-1]))

