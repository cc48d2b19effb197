"""The clustering family (tcaa; mla_heuristic, mla_kmeans, mla_iterative_kmeans): the
anonymizer's own counts of a release against the verifier's recount.

Items, keyed by what the build schema publishes (``groups.group_id``, and
``group_regions.seq`` of the group):

* ``group`` (both methods): the persons the group stands for.

  - TCAA, anonymizer: ``work.cl_group_sizes.n_persons``, the distinct persons of the
    group's pieces that 080_build_release.sql published it on. Verifier: the persons whose
    interpolated positions lie in every one of the group's rectangles
    (:func:`anonymizers.families.clustering.verifier_support.derive_support`, the gate's count).
  - MLA, anonymizer: ``work.ml_clusters.matched_persons`` (through ``work.ml_group_ids``),
    the distinct persons with a point in every published column, what
    085_build_aligned_release.sql published it on. Verifier: the persons with a trajectory
    whose raw fixes pass the group's regions in order
    (:func:`anonymizers.families.clustering.verifier.sequence_support`, the gate's count).

* ``region`` (one per row of ``group_regions``):

  - TCAA, anonymizer: the distinct persons of the group's pieces with a position at that
    time point (the rectangle is their extent, snapped outward); it keeps no count of its
    own, so this is derived from ``cl_groups``, ``cl_pieces`` and ``cl_positions`` as 080
    derives the rectangle. Verifier: the distinct persons of the window whose position at
    that time point lies in the rectangle (``Support.box_persons``, counted in the same
    pass as the groups' members; the gate checks it too).
  - MLA, anonymizer: ``work.ml_regions.n_persons``, the distinct persons of the points the
    alignment put in that column. Verifier: the distinct persons of the window with a raw
    fix in the closed rectangle during [t_start, t_end), the way the verifier's support
    matches a fix to a region (its fixes from clustering/verify/sequence_fixes.sql; the
    gate does not count regions of MLA: each holds its group's supporters, and they are
    checked).

For TCAA ``details`` also counts the (group, person) memberships of the anonymizer that the
verifier does not find (``members_not_found``): each member's position is inside every
rectangle of its group by construction, so with agreeing derivations there are none, even
where the counts agree (an outsider inside every rectangle can hide a missed member).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import psycopg
from psycopg import sql

from anonymizers.db.sqlfiles import fetch_columns, run_sql_file
from anonymizers.families.clustering.verifier import (
    declared_traits,
    sequence_support,
    support_window,
)
from anonymizers.families.clustering.verifier_support import (
    Boxes,
    Positions,
    Support,
    members_and_box_persons,
)
from anonymizers.verifiers.base import read_release
from differential import Comparison, Item

__all__ = ["ClusteringComparison", "compare_release", "explain"]

Member = tuple[int, str]  # (group_id, raw user_id)


@dataclass
class ClusteringComparison(Comparison):
    """Items keyed by group_id and (group_id, seq); for TCAA, both sides' members."""

    anonymizer_members: set[Member] = field(default_factory=set)
    verifier_members: set[Member] = field(default_factory=set)

    def members_not_found(self) -> list[Member]:
        """(group_id, user_id) the anonymizer put in a group and the verifier does not."""
        return sorted(self.anonymizer_members - self.verifier_members)


def compare_release(conn: psycopg.Connection, work: str, build: str) -> ClusteringComparison:
    """Every published group and region of ``build``, counted by both sides."""
    release = read_release(conn, build)
    window = support_window(release)
    if declared_traits(release).aligned:
        return _aligned(conn, work, build, window)
    return _synchronized(conn, work, build, window)


def _rows(conn: psycopg.Connection, query: str, *schemas: str,
          params: dict[str, Any] | None = None) -> list[tuple[Any, ...]]:
    """``query`` with its {} placeholders filled by ``schemas`` (identifiers)."""
    return conn.execute(sql.SQL(query).format(*(sql.Identifier(s) for s in schemas)),
                        params).fetchall()


