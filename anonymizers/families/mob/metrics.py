"""The metrics of a MOB release (seed 003 §6.3), measured on the release about to publish."""

from __future__ import annotations

from typing import Any

import numpy as np
import psycopg

from anonymizers.db.sqlfiles import fetch_columns
from anonymizers.families.base import MetricRow, Metrics
from anonymizers.families.mob.quality import (
    average_information_loss,
    class_summary,
    range_query_distortion,
)
from anonymizers.families.mob.steps import read_int_columns
from anonymizers.metrics.shares import Ratio

__all__ = ["DISTORTION_DECIMALS", "RANGE_QUERIES", "RANGE_TIMES", "measure_release"]

RANGE_QUERIES = 100  # random regions (the paper's 100)
RANGE_TIMES = 100  # random time points (the paper's 100)
# Decimals the range-query distortions are published with: each is a mean of RANGE_QUERIES x
# RANGE_TIMES ratios of small counts, whose exact value is a fraction of those counts.
DISTORTION_DECIMALS = 3


def measure_release(conn: psycopg.Connection, release: Any) -> Metrics:
    """Average information loss, equivalence classes, range-query distortion, counts."""
    work = release.work_schema
    regions = read_int_columns(conn, "mob/060_read_regions.sql", work=work)
    cells = read_int_columns(conn, "mob/040_read_cells.sql", work=work)
    counts = {name: int(values[0]) for name, values in
              fetch_columns(conn, "mob/065_counts.sql", work=work).items()}
    rows = _loss_and_classes(regions, release.k)
    if len(cells["object_index"]) and len(regions["object_index"]):
        rng = np.random.default_rng(int(release.seed))
        rows += _distortion(cells, regions, counts["time_points"], rng)
    rows += [(f"mob_{name}", value, "count", _COUNT_TEXT[name])
             for name, value in counts.items()]
    return Metrics(rows)


_COUNT_TEXT = {
    "objects": "Persons of the window with a position at some time point (objects before "
               "anonymization)",
    "objects_published": "Objects published (the others could not be hidden among k)",
    "objects_blank": "Objects published with no location at any time point (presence "
                     "hidden: the persons that could not be hidden among k, and as many "
                     "more as make k)",
    "time_points": "Time points of the window (interval seconds apart)",
    "objects_with_qid": "Objects with a quasi-identifier in the window",
    "qid_time_points": "(object, time point) pairs of the quasi-identifiers in the window",
}


def _loss_and_classes(regions: dict[str, np.ndarray], k: int) -> list[MetricRow]:
    x0, y0, x1, y1 = (regions[name] for name in ("x0", "y0", "x1", "y1"))
    classed = regions["class_id"] >= 0
    pairs = np.column_stack([regions["t_index"][classed], regions["class_id"][classed]])
    _, sizes = np.unique(pairs, axis=0, return_counts=True) if len(pairs) \
        else (None, np.empty(0, dtype=np.int64))
    summary = class_summary(sizes, k)
    return [
        ("mob_information_loss_avg", average_information_loss(x0, y0, x1, y1), "ratio",
         "Average over the published (object, time point) regions of 1 - 1/area, area in "
         "grid cells (seed 003 §3, §6.3); 0 = every position exact"),
        ("mob_equivalence_classes", summary.n_classes, "count",
         "Equivalence classes: (time point, class) pairs of objects sharing one region "
         "(seed 003 Algorithm 5)"),
        ("mob_class_size_median", summary.median_size, "count",
         "Median number of objects in an equivalence class (each class has at least k)"),
        ("mob_class_coverage", Ratio(int(((sizes >= k) & (sizes <= 2 * k - 1)).sum()),
                                     summary.n_classes), "ratio",
         "Share of equivalence classes with k to 2k - 1 objects (coverage, seed 003 §6.3)"),
    ]


def _distortion(cells: dict[str, np.ndarray], regions: dict[str, np.ndarray],
                n_time_points: int, rng: np.random.Generator) -> list[MetricRow]:
    found = range_query_distortion(
        cells["cx"], cells["cy"], cells["t_index"],
        (regions["x0"], regions["y0"], regions["x1"], regions["y1"]), regions["t_index"],
        n_time_points, rng, n_regions=RANGE_QUERIES, n_times=RANGE_TIMES)
    how = (f"{RANGE_QUERIES} random rectangles of cells x {RANGE_TIMES} random time points, "
           "seeded by the input (seed 003 §6.3)")
    return [
        ("mob_possibly_inside_distortion", round(found.possibly_inside, DISTORTION_DECIMALS),
         "ratio", f"Average |pi(R,t,D) - pi(R,t,D*)| / pi(R,t,D*): objects whose region "
         f"overlaps R; {how}; rounded to {DISTORTION_DECIMALS} decimals"),
        ("mob_definitely_inside_distortion", round(found.definitely_inside, DISTORTION_DECIMALS),
         "ratio", f"Average |di(R,t,D) - di(R,t,D*)| / di(R,t,D): objects whose region lies "
         f"in R; {how}; rounded to {DISTORTION_DECIMALS} decimals"),
    ]
