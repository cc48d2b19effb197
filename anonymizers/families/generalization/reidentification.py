"""Estimate a release's re-identification risk by simulating the paper's attack (Section 8.4).

The attacker of Definitions 5 and 6 (Monreale et al. 2010) knows that a person U is in the
data and has observed a sub-trajectory S of U (here: the first ``j`` points of one of U's
trajectories).  They map S onto the published cells, obtaining g(S), and pick U's
trajectory among the published sequences that contain g(S) as a subsequence
(Definition 4).  This module measures the success probability of that attack for every
observed prefix length, as in Figures 15 and 16.

References
----------
.. [1] A. Monreale, G. Andrienko, N. Andrienko, F. Giannotti, D. Pedreschi, S. Rinzivillo,
   S. Wrobel, "Movement Data Anonymity through Generalization", Transactions on Data
   Privacy 3 (2010), 91-121: Definitions 4-10, Theorem 10, Section 8.4.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain

import numpy as np

from anonymizers.counting import distinct_values
from anonymizers.errors import InputError
from anonymizers.memory import compact_type
from anonymizers.sequences import ConcatenatedSequences

__all__ = [
    "NO_CELL",
    "ConcatenatedSequences",
    "generalize_observations",
    "reidentification_risk",
    "reidentification_risk_of_sample",
    "sample_trajectories",
]

NO_CELL = -1
# A prefix state holding at least this many candidates is kept for other trajectories with
# the same prefix: only the large states of popular prefixes are worth the memory.
_SHARED_STATE_SIZE = 64
_EMPTY = np.zeros(0, dtype=np.int64)

Pattern = tuple[int, ...]
State = tuple[np.ndarray, np.ndarray]  # (candidate sequence ids, matched position in flat)


def generalize_observations(cells: Sequence[int] | np.ndarray) -> Pattern:
    """g(S): the cell of each observed point, consecutive repeats collapsed.

    Parameters
    ----------
    cells : sequence of int
        Published-cell id of each observed point in time order, :data:`NO_CELL` (-1) for a
        point in no published cell.

    Returns
    -------
    tuple of int
        The generalized sub-trajectory.  Consecutive points outside every published cell
        collapse into one ``NO_CELL``, which no published sequence contains.
    """
    values = np.asarray(cells, dtype=np.int64).reshape(-1)
    if values.size == 0:
        return ()
    keep = np.concatenate(([True], values[1:] != values[:-1]))
    return tuple(values[keep].tolist())


def reidentification_risk(
    observed_cells: Sequence[np.ndarray],
    owners: np.ndarray,
    published: Sequence[Sequence[int]],
    published_owners: np.ndarray,
    input_sequences: Sequence[Sequence[int]],
    observations: Sequence[int],
    k: int,
    max_trajectories: int | None,
    rng: np.random.Generator | int | None,
) -> dict[str, object]:
    """Re-identification probability of the first ``j`` observations, per ``j`` (Fig. 15-16).

    For every sampled input trajectory ``i`` and every ``j`` in ``observations`` with
    ``j <= len(observed_cells[i])``, the attacker knows ``S`` = the first ``j`` points and
    computes ``g(S)`` (:func:`generalize_observations`).  With

    * ``c`` = number of distinct owners of the published sequences containing ``g(S)``
      (``supp_D*(g(S))`` counted like k counts: persons, or trajectories when the owners
      are trajectory ids), and
    * ``M`` = number of distinct owners whose *input* sequence contains ``g(S)``
      (``|P_D(T)|`` of Definition 7),

    the probability is Theorem 10's::

        prob(S) = 0        if c == 0      (g(S) was suppressed: no candidate)
                = 1 / c    if c >= k      (pick U among c indistinguishable candidates)
                = 1 / M    if 0 < c < k   (U is published with probability c / M, then
                                           picked with probability 1 / c)

    Reasoning behind case 3 (Theorem 10, case 2): fewer than k candidates are only
    possible for a g(S) that is not k-harmful in D, i.e. shared by ``M >= k`` people;
    the attacker does not know which of them were published, so U is among the c
    candidates with probability c / M.  ``M >= c`` whenever each published sequence is a
    subsequence of its source's input sequence; ``max(M, c)`` guards inconsistent inputs.

    Under this project's privacy model every published sequence is contained in the
    input sequences of at least k distinct owners (the verifier's check 1).  Then any
    g(S) contained in a published sequence is contained in >= k owners' inputs, so
    ``M >= k`` in case 3, ``c >= k`` in case 2, and the maximum is ``<= 1/k`` by
    construction: the pipeline asserts it.

    Notes on what is measured.  This is the paper's prob(S): it does not look at whether
    U's own sequence is among the candidates (when it is not, the real success is 0, so
    prob(S) is an upper bound of it).  With persons as owners, ``1/c`` is the chance to
    name the right *person*; an attacker picking a *sequence* uniformly can do better
    when U owns several candidates.  A point in no published cell maps to
    :data:`NO_CELL`, which no published sequence contains, so such an S gets 0; an
    attacker who simply ignores those points would face a shorter g(S).

    Parameters
    ----------
    observed_cells : sequence of np.ndarray of int
        For each input trajectory, the published cell of each original point in time
        order (:data:`NO_CELL` = in no published cell).
    owners : np.ndarray, shape (len(observed_cells),)
        Owner of each input trajectory (person id, or trajectory id when k counts
        trajectories).
    published : sequence of sequence of int
        The published cell sequences.
    published_owners : np.ndarray, shape (len(published),)
        Owner of the source of each published sequence (known to the pipeline only).
    input_sequences : sequence of sequence of int
        Generalized sequence of each input trajectory over the published cells (for M).
    observations : sequence of int
        Numbers of observed points ``j`` to evaluate (e.g. ``range(1, 21)``), each >= 1.
    k : int
        Anonymity threshold of the release (>= 1).
    max_trajectories : int or None
        Evaluate at most this many input trajectories, sampled without replacement;
        ``None`` evaluates all of them.
    rng : np.random.Generator, int or None
        Randomness of the sample (an int seeds a generator).

    Returns
    -------
    dict
        ``k``; ``bound`` (= 1/k); ``n_trajectories`` (sampled); ``n_patterns`` (distinct
        g(S) evaluated); ``max`` (largest probability over everything, NaN if nothing was
        evaluated); ``by_observations``: one dict per ``j`` (increasing) with
        ``observations`` (= j), ``n`` (trajectories with at least j points), ``mean``,
        ``max`` and ``fraction_zero`` (NaN when ``n == 0``) with ``zero``, the count it is
        the share of (0 when ``n == 0``).

    Notes
    -----
    Containment is counted with an inverted index, cell -> sorted positions in the
    concatenation of all sequences: the candidates of ``g(S) + (x,)`` are those of
    ``g(S)`` whose next occurrence of ``x`` after the matched position lies in the same
    sequence (greedy leftmost matching decides subsequence containment), one
    ``np.searchsorted`` per step.  Each trajectory's prefixes are extended one cell at a
    time; probabilities are memoized by g(S), and the large candidate sets of popular
    prefixes are shared between trajectories.

    References
    ----------
    .. [1] Monreale et al., Trans. Data Privacy 3 (2010), Definitions 4-10, Theorem 10,
       Section 8.4 and Figures 15-16.
    """
    _check_arguments(observed_cells, owners, published, published_owners, input_sequences, k)
    chosen = sample_trajectories(len(observed_cells), max_trajectories, rng)
    return reidentification_risk_of_sample(
        [observed_cells[i] for i in chosen.tolist()], owners, published, published_owners,
        input_sequences, observations, k)


def reidentification_risk_of_sample(
    observed_cells: Sequence[np.ndarray],
    owners: np.ndarray,
    published: Sequence[Sequence[int]],
    published_owners: np.ndarray,
    input_sequences: Sequence[Sequence[int]],
    observations: Sequence[int],
    k: int,
) -> dict[str, object]:
    """:func:`reidentification_risk` of trajectories already drawn (no sampling here).

    Parameters
    ----------
    observed_cells : sequence of np.ndarray of int
        The observed cells of the attacked trajectories only (e.g. those of
        :func:`sample_trajectories`, in that order). Only the first ``max(observations)``
        cells of each are looked at, so a caller may pass no more than those.
    owners, published, published_owners, input_sequences, observations, k
        As in :func:`reidentification_risk`: ``owners`` and ``input_sequences`` describe
        *every* input trajectory (they decide ``M``).

    Returns
    -------
    dict
        As :func:`reidentification_risk`, ``n_trajectories`` being ``len(observed_cells)``.
    """
    _check_inputs(owners, published, published_owners, input_sequences, k)
    wanted = _observation_counts(observations)
    search = _Attack(
        _SubsequenceIndex(published, published_owners),
        _SubsequenceIndex(input_sequences, owners),
        k,
    )
    values: dict[int, list[float]] = {j: [] for j in wanted}
    for cells in observed_cells:
        for j, prob in search.trajectory(cells, wanted):
            values[j].append(prob)
    return _summary(values, k, len(observed_cells), len(search.memo))


# --------------------------------------------------------------------------- the attack


class _SubsequenceIndex:
    """All sequences concatenated, with each cell's sorted positions, for prefix matching.

    A state is (ids of the sequences containing the current pattern, position in the
    concatenation where the greedy leftmost match of its last cell ended).
    """

    def __init__(self, sequences: Sequence[Sequence[int]], owners: np.ndarray) -> None:
        if isinstance(sequences, ConcatenatedSequences):
            lengths, flat = sequences.lengths(), sequences.flat
        else:
            lengths = np.fromiter(map(len, sequences), dtype=np.int64, count=len(sequences))
            flat = np.fromiter(chain.from_iterable(sequences), dtype=np.int64,
                               count=lengths.sum())
        self._end = np.cumsum(lengths)  # exclusive end of each sequence in ``flat``
        # Sequence numbers and positions as int32 where they fit: at 25M fixes each array
        # over the input's 16 million cells took 128 MB as int64.
        self._sequence = np.repeat(np.arange(len(sequences), dtype=compact_type(len(sequences))),
                                   lengths)
        self._owner = np.unique(np.asarray(owners), return_inverse=True)[1].reshape(-1)
        # stable: positions stay sorted per cell
        order = np.argsort(flat, kind="stable").astype(compact_type(flat.size))
        by_cell = flat[order]
        # Runs of one cell along the sorted cells (np.unique would sort them again).
        starts = np.flatnonzero(np.concatenate(([True], by_cell[1:] != by_cell[:-1]))) \
            if by_cell.size else np.zeros(0, dtype=np.int64)
        cells = by_cell[starts]
        del by_cell
        stops = np.append(starts[1:], order.size)[: starts.size]  # none: none
        # Negative ids (NO_CELL, gap symbols) are never indexed, so they match nothing.
        self._positions = {
            int(cell): order[start:stop]
            for cell, start, stop in zip(cells.tolist(), starts, stops, strict=True)
            if cell >= 0
        }

    def first(self, cell: int) -> State:
        """Sequences containing ``cell``, matched at its first occurrence."""
        positions = self._positions.get(cell)
        if positions is None:
            return _EMPTY, _EMPTY
        sequence = self._sequence[positions]
        first = np.concatenate(([True], sequence[1:] != sequence[:-1]))
        return sequence[first], positions[first]

    def advance(self, state: State, cell: int) -> State:
        """Candidates still matching after appending ``cell`` to the pattern."""
        sequences, matched = state
        positions = self._positions.get(cell)
        if positions is None or sequences.size == 0:
            return _EMPTY, _EMPTY
        following = np.searchsorted(positions, matched, side="right")
        exists = following < positions.size
        after = positions[np.minimum(following, positions.size - 1)]
        keep = exists & (after < self._end[sequences])
        return sequences[keep], after[keep]

    def owners(self, state: State) -> int:
        """Number of distinct owners among the candidate sequences."""
        return int(distinct_values(self._owner[state[0]]).size)


class _Prefixes:
    """One trajectory's g(S) prefixes matched against one index, extended lazily."""

    def __init__(
        self, index: _SubsequenceIndex, pattern: Pattern, shared: dict[Pattern, State]
    ) -> None:
        self._index, self._pattern, self._shared = index, pattern, shared
        self._length, self._state = 0, (_EMPTY, _EMPTY)

    def owners(self, length: int) -> int:
        """Distinct owners of the sequences containing the first ``length`` cells."""
        while self._length < length:
            self._length += 1
            key = self._pattern[: self._length]
            state = self._shared.get(key)
            if state is None:
                cell = self._pattern[self._length - 1]
                state = (
                    self._index.first(cell)
                    if self._length == 1
                    else self._index.advance(self._state, cell)
                )
                if state[0].size >= _SHARED_STATE_SIZE:
                    self._shared[key] = state
            self._state = state
        return self._index.owners(self._state)


