"""Tests for the prefix-tree k-anonymizers KAM_CUT and KAM_REC (Monreale et al. 2010, Sec. 6).

The running example of Section 6.3 (Figure 4) is checked exactly; random datasets are
checked against the privacy invariant (every published sequence is k-supported in
distinct owners) and against brute-force oracles written from the paper's pseudo-code.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonymizers.errors import InputError
from anonymizers.families.generalization import prefix_tree
from anonymizers.families.generalization.prefix_tree import (
    AnonymizedSequence,
    kam_cut,
    kam_cut_publication,
    kam_rec,
    kam_rec_publication,
    support,
)
from anonymizers.sequences import ConcatenatedSequences

# Figure 4(a): t1-t3 ABCDEFG, t4-t6 ADEF, t7 CHL, t8 DECHL, t9 DEJFG.
FIG4_WORDS = ["ABCDEFG"] * 3 + ["ADEF"] * 3 + ["CHL", "DECHL", "DEJFG"]


def cells(word: str) -> tuple[int, ...]:
    """Map a word of the paper's figures to cell ids: A -> 0, B -> 1, ..."""
    return tuple(ord(letter) - ord("A") for letter in word)


def word(cell_ids: Sequence[int]) -> str:
    """Inverse of :func:`cells`."""
    return "".join(chr(ord("A") + c) for c in cell_ids)


def by_source(result: list[AnonymizedSequence]) -> dict[int, str]:
    """Published sequences as words, keyed by the index of their source."""
    return {item.source: word(item.cells) for item in result}


FIG4 = [cells(w) for w in FIG4_WORDS]


# --------------------------------------------------------------------------- Figure 4


def test_kam_cut_reproduces_figure_4b() -> None:
    result = kam_cut(FIG4, range(len(FIG4)), 2)
    assert Counter(word(item.cells) for item in result) == {"ABCDEFG": 3, "ADEF": 3, "DE": 2}
    # DE comes from DECHL and DEJFG; CHL's first node C has support 1 and is suppressed.
    assert by_source(result)[7] == "DE"
    assert by_source(result)[8] == "DE"
    assert 6 not in by_source(result)


def test_kam_rec_reproduces_figure_4c() -> None:
    result = kam_rec(FIG4, range(len(FIG4)), 2, 0.4)
    assert Counter(word(item.cells) for item in result) == {
        "ABCDEFG": 3,
        "ADEF": 3,
        "CHL": 2,
        "DEFG": 1,
    }
    assert {i: w for i, w in by_source(result).items() if i >= 6} == {
        6: "CHL",
        7: "CHL",
        8: "DEFG",
    }


def test_figure_4_with_named_owners_is_unchanged() -> None:
    owners = [f"person-{i}" for i in range(len(FIG4))]
    assert kam_cut(FIG4, owners, 2) == kam_cut(FIG4, range(len(FIG4)), 2)
    assert kam_rec(FIG4, owners, 2, 0.4) == kam_rec(FIG4, range(len(FIG4)), 2, 0.4)


def test_result_is_sorted_by_source_with_one_item_per_source() -> None:
    result = kam_rec(FIG4, range(len(FIG4)), 2, 0.4)
    assert [item.source for item in result] == sorted({item.source for item in result})
    assert all(isinstance(item.cells, tuple) and item.cells for item in result)


# --------------------------------------------------------------------------- persons


def test_one_person_repeating_a_trip_is_not_a_crowd() -> None:
    trips = [[1, 2, 3]] * 3
    assert kam_cut(trips, [7, 7, 7], 3) == []
    assert kam_rec(trips, [7, 7, 7], 3, 0.4) == []
    assert support([1, 2, 3], trips, [7, 7, 7]) == 1


def test_per_trajectory_counting_when_each_trip_is_its_own_owner() -> None:
    trips = [[1, 2, 3]] * 3
    expected = [AnonymizedSequence(i, (1, 2, 3)) for i in range(3)]
    assert kam_cut(trips, range(3), 3) == expected
    assert kam_rec(trips, range(3), 3, 0.4) == expected


