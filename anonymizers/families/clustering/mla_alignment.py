"""MLA's alignment (seed 001, §4.2): DynamicSA (Algorithm 1) and progressive multiple SA.

Both run one dynamic programme over a *profile* (the columns aligned so far, each a set of
cells with a DGH leaf range and a point count) and a new trajectory. Cell ``[i+1, j+1]`` is
reached by generalizing column ``i`` with point ``q_j`` (diagonal), by suppressing ``q_j``
(left) or by skipping column ``i`` (up); ties go to the first of these, as ``np.argmin`` over
Algorithm 1's ``options`` does.

The left move makes a row depend on itself, so rows are swept one at a time and each row is
solved whole: with ``G[j]`` the cost of suppressing ``q_0 .. q_{j-1}``,
``S[i+1, j] = G[j] + min_{j' <= j} (A[j'] - G[j'])`` where ``A`` is the better of diagonal
and up: one running minimum (``np.minimum.accumulate``) per row. Many candidates are swept
at once by laying them end to end, each with its own ``j = 0`` slot, and lowering each
candidate's keys by a bound on their span so that the running minimum never crosses from
one candidate into the next. Costs are whole bits (DGH heights), so all of it is exact int64
arithmetic; bit lengths come from a 16-bit lookup table (exact float path beyond).

Costs. DynamicSA is Algorithm 1 as printed: generalizing ``p_i`` and ``q_j`` costs Lemma 1
(``2 * height`` of their LCA per attribute), suppressing either costs ``LS(., RT)``, the
grid's bits per point (line 3 reads ``rt(H_x)`` for y: a typo for ``H_y``). In progressive
SA the profile's columns are the longest member's points (Fig. 3 keeps its structure), and
the cost of a move is what it adds to eq. 4's loss of the cluster: joining a column of ``m``
points at height ``h`` lifts it to ``h'`` and costs ``(m + 1) h' - m h``; a point aligned
with a gap is suppressed and costs the bits per point. Skipping a column (the new member has
no point there) is free while the column can still be published, and costs the suppression
of its points, ``m (bits - h)``, once it cannot: a cluster of ``P`` persons publishes only
columns of ``k``, so a column may be skipped ``P - k`` times (the *skip budget*), and a
profile of one trajectory with budget 0 is exactly Algorithm 1's ``tr_1`` (skipping ``p_i``
suppresses it). Dropped columns leave the profile; their points are suppressed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from anonymizers.errors import InputError
from anonymizers.families.clustering.mla_loss import bit_length, lca_height

__all__ = [
    "MultipleAlignment",
    "PairAlignment",
    "Profile",
    "dynamic_sa",
    "progressive_alignment",
]

_UP, _LEFT, _DIAG = 2, 1, 0
_BLOCKED = 2**60  # cost of the diagonal into a j = 0 slot: never taken
_BITS = bit_length(np.arange(2**16)).astype(np.int8)  # bit lengths of 16-bit values


@dataclass(frozen=True, eq=False)
class PairAlignment:
    """What Algorithm 1 returns: TotLoss, GenTraj and the structure of one path on the other.

    Attributes
    ----------
    loss_bits
        ``SAmatrix[m, n]``: the minimum loss of generalizing and suppressing.
    pairs
        int64 (r, 2): indices ``(i, j)`` of ``tr_1`` and ``tr_2`` generalized together, in order.
    structure
        int64 (len(tr_1),): the index of ``tr_2`` aligned with each point of ``tr_1``, -1 for a
        space (ShoTrajStr when ``tr_1`` is the longer one).
    lo, hi
        int64 (r, 3): GenTraj, the leaf range of the LCA node of each pair on x, y and t.

    References
    ----------
    .. [1] Shaham et al., MLA, §4.2.1, Algorithm 1.
    """

    loss_bits: int
    pairs: np.ndarray
    structure: np.ndarray
    lo: np.ndarray
    hi: np.ndarray


class Profile:
    """The columns aligned so far: per column a leaf range per attribute and a point count.

    Parameters
    ----------
    cells
        int64 (L, 3): the basis trajectory's cells; each becomes a column of one point.
    bits_per_point
        Loss of suppressing one point (the grid's summed DGH depths).
    skip_budget
        How many later members may skip a column before it is dropped (its points then
        suppressed); ``None`` never drops (Fig. 3). With budget 0 every skip is Algorithm 1's
        "suppressing p_i", so a profile of one trajectory is exactly Algorithm 1's ``tr_1``.

    References
    ----------
    .. [1] Shaham et al., MLA, §4.2.1, Algorithm 1 and Fig. 3 (progressive SA).
    """

    def __init__(self, cells: np.ndarray, bits_per_point: int,
                 skip_budget: int | None = None) -> None:
        cells = _as_cells(cells)
        self.lo = cells.copy()
        self.hi = cells.copy()
        self.count = np.ones(len(cells), dtype=np.int64)
        self.skips = np.zeros(len(cells), dtype=np.int64)
        self.alive = np.ones(len(cells), dtype=bool)
        self.bits_per_point = int(bits_per_point)
        self.skip_budget = skip_budget

    def __len__(self) -> int:
        return len(self.count)

    @property
    def heights(self) -> np.ndarray:
        """int64 (L, 3): height of each column's LCA node on x, y and t."""
        return lca_height(self.lo, self.hi)

    def loss_bits(self) -> int:
        """Eq. 3-4 over the columns: LCA heights of live columns, suppression of dropped ones."""
        per_point = np.where(self.alive, self.heights.sum(axis=1), self.bits_per_point)
        return int((self.count * per_point).sum())

    def added_losses(self, cells: np.ndarray, lengths: ArrayLike) -> np.ndarray:
        """int64 (C,): the least loss each candidate would add, candidates laid end to end."""
        layout = _Layout(_as_cells(cells), np.asarray(lengths, np.int64))
        last, _ = self._sweep(layout, keep_codes=False)
        return last

    def add(self, cells: np.ndarray) -> tuple[np.ndarray, int]:
        """Align one trajectory and absorb it: its column per point (-1: suppressed), the loss.

        A column it skips counts one more skip; past the budget the column is dropped.
        """
        cells = _as_cells(cells)
        rows = np.flatnonzero(self.alive)
        last, codes = self._sweep(_Layout(cells, np.array([len(cells)])), keep_codes=True)
        pairs = _trace_back(codes, len(rows), len(cells))
        column = np.full(len(cells), -1, dtype=np.int64)
        column[pairs[:, 1]] = rows[pairs[:, 0]]
        self._absorb(cells, column)
        skipped = np.setdiff1d(rows, column)
        self.skips[skipped] += 1
        if self.skip_budget is not None:
            self.alive[skipped[self.skips[skipped] > self.skip_budget]] = False
        return column, int(last[0])

    def _sweep(self, layout: _Layout, keep_codes: bool) -> tuple[np.ndarray, np.ndarray]:
        rows = np.flatnonzero(self.alive)
        heights = self.heights[rows]
        skip = np.zeros(len(rows), dtype=np.int64)
        if self.skip_budget is not None:
            # A skip past the budget drops the column: its points go up to the root.
            dropped = (self.bits_per_point - heights.sum(axis=1)) * self.count[rows]
            skip = np.where(self.skips[rows] >= self.skip_budget, dropped, 0)
        return _sweep(self.lo[rows], heights, self.count[rows], skip, layout,
                      self.bits_per_point, keep_codes)

    def _absorb(self, cells: np.ndarray, column: np.ndarray) -> None:
        aligned = column >= 0
        cols, points = column[aligned], cells[aligned]
        self.lo[cols] = np.minimum(self.lo[cols], points)
        self.hi[cols] = np.maximum(self.hi[cols], points)
        self.count[cols] += 1


@dataclass(frozen=True, eq=False)
class MultipleAlignment:
    """The result of progressive SA over one cluster.

    Attributes
    ----------
    lo, hi, count
        int64 per column: leaf ranges (L, 3) of its LCA and its number of points (L,).
    point_column
        int64 (n,): the column of every input point, -1 where it was aligned with a gap
        (suppressed).
    order
        int64 (m,): member positions in the order they were aligned, the basis first.
    loss_bits
        Eq. 3-4 loss of the alignment: LCA heights of the aligned points plus the bits per
        point of every suppressed one.

    References
    ----------
    .. [1] Shaham et al., MLA, §4.2.1 and Algorithm 3.
    """

    lo: np.ndarray
    hi: np.ndarray
    count: np.ndarray
    point_column: np.ndarray
    order: np.ndarray
    loss_bits: int


def dynamic_sa(tr_1: np.ndarray, tr_2: np.ndarray, bits_per_point: int) -> PairAlignment:
    """Algorithm 1: align two trajectories of cells by dynamic programming.

    Parameters
    ----------
    tr_1, tr_2
        int64 (m, 3) and (n, 3): x cell, y cell and time bin of each point, in time order.
    bits_per_point
        ``LS(p.x, RT(H_x)) + LS(p.y, RT(H_y)) + LS(p.t, RT(H_t))``, the cost of a suppression.

    Returns
    -------
    PairAlignment

    References
    ----------
    .. [1] Shaham et al., MLA, §4.2.1, Algorithm 1 (DynamicSA).

    Examples
    --------
    >>> a = np.array([[0, 0, 0], [4, 0, 0]]); b = np.array([[1, 0, 0]])
    >>> dynamic_sa(a, b, bits_per_point=5).loss_bits  # '000' + '001' -> '00', 4 suppressed
    7
    """
    tr_1, tr_2 = _as_cells(tr_1), _as_cells(tr_2)
    profile = Profile(tr_1, bits_per_point, skip_budget=0)
    last, codes = profile._sweep(_Layout(tr_2, np.array([len(tr_2)])), keep_codes=True)
    pairs = _trace_back(codes, len(tr_1), len(tr_2))
    structure = np.full(len(tr_1), -1, dtype=np.int64)
    structure[pairs[:, 0]] = pairs[:, 1]
    lo = np.minimum(tr_1[pairs[:, 0]], tr_2[pairs[:, 1]])
    hi = np.maximum(tr_1[pairs[:, 0]], tr_2[pairs[:, 1]])
    mask = (np.int64(1) << lca_height(lo, hi)) - 1
    return PairAlignment(int(last[0]), pairs, structure, lo & ~mask, hi | mask)


def progressive_alignment(cells: np.ndarray, lengths: ArrayLike, bits_per_point: int,
                          skip_budget: int | None = None) -> MultipleAlignment:
    """Progressive SA of one cluster: the longest member first, then least added loss.

    Parameters
    ----------
    cells
        int64 (n, 3): the members' cells laid end to end, each member in time order.
    lengths
        int64 (m,): number of points of each member (ties for the longest go to the first).
    bits_per_point
        Loss of suppressing one point.
    skip_budget
        Members that may skip a column before it is dropped (see :class:`Profile`); for a
        cluster of ``P`` persons that must publish columns of ``k``, ``P - k``.

    Returns
    -------
    MultipleAlignment
        Only the columns kept; points of dropped columns are suppressed (-1) like gaps.

    References
    ----------
    .. [1] Shaham et al., MLA, §4.2.1 and Fig. 3 ("the algorithm can choose the trajectory
       resulting in the lowest loss").
    """
    cells = _as_cells(cells)
    lengths = np.asarray(lengths, np.int64)
    if len(lengths) == 0 or lengths.sum() != len(cells) or (lengths < 1).any():
        raise InputError("progressive alignment needs members of at least one point each")
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    owner = np.repeat(np.arange(len(lengths)), lengths)
    basis = int(np.argmax(lengths))
    profile = Profile(cells[owner == basis], bits_per_point, skip_budget)
    point_column = np.full(len(cells), -1, dtype=np.int64)
    point_column[owner == basis] = np.arange(lengths[basis])
    waiting = np.ones(len(lengths), dtype=bool)
    waiting[basis] = False
    order = [basis]
    for _ in range(len(lengths) - 1):
        candidates = np.flatnonzero(waiting)
        losses = profile.added_losses(cells[waiting[owner]], lengths[candidates])
        pick = int(candidates[np.argmin(losses)])
        span = slice(starts[pick], starts[pick] + lengths[pick])
        point_column[span], _ = profile.add(cells[span])
        waiting[pick] = False
        order.append(pick)
    renumber = np.where(profile.alive, np.cumsum(profile.alive) - 1, -1)
    point_column = np.where(point_column >= 0, renumber[point_column], -1)
    alive = profile.alive
    kept = profile.count[alive] * profile.heights[alive].sum(axis=1)
    loss = int(kept.sum()) + int((point_column < 0).sum()) * int(bits_per_point)
    return MultipleAlignment(profile.lo[alive], profile.hi[alive], profile.count[alive],
                             point_column, np.array(order, dtype=np.int64), loss)


class _Layout:
    """Candidates end to end: one ``j = 0`` slot, then one slot per point, per candidate.

    Each attribute is one contiguous array over the slots (0 in the ``j = 0`` slots, whose
    diagonal move is blocked), so that a DP row is a handful of whole-array operations.
    """

    def __init__(self, points: np.ndarray, lengths: np.ndarray) -> None:
        if (lengths < 0).any() or lengths.sum() != len(points):
            raise InputError("candidate lengths do not add up to their points")
        widths = lengths + 1
        first = np.concatenate([[0], np.cumsum(widths)[:-1]]).astype(np.int64)
        n_slots = int(widths.sum())
        self.segment = np.repeat(np.arange(len(lengths), dtype=np.int64), widths)
        self.within = np.arange(n_slots, dtype=np.int64) - np.repeat(first, widths)
        point_slot = np.flatnonzero(self.within > 0)
        self.small = len(points) == 0 or int(points.max()) < len(_BITS)
        dtype = np.int32 if self.small else np.int64
        self.axes = [np.zeros(n_slots, dtype=dtype) for _ in range(3)]
        for axis, values in zip(self.axes, points.T, strict=True):
            axis[point_slot] = values
        self.blocked = np.where(self.within == 0, _BLOCKED, 0).astype(np.int64)
        self.last_slot = first + lengths
        self.max_length = int(lengths.max()) if len(lengths) else 0


def _sweep(lo: np.ndarray, heights: np.ndarray, count: np.ndarray, skip_column: np.ndarray,
           layout: _Layout, skip_point: int, keep_codes: bool) -> tuple[np.ndarray, np.ndarray]:
    """Run the DP row by row; the last cell of every candidate, and the moves if asked."""
    prefix = layout.within * skip_point  # G: suppressing the first j points
    # Every cell lies in [0, j * skip_point + sum(skip_column)], so keys (cell - G) span
    # less than ``span``; each candidate is lowered one span below the one before, and the
    # running minimum starts afresh at its j = 0 slot.
    span = 2 * layout.max_length * skip_point + int(skip_column.sum()) + 1
    if span * (len(layout.last_slot) + 1) >= 2**62 or span >= _BLOCKED:
        raise InputError("losses too large for one int64 sweep; align fewer candidates")
    offset = prefix + layout.segment * span
    small = layout.small and (len(lo) == 0 or int(lo.max()) < len(_BITS))
    row = prefix.copy()  # row 0: every point so far suppressed
    codes = np.empty((len(lo), len(row) if keep_codes else 0), dtype=np.int8)
    for i in range(len(lo)):
        diag = _match_cost(lo[i], heights[i], int(count[i]), layout, small)
        diag[1:] += row[:-1]
        best = row + skip_column[i]
        np.minimum(best, diag, out=best)
        best -= offset
        np.minimum.accumulate(best, out=best)
        best += offset
        if keep_codes:
            codes[i] = _moves(best, diag, layout.within, skip_point)
        row = best
    return row[layout.last_slot], codes


def _match_cost(lo: np.ndarray, height: np.ndarray, count: int, layout: _Layout, small: bool
                ) -> np.ndarray:
    """Loss added to eq. 4 by putting each slot's point into a column of ``count`` points."""
    total: np.ndarray | None = None
    for axis, low, h in zip(layout.axes, lo.tolist(), height.tolist(), strict=True):
        # The column's node and q meet at the first bit where q and any column leaf differ,
        # never below the column's own height.
        xor = np.bitwise_xor(axis, low)
        bits = _BITS[xor] if small else bit_length(xor)
        np.maximum(bits, h, out=bits)
        total = bits if total is None else total + bits
    assert total is not None
    cost = total.astype(np.int64)
    cost *= count + 1
    cost += layout.blocked - count * int(height.sum())
    return cost


def _moves(row: np.ndarray, diag: np.ndarray, within: np.ndarray, skip_point: int
           ) -> np.ndarray:
    """The move that reached each cell, in Algorithm 1's argmin order (diag, left, up)."""
    left = np.empty_like(row)
    left[0] = _BLOCKED
    left[1:] = row[:-1] + skip_point
    moves = np.where(row == diag, _DIAG, np.where(row == left, _LEFT, _UP)).astype(np.int8)
    moves[within == 0] = _UP
    return moves


def _trace_back(codes: np.ndarray, n_rows: int, n_cols: int) -> np.ndarray:
    """int64 (r, 2): the generalized pairs ``(i, j)`` on the path from ``[m, n]`` to ``[0, 0]``."""
    pairs = []
    i, j = n_rows, n_cols
    while i > 0 or j > 0:
        move = _LEFT if i == 0 else _UP if j == 0 else int(codes[i - 1, j])
        if move == _DIAG:
            pairs.append((i - 1, j - 1))
        i -= move != _LEFT
        j -= move != _UP
    return np.array(pairs[::-1], dtype=np.int64).reshape(-1, 2)


def _as_cells(cells: np.ndarray) -> np.ndarray:
    cells = np.asarray(cells, dtype=np.int64)
    if cells.ndim != 2 or cells.shape[1] != 3:
        raise InputError(f"cells must be an (n, 3) array of x, y, t cells, got {cells.shape}")
    if len(cells) and cells.min() < 0:
        raise InputError("cells must be non-negative DGH leaves")
    return cells
