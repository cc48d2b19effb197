"""The aggregates family (presence counts, origin-destination matrices) as a plug-in of the
release machinery."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import psycopg

from anonymizers.families.aggregates import steps
from anonymizers.families.base import Family, ManifestCounts, Metrics, ReportLayer, StepFunction
from anonymizers.families.registry import FAMILIES

__all__ = ["FAMILY", "AggregatesFamily"]


class AggregatesFamily(Family):
    """presence and od: k-anonymous counts per zone and time bin, with secondary
    suppression over the hierarchy cells -> bin totals -> window total."""

    entry = FAMILIES["aggregates"]

    def steps(self) -> Mapping[str, StepFunction]:
        return {"map_zones": steps.map_zones,
                "count_cells": steps.count_cells,
                "suppress_cells": steps.suppress_cells,
                "build_aggregates": steps.build_aggregates}

    @property
    def release_tables(self) -> tuple[str, ...]:
        return ("zones", "zone_centroids", "presence_counts", "od_counts", "bin_totals", "totals")

    def manifest_counts(self, conn: psycopg.Connection, release: Any) -> ManifestCounts:
        return ManifestCounts.from_sql(conn, "aggregates/090_manifest_counts.sql",
                                       release.window_params(), work=release.work_schema,
                                       build=release.build_schema)

    def measure(self, conn: psycopg.Connection, release: Any) -> Metrics:
        from anonymizers.families.aggregates.metrics import measure_release

        return measure_release(conn, release)

    def resolve_params(self, conn: psycopg.Connection, dataset: str, dataset_id: int, k: int,
                       params: dict[str, Any], say: Callable[[str], None],
                       window: tuple[str, str]) -> dict[str, Any]:
        """Refuse zones=dataset without places, zones=voronoi without a published
        generalization release, and a window shorter than a bin or of fewer than k
        persons, before the run."""
        return steps.resolve_params(conn, dataset, dataset_id, k, params, window)

    @property
    def report_layers(self) -> tuple[ReportLayer, ...]:
        # A choropleth per bin (presence), a flow map per bin (od); each method leaves the
        # other's table empty, so its layer draws nothing.
        return (ReportLayer("zones", "geom", "zones of the published counts"),
                ReportLayer("presence_counts", "geom", "persons per zone and bin (n_lo)",
                            weight="n_lo", time_start="bin_start", time_end="bin_end",
                            query="aggregates/100_report_presence.sql"),
                ReportLayer("od_counts", "geom", "moves between zone centroids (n_lo)",
                            weight="n_lo", time_start="bin_start", time_end="bin_end",
                            query="aggregates/101_report_flows.sql"))

    @property
    def footprint(self) -> str:
        return "aggregates/compare_footprint.sql"


FAMILY = AggregatesFamily()
