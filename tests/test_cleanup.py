"""Scratch schemas of failed or abandoned runs do not stay: the cleanup after a publish
drops those of the release's runs, and the retention (`anonymizers cleanup`, the DAG
``anonymizers_cleanup``, the start of every run) those of any release, never published
ones. Never the scratch schemas of a run that is still working."""

from __future__ import annotations

import json
from datetime import timedelta

import psycopg
import pytest
from pipeline_helpers import release_params, run_steps
from psycopg import sql

from anonymizers import cli
from anonymizers.pipeline import steps
from anonymizers.release.gate import run_lock_key, run_token, work_lock_key
from anonymizers.release.retention import RETENTION_ENV
from anonymizers.release.scratch import cleanup_scratch
from anonymizers.release.spec import ReleaseSpec

DIGEST = "0123456789"  # a release's digest, as ReleaseSpec.digest writes it (10 hex digits)


def _exists(conn: psycopg.Connection, name: str) -> bool:
    return conn.execute("SELECT to_regnamespace(%s) IS NOT NULL", (name,)).fetchone()[0]


def test_publish_keeps_a_running_run_and_drops_a_failed_one(loaded_city, conn, monkeypatch):
    params = release_params()
    monkeypatch.setenv(steps.FAULT_ENV, "metrics")
    with pytest.raises(steps.InjectedFault, match="fault injected"):
        run_steps(params, run_id="failed", until="metrics")
    monkeypatch.delenv(steps.FAULT_ENV)
    running = ReleaseSpec.from_dict(run_steps(params, run_id="running", until="build_release"))
    failed_work = running.work_schema.replace(running.run_token, _token("failed"))
    assert _exists(conn, failed_work) and _exists(conn, running.work_schema)

    publisher = ReleaseSpec.from_dict(run_steps(params, run_id="publisher"))
    assert conn.execute("SELECT count(*) FROM catalog.releases").fetchone()[0] == 1
    assert not _exists(conn, failed_work), "a failed run's work schema stays after a publish"
    assert _exists(conn, running.work_schema), "cleanup dropped a concurrent run's work schema"
    assert _exists(conn, running.build_schema)
    assert not _exists(conn, publisher.work_schema)


def test_a_run_whose_failed_step_succeeded_on_retry_keeps_its_schemas(loaded_city, conn,
                                                                      monkeypatch):
    """A step that fails and then succeeds on a retry (Airflow retries a task) leaves a
    live run: another run's publish must not take it for a failed one."""
    params = release_params()
    retried = run_steps(params, run_id="retried", until="build_release")
    monkeypatch.setenv(steps.FAULT_ENV, "manifest")
    with pytest.raises(steps.InjectedFault, match="fault injected"):
        steps.run_step("manifest", retried)
    monkeypatch.delenv(steps.FAULT_ENV)
    steps.run_step("manifest", retried)  # the retry
    run_steps(params, run_id="publisher")
    assert _exists(conn, ReleaseSpec.from_dict(retried).work_schema), \
        "a publish dropped the schemas of a run whose failed step had succeeded on retry"


def test_an_abandoned_run_goes_unless_it_holds_its_lock(loaded_city, conn, db_url):
    params = release_params()
    abandoned = ReleaseSpec.from_dict(run_steps(params, run_id="abandoned", until="project"))
    publisher = run_steps(params, run_id="publisher", until="publish")
    conn.execute("UPDATE private.release_runs SET last_step_at = now() - interval '2 days' "
                 "WHERE work_schema = %s", (abandoned.work_schema,))
    with psycopg.connect(db_url) as busy:  # a step of the abandoned run is (again) running
        busy.execute("SELECT pg_advisory_xact_lock_shared(hashtext(%s))",
                     (run_lock_key(abandoned),))
        steps.cleanup(publisher)
        assert _exists(conn, abandoned.work_schema)
    steps.cleanup(publisher)  # the step ended long ago and holds nothing: abandoned
    assert not _exists(conn, abandoned.work_schema)
    assert conn.execute("SELECT count(*) FROM private.release_runs").fetchone()[0] == 0


def _token(run_id: str) -> str:
    return run_token(run_id)


