"""The metrics of an aggregates release, measured on the release about to publish: how much
of the table the suppression kept (privacy rules 3 and 8: counts and shares go through
the shared writer, which interval-filters every count and divides filtered counts)."""

from __future__ import annotations

from typing import Any

import psycopg

from anonymizers.db.sqlfiles import fetch_columns
from anonymizers.families.base import MetricRow, Metrics
from anonymizers.metrics.shares import share

__all__ = ["measure_release"]


def measure_release(conn: psycopg.Connection, release: Any) -> Metrics:
    """Cells published and suppressed (primary, secondary), bins published, and the shares
    of person-bins (moves) and of persons that a published cell counts."""
    found = {name: int(values[0]) for name, values in fetch_columns(
        conn, "aggregates/080_measures.sql", {"k": release.k},
        work=release.work_schema).items()}
    rows: list[MetricRow] = [
        ("ag_cells_published", found["cells_published"], "count",
         "Published cells (zone and bin, or origin, destination and bin)"),
        ("ag_cells_suppressed_primary", found["cells_primary"], "count",
         "Cells of 1 to k - 1 persons, not published (primary suppression)"),
        ("ag_cells_suppressed_secondary", found["cells_secondary"], "count",
         "Cells of at least k persons not published so that no published total minus its "
         "published parts reveals fewer than k persons (secondary suppression)"),
        ("ag_bins_published", found["bins_published"], "count",
         "Published bin totals"),
        ("person_bins_published_share", share(found["members_published"], found["members"]),
         "ratio", "Share of the window's person-bins (presence) or moves (od) counted in a "
         "published cell"),
        ("persons_published_share", share(found["persons_published"], found["persons"]),
         "ratio", "Share of the window's persons counted in at least one published cell"),
    ]
    return Metrics(rows)
