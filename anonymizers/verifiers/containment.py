"""Count, for published cell sequences, the distinct owners whose sequences contain them.

Written independently of the prefix-tree anonymizers on purpose: it shares no code with
them, so a bug there is not repeated here. Containment is seed 000 Definition 4: S is
contained in T if S's cells appear in T in order, not necessarily consecutively.

The derived sequences are held as flat numpy arrays (one item per visit; positions and
sequence numbers as int32), with each cell's positions in order: a city of 25M fixes
has millions of sequences, and a Python tuple per sequence with a Python set per cell
took gigabytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from anonymizers.counting import DistinctCounter
from anonymizers.processes import map_forked

__all__ = ["Shortfall", "SupportIndex", "is_subsequence", "shared_prefix_length"]


def is_subsequence(pattern: Sequence[int], sequence: Sequence[int]) -> bool:
    """True if ``pattern`` occurs in ``sequence`` in order (gaps allowed)."""
    remaining = iter(sequence)
    return all(any(cell == item for item in remaining) for cell in pattern)


@dataclass(frozen=True)
class Shortfall:
    """A published sequence with fewer than k supporting owners."""

    pattern: tuple[int, ...]
    support: int


class SupportIndex:
    """The derived input sequences, and the distinct owners holding any pattern.

    Where a sequence first holds a pattern's cells in order (greedy leftmost matching,
    which decides containment) is the match of the pattern's prefix carried one cell
    further: the next position of that cell after it, one binary search in the cell's
    sorted positions for all sequences at once. Patterns in lexicographic order share
    their longest common prefix with the one before, so with the matches of that prefix
    kept each pattern only matches its own remaining cells (:meth:`supports`). A release's
    sequences share prefixes (they come from a prefix tree), so checking them all costs
    about one pass over the matched sequences per node of that tree; testing each alone
    cost a pass over a posting list per pattern, which grows with the square of the input.

    Parameters
    ----------
    cells : array of int
        The visits of all sequences, one after another.
    sequence_of : array of int
        The sequence (0 .. n-1, non-decreasing) of each visit.
    owners : array of int
        The owner of each sequence.
    """

    def __init__(self, cells: np.ndarray, sequence_of: np.ndarray, owners: np.ndarray) -> None:
        cells = np.asarray(cells, dtype=np.int64)
        self.sequence_of = np.asarray(sequence_of, dtype=np.int32)
        self.owners = np.asarray(owners, dtype=np.int64)
        # Owners numbered 0 .. n-1, so that a pattern's distinct ones are counted in a pass.
        owner_codes, self._owner_of = np.unique(self.owners, return_inverse=True)
        self._distinct = DistinctCounter(owner_codes.size)
        self.ends = np.searchsorted(self.sequence_of, np.arange(1, self.owners.size + 1),
                                    side="left").astype(np.int64)
        by_cell = np.argsort(cells, kind="stable")  # positions grouped by cell, increasing
        # Where each cell's run starts in the sorted cells (np.unique would sort them again:
        # two more arrays of every visit, 16 million at 25M fixes).
        grouped = cells[by_cell]
        starts = np.flatnonzero(np.concatenate(([True], grouped[1:] != grouped[:-1]))) \
            if cells.size else np.zeros(0, dtype=np.int64)
        self.cells = grouped[starts]
        del grouped
        self.by_cell = by_cell.astype(np.int32 if cells.size < 2**31 else np.int64)
        self.cell_starts = np.append(starts, cells.size)

    @classmethod
    def of_sequences(cls, sequences: Sequence[Sequence[int]],
                     owners: Sequence[int]) -> SupportIndex:
        lengths = np.fromiter(map(len, sequences), dtype=np.int64, count=len(sequences))
        flat = np.fromiter((c for s in sequences for c in s), dtype=np.int64,
                           count=int(lengths.sum()))
        return cls(flat, np.repeat(np.arange(lengths.size), lengths), np.asarray(owners))

    def support(self, pattern: Sequence[int], stop_at: int | None = None) -> int:
        """Distinct owners with a sequence containing ``pattern`` (at most ``stop_at``)."""
        found = self.supports([tuple(pattern)])[0][1]
        return found if stop_at is None else min(found, stop_at)

    def shortfalls(self, patterns: Sequence[Sequence[int]], k: int,
                   processes: int = 1) -> list[Shortfall]:
        """Every distinct pattern whose support is below k (on up to ``processes``
        forked processes)."""
        ordered = sorted({tuple(p) for p in patterns})
        return [Shortfall(pattern, support)
                for pattern, support in self.supports(ordered, processes) if support < k]

    def supports(self, patterns: Sequence[tuple[int, ...]], processes: int = 1
                 ) -> list[tuple[tuple[int, ...], int]]:
        """(pattern, distinct owners of a sequence containing it), in the given order
        (sorted patterns share the most work). With ``processes`` > 1, runs of patterns
        with the same first cell (subtrees of the patterns' prefix tree, which share no
        match) are spread over forked processes that inherit the index (25M fixes: 238k
        published sequences took 43 s on one core)."""
        if processes <= 1 or len(patterns) < 2 * FORK_FROM:
            return self._supports(patterns)
        batches = [patterns[run] for run in _first_cell_runs(patterns, BATCHES_PER_PROCESS
                                                             * processes)]
        return [found for part in map_forked(SupportIndex._supports, self, batches, processes)
                for found in part]

    def _supports(self, patterns: Sequence[tuple[int, ...]]
                  ) -> list[tuple[tuple[int, ...], int]]:
        matches: list[_Matches] = []  # matches[d]: the sequences after the pattern's d+1 cells
        previous: tuple[int, ...] = ()
        found = []
        for pattern in patterns:
            shared = shared_prefix_length(pattern, previous)
            del matches[shared:]
            for depth in range(shared, len(pattern)):
                matches.append(self._first(pattern[0]) if depth == 0
                               else self._next(matches[-1], pattern[depth]))
            previous = pattern
            owners = matches[-1].owner if pattern else np.zeros(0, dtype=np.int64)
            found.append((pattern, self._distinct.count(owners)))
        return found

    def _positions(self, cell: int) -> np.ndarray:
        at = int(np.searchsorted(self.cells, cell))
        if at == self.cells.size or self.cells[at] != cell:
            return self.by_cell[:0]
        return self.by_cell[self.cell_starts[at]:self.cell_starts[at + 1]]

    def _first(self, cell: int) -> _Matches:
        """Each sequence's first ``cell``."""
        positions = self._positions(cell)
        sequences = self.sequence_of[positions]
        first = np.r_[True, sequences[1:] != sequences[:-1]] if positions.size else \
            np.zeros(0, dtype=bool)
        sequences = sequences[first]
        return _Matches(positions[first], self.ends[sequences], self._owner_of[sequences])

    def _next(self, matched: _Matches, cell: int) -> _Matches:
        """Of the sequences ``matched``, where each next holds ``cell`` (the sequences that
        do not are dropped)."""
        positions = self._positions(cell)
        if positions.size == 0 or matched.position.size == 0:
            return matched.where(np.zeros(matched.position.size, dtype=bool), positions[:0])
        # A binary search for each of the fewer: the cell's positions or the matches.
        if positions.size < matched.position.size:
            return self._next_from_positions(matched, positions)
        return self._next_from_matches(matched, positions)

    @staticmethod
    def _next_from_matches(matched: _Matches, positions: np.ndarray) -> _Matches:
        """:meth:`_next` from the matches: each takes the first of the cell's ``positions``
        after it, if that lies in its own sequence."""
        after = np.searchsorted(positions, matched.position, side="right")
        found = positions[np.minimum(after, positions.size - 1)]
        keep = (after < positions.size) & (found < matched.limit)
        return matched.where(keep, found[keep])

    @staticmethod
    def _next_from_positions(matched: _Matches, positions: np.ndarray) -> _Matches:
        """:meth:`_next` from the cell's ``positions`` (fewer than the matches): a position
        goes to the last match before it, and a match takes the first position that comes
        to it, if that lies in its own sequence. A match that none comes to has no
        position of the cell before the next match, which lies in a later sequence: it has
        none in its own."""
        before = np.searchsorted(matched.position, positions, side="left") - 1
        first = (before >= 0) & np.r_[True, before[1:] != before[:-1]]
        taken, found = before[first], positions[first]
        keep = found < matched.limit[taken]
        chosen = np.zeros(matched.position.size, dtype=bool)
        chosen[taken[keep]] = True
        return matched.where(chosen, found[keep])


