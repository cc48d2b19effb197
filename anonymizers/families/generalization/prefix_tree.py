"""Make generalized cell sequences k-anonymous with the prefix-tree methods KAM_CUT and KAM_REC.

The input is a generalized dataset D^G: one sequence of integer cell ids per trip
(consecutive repeats already collapsed) and the id of the person who made it.  The
output is the anonymized dataset D* as a list of :class:`AnonymizedSequence`, at most
one per input sequence, sorted by ``source``.

Support is always counted in *distinct owners* (persons), never in trajectories: a
person with ten identical trips contributes 1.  Pass ``owners=range(len(sequences))``
to get the paper's per-trajectory counting.

Privacy invariant (the basis of the paper's Theorems 12 and 13): every published
sequence ``S`` satisfies ``support(S, sequences, owners) >= k``, where support is the
number of distinct owners having an input sequence that contains ``S`` as a
subsequence (Definition 4).  Any ``g(T)`` with support ``< k`` in D^G is therefore
contained in no published sequence, which is what Definition 9 asks.

References
----------
.. [1] A. Monreale, G. Andrienko, N. Andrienko, F. Giannotti, D. Pedreschi,
   S. Rinzivillo, S. Wrobel, "Movement Data Anonymity through Generalization",
   Transactions on Data Privacy 3 (2010), 91-121.  Definitions 4 and 9, Section 6.2
   (Algorithms 4, 5 and 6) and the running example of Section 6.3 (Figures 4-6).
"""

from __future__ import annotations

import math
import operator
from collections import Counter
from collections.abc import Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain, islice

import numpy as np

from anonymizers.counting import distinct_values
from anonymizers.errors import InputError
from anonymizers.processes import map_forked
from anonymizers.sequences import ConcatenatedSequences, ranges

__all__ = ["AnonymizedSequence", "Publication", "kam_cut", "kam_cut_publication", "kam_rec",
           "kam_rec_publication", "support"]

Cells = tuple[int, ...]

# Float slack for ``p * len(T)``: 0.7 * 10 is 7.000000000000001 and must still mean 7.
_P_EPSILON = 1e-9
_NO_IDS = np.zeros(0, dtype=np.int64)
# T's rarest cells whose holders ClosestLCS looks at one cell at a time (most scans end
# within three levels of bound on a city of 1M or 5M fixes) before all others it needs.
_LAZY_CELLS = 4
# Holders of a pattern whose order is checked at a time, until k owners are found.
_HOLDERS_AT_ONCE = 256
# Most memory the bits of the distinct sequences' cells may take (one bit per sequence
# and cell; a city of 5M fixes: 103k sequences and 309 cells, 4 MB).
_BITS_BUDGET_BYTES = 256 << 20
# Cell ids from 0 up to this one are used as they are (Voronoi cells are numbered 1..C).
_LARGEST_PLAIN_CELL = 1 << 24
# Cut sequences recovered per work item when recovery is spread over processes: small
# enough for uneven costs to even out between processes, large enough that an item's
# results are pickled in one go (a city of 25M fixes: 198,055 cut sequences).
_RECOVERIES_PER_ITEM = 256


@dataclass(frozen=True)
class AnonymizedSequence:
    """One published sequence of D*.

    Parameters
    ----------
    source : int
        Index of the input sequence this published sequence was derived from.
    cells : tuple of int
        Published cell sequence (non-empty); always a subsequence of the source.
    """

    source: int
    cells: tuple[int, ...]


@dataclass(frozen=True)
class Publication:
    """D* without a Python object per published sequence: each distinct input sequence
    publishes one cell sequence (or none), and every input sequence publishes what its
    distinct sequence does.

    Parameters
    ----------
    patterns : list of tuple of int
        The published cell sequences, one per distinct input sequence that publishes one
        (two of them may be equal: different inputs may be cut to one prefix).
    pattern_of : np.ndarray of int
        For each input sequence, the index in ``patterns`` of what it publishes, or -1
        when it is suppressed.
    """

    patterns: list[Cells]
    pattern_of: np.ndarray

    def sequences(self) -> list[AnonymizedSequence]:
        """The published sequences one by one, sorted by ``source``."""
        published = np.flatnonzero(self.pattern_of >= 0)
        return [AnonymizedSequence(source, self.patterns[pattern])
                for source, pattern in zip(published.tolist(),
                                           self.pattern_of[published].tolist(), strict=True)]

    def replaced(self, patterns: list[Cells]) -> Publication:
        """The same publication with each pattern replaced (e.g. truncated)."""
        if len(patterns) != len(self.patterns):
            raise InputError(f"got {len(patterns)} patterns for {len(self.patterns)}")
        return Publication(patterns, self.pattern_of)


def _publication(chosen: list[Cells | None], distinct_of: np.ndarray) -> Publication:
    """The publication where distinct sequence ``d`` publishes ``chosen[d]`` (None: none)."""
    patterns = [pattern for pattern in chosen if pattern is not None]
    kept = np.array([pattern is not None for pattern in chosen], dtype=bool)
    number = np.full(len(chosen), -1, dtype=np.int64)
    number[kept] = np.arange(len(patterns))
    return Publication(patterns, number[distinct_of])


# --------------------------------------------------------------------------- public API


