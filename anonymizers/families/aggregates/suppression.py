"""Primary and secondary cell suppression of a hierarchical frequency table: cells, bin
totals (each the sum of its bin's cells), the window total (the sum of the bin totals).

Primary suppression drops every cell and total of fewer than k persons. That alone is not
enough: a published total minus its published members is the sum of the unpublished ones,
so a bin total of 12 whose published cells hold 10 tells that 2 persons are in its other
cells (k = 5). Secondary suppression drops further members until, for every published
total, its **remainder** is 0 or at least k:

* a published bin total's remainder is its true count minus its published cells';
* the published window total's remainder is its true count minus its *highest published
  parts*: a published bin total stands for its bin, and where a bin total is not published,
  its published cells stand for it. (Subtracting only the published bin totals is not
  enough: a bin of 3 persons, suppressed, next to a bin of 20 whose cells are all published
  and whose total the rule suppressed, leaves the window total minus the published cells at
  3, the persons of the small bin.)

Members are dropped smallest first (ties: the first in cell order, then bin order); one drop
always suffices, since every published member holds at least k persons. The remainders of
the totals are then disjoint sums of unpublished cells (each bin's unpublished cells under
a published bin total; the unpublished cells of the bins without a published total under
the window total), each 0 or at least k: the sum of any set of unpublished cells an
analyst can derive from the table is a sum of such remainders, 0 or at least k, and any
other set of them can hold from 0 to its remainder, so no unpublished count is known to lie
between 1 and k - 1, whatever the interval filter shows of the published ones.

References
----------
Hundepool, A., Domingo-Ferrer, J., Franconi, L., Giessing, S., Schulte Nordholt, E.,
Spicer, K., de Wolf, P.-P. (2012). *Statistical Disclosure Control*, Wiley, ch. 5
(frequency tables: primary and secondary suppression, hierarchical tables).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Suppression", "primary", "remainders", "secondary", "suppress"]


@dataclass(frozen=True)
class Suppression:
    """What is published: a flag per cell, a flag per bin, and the window total's flag."""

    cells: np.ndarray  # bool, per cell
    bins: np.ndarray  # bool, per bin
    window: bool


def primary(cell_n: np.ndarray, bin_n: np.ndarray, k: int) -> Suppression:
    """Every cell and total of at least k persons.

    >>> primary(np.array([6, 2, 5]), np.array([8, 5]), 5)
    Suppression(cells=array([ True, False,  True]), bins=array([ True,  True]), window=True)
    """
    return Suppression(cell_n >= k, bin_n >= k, bool(bin_n.sum() >= k))


def remainders(cell_bin: np.ndarray, cell_n: np.ndarray, bin_n: np.ndarray,
               published: Suppression) -> tuple[np.ndarray, int]:
    """The remainder of every bin (true total minus its published cells; meaningful where
    the bin total is published) and of the window total (true total minus its highest
    published parts)."""
    shown = np.bincount(cell_bin, weights=np.where(published.cells, cell_n, 0),
                        minlength=bin_n.size).astype(np.int64)
    per_bin = bin_n - shown
    covered = np.where(published.bins, bin_n, shown)
    return per_bin, int(bin_n.sum() - covered.sum())


def _bad(remainder: int | np.ndarray, k: int) -> bool | np.ndarray:
    return (remainder > 0) & (remainder < k)


def secondary(cell_bin: np.ndarray, cell_n: np.ndarray, bin_n: np.ndarray, k: int,
              published: Suppression) -> Suppression:
    """``published`` with the further suppressions the remainder rule needs: per bin, then
    for the window total (which never undoes the bins': it drops a bin total whose
    remainder is already at least k, or a cell under no published bin total)."""
    cells, bins = published.cells.copy(), published.bins.copy()
    per_bin, _ = remainders(cell_bin, cell_n, bin_n, Suppression(cells, bins, published.window))
    for b in np.flatnonzero(bins & _bad(per_bin, k)):
        members = np.flatnonzero(cells & (cell_bin == b))
        cells[members[np.argmin(cell_n[members])]] = False  # argmin: the first of equals
    window = published.window
    per_bin, rest = remainders(cell_bin, cell_n, bin_n, Suppression(cells, bins, window))
    if window and _bad(rest, k):
        cells, bins, window = _widen_window_remainder(cell_bin, cell_n, bin_n, per_bin, k,
                                                      cells, bins)
    return Suppression(cells, bins, window)


def _widen_window_remainder(cell_bin: np.ndarray, cell_n: np.ndarray, bin_n: np.ndarray,
                            per_bin: np.ndarray, k: int, cells: np.ndarray,
                            bins: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
    """Drop the smallest highest published part whose drop adds at least k to the window's
    remainder: a published bin total with a remainder (its unpublished cells join the
    window's), or a published cell of a bin without a published total. A published bin
    total without a remainder adds nothing (its cells still add up to it), so it is never
    dropped; with no part to drop, the window total is not published."""
    open_cells = np.flatnonzero(cells & ~bins[cell_bin])
    open_bins = np.flatnonzero(bins & (per_bin >= k))
    values = np.concatenate([cell_n[open_cells], bin_n[open_bins]])
    if values.size == 0:
        return cells, bins, False
    pick = int(np.argmin(values))
    if pick < open_cells.size:
        cells = cells.copy()
        cells[open_cells[pick]] = False
    else:
        bins = bins.copy()
        bins[open_bins[pick - open_cells.size]] = False
    return cells, bins, True


def suppress(cell_bin: np.ndarray, cell_n: np.ndarray, bin_n: np.ndarray,
             k: int) -> Suppression:
    """Primary, then secondary suppression of the table (cells in cell order, ``cell_bin``
    their bins as indexes into ``bin_n``).

    >>> s = suppress(np.array([0, 0, 0]), np.array([6, 5, 1]), np.array([12]), 5)
    >>> s.cells.tolist(), s.bins.tolist(), s.window
    ([True, False, False], [True], True)
    """
    first = primary(cell_n, bin_n, k)
    return secondary(cell_bin, cell_n, bin_n, k, first)
