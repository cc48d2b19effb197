"""Count, for published cell sequences, the distinct owners whose sequences contain them.

Written independently of the prefix-tree anonymizers on purpose: it shares no code with
them, so a bug there is not repeated here. Containment is seed 000 Definition 4: S is
contained in T if S's cells appear in T in order, not necessarily consecutively.

An inverted index (cell -> ids of sequences holding it) limits the containment test to
sequences holding every cell of S, smallest posting list first; counting stops at k.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Shortfall", "SupportIndex", "is_subsequence"]


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
        """Every distinct pattern whose support is below k."""
        found = []
        for pattern in sorted({tuple(p) for p in patterns}):
            support = self.support(pattern, stop_at=k)
            if support < k:
                found.append(Shortfall(pattern, support))
        return found
