"""Measure and limit homogeneity: published prefixes that have a single continuation.

A k-anonymous set of cell sequences (KAM_CUT, KAM_REC, the grid baseline) guarantees that
every published prefix P is shared by at least k persons, but not that those persons
went different ways after P. When every published sequence through P continues with the
same cell c, whoever knows that a target took P learns that they went on to c, although k
persons did: the prefix is *homogeneous*, the sequence analogue of the homogeneity attack
on k-anonymous tables that l-diversity [2]_ answers.

Both functions see the published sequences as a prefix tree (trie): its nodes of depth
1 and more are the published prefixes, and a prefix's *continuations* are the distinct
cells that follow it in some published sequence (its children). The root (the empty
prefix) is not a prefix: the first cells are what the release publishes anyway.

* :func:`homogeneity` counts the prefixes with at least one continuation and those with
  exactly one (the metric ``homogeneous_prefix_share`` of a release);
* :func:`limit_continuations` enforces at least ``min_continuations`` distinct
  continuations per prefix by truncating, top-down, every sequence through a prefix with
  fewer (but at least one) to that prefix.

Truncation keeps k-anonymity: the support of a sequence (distinct persons whose input
contains it, seed 000 Definition 4) can only grow when the sequence is shortened to a
prefix, since every sequence containing S contains each prefix of S.

References
----------
.. [1] A. Monreale, G. Andrienko, N. Andrienko, F. Giannotti, D. Pedreschi, S. Rinzivillo,
   S. Wrobel, "Movement Data Anonymity through Generalization", Transactions on Data
   Privacy 3 (2010), 91-121: Definitions 4 and 9, the prefix tree of Section 6.2.
.. [2] A. Machanavajjhala, D. Kifer, J. Gehrke, M. Venkitasubramaniam, "l-Diversity:
   Privacy Beyond k-Anonymity", ACM TKDD 1(1) (2007), Section 3.1 (homogeneity attack).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from anonymizers.errors import InputError

__all__ = ["Homogeneity", "homogeneity", "limit_continuations"]


@dataclass(frozen=True)
class Homogeneity:
    """How many published prefixes have a continuation, and how many have exactly one.

    Attributes
    ----------
    continued : int
        Distinct published prefixes (length >= 1) followed by at least one cell.
    homogeneous : int
        Of those, the prefixes followed by exactly one distinct cell.
    """

    continued: int
    homogeneous: int

    @property
    def share(self) -> float:
        """``homogeneous / continued``; NaN when no prefix has a continuation."""
        return self.homogeneous / self.continued if self.continued else math.nan


class _Trie:
    """The prefix tree of some sequences: node 0 is the root, ``path[i][d]`` the node of
    the prefix of length d + 1 of sequence i, ``children[n]`` the cells following node n."""

    def __init__(self, sequences: Sequence[Sequence[int]], keep_paths: bool = True) -> None:
        self.children: list[dict[int, int]] = [{}]
        # The paths hold a node per element: only the truncation needs them.
        self.path: list[list[int]] = []
        for cells in sequences:
            path = self._insert(cells)
            if keep_paths:
                self.path.append(path)

    def _insert(self, cells: Sequence[int]) -> list[int]:
        node, path = 0, []
        for cell in cells:
            following = self.children[node]
            if cell not in following:
                following[cell] = len(self.children)
                self.children.append({})
            node = following[cell]
            path.append(node)
        return path

    def continuations(self, node: int) -> int:
        return len(self.children[node])


def homogeneity(sequences: Sequence[Sequence[int]]) -> Homogeneity:
    """Count the published prefixes with one or more, and with exactly one, continuation.

    Parameters
    ----------
    sequences : sequence of sequence of int
        The published cell sequences (duplicates allowed: each distinct prefix counts once).

    Returns
    -------
    Homogeneity
        The prefixes with at least one continuation and those with exactly one.

    References
    ----------
    .. [1] Monreale et al., Trans. Data Privacy 3 (2010), Section 6.2 (prefix tree).

    Examples
    --------
    >>> h = homogeneity([(1, 2, 3), (1, 2, 4), (5, 6)])
    >>> (h.continued, h.homogeneous)  # <1> -> 2; <1, 2> -> 3 or 4; <5> -> 6
    (3, 2)
    """
    trie = _Trie(sequences, keep_paths=False)
    counts = [trie.continuations(node) for node in range(1, len(trie.children))]
    return Homogeneity(continued=sum(1 for n in counts if n >= 1),
                       homogeneous=sum(1 for n in counts if n == 1))


def limit_continuations(sequences: Sequence[Sequence[int]],
                        min_continuations: int) -> list[tuple[int, ...]]:
    """Truncate sequences so that no published prefix has 1 .. min_continuations - 1
    distinct continuations.

    Top-down in the prefix tree of ``sequences``, a prefix P with between 1 and
    ``min_continuations - 1`` distinct continuations has every sequence through it cut to
    P, which then has none. One pass over each sequence suffices: cutting below P never
    changes the continuations of P's ancestors (P stays) nor of other branches, so each
    sequence is cut at the first prefix on its path that has too few continuations.

    Parameters
    ----------
    sequences : sequence of sequence of int
        Published cell sequences.
    min_continuations : int
        Fewest distinct continuations a continued prefix may have; 1 changes nothing.

    Returns
    -------
    list of tuple of int
        One sequence per input, in input order: the input or one of its prefixes (never
        empty when the input is not). Each output's support is at least its input's.

    Raises
    ------
    InputError
        If ``min_continuations`` is not an integer of at least 1.

    References
    ----------
    .. [1] Monreale et al., Trans. Data Privacy 3 (2010), Definition 4 (containment, by
       which a prefix is supported by everyone supporting the sequence).

    Examples
    --------
    >>> limit_continuations([(1, 2, 3), (1, 2, 4), (1, 5), (6, 7, 8)], 2)
    [(1, 2, 3), (1, 2, 4), (1, 5), (6,)]
    >>> limit_continuations([(1, 2, 3), (1, 2, 4), (1, 5)], 3)
    [(1,), (1,), (1,)]
    """
    if isinstance(min_continuations, bool) or not isinstance(min_continuations, int) \
            or min_continuations < 1:
        raise InputError(f"min_continuations must be an integer of at least 1, "
                         f"got {min_continuations!r}")
    if min_continuations == 1:
        return [tuple(cells) for cells in sequences]
    trie = _Trie(sequences)
    result = []
    for cells, path in zip(sequences, trie.path, strict=True):
        depth = next((d + 1 for d, node in enumerate(path)
                      if 1 <= trie.continuations(node) < min_continuations), len(path))
        result.append(tuple(cells[:depth]))
    return result