def kam_cut(
    sequences: Sequence[Sequence[int]], owners: Sequence[Hashable], k: int
) -> list[AnonymizedSequence]:
    """Anonymize by cutting every prefix-tree subtree whose root has support < k.

    Each input sequence is published truncated at the last node of its path that
    survives the cut; a sequence whose first node is cut is suppressed.  This is why
    Figure 4(b) of [1]_ publishes "DE" twice, for DECHL and DEJFG.

    Parameters
    ----------
    sequences : sequence of sequence of int
        Generalized trajectories (cell ids), one per trip, none empty.
    owners : sequence of hashable
        Owner (person) of each sequence; node support counts distinct owners.
    k : int
        Anonymity threshold, at least 2.

    Returns
    -------
    list of AnonymizedSequence
        Published prefixes, at most one per input sequence, sorted by ``source``.

    Raises
    ------
    InputError
        If ``k < 2``, the lengths differ, a sequence is empty or a cell is not an int.

    Notes
    -----
    The tree is never materialized: it is built level by level with numpy, keeping
    only the node ids of the current depth, so memory is O(N) for N cells in total
    and time O(N log n) for n sequences (one sort per level).  A prefix node's support
    is a lower bound on the containment support of that prefix, so every output has
    ``support >= k`` (Theorem 12).

    References
    ----------
    .. [1] Monreale et al., "Movement Data Anonymity through Generalization",
       Trans. Data Privacy 3 (2010), Algorithm 4 and Section 6.3.
    """
    return kam_cut_publication(sequences, owners, k).sequences()


def kam_cut_publication(
    sequences: Sequence[Sequence[int]], owners: Sequence[Hashable] | np.ndarray, k: int
) -> Publication:
    """:func:`kam_cut`'s D* as a :class:`Publication`, for millions of sequences.

    Given a :class:`~anonymizers.sequences.ConcatenatedSequences` and an integer array of
    owners, no Python object is made per input sequence or cell: only the distinct
    sequences become tuples.
    """
    seqs, owner_ids = _validate(sequences, owners, k)
    paths = _walk_prefix_tree(seqs, owner_ids, k)
    chosen: list[Cells | None] = [cells[:depth] or None for cells, depth
                                  in zip(paths.distinct, paths.depth.tolist(), strict=True)]
    return _publication(paths.decoded(chosen), paths.distinct_of)


def kam_rec(
    sequences: Sequence[Sequence[int]], owners: Sequence[Hashable], k: int, p: float,
    max_candidates: int | None = None,
) -> list[AnonymizedSequence]:
    """Anonymize by pruning infrequent prefix-tree paths, then recovering sub-trajectories.

    TreePruning (Algorithm 5 of [1]_) moves every sequence whose path crosses a node
    of support < k, whole, into L_cut; the other sequences are published unchanged.
    TrjRecovery (Algorithm 6) then looks, for each distinct ``T`` in L_cut, for the
    longest common subsequence of ``T`` with the pruned tree and with L_cut, and
    publishes it once per occurrence of ``T`` if it is k-supported and has at least
    ``p * len(T)`` cells; otherwise every occurrence of ``T`` is suppressed.

    Parameters
    ----------
    sequences : sequence of sequence of int
        Generalized trajectories (cell ids), one per trip, none empty.
    owners : sequence of hashable
        Owner (person) of each sequence; supports count distinct owners.
    k : int
        Anonymity threshold, at least 2.
    p : float
        Minimum fraction of ``T``'s cells a recovered sequence keeps, in (0, 1].
    max_candidates : int, optional
        How many other sequences ClosestLCS compares ``T`` with, those of largest
        overlap bound (default :data:`MAX_LCS_CANDIDATES`). More can only lengthen
        recoveries (each is the best over a superset), at the cost of more LCS work.

    Returns
    -------
    list of AnonymizedSequence
        Published sequences, at most one per input sequence, sorted by ``source``.

    Raises
    ------
    InputError
        If ``k < 2``, ``p`` is outside (0, 1], the lengths differ, a sequence is empty
        or a cell is not an int.

    Notes
    -----
    This project's reading of the parts the paper leaves open:

    * The pruned tree holds exactly the surviving sequences and L_cut the others, so
      ``ClosestLCS(T, PT)`` and ``ClosestLCS(T, L_cut)`` together compare ``T`` with
      every distinct input sequence except ``T`` itself.  Skipping ``T``'s own
      occurrences changes nothing: if ``T`` were k-supported only through copies of
      itself, all its prefix nodes would have support >= k and ``T`` would not be in
      L_cut; so when ``support(T) >= k`` a strict supersequence exists and yields
      ``T`` as LCS anyway.  In Section 6.3, CHL "occurs twice in L_cut" because
      DECHL contains it, not because CHL is compared with itself.
    * "The longest sub-trajectory that is frequent": one LCS string is computed per
      compared sequence; the candidates are tried in decreasing length and the first
      whose support in the whole input (distinct owners, containment) is >= k wins.
      Ties go to the compared sequence with the larger cell-overlap bound, then to
      the one met first in the input.  A candidate is never published below k: this
      is the invariant Theorem 13 relies on.
    * The length test is ``len(S) >= ceil(p * len(T))`` (with float slack).
    * ClosestLCS looks at the ``max_candidates`` sequences with the largest
      overlap bound (exact below that; see :data:`MAX_LCS_CANDIDATES`).
    * A recovered sequence may hold the same cell twice in a row (T = ABA, S = AA):
      the cells in between were dropped.  Collapsing it would only raise its support.

    Complexity.  Pruning is the O(N log n) pass of :func:`kam_cut`.  Recovery is
    quadratic in the worst case, like the paper's O(n^2): for D distinct sequences
    of length at most L and word size w, O(D^2 L^2 / w) for the LCS computations
    plus O(D L) for each distinct candidate pattern whose support must be scanned.
    In practice bit-parallel LCS (Hyyrö) runs only for the ``U`` whose multiset
    overlap ``|T ∩ U|``, a bound on ``|LCS(T, U)|``, beats both ``ceil(p * len(T))``
    and the best supported candidate so far, visited by decreasing bound; those of the
    highest bounds come from the postings of ``T``'s rarest cells, with a popcount per
    word of ``T``'s cells, and all postings of ``T`` are counted only for a long or
    sparse ``T`` (:class:`_Postings`).  Support checks are memoized per pattern,
    answered from the LCS pair's owners or from per-cell owner counts when possible,
    otherwise scan the sequences holding all the pattern's cells and stop at k owners.
    The postings still grow with the input, so recovery stays quadratic in the worst
    case.  Measured (same input, same output, before -> after): 11.2 -> 8.6 s on a
    synthetic city of 1M fixes, 71-77 -> 54 s on 5M; on T-Drive's long taxi shifts
    28-35 s (three runs) -> 32 s. On the 25M city (198,055 cut sequences), a T that
    repeats a cell taking the lazy way too and only the first ``max_candidates``
    candidates ordered: one process on every 20th cut sequence 11.1 -> 8.9 s; the whole
    prefix-tree step 121 s (145 s in an earlier whole-release run).

    References
    ----------
    .. [1] Monreale et al., "Movement Data Anonymity through Generalization",
       Trans. Data Privacy 3 (2010), Algorithms 5 and 6 and Section 6.3.
    .. [2] H. Hyyrö, "Bit-parallel LCS-length computation revisited", AWOCA 2004.
    """
    return kam_rec_publication(sequences, owners, k, p, max_candidates).sequences()


