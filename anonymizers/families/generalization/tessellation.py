"""Steps of the data-driven tessellation (seed 000 §6.1): characteristic points, clustering,
Voronoi cells, membership and progressive generalization.

Python does the sequential and combinatorial parts (characteristic points, clustering,
merge decisions, and the fixes' cells while progressive generalization merges, kept in
memory: fix_cells.py, and the visits and the fixes' sums per cell made from them once
the cells are final, and the persons near a generator: persons_near.py); PostGIS does the
spatial ones (Voronoi cells, neighbours). Data moves through the run's work schema:
``characteristic_points``, ``generators``, ``cells``, ``progressive_log``, ``visits``,
``cell_displacement``.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import pandas as pd
import psycopg
import pyarrow as pa
import pyarrow.compute as pc

from anonymizers.db.arrow_reads import read_batches, read_groups
from anonymizers.db.labels import FirstSeenCodes
from anonymizers.db.sqlfiles import copy_arrow, copy_frame, fetch_columns, run_sql_file
from anonymizers.errors import InputError, ReleaseError
from anonymizers.families.generalization.declaration import TessellationParams
from anonymizers.families.generalization.persons_near import PersonsNear
from anonymizers.memory import give_back
from anonymizers.release.spec import ReleaseSpec
from anonymizers.release.step import step

if TYPE_CHECKING:
    from anonymizers.families.generalization.characteristic_points import (
        CharacteristicPointParams,
    )
    from anonymizers.families.generalization.fix_cells import FixCells, Tessellation
    from anonymizers.families.generalization.moves import MoveCounts

__all__ = [
    "characteristic_points",
    "cluster",
    "progressive_generalization",
    "voronoi",
]

log = logging.getLogger(__name__)
VORONOI = "generalization/voronoi/"


# The window's fixes as 100_points_for_python.sql sends them, in (traj, t) order.
POINT_COLUMNS = {"traj_id": pa.string(), "user_id": pa.string(),
                 "t": pa.timestamp("us", tz="UTC"), "x": pa.float64(), "y": pa.float64()}


def characteristic_points(spec: dict[str, Any]) -> dict[str, int]:
    """Start, end, turn, stop and representative points of every trajectory (§6.1).

    The fixes stream by chunks of whole trajectories (the rules look at one trajectory at
    a time), so memory is bounded by a chunk and by the characteristic points kept, not
    by the window."""
    from anonymizers.families.generalization.characteristic_points import (
        CharacteristicPointParams,
    )

    with step("characteristic_points", spec) as (release, conn):
        p = TessellationParams.of(release.params)
        params = CharacteristicPointParams(
            min_angle_deg=p.min_angle, min_stop_duration_s=p.min_stop_duration,
            stop_radius_m=p.stop_radius, max_distance_m=p.max_distance)
        points, found, persons = 0, [], FirstSeenCodes()
        # The characteristic points (a share of the fixes, as Arrow columns) are written
        # once the fixes are all read.
        for chunk in read_groups(conn, VORONOI + "100_points_for_python.sql",
                                 POINT_COLUMNS, work=release.work_schema):
            found.append(_characteristic_table(chunk, params, persons))
            points += chunk.num_rows
        run_sql_file(conn, VORONOI + "102_characteristic_points_table.sql",
                     work=release.work_schema)
        for table in found:
            copy_arrow(conn, release.work_schema, "characteristic_points", table)
    return {"points": points, "characteristic_points": sum(t.num_rows for t in found)}


def _characteristic_table(chunk: pa.Table, params: CharacteristicPointParams,
                          persons: FirstSeenCodes) -> pa.Table:
    """The characteristic points (person code, x, y) of a chunk of whole trajectories."""
    from anonymizers.families.generalization.characteristic_points import (
        characteristic_points as extract,
    )

    # Codes from arrow's dictionary: no Python string per fix.
    traj = pc.dictionary_encode(chunk["traj_id"]).combine_chunks().indices.to_numpy()
    x, y = chunk["x"].to_numpy(), chunk["y"].to_numpy()
    # Seconds since the epoch: the microseconds divided exactly as the text of extract()
    # would be parsed (both the nearest double to the same number).
    seconds = chunk["t"].cast(pa.int64()).to_numpy() / 1e6
    mask = extract(traj, seconds, x, y, params)
    return pa.table({"person": persons.encode(chunk["user_id"])[mask].astype(np.int32),
                     "x": x[mask], "y": y[mask]})


def cluster(spec: dict[str, Any]) -> dict[str, int]:
    """Group the characteristic points into clusters of radius r; their generators are the
    mean of per-person means, snapped to the ``snap`` lattice (privacy rule 2)."""
    from anonymizers.families.generalization.point_clustering import (
        cluster_points,
        lattice_generators,
    )

    with step("cluster", spec) as (release, conn):
        users, x, y = _read_characteristic_points(conn, release)
        if x.size < 2:
            raise InputError(f"only {x.size} characteristic point(s) in the window: "
                             "nothing to tessellate; widen the window")
        params = TessellationParams.of(release.params)
        clusters = cluster_points(x, y, params.radius)
        generators = lattice_generators(clusters.labels, users, x, y, params.snap)
        if len(generators) < 2:
            raise InputError(f"the clusters of the window snap onto {len(generators)} point(s) "
                             f"of the {params.snap:g} m lattice: nothing to "
                             "tessellate; lower snap or widen the window")
        if generators.snap_merges:
            log.info("%d cluster(s) merged into another: both snapped onto one lattice point",
                     generators.snap_merges)
        run_sql_file(conn, VORONOI + "105_generators.sql", {"srid": release.srid},
                     work=release.work_schema)
        _copy_generators(conn, release, pd.DataFrame({
            "gen_id": np.arange(1, len(generators) + 1), "x": generators.positions[:, 0],
            "y": generators.positions[:, 1], "n_points": generators.n_points,
            "n_persons": generators.n_persons}))
        run_sql_file(conn, VORONOI + "107_restore_generators.sql", {"save": True},
                     work=release.work_schema)
    return {"clusters": len(clusters), "generators": len(generators),
            "snap_merges": generators.snap_merges}


def _read_characteristic_points(conn: psycopg.Connection, release: ReleaseSpec
                                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Person code, x and y of every characteristic point, in the order the clustering
    visits them. Streamed into arrays sized by a count first: the points are the window's
    largest input to Python (15 million at 25M fixes), and neither the CSV nor a second
    copy of the arrays is ever held."""
    n = _count_rows(conn, (release.work_schema, "characteristic_points"))
    users = np.empty(n, dtype=np.int64)
    x, y = np.empty(n), np.empty(n)
    filled = 0
    for batch in read_batches(conn, VORONOI + "106_characteristic_points_for_python.sql",
                              {"person": pa.int32(), "x": pa.float64(), "y": pa.float64()},
                              work=release.work_schema):
        rows = slice(filled, filled + batch.num_rows)
        users[rows] = batch.column("person").to_numpy()
        x[rows], y[rows] = batch.column("x").to_numpy(), batch.column("y").to_numpy()
        filled += batch.num_rows
    _check_all_read(release, "characteristic_points", filled, n)
    return users, x, y


