"""Hilbert index of grid cells, vectorized: the 1-D order in which GenAG searches neighbours.

The classic ``xy2d`` / ``d2xy`` pair (Butz's curve as written by Warren, "Hacker's Delight",
and on Wikipedia), applied to whole numpy arrays at once: the loop runs over the ``order``
bits, never over cells. Index 0 is cell (0, 0), the curve first goes up (+y), and it ends at
cell (2^order - 1, 0). In two dimensions Hamilton's compact Hilbert index [2]_ (which the
paper uses) is this same curve: compactness only matters when dimensions differ in extent.
"""

from __future__ import annotations

import numpy as np

from anonymizers.errors import InputError

__all__ = ["MAX_ORDER", "hilbert_cell", "hilbert_index", "order_for"]

# Indices are below 4^24 = 2^48, so GenAG's sums of up to 2^14 deviations, and its keys
# t * (4^order + 1) + H for t < 2^14, stay inside int64 (checked where the lists are built).
MAX_ORDER = 24


def order_for(nx: int, ny: int) -> int:
    """Smallest order whose 2^order x 2^order grid holds ``nx`` x ``ny`` cells.

    Parameters
    ----------
    nx, ny
        Number of cells along x and y (at least 1).

    Returns
    -------
    int
        ``order`` >= 0 with ``2**order >= max(nx, ny)``.

    Examples
    --------
    >>> order_for(8, 5), order_for(1000, 1000), order_for(1, 1)
    (3, 10, 0)
    """
    if nx < 1 or ny < 1:
        raise InputError(f"a grid needs at least one cell per axis, got {nx} x {ny}")
    order = max(int(nx - 1).bit_length(), int(ny - 1).bit_length())
    if order > MAX_ORDER:
        raise InputError(f"a grid of {nx} x {ny} cells needs Hilbert order {order}, "
                         f"more than {MAX_ORDER}: use larger cells")
    return order


def hilbert_index(x: np.ndarray, y: np.ndarray, order: int) -> np.ndarray:
    """Hilbert index of each cell (x, y) on the 2^order x 2^order grid (``xy2d``).

    Parameters
    ----------
    x, y
        Integer cell coordinates of the same shape, each in ``0 .. 2**order - 1``.
    order
        Order of the curve, 0 .. :data:`MAX_ORDER`.

    Returns
    -------
    numpy.ndarray
        int64 array of the shape of ``x``: the position of each cell along the curve.

    References
    ----------
    .. [1] Yarovoy, Bonchi, Lakshmanan, Wang. Anonymizing Moving Objects: How to Hide a MOB
       in a Crowd? EDBT 2009, §5.1 (Hilbert lists, Figure 3).
    .. [2] Hamilton. Compact Hilbert Indices. Tech. Rep. CS-2006-07, Dalhousie University,
       2006.

    Examples
    --------
    >>> hilbert_index(np.array([0, 0, 1, 1]), np.array([0, 1, 1, 0]), 1).tolist()
    [0, 1, 2, 3]
    """
    x, y = _checked_cells(x, y, order)
    d = np.zeros(x.shape, dtype=np.int64)
    side = np.int64(1) << order
    s = side >> 1
    while s > 0:
        rx = (x & s) > 0
        ry = (y & s) > 0
        d += s * s * ((3 * rx.astype(np.int64)) ^ ry.astype(np.int64))
        x, y = _rotate(side, x, y, rx, ry)
        s >>= 1
    return d


def hilbert_cell(d: np.ndarray, order: int) -> tuple[np.ndarray, np.ndarray]:
    """Cell (x, y) at each Hilbert index ``d`` (``d2xy``): the inverse of :func:`hilbert_index`.

    Parameters
    ----------
    d
        Integer indices in ``0 .. 4**order - 1``.
    order
        Order of the curve, 0 .. :data:`MAX_ORDER`.

    Returns
    -------
    tuple of numpy.ndarray
        int64 ``x`` and ``y`` of the shape of ``d``.

    References
    ----------
    .. [1] Yarovoy et al., EDBT 2009, §5.1.
    """
    _check_order(order)
    t = np.asarray(d, dtype=np.int64).copy()
    if t.size and (t.min() < 0 or t.max() >= np.int64(1) << (2 * order)):
        raise InputError(f"Hilbert indices must lie in 0 .. 4^{order} - 1")
    x = np.zeros(t.shape, dtype=np.int64)
    y = np.zeros(t.shape, dtype=np.int64)
    s = np.int64(1)
    while s < (np.int64(1) << order):
        rx = ((t >> 1) & 1) > 0
        ry = ((t ^ rx.astype(np.int64)) & 1) > 0
        x, y = _rotate(s, x, y, rx, ry)
        x += s * rx
        y += s * ry
        t >>= 2
        s <<= 1
    return x, y


def _rotate(side: np.int64, x: np.ndarray, y: np.ndarray, rx: np.ndarray,
            ry: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Reflect and transpose each quadrant so the sub-curve is in standard orientation."""
    flip = ~ry & rx
    x = np.where(flip, side - 1 - x, x)
    y = np.where(flip, side - 1 - y, y)
    swap = ~ry
    return np.where(swap, y, x), np.where(swap, x, y)


def _check_order(order: int) -> None:
    if not 0 <= order <= MAX_ORDER:
        raise InputError(f"Hilbert order must be in 0 .. {MAX_ORDER}, got {order}")


def _checked_cells(x: np.ndarray, y: np.ndarray, order: int) -> tuple[np.ndarray, np.ndarray]:
    _check_order(order)
    x = np.asarray(x, dtype=np.int64)
    y = np.asarray(y, dtype=np.int64)
    if x.shape != y.shape:
        raise InputError(f"x and y differ in shape: {x.shape} vs {y.shape}")
    side = 1 << order
    if x.size and (min(x.min(), y.min()) < 0 or max(x.max(), y.max()) >= side):
        raise InputError(f"cells must lie in 0 .. {side - 1} for Hilbert order {order}")
    return x, y
