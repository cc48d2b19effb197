"""The cleanup after a publish drops what failed or abandoned runs of the release left, and
never the scratch schemas of a concurrent run that is still working (issue 8)."""

from __future__ import annotations

import psycopg
import pytest
from pipeline_helpers import release_params, run_steps

from anonymizers.pipeline import steps
from anonymizers.release.gate import run_lock_key
from anonymizers.release.spec import ReleaseSpec


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
    from anonymizers.release.gate import run_token

    return run_token(run_id)
