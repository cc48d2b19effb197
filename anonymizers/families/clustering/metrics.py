"""The metrics of a clustering release (seed 002 eq. 1 and counts), measured on the release
about to publish."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pandas as pd
import psycopg

from anonymizers.db.sqlfiles import copy_out, fetch_columns
from anonymizers.families.base import MetricRow, Metrics

__all__ = ["measure_release"]


def measure_release(conn: psycopg.Connection, release: Any) -> Metrics:
    """IL (eq. 1) over the slices, area per published rectangle, persons kept, counts."""
    work = release.work_schema
    found = {name: values[0] for name, values in fetch_columns(
        conn, "clustering/060_measures.sql", work=work, build=release.build_schema).items()}
    rows: list[MetricRow] = [_information_loss(conn, work)]
    rows.append(("area_per_region_m2", _float(found["area_per_region_m2"]), "m2",
                 "Average area of a published group rectangle (snapped outward to the "
                 "lattice)"))
    persons_in = int(found["persons_in"])
    share = int(found["persons_published"]) / persons_in if persons_in else float("nan")
    rows.append(("persons_published_share", share, "ratio",
                 "Share of the window's persons who are in a published group"))
    rows += [("groups_regions", int(found["regions"]), "count",
              "Published (group, time point) rectangles"),
             ("tcaa_pieces", int(found["pieces"]), "count",
              "Synchronized pieces (one person over one time slice) that were clustered")]
    return Metrics(rows)


def _float(value: Any) -> float:
    return float(value) if value is not None else float("nan")


def _information_loss(conn: psycopg.Connection, work: str) -> MetricRow:
    """Eq. 1 on each slice's synchronized set (its published groups against the box of all
    its pieces), averaged over every (group, time point) of the release."""
    from anonymizers.families.clustering.tcaa import information_loss

    data = copy_out(conn, "clustering/070_read_grouped.sql", work=work)
    frame = pd.read_csv(io.BytesIO(data), names=["piece", "slice", "group", "seq", "x", "y"])
    n = int(frame["seq"].max()) + 1 if len(frame) else 0
    total, weight = 0.0, 0
    for _, part in frame.groupby("slice", sort=True):
        labels = part["group"].to_numpy(np.int64)[::n]
        groups = np.unique(labels[labels >= 0]).size
        if groups:  # eq. 1 averages over the m groups x n time points of one set
            total += information_loss(part["x"].to_numpy(float).reshape(-1, n),
                                      part["y"].to_numpy(float).reshape(-1, n),
                                      labels) * groups * n
            weight += groups * n
    value = total / weight if weight else float("nan")
    return ("tcaa_information_loss", value, "ratio",
            "IL of seed 002 eq. 1: mean over published (group, time point) of the area of the "
            "group's minimum bounding rectangle over the area of the rectangle of all pieces "
            "of its slice at that time (0 = exact, 1 = no better than the whole set)")