def kam_rec_publication(
    sequences: Sequence[Sequence[int]], owners: Sequence[Hashable] | np.ndarray, k: int,
    p: float, max_candidates: int | None = None, processes: int = 1,
) -> Publication:
    """:func:`kam_rec`'s D* as a :class:`Publication`, for millions of sequences.

    Given a :class:`~anonymizers.sequences.ConcatenatedSequences` and an integer array of
    owners, no Python object is made per input sequence or cell: only the distinct
    sequences become tuples (a synthetic city of 25M fixes: 1.9 million trajectories,
    318,533 distinct sequences). The cut sequences are recovered on up to ``processes``
    forked processes (:func:`~anonymizers.processes.map_forked`); each recovery is exact
    on its own, so the result does not depend on how many.
    """
    seqs, owner_ids = _validate(sequences, owners, k)
    _check_p(p)
    if max_candidates is not None and max_candidates < 1:
        raise InputError(f"max_candidates must be at least 1 (got {max_candidates})")
    paths = _walk_prefix_tree(seqs, owner_ids, k)
    chosen: list[Cells | None] = [cells if depth == len(cells) else None for cells, depth
                                  in zip(paths.distinct, paths.depth.tolist(), strict=True)]
    cut = [seq_id for seq_id, pattern in enumerate(chosen) if pattern is None]
    if cut:
        recovery = _Recovery(paths.distinct, paths.owners(owner_ids), k,
                             max_candidates or MAX_LCS_CANDIDATES)
        items = [cut[i:i + _RECOVERIES_PER_ITEM] for i in range(0, len(cut), _RECOVERIES_PER_ITEM)]
        recovered = map_forked(_recover_item, (recovery, p), items, processes)
        for seq_id, pattern in zip(cut, chain.from_iterable(recovered), strict=True):
            chosen[seq_id] = pattern
    return _publication(paths.decoded(chosen), paths.distinct_of)


def _recover_item(state: tuple[_Recovery, float], seq_ids: list[int]) -> list[Cells | None]:
    """TrjRecovery of the cut distinct sequences ``seq_ids`` (one work item)."""
    recovery, p = state
    return [recovery.best_subsequence(seq_id, _min_length(p, recovery.length(seq_id)))
            for seq_id in seq_ids]


def support(
    pattern: Sequence[int], sequences: Sequence[Sequence[int]], owners: Sequence[Hashable]
) -> int:
    """Count the distinct owners having a sequence that contains ``pattern`` (Definition 4).

    A plain O(total length) reference implementation, meant for tests and checks.

    Parameters
    ----------
    pattern : sequence of int
        Candidate sub-trajectory; the empty pattern is contained in every sequence.
    sequences : sequence of sequence of int
        Generalized trajectories.
    owners : sequence of hashable
        Owner of each sequence.

    Returns
    -------
    int
        Number of distinct owners ``o`` with some sequence ``T`` of ``o`` such that
        ``pattern`` is a subsequence of ``T``.

    Raises
    ------
    InputError
        If ``sequences`` and ``owners`` have different lengths.

    References
    ----------
    .. [1] Monreale et al., "Movement Data Anonymity through Generalization",
       Trans. Data Privacy 3 (2010), Definition 4.
    """
    if len(sequences) != len(owners):
        raise InputError(
            f"got {len(sequences)} sequences but {len(owners)} owners; pass one owner per sequence"
        )
    wanted = tuple(pattern)
    return len(
        {owner for seq, owner in zip(sequences, owners, strict=True) if _contains(seq, wanted)}
    )


