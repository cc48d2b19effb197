"""Measures of a MOB release's quality (seed 003 §6.3): information loss, equivalence classes,
range-query distortion.

Pure numpy over grid-cell arrays: a position is an integer cell (x, y); a published region
is an inclusive rectangle of cells (x0, y0, x1, y1). Every figure is an aggregate over
objects, classes or queries (privacy rule 3): no individual's value is returned.

References
----------
Yarovoy, Bonchi, Lakshmanan, Wang. Anonymizing Moving Objects: How to Hide a MOB in a
Crowd? EDBT 2009, §3 (IL), §6.3 (average IL, coverage of equivalence classes, possibly /
definitely inside range-query distortion).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from anonymizers.errors import InputError

__all__ = ["ClassSummary", "Distortion", "average_information_loss", "class_summary",
           "range_query_distortion"]


def average_information_loss(x0: np.ndarray, y0: np.ndarray, x1: np.ndarray,
                             y1: np.ndarray) -> float:
    """Mean of 1 - 1/area over the published (object, time point) regions, area in cells.

    The paper averages over n objects x m time points; an object with no position at a
    time point (no trajectory running) publishes nothing there and is not counted.
    NaN when nothing is published.
    """
    if x0.size == 0:
        return float("nan")
    area = (x1 - x0 + 1).astype(np.float64) * (y1 - y0 + 1)
    if (area < 1).any():
        raise InputError("a region has an empty cell range (x1 < x0 or y1 < y0)")
    return float(np.mean(1.0 - 1.0 / area))


@dataclass(frozen=True)
class ClassSummary:
    """The equivalence classes of a release (one class = one (time point, class) pair)."""

    n_classes: int
    median_size: float  # NaN without classes
    coverage: float  # share of classes of size k .. 2k - 1 (NaN without classes)


def class_summary(sizes: np.ndarray, k: int) -> ClassSummary:
    """Number, median size and coverage (sizes in [k, 2k - 1]) of the classes of ``sizes``."""
    if sizes.size == 0:
        return ClassSummary(0, float("nan"), float("nan"))
    if (sizes < k).any():
        raise InputError(f"an equivalence class has fewer than k={k} members")
    covered = (sizes >= k) & (sizes <= 2 * k - 1)
    return ClassSummary(int(sizes.size), float(np.median(sizes)), float(covered.mean()))


@dataclass(frozen=True)
class Distortion:
    """Average relative errors of possibly- and definitely-inside range queries."""

    possibly_inside: float
    definitely_inside: float
    queries: int  # regions x time points asked
    possibly_defined: int  # queries whose denominator was not 0
    definitely_defined: int


def range_query_distortion(true_x: np.ndarray, true_y: np.ndarray, true_t: np.ndarray,
                           regions: tuple[np.ndarray, ...], region_t: np.ndarray,
                           n_time_points: int, rng: np.random.Generator,
                           n_regions: int = 100, n_times: int = 100,
                           max_side: int | None = None) -> Distortion:
    """|pi(D) - pi(D*)| / pi(D*) and |di(D) - di(D*)| / di(D), averaged (seed 003 §6.3).

    ``true_*``: the original positions (one row per person and time point, all persons of
    the window); ``regions`` = (x0, y0, x1, y1) and ``region_t``: the published regions.
    pi counts objects whose position (possibly generalized) overlaps the query rectangle,
    di those whose position lies inside it; on the original data both count the points
    inside. Queries: ``n_regions`` random rectangles of whole cells inside the data's
    cell extent (sides up to ``max_side`` cells, default a quarter of the extent) times
    ``n_times`` random time points; a query whose denominator is 0 has no relative error
    and is left out of the average (counted in ``*_defined``).
    """
    if true_x.size == 0:
        raise InputError("no positions: nothing to query")
    box = _queries(true_x, true_y, rng, n_regions, max_side)
    times = rng.integers(0, n_time_points, size=n_times)
    x0, y0, x1, y1 = regions
    errors_pi: list[np.ndarray] = []
    errors_di: list[np.ndarray] = []
    for t in np.unique(times):
        weight = int((times == t).sum())
        at, pub = true_t == t, region_t == t
        inside = _count_points(true_x[at], true_y[at], box)
        over = _count_overlaps(x0[pub], y0[pub], x1[pub], y1[pub], box)
        within = _count_within(x0[pub], y0[pub], x1[pub], y1[pub], box)
        errors_pi += [_relative(inside, over, over)] * weight
        errors_di += [_relative(inside, within, inside)] * weight
    pi, di = np.concatenate(errors_pi), np.concatenate(errors_di)
    return Distortion(float(np.nanmean(pi)) if np.isfinite(pi).any() else float("nan"),
                      float(np.nanmean(di)) if np.isfinite(di).any() else float("nan"),
                      n_regions * n_times, int(np.isfinite(pi).sum()),
                      int(np.isfinite(di).sum()))


def _queries(x: np.ndarray, y: np.ndarray, rng: np.random.Generator, n: int,
             max_side: int | None) -> np.ndarray:
    """``n`` random rectangles (x0, y0, x1, y1), inclusive, inside the cells' extent."""
    lo = np.array([x.min(), y.min()])
    span = np.array([x.max(), y.max()]) - lo + 1
    side = max_side or max(1, int(span.max()) // 4)
    sides = rng.integers(1, side + 1, size=(n, 2))
    sides = np.minimum(sides, span)
    corner = lo + (rng.random((n, 2)) * (span - sides + 1)).astype(np.int64)
    return np.column_stack([corner, corner + sides - 1])


def _count_points(x: np.ndarray, y: np.ndarray, box: np.ndarray) -> np.ndarray:
    inside = ((x[None, :] >= box[:, [0]]) & (x[None, :] <= box[:, [2]])
              & (y[None, :] >= box[:, [1]]) & (y[None, :] <= box[:, [3]]))
    return inside.sum(axis=1)


def _count_overlaps(x0, y0, x1, y1, box: np.ndarray) -> np.ndarray:
    overlap = ((x0[None, :] <= box[:, [2]]) & (x1[None, :] >= box[:, [0]])
               & (y0[None, :] <= box[:, [3]]) & (y1[None, :] >= box[:, [1]]))
    return overlap.sum(axis=1)


def _count_within(x0, y0, x1, y1, box: np.ndarray) -> np.ndarray:
    within = ((x0[None, :] >= box[:, [0]]) & (x1[None, :] <= box[:, [2]])
              & (y0[None, :] >= box[:, [1]]) & (y1[None, :] <= box[:, [3]]))
    return within.sum(axis=1)


def _relative(original: np.ndarray, published: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """|original - published| / denominator, NaN where the denominator is 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.abs(original - published) / denominator.astype(np.float64)
    return np.where(denominator > 0, ratio, np.nan)
