"""MOB releases end to end (seed 003): QIDs through the CLI, a release through the Airflow DAG,
the published tables as an analyst sees them, and the independent verifier."""

from __future__ import annotations

import psycopg
import pytest
from pipeline_helpers import catalog_rows, run_steps
from psycopg import sql

from anonymizers import cli
from anonymizers.release.spec import ReleaseSpec
from anonymizers.verifiers import verify_release


def _generate_qids(dataset: str, max_size: int = 6) -> None:
    assert cli.main(["qids", "generate", "--dataset", dataset, "--strategy", "graph",
                     "--max-size", str(max_size), "--seed", "3"]) == 0


def _one(conn: psycopg.Connection, query: sql.Composable) -> object:
    row = conn.execute(query).fetchone()
    assert row is not None
    return row[0]


@pytest.mark.slow
def test_mob_symmetric_publishes_through_the_dag_and_verifies(loaded_city, conn, capsys):
    _generate_qids(loaded_city)
    code = cli.main(["release", "--dataset", loaded_city, "--method", "mob_symmetric",
                     "--k", "3"])
    output = capsys.readouterr()
    assert code == 0, output.err
    name = output.out.strip().splitlines()[-1]
    assert name.startswith("release_city_mob_symmetric_")
    assert catalog_rows(conn) == [(name,)]
    assert cli.main(["verify", name]) == 0
    release = sql.Identifier(name)
    objects = _one(conn, sql.SQL("SELECT count(*) FROM {}.objects").format(release))
    assert objects and objects == _one(conn, sql.SQL(
        "SELECT count(DISTINCT object_id) FROM {}.positions").format(release))
    manifest = conn.execute(sql.SQL(
        "SELECT published_unit, parameters FROM {}.manifest").format(release)).fetchone()
    assert manifest[0] == "objects" and len(manifest[1]["qid_fingerprint"]) == 64
    metrics = dict(conn.execute(sql.SQL("SELECT name, value FROM {}.metrics").format(
        release)).fetchall())
    assert 0 < metrics["mob_information_loss_avg"] < 1
    assert 0 <= metrics["mob_class_coverage"] <= 1


@pytest.mark.slow
def test_mob_extreme_union_publishes_a_verified_release(loaded_city, conn):
    _generate_qids(loaded_city)
    spec = run_steps({"dataset": loaded_city, "method": "mob_extreme_union", "k": 3})
    name = ReleaseSpec.from_dict(spec).release_name
    assert catalog_rows(conn) == [(name,)]
    assert verify_release(conn, name).passed


def test_changing_the_qids_changes_the_release(loaded_city, conn):
    from anonymizers.release import gate

    params = {"dataset": loaded_city, "method": "mob_symmetric", "k": 3}
    _generate_qids(loaded_city, max_size=4)
    first = gate.resolve_spec(conn, params, None, "a")
    _generate_qids(loaded_city, max_size=8)
    second = gate.resolve_spec(conn, params, None, "a")
    assert first.params["qid_fingerprint"] != second.params["qid_fingerprint"]
    assert first.release_name != second.release_name