def _count_rows(conn: psycopg.Connection, table: tuple[str, str]) -> int:
    """Rows of ``table`` (schema, name): e.g. the size of the arrays a reader streams it
    into."""
    return int(fetch_columns(conn, VORONOI + "count_rows.sql", table=table)["n_rows"][0])


def _check_all_read(release: ReleaseSpec, table: str, read: int, counted: int) -> None:
    if read != counted:  # the step's transaction sees one table: a bug, not bad input
        raise ReleaseError(f"read {read} rows of {release.work_schema}.{table}, counted "
                           f"{counted}: the step's table changed under it; run the step "
                           "again")


def _copy_generators(conn: psycopg.Connection, release: ReleaseSpec,
                     generators: pd.DataFrame) -> None:
    copy_frame(conn, release.work_schema, "generators",
               generators[["gen_id", "x", "y", "n_points", "n_persons"]])


def _rebuild_cells(conn: psycopg.Connection, release: ReleaseSpec) -> None:
    params = TessellationParams.of(release.params)
    run_sql_file(conn, VORONOI + "110_voronoi_cells.sql",
                 {"srid": release.srid, "margin": params.radius, "snap": params.snap},
                 work=release.work_schema)
    run_sql_file(conn, VORONOI + "112_cell_edges.sql", work=release.work_schema)