def test_support_counts_distinct_owners_by_containment() -> None:
    trips = [[1, 3, 2], [1, 2], [2, 1], [5]]
    assert support([1, 2], trips, ["a", "a", "b", "c"]) == 1
    assert support([1, 2], trips, range(4)) == 2
    assert support([], trips, ["a", "a", "b", "c"]) == 3


# --------------------------------------------------------------------------- recovery rules


def test_cut_sequence_recovers_its_prefix_from_the_pruned_tree() -> None:
    # k = 3: 1-2-3 is travelled by three people (two exactly, one as a prefix).
    trips = [[1, 2, 3], [1, 2, 3], [1, 2, 3, 4]]
    result = kam_rec(trips, ["a", "b", "c"], 3, 0.4)
    assert result == [AnonymizedSequence(i, (1, 2, 3)) for i in range(3)]


def test_longest_candidate_not_k_supported_falls_back_to_a_shorter_one() -> None:
    trips = [[1, 2, 3, 4, 5], [1, 2, 3, 4, 9], [7, 3, 4, 5], [8, 3, 4, 5]]
    owners = ["a", "b", "c", "d"]
    # LCS(12345, 12349) = 1234 is held by a and b only (< 3): 345 is the next candidate.
    result = by_source(kam_rec(trips, owners, 3, 0.4))
    assert result == {0: word((3, 4, 5)), 1: word((3, 4)), 2: word((3, 4, 5)), 3: word((3, 4, 5))}
    assert all(support(cells(w), trips, owners) >= 3 for w in result.values())


def test_candidates_shorter_than_p_are_suppressed() -> None:
    trips = [[1, 2, 3, 4, 5], [1, 2, 3, 4, 9], [7, 3, 4, 5], [8, 3, 4, 5]]
    assert kam_rec(trips, ["a", "b", "c", "d"], 3, 0.8) == []


def test_p_threshold_tolerates_float_rounding() -> None:
    # 0.7 * 10 is 7.000000000000001 in floating point; 7 cells must still be enough.
    trips = [list(range(10)), [*range(7), 20, 21, 22]]
    result = kam_rec(trips, ["a", "b"], 2, 0.7)
    assert result == [AnonymizedSequence(i, tuple(range(7))) for i in range(2)]


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("k", [1, 0, -3, 2.0, True, "2"])
def test_bad_k_is_rejected(k: object) -> None:
    with pytest.raises(InputError, match="k must be"):
        kam_cut(FIG4, range(9), k)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="k must be"):
        kam_rec(FIG4, range(9), k, 0.4)  # type: ignore[arg-type]


@pytest.mark.parametrize("p", [0, 0.0, -0.1, 1.5, math.nan, math.inf, True, "0.4", None])
def test_bad_p_is_rejected(p: object) -> None:
    with pytest.raises(InputError, match="p must be"):
        kam_rec(FIG4, range(9), 2, p)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("sequences", "owners", "message"),
    [
        ([[1, 2], [3]], [0], "2 sequences but 1 owners"),
        ([[1, 2], []], [0, 1], "sequence 1 is empty"),
        ([[1, 2], ["x"]], [0, 1], "sequence 1 must hold integer"),
        ([[1, 2.5]], [0], "sequence 0 must hold integer"),
        ([[1, 2**70]], [0], "64-bit"),
        ([[1], [2]], [[0], [1]], "owners must be hashable"),
    ],
)
def test_bad_sequences_are_rejected(sequences: list, owners: list, message: str) -> None:
    with pytest.raises(InputError, match=message):
        kam_cut(sequences, owners, 2)
    with pytest.raises(InputError, match=message):
        kam_rec(sequences, owners, 2, 0.4)


def test_support_rejects_mismatched_lengths() -> None:
    with pytest.raises(InputError, match="owners"):
        support([1], [[1], [1]], [0])


def test_p_equal_to_one_and_numpy_integers_are_accepted() -> None:
    np = pytest.importorskip("numpy")
    trips = [np.array([1, 2, 3]), np.array([1, 2, 3])]
    assert kam_rec(trips, [0, 1], np.int64(2), 1) == [
        AnonymizedSequence(0, (1, 2, 3)),
        AnonymizedSequence(1, (1, 2, 3)),
    ]


