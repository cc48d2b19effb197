"""MLA releases end to end (seed 001): through the Airflow DAG, the published tables as an
analyst reads them, the independent verifier (against a brute-force reading of the raw
fixes, and on planted violations) and bad parameters."""

from __future__ import annotations

import numpy as np
import psycopg
import pytest
from pipeline_helpers import assert_plants_refused, catalog_rows, run_steps
from psycopg import sql

from anonymizers import cli
from anonymizers.errors import InputError
from anonymizers.families.clustering.verifier import sequence_support
from anonymizers.release.spec import ReleaseSpec, area_of_use
from anonymizers.verifiers import verify_release

CITY = {"method": "mla_heuristic", "k": 3}


def _rows(conn: psycopg.Connection, query: str, schema: str) -> list[tuple]:
    return conn.execute(sql.SQL(query).format(s=sql.Identifier(schema))).fetchall()


@pytest.mark.slow
@pytest.mark.parametrize("method", ["mla_heuristic", "mla_kmeans", "mla_iterative_kmeans"])
def test_mla_publishes_through_the_dag_and_an_analyst_reads_it(loaded_city, conn, capsys,
                                                               analyst_url, method):
    code = cli.main(["release", "--dataset", loaded_city, "--method", method, "--k", "3"])
    output = capsys.readouterr()
    assert code == 0, output.err
    name = output.out.strip().splitlines()[-1]
    assert name.startswith(f"release_city_{method}_")
    assert catalog_rows(conn) == [(name,)]
    assert cli.main(["verify", name]) == 0
    with psycopg.connect(analyst_url) as analyst:
        groups = _rows(analyst, "SELECT group_id, n_persons FROM {s}.groups", name)
        regions = _rows(analyst, "SELECT group_id, seq, t_start, t_end, ST_XMin(geom), "
                        "ST_YMin(geom), ST_XMax(geom), ST_YMax(geom) FROM {s}.group_regions",
                        name)
        metrics = dict(_rows(analyst, "SELECT name, value FROM {s}.metrics", name))
    assert groups and all(n >= 3 for _, n in groups)
    assert {g for g, *_ in regions} == {g for g, _ in groups}
    assert all(t1 > t0 and t0.minute == t0.second == 0 for _, _, t0, t1, *_ in regions)
    assert all(edge % 10 == 0 for *_, x0, y0, x1, y1 in regions for edge in (x0, y0, x1, y1))
    assert 0 < metrics["mla_loss_ratio"] <= 1
    assert 0 < metrics["mla_cluster_loss_bits_mean"] <= metrics["mla_loss_bits"]
    assert 0 < metrics["fixes_published_share"] <= 1
    assert metrics["area_per_location_m2"] > 0
    below_k = metrics["mla_below_k_share_before_repair"]  # NULL: fewer than k trajectories
    assert below_k is None or 0 <= below_k <= 1


@pytest.fixture
def built(loaded_city: str, conn: psycopg.Connection) -> str:
    """A verified MLA build schema of the city, not yet published."""
    spec = ReleaseSpec.from_dict(run_steps({"dataset": loaded_city, **CITY}, until="verify"))
    assert verify_release(conn, spec.build_schema).passed
    return spec.build_schema


def _supports(conn: psycopg.Connection, schema: str) -> dict[int, int]:
    """The verifier's support of every group of ``schema``."""
    manifest = dict(zip(("dataset_id", "window_start", "window_end", "srid"), conn.execute(
        sql.SQL("SELECT d.dataset_id, m.window_start, m.window_end, m.srid FROM {}.manifest m "
                "JOIN raw.datasets d ON d.name = m.dataset").format(sql.Identifier(schema))
    ).fetchone(), strict=True))
    rows = sequence_support(conn, schema, {**manifest, **area_of_use(manifest["srid"])})
    return {group: support for group, _, support in rows}