def voronoi(spec: dict[str, Any]) -> None:
    with step("voronoi", spec) as (release, conn):
        _rebuild_cells(conn, release)


# The window's fixes as 103_fixes_for_python.sql sends them, in (traj, t) order.
FIX_COLUMNS = {"traj_id": pa.string(), "user_id": pa.string(),
               "t": pa.timestamp("us", tz="UTC"), "x": pa.float64(), "y": pa.float64()}


class _Window(NamedTuple):
    """The window's fixes for progressive generalization: their cells (kept up to date),
    their times (microseconds) and each trajectory's ids, for the visits."""

    fixes: FixCells
    times: np.ndarray
    traj_id: pa.Array
    user_id: pa.Array


def _read_fixes(conn: psycopg.Connection, release: ReleaseSpec) -> _Window:
    """The window's fixes as :class:`FixCells` wants them, streamed into arrays sized by a
    count first (no string per fix is kept: a trajectory's ids once, where it starts)."""
    from anonymizers.families.generalization.fix_cells import FixCells

    n = _count_rows(conn, (release.work_schema, "points"))
    continues, person = np.zeros(n, dtype=bool), np.empty(n, dtype=np.int32)
    times, x, y = np.empty(n, dtype=np.int64), np.empty(n), np.empty(n)
    codes, filled, last = FirstSeenCodes(), 0, None
    traj_ids: list[pa.Array] = []
    user_ids: list[pa.Array] = []
    for batch in read_batches(conn, VORONOI + "103_fixes_for_python.sql", FIX_COLUMNS,
                              work=release.work_schema):
        rows, traj = slice(filled, filled + batch.num_rows), batch.column("traj_id")
        if filled:
            continues[filled - 1] = traj[0].as_py() == last
        continues[rows.start:rows.stop - 1] = pc.equal(
            traj.slice(1), traj.slice(0, len(traj) - 1)).to_numpy(zero_copy_only=False)
        starts = np.flatnonzero(~np.r_[continues[filled - 1] if filled else False,
                                       continues[rows.start:rows.stop - 1]])
        traj_ids.append(traj.take(starts))
        user_ids.append(batch.column("user_id").take(starts))
        person[rows] = codes.encode(batch.column("user_id"))
        times[rows] = batch.column("t").cast(pa.int64()).to_numpy()
        x[rows], y[rows] = batch.column("x").to_numpy(), batch.column("y").to_numpy()
        filled, last = filled + batch.num_rows, traj[len(traj) - 1].as_py()
    _check_all_read(release, "points", filled, n)
    return _Window(FixCells(continues, person, x, y), times,
                   pa.concat_arrays(traj_ids) if traj_ids else pa.array([], pa.string()),
                   pa.concat_arrays(user_ids) if user_ids else pa.array([], pa.string()))


