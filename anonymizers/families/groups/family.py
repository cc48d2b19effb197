"""The trajectory-groups family (seed 004, Nordström) as a plug-in of the release machinery."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import psycopg

from anonymizers.families.base import Family, ManifestCounts, Metrics, ReportLayer, StepFunction
from anonymizers.families.groups import steps
from anonymizers.families.registry import FAMILIES

__all__ = ["FAMILY", "GroupsFamily"]


class GroupsFamily(Family):
    """tg_overlapping and tg_nonoverlapping: sequences of places travelled by at least k
    persons, with common origin/destination groups and demographic classes."""

    entry = FAMILIES["groups"]

    def steps(self) -> Mapping[str, StepFunction]:
        return {"map_places": steps.map_places,
                "group_trajectories": steps.group_trajectories,
                "demographic_classes": steps.demographic_classes,
                "build_places_release": steps.build_places_release}

    @property
    def release_tables(self) -> tuple[str, ...]:
        return ("places", "groups", "od_groups", "demographic_classes")

    def manifest_counts(self, conn: psycopg.Connection, release: Any) -> ManifestCounts:
        return ManifestCounts.from_sql(conn, "groups/090_manifest_counts.sql",
                                       work=release.work_schema, build=release.build_schema)

    def measure(self, conn: psycopg.Connection, release: Any) -> Metrics:
        from anonymizers.families.groups.metrics import measure_release

        return measure_release(conn, release)

    def resolve_params(self, conn: psycopg.Connection, dataset: str, dataset_id: int, k: int,
                       params: dict[str, Any], say: Callable[[str], None],
                       window: tuple[str, str]) -> dict[str, Any]:
        """``places``: 'auto' becomes dataset (the dataset has a places file) or grid;
        ``demographics``: 'auto' becomes the GA when at least k persons of the dataset, and
        of the window, carry every attribute of the demographic grid, else none. A choice
        the data cannot serve (places=dataset without places, ga or mondrian without the
        attributes) is refused here, not in a step after the grouping's work; ``say`` tells
        which values were chosen, and the manifest records them."""
        return {**params,
                "places": steps.resolve_places(conn, dataset, dataset_id, params, say),
                "demographics": steps.resolve_demographics(conn, dataset, dataset_id, k, params,
                                                           say, window)}

    @property
    def report_layers(self) -> tuple[ReportLayer, ...]:
        # Drawn in this order: neighbourhoods under places under the groups' lines.
        return (ReportLayer("od_groups", "places",
                            "common origin/destination groups (hull of their places)",
                            weight="n_lo", query="groups/101_report_od_groups.sql"),
                ReportLayer("places", "geom", "places of the published groups"),
                ReportLayer("groups", "places", "groups through their places (width: n_lo)",
                            weight="n_lo", query="groups/100_report_group_lines.sql"))

    @property
    def footprint(self) -> str:
        return "groups/compare_footprint.sql"


FAMILY = GroupsFamily()