def _plant_run(conn: psycopg.Connection, run_id: str, idle: timedelta, failed: bool = True,
               registered: bool = True) -> tuple[str, str]:
    """A run's work and build schemas (a table of 20k rows each), its last step ``idle``
    ago, failed or not; ``registered=False``: no row in the ledger (an orphan)."""
    work, build = (f"{kind}_{DIGEST}_{run_token(run_id)}" for kind in ("work", "build"))
    for name in (work, build):
        conn.execute(sql.SQL("CREATE SCHEMA {s}; CREATE TABLE {s}.t AS "
                             "SELECT generate_series(1, 20000) AS i").format(
                                 s=sql.Identifier(name)))
    if registered:
        conn.execute("INSERT INTO private.release_runs VALUES (%s, %s, %s, "
                     "now() - %s - interval '1 hour', now() - %s, "
                     "CASE WHEN %s THEN now() - %s END)",
                     (work, build, f"release_city_grid_kam_cut_{DIGEST}", idle, idle, failed,
                      idle))
    return work, build


def _runs(conn: psycopg.Connection) -> list[str]:
    return [row[0] for row in conn.execute(
        "SELECT work_schema FROM private.release_runs ORDER BY 1").fetchall()]


def _size(conn: psycopg.Connection, schema: str) -> int:
    return conn.execute("SELECT sum(pg_total_relation_size(c.oid))::bigint FROM pg_class c "
                        "WHERE c.relnamespace = to_regnamespace(%s) AND c.relkind = 'r'",
                        (schema,)).fetchone()[0]


def test_runs_idle_or_failed_longer_than_the_retention_go_whatever_their_release(conn, capsys):
    old = _plant_run(conn, "old failed", timedelta(days=8))
    abandoned = _plant_run(conn, "abandoned", timedelta(days=8), failed=False)
    fresh = _plant_run(conn, "fresh failed", timedelta(hours=2))
    sizes = {name: _size(conn, name) for name in (*old, *abandoned)}
    assert cli.main(["cleanup"]) == 0  # the default retention: 7 days
    out = capsys.readouterr().out.strip().splitlines()
    assert not any(_exists(conn, name) for name in (*old, *abandoned))
    assert all(_exists(conn, name) for name in fresh), "a failed run went before the retention"
    assert _runs(conn) == [fresh[0]]
    assert len(out) == 5 and out[-1].startswith("freed ") and "in 4 schema(s)" in out[-1]
    for name, size in sizes.items():
        line = next(line for line in out if line.startswith(f"dropped {name} "))
        assert f" {size / 1024 / 1024:.1f} MB " in line or f" {size / 1024:.1f} kB " in line
    assert "failed run, last active" in next(line for line in out if old[0] in line)
    assert "idle run, last active" in next(line for line in out if abandoned[0] in line)
    assert cli.main(["cleanup", "--older-than", "1h"]) == 0
    assert not _exists(conn, fresh[0]) and _runs(conn) == []


def test_a_run_whose_step_is_running_is_kept_however_old(conn, db_url):
    work, build = _plant_run(conn, "working", timedelta(days=30))
    with psycopg.connect(db_url) as busy:  # a step of the run is running (pipeline.steps.step)
        busy.execute("SELECT pg_advisory_xact_lock_shared(hashtext(%s))",
                     (work_lock_key(work),))
        result = cleanup_scratch()
        assert result.dropped == [] and [run for run, _ in result.kept] == [work]
        assert _exists(conn, work) and _exists(conn, build) and _runs(conn) == [work]
    assert {dropped.schema for dropped in cleanup_scratch().dropped} == {work, build}


def test_a_run_that_starts_over_after_it_was_listed_keeps_its_schemas(conn, db_url,
                                                                     monkeypatch):
    """The race: listed as expired, the run is prepared again (a cleared task) before the
    cleanup locks it; read again under the lock, it is fresh and stays."""
    from anonymizers.db.sqlfiles import fetch_row, run_sql_file
    from anonymizers.release import scratch

    work, build = _plant_run(conn, "cleared", timedelta(days=8))

    def prepared_meanwhile(connection, name, *args, **kwargs):
        if name == "release/try_lock_run.sql":
            with psycopg.connect(db_url) as other:
                run_sql_file(other, "release/register_run.sql", {
                    "work_schema": work, "build_schema": build, "release_name": "r"})
        return fetch_row(connection, name, *args, **kwargs)

    monkeypatch.setattr(scratch, "fetch_row", prepared_meanwhile)
    assert cleanup_scratch().dropped == []
    assert _exists(conn, work) and _exists(conn, build) and _runs(conn) == [work]