# --------------------------------------------------------------------------- validation


def _validate(
    sequences: Sequence[Sequence[int]], owners: Sequence[Hashable] | np.ndarray, k: int
) -> tuple[ConcatenatedSequences, np.ndarray]:
    """Check the common arguments; return the sequences end to end and dense owner ids."""
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 2:
        raise InputError(f"k must be an integer >= 2 (k-anonymity needs a crowd), got {k!r}")
    if len(sequences) != len(owners):
        raise InputError(
            f"got {len(sequences)} sequences but {len(owners)} owners; pass one owner per sequence"
        )
    if isinstance(sequences, ConcatenatedSequences):
        empty = np.flatnonzero(sequences.lengths() <= 0)
        if empty.size:
            raise InputError(f"sequence {empty[0]} is empty; drop empty trajectories "
                             "before anonymizing")
        return sequences, _dense_owners(owners)
    seqs = [_as_cells(i, seq) for i, seq in enumerate(sequences)]
    lengths = np.fromiter(map(len, seqs), dtype=np.int64, count=len(seqs))
    try:
        flat = np.fromiter(chain.from_iterable(seqs), dtype=np.int64, count=int(lengths.sum()))
    except OverflowError:
        raise InputError("cell ids must fit in a signed 64-bit integer") from None
    return ConcatenatedSequences(flat, np.r_[0, np.cumsum(lengths)]), _dense_owners(owners)


def _dense_owners(owners: Sequence[Hashable] | np.ndarray) -> np.ndarray:
    """Owners numbered 0, 1, ... (equal owners, equal numbers)."""
    if isinstance(owners, np.ndarray) and np.issubdtype(owners.dtype, np.integer):
        return np.unique(owners, return_inverse=True)[1].reshape(-1)
    dense: dict[Hashable, int] = {}
    try:
        return np.array([dense.setdefault(owner, len(dense)) for owner in owners],
                        dtype=np.int64)
    except TypeError as exc:
        raise InputError(f"owners must be hashable person ids: {exc}") from None


def _as_cells(index: int, seq: Sequence[int]) -> Cells:
    """Convert one input sequence to a tuple of Python ints, rejecting empties and non-ints."""
    try:
        cells = tuple(map(operator.index, seq))
    except TypeError as exc:
        raise InputError(f"sequence {index} must hold integer cell ids: {exc}") from None
    if not cells:
        raise InputError(f"sequence {index} is empty; drop empty trajectories before anonymizing")
    return cells


def _check_p(p: float) -> None:
    """Reject a recovery fraction outside (0, 1] (NaN included)."""
    if isinstance(p, bool) or not isinstance(p, int | float | np.floating) or not 0 < p <= 1:
        raise InputError(f"p must be a fraction in (0, 1], e.g. 0.4; got {p!r}")


def _min_length(p: float, length: int) -> int:
    """Smallest recovered length that keeps at least ``p`` of ``length`` cells (>= 1)."""
    return max(1, math.ceil(p * length - _P_EPSILON))


# --------------------------------------------------------------------------- prefix tree


