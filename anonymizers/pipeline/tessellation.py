"""Steps of the data-driven tessellation (seed 000 §6.1): characteristic points, clustering,
Voronoi cells, membership and progressive generalization.

Python does the sequential and combinatorial parts (characteristic points, clustering,
merge decisions); PostGIS does the spatial ones (Voronoi, membership, neighbours, flows).
Data moves through the run's work schema: ``characteristic_points``, ``generators``,
``cells``, ``point_cells``, ``memberships``, ``visits``, ``progressive_log``.
"""

from __future__ import annotations

import io
import logging
import time
from typing import Any

import numpy as np
import pandas as pd
import psycopg
import pyarrow as pa
import pyarrow.csv as pacsv
from psycopg import sql

from anonymizers.db.sqlfiles import copy_out, run_sql_file
from anonymizers.errors import InputError
from anonymizers.pipeline.steps import step
from anonymizers.release.spec import ReleaseSpec

__all__ = [
    "characteristic_points",
    "cluster",
    "membership",
    "progressive_generalization",
    "voronoi",
]

log = logging.getLogger(__name__)
VORONOI = "generalization/voronoi/"


def _read_points(conn: psycopg.Connection, release: ReleaseSpec) -> pa.Table:
    data = copy_out(conn, VORONOI + "100_points_for_python.sql", work=release.work_schema)
    return pacsv.read_csv(
        pa.py_buffer(data),
        read_options=pacsv.ReadOptions(column_names=["traj", "user", "t", "x", "y"]),
        convert_options=pacsv.ConvertOptions(column_types={"traj": pa.string(),
                                                           "user": pa.string()}))


def characteristic_points(spec: dict[str, Any]) -> dict[str, int]:
    """Start, end, turn, stop and representative points of every trajectory (§6.1)."""
    from anonymizers.generalization.characteristic_points import (
        CharacteristicPointParams,
    )
    from anonymizers.generalization.characteristic_points import (
        characteristic_points as extract,
    )

    with step("characteristic_points", spec) as (release, conn):
        points = _read_points(conn, release)
        traj = pd.factorize(points["traj"].to_pandas(), sort=False)[0]
        p = release.params
        params = CharacteristicPointParams(
            min_angle_deg=p["min_angle"], min_stop_duration_s=p["min_stop_duration"],
            stop_radius_m=p["stop_radius"], max_distance_m=p["max_distance"])
        mask = extract(traj, points["t"].to_numpy(), points["x"].to_numpy(),
                       points["y"].to_numpy(), params)
        frame = pd.DataFrame({"user_id": points["user"].to_pandas()[mask],
                              "x": points["x"].to_numpy()[mask],
                              "y": points["y"].to_numpy()[mask]})
        _write_frame(conn, release, "characteristic_points",
                     "user_id text NOT NULL, x double precision, y double precision", frame)
    return {"points": len(traj), "characteristic_points": int(mask.sum())}


def _copy_frame(conn: psycopg.Connection, release: ReleaseSpec, table: str,
                frame: pd.DataFrame) -> None:
    """Append ``frame`` to work table ``table`` (COPY as CSV, columns by name)."""
    statement = sql.SQL("COPY {} ({}) FROM STDIN (FORMAT csv)").format(
        sql.Identifier(release.work_schema, table),
        sql.SQL(", ").join(sql.Identifier(column) for column in frame.columns))
    buffer = io.StringIO()
    frame.to_csv(buffer, index=False, header=False)
    with conn.cursor().copy(statement) as copy:
        copy.write(buffer.getvalue())


def _write_frame(conn: psycopg.Connection, release: ReleaseSpec, table: str, columns: str,
                 frame: pd.DataFrame) -> None:
    """Replace work table ``table`` with ``frame``."""
    name = sql.Identifier(release.work_schema, table)
    conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(name))
    conn.execute(sql.SQL("CREATE TABLE {} (" + columns + ")").format(name))
    _copy_frame(conn, release, table, frame)