def _write_visits(conn: psycopg.Connection, release: ReleaseSpec, window: _Window,
                  cells: Tessellation, moves: MoveCounts) -> None:
    """{work}.visits from the fixes' cells on the final cells (FixCells.visits), a part of
    the window at a time (150_visits_table.sql, 155_visits_index.sql), and {work}.flows
    (158_flows_table.sql): the final cells' ``moves`` of k persons or more, with the
    trajectories behind each counted over the visits on the way (what 060_flows.sql makes
    of the visits in SQL)."""
    from anonymizers.families.generalization.moves import TripCounter, flows_of

    started, written = time.perf_counter(), 0
    run_sql_file(conn, VORONOI + "150_visits_table.sql", work=release.work_schema)
    when = pa.timestamp("us")  # microseconds since 1970 UTC, as FixCells keeps the times
    trips = TripCounter(cells.ids)
    for part in window.fixes.visits(window.times):
        trips.add(part.trajectory, part.cell)
        trajectory = pa.array(part.trajectory)
        copy_arrow(conn, release.work_schema, "visits", pa.table({
            "traj_id": window.traj_id.take(trajectory),
            "user_id": window.user_id.take(trajectory),
            "visit_no": part.visit_no, "cell_id": part.cell,
            "t_enter": pa.array(part.t_enter, when), "t_exit": pa.array(part.t_exit, when),
            "n_points": part.n_points}))
        written += len(part.cell)
    run_sql_file(conn, VORONOI + "155_visits_index.sql", work=release.work_schema)
    flows = flows_of(moves, trips, min_persons=release.k)
    run_sql_file(conn, VORONOI + "158_flows_table.sql", work=release.work_schema)
    copy_arrow(conn, release.work_schema, "flows", pa.table({
        "from_cell": flows.from_cell.astype(np.int32), "to_cell": flows.to_cell.astype(np.int32),
        "n_persons": flows.persons.astype(np.int32),
        "n_trajectories": flows.trajectories.astype(np.int32)}))
    log.info("visits: %d written, %d flows of k persons or more (%.1f s)", written,
             len(flows.persons), time.perf_counter() - started)


def _write_input_trajectories(conn: psycopg.Connection, release: ReleaseSpec,
                              window: _Window) -> None:
    """{work}.input_trajectories (159_input_trajectories_table.sql): each trajectory's
    person, fixes and length, from the fixes in memory (the metrics and the attack at
    release read it; 057_input_trajectories.sql makes the same from the table of fixes)."""
    n_points, length = window.fixes.trajectories()
    run_sql_file(conn, VORONOI + "159_input_trajectories_table.sql", work=release.work_schema)
    copy_arrow(conn, release.work_schema, "input_trajectories", pa.table({
        "traj_id": window.traj_id, "user_id": window.user_id, "n_points": n_points,
        "len": length}))


def _read_tessellation(conn: psycopg.Connection, release: ReleaseSpec) -> Tessellation:
    """The current generators, clip box and neighbouring pairs, for the fixes' cells."""
    from anonymizers.families.generalization.fix_cells import Tessellation

    work = release.work_schema
    cells = fetch_columns(conn, VORONOI + "145_cells_for_python.sql", work=work)
    pairs = fetch_columns(conn, VORONOI + "140_neighbour_pairs.sql", work=work)
    box = tuple(float(cells[side][0]) for side in ("x_min", "y_min", "x_max", "y_max"))
    return Tessellation(np.array(cells["cell_id"], dtype=np.int64),
                        np.array(cells["x"], dtype=float), np.array(cells["y"], dtype=float),
                        box,  # type: ignore[arg-type]  # four sides
                        np.array(pairs["a_id"], dtype=np.int64),
                        np.array(pairs["b_id"], dtype=np.int64),
                        np.array(pairs["t_min"], dtype=float),
                        np.array(pairs["t_max"], dtype=float))


def _write_displacement(conn: psycopg.Connection, release: ReleaseSpec, fixes: FixCells,
                        cells: Tessellation) -> None:
    """{work}.cell_displacement: the fixes summed per final cell, for the metrics
    (157_cell_displacement_table.sql); cells without a fix have no row."""
    found = fixes.displacement(cells)
    held = found.n_points > 0
    # One row per cell with fixes, then the row of all cells: NULL but for its persons.
    all_cells = np.r_[np.zeros(np.count_nonzero(held), dtype=bool), True]
    run_sql_file(conn, VORONOI + "157_cell_displacement_table.sql", work=release.work_schema)
    copy_arrow(conn, release.work_schema, "cell_displacement", pa.table({
        "cell_id": pa.array(np.r_[cells.ids[held], 0], mask=all_cells),
        "n_points": pa.array(np.r_[found.n_points[held], 0], mask=all_cells),
        "distance_sum": pa.array(np.r_[found.distance_sum[held], 0.0], mask=all_cells),
        "persons": np.r_[found.persons[held], found.persons_in_cells]}))


