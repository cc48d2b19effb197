"""The metrics of a trajectory-groups release (seed 004 eq. 33; coverage; demographics),
measured on the release about to publish."""

from __future__ import annotations

from typing import Any

import psycopg

from anonymizers.db.sqlfiles import fetch_columns
from anonymizers.families.base import MetricRow, Metrics
from anonymizers.metrics.shares import share

__all__ = ["measure_release"]


def measure_release(conn: psycopg.Connection, release: Any) -> Metrics:
    """Preserved length (§5.1, eq. 33 as its text reads it), visits and persons covered,
    mean group length, counts of the release's tables."""
    found = {name: values[0] for name, values in fetch_columns(
        conn, "groups/080_measures.sql", work=release.work_schema,
        build=release.build_schema).items()}
    rows: list[MetricRow] = [
        ("tg_preserved_ratio", share(found["group_visits"], found["visits_in"]), "ratio",
         "Seed 004 §5.1: total length of the published groups times their trajectories, over "
         "the total length of the window's place sequences (the text's reading; eq. 33 as "
         "printed is its inverse). At most 1 under tg_nonoverlapping; above 1 is possible "
         "under tg_overlapping, whose groups share visits"),
        ("visits_published_share", share(found["visits_covered"], found["visits_in"]),
         "ratio", "Share of the window's visits counted in at least one published group"),
        ("persons_published_share", share(found["persons_published"], found["persons_in"]),
         "ratio", "Share of the window's persons counted in at least one published group"),
        ("tg_group_length_mean", share(found["length_sum"], found["groups"]), "places",
         "Mean number of places of a published group's sequence"),
        ("tg_od_groups", int(found["od_groups"]), "count",
         "Published common origin and destination groups (§4.3.3)"),
        ("tg_demographic_classes", int(found["classes"]), "count",
         "Published demographic classes (§4.4)"),
        ("tg_groups_with_classes", int(found["groups_with_classes"]), "count",
         "Published groups with at least one demographic class"),
        ("tg_places", int(found["places"]), "count", "Published places"),
        ("tg_classes_suppressed_by_hiding", int(found["classes_suppressed_by_hiding"]),
         "count", "Demographic classes not published: boundary hiding (§4.4.5) left fewer "
         "than k of the group's persons in their box, which the thesis would publish"),
    ]
    return Metrics([*rows, _homogeneity_row(conn, release)])


def _homogeneity_row(conn: psycopg.Connection, release: Any) -> MetricRow:
    """The share of published prefixes followed by a single place, as the generalization
    family measures its sequences (the homogeneity attack of l-diversity): the published
    groups through such a prefix all go on one way, so whoever knows a target is among
    their travellers learns where the target went next, although k persons did. An upper
    bound for a target known only to have travelled the prefix: travellers whose
    continuation was not published are not in the tree."""
    from anonymizers.families.generalization.homogeneity import homogeneity

    codes: dict[str, int] = {}
    sequences = [[codes.setdefault(place, len(codes)) for place in places]
                 for places in fetch_columns(conn, "groups/085_group_sequences.sql",
                                             build=release.build_schema)["places"]]
    found = homogeneity(sequences)
    return ("homogeneous_prefix_share", share(found.homogeneous, found.continued), "ratio",
            "Share of the published groups' prefixes (a group's first places, as a prefix "
            "tree of all published sequences) followed by exactly one place, among those "
            "followed by at least one: the published groups through such a prefix all go on "
            "one way, which tells where a target among their travellers went next")