# ------------------------------------------------------------------------------ TCAA


def _synchronized(conn: psycopg.Connection, work: str, build: str,
                  window: dict[str, Any]) -> ClusteringComparison:
    counted = dict(_rows(conn, "SELECT group_id, n_persons FROM {}.cl_group_sizes", work))
    region_counts = {(g, seq): n for g, seq, n in _rows(
        conn, "SELECT s.group_id, q.seq, count(DISTINCT p.person_index) "
        "FROM {}.cl_group_sizes AS s JOIN {}.cl_groups USING (group_index) "
        "JOIN {}.cl_pieces AS p USING (piece_id) JOIN {}.cl_positions AS q USING (piece_id) "
        "GROUP BY s.group_id, q.seq", work, work, work, work)}
    support, names = _verifier_support(conn, build, window)
    recounted = {group: n for group, _, n in support.rows()}
    seq_of = {(g, t): seq for g, seq, t in _rows(
        conn, "SELECT group_id, seq, extract(epoch FROM t_start)::float8 FROM {}.group_regions",
        build)}
    box_counts = {(g, seq_of[(g, t)]): n for g, t, n in support.region_rows()}
    items = [Item("group", g, int(counted.get(g, 0)), recounted[g]) for g in sorted(recounted)]
    items += [Item("region", key, int(region_counts.get(key, 0)), box_counts[key])
              for key in sorted(box_counts)]
    comparison = ClusteringComparison(
        items, anonymizer_members=_anonymizer_members(conn, work, window),
        verifier_members={(int(g), names[p]) for g, p in zip(
            support.member_group.tolist(), support.member_person.tolist(), strict=True)})
    comparison.details["members_not_found"] = len(comparison.members_not_found())
    return comparison


def _verifier_support(conn: psycopg.Connection, build: str,
                      window: dict[str, Any]) -> tuple[Support, list[str]]:
    """What :func:`~anonymizers.families.clustering.verifier_support.derive_support` derives, the
    same SQL and matching, with the user_id of each person number (its rank among the
    persons with a position, in "C" order, as clustering/verify/position_rows.sql numbers
    them)."""
    with conn.transaction():
        run_sql_file(conn, "clustering/verify/positions.sql", window, release=build)
        positions = Positions.from_columns(fetch_columns(
            conn, "clustering/verify/position_rows.sql"))
        names = [row[0] for row in conn.execute(
            'SELECT DISTINCT user_id COLLATE "C" FROM cl_verify_positions ORDER BY 1')]
    boxes = Boxes.from_columns(fetch_columns(conn, "clustering/verify/boxes.sql",
                                             release=build))
    groups = fetch_columns(conn, "clustering/verify/groups.sql", release=build)
    member_group, member_person, box_persons = members_and_box_persons(positions, boxes)
    return Support(positions, boxes, np.array(groups["group_id"], dtype=np.int64),
                   groups["n_persons"], member_group, member_person, box_persons), names


def _anonymizer_members(conn: psycopg.Connection, work: str,
                        window: dict[str, Any]) -> set[Member]:
    """(group_id, user_id) of every piece of a published group. The work tables keep
    person_index only: it is the rank of md5(window start || ':' || user_id) among the
    window's persons, as 010_window_fixes.sql numbers them."""
    names: dict[int, str] = dict(conn.execute(
        "WITH persons AS (SELECT DISTINCT user_id FROM raw.points WHERE dataset_id = "
        "%(dataset_id)s AND t >= %(window_start)s::timestamptz AND t < %(window_end)s::"
        "timestamptz AND lon BETWEEN %(lon_min)s AND %(lon_max)s AND lat BETWEEN %(lat_min)s "
        "AND %(lat_max)s), salt AS (SELECT extract(epoch FROM %(window_start)s::timestamptz)"
        "::text || ':' AS prefix) SELECT (dense_rank() OVER (ORDER BY md5(salt.prefix || "
        "user_id), user_id) - 1)::integer, user_id FROM persons CROSS JOIN salt",
        window).fetchall())
    rows = _rows(conn, "SELECT DISTINCT s.group_id, p.person_index "
                 "FROM {}.cl_group_sizes AS s JOIN {}.cl_groups USING (group_index) "
                 "JOIN {}.cl_pieces AS p USING (piece_id)", work, work, work)
    return {(int(g), names[p]) for g, p in rows}