def cluster(spec: dict[str, Any]) -> dict[str, int]:
    """Group the characteristic points into clusters of radius r; centroids = generators."""
    from anonymizers.generalization.point_clustering import cluster_points

    with step("cluster", spec) as (release, conn):
        points = pacsv.read_csv(
            pa.py_buffer(copy_out(conn, VORONOI + "106_characteristic_points_for_python.sql",
                                  work=release.work_schema)),
            read_options=pacsv.ReadOptions(column_names=["user", "x", "y"]),
            convert_options=pacsv.ConvertOptions(column_types={"user": pa.string()}))
        if points.num_rows < 2:
            raise InputError(f"only {points.num_rows} characteristic point(s) in the window: "
                             "nothing to tessellate; widen the window")
        users = pd.factorize(points["user"].to_pandas())[0]
        clusters = cluster_points(points["x"].to_numpy(), points["y"].to_numpy(),
                                  float(release.params["radius"]))
        generators = _generators(clusters.labels, clusters.centroids, users)
        run_sql_file(conn, VORONOI + "105_generators.sql", {"srid": release.srid},
                     work=release.work_schema)
        _copy_generators(conn, release, generators)
        run_sql_file(conn, VORONOI + "107_restore_generators.sql", {"save": True},
                     work=release.work_schema)
    return {"clusters": len(generators)}


def _generators(labels: np.ndarray, centroids: np.ndarray, users: np.ndarray) -> pd.DataFrame:
    members = pd.DataFrame({"label": labels, "user": users})
    persons = members.groupby("label")["user"].nunique().reindex(range(len(centroids)))
    counts = np.bincount(labels, minlength=len(centroids))
    return pd.DataFrame({"gen_id": np.arange(1, len(centroids) + 1), "x": centroids[:, 0],
                         "y": centroids[:, 1], "n_points": counts,
                         "n_persons": persons.to_numpy()})


def _copy_generators(conn: psycopg.Connection, release: ReleaseSpec,
                     generators: pd.DataFrame) -> None:
    _copy_frame(conn, release, "generators",
                generators[["gen_id", "x", "y", "n_points", "n_persons"]])


def _rebuild_cells(conn: psycopg.Connection, release: ReleaseSpec) -> None:
    run_sql_file(conn, VORONOI + "110_voronoi_cells.sql",
                 {"srid": release.srid, "margin": float(release.params["radius"])},
                 work=release.work_schema)


def voronoi(spec: dict[str, Any]) -> None:
    with step("voronoi", spec) as (release, conn):
        _rebuild_cells(conn, release)


def _full_membership(conn: psycopg.Connection, release: ReleaseSpec) -> None:
    run_sql_file(conn, VORONOI + "120_membership.sql", work=release.work_schema)
    run_sql_file(conn, VORONOI + "128_crossings.sql", work=release.work_schema)


# Above this share of fixes in changed cells, a full membership is cheaper than an update.
FULL_MEMBERSHIP_SHARE = 0.2


def _update_membership(conn: psycopg.Connection, release: ReleaseSpec) -> None:
    started = time.perf_counter()
    share = run_sql_file(conn, VORONOI + "124_changed_cells.sql", work=release.work_schema)
    if float(share[0][0]) > FULL_MEMBERSHIP_SHARE:
        _full_membership(conn, release)
        log.info("membership redone: %.0f%% of the fixes were in changed cells (%.1f s)",
                 100 * float(share[0][0]), time.perf_counter() - started)
        return
    run_sql_file(conn, VORONOI + "125_membership_update.sql", work=release.work_schema)
    counts = run_sql_file(conn, VORONOI + "126_update_counts.sql", work=release.work_schema)
    middle = time.perf_counter()
    run_sql_file(conn, VORONOI + "128_crossings.sql", work=release.work_schema)
    log.info("membership update: %s changed cells, %s moved fixes, %s segments re-crossed "
             "(%.1f s + %.1f s)", *counts[0], middle - started, time.perf_counter() - middle)


def membership(spec: dict[str, Any]) -> None:
    with step("membership", spec) as (release, conn):
        _full_membership(conn, release)


def _statistics(conn: psycopg.Connection, release: ReleaseSpec):
    """Current cells' statistics and neighbour flows, as the merge planner wants them."""
    from anonymizers.generalization.progressive import CellStatistics, NeighbourFlows

    work = release.work_schema
    run_sql_file(conn, "generalization/050_visits.sql", work=work)
    run_sql_file(conn, VORONOI + "130_cell_statistics.sql", work=work)
    rows = run_sql_file(conn, VORONOI + "160_statistics_for_python.sql",
                        {"reach": float(release.params["radius"]),
                         "count_persons": release.count_persons}, work=work)
    columns = [np.array(column, dtype=float) for column in zip(*rows, strict=True)]
    stats = CellStatistics(columns[0].astype(int), *columns[1:9])
    displacement = (float(columns[9].sum() / max(columns[1].sum(), 1)), float(columns[10].max()))
    pairs = run_sql_file(conn, VORONOI + "140_neighbour_flows.sql",
                         {"count_persons": release.count_persons}, work=work)
    arrays = [np.array(column, dtype=np.int64) for column in zip(*pairs, strict=True)]
    if not arrays:
        arrays = [np.empty(0, dtype=np.int64)] * 4
    return stats, NeighbourFlows(*arrays), displacement