def test_empty_dataset_publishes_nothing() -> None:
    assert kam_cut([], [], 2) == []
    assert kam_rec([], [], 2, 0.4) == []


# --------------------------------------------------------------------------- oracles


def prefix_support(prefix: tuple[int, ...], sequences: list[tuple[int, ...]], owners) -> int:
    """Support of a prefix-tree node: distinct owners whose sequence starts with ``prefix``."""
    return len({o for s, o in zip(sequences, owners, strict=True) if s[: len(prefix)] == prefix})


def cut_depth(seq: tuple[int, ...], sequences, owners, k: int) -> int:
    """Depth at which KAM_CUT truncates ``seq``: its longest prefix whose node keeps k owners."""
    depth = 0
    while depth < len(seq) and prefix_support(seq[: depth + 1], sequences, owners) >= k:
        depth += 1
    return depth


def oracle_recovery(seq, sequences, owners, k: int, p: float) -> tuple[int, ...] | None:
    """TrjRecovery by brute force: every other distinct sequence, longest supported LCS."""
    masks = prefix_tree._match_masks(seq)
    candidates = []
    for other in dict.fromkeys(sequences):
        if other != seq:
            common, columns = prefix_tree._lcs_columns(masks, len(seq), other)
            candidates.append(prefix_tree._lcs_backtrack(seq, common, columns))
    min_len = math.ceil(p * len(seq) - 1e-9)
    kept = [c for c in candidates if len(c) >= min_len and support(c, sequences, owners) >= k]
    return max(map(len, kept), default=None)


def lcs_length(a: Sequence[int], b: Sequence[int]) -> int:
    """Textbook O(len * len) LCS length."""
    row = [0] * (len(b) + 1)
    for x in a:
        diagonal, row[0] = 0, 0
        for j, y in enumerate(b):
            diagonal, row[j + 1] = row[j + 1], diagonal + 1 if x == y else max(row[j + 1], row[j])
    return row[-1]


def is_subsequence(pattern: Sequence[int], seq: Sequence[int]) -> bool:
    remaining = iter(seq)
    return all(c in remaining for c in pattern)


def collapse(seq: list[int]) -> tuple[int, ...]:
    return tuple(c for i, c in enumerate(seq) if i == 0 or c != seq[i - 1])


datasets = st.integers(min_value=1, max_value=14).flatmap(
    lambda n: st.tuples(
        st.lists(
            st.lists(st.integers(0, 5), min_size=1, max_size=7).map(collapse),
            min_size=n,
            max_size=n,
        ),
        st.lists(st.integers(0, n - 1), min_size=n, max_size=n),
    )
)
ks = st.integers(min_value=2, max_value=5)
ps = st.sampled_from([0.2, 0.4, 0.5, 0.75, 1.0])


@settings(max_examples=150, deadline=None)
@given(datasets, ks)
def test_kam_cut_publishes_k_supported_prefixes(data, k: int) -> None:
    sequences, owners = data
    result = {item.source: item.cells for item in kam_cut(sequences, owners, k)}
    for i, seq in enumerate(sequences):
        depth = cut_depth(seq, sequences, owners, k)
        assert result.get(i, ()) == seq[:depth]
    for published in result.values():
        assert support(published, sequences, owners) >= k


@settings(max_examples=150, deadline=None)
@given(datasets, ks, ps)
def test_kam_rec_publishes_k_supported_subsequences(data, k: int, p: float) -> None:
    sequences, owners = data
    result = {item.source: item.cells for item in kam_rec(sequences, owners, k, p)}
    for source, published in result.items():
        assert published
        assert support(published, sequences, owners) >= k
        assert is_subsequence(published, sequences[source])
        assert len(published) >= math.ceil(p * len(sequences[source]) - 1e-9)


