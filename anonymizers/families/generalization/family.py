"""The generalization family (seed 000) as a plug-in of the release machinery."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import psycopg

from anonymizers.families.base import Family, ManifestCounts, Metrics, ReportLayer, StepFunction
from anonymizers.families.generalization import steps, tessellation
from anonymizers.families.registry import FAMILIES

__all__ = ["FAMILY", "GeneralizationFamily"]


class GeneralizationFamily(Family):
    """grid_kam_cut, kam_cut, kam_rec: cells, cell sequences, flows (Monreale et al. 2010)."""

    entry = FAMILIES["generalization"]

    def steps(self) -> Mapping[str, StepFunction]:
        return {
            "project": steps.project,
            "grid_membership": steps.grid_membership,
            "characteristic_points": tessellation.characteristic_points,
            "cluster": tessellation.cluster,
            "voronoi": tessellation.voronoi,
            "progressive_generalization": tessellation.progressive_generalization,
            "visits_and_flows": steps.visits_and_flows,
            "anonymize": steps.anonymize,
            "build_release": steps.build_release,
        }

    @property
    def release_tables(self) -> tuple[str, ...]:
        return ("cells", "cell_centroids", "trajectories", "flows")

    def manifest_counts(self, conn: psycopg.Connection, release: Any) -> ManifestCounts:
        return ManifestCounts.from_sql(conn, "generalization/090_manifest_counts.sql",
                                       work=release.work_schema, build=release.build_schema)

    def measure(self, conn: psycopg.Connection, release: Any) -> Metrics:
        from anonymizers.families.generalization.metrics import compute_release_metrics

        return compute_release_metrics(conn, release)

    @property
    def report_layers(self) -> tuple[ReportLayer, ...]:
        return (ReportLayer("cells", "geom", "published cells"),
                ReportLayer("flows", "geom", "flows between cells (width: persons)",
                            weight="n_persons"))

    @property
    def footprint(self) -> str:
        return "generalization/compare_footprint.sql"


FAMILY = GeneralizationFamily()