def _update_fixes(conn: psycopg.Connection, release: ReleaseSpec, fixes: FixCells,
                  cells: Tessellation) -> None:
    """The fixes' cells after a step changed cells, looked at again only where they
    changed (124_changed_cells.sql)."""
    started = time.perf_counter()
    found = fetch_columns(conn, VORONOI + "124_changed_cells.sql", work=release.work_schema)
    changed = np.array(found["changed"][0], dtype=np.int64)
    looked_at = fixes.update(cells, changed, bool(found["box_moved"][0]))
    log.info("membership update: %d changed cells, %d fixes looked at, %d crossings "
             "(%.1f s)", changed.size, looked_at, len(fixes.crossings.cell),
             time.perf_counter() - started)


def _statistics(conn: psycopg.Connection, release: ReleaseSpec, fixes: FixCells,
                cells: Tessellation, near: PersonsNear):
    """The current cells' statistics and neighbour flows, as the merge planner wants
    them: the fixes' sums and moves and the persons near each generator (up to k) from
    memory, the generators from the database (160_statistics_for_python.sql); and the
    persons of every move."""
    from anonymizers.families.generalization.moves import count_moves
    from anonymizers.families.generalization.progressive import CellStatistics, NeighbourFlows

    found = fetch_columns(conn, VORONOI + "160_statistics_for_python.sql",
                          work=release.work_schema)
    if not np.array_equal(np.array(found["cell_id"], dtype=np.int64), cells.ids):
        raise ReleaseError("the cells changed between two reads of one step: run it again")
    n_points, sx, sy, sxxyy, distance_sum, distance_max = fixes.statistics(cells)
    centroid_x, centroid_y = (np.array(found[name], dtype=float)
                              for name in ("centroid_x", "centroid_y"))
    stats = CellStatistics(
        cell_id=cells.ids, n_points=n_points, sx=sx, sy=sy, sxxyy=sxxyy,
        generator_persons=np.array(found["generator_persons"], dtype=float),
        centroid_x=centroid_x, centroid_y=centroid_y,
        near_owners=near.counts(centroid_x, centroid_y, release.k))
    displacement = (distance_sum / max(int(n_points.sum()), 1), distance_max)
    counts = count_moves(*fixes.moves())
    give_back("counting the moves")  # a few hundred MB of moves at 25M fixes
    flows = NeighbourFlows(a=cells.a, b=cells.b, a_to_b=counts.between(cells.a, cells.b),
                           b_to_a=counts.between(cells.b, cells.a))
    return stats, flows, displacement, counts


class _Generator(NamedTuple):
    """A generator about to be written: a lattice point and what it is computed from."""

    x: float
    y: float
    n_points: int
    n_persons: int


def _group_generators(release: ReleaseSpec, fixes: FixCells, stats,
                      groups: dict[int, list[int]]) -> dict[int, _Generator]:
    """The generator of each group of cells (id -> cells): the mean of its persons' mean
    fixes (FixCells.group_support), snapped to the lattice."""
    from anonymizers.families.generalization.point_clustering import snap_to_lattice

    support = fixes.group_support(
        np.array([g for g, cells in groups.items() for _ in cells], dtype=np.int64),
        np.array([c for cells in groups.values() for c in cells], dtype=np.int64))
    found = {int(g): (float(x), float(y), int(n_points), int(n_persons))
             for g, x, y, n_points, n_persons in zip(
                 support.group, support.x, support.y, support.n_points, support.n_persons,
                 strict=True)}
    row = {int(cell): i for i, cell in enumerate(stats.cell_id)}
    snap = TessellationParams.of(release.params).snap
    result = {}
    for gen_id, cells in groups.items():
        if gen_id in found:
            x, y, n_points, n_persons = found[gen_id]
        else:  # cells without fixes: nobody's position, the mean of their generators
            x = float(np.mean([stats.centroid_x[row[c]] for c in cells]))
            y = float(np.mean([stats.centroid_y[row[c]] for c in cells]))
            n_points = n_persons = 0
        (sx, sy), = snap_to_lattice(np.array([[x, y]]), snap).tolist()
        result[gen_id] = _Generator(sx, sy, n_points, n_persons)
    return result