def test_orphans_go_only_when_asked_and_only_if_named_as_a_run_names_them(conn):
    orphan = _plant_run(conn, "before the ledger", timedelta(0), registered=False)
    fresh = _plant_run(conn, "running", timedelta(minutes=5), failed=False)
    conn.execute("CREATE SCHEMA work_generated; CREATE TABLE work_generated.t (i int)")
    assert cleanup_scratch().dropped == []
    assert all(_exists(conn, name) for name in orphan)
    dropped = cleanup_scratch(orphans=True).dropped
    assert sorted(schema.schema for schema in dropped) == sorted(orphan)
    assert {schema.state for schema in dropped} == {"orphan"}
    assert all(_exists(conn, name) for name in (*fresh, "work_generated"))
    assert _runs(conn) == [fresh[0]]


def test_a_dry_run_lists_with_sizes_and_drops_nothing(conn, capsys):
    old = _plant_run(conn, "old failed", timedelta(days=8))
    orphan = _plant_run(conn, "orphan", timedelta(0), registered=False)
    assert cli.main(["cleanup", "--dry-run", "--json", "--orphans", "--older-than", "7d"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["dry_run"] is True
    assert sorted(item["schema"] for item in listed["dropped"]) == sorted((*old, *orphan))
    assert all(_exists(conn, name) for name in (*old, *orphan))
    assert listed["freed_bytes"] == sum(_size(conn, name) for name in (*old, *orphan)) > 0
    assert _runs(conn) == [old[0]]


def test_every_run_starts_by_dropping_what_the_retention_lets_go(loaded_city, conn,
                                                                 monkeypatch):
    old = _plant_run(conn, "old failed", timedelta(days=8))
    fresh = _plant_run(conn, "fresh failed", timedelta(hours=2))
    monkeypatch.setenv(RETENTION_ENV, "30d")  # the installation keeps them longer
    first = ReleaseSpec.from_dict(steps.prepare(release_params(), None, "first"))
    assert _exists(conn, old[0]), "a run dropped scratch younger than the retention"
    monkeypatch.delenv(RETENTION_ENV)  # the default: 7 days
    second = ReleaseSpec.from_dict(steps.prepare(release_params(), None, "second"))
    assert not _exists(conn, old[0]) and not _exists(conn, old[1])
    assert all(_exists(conn, name) for name in (*fresh, first.work_schema, second.work_schema))
    assert _runs(conn) == sorted([fresh[0], first.work_schema, second.work_schema])


def test_a_published_release_is_never_touched(loaded_city, conn, monkeypatch):
    """A real failed run and a real published one whose own cleanup never ran, both long
    idle: their scratch goes, the release and its catalog row stay, and still verify."""
    from anonymizers.verifiers import verify_release

    params = release_params()
    monkeypatch.setenv(steps.FAULT_ENV, "project")
    with pytest.raises(steps.InjectedFault):
        run_steps(params, run_id="failed", until="project")
    monkeypatch.delenv(steps.FAULT_ENV)
    published = ReleaseSpec.from_dict(run_steps(params, run_id="published", until="publish"))
    tables = conn.execute("SELECT count(*) FROM pg_class WHERE relnamespace = "
                          "to_regnamespace(%s)", (published.release_name,)).fetchone()[0]
    conn.execute("UPDATE private.release_runs SET last_step_at = now() - interval '8 days', "
                 "failed_at = failed_at - interval '8 days'")
    dropped = {schema.schema for schema in cleanup_scratch().dropped}
    failed_work = published.work_schema.replace(published.run_token, _token("failed"))
    assert dropped == {failed_work, published.work_schema}
    assert conn.execute("SELECT count(*) FROM pg_class WHERE relnamespace = "
                        "to_regnamespace(%s)", (published.release_name,)).fetchone()[0] == tables
    assert conn.execute("SELECT release_name FROM catalog.releases").fetchall() == [
        (published.release_name,)]
    assert verify_release(conn, published.release_name).passed
    assert _runs(conn) == []


def test_the_maintenance_dag_does_what_the_command_does(conn):
    from anonymizers.airflow_runner import run_dag

    old = _plant_run(conn, "old failed", timedelta(days=8))
    fresh = _plant_run(conn, "fresh failed", timedelta(hours=2))
    run_dag("anonymizers_cleanup", {"older_than": "7d"})
    assert not any(_exists(conn, name) for name in old)
    assert all(_exists(conn, name) for name in fresh)
    assert _runs(conn) == [fresh[0]]
