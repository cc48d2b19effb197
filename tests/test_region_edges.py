"""What a clustering release's region edges reveal: the metrics of the share of edges whose
outermost strip holds one person of the window (TCAA: snap metres; MLA: the half of the
dyadic node next to the edge), against a brute-force count in Python, and the attack they
measure: such an edge places one group member within the strip."""

from __future__ import annotations

import numpy as np
import psycopg
import pytest
from pipeline_helpers import run_steps
from psycopg import sql

from anonymizers.db.sqlfiles import run_sql_file
from anonymizers.families.clustering.declaration import TcaaParams
from anonymizers.release.spec import ReleaseSpec, area_of_use
from anonymizers.verifiers.base import interval_count

TCAA = {"method": "tcaa", "k": 3, "slice_seconds": 600, "interval": 60}
MLA = {"method": "mla_iterative_kmeans", "k": 3}


def _metrics(conn: psycopg.Connection, schema: str) -> dict[str, float]:
    return dict(conn.execute(sql.SQL("SELECT name, value FROM {}.metrics").format(
        sql.Identifier(schema))).fetchall())


def _rectangles(conn: psycopg.Connection, schema: str) -> np.ndarray:
    """(t0 seconds, t1 seconds, x0, y0, x1, y1) of every published region, epoch seconds."""
    rows = conn.execute(sql.SQL(
        "SELECT extract(epoch FROM t_start), extract(epoch FROM t_end), ST_XMin(geom), "
        "ST_YMin(geom), ST_XMax(geom), ST_YMax(geom) FROM {}.group_regions").format(
        sql.Identifier(schema))).fetchall()
    return np.array(rows, dtype=float).reshape(-1, 6)


def _one_person_share(persons_in: list[np.ndarray]) -> float:
    """The exact share of edges with exactly one person in their strip."""
    return float(np.mean([np.unique(p).size == 1 for p in persons_in]))


def _published_shares(persons_in: list[np.ndarray], k: int) -> tuple[float | None, ...]:
    """The two shares as a release publishes them (privacy rule 8): the quotient of the
    interval-filtered counts (count_interval k), None when the part is suppressed."""
    sizes = np.array([np.unique(p).size for p in persons_in])
    whole = interval_count(sizes.size, k, k)
    shares = []
    for part in (int((sizes == 1).sum()), int((sizes < k).sum())):
        filtered = interval_count(part, k, k)
        shares.append(None if filtered is None or not whole else filtered / whole)
    return tuple(shares)


def _tcaa_strips(rect: np.ndarray, snap: float) -> list[tuple[float, ...]]:
    t, _, x0, y0, x1, y1 = rect
    return [(t, x0, y0, min(x0 + snap, x1), y1), (t, max(x1 - snap, x0), y0, x1, y1),
            (t, x0, y0, x1, min(y0 + snap, y1)), (t, x0, max(y1 - snap, y0), x1, y1)]


def _built(params: dict, loaded_city: str) -> ReleaseSpec:
    spec = run_steps({"dataset": loaded_city, **params}, until="metrics")
    assert spec is not None
    return ReleaseSpec.from_dict(spec)


@pytest.mark.slow
def test_tcaa_publishes_the_share_of_edges_that_place_one_member_within_snap(loaded_city,
                                                                             conn):
    spec = _built(TCAA, loaded_city)
    metrics = _metrics(conn, spec.build_schema)
    with conn.transaction():
        run_sql_file(conn, "clustering/verify/positions.sql", {
            **spec.window_params(),
            "max_gap_seconds": TcaaParams.of(spec.params).max_gap_seconds},
            release=spec.build_schema)
        rows = conn.execute("SELECT user_id, extract(epoch FROM t), x, y "
                            "FROM cl_verify_positions").fetchall()
    user = np.array([r[0] for r in rows])
    t, x, y = (np.array([r[i] for r in rows], dtype=float) for i in (1, 2, 3))
    persons_in, pinned = [], 0
    for rect in _rectangles(conn, spec.build_schema):
        members = (t == rect[0]) & (x >= rect[2]) & (x <= rect[4]) & (y >= rect[3]) & (
            y <= rect[5])
        for s, sx0, sy0, sx1, sy1 in _tcaa_strips(rect, 50.0):
            inside = (t == s) & (x >= sx0) & (x <= sx1) & (y >= sy0) & (y <= sy1)
            persons_in.append(user[inside])
            # The attack: the one person in an edge's strip is inside the rectangle, a
            # member placed within 50 m of that edge.
            if np.unique(user[inside]).size == 1:
                pinned += int(np.isin(user[inside], user[members]).all())
    one = _one_person_share(persons_in)
    assert 0 < one < 1 and pinned == round(one * len(persons_in))
    assert (metrics["region_edges_one_person_share"], metrics["region_edges_below_k_share"]
            ) == pytest.approx(_published_shares(persons_in, spec.k))


