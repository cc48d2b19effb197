"""TCAA releases end to end (seed 002): through the Airflow DAG, the published tables as an
analyst reads them, the independent verifier and what it refuses, and bad parameters."""

from __future__ import annotations

import bisect

import numpy as np
import psycopg
import pytest
from pipeline_helpers import assert_plants_refused, catalog_rows, run_steps
from psycopg import sql

from anonymizers import cli
from anonymizers.db.sqlfiles import run_sql_file
from anonymizers.errors import InputError
from anonymizers.families.clustering.verifier import support_window
from anonymizers.release.spec import ReleaseSpec
from anonymizers.verifiers import verify_release
from anonymizers.verifiers.base import read_release

CITY = {"method": "tcaa", "k": 3, "slice_seconds": 600, "interval": 60}


def _rows(conn: psycopg.Connection, query: str, schema: str) -> list[tuple]:
    return conn.execute(sql.SQL(query).format(s=sql.Identifier(schema))).fetchall()


@pytest.mark.slow
def test_tcaa_publishes_through_the_dag_and_an_analyst_reads_it(loaded_city, conn, capsys,
                                                                analyst_url):
    code = cli.main(["release", "--dataset", loaded_city, "--method", "tcaa", "--k", "3",
                     "--param", "slice_seconds=600", "--param", "interval=60"])
    output = capsys.readouterr()
    assert code == 0, output.err
    name = output.out.strip().splitlines()[-1]
    assert name.startswith("release_city_tcaa_") and catalog_rows(conn) == [(name,)]
    assert cli.main(["verify", name]) == 0
    with psycopg.connect(analyst_url) as analyst:
        groups = _rows(analyst, "SELECT group_id, n_persons FROM {s}.groups", name)
        regions = _rows(analyst, "SELECT group_id, t_start, t_end, ST_XMin(geom), "
                        "ST_YMin(geom), ST_XMax(geom), ST_YMax(geom) FROM {s}.group_regions",
                        name)
        metrics = dict(_rows(analyst, "SELECT name, value FROM {s}.metrics", name))
    assert groups and all(n >= 3 for _, n in groups)
    assert {g for g, *_ in regions} == {g for g, _ in groups}
    assert all(t0 == t1 for _, t0, t1, *_ in regions)
    assert all(edge % 50 == 0 for *_, x0, y0, x1, y1 in regions for edge in (x0, y0, x1, y1))
    assert 0 < metrics["tcaa_information_loss"] < 1
    assert metrics["area_per_region_m2"] > 0


@pytest.fixture
def built(loaded_city: str, conn: psycopg.Connection) -> str:
    """A verified TCAA build schema of the city, not yet published."""
    spec = ReleaseSpec.from_dict(run_steps({"dataset": loaded_city, **CITY}, until="verify"))
    assert verify_release(conn, spec.build_schema).passed
    return spec.build_schema


PLANTS: dict[str, tuple[str, str]] = {
    "a rectangle off the lattice": (
        "UPDATE {s}.group_regions SET geom = ST_Translate(geom, 1, 0) "
        "WHERE (group_id, seq) = (SELECT group_id, seq FROM {s}.group_regions LIMIT 1)",
        "off the 50 m lattice"),
    "a rectangle its group never visited": (
        "UPDATE {s}.group_regions SET geom = ST_Translate(geom, 0, 50000) "
        "WHERE (group_id, seq) = (SELECT group_id, seq FROM {s}.group_regions LIMIT 1)",
        "distinct persons' raw data lie in its rectangles"),
    "a rectangle where nobody is at its time point": (
        "UPDATE {s}.group_regions SET geom = ST_Translate(geom, 0, 50000) "
        "WHERE (group_id, seq) = (SELECT group_id, seq FROM {s}.group_regions LIMIT 1)",
        "holds fewer than k=3 persons' positions"),
    "a group shrunk to a point's cell": (
        "UPDATE {s}.group_regions SET geom = ST_MakeEnvelope(ST_XMin(geom), ST_YMin(geom), "
        "ST_XMin(geom) + 50, ST_YMin(geom) + 50, ST_SRID(geom)) "
        "WHERE group_id = (SELECT group_id FROM {s}.groups LIMIT 1)",
        "distinct persons' raw data lie in its rectangles"),
    "a size larger than its support": (
        "UPDATE {s}.groups SET n_persons = n_persons + 999 "
        "WHERE group_id = (SELECT group_id FROM {s}.groups LIMIT 1)",
        "persons are consistent with it"),
    "an interval instead of an instant": (
        "UPDATE {s}.group_regions SET t_end = t_start + interval '1 minute' "
        "WHERE (group_id, seq) = (SELECT group_id, seq FROM {s}.group_regions LIMIT 1)",
        "t_start different from t_end"),
    # The lattice is read as the method's typed parameter: a value it cannot take is a
    # violation, and a missing one is not replaced by the default.
    "a lattice that is no number": (
        "UPDATE {s}.manifest SET parameters = jsonb_set(parameters, '{{snap}}', '\"fine\"')",
        "the manifest's parameters cannot be checked: parameter snap='fine' must be a number"),
    "a lattice left out": (
        "UPDATE {s}.manifest SET parameters = parameters - 'snap'",
        "the manifest's parameters do not declare snap"),
}


