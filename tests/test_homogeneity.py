"""Tests for homogeneity of published prefixes: the share with a single continuation, and the
``min_continuations`` truncation (issue 7, finding 11).

The KAM_CUT output of seed 000's Figure 4(b) is checked by hand; random published sets
are checked against a brute-force oracle over all prefixes.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonymizers.errors import InputError
from anonymizers.families.generalization.homogeneity import homogeneity, limit_continuations
from anonymizers.families.generalization.prefix_tree import kam_cut, support


def cells(word: str) -> tuple[int, ...]:
    """A -> 0, B -> 1, ... (the letters of the paper's figures)."""
    return tuple(ord(letter) - ord("A") for letter in word)


def words(sequences: Sequence[Sequence[int]]) -> list[str]:
    return ["".join(chr(ord("A") + c) for c in seq) for seq in sequences]


def continuations(sequences: Sequence[Sequence[int]]) -> dict[tuple[int, ...], set[int]]:
    """Oracle: every published prefix (length >= 1) -> the distinct cells that follow it."""
    found: dict[tuple[int, ...], set[int]] = defaultdict(set)
    for seq in sequences:
        for end in range(1, len(seq) + 1):
            nexts = found[tuple(seq[:end])]  # a prefix without continuation is one too
            if end < len(seq):
                nexts.add(seq[end])
    return found


# Seed 000, Figure 4(b): KAM_CUT with k = 2 publishes ABCDEFG x3, ADEF x3, DE x2.
FIG4B = [cells(w) for w in ["ABCDEFG"] * 3 + ["ADEF"] * 3 + ["DE"] * 2]


def test_figure_4b_is_mostly_homogeneous() -> None:
    # A -> {B, D}; AB, ABC, ABCD, ABCDE, ABCDEF, AD, ADE and D -> one cell each; DE: none.
    found = homogeneity(FIG4B)
    assert (found.continued, found.homogeneous) == (9, 8)
    assert found.share == pytest.approx(8 / 9)


def test_figure_4b_with_two_continuations_keeps_only_the_fork() -> None:
    assert words(limit_continuations(FIG4B, 2)) == ["AB"] * 3 + ["AD"] * 3 + ["D"] * 2
    assert homogeneity(limit_continuations(FIG4B, 2)).homogeneous == 0
    # Three continuations: A has two, so everything is cut to A; D has one, cut to D.
    assert words(limit_continuations(FIG4B, 3)) == ["A"] * 6 + ["D"] * 2


def test_the_paper_pipeline_then_truncation_stays_k_anonymous() -> None:
    inputs = [cells(w) for w in ["ABCDEFG"] * 3 + ["ADEF"] * 3 + ["CHL", "DECHL", "DEJFG"]]
    owners = list(range(len(inputs)))
    published = kam_cut(inputs, owners, 2)
    cut = limit_continuations([item.cells for item in published], 2)
    assert all(support(seq, inputs, owners) >= 2 for seq in cut)


@pytest.mark.parametrize("sequences", [[], [()], [(4,)], [(4,), (4,)], [(1, 2), (1, 2)]])
@pytest.mark.parametrize("minimum", [1, 2, 5])
def test_degenerate_inputs(sequences: list[tuple[int, ...]], minimum: int) -> None:
    result = limit_continuations(sequences, minimum)
    assert len(result) == len(sequences)
    found = homogeneity(sequences)
    assert found.homogeneous <= found.continued
    if not found.continued:
        assert math.isnan(found.share)
    if minimum > 1:
        assert homogeneity(result).homogeneous == 0


def test_default_changes_nothing() -> None:
    sequences = [(1, 2, 3), (1, 2), (7,)]
    assert limit_continuations(sequences, 1) == sequences


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2", True, None])
def test_bad_min_continuations_is_refused(bad: object) -> None:
    with pytest.raises(InputError, match="min_continuations"):
        limit_continuations([(1, 2)], bad)  # type: ignore[arg-type]


SEQUENCES = st.lists(st.lists(st.integers(0, 4), min_size=1, max_size=6), max_size=25)


@settings(max_examples=300, deadline=None)
@given(SEQUENCES)
def test_homogeneity_matches_the_oracle(sequences: list[list[int]]) -> None:
    nexts = continuations(sequences)
    found = homogeneity(sequences)
    assert found.continued == sum(1 for c in nexts.values() if c)
    assert found.homogeneous == sum(1 for c in nexts.values() if len(c) == 1)


@settings(max_examples=300, deadline=None)
@given(SEQUENCES, st.integers(1, 4))
def test_truncation_leaves_no_prefix_with_too_few_continuations(
        sequences: list[list[int]], minimum: int) -> None:
    result = limit_continuations(sequences, minimum)
    before = continuations(sequences)
    for seq, cut in zip(sequences, result, strict=True):
        assert cut and tuple(seq[:len(cut)]) == cut  # a non-empty prefix of its input
        if len(cut) < len(seq):  # cut only where the input's tree had too few continuations
            assert 1 <= len(before[cut]) < minimum
    after = continuations(result)
    assert all(not nexts or len(nexts) >= minimum for nexts in after.values())
    # Minimal: a prefix that had enough continuations and no cut ancestor keeps them all.
    for prefix, nexts in before.items():
        ancestors_ok = all(len(before[prefix[:end]]) == 0 or len(before[prefix[:end]]) >= minimum
                           for end in range(1, len(prefix)))
        if ancestors_ok and len(nexts) >= minimum:
            assert after[prefix] == nexts
