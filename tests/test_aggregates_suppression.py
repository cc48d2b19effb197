"""The suppression of a hierarchical frequency table (cells -> bin totals -> window total),
as pure functions: primary and secondary suppression, checked by the verifier's own
remainder rule and by an analyst who subtracts published members from published totals."""

from __future__ import annotations

import numpy as np
import pytest

from anonymizers.families.aggregates import suppression
from anonymizers.families.aggregates.verifier import TrueTable, check_remainders


def _table(cell_bin: list[int], cell_n: list[int]) -> tuple[np.ndarray, ...]:
    bins = np.asarray(cell_bin, np.int64)
    cells = np.asarray(cell_n, np.int64)
    return bins, cells, np.bincount(bins, weights=cells).astype(np.int64)


def _verifier_view(cell_bin: np.ndarray, cell_n: np.ndarray, bin_n: np.ndarray,
                   published: suppression.Suppression, k: int) -> list[str]:
    table = TrueTable({(int(b), None, str(i)): int(n)
                       for i, (b, n) in enumerate(zip(cell_bin, cell_n, strict=True))},
                      {b: int(n) for b, n in enumerate(bin_n)}, bin_n.size)
    cells = {(int(cell_bin[i]), None, str(i)) for i in np.flatnonzero(published.cells)}
    return check_remainders(table, cells, set(np.flatnonzero(published.bins).tolist()),
                            published.window, k)


def _isolated(cell_bin: np.ndarray, cell_n: np.ndarray, bin_n: np.ndarray,
              published: suppression.Suppression, k: int) -> list[int]:
    """The analyst's subtractions (exact counts): each published bin total minus its
    published cells; the published window total minus the published bin totals, and minus
    the published bin totals and the published cells of the other bins. Those of 1..k-1."""
    shown = np.bincount(cell_bin, weights=np.where(published.cells, cell_n, 0),
                        minlength=bin_n.size)
    found = [int(bin_n[b] - shown[b]) for b in np.flatnonzero(published.bins)]
    if published.window:
        window = int(bin_n.sum())
        found.append(window - int(bin_n[published.bins].sum()))
        found.append(window - int(np.where(published.bins, bin_n, shown).sum()))
    return [d for d in found if 0 < d < k]


def test_a_bin_total_minus_its_published_cells_is_solved_without_secondary_suppression():
    cell_bin, cell_n, bin_n = _table([0, 0, 0], [4, 3, 1])
    first = suppression.primary(cell_n, bin_n, 3)
    assert first.cells.tolist() == [True, True, False]
    assert _isolated(cell_bin, cell_n, bin_n, first, 3) == [1]
    assert _verifier_view(cell_bin, cell_n, bin_n, first, 3)
    done = suppression.suppress(cell_bin, cell_n, bin_n, 3)
    assert done.cells.tolist() == [True, False, False]  # the smallest published cell goes
    assert _isolated(cell_bin, cell_n, bin_n, done, 3) == []
    assert _verifier_view(cell_bin, cell_n, bin_n, done, 3) == []


def test_the_window_total_minus_its_bin_totals_is_solved_without_secondary_suppression():
    # Bin 1 holds 2 persons (below k): the window total minus bin 0's total gives them.
    # Bin 0's total, whose unpublished cells hold 3, goes: they join the window's remainder.
    cell_bin, cell_n, bin_n = _table([0, 0, 0, 0, 0, 1], [5, 4, 1, 1, 1, 2])
    first = suppression.primary(cell_n, bin_n, 3)
    assert _isolated(cell_bin, cell_n, bin_n, first, 3) == [2, 2]
    done = suppression.suppress(cell_bin, cell_n, bin_n, 3)
    assert done.bins.tolist() == [False, False] and done.window
    assert done.cells.tolist() == [True, True, False, False, False, False]
    assert _isolated(cell_bin, cell_n, bin_n, done, 3) == []
    assert _verifier_view(cell_bin, cell_n, bin_n, done, 3) == []


def test_a_bin_total_whose_cells_are_all_published_is_no_protection():
    """Bin 0's 20 persons are all in published cells; bin 1's 3 are below k = 5. Dropping
    bin 0's total (the smallest published member of the window total) leaves its cells,
    which add up to it: the window total minus the published cells still gives 3."""
    cell_bin, cell_n, bin_n = _table([0, 0, 1, 1], [12, 8, 2, 1])
    naive = suppression.Suppression(np.array([True, True, False, False]),
                                    np.array([False, False]), True)
    assert _isolated(cell_bin, cell_n, bin_n, naive, 5) == [3]
    assert _verifier_view(cell_bin, cell_n, bin_n, naive, 5)
    done = suppression.suppress(cell_bin, cell_n, bin_n, 5)
    assert _isolated(cell_bin, cell_n, bin_n, done, 5) == []
    assert _verifier_view(cell_bin, cell_n, bin_n, done, 5) == []
    assert done.cells[:2].all()  # no cell is given up: the window total is not published
    assert not done.window


@pytest.mark.parametrize("seed", range(40))
def test_random_tables_keep_every_remainder_0_or_at_least_k(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 8))
    n_cells = int(rng.integers(1, 60))
    cell_bin = np.sort(rng.integers(0, int(rng.integers(1, 8)), n_cells))
    cell_n = rng.geometric(1 / (k + 1), n_cells).astype(np.int64)
    bin_n = np.bincount(cell_bin, weights=cell_n).astype(np.int64)
    done = suppression.suppress(cell_bin, cell_n, bin_n, k)
    assert (cell_n[done.cells] >= k).all() and (bin_n[done.bins] >= k).all()
    assert _isolated(cell_bin, cell_n, bin_n, done, k) == []
    assert _verifier_view(cell_bin, cell_n, bin_n, done, k) == []
    first = suppression.primary(cell_n, bin_n, k)
    # The verifier's rule and the analyst's subtractions agree on the primary table too.
    assert bool(_isolated(cell_bin, cell_n, bin_n, first, k)) == bool(
        _verifier_view(cell_bin, cell_n, bin_n, first, k))