def _plan(release: ReleaseSpec, fixes: FixCells, stats, flows, include_pairs: bool):
    """plan_merges, with the generator each merge would really get: a merge whose fixes lie
    farther from it (RMS) than MaxDisplacement is refused and the step planned again."""
    from anonymizers.families.generalization.progressive import plan_merges, rms_distance

    limit = TessellationParams.of(release.params).max_displacement or None
    row = {int(cell): i for i, cell in enumerate(stats.cell_id)}
    refused: set[tuple[int, int]] = set()
    merged: dict[tuple[int, int], _Generator] = {}
    while True:
        plan = plan_merges(stats, flows, release.k, limit, include_pairs=include_pairs,
                           refused=refused)
        new = [pair for pair in plan.merges if pair not in merged]
        found = _group_generators(release, fixes, stats, dict(enumerate(map(list, new))))
        merged.update((pair, found[i]) for i, pair in enumerate(new))
        too_far = {(a, b) for a, b in plan.merges if limit is not None and rms_distance(
            stats, [row[a], row[b]], merged[(a, b)].x, merged[(a, b)].y) > limit}
        if not too_far:
            return plan, {pair: merged[pair] for pair in plan.merges}
        refused |= too_far


def _resolve_coinciding(release: ReleaseSpec, fixes: FixCells, stats,
                        groups: dict[int, list[int]], new: dict[int, _Generator],
                        kept: dict[int, tuple[float, float]]) -> int:
    """Merge generators that snapped onto one lattice point (Voronoi needs distinct sites),
    recomputing each union's generator until all differ. Updates ``groups``, ``new`` and
    ``kept`` in place; returns how many generators were merged into another."""
    from anonymizers.families.generalization.progressive import coinciding

    # Fresh ids, above every cell of the step (also those merged away): 124_changed_cells.sql
    # tells new cells from changed ones by id.
    next_id, merged = max([*groups, *kept, *stats.cell_id.tolist(), 0]) + 1, 0
    while True:
        ids = [*kept, *new]
        xy = np.array([kept[i] for i in kept] + [(g.x, g.y) for g in new.values()])
        united = {}
        for together in coinciding(ids, xy):
            united[next_id] = [c for i in together for c in groups.pop(i, [i])]
            for i in together:
                kept.pop(i, None)
                new.pop(i, None)
            merged += len(together) - 1
            next_id += 1
        if not united:
            return merged
        groups.update(united)
        new.update(_group_generators(release, fixes, stats, united))


def _apply(conn: psycopg.Connection, release: ReleaseSpec, fixes: FixCells, stats, plan,
           merged: dict[tuple[int, int], _Generator]) -> tuple[int, int]:
    """Replace merged and dropped generators; returns how many generators remain and how
    many were merged because they snapped onto one lattice point.

    A merged generator takes the id of the cell of the pair with more fixes: most of them
    then keep their cell id, and the membership update looks again only at the fixes of
    cells whose polygon changed (FixCells.update)."""
    row = {int(cell): i for i, cell in enumerate(stats.cell_id)}
    groups: dict[int, list[int]] = {}
    new: dict[int, _Generator] = {}
    for pair in plan.merges:
        heavier = max(pair, key=lambda cell: (stats.n_points[row[cell]], -cell))
        groups[heavier] = list(pair)
        new[heavier] = merged[pair]
    gone = {c for pair in plan.merges for c in pair} | set(plan.drops)
    kept = {int(c): (float(x), float(y))
            for c, x, y in zip(stats.cell_id, stats.centroid_x, stats.centroid_y, strict=True)
            if int(c) not in gone}
    before = set(kept)
    snap_merges = _resolve_coinciding(release, fixes, stats, groups, new, kept)
    gone |= before - set(kept)
    work = release.work_schema
    run_sql_file(conn, VORONOI + "130_drop_generators.sql",
                 {"gen_ids": [int(gen_id) for gen_id in sorted(gone | set(new))]}, work=work)
    if new:
        _copy_generators(conn, release, pd.DataFrame(
            [(gen_id, *generator) for gen_id, generator in new.items()],
            columns=["gen_id", "x", "y", "n_points", "n_persons"]))
    return _count_rows(conn, (work, "generators")), snap_merges