@pytest.mark.slow
def test_the_verifier_refuses_each_planted_violation(built, conn):
    assert_plants_refused(conn, built, PLANTS)


def test_the_clustering_verifier_refuses_a_release_of_another_family(built, conn):
    """Which method is a clustering one is the declaration's word (its family)."""
    from anonymizers.families.clustering.verifier import verify_clustering_release

    with conn.transaction(force_rollback=True):
        conn.execute(sql.SQL("UPDATE {}.manifest SET method = 'kam_cut'").format(
            sql.Identifier(built)))
        with pytest.raises(InputError, match="is a kam_cut release, not a clustering one"):
            verify_clustering_release(conn, built)


def test_positions_are_each_segment_s_interpolation_at_the_time_points_it_spans(built, conn):
    """The verifier's positions (clustering/verify/positions.sql, time points found by binary
    search) against a plain interpolation of the same projected fixes: between consecutive
    fixes of a trajectory, both ends included (a fix at a time point gives it twice, from the
    segments on either side), and the last fix alone."""
    window = support_window(read_release(conn, built))
    with conn.transaction():
        run_sql_file(conn, "clustering/verify/positions.sql", window, release=built)
        found = conn.execute("SELECT user_id, t, x, y FROM cl_verify_positions").fetchall()
        times = [t for (t,) in _rows(conn, "SELECT DISTINCT t_start FROM {s}.group_regions "
                                           "ORDER BY 1", built)]
        fixes = conn.execute(
            "SELECT user_id, traj_id, t, ST_X(xy), ST_Y(xy) FROM raw.points, "
            "ST_Transform(geom, %(srid)s) AS xy WHERE dataset_id = %(dataset_id)s "
            "AND t >= %(window_start)s AND t < %(window_end)s "
            "AND lon BETWEEN %(lon_min)s AND %(lon_max)s "
            "AND lat BETWEEN %(lat_min)s AND %(lat_max)s ORDER BY traj_id, t", window).fetchall()
    expected = []
    for (user, traj, t0, x0, y0), after in zip(fixes, [*fixes[1:], None], strict=True):
        t1, x1, y1 = (after[2], after[3], after[4]) if after and after[1] == traj else (t0, x0, y0)
        for t in times[bisect.bisect_left(times, t0):bisect.bisect_right(times, t1)]:
            f = 0.0 if t1 == t0 else (t - t0).total_seconds() / (t1 - t0).total_seconds()
            expected.append((user, t, x0 + (x1 - x0) * f, y0 + (y1 - y0) * f))
    found, expected = sorted(found), sorted(expected)
    assert [row[:2] for row in found] == [row[:2] for row in expected]
    assert len(found) > len(times)
    np.testing.assert_allclose([row[2:] for row in found], [row[2:] for row in expected],
                               rtol=0, atol=1e-6)
    assert any(t in times for _, _, t, _, _ in fixes)  # some fix lies on a time point


BAD_PARAMS: dict[str, tuple[dict[str, object], str]] = {
    "slice not a multiple of the interval": ({"slice_seconds": 650},
                                             "not a multiple of interval"),
    "window shorter than a slice": ({"slice_seconds": 6000, "interval": 60,
                                     "start": "2026-03-02T08:00:00Z",
                                     "end": "2026-03-02T09:00:00Z"},
                                    "shorter than one period of slice_seconds"),
}


@pytest.mark.parametrize("case", sorted(BAD_PARAMS))
def test_bad_parameters_are_refused_with_what_to_do(loaded_city, conn, case):
    extra, expected = BAD_PARAMS[case]
    with pytest.raises(InputError, match=expected):
        run_steps({"dataset": loaded_city, **CITY, **extra})
    assert catalog_rows(conn) == []