@settings(max_examples=200, deadline=None)
@given(datasets, ks, ps)
def test_kam_rec_matches_brute_force_trj_recovery(data, k: int, p: float) -> None:
    sequences, owners = data
    result = {item.source: item.cells for item in kam_rec(sequences, owners, k, p)}
    for i, seq in enumerate(sequences):
        if cut_depth(seq, sequences, owners, k) == len(seq):
            assert result[i] == seq  # survives TreePruning whole: published unchanged
        else:
            expected = oracle_recovery(seq, sequences, owners, k, p)
            assert (len(result[i]) if i in result else None) == expected


@settings(max_examples=100, deadline=None)
@given(datasets, ks)
def test_lower_p_only_adds_recovered_sequences(data, k: int) -> None:
    # The chosen candidate does not depend on p; p only decides whether it is kept.
    # (KAM_REC may publish fewer sequences than KAM_CUT, so that is not asserted.)
    sequences, owners = data
    strict = {item.source: item.cells for item in kam_rec(sequences, owners, k, 0.75)}
    lenient = {item.source: item.cells for item in kam_rec(sequences, owners, k, 0.3)}
    assert strict.items() <= lenient.items()


@settings(max_examples=150, deadline=None)
@given(datasets, ks, ps, st.integers(min_value=1, max_value=3))
def test_more_lcs_candidates_only_lengthen_recoveries(data, k: int, p: float,
                                                      few: int) -> None:
    # Each recovery is the best over the candidates looked at, so over a superset it is
    # at least as long, and still k-supported.
    sequences, owners = data
    capped = {item.source: item.cells
              for item in kam_rec(sequences, owners, k, p, max_candidates=few)}
    full = {item.source: item.cells for item in kam_rec(sequences, owners, k, p)}
    assert capped.keys() <= full.keys()
    for source, cells in capped.items():
        assert len(full[source]) >= len(cells)
        assert support(cells, sequences, owners) >= k


@pytest.mark.parametrize("bad", [0, -1])
def test_bad_max_candidates_is_rejected(bad: int) -> None:
    with pytest.raises(InputError, match="max_candidates must be at least 1"):
        kam_rec([cells("AB"), cells("AB")], [1, 2], 2, 0.4, max_candidates=bad)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(0, 6), min_size=1, max_size=70),
    st.lists(st.integers(0, 6), min_size=0, max_size=70),
)
def test_bit_parallel_lcs_returns_a_longest_common_subsequence(a, b) -> None:
    first = tuple(a)
    masks = prefix_tree._match_masks(first)
    common, columns = prefix_tree._lcs_columns(masks, len(first), tuple(b))
    found = prefix_tree._lcs_backtrack(first, common, columns)
    assert len(found) == lcs_length(first, b)
    assert is_subsequence(found, first)
    assert is_subsequence(found, b)


def test_kam_rec_matches_brute_force_with_more_than_63_distinct_cells() -> None:
    # Past 64 distinct cells a sequence's set of cells takes more than one 64-bit word.
    # Twelve people drive one 80-cell route, each skipping 3 of the same 8 cells.
    rng = random.Random(0)
    base = list(range(100, 180))
    pool = rng.sample(base, 8)
    sequences = []
    for _ in range(12):
        skipped = set(rng.sample(pool, 3))
        sequences.append(tuple(c for c in base if c not in skipped))
    owners = list(range(12))
    result = {item.source: item.cells for item in kam_rec(sequences, owners, 4, 0.5)}
    assert result  # the recovery path is exercised, not only suppression
    for i, seq in enumerate(sequences):
        expected = oracle_recovery(seq, sequences, owners, 4, 0.5)
        assert (len(result[i]) if i in result else None) == expected
        assert i not in result or support(result[i], sequences, owners) >= 4


