"""The MOB family (seed 003) as a plug-in of the release machinery."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import psycopg

from anonymizers.errors import InputError
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

    def resolve_params(self, conn: psycopg.Connection, dataset: str, dataset_id: int, k: int,
                       params: dict[str, Any], say: Callable[[str], None],
                       window: tuple[str, str]) -> dict[str, Any]:
        """Refuse a dataset without quasi-identifiers before the run: the model is defined
        by them (seed 003 §3), and they are made by a command of their own."""
        from anonymizers.db.sqlfiles import fetch_columns

        found = fetch_columns(conn, "mob/004_dataset_qids.sql", {"dataset_id": dataset_id})
        if not found["has_qids"][0]:
            raise InputError(
                f"dataset {dataset!r} has no quasi-identifiers, which MOB methods protect: "
                f"make them with `anonymizers qids generate --dataset {dataset}` (or load "
                f"yours with `anonymizers qids load FILE --dataset {dataset}`), then release")
        return params

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