class _Attack:
    """Theorem 10's probability for every observed prefix, memoized by g(S)."""

    def __init__(self, published: _SubsequenceIndex, inputs: _SubsequenceIndex, k: int) -> None:
        self._published, self._inputs, self._k = published, inputs, k
        self.memo: dict[Pattern, float] = {}
        self._shared: tuple[dict[Pattern, State], dict[Pattern, State]] = ({}, {})

    def trajectory(self, cells: np.ndarray, wanted: list[int]) -> list[tuple[int, float]]:
        """(j, prob) for every wanted j that the trajectory has enough points for."""
        points = np.asarray(cells, dtype=np.int64).reshape(-1)
        usable = [j for j in wanted if j <= points.size]
        if not usable:
            return []
        head = points[: usable[-1]]
        changes = np.flatnonzero(head[1:] != head[:-1]) + 1
        pattern = generalize_observations(head)
        # g(first j points) is the pattern's prefix of 1 + (changes before point j) cells.
        lengths = 1 + np.searchsorted(changes, usable, side="left")
        published = _Prefixes(self._published, pattern, self._shared[0])
        inputs = _Prefixes(self._inputs, pattern, self._shared[1])
        result = []
        for j, length in zip(usable, lengths.tolist(), strict=True):
            key = pattern[:length]
            if key not in self.memo:
                self.memo[key] = self._probability(published, inputs, length)
            result.append((j, self.memo[key]))
        return result

    def _probability(self, published: _Prefixes, inputs: _Prefixes, length: int) -> float:
        """prob(S) of Theorem 10 for the pattern prefix of ``length`` cells."""
        candidates = published.owners(length)
        if candidates == 0:
            return 0.0
        if candidates >= self._k:
            return 1.0 / candidates
        return 1.0 / max(inputs.owners(length), candidates)