# ------------------------------------------------------------------------------- MLA


def _aligned(conn: psycopg.Connection, work: str, build: str,
             window: dict[str, Any]) -> ClusteringComparison:
    counted = dict(_rows(conn, "SELECT group_id, matched_persons FROM {}.ml_group_ids", work))
    region_counts = {(g, seq): n for g, seq, n in _rows(
        conn, "SELECT g.group_id, r.seq, r.n_persons FROM {}.ml_regions AS r "
        "JOIN {}.ml_group_ids AS g USING (cluster_index)", work, work)}
    recounted = {group: n for group, _, n in sequence_support(conn, build, window)}
    region_persons = _region_persons(conn, build, window)
    items = [Item("group", g, int(counted.get(g, 0)), int(recounted[g]))
             for g in sorted(recounted)]
    items += [Item("region", key, int(region_counts.get(key, 0)), n)
              for key, n in sorted(region_persons.items())]
    return ClusteringComparison(items)


def _region_persons(conn: psycopg.Connection, build: str,
                    window: dict[str, Any]) -> dict[tuple[int, int], int]:
    """The distinct persons with a fix of the verifier's (clustering/verify/
    sequence_fixes.sql) in each published region: the closed rectangle during [t_start, t_end).
    MLA's regions are coarse (a whole day: 5,762 regions of 4,300 km² and 15 hours on
    average), so a join in SQL would pair most fixes with most regions: here, per region,
    the fixes of its interval by a binary search over time, then the rectangle test."""
    with conn.transaction():
        run_sql_file(conn, "clustering/verify/sequence_fixes.sql", window)
        fixes = conn.execute(
            "SELECT person, (extract(epoch FROM t) * 1000000)::int8, x, y "
            "FROM ml_verify_fixes ORDER BY t").fetchall()
    persons, person = np.unique([row[0] for row in fixes], return_inverse=True)
    t_us = np.array([row[1] for row in fixes], dtype=np.int64)
    xy = np.array([row[2:4] for row in fixes], dtype=np.float64).reshape(-1, 2)
    found: dict[tuple[int, int], int] = {}
    for g, seq, t0, t1, x0, y0, x1, y1 in _rows(
            conn, "SELECT group_id, seq, (extract(epoch FROM t_start) * 1000000)::int8, "
            "(extract(epoch FROM t_end) * 1000000)::int8, ST_XMin(geom), ST_YMin(geom), "
            "ST_XMax(geom), ST_YMax(geom) FROM {}.group_regions", build):
        lo, hi = np.searchsorted(t_us, [t0, t1], side="left")
        x, y = xy[lo:hi, 0], xy[lo:hi, 1]
        inside = (x0 <= x) & (x <= x1) & (y0 <= y) & (y <= y1)
        held = np.bincount(person[lo:hi][inside], minlength=persons.size)
        found[(int(g), int(seq))] = int(np.count_nonzero(held))
    return found


# -------------------------------------------------------------------------- explain


def explain(comparison: ClusteringComparison, item: Item) -> dict[str, object]:
    """For a TCAA group, the persons only the anonymizer puts in it; for anything else,
    the item as counted (MLA keeps no list of its matched persons)."""
    found: dict[str, object] = {"item": (item.kind, item.key), "anonymizer": item.anonymizer,
                                "verifier": item.verifier}
    if item.kind == "group" and comparison.anonymizer_members:
        found["only_anonymizer"] = [person for group, person in comparison.members_not_found()
                                    if group == item.key]
    return found
