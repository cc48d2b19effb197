"""Count, for published cell sequences, the distinct owners whose sequences contain them.

Written independently of the prefix-tree anonymizers on purpose: it shares no code with
them, so a bug there is not repeated here. Containment is seed 000 Definition 4: S is
contained in T if S's cells appear in T in order, not necessarily consecutively.

An inverted index (cell -> ids of sequences holding it) limits the containment test of
one pattern to sequences holding every cell of S, smallest posting list first; counting
stops at k. The published sequences are checked together by :class:`PrefixWalk`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["PrefixWalk", "Shortfall", "SupportIndex", "is_subsequence"]


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
    """The derived input sequences, indexed by the cells they visit."""

    def __init__(self, sequences: Sequence[Sequence[int]], owners: Sequence[int]) -> None:
        self.sequences = [tuple(s) for s in sequences]
        self.owners = [int(owner) for owner in owners]
        postings: dict[int, set[int]] = {}
        for position, sequence in enumerate(self.sequences):
            for cell in sequence:
                postings.setdefault(cell, set()).add(position)
        self.postings = postings

    def support(self, pattern: Sequence[int], stop_at: int | None = None) -> int:
        """Distinct owners with a sequence containing ``pattern`` (stops early at stop_at)."""
        owners: set[int] = set()
        for position in self._candidates(pattern):
            owner = self.owners[position]
            if owner in owners or not is_subsequence(pattern, self.sequences[position]):
                continue
            owners.add(owner)
            if stop_at is not None and len(owners) >= stop_at:
                break
        return len(owners)

    def _candidates(self, pattern: Sequence[int]) -> list[int]:
        """Sequences holding every cell of the pattern, in input order (deterministic)."""
        lists = [self.postings.get(cell) for cell in set(pattern)]
        held = [ids for ids in lists if ids is not None]
        if not held or len(held) < len(lists):
            return []
        # Intersecting from the smallest set costs O(len(smallest)) per step.
        ordered = sorted(held, key=len)
        return sorted(ordered[0].intersection(*ordered[1:]))

    def shortfalls(self, patterns: Sequence[Sequence[int]], k: int) -> list[Shortfall]:
        """Every distinct pattern whose support is below k (:class:`PrefixWalk`)."""
        walk = PrefixWalk(self.sequences, self.owners)
        found = []
        for pattern, support in walk.supports(sorted({tuple(p) for p in patterns})):
            if support < k:
                found.append(Shortfall(pattern, support))
        return found


class PrefixWalk:
    """Supports of many patterns at once, each extending the match of the one before.

    Where each sequence first holds a pattern's cells in order (greedy leftmost matching,
    which decides containment) is the match of its prefix carried one cell further. In
    lexicographic order a pattern shares its longest common prefix with the one before,
    so with the matches of that prefix kept, it only matches its own remaining cells: a
    published set shares prefixes (it comes from a prefix tree), and this costs about one
    pass over the matched sequences per node of that tree. Testing each pattern alone
    costs a pass over a posting list per pattern, which grows with the square of the
    input (published sequences grow with it too).
    """

    def __init__(self, sequences: Sequence[Sequence[int]], owners: Sequence[int]) -> None:
        lengths = np.fromiter(map(len, sequences), dtype=np.int64, count=len(sequences))
        self.ends = np.cumsum(lengths)
        self.sequence_of = np.repeat(np.arange(lengths.size), lengths)
        flat = np.fromiter((c for s in sequences for c in s), dtype=np.int64,
                           count=int(lengths.sum()))
        self.by_cell = np.argsort(flat, kind="stable")  # positions grouped by cell, increasing
        self.cells, self.cell_starts = np.unique(flat[self.by_cell], return_index=True)
        self.cell_starts = np.append(self.cell_starts, flat.size)
        self.owners = np.asarray(owners, dtype=np.int64)

    def _positions(self, cell: int) -> np.ndarray:
        at = int(np.searchsorted(self.cells, cell))
        if at == self.cells.size or self.cells[at] != cell:
            return np.zeros(0, dtype=np.int64)
        return self.by_cell[self.cell_starts[at]:self.cell_starts[at + 1]]

    def _first(self, cell: int) -> np.ndarray:
        """Position of each sequence's first ``cell``."""
        positions = self._positions(cell)
        sequences = self.sequence_of[positions]
        return positions[np.r_[True, sequences[1:] != sequences[:-1]]] if positions.size \
            else positions

    def _next(self, matched: np.ndarray, cell: int) -> np.ndarray:
        """Of the sequences matched up to positions ``matched``, where each next holds
        ``cell`` (the sequences that do not are dropped)."""
        positions = self._positions(cell)
        if positions.size == 0 or matched.size == 0:
            return positions[:0]
        after = np.searchsorted(positions, matched, side="right")
        found = positions[np.minimum(after, positions.size - 1)]
        same = (after < positions.size) & (found < self.ends[self.sequence_of[matched]])
        return found[same]

    def supports(self, patterns: Sequence[tuple[int, ...]]) -> list[tuple[tuple[int, ...], int]]:
        """(pattern, distinct owners of a sequence containing it), for sorted patterns."""
        matches: list[np.ndarray] = []  # matches[d]: positions after the pattern's d+1 cells
        previous: tuple[int, ...] = ()
        found = []
        for pattern in patterns:
            shared = 0
            while shared < min(len(pattern), len(previous)) and \
                    pattern[shared] == previous[shared]:
                shared += 1
            del matches[shared:]
            for depth in range(shared, len(pattern)):
                matches.append(self._first(pattern[0]) if depth == 0
                               else self._next(matches[-1], pattern[depth]))
            previous = pattern
            held = self.sequence_of[matches[-1]] if pattern else np.zeros(0, dtype=np.int64)
            found.append((pattern, int(np.unique(self.owners[held]).size)))
        return found