def _brute_force_supports(conn: psycopg.Connection, schema: str) -> dict[int, int]:
    """Per group, the persons with a trajectory whose fixes hit its regions in order, by
    trying every trajectory in Python (greedy earliest match, strictly later times)."""
    fixes = conn.execute(sql.SQL(
        "SELECT p.traj_id, p.user_id, extract(epoch FROM p.t), ST_X(xy), ST_Y(xy) "
        "FROM raw.points p JOIN raw.datasets d USING (dataset_id), {m} m, "
        "LATERAL ST_Transform(p.geom, m.srid) AS xy "
        "WHERE d.name = m.dataset AND p.t >= m.window_start AND p.t < m.window_end "
        "ORDER BY p.traj_id, p.t").format(m=sql.Identifier(schema, "manifest"))).fetchall()
    regions = conn.execute(sql.SQL(
        "SELECT group_id, extract(epoch FROM t_start), extract(epoch FROM t_end), "
        "ST_XMin(geom), ST_XMax(geom), ST_YMin(geom), ST_YMax(geom) FROM {} "
        "ORDER BY group_id, seq").format(sql.Identifier(schema, "group_regions"))).fetchall()
    trajectories: dict[str, tuple[str, np.ndarray]] = {}
    for traj in {row[0] for row in fixes}:
        rows = np.array([row[2:] for row in fixes if row[0] == traj], dtype=float)
        trajectories[traj] = (next(r[1] for r in fixes if r[0] == traj), rows)
    supports: dict[int, int] = {}
    for group in {row[0] for row in regions}:
        boxes = [row[1:] for row in regions if row[0] == group]
        persons = set()
        for person, points in trajectories.values():
            last = -np.inf
            for t0, t1, x0, x1, y0, y1 in boxes:
                hit = np.flatnonzero((points[:, 0] > last) & (points[:, 0] >= float(t0))
                                     & (points[:, 0] < float(t1)) & (points[:, 1] >= x0)
                                     & (points[:, 1] <= x1) & (points[:, 2] >= y0)
                                     & (points[:, 2] <= y1))
                if hit.size == 0:
                    break
                last = points[hit[0], 0]
            else:
                persons.add(person)
        supports[group] = len(persons)
    return supports


@pytest.mark.slow
def test_the_verifier_counts_persons_who_pass_the_regions_in_order(built, conn):
    supports = _supports(conn, built)
    assert supports == _brute_force_supports(conn, built)
    assert min(supports.values()) >= 3
    with conn.transaction(force_rollback=True):
        # Reverse every group's order: the persons who pass in the reverse order are others.
        conn.execute(sql.SQL("UPDATE {} SET seq = -seq").format(
            sql.Identifier(built, "group_regions")))
        reversed_supports = _supports(conn, built)
        assert reversed_supports == _brute_force_supports(conn, built)
        assert reversed_supports != supports
        assert not verify_release(conn, built).passed


PLANTS: dict[str, tuple[str, str]] = {
    "a region off the lattice": (
        "UPDATE {s}.group_regions SET geom = ST_Translate(geom, 1, 0) "
        "WHERE (group_id, seq) = (SELECT group_id, seq FROM {s}.group_regions LIMIT 1)",
        "off the 50 m lattice"),
    "a region its group never visited": (
        "UPDATE {s}.group_regions SET geom = ST_Translate(geom, 0, 50000) "
        "WHERE (group_id, seq) = (SELECT group_id, seq FROM {s}.group_regions LIMIT 1)",
        "in its regions in order"),
    "a size larger than its support": (
        "UPDATE {s}.groups SET n_persons = n_persons + 999 "
        "WHERE group_id = (SELECT group_id FROM {s}.groups LIMIT 1)",
        "persons are consistent with it"),
    "an empty time interval": (
        "UPDATE {s}.group_regions SET t_end = t_start "
        "WHERE (group_id, seq) = (SELECT group_id, seq FROM {s}.group_regions LIMIT 1)",
        "t_end not after t_start"),
    "a time off the bins": (
        "UPDATE {s}.group_regions SET t_end = t_end - interval '1 minute' "
        "WHERE (group_id, seq) = (SELECT group_id, seq FROM {s}.group_regions LIMIT 1)",
        "off the release's 3600 s grid"),
    "a time bin below its range": (
        "UPDATE {s}.manifest SET parameters = jsonb_set(parameters, '{{time_bin}}', '0')",
        "the manifest's parameters cannot be checked: parameter time_bin must be >= 1"),
    "a lattice left out": (
        "UPDATE {s}.manifest SET parameters = parameters - 'epsilon'",
        "the manifest's parameters do not declare epsilon"),
}


@pytest.mark.slow
def test_the_verifier_refuses_each_planted_violation(built, conn):
    assert_plants_refused(conn, built, PLANTS)


def test_a_window_shorter_than_a_time_bin_is_refused_with_what_to_do(loaded_city, conn):
    with pytest.raises(InputError, match="shorter than one period of time_bin"):
        run_steps({"dataset": loaded_city, **CITY, "time_bin": 90_000})
    assert catalog_rows(conn) == []