@dataclass(frozen=True)
class _Paths:
    """The input's paths in the prefix tree: its distinct sequences, and how deep each
    survives the cut of the nodes of support < k."""

    distinct: list[Cells]  # by first occurrence in the input, cells coded (see values)
    distinct_of: np.ndarray  # of each input sequence
    depth: np.ndarray  # of each distinct sequence's deepest node of support >= k
    values: np.ndarray | None  # the cell id of each code; None: codes are the ids

    def decoded(self, chosen: list[Cells | None]) -> list[Cells | None]:
        """``chosen`` sequences of coded cells in cell ids."""
        if self.values is None:
            return chosen
        values = self.values
        return [None if cells is None else tuple(values[list(cells)].tolist())
                for cells in chosen]

    def owners(self, owner_ids: np.ndarray) -> ConcatenatedSequences:
        """The distinct owners of each distinct sequence (ascending)."""
        base = int(owner_ids.max()) + 1
        pairs = distinct_values(self.distinct_of * base + owner_ids)
        starts = np.searchsorted(pairs // base, np.arange(len(self.distinct) + 1))
        return ConcatenatedSequences(pairs % base, starts)


def _walk_prefix_tree(seqs: ConcatenatedSequences, owner_ids: np.ndarray, k: int) -> _Paths:
    """Walk the prefix tree of ``seqs`` level by level, keeping only the current depth.

    A node at depth d is (node at depth d-1, cell). It survives TreePruning_cut when its
    parent did and its support (distinct owners of the sequences through it) is >= k: a
    surviving node's support counted among the sequences through it is its true support.
    A sequence's path ends at a node no other sequence's path ends at unless it is the same
    sequence, which gives the distinct sequences without hashing a tuple per input.
    """
    lengths, starts = seqs.lengths(), seqs.starts[:-1]
    cells, values = _cell_codes(seqs.flat)
    base = int(cells.max(initial=0)) + 1
    node = np.zeros(lengths.size, dtype=np.int64)
    survives = np.ones(lengths.size, dtype=bool)
    depth = np.zeros(lengths.size, dtype=np.int64)
    end = np.zeros(lengths.size, dtype=np.int64)  # the end node, numbered over all levels
    alive, level, numbered = np.arange(lengths.size), 0, 0
    while alive.size:
        keys = node[alive] * base + cells[starts[alive] + level]
        found, child = np.unique(keys, return_inverse=True)
        child = child.reshape(-1)
        live = survives[alive]  # one value for all sequences through a node
        support = _distinct_owner_counts(child[live], owner_ids[alive[live]], found.size)
        survives[alive] = live & (support[child] >= k)
        level += 1
        depth[alive[survives[alive]]] = level
        node[alive] = child
        ending = lengths[alive] == level
        end[alive[ending]] = numbered + child[ending]
        numbered += found.size
        alive = alive[~ending]
    distinct_of, first = _first_occurrence_numbers(end)
    bounds = zip(starts[first].tolist(), (starts[first] + lengths[first]).tolist(), strict=True)
    return _Paths([tuple(cells[a:b].tolist()) for a, b in bounds], distinct_of, depth[first],
                  values)


def _cell_codes(flat: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """The cells as small non-negative codes, and the cell id of each code (None when the
    codes are the ids). Tree keys are node * (largest code + 1) + code, and recovery marks
    a sequence's cells in an array as long as the codes' range: ids in [0, 2**24) are used
    as they are, any others are renumbered 0..C-1."""
    if flat.size and (int(flat.min()) < 0 or int(flat.max()) >= _LARGEST_PLAIN_CELL):
        values, codes = np.unique(flat, return_inverse=True)
        return codes.reshape(-1), values
    return flat, None


def _first_occurrence_numbers(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Number the distinct ``values`` 0, 1, ... in order of first occurrence: the number of
    each value, and where each number first occurs."""
    _, first, inverse = np.unique(values, return_index=True, return_inverse=True)
    order = np.argsort(first)
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return rank[inverse.reshape(-1)], first[order]


def _distinct_owner_counts(groups: np.ndarray, owner_ids: np.ndarray,
                           n_groups: int) -> np.ndarray:
    """Number of distinct owners in each group id 0..n_groups-1."""
    if not groups.size:
        return np.zeros(n_groups, dtype=np.int64)
    base = int(owner_ids.max()) + 1
    pairs = np.sort(groups * base + owner_ids)  # np.unique's hash path is far slower here
    pairs = pairs[np.concatenate(([True], pairs[1:] != pairs[:-1]))]
    return np.bincount(pairs // base, minlength=n_groups)


# --------------------------------------------------------------------------- recovery


# ClosestLCS compares a cut sequence with at most this many other sequences, those with
# the largest overlap bound. Exact whenever fewer qualify (every test and oracle input);
# on week-long taxi shifts (T-Drive: up to 3,000 cells, hundreds of candidates each) it
# is what keeps KAM_REC near-linear. It can only make a recovery shorter, never less
# private: every recovered sequence is still checked for support >= k.
MAX_LCS_CANDIDATES = 32


class _Recovery:
    """TrjRecovery over the distinct input sequences, with an inverted index and memos."""

    def __init__(self, distinct: list[Cells], owners: ConcatenatedSequences, k: int,
                 max_candidates: int) -> None:
        self._k, self._max_candidates = k, max_candidates
        self._distinct, self._owners = distinct, owners
        n_owners = owners.lengths()
        # The owner of each distinct sequence, or -1 when several persons made it.
        self._sole_owner = np.where(n_owners == 1, owners.flat[owners.starts[:-1]], -1)
        self._postings = _Postings(distinct)
        self._occurrences = _Occurrences(distinct)
        # The cells of the sequence being recovered (set and cleared by each recovery).
        self._in_seq = np.zeros(self._occurrences.max_cell + 1, dtype=bool)
        self._cell_support = {cell: self._owners_of_all(self._postings.holders(cell))
                              for cell in self._postings.cells()}
        self._supported: dict[Cells, bool] = {}

    def length(self, seq_id: int) -> int:
        """Number of cells of distinct sequence ``seq_id``."""
        return len(self._distinct[seq_id])

    def _owners_of_all(self, seq_ids: np.ndarray) -> int:
        """Distinct owners of the sequences ``seq_ids``."""
        starts = self._owners.starts
        held = ranges(starts[seq_ids], starts[seq_ids + 1] - starts[seq_ids])
        return int(distinct_values(self._owners.flat[held]).size)

    def best_subsequence(self, seq_id: int, min_len: int) -> Cells | None:
        """Longest k-supported LCS of distinct sequence ``seq_id`` with another, or None.

        Candidates are visited by decreasing overlap bound, and the scan stops as soon
        as no remaining bound can beat the best supported candidate found so far.
        """
        seq = self._distinct[seq_id]
        wanted = self._wanted(seq)
        if sum(wanted.values()) < min_len:
            return None
        masks = _match_masks(seq)
        # Cells absent from seq cannot match: dropped from each candidate with numpy
        # before the bit-parallel LCS loop (candidates are often hundreds of cells long).
        self._in_seq[list(masks)] = True
        try:
            return self._closest_supported_lcs(seq_id, wanted, masks, min_len)
        finally:
            self._in_seq[list(masks)] = False

    def _closest_supported_lcs(self, seq_id: int, wanted: Counter[int], masks: dict[int, int],
                               min_len: int) -> Cells | None:
        """ClosestLCS: the longest k-supported LCS over the candidates, by decreasing bound
        (cells of ``seq_id`` marked in ``_in_seq``)."""
        seq, in_seq = self._distinct[seq_id], self._in_seq
        full = (1 << len(seq)) - 1
        best, best_len = None, min_len - 1
        candidates = self._postings.by_overlap(wanted, min_len, exclude=seq_id,
                                               limit=self._max_candidates)
        for other, bound in candidates:
            if bound <= best_len:
                break
            cells = self._occurrences.cells_of(other)
            common, columns = _lcs_columns(masks, len(seq), tuple(cells[in_seq[cells]].tolist()))
            candidate_len = len(seq) - (columns[-1] & full).bit_count()
            if candidate_len > best_len:
                candidate = _lcs_backtrack(seq, common, columns)
                if self._is_supported(candidate, seq_id, other):
                    best, best_len = candidate, candidate_len
        return best

    def _wanted(self, seq: Cells) -> Counter[int]:
        """The cells of ``seq`` that a publishable candidate may hold, with their counts.

        Only cells visited by at least k owners count: every cell of a k-supported
        pattern is, so the overlap over those cells still bounds any candidate that can
        be published, and is tighter. When they are fewer than ``min_len``, nothing of
        ``seq`` can be recovered and no LCS is computed. (On T-Drive, taxi shifts of
        hundreds of cells are mostly this case.)
        """
        return Counter(cell for cell in seq if self._cell_support[cell] >= self._k)

    def _is_supported(self, pattern: Cells, seq_id: int, other: int) -> bool:
        """Memoized ``support(pattern) >= k`` over the whole input.

        ``pattern`` is the LCS of the sequences ``seq_id`` and ``other``, so both contain
        it: their owners alone may already reach k, and a cell held by fewer than k
        owners rules the pattern out; only the rest needs a scan.
        """
        known = self._supported.get(pattern)
        if known is None:
            if len(set(self._owners[seq_id]).union(self._owners[other])) >= self._k:
                known = True
            elif min(map(self._cell_support.__getitem__, pattern)) < self._k:
                known = False
            else:
                known = self._count_owners(pattern, seq_id) >= self._k
            self._supported[pattern] = known
        return known

    def _count_owners(self, pattern: Cells, seq_id: int) -> int:
        """Distinct owners containing ``pattern``, counted only up to k (enough to decide).
        ``seq_id`` is a sequence known to contain it."""
        found = set(self._owners[seq_id])
        held = self._postings.holding(pattern)
        # By slices, lowest ids first: a pattern is mostly decided by its first holders.
        for start in range(0, held.size, _HOLDERS_AT_ONCE):
            holders = self._occurrences.containing(
                pattern, held[start:start + _HOLDERS_AT_ONCE])
            sole = self._sole_owner[holders]
            found.update(distinct_values(sole[sole >= 0]).tolist())
            for holder in holders[sole < 0].tolist():
                if len(found) >= self._k:
                    break
                found.update(self._owners[holder])
            if len(found) >= self._k:
                break
        return len(found)


class _Postings:
    """For each cell, the distinct sequences holding it (ids ascending) and those holding
    it more than once; for each distinct sequence, the set of its cells as bits (within
    ``_BITS_BUDGET_BYTES``).

    ClosestLCS needs, for one ``T``, the other sequences by decreasing overlap bound
    ``|T ∩ U|`` (multisets), ties by id, but only as far as its scan goes: usually the
    few sequences of the highest bounds. Counting the bound of every sequence sharing a
    cell with ``T`` (a pass over all of ``T``'s postings, which grow with the input)
    gave recovery's quadratic term a large constant. Here a sequence of bound at least b
    holds one of any set of ``T``'s cells making up more than ``|T| - b`` of its cells,
    so the sequences of the highest bounds come from the postings of ``T``'s rarest
    cells, one more cell per lower level (on a city of 1M fixes, the rarest postings
    are 1/22 of all), and their bounds from the bits, a popcount per word of ``T``.
    Memory: one bit per (distinct sequence, cell), plus the postings. Recovery stays
    quadratic in the worst case: the rarest postings grow with the input too.
    """

    def __init__(self, distinct: list[Cells]) -> None:
        ids: dict[int, list[int]] = {}
        counts: dict[int, list[int]] = {}
        for seq_id, seq in enumerate(distinct):
            for cell, n in Counter(seq).items():
                ids.setdefault(cell, []).append(seq_id)
                counts.setdefault(cell, []).append(n)
        self._ids = {cell: np.array(found, dtype=np.int64) for cell, found in ids.items()}
        # The sequences holding a cell more than once (T-Drive's taxis revisit cells), and
        # how many times more: the part of a bound that bits cannot count.
        self._again: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        for cell, found in counts.items():
            times = np.array(found, dtype=np.int64)
            if (times > 1).any():
                self._again[cell] = (self._ids[cell][times > 1], times[times > 1] - 1)
        self._size = len(distinct)
        self._bit = {cell: bit for bit, cell in enumerate(sorted(ids))}
        # Word w of every sequence's bits in one array: a bound gathers only T's words.
        # Past the budget (very many cells and sequences), no bits: every T is counted
        # over all its postings, as the lazy way's fall-back does.
        shape = (max(1, -(-len(ids) // 64)), len(distinct))
        self._words: np.ndarray | None = None
        if shape[0] * shape[1] * 8 <= _BITS_BUDGET_BYTES:
            self._words = np.zeros(shape, dtype=np.uint64)
            for cell, holders in self._ids.items():
                word, bit = divmod(self._bit[cell], 64)
                self._words[word, holders] |= np.uint64(1 << bit)

    def cells(self) -> Iterable[int]:
        """Every cell some sequence holds."""
        return self._ids.keys()

    def holders(self, cell: int) -> np.ndarray:
        """Ids (ascending) of the distinct sequences holding ``cell``."""
        return self._ids[cell]

    def _mask(self, cells: Iterable[int]) -> list[tuple[int, np.uint64]]:
        """The words holding ``cells``, and their bits there."""
        words: dict[int, int] = {}
        for cell in set(cells):
            word, bit = divmod(self._bit[cell], 64)
            words[word] = words.get(word, 0) | 1 << bit
        return [(word, np.uint64(bits)) for word, bits in sorted(words.items())]

    def _held(self, seq_ids: np.ndarray, mask: list[tuple[int, np.uint64]],
              repeated: list[tuple[int, int]]) -> np.ndarray:
        """The overlap bound of each of ``seq_ids`` with T: how many of T's cells (``mask``)
        it holds, plus, for each cell T holds 1 + m times (``repeated``: (cell, m)), the
        times more than once it holds that cell, up to m."""
        assert self._words is not None  # only the lazy way calls it
        held = np.zeros(seq_ids.size, dtype=np.int64)
        for word, bits in mask:
            held += np.bitwise_count(self._words[word].take(seq_ids) & bits)
        for cell, more in repeated:
            if cell in self._again:
                again, times = self._again[cell]
                at = np.minimum(np.searchsorted(again, seq_ids), again.size - 1)
                hit = again[at] == seq_ids
                held[hit] += np.minimum(times[at[hit]], more)
        return held

    def by_overlap(self, wanted: Counter[int], min_len: int, exclude: int,
                   limit: int | None = None) -> Iterator[tuple[int, int]]:
        """(id, bound) of the sequences other than ``exclude`` whose overlap bound with
        ``wanted`` is at least ``min_len``, by decreasing bound, then by id; lazily, the
        highest bounds first; only the first ``limit`` of them (all: None)."""
        if limit is None:
            limit = self._size
        yield from islice(self._by_overlap(wanted, min_len, exclude, limit), limit)

    def _by_overlap(self, wanted: Counter[int], min_len: int, exclude: int,
                    limit: int) -> Iterator[tuple[int, int]]:
        rarest = sorted(wanted, key=lambda cell: (self._ids[cell].size, cell))
        total, mask = sum(wanted.values()), self._mask(wanted)
        repeated = [(cell, n - 1) for cell, n in wanted.items() if n > 1]
        # The lazy way counts a bound as a popcount per word of T's cells, plus what the
        # sequences holding a cell of T more than once add (a T repeating a cell: 29% of
        # the cut sequences of the 25M city). A T for which that would cost more than
        # counting over all its postings at once, and one that has gone past a few cells
        # (sparse data), get the rest counted at once.
        lazy = (self._words is not None
                and self._ids[rarest[0]].size * (len(mask) + len(repeated)) * _LAZY_CELLS
                < sum(self._ids[cell].size for cell in wanted))
        seen, bounds, used, covered = _NO_IDS, _NO_IDS, 0, 0
        level = total  # the highest bound not yet given
        while level >= min_len:
            if not lazy or used == _LAZY_CELLS:
                yield from self._all_by_overlap(wanted, min_len, level, exclude, limit)
                return
            while covered <= total - level:
                used, covered = used + 1, covered + wanted[rarest[used]]
                new = self._ids[rarest[used - 1]]
                new = new[new != exclude]
                seen = np.concatenate((seen, new))
                bounds = np.concatenate((bounds, self._held(new, mask, repeated)))
            # Every sequence of a bound above |T| - covered is in `seen` now (a sequence
            # seen twice, from two cells, has one bound: it is given once).
            lowest = max(min_len, total - covered + 1)
            pick = (bounds <= level) & (bounds >= lowest)
            ids, found = seen[pick], bounds[pick]
            order = np.lexsort((ids, -found))
            ids, found = ids[order], found[order]
            once = np.r_[True, ids[1:] != ids[:-1]][:ids.size]
            yield from zip(ids[once].tolist(), found[once].tolist(), strict=True)
            level = lowest - 1

    def _all_by_overlap(self, wanted: Counter[int], min_len: int, level: int,
                        exclude: int, limit: int) -> Iterator[tuple[int, int]]:
        """:meth:`by_overlap` from bound ``level`` down, its first ``limit``, counted over
        all of ``wanted``'s postings at once (one pass, as long as the number of distinct
        sequences)."""
        bounds = np.bincount(np.concatenate([self._ids[cell] for cell in wanted]),
                             minlength=self._size)
        for cell, n in wanted.items():
            if n > 1 and cell in self._again:
                again, times = self._again[cell]
                bounds[again] += np.minimum(times, n - 1)
        bounds[exclude] = 0
        ids = np.flatnonzero((bounds >= min_len) & (bounds <= level))
        ids, found = _highest(ids, bounds[ids], limit)
        yield from zip(ids.tolist(), found.tolist(), strict=True)

    def holding(self, pattern: Cells) -> np.ndarray:
        """Ids (ascending) of the sequences holding every cell of ``pattern`` (a superset
        of those containing it in order)."""
        held = self._ids[min(pattern, key=lambda cell: self._ids[cell].size)]
        if self._words is None:
            for cell in set(pattern):
                ids = self._ids[cell]
                held = held[ids[np.minimum(np.searchsorted(ids, held), ids.size - 1)] == held]
            return held
        for word, bits in self._mask(pattern):
            held = held[(self._words[word].take(held) & bits) == bits]
        return held


def _highest(ids: np.ndarray, bounds: np.ndarray,
             limit: int) -> tuple[np.ndarray, np.ndarray]:
    """The first ``limit`` of ``ids`` (ascending, each with its bound) by decreasing bound,
    then by id. Only those are sorted: a T of the city's busy streets has tens of thousands
    of candidates, of which ClosestLCS reads at most ``lcs_candidates`` (32 by default)."""
    if ids.size > limit:
        at_least = np.cumsum(np.bincount(bounds)[::-1])[::-1]  # bounds of at least b
        last = np.flatnonzero(at_least >= limit)[-1]  # the limit-th highest bound
        kept = bounds > last
        kept[np.flatnonzero(bounds == last)[:limit - np.count_nonzero(kept)]] = True
        ids, bounds = ids[kept], bounds[kept]
    order = np.argsort(-bounds, kind="stable")
    return ids[order], bounds[order]


class _Occurrences:
    """Where each cell occurs in each distinct sequence, to test one pattern against many
    sequences at once: one binary search per pattern cell instead of a scan per sequence
    (KAM_REC on T-Drive made 3.7M single tests, most failing on order, not on cells)."""

    def __init__(self, distinct: list[Cells]) -> None:
        lengths = np.fromiter(map(len, distinct), dtype=np.int64, count=len(distinct))
        self._stride = int(lengths.max(initial=0)) + 1
        cells = np.fromiter(chain.from_iterable(distinct), dtype=np.int64,
                            count=int(lengths.sum()))
        starts = np.cumsum(lengths) - lengths
        self._flat, self._bounds = cells, np.r_[starts, cells.size]
        self.max_cell = int(cells.max(initial=0))
        # key = sequence id * stride + position: sorted keys of one cell run by sequence.
        keys = (np.repeat(np.arange(len(distinct)) * self._stride - starts, lengths)
                + np.arange(cells.size))
        order = np.lexsort((keys, cells))
        cells, keys = cells[order], keys[order]
        first = np.flatnonzero(np.r_[True, cells[1:] != cells[:-1]]) if cells.size else _NO_IDS
        self._keys = dict(zip(cells[first].tolist(), np.split(keys, first[1:]), strict=True))

    def cells_of(self, seq_id: int) -> np.ndarray:
        """The cells of one distinct sequence, in order."""
        return self._flat[self._bounds[seq_id]:self._bounds[seq_id + 1]]

    def containing(self, pattern: Cells, seq_ids: np.ndarray) -> np.ndarray:
        """The ids among ``seq_ids`` whose sequence contains ``pattern`` (Definition 4),
        matched greedily: each cell at its first occurrence after the previous one."""
        ids = seq_ids
        cursor = ids * self._stride - 1  # just before each sequence's first position
        for cell in pattern:
            keys = self._keys.get(cell, _NO_IDS)
            if not keys.size:
                return _NO_IDS
            at = np.searchsorted(keys, cursor, side="right")
            following = keys[np.minimum(at, keys.size - 1)]
            ok = (at < keys.size) & (following < (ids + 1) * self._stride)
            ids, cursor = ids[ok], following[ok]
            if not ids.size:
                break
        return ids


# --------------------------------------------------------------------------- LCS


def _match_masks(seq: Cells) -> dict[int, int]:
    """Bit i of ``masks[c]`` is set iff ``seq[i] == c`` (Hyyrö's match vectors)."""
    masks: dict[int, int] = {}
    for i, cell in enumerate(seq):
        masks[cell] = masks.get(cell, 0) | (1 << i)
    return masks


def _lcs_columns(masks: dict[int, int], length: int, other: Cells) -> tuple[Cells, list[int]]:
    """Hyyrö's bit-parallel LCS columns of the sequence behind ``masks`` against ``other``.

    Python ints are the bit vectors, so one step costs O(length / word size).  Cells
    absent from the first sequence never match and leave the vector unchanged, so they
    are dropped first; the returned ``other`` is that filtered sequence.  The zero bits
    among the lowest ``i`` bits of ``columns[j]`` count LCS(first[:i], other[:j]).
    """
    other = tuple(cell for cell in other if cell in masks)
    vector = (1 << length) - 1
    columns = [vector]
    for cell in other:
        carry = vector & masks[cell]
        vector = (vector + carry) | (vector - carry)
        columns.append(vector)
    return other, columns


def _lcs_backtrack(first: Cells, second: Cells, columns: list[int]) -> Cells:
    """One longest common subsequence, read back from :func:`_lcs_columns` in O(len + len)."""
    picked: list[int] = []
    i, j = len(first), len(second)
    while i and j:
        if first[i - 1] == second[j - 1]:
            picked.append(first[i - 1])
            i, j = i - 1, j - 1
            continue
        below = (1 << (i - 1)) - 1
        up = i - 1 - (columns[j] & below).bit_count()  # LCS(first[:i-1], second[:j])
        left = i - (columns[j - 1] & (2 * below + 1)).bit_count()  # LCS(first[:i], second[:j-1])
        if up >= left:
            i -= 1
        else:
            j -= 1
    return tuple(reversed(picked))


def _contains(seq: Sequence[int], pattern: Sequence[int]) -> bool:
    """True if ``pattern`` is a subsequence of ``seq`` (Definition 4)."""
    remaining = iter(seq)
    return all(cell in remaining for cell in pattern)
