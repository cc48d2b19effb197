"""The "before" view of a report: raw fixes as squares of k or more persons, never a fix.

The raw fixes of the release's window are counted in SQL (``sql/report/density.sql``) in
the squares of fixed lattices of several sizes, anchored at the CRS origin. A square is
shown only when at least k distinct persons have a fix in it (privacy rule 1: no figure
from fewer than k persons); the report takes the finest size at which the shown squares
hold at least ``min_share`` of the window's fixes, so the picture is neither mostly hidden
nor coarser than it needs to be.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg

from anonymizers.db.sqlfiles import fetch_columns, fetch_rows

__all__ = ["SIZES_M", "DensityBin", "DensityView", "choose_view", "k_supported",
           "read_density"]

SIZES_M: tuple[float, ...] = (250.0, 500.0, 1000.0, 2000.0, 5000.0, 10000.0, 20000.0)
MIN_SHARE = 0.8


@dataclass(frozen=True)
class DensityBin:
    """One square of the lattice of ``size`` metres: [ix size, (ix + 1) size) x [iy ...)."""

    size: float
    ix: int
    iy: int
    n_persons: int
    n_fixes: int

    @property
    def bounds(self) -> tuple[float, float, float, float]:
        return (self.ix * self.size, self.iy * self.size,
                (self.ix + 1) * self.size, (self.iy + 1) * self.size)


@dataclass(frozen=True)
class DensityView:
    """The squares shown at the chosen size, and what share of the fixes they hold."""

    size: float
    bins: tuple[DensityBin, ...]
    shown_share: float
    k: int


def k_supported(bins: Iterable[DensityBin], k: int) -> list[DensityBin]:
    """The squares of at least ``k`` distinct persons (the SQL already keeps only those:
    this is the drawing's own guard, so no figure ever comes from fewer than k persons)."""
    return [b for b in bins if b.n_persons >= k]


def choose_view(bins: Sequence[DensityBin], total_fixes: int | None, k: int,
                sizes: Sequence[float] = SIZES_M, min_share: float = MIN_SHARE
                ) -> DensityView | None:
    """The squares to draw: those of at least k persons, at the finest size at which they
    hold ``min_share`` of the fixes.

    Parameters
    ----------
    bins : sequence of DensityBin
        Squares of every size (those below k persons are dropped here whatever the SQL did).
    total_fixes : int or None
        The window's fixes (interval-filtered; None: fewer than k).
    k : int
        The release's k: a square is drawn only with at least k distinct persons.
    sizes : sequence of float
        The lattice sizes to consider, in metres.
    min_share : float
        The share of ``total_fixes`` the drawn squares must hold.

    Returns
    -------
    DensityView or None
        The finest size reaching ``min_share``, else the size whose squares hold the largest
        share; None when no square of any size holds k persons.
    """
    best: DensityView | None = None
    for size in sorted(sizes):
        shown = tuple(k_supported((b for b in bins if b.size == size), k))
        if not shown:
            continue
        share = sum(b.n_fixes for b in shown) / total_fixes if total_fixes else 0.0
        view = DensityView(size, shown, min(share, 1.0), k)
        if share >= min_share:
            return view
        if best is None or view.shown_share > best.shown_share:
            best = view
    return best


def read_density(conn: psycopg.Connection, manifest: dict[str, Any],
                 sizes: Sequence[float] = SIZES_M) -> DensityView | None:
    """The density view of the raw fixes of the window of the release of ``manifest``."""
    from anonymizers.release.spec import area_of_use

    k = int(manifest["k"])
    params = {"dataset": manifest["dataset"], "window_start": manifest["window_start"],
              "window_end": manifest["window_end"], "srid": int(manifest["srid"]),
              "sizes": [float(s) for s in sizes], "k": k,
              "count_interval": int(manifest["count_interval"]),
              **area_of_use(int(manifest["srid"]))}
    rows = fetch_rows(conn, "report/density.sql", params)
    bins = [DensityBin(float(row["size"]), int(row["ix"]), int(row["iy"]),
                       int(row["n_persons"]), int(row["n_fixes"])) for row in rows]
    total = fetch_columns(conn, "report/density_total.sql", params)["n_fixes"][0]
    return choose_view(bins, None if total is None else int(total), k, sizes)