# --------------------------------------------------------------------------- helpers


def _check_arguments(
    observed_cells: Sequence[np.ndarray],
    owners: np.ndarray,
    published: Sequence[Sequence[int]],
    published_owners: np.ndarray,
    input_sequences: Sequence[Sequence[int]],
    k: int,
) -> None:
    """Reject mismatched lengths and a meaningless k."""
    if len(observed_cells) != len(owners):
        raise InputError(
            "observed_cells, owners and input_sequences must describe the same trajectories: "
            f"got {len(observed_cells)}, {len(owners)}, {len(input_sequences)}"
        )
    _check_inputs(owners, published, published_owners, input_sequences, k)


def _check_inputs(
    owners: np.ndarray,
    published: Sequence[Sequence[int]],
    published_owners: np.ndarray,
    input_sequences: Sequence[Sequence[int]],
    k: int,
) -> None:
    """Reject mismatched lengths (without the observations) and a meaningless k."""
    if len(owners) != len(input_sequences):
        raise InputError(
            "owners and input_sequences must describe the same trajectories: "
            f"got {len(owners)}, {len(input_sequences)}"
        )
    if len(published) != len(published_owners):
        raise InputError(
            f"got {len(published)} published sequences but {len(published_owners)} owners"
        )
    if isinstance(k, bool) or int(k) != k or k < 1:
        raise InputError(f"k must be a positive integer, got {k!r}")


