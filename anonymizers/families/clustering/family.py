"""The clustering family (seed 002, TCAA) as a plug-in of the release machinery."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import psycopg

from anonymizers.families.base import Family, ManifestCounts, Metrics, ReportLayer, StepFunction
from anonymizers.families.clustering import steps
from anonymizers.families.registry import FAMILIES

__all__ = ["FAMILY", "ClusteringFamily"]


class ClusteringFamily(Family):
    """tcaa: groups of at least k persons, each published as one generalized trajectory."""

    entry = FAMILIES["clustering"]

    def steps(self) -> Mapping[str, StepFunction]:
        return {"prepare_fixes": steps.prepare_fixes,
                "cluster_pieces": steps.cluster_pieces,
                "build_groups": steps.build_groups}

    @property
    def release_tables(self) -> tuple[str, ...]:
        return ("groups", "group_regions")

    def manifest_counts(self, conn: psycopg.Connection, release: Any) -> ManifestCounts:
        return ManifestCounts.from_sql(conn, "clustering/090_manifest_counts.sql",
                                       work=release.work_schema, build=release.build_schema)

    def measure(self, conn: psycopg.Connection, release: Any) -> Metrics:
        from anonymizers.families.clustering.metrics import measure_release

        return measure_release(conn, release)

    @property
    def report_layers(self) -> tuple[ReportLayer, ...]:
        return (ReportLayer("group_regions", "geom", "group regions per time point"),)


FAMILY = ClusteringFamily()
