"""The clustering family (seed 002 TCAA; seed 001 MLA) as a plug-in of the release machinery."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import psycopg

from anonymizers.families.base import Family, ManifestCounts, Metrics, ReportLayer, StepFunction
from anonymizers.families.clustering import steps
from anonymizers.families.clustering.declaration import ClusteringTraits
from anonymizers.families.clustering.metrics import measure_release
from anonymizers.families.registry import FAMILIES, method_entry

__all__ = ["FAMILY", "ClusteringFamily"]


class ClusteringFamily(Family):
    """tcaa and the mla_* methods: groups of at least k persons, each published as one
    generalized trajectory."""

    entry = FAMILIES["clustering"]

    def steps(self) -> Mapping[str, StepFunction]:
        return {"prepare_fixes": steps.prepare_fixes,
                "cluster_pieces": steps.cluster_pieces,
                "build_groups": steps.build_groups,
                "align_clusters": steps.align_clusters,
                "build_aligned_groups": steps.build_aligned_groups}

    @property
    def release_tables(self) -> tuple[str, ...]:
        return ("groups", "group_regions")

    def manifest_counts(self, conn: psycopg.Connection, release: Any) -> ManifestCounts:
        traits: ClusteringTraits = method_entry(release.method).traits
        counts = ("clustering/095_aligned_manifest_counts.sql" if traits.aligned
                  else "clustering/090_manifest_counts.sql")
        return ManifestCounts.from_sql(conn, counts,
                                       work=release.work_schema, build=release.build_schema)

    def measure(self, conn: psycopg.Connection, release: Any) -> Metrics:
        return measure_release(conn, release)

    @property
    def report_layers(self) -> tuple[ReportLayer, ...]:
        return (ReportLayer("group_regions", "geom", "regions of the groups' trajectories",
                            time_start="t_start", time_end="t_end"),)

    @property
    def footprint(self) -> str:
        return "clustering/compare_footprint.sql"


FAMILY = ClusteringFamily()