class _Matches(NamedTuple):
    """Sequences matched up to some cells: where each match ends, where its sequence ends
    and its owner's number, carried along: looked up at each step, they were two random
    reads of visit-sized tables per match (25M fixes: the published sequences' support
    check 40 -> 32 s on two processes, py-spy)."""

    position: np.ndarray
    limit: np.ndarray
    owner: np.ndarray

    def where(self, keep: np.ndarray, position: np.ndarray) -> _Matches:
        """The matches ``keep`` selects, now ending at ``position`` (one per kept match)."""
        return _Matches(position, self.limit[keep], self.owner[keep])


# Fewer patterns than twice this are matched here, with no fork; a process is given about
# BATCHES_PER_PROCESS runs of them, so that uneven runs even out.
FORK_FROM = 1_000
BATCHES_PER_PROCESS = 8


def _first_cell_runs(patterns: Sequence[tuple[int, ...]], batches: int) -> list[slice]:
    """Slices of ``patterns`` (sorted) of about ``len(patterns) / batches`` patterns each,
    cut only where the first cell changes."""
    size = max(1, len(patterns) // batches)
    runs, start = [], 0
    for i in range(1, len(patterns)):
        if i - start >= size and patterns[i][:1] != patterns[i - 1][:1]:
            runs.append(slice(start, i))
            start = i
    runs.append(slice(start, len(patterns)))
    return runs


def shared_prefix_length(a: Sequence[int], b: Sequence[int]) -> int:
    """How many leading items ``a`` and ``b`` have in common."""
    shared = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        shared += 1
    return shared
