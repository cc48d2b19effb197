"""Positions published by the Voronoi methods (kam_cut, kam_rec) point at no one.

Replays findings 4 and 8 of issue 7 (privacy rule 2 of ../shared/DESIGN.md) on hand-made
towns small enough to reason about:

* the clip box of the cells was the fixes' own extent plus r, and r is in the manifest:
  the published extent minus r gave the westmost, southmost, eastmost and northmost single
  fix (on T-Drive one of them a GPS outlier of one taxi). It is now the generators' extent
  plus r snapped outward to the ``snap`` lattice; a far outlier does not move it, and the
  fixes outside it are gaps in membership, not errors and not a cell;
* a merged generator was the centroid of all fixes of the merged cells: one parked taxi
  with 93% of a cell's fixes pulled it to 82 m from where it parked. It is now the mean of
  per-person means, snapped to the lattice; two generators snapping onto one lattice point
  are merged.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import psycopg
import pytest
from voronoi_helpers import (
    RADIUS,
    Fix,
    anonymizer_sequences,
    extent,
    load_fixes,
    on_lattice,
    one,
    projected_fixes,
    reference_membership,
    reference_sequences,
    route,
    run_voronoi_steps,
    scalar,
    verifier_sequences,
    voronoi_params,
)

from anonymizers.families.generalization import tessellation
from anonymizers.families.generalization.verifier import verify_generalization_release
from anonymizers.release.spec import ReleaseSpec

SNAP = 50.0  # the default of the parameter
MORNING = datetime(2026, 1, 5, 8, 0, tzinfo=UTC)
EVENING = datetime(2026, 1, 5, 17, 0, tzinfo=UTC)

# ----------------------------------------------------------------- a town around a square

SQUARE = [(0.0, 0.0), (2000.0, 0.0), (2000.0, 2000.0), (0.0, 2000.0), (0.0, 0.0)]
PERSONS = ["pa", "pb", "pc", "pd"]
GLITCH = (-20_000.0, 1000.0)  # one fix of one person, 20 km west of the town


def square_town(glitch: bool = False) -> list[Fix]:
    """Four persons drive round a 2 km square in the morning and back in the evening (each a
    few metres off the others' line); with ``glitch``, person pa also has one fix 20 km west
    (a trajectory of its own, as a GPS outlier logged between trips)."""
    fixes: list[Fix] = []
    for n, user in enumerate(PERSONS):
        offset = [(x + 3.0 * n, y - 2.0 * n) for x, y in SQUARE]
        fixes += route(f"{user}_1", user, MORNING + timedelta(minutes=n), offset)
        fixes += route(f"{user}_2", user, EVENING + timedelta(minutes=n), offset[::-1])
    if glitch:
        fixes.append(Fix("pa_glitch", "pa", MORNING + timedelta(hours=4), *GLITCH))
    return fixes


def run_until(dataset: str, until: str, k: int = 3, **extra: float) -> ReleaseSpec:
    return run_voronoi_steps(voronoi_params(dataset=dataset, k=k, **extra), run_id=dataset,
                             until=until)


def verifier_rule_2(conn: psycopg.Connection, spec: ReleaseSpec) -> tuple[list[str], dict]:
    """The verifier's violations of rule 2 (lattice, generators) on the build schema.
    (Other rules are other findings' business: their violations are left out here.)"""
    result = verify_generalization_release(conn, spec.build_schema)
    about = [v for v in result.violations if "lattice" in v or "generator" in v]
    return about, result.checks


def test_the_clip_box_is_the_generators_extent_plus_r_snapped_outward(
        db_url: str, conn: psycopg.Connection, tmp_path: Path) -> None:
    load_fixes(db_url, tmp_path, "square", square_town())
    spec = run_until("square", "metrics")
    work = spec.work_schema

    box = one(conn, f"SELECT x_min, y_min, x_max, y_max FROM {work}.clip_box")
    gx0, gy0, gx1, gy1 = extent(conn, f"{work}.generators")
    assert box == (np.floor((gx0 - RADIUS) / SNAP) * SNAP, np.floor((gy0 - RADIUS) / SNAP) * SNAP,
                   np.ceil((gx1 + RADIUS) / SNAP) * SNAP, np.ceil((gy1 + RADIUS) / SNAP) * SNAP)
    assert extent(conn, f"{work}.cells") == pytest.approx(box, abs=1e-6)

    # The attack: published extent minus r. Its corners are lattice points, and none is
    # the coordinate of a fix (the old box gave the extreme fixes, to the last digit).
    published = extent(conn, f"{spec.build_schema}.cells")
    assert all(on_lattice(v, SNAP) for v in published), published
    x0, y0, x1, y1 = published
    fixes = projected_fixes(conn, work)
    for guess, coordinates in [(x0 + RADIUS, fixes.x), (y0 + RADIUS, fixes.y),
                               (x1 - RADIUS, fixes.x), (y1 - RADIUS, fixes.y)]:
        assert np.abs(coordinates - guess).min() > 1e-3, guess
    assert (x0 + RADIUS, y0 + RADIUS, x1 - RADIUS, y1 - RADIUS) != (
        fixes.x.min(), fixes.y.min(), fixes.x.max(), fixes.y.max())

    violations, checks = verifier_rule_2(conn, spec)
    assert violations == [] and checks["generators_off_lattice"] == 0
    assert checks["data_derived_generators"] > 0 and checks["generators_below_k"] == 0


def test_a_far_outlier_fix_does_not_move_the_box_and_lies_in_no_cell(
        db_url: str, conn: psycopg.Connection, tmp_path: Path) -> None:
    load_fixes(db_url, tmp_path, "clean", square_town())
    load_fixes(db_url, tmp_path, "glitchy", square_town(glitch=True))
    clean, glitchy = run_until("clean", "build_release"), run_until("glitchy", "build_release")

    boxes = [one(conn, f"SELECT x_min, y_min, x_max, y_max FROM {s.work_schema}.clip_box")
             for s in (clean, glitchy)]
    assert boxes[0] == boxes[1]
    assert extent(conn, f"{clean.build_schema}.cells") == extent(
        conn, f"{glitchy.build_schema}.cells")
    # The outlier's own generator (one person) was there at first, and dropped.
    work = glitchy.work_schema
    assert scalar(conn, f"SELECT sum(drops) FROM {work}.progressive_log") >= 1
    # Its fix is a gap: in no cell (by the reference SQL) and in no visit.
    reference_membership(conn, work)
    assert conn.execute(f"SELECT cell_id FROM {work}.point_cells WHERE traj_id = 'pa_glitch'"
                        ).fetchall() == [(None,)]
    assert scalar(conn, f"SELECT count(*) FROM {work}.visits "
                        "WHERE traj_id = 'pa_glitch' OR cell_id IS NULL") == 0


def test_segments_into_and_out_of_a_gap_visit_the_cells_they_cross_inside_the_box(
        db_url: str, conn: psycopg.Connection, tmp_path: Path) -> None:
    """A GPS spike in the middle of a trip, far outside the box: the trip leaves the box
    (crossing cells on its way to the edge), has a gap, and comes back; the verifier's own
    derivation (gap symbols dropped) agrees with the anonymizer's visits."""
    fixes = square_town()
    trip = [f for f in fixes if f.traj_id == "pb_1"]
    middle = trip[4]  # on the southern edge, 1 km east of the start
    fixes.remove(middle)
    fixes.append(middle._replace(x=-8000.0, y=-3000.0))  # 8 km west, 3 km south
    load_fixes(db_url, tmp_path, "spiky", fixes)
    spec = run_until("spiky", "progressive_generalization")
    work = spec.work_schema
    written = anonymizer_sequences(conn, work)
    reference_membership(conn, work)  # each fix's cell and the crossings, in SQL

    assert scalar(conn, f"SELECT count(*) FROM {work}.point_cells WHERE cell_id IS NULL") == 1
    assert scalar(conn, f"SELECT count(*) FROM {work}.visits WHERE cell_id IS NULL") == 0
    # The segments to and from the spike cross the cells between the trip and the box's
    # southern edge, entered after the previous fix and before the next (the reference
    # membership in SQL says which; the visits, written from memory, agree with it).
    assert reference_sequences(conn, work) == written
    before, after = conn.execute(
        f"SELECT t FROM {work}.point_cells WHERE traj_id = 'pb_1' "
        "AND t IN (%s, %s) ORDER BY t", (trip[3].t, trip[5].t)).fetchall()
    crossed = conn.execute(f"SELECT t FROM {work}.crossings WHERE traj_id = 'pb_1' "
                           "AND t > %s AND t < %s", (before[0], after[0])).fetchall()
    assert crossed, "the segments into and out of the gap crossed no cell"
    assert verifier_sequences(conn, work) == anonymizer_sequences(conn, work)


# ------------------------------------------------------------------- a parked taxi


PARKED_AT = (-50.0, 60.0)


def parked_town() -> list[Fix]:
    """Near place P (0, 0) a taxi stands for eight hours, a fix a minute (90% of the fixes
    of its cell); two persons drive P -> Q (600, 0) and back, a fix every 50 m; Q is
    theirs only, so its cell is merged with P's. Three other persons drive between two
    places 3 km east, far from both."""
    jitter = np.random.default_rng(4).normal(0.0, 2.0, size=(480, 2))
    fixes = [Fix("pk_1", "pk", MORNING + timedelta(minutes=i), PARKED_AT[0] + dx,
                 PARKED_AT[1] + dy) for i, (dx, dy) in enumerate(jitter)]
    for n, user in enumerate(["pq1", "pq2"]):
        line = [(0.0, 4.0 * n), (600.0, 4.0 * n)]
        fixes += route(f"{user}_1", user, MORNING + timedelta(hours=1, minutes=n), line, 50.0)
        fixes += route(f"{user}_2", user, EVENING + timedelta(minutes=n), line[::-1], 50.0)
    for n, user in enumerate(["pr1", "pr2", "pr3"]):
        line = [(3000.0 + 5.0 * n, 0.0), (3000.0 + 5.0 * n, 1500.0)]
        fixes += route(f"{user}_1", user, MORNING + timedelta(minutes=n), line)
        fixes += route(f"{user}_2", user, EVENING + timedelta(minutes=n), line[::-1])
    return fixes


def test_a_parked_taxi_does_not_pull_its_cells_generator_to_its_place(
        db_url: str, conn: psycopg.Connection, tmp_path: Path) -> None:
    load_fixes(db_url, tmp_path, "parked", parked_town())
    spec = run_until("parked", "metrics")
    work = spec.work_schema
    assert scalar(conn, f"SELECT sum(merges) FROM {work}.progressive_log") >= 1

    # The cell holding the parking place, and the fixes it was merged from: all fixes of
    # the three persons near P and Q (the others are 3 km away).
    fixes = projected_fixes(conn, work)
    near = fixes[fixes.user_id.isin(["pk", "pq1", "pq2"])]
    parked = near[near.user_id == "pk"][["x", "y"]].to_numpy().mean(axis=0)
    assert (near.user_id == "pk").mean() >= 0.9
    generator = np.array(one(conn, f"""
        SELECT ST_X(p.geom), ST_Y(p.geom) FROM {spec.build_schema}.cells AS c
        JOIN {spec.build_schema}.cell_centroids AS p USING (cell_id)
        WHERE ST_Contains(c.geom, ST_SetSRID(ST_MakePoint(%s, %s), %s))""",
        (*parked, spec.srid)))

    person_means = near.groupby("user_id")[["x", "y"]].mean().to_numpy()
    assert generator.tolist() == (np.round(person_means.mean(axis=0) / SNAP) * SNAP).tolist()
    pulled = near[["x", "y"]].to_numpy().mean(axis=0)  # the old, fix-weighted centroid
    assert np.hypot(*(pulled - parked)) < 100.0
    assert np.hypot(*(generator - parked)) > 200.0

    violations, checks = verifier_rule_2(conn, spec)
    assert violations == [] and checks["generators_off_lattice"] == 0
    assert checks["data_derived_generators"] >= 2 and checks["generators_below_k"] == 0


# ------------------------------------------------------- generators on one lattice point


def test_generators_snapping_onto_one_lattice_point_are_merged(
        loaded_city: str, conn: psycopg.Connection) -> None:
    """A coarse lattice (snap 400 m for clusters of r = 300 m) makes clusters, and later
    merged generators, round onto one lattice point: they become one generator, counted."""
    snap = 400.0
    spec = run_voronoi_steps(voronoi_params(k=3, snap=snap), until="characteristic_points")
    counts = tessellation.cluster(spec.to_dict())
    assert counts["snap_merges"] > 0
    assert counts["generators"] == counts["clusters"] - counts["snap_merges"]

    for following in (tessellation.voronoi, tessellation.progressive_generalization):
        following(spec.to_dict())
    work = spec.work_schema
    assert scalar(conn, f"SELECT sum(snap_merges) FROM {work}.progressive_log") > 0
    rows = conn.execute(f"SELECT ST_X(centroid), ST_Y(centroid) FROM {work}.cells").fetchall()
    assert len(set(rows)) == len(rows) == scalar(conn, f"SELECT count(*) FROM {work}.generators")
    assert all(on_lattice(x, snap) and on_lattice(y, snap) for x, y in rows)
    assert all(on_lattice(v, snap) for v in extent(conn, f"{work}.cells"))