def _observation_counts(observations: Sequence[int]) -> list[int]:
    """Distinct, increasing numbers of observed points, each >= 1."""
    wanted = sorted({int(j) for j in observations})
    if wanted and wanted[0] < 1:
        raise InputError(f"numbers of observations must be >= 1, got {wanted[0]}")
    return wanted


def sample_trajectories(
    n: int, max_trajectories: int | None, rng: np.random.Generator | int | None
) -> np.ndarray:
    """The trajectories :func:`reidentification_risk` attacks out of ``n``, increasing.

    Parameters
    ----------
    n : int
        Number of input trajectories.
    max_trajectories : int or None
        At most this many are drawn without replacement; ``None`` (or ``>= n``) takes all,
        without drawing from ``rng``.
    rng : np.random.Generator, int or None
        Randomness of the sample (an int seeds a generator).

    Returns
    -------
    np.ndarray of int
        Sorted trajectory indices. A caller that knows only ``n`` can draw them first and
        fetch the fixes of these trajectories only.
    """
    if max_trajectories is None or max_trajectories >= n:
        return np.arange(n)
    if max_trajectories < 0:
        raise InputError(f"max_trajectories must be >= 0 or None, got {max_trajectories}")
    chosen = np.random.default_rng(rng).choice(n, size=max_trajectories, replace=False)
    return np.sort(chosen)


def _summary(
    values: dict[int, list[float]], k: int, n_trajectories: int, n_patterns: int
) -> dict[str, object]:
    """Per-j statistics and the overall maximum."""
    rows = [_row(j, np.asarray(probs, dtype=np.float64)) for j, probs in values.items()]
    maxima = [row["max"] for row in rows if row["n"]]
    return {
        "k": int(k),
        "bound": 1.0 / k,
        "n_trajectories": n_trajectories,
        "n_patterns": n_patterns,
        "max": float(max(maxima)) if maxima else float("nan"),
        "by_observations": rows,
    }


def _row(j: int, probs: np.ndarray) -> dict[str, float | int]:
    """Statistics of the probabilities of one number of observations."""
    if probs.size == 0:
        nan = float("nan")
        return {"observations": j, "n": 0, "mean": nan, "max": nan, "fraction_zero": nan,
                "zero": 0}
    return {
        "observations": j,
        "n": int(probs.size),
        "mean": float(probs.mean()),
        "max": float(probs.max()),
        "fraction_zero": float(np.mean(probs == 0)),
        "zero": int(np.count_nonzero(probs == 0)),  # the share's count, for the writer
    }