@pytest.mark.slow
def test_mla_publishes_the_share_of_edges_whose_half_holds_one_person(loaded_city, conn):
    spec = _built(MLA, loaded_city)
    metrics = _metrics(conn, spec.build_schema)
    window = {"dataset_id": spec.dataset_id, "start": spec.window_start,
              "end": spec.window_end, "srid": spec.srid, **area_of_use(spec.srid)}
    rows = conn.execute(
        "SELECT user_id, extract(epoch FROM t), ST_X(xy), ST_Y(xy) FROM raw.points, "
        "ST_Transform(geom, %(srid)s) AS xy WHERE dataset_id = %(dataset_id)s "
        "AND t >= %(start)s AND t < %(end)s AND lon BETWEEN %(lon_min)s AND %(lon_max)s "
        "AND lat BETWEEN %(lat_min)s AND %(lat_max)s", window).fetchall()
    user = np.array([r[0] for r in rows])
    t, x, y = (np.array([r[i] for r in rows], dtype=float) for i in (1, 2, 3))
    epsilon, persons_in = float(spec.params["epsilon"]), []
    for t0, t1, x0, y0, x1, y1 in _rectangles(conn, spec.build_schema):
        xm = (x0 + x1) / 2 if x1 - x0 > 1.5 * epsilon else None
        ym = (y0 + y1) / 2 if y1 - y0 > 1.5 * epsilon else None
        for sx0, sy0, sx1, sy1 in ((x0, y0, xm or x1, y1), (xm or x0, y0, x1, y1),
                                   (x0, y0, x1, ym or y1), (x0, ym or y0, x1, y1)):
            inside = ((t >= t0) & (t < t1) & (x >= sx0) & (x < sx1) & (y >= sy0)
                      & (y < sy1))
            persons_in.append(user[inside])
    assert persons_in
    assert (metrics["region_edges_one_person_share"], metrics["region_edges_below_k_share"]
            ) == pytest.approx(_published_shares(persons_in, spec.k))


# A hand-made release: one region [0, 400] x [0, 200] at the window's start (an instant for
# TCAA, the first hour for MLA), and persons placed about its edges.
START = "2024-01-01T00:00:00+00:00"
# person: (x, y). West: only p1 within 50 m (p2 at 60 m); east: p3 and p4 within 50 m;
# south: p1, p2 and p3 within 50 m; north: nobody within 50 m, p4 in the north half.
PLACED = {"p1": (10.0, 20.0), "p2": (60.0, 30.0), "p3": (390.0, 40.0), "p4": (360.0, 140.0),
          "p5": (5000.0, 5000.0)}  # outside: counts for no edge


def _hand_made(conn: psycopg.Connection) -> None:
    run_sql_file(conn, "clustering/075_release_tables.sql", {"srid": 3857}, build="hb")
    conn.execute("CREATE SCHEMA hw")
    conn.execute("CREATE TABLE hw.cl_fixes (person_index integer, s float8, x float8, "
                 "y float8)")
    conn.execute("INSERT INTO hb.groups VALUES (1, 3)")
    conn.execute("INSERT INTO hb.group_regions VALUES (1, 0, %s, %s, "
                 "ST_MakeEnvelope(0, 0, 400, 200, 3857))", (START, START))
    conn.execute("CREATE TEMP TABLE cl_verify_positions (user_id text, t timestamptz, "
                 "x float8, y float8)")
    for i, (person, (x, y)) in enumerate(PLACED.items()):
        conn.execute("INSERT INTO cl_verify_positions VALUES (%s, %s, %s, %s)",
                     (person, START, x, y))
        conn.execute("INSERT INTO hw.cl_fixes VALUES (%s, 0, %s, %s)", (i, x, y))


def test_tcaa_edge_strips_count_the_persons_within_snap_of_each_edge(conn):
    with conn.transaction(force_rollback=True):
        _hand_made(conn)
        found = run_sql_file(conn, "clustering/067_edge_strips.sql",
                             {"window_start": START, "snap": 50.0, "k": 3}, build="hb")
    # west 1 (p1), east 2 (p3, p4), south 3 (p1, p2, p3), north 0
    assert found == [(4, 1, 3)]


def test_mla_edge_strips_count_the_persons_in_each_half(conn):
    with conn.transaction(force_rollback=True):
        _hand_made(conn)
        conn.execute("UPDATE hb.group_regions SET t_end = t_start + interval '1 hour'")
        found = run_sql_file(conn, "clustering/068_aligned_edge_strips.sql",
                             {"window_start": START, "epsilon": 10.0, "k": 3},
                             work="hw", build="hb")
    # west half [0, 200): p1, p2; east half [200, 400): p3, p4; south [0, 100): p1, p2, p3;
    # north [100, 200): p4 alone
    assert found == [(4, 1, 3)]
