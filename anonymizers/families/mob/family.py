"""The MOB family (seed 003) as a plug-in of the release machinery."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import psycopg

from anonymizers.families.base import Family, ManifestCounts, Metrics, ReportLayer, StepFunction
from anonymizers.families.mob import steps
from anonymizers.families.registry import FAMILIES

__all__ = ["FAMILY", "MobFamily"]


class MobFamily(Family):
    """mob_extreme_union, mob_symmetric: objects and their regions per time point."""

    entry = FAMILIES["mob"]

    def steps(self) -> Mapping[str, StepFunction]:
        return {"prepare_objects": steps.prepare_objects,
                "anonymize_objects": steps.anonymize_objects,
                "build_objects": steps.build_objects}

    @property
    def release_tables(self) -> tuple[str, ...]:
        return ("objects", "positions")

    def manifest_counts(self, conn: psycopg.Connection, release: Any) -> ManifestCounts:
        return ManifestCounts.from_sql(conn, "mob/090_manifest_counts.sql",
                                       release.window_params(), work=release.work_schema,
                                       build=release.build_schema)

    def measure(self, conn: psycopg.Connection, release: Any) -> Metrics:
        from anonymizers.families.mob.metrics import measure_release

        return measure_release(conn, release)

    @property
    def report_layers(self) -> tuple[ReportLayer, ...]:
        return (ReportLayer("positions", "geom", "regions of the objects per time point",
                            time_start="t", time_end="t"),)

    @property
    def footprint(self) -> str:
        return "mob/compare_footprint.sql"


FAMILY = MobFamily()