def test_kam_rec_matches_brute_force_on_a_denser_random_city() -> None:
    # Random walks on a 5 x 5 grid: long overlaps, revisits and shared owners.
    rng = random.Random(7)
    sequences, owners = [], []
    for i in range(120):
        x, y, walk = rng.randrange(5), rng.randrange(5), []
        for _ in range(rng.randint(2, 12)):
            walk.append(5 * x + y)
            dx, dy = rng.choice([(0, 1), (1, 0), (0, -1), (-1, 0)])
            x, y = min(max(x + dx, 0), 4), min(max(y + dy, 0), 4)
        sequences.append(collapse(walk))
        owners.append(i // 2)
    result = {item.source: item.cells for item in kam_rec(sequences, owners, 3, 0.4)}
    for i, seq in enumerate(sequences):
        if cut_depth(seq, sequences, owners, 3) < len(seq):
            expected = oracle_recovery(seq, sequences, owners, 3, 0.4)
            assert (len(result[i]) if i in result else None) == expected
        if i in result:
            assert support(result[i], sequences, owners) >= 3


def overlap_bound(wanted: Counter, other: Sequence[int]) -> int:
    """|T ∩ U| of multisets, T given as its cell counts."""
    held = Counter(other)
    return sum(min(held[cell], n) for cell, n in wanted.items())


# Cells up to 140: sets of cells of one, two and three 64-bit words; cells 0-3 often,
# so that sequences revisit them.
distinct_sequences = st.lists(
    st.lists(st.one_of(st.integers(0, 3), st.integers(0, 140)), min_size=1,
             max_size=9).map(tuple),
    min_size=2, max_size=40, unique=True)


def postings_of(distinct: list[tuple[int, ...]], with_bits: bool) -> prefix_tree._Postings:
    """The postings, with the bits of each sequence's cells or (over budget) without."""
    budget = prefix_tree._BITS_BUDGET_BYTES if with_bits else 0
    with mock.patch.object(prefix_tree, "_BITS_BUDGET_BYTES", budget):
        return prefix_tree._Postings(distinct)


@settings(max_examples=200, deadline=None)
@given(distinct_sequences, st.booleans(), st.data())
def test_candidates_come_by_decreasing_overlap_then_input_order(distinct, with_bits: bool,
                                                                 data) -> None:
    # ClosestLCS's candidate order, against every bound counted by brute force. T's
    # wanted cells are a sub-multiset of it (cells of too few owners are left out).
    postings = postings_of(distinct, with_bits)
    t = data.draw(st.integers(0, len(distinct) - 1))
    kept = data.draw(st.lists(st.booleans(), min_size=len(distinct[t]),
                              max_size=len(distinct[t])))
    wanted = Counter(c for c, keep in zip(distinct[t], kept, strict=True) if keep)
    if not wanted:
        wanted = Counter(distinct[t][:1])
    min_len = data.draw(st.integers(1, sum(wanted.values())))
    limit = data.draw(st.none() | st.integers(1, 4))  # ClosestLCS reads the first few only
    expected = sorted((-bound, i) for i, other in enumerate(distinct)
                      if i != t and (bound := overlap_bound(wanted, other)) >= min_len)
    found = list(postings.by_overlap(wanted, min_len, exclude=t, limit=limit))
    assert found == [(i, -negative) for negative, i in expected][:limit]


@settings(max_examples=200, deadline=None)
@given(distinct_sequences, st.booleans(), st.data())
def test_holders_of_a_pattern_hold_each_of_its_cells(distinct, with_bits: bool, data) -> None:
    postings = postings_of(distinct, with_bits)
    source = data.draw(st.sampled_from(distinct))
    picked = data.draw(st.lists(st.booleans(), min_size=len(source), max_size=len(source)))
    pattern = tuple(c for c, keep in zip(source, picked, strict=True) if keep) or source[:1]
    expected = [i for i, other in enumerate(distinct) if set(pattern) <= set(other)]
    assert postings.holding(pattern).tolist() == expected


def test_kam_rec_is_the_same_without_the_bits_of_the_cells() -> None:
    # Over the bits' memory budget every T is counted over all its postings.
    rng = random.Random(3)
    sequences = [collapse([rng.randrange(30) for _ in range(rng.randint(2, 9))])
                 for _ in range(300)]
    owners = [rng.randrange(120) for _ in sequences]
    with_bits = kam_rec(sequences, owners, 3, 0.4)
    with mock.patch.object(prefix_tree, "_BITS_BUDGET_BYTES", 0):
        without = kam_rec(sequences, owners, 3, 0.4)
    assert with_bits == without
    assert sum(len(item.cells) < len(sequences[item.source]) for item in with_bits) > 10


# --------------------------------------------------------------------------- end to end input


def end_to_end(sequences: Sequence[Sequence[int]], dtype=np.int32) -> ConcatenatedSequences:
    lengths = [len(s) for s in sequences]
    return ConcatenatedSequences(np.array([c for s in sequences for c in s], dtype=dtype),
                                 np.concatenate(([0], np.cumsum(lengths))).astype(np.int64))


@settings(max_examples=150, deadline=None)
@given(datasets, ks, ps)
def test_publication_of_arrays_is_the_list_result(data, k: int, p: float) -> None:
    # The form the release step uses (cells end to end, owners an integer array) publishes
    # what the list form does, sequence for sequence.
    sequences, owners = data
    flat, owner_array = end_to_end(sequences), np.array(owners, dtype=np.int32) * 7
    rec = kam_rec_publication(flat, owner_array, k, p)
    assert rec.sequences() == kam_rec(sequences, owners, k, p)
    cut = kam_cut_publication(flat, owner_array, k)
    assert cut.sequences() == kam_cut(sequences, owners, k)
    assert rec.pattern_of.shape == (len(sequences),)


def test_publication_keeps_one_pattern_per_distinct_sequence() -> None:
    # Figure 4(b): 9 trajectories, 5 distinct; ABCDEFG (x3) and ADEF (x3) are published
    # whole, DECHL and DEJFG both as DE, and CHL is suppressed.
    published = kam_cut_publication(end_to_end(FIG4), np.arange(len(FIG4)), 2)
    assert [word(p) for p in published.patterns] == ["ABCDEFG", "ADEF", "DE", "DE"]
    assert published.pattern_of.tolist() == [0, 0, 0, 1, 1, 1, -1, 2, 3]


def test_cells_outside_the_key_range_are_renumbered() -> None:
    # Keys are node * base + cell: negative or huge cell ids are renumbered first.
    small = [(1, 2, 3), (1, 2, 3), (1, 2, 4), (2, 3)]
    mapping = {1: -7, 2: 2**40, 3: 5, 4: -(2**35)}
    large = [tuple(mapping[c] for c in s) for s in small]
    expected = [(item.source, tuple(mapping[c] for c in item.cells))
                for item in kam_rec(small, [0, 1, 2, 0], 2, 0.5)]
    found = kam_rec_publication(end_to_end(large, np.int64), np.array([0, 1, 2, 0]), 2, 0.5)
    assert [(item.source, item.cells) for item in found.sequences()] == expected


def test_an_empty_sequence_end_to_end_is_rejected() -> None:
    with pytest.raises(InputError, match="sequence 1 is empty"):
        kam_cut_publication(end_to_end([(1, 2), (), (3,)]), np.array([0, 1, 2]), 2)


def test_replaced_patterns_must_match_in_number() -> None:
    published = kam_cut_publication(end_to_end([(1, 2)] * 3), np.arange(3), 2)
    assert published.replaced([(1,)]).sequences()[2].cells == (1,)
    with pytest.raises(InputError, match="patterns"):
        published.replaced([])


def test_recovery_on_several_processes_is_the_same() -> None:
    # Work items of one cut sequence each, spread over two forked processes.
    rng = random.Random(11)
    sequences = [collapse([rng.randrange(25) for _ in range(rng.randint(2, 9))])
                 for _ in range(400)]
    owners = np.array([rng.randrange(150) for _ in sequences])
    flat = end_to_end(sequences)
    alone = kam_rec_publication(flat, owners, 3, 0.4)
    with mock.patch.object(prefix_tree, "_RECOVERIES_PER_ITEM", 1):
        spread = kam_rec_publication(flat, owners, 3, 0.4, processes=2)
    assert spread.patterns == alone.patterns
    assert spread.pattern_of.tolist() == alone.pattern_of.tolist()
    assert sum(len(item.cells) < len(sequences[item.source]) for item in alone.sequences()) > 10