def _log_iteration(conn: psycopg.Connection, release: ReleaseSpec, iteration: int,
                   n_cells: int, plan, displacement: tuple[float, float],
                   snap_merges: int) -> None:
    run_sql_file(conn, VORONOI + "135_log_iteration.sql", {
        "iteration": iteration, "cells": n_cells, "pairs_below_k": int(plan.pairs_below_k),
        "thin_generators": int(plan.thin_generators), "merges": len(plan.merges),
        "drops": len(plan.drops), "rejected_by_displacement": int(plan.rejected_by_displacement),
        "displacement_avg_m": float(displacement[0]), "displacement_max_m": float(displacement[1]),
        "snap_merges": snap_merges}, work=release.work_schema)
    log.info("progressive generalization step %d: %d cells, %d pairs below k, %d thin "
             "generators, %d merges, %d drops, %d merged onto one lattice point", iteration,
             n_cells, plan.pairs_below_k, plan.thin_generators, len(plan.merges),
             len(plan.drops), snap_merges)


def progressive_generalization(spec: dict[str, Any]) -> dict[str, int]:
    """Algorithm 3 with MaxDisplacement, then the thin-generator rule until it holds.

    Every generator written is the mean of its persons' mean fixes, snapped to the lattice,
    so the rules on generators are judged on the position that is published. The fixes'
    cells are kept in memory (:class:`~anonymizers.families.generalization.fix_cells.FixCells`):
    located once, then looked at again only where a step changed cells; on the final cells
    they give the visits (``{work}.visits``; at 25M fixes, the SQL membership and visits
    sort this replaces took about four minutes), the flows between cells
    (``{work}.flows``) and each input trajectory's length (``{work}.input_trajectories``),
    each of which took SQL another pass over the fixes. One transaction. A re-run after a success
    (a cleared task) restarts from the clustering's generators, so it gives the same
    cells, not further-merged ones.
    """
    with step("progressive_generalization", spec) as (release, conn):
        if _count_rows(conn, (release.work_schema, "progressive_log")):
            run_sql_file(conn, VORONOI + "107_restore_generators.sql", {"save": False},
                         work=release.work_schema)
            _rebuild_cells(conn, release)
        run_sql_file(conn, VORONOI + "108_clear_progressive_log.sql", work=release.work_schema)
        window, cells = _read_fixes(conn, release), _read_tessellation(conn, release)
        fixes = window.fixes
        give_back("reading the fixes")  # the CSV pieces and Arrow's batches
        fixes.locate(cells)
        params = TessellationParams.of(release.params)
        near = PersonsNear(fixes.x, fixes.y, fixes.person, params.radius)
        iteration = 0
        while True:
            stats, flows, displacement, moves = _statistics(conn, release, fixes, cells, near)
            plan, merged = _plan(release, fixes, stats, flows,
                                 include_pairs=iteration < params.max_iterations)
            left, snap_merges = (_apply(conn, release, fixes, stats, plan, merged)
                                 if plan.changes else (len(stats.cell_id), 0))
            _log_iteration(conn, release, iteration, len(stats.cell_id), plan, displacement,
                           snap_merges)
            if not plan.changes:
                break
            if left < 2:
                raise InputError("progressive generalization left fewer than two cells: the "
                                 "window has too few persons for this k; lower k or widen it")
            _rebuild_cells(conn, release)
            cells = _read_tessellation(conn, release)
            _update_fixes(conn, release, fixes, cells)
            iteration += 1
        del near
        give_back("the persons near the generators")
        _write_visits(conn, release, window, cells, moves)  # the final cells' moves
        _write_input_trajectories(conn, release, window)
        _write_displacement(conn, release, fixes, cells)
        run_sql_file(conn, VORONOI + "170_drop_scratch.sql", work=release.work_schema)
    return {"iterations": iteration}
