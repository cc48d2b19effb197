"""MLA's discretization, DGH trees and information loss in bits (seed 001, §3, eq. 1-4, 8, 11).

The map is cut into ε × ε cells and time into bins of ε_t seconds (§3). Each attribute (x
cell, y cell, time bin) gets a domain generalization hierarchy (Definition 1): a complete
binary tree over ``2**D`` leaves, ``D = ceil(log2 n)`` for an axis of ``n`` cells, as in the
paper's Example 1 where the 8 x values are leaves ``000`` ... ``111``. A node is written
``(height, prefix)``: it covers the leaves ``prefix * 2**height ... (prefix + 1) * 2**height - 1``
and ``LF(node) = 2**height``, so eq. 1 becomes a difference of heights.

Padding to a power of two is what the paper's numbers imply: its full-suppression bound of
474,572 bits on 27,916 T-Drive samples is exactly 17 bits a point, 7 + 7 for the 100 cells of
1 km at 10 m padded to 128 leaves, and 3 for a time axis of at most 8 bins.

The leaves of the padding hold no data; published regions are clipped to the grid's extent
(:meth:`Grid.region_bounds`), which discloses nothing more than the grid itself.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from anonymizers.errors import InputError

__all__ = [
    "Grid",
    "bit_length",
    "dgh_depth",
    "full_suppression_bits",
    "generalization_loss",
    "lca_height",
    "lca_loss",
    "lca_node",
    "lemma2_loss",
    "node_leaves",
    "root_distances",
]

@dataclass(frozen=True)
class Grid:
    """The ε × ε spatial grid and ε_t time bins of MLA's system model.

    Attributes
    ----------
    x0, y0, t0
        Lower edges of cell 0 (metres, metres, epoch seconds).
    epsilon, time_bin
        Cell side in metres and bin length in seconds.
    nx, ny, nt
        Number of cells or bins on each axis (the DGH leaves that hold data).

    References
    ----------
    .. [1] Shaham, Ding, Liu, Dang, Lin, Li. Privacy Preserving Location Data Publishing: A
       Machine Learning Approach (MLA), §3 and §3.1.1.
    """

    x0: float
    y0: float
    t0: float
    epsilon: float
    time_bin: float
    nx: int
    ny: int
    nt: int

    def __post_init__(self) -> None:
        if not (self.epsilon > 0 and self.time_bin > 0):
            raise InputError(f"epsilon and time_bin must be > 0, got {self.epsilon}, "
                             f"{self.time_bin}")
        if min(self.nx, self.ny, self.nt) < 1:
            raise InputError("a grid needs at least one cell and one time bin on every axis")

    @classmethod
    def covering(cls, x: np.ndarray, y: np.ndarray, t: np.ndarray, epsilon: float,
                 time_bin: float) -> Grid:
        """The smallest grid aligned on multiples of ε (and ε_t) holding every point."""
        if len(x) == 0:
            raise InputError("cannot build a grid over no points")
        if not (epsilon > 0 and time_bin > 0):
            raise InputError(f"epsilon and time_bin must be > 0, got {epsilon}, {time_bin}")
        # Aligned origins put every release on one lattice (whole hours, whole 10 m).
        x0 = float(np.floor(np.min(x) / epsilon) * epsilon)
        y0 = float(np.floor(np.min(y) / epsilon) * epsilon)
        t0 = float(np.floor(np.min(t) / time_bin) * time_bin)
        n = [int(np.floor((np.max(v) - o) / s)) + 1
             for v, o, s in ((x, x0, epsilon), (y, y0, epsilon), (t, t0, time_bin))]
        return cls(x0, y0, t0, float(epsilon), float(time_bin), *n)

    @classmethod
    def anchored(cls, x: np.ndarray, y: np.ndarray, epsilon: float, time_bin: float,
                 n_bins: int) -> Grid:
        """A grid whose every DGH node is a block of one absolute lattice (the pipeline's).

        Space: on each axis the smallest block of ``2**D`` cells of one absolute dyadic
        lattice (fixed for a given ε, see ``_LATTICE_SHIFT``) that holds every point; its
        ``2**D`` leaves are all DGH leaves, so no region is clipped and every published
        edge is an edge of that lattice, the same in every release: the data choose which
        blocks, never where their edges are. A grid starting at the data's minimum would
        shift every node by it (a fix's coordinate to ε, privacy rule 2). Time: bins
        ``0 .. n_bins - 1`` of ``time_bin`` seconds from the window start (``t`` is then
        seconds from the window start).
        """
        if not (epsilon > 0 and time_bin > 0):
            raise InputError(f"epsilon and time_bin must be > 0, got {epsilon}, {time_bin}")
        if len(x) == 0:
            raise InputError("cannot build a grid over no points")
        x0, nx = _dyadic_block(np.asarray(x, float), float(epsilon))
        y0, ny = _dyadic_block(np.asarray(y, float), float(epsilon))
        return cls(x0, y0, 0.0, float(epsilon), float(time_bin), nx, ny, int(n_bins))

    @property
    def depths(self) -> np.ndarray:
        """int64 (3,): DGH depth of x, y and t, the bits a leaf needs (Example 1)."""
        return np.array([dgh_depth(self.nx), dgh_depth(self.ny), dgh_depth(self.nt)],
                        dtype=np.int64)

    @property
    def bits_per_point(self) -> int:
        """Loss of suppressing one point: LS(p.x, RT) + LS(p.y, RT) + LS(p.t, RT)."""
        return int(self.depths.sum())

    def cells(self, x: np.ndarray, y: np.ndarray, t: np.ndarray) -> np.ndarray:
        """int64 (n, 3): x cell, y cell and time bin of every point; InputError if outside."""
        out = np.column_stack([
            _cell_index(np.asarray(x, float), self.x0, self.epsilon),
            _cell_index(np.asarray(y, float), self.y0, self.epsilon),
            _cell_index(np.asarray(t, float), self.t0, self.time_bin),
        ])
        if len(out) and ((out < 0).any() or (out >= self.sizes).any()):
            raise InputError("points fall outside the grid; build it with Grid.covering")
        return out

    def contains(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """bool per point: inside the grid's spatial extent (cells as :meth:`cells`)."""
        ix = _cell_index(np.asarray(x, float), self.x0, self.epsilon)
        iy = _cell_index(np.asarray(y, float), self.y0, self.epsilon)
        return (ix >= 0) & (ix < self.nx) & (iy >= 0) & (iy < self.ny)

    @property
    def sizes(self) -> np.ndarray:
        """int64 (3,): nx, ny, nt."""
        return np.array([self.nx, self.ny, self.nt], dtype=np.int64)

    def region_bounds(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """float64 (r, 6): x_lo, x_hi, y_lo, y_hi, t_lo, t_hi of DGH nodes' leaf ranges.

        ``lo`` and ``hi`` are (r, 3) inclusive leaf ranges; the upper edge is clipped to the
        grid so that padding leaves never widen a published region.
        """
        top = np.minimum(np.asarray(hi) + 1, self.sizes)
        origin = np.array([self.x0, self.y0, self.t0])
        step = np.array([self.epsilon, self.epsilon, self.time_bin])
        low_edge = origin + np.asarray(lo) * step
        high_edge = origin + top * step
        return np.column_stack([low_edge[:, 0], high_edge[:, 0], low_edge[:, 1],
                                high_edge[:, 1], low_edge[:, 2], high_edge[:, 2]])


def _cell_index(values: np.ndarray, origin: float, step: float) -> np.ndarray:
    """int64 ``i`` with ``origin + i * step <= value < origin + (i + 1) * step`` evaluated
    exactly as :meth:`Grid.region_bounds` writes the edges, so that a point is inside its
    published region for anyone comparing coordinates (floor of a quotient can be off by
    one at an edge)."""
    index = np.floor((values - origin) / step)
    index -= values < origin + index * step
    index += values >= origin + (index + 1) * step
    return index.astype(np.int64)


# The absolute lattice's level-D edges are (j * 2**D - _LATTICE_SHIFT) cells from 0. With no
# shift, 0 (a UTM zone's equator) would be an edge of every level and data on both sides of
# it would fit no block; with a shift of irregular bits, no place is special: data W cells
# wide need about log2(W) levels wherever they are.
_LATTICE_SHIFT = 0x2C5E9B3A71D3


def _dyadic_block(values: np.ndarray, step: float) -> tuple[float, int]:
    """Lower edge and width (in cells) of the smallest block of the absolute dyadic
    lattice of cells of ``step`` holding every value (see :meth:`Grid.anchored`)."""
    extremes = np.array([values.min(), values.max()])
    lo = int(_cell_index(extremes[:1], 0.0, step)[0]) + _LATTICE_SHIFT
    for depth in range(63):
        origin = float(((lo >> depth) << depth) - _LATTICE_SHIFT) * step
        index = _cell_index(extremes, origin, step)
        if index[0] >= 0 and index[1] < 1 << depth:  # the index is monotone in the value
            return origin, 1 << depth
    raise InputError(f"coordinates {extremes} do not fit a grid of {step} m cells")


def dgh_depth(n_values: int) -> int:
    """Depth of the binary DGH over ``n_values`` leaves: ``ceil(log2 n)`` (8 x values: 3).

    References
    ----------
    .. [1] Shaham et al., MLA, Example 1 ("each coordinate needs three bits").
    """
    if n_values < 1:
        raise InputError(f"a DGH needs at least one value, got {n_values}")
    return (int(n_values) - 1).bit_length()


def bit_length(values: np.ndarray) -> np.ndarray:
    """int64 ``int.bit_length`` of non-negative integers below 2**53, elementwise."""
    # frexp's exponent of a positive integer is its bit length, exactly, and 0 for 0.
    return np.frexp(np.asarray(values, dtype=np.float64))[1].astype(np.int64)


def lca_height(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Height of the LCA of leaves whose smallest is ``lo`` and largest ``hi`` (Definition 2).

    Every leaf between two leaves shares their common prefix, so the LCA of a set is the LCA
    of its minimum and maximum: the height is the bit length of ``lo XOR hi``.
    """
    return bit_length(np.bitwise_xor(np.asarray(lo, np.int64), np.asarray(hi, np.int64)))


def lca_node(values: np.ndarray) -> tuple[int, int]:
    """``(height, prefix)`` of the lowest common ancestor of leaf values (Definition 2).

    Examples
    --------
    >>> lca_node(np.array([0b000, 0b010]))  # Example 1: '000' and '010' -> '0'
    (2, 0)
    """
    values = np.asarray(values, np.int64)
    if values.size == 0:
        raise InputError("the LCA of no leaves is undefined")
    height = int(lca_height(values.min(), values.max()))
    return height, int(values.min()) >> height


def node_leaves(height: np.ndarray | int, prefix: np.ndarray | int
                ) -> tuple[np.ndarray, np.ndarray]:
    """Inclusive first and last leaf under the node(s) ``(height, prefix)``."""
    height = np.asarray(height, np.int64)
    lo = np.left_shift(np.asarray(prefix, np.int64), height)
    return lo, lo + np.left_shift(1, height) - 1


def generalization_loss(leaves_from: np.ndarray | float, leaves_to: np.ndarray | float
                        ) -> np.ndarray:
    """Eq. 1: ``LS(node_i, node_j) = log2 LF(node_j) - log2 LF(node_i)`` bits.

    Parameters
    ----------
    leaves_from, leaves_to
        ``LF`` of the generalized node and of its ancestor.

    References
    ----------
    .. [1] Shaham et al., MLA, eq. 1 and Example 2 (``'10' -> '1'``: log2 4 - log2 2 = 1).
    """
    return np.log2(np.asarray(leaves_to, float)) - np.log2(np.asarray(leaves_from, float))


def lca_loss(values: np.ndarray) -> int:
    """Lemma 1 for a set of leaves: the sum of each leaf's loss up to their LCA, in bits.

    A leaf has ``LF = 1``, so each costs the LCA's height (eq. 1) and the set costs
    ``len(values) * height``; for two leaves this is eq. 2.
    """
    height, _ = lca_node(values)
    return len(values) * height


def lemma2_loss(height_i: int, height_j: int, depth: int) -> int:
    """Lemma 2 (eq. 11): ``|LS(node_i, RT) - LS(node_j, RT)|`` for nodes on one root path.

    References
    ----------
    .. [1] Shaham et al., MLA, Lemma 2 and Example 3 (|(log2 8 - log2 2) - (log2 8 - log2 4)|).
    """
    return abs((depth - height_i) - (depth - height_j))


def root_distances(lengths: np.ndarray, depths: np.ndarray) -> np.ndarray:
    """float64 (n, 3): ``<d_x, d_y, d_t>`` of each trajectory, its part A of eq. 8.

    ``d_A`` is the sum over the trajectory's points of ``LS(p.A, RT(H_A))``; points are
    leaves, so it is the trajectory's length times the depth of ``H_A``. The representation
    thus orders trajectories by length, which is what §4.3.2 asks of it ("as short as one
    query to ... hundreds of queries").
    """
    return np.outer(np.asarray(lengths, np.float64), np.asarray(depths, np.float64))


def full_suppression_bits(n_points: int, grid: Grid) -> int:
    """The loss of suppressing every point, the upper bound of §5.1 (474,572 bits on T-Drive)."""
    return int(n_points) * grid.bits_per_point