def _apply(conn: psycopg.Connection, release: ReleaseSpec, stats, plan) -> int:
    """Replace merged and dropped generators; returns how many generators remain."""
    row = {int(cell): i for i, cell in enumerate(stats.cell_id)}
    work = release.work_schema
    next_id = int(stats.cell_id.max()) + 1 if len(stats.cell_id) else 1
    groups = [(next_id + g, a, b) for g, (a, b) in enumerate(plan.merges)]
    support = dict(run_sql_file(conn, VORONOI + "150_merged_generator_support.sql", {
        "groups": [g for g, a, b in groups for _ in (a, b)],
        "cells": [c for _, a, b in groups for c in (a, b)]}, work=work)) if groups else {}
    merged = []
    for gen_id, a, b in groups:
        i, j = row[a], row[b]
        # The merged generator is the centroid of all fixes in a and b (Algorithm 3, line 15).
        n = stats.n_points[i] + stats.n_points[j]
        if n:
            x, y = (stats.sx[i] + stats.sx[j]) / n, (stats.sy[i] + stats.sy[j]) / n
        else:  # two cells without fixes: nobody's position, the midpoint of the generators
            x = (stats.centroid_x[i] + stats.centroid_x[j]) / 2
            y = (stats.centroid_y[i] + stats.centroid_y[j]) / 2
        merged.append((gen_id, x, y, int(n), int(support.get(gen_id, 0))))
    gone = [c for pair in plan.merges for c in pair] + list(plan.drops)
    conn.execute(sql.SQL("DELETE FROM {} WHERE gen_id = ANY(%s)").format(
        sql.Identifier(work, "generators")), (gone,))
    if merged:
        _copy_generators(conn, release, pd.DataFrame(
            merged, columns=["gen_id", "x", "y", "n_points", "n_persons"]))
    left = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(
        sql.Identifier(work, "generators"))).fetchone()
    return int(left[0]) if left else 0


def _log_iteration(conn: psycopg.Connection, release: ReleaseSpec, iteration: int,
                   n_cells: int, plan, displacement: tuple[float, float]) -> None:
    conn.execute(sql.SQL(
        "INSERT INTO {} VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)").format(
        sql.Identifier(release.work_schema, "progressive_log")),
        (iteration, n_cells, plan.pairs_below_k, plan.thin_generators, len(plan.merges),
         len(plan.drops), plan.rejected_by_displacement, *displacement))
    log.info("progressive generalization step %d: %d cells, %d pairs below k, %d thin "
             "generators, %d merges, %d drops", iteration, n_cells, plan.pairs_below_k,
             plan.thin_generators, len(plan.merges), len(plan.drops))


def progressive_generalization(spec: dict[str, Any]) -> dict[str, int]:
    """Algorithm 3 with MaxDisplacement, then the thin-generator rule until it holds.

    One transaction. A re-run after a success (a cleared task) restarts from the
    clustering's generators, so it gives the same cells, not further-merged ones.
    """
    from anonymizers.generalization.progressive import plan_merges

    with step("progressive_generalization", spec) as (release, conn):
        log_table = sql.Identifier(release.work_schema, "progressive_log")
        ran_before = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(log_table)).fetchone()
        if ran_before and ran_before[0]:
            run_sql_file(conn, VORONOI + "107_restore_generators.sql", {"save": False},
                         work=release.work_schema)
            _rebuild_cells(conn, release)
            _full_membership(conn, release)
        conn.execute(sql.SQL("TRUNCATE {}").format(log_table))
        p = release.params
        max_displacement = float(p["max_displacement"]) or None
        iteration = 0
        while True:
            stats, flows, displacement = _statistics(conn, release)
            plan = plan_merges(stats, flows, release.k, max_displacement,
                               include_pairs=iteration < int(p["max_iterations"]))
            _log_iteration(conn, release, iteration, len(stats.cell_id), plan, displacement)
            if not plan.changes:
                break
            if _apply(conn, release, stats, plan) < 2:
                raise InputError("progressive generalization left fewer than two cells: the "
                                 "window has too few persons for this k; lower k or widen it")
            _rebuild_cells(conn, release)
            _update_membership(conn, release)
            iteration += 1
    return {"iterations": iteration}
