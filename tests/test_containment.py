"""The verifier's support counting, and the property that KAM_CUT output always passes it."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonymizers.families.generalization.prefix_tree import kam_cut
from anonymizers.verifiers.containment import SupportIndex, is_subsequence

cells = st.integers(min_value=0, max_value=6)
sequences = st.lists(st.lists(cells, min_size=1, max_size=7), min_size=1, max_size=40)


def _brute_subsequence(pattern, sequence) -> bool:
    return any(tuple(sequence[i] for i in idx) == tuple(pattern)
               for idx in combinations(range(len(sequence)), len(pattern)))


@pytest.mark.parametrize(("pattern", "sequence", "expected"), [
    ((), (1, 2), True),
    ((1, 3), (1, 2, 3), True),
    ((3, 1), (1, 2, 3), False),
    ((1, 1), (1, 2, 1), True),
    ((1, 1), (1,), False),
    ((4,), (), False),
])
def test_is_subsequence_examples(pattern, sequence, expected):
    assert is_subsequence(pattern, sequence) is expected


@given(st.lists(cells, max_size=4), st.lists(cells, max_size=7))
def test_is_subsequence_matches_brute_force(pattern, sequence):
    assert is_subsequence(pattern, sequence) == _brute_subsequence(pattern, sequence)


def test_support_counts_distinct_owners_not_sequences():
    index = SupportIndex.of_sequences([(1, 2, 3)] * 4 + [(1, 3)], owners=[7, 7, 7, 7, 8])
    assert index.support((1, 3)) == 2
    assert index.support((2,)) == 1
    assert index.support((9,)) == 0


@settings(max_examples=150, deadline=None)
@given(sequences, st.lists(cells, min_size=1, max_size=4), st.integers(1, 5), st.data())
def test_support_is_the_brute_force_owner_count_capped_at_stop(seqs, pattern, stop, data):
    """The count is the distinct owners holding the pattern in order, capped at stop_at."""
    owners = data.draw(st.lists(st.integers(0, 8), min_size=len(seqs), max_size=len(seqs)))
    index = SupportIndex.of_sequences(seqs, owners)
    holders = {o for s, o in zip(seqs, owners, strict=True) if _brute_subsequence(pattern, s)}
    assert index.support(pattern) == len(holders)
    assert index.support(pattern, stop_at=stop) == min(len(holders), stop)


@settings(max_examples=150, deadline=None)
@given(sequences, st.lists(st.lists(cells, max_size=5), max_size=30), st.data())
def test_shortfalls_walk_gives_every_pattern_its_brute_force_support(seqs, patterns, data):
    """The prefix walk over many patterns at once (prefixes of one another, repeats, the
    empty one, cells nobody visits) counts what one pattern at a time does."""
    owners = data.draw(st.lists(st.integers(0, 8), min_size=len(seqs), max_size=len(seqs)))
    patterns += [s[:cut] for s in seqs[:5] for cut in range(len(s) + 1)]
    k = len(set(owners)) + 1  # every pattern falls short: every support is reported
    shortfalls = SupportIndex.of_sequences(seqs, owners).shortfalls(patterns, k)
    expected = {tuple(p): len({o for s, o in zip(seqs, owners, strict=True)
                               if p and _brute_subsequence(p, s)}) for p in patterns}
    assert {s.pattern: s.support for s in shortfalls} == expected


@settings(max_examples=150, deadline=None)
@given(sequences, st.integers(min_value=2, max_value=4), st.data())
def test_kam_cut_output_always_passes_the_verifier(seqs, k, data):
    owners = data.draw(st.lists(st.integers(0, 12), min_size=len(seqs), max_size=len(seqs)))
    published = kam_cut(seqs, owners, k)
    index = SupportIndex.of_sequences(seqs, owners)
    assert index.shortfalls([p.cells for p in published], k) == []


@settings(max_examples=100, deadline=None)
@given(sequences, st.integers(min_value=2, max_value=4))
def test_a_planted_rare_sequence_is_caught(seqs, k):
    owners = list(range(len(seqs)))  # every sequence its own person
    planted = (*seqs[0], 99)  # cell 99 is visited by nobody: support 0
    published = [p.cells for p in kam_cut(seqs, owners, k)] + [planted]
    shortfalls = SupportIndex.of_sequences(seqs, owners).shortfalls(published, k)
    assert [s.pattern for s in shortfalls] == [planted]


@pytest.mark.parametrize("fork_from", [1, 3])
def test_supports_spread_over_forked_processes_are_the_same(fork_from, monkeypatch):
    """Runs of patterns with one first cell, matched on two forked processes, give each
    pattern the support one process gives it, in the patterns' order (the empty pattern
    and cells nobody visits included)."""
    import numpy as np

    from anonymizers.verifiers import containment

    monkeypatch.setattr(containment, "FORK_FROM", fork_from)
    rng = np.random.default_rng(fork_from)
    seqs = [rng.integers(0, 9, int(rng.integers(1, 8))).tolist() for _ in range(300)]
    owners = rng.integers(0, 60, len(seqs)).tolist()
    patterns = sorted({(), (99,), *(tuple(s[: int(rng.integers(1, len(s) + 1))])
                                    for s in seqs)})
    index = SupportIndex.of_sequences(seqs, owners)
    alone = index.supports(patterns)
    assert len({p[:1] for p in patterns}) > 4
    assert index.supports(patterns, processes=2) == alone
    assert index.shortfalls(patterns, 10**6, processes=2) == index.shortfalls(patterns, 10**6)


@given(sequences, st.lists(cells, min_size=2, max_size=5))
def test_both_searches_for_a_patterns_next_cell_find_the_same_matches(seqs, pattern):
    """From the matches or from the cell's positions (whichever are fewer, in use), every
    step of a pattern keeps the same sequences at the same positions."""
    index = SupportIndex.of_sequences(seqs, list(range(len(seqs))))
    matched = index._first(pattern[0])
    for cell in pattern[1:]:
        positions = index._positions(cell)
        if not positions.size:
            break
        forward = SupportIndex._next_from_matches(matched, positions)
        backward = SupportIndex._next_from_positions(matched, positions)
        for mine, theirs in zip(forward, backward, strict=True):
            np.testing.assert_array_equal(mine, theirs)
        matched = forward
