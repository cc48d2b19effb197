"""The release gate: atomic publish, idempotent re-runs, failures and kills leave nothing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import psycopg
import pytest
from pipeline_helpers import catalog_rows, release_params, run_steps, schemas
from psycopg.types.json import Jsonb

from anonymizers.errors import InputError, PrivacyViolation, ReleaseError
from anonymizers.pipeline import steps
from anonymizers.release import gate
from anonymizers.release.spec import ReleaseSpec


def test_a_release_is_published_once_with_manifest_metrics_and_catalog_row(loaded_city, conn):
    spec = run_steps(release_params())
    name = ReleaseSpec.from_dict(spec).release_name
    assert catalog_rows(conn) == [(name,)]
    manifest = conn.execute(f"SELECT k, k_counts, verifier_result ->> 'passed', "
                            f"trajectories_in, trajectories_out FROM {name}.manifest").fetchone()
    assert manifest[0] == 3 and manifest[1] == "persons" and manifest[2] == "true"
    assert manifest[3] > manifest[4] > 0
    assert conn.execute(f"SELECT count(*) FROM {name}.metrics").fetchone()[0] >= 10
    assert schemas(conn, "work_") == [] and schemas(conn, "build_") == []


def test_rerunning_a_published_release_changes_nothing(loaded_city, conn):
    spec = ReleaseSpec.from_dict(run_steps(release_params()))
    ids = conn.execute(f"SELECT traj_id FROM {spec.release_name}.trajectories ORDER BY 1")
    before = ids.fetchall()
    assert run_steps(release_params(), run_id="run-2") is None
    after = conn.execute(f"SELECT traj_id FROM {spec.release_name}.trajectories ORDER BY 1")
    assert after.fetchall() == before
    assert len(catalog_rows(conn)) == 1


def test_each_step_after_the_build_runs_again_as_a_cleared_task_would(loaded_city, conn):
    """Airflow runs a cleared task again on what its first run committed: the manifest,
    metrics and verify steps give the same release a second time."""
    spec = run_steps(release_params(), until="verify")
    for name in ("manifest", "metrics", "verify", "publish"):
        steps.run_step(name, spec)
    name = ReleaseSpec.from_dict(spec).release_name
    assert catalog_rows(conn) == [(name,)]
    assert conn.execute(f"SELECT count(*) FROM {name}.metrics").fetchone()[0] >= 10


@pytest.mark.parametrize("failing_step", ["project", "anonymize", "build_release", "verify",
                                          "publish"])
def test_a_failed_step_leaves_no_release_and_a_rerun_publishes_once(
        loaded_city, conn, monkeypatch, failing_step):
    monkeypatch.setenv(steps.FAULT_ENV, failing_step)
    with pytest.raises(RuntimeError, match="fault injected"):
        run_steps(release_params())
    assert catalog_rows(conn) == []
    assert schemas(conn, "release_") == []
    monkeypatch.delenv(steps.FAULT_ENV)
    spec = ReleaseSpec.from_dict(run_steps(release_params(), run_id="run-2"))
    assert catalog_rows(conn) == [(spec.release_name,)]
    assert schemas(conn, "build_") == [] and schemas(conn, "work_") == []


def test_rerunning_the_same_failed_run_completes_it(loaded_city, conn, monkeypatch):
    monkeypatch.setenv(steps.FAULT_ENV, "metrics")
    with pytest.raises(RuntimeError):
        run_steps(release_params(), run_id="same")
    monkeypatch.delenv(steps.FAULT_ENV)
    run_steps(release_params(), run_id="same")
    assert len(catalog_rows(conn)) == 1


def test_two_concurrent_runs_of_one_release_publish_once(loaded_city, conn):
    specs = [run_steps(release_params(), run_id=f"run-{i}", until="verify") for i in (1, 2)]
    results: list[bool] = []
    barrier = threading.Barrier(2)

    def publish(spec):
        barrier.wait()
        with psycopg.connect(os.environ["DATABASE_URL"]) as connection:
            results.append(gate.publish(connection, ReleaseSpec.from_dict(spec)))

    threads = [threading.Thread(target=publish, args=(spec,)) for spec in specs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [False, True]
    assert len(catalog_rows(conn)) == 1


def test_a_planted_violation_is_caught_and_never_published(loaded_city, conn):
    spec = run_steps(release_params(), until="metrics")
    build = ReleaseSpec.from_dict(spec).build_schema
    # One person's whole generalized trajectory: contained in fewer than k sequences.
    unique = conn.execute(f"""
        SELECT array_agg(m.release_cell_id ORDER BY v.visit_no)
        FROM {ReleaseSpec.from_dict(spec).work_schema}.visits v
        JOIN {ReleaseSpec.from_dict(spec).work_schema}.cell_map m USING (cell_id)
        GROUP BY v.traj_id HAVING count(*) >= 6 LIMIT 1""").fetchone()
    if unique is None or unique[0] is None:  # every cell of it must be published to plant
        conn.execute(f"INSERT INTO {build}.cells (cell_id, geom) SELECT cell_id + 100000, "
                     f"geom FROM {build}.cells LIMIT 1")
        unique = conn.execute(f"SELECT ARRAY[max(cell_id)] FROM {build}.cells").fetchone()
    conn.execute(f"INSERT INTO {build}.trajectories (cells, n_cells) VALUES (%s, %s)",
                 (Jsonb(unique[0]), len(unique[0])))
    with pytest.raises(PrivacyViolation) as refusal:
        steps.verify(spec)
    # The refusal says whose fault it is and what the operator can change meanwhile.
    assert "the anonymizer is at fault" in str(refusal.value)
    assert f"anonymizers verify {build}" in str(refusal.value)
    assert "a larger k, a longer window, coarser cell_size" in str(refusal.value)
    with pytest.raises(ReleaseError):
        steps.publish(spec)
    assert catalog_rows(conn) == [] and schemas(conn, "release_") == []


@pytest.mark.parametrize("plant", [
    "ALTER TABLE {b}.trajectories ADD COLUMN note text; "
    "UPDATE {b}.trajectories SET note = (SELECT traj_id FROM raw.points LIMIT 1)",
    "ALTER TABLE {b}.trajectories ADD COLUMN seen_at timestamptz",
])
def test_leaked_identifiers_and_timestamps_are_caught(loaded_city, conn, plant):
    spec = run_steps(release_params(), until="metrics")
    conn.execute(plant.format(b=ReleaseSpec.from_dict(spec).build_schema))
    with pytest.raises(PrivacyViolation):
        steps.verify(spec)


def test_a_killed_run_leaves_nothing_visible_and_a_rerun_publishes(loaded_city, conn, db_url):
    env = {**os.environ, steps.FAULT_ENV: "verify:hang", "DATABASE_URL": db_url}
    code = ("import sys; from anonymizers.pipeline import steps; "
            "sys.path.insert(0, 'tests'); from pipeline_helpers import run_steps, "
            "release_params; run_steps(release_params())")
    process = subprocess.Popen([sys.executable, "-c", code], env=env, start_new_session=True)
    deadline = time.monotonic() + 120
    while not _verify_running(conn) and time.monotonic() < deadline:
        assert process.poll() is None, "the run ended before it could be killed"
        time.sleep(0.2)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    assert catalog_rows(conn) == [] and schemas(conn, "release_") == []
    assert schemas(conn, "build_"), "the killed run's build schema is kept for inspection"
    spec = ReleaseSpec.from_dict(run_steps(release_params(), run_id="after-kill"))
    assert catalog_rows(conn) == [(spec.release_name,)]
    # The killed run looks like one between two steps until it has been idle for the grace
    # period; then the next cleanup (any publish) drops what it left.
    assert schemas(conn, "build_"), "a run idle for less than the grace period was dropped"
    conn.execute("UPDATE private.release_runs SET last_step_at = now() - interval '2 days'")
    steps.cleanup(spec.to_dict())
    assert schemas(conn, "build_") == [] and schemas(conn, "work_") == []


def _verify_running(conn) -> bool:
    row = conn.execute("SELECT count(*) FROM pg_namespace n WHERE nspname LIKE 'build\\_%' "
                       "AND EXISTS (SELECT 1 FROM pg_class c WHERE c.relnamespace = n.oid "
                       "AND c.relname = 'metrics')").fetchone()
    return bool(row[0]) and _metrics_filled(conn)


def _metrics_filled(conn) -> bool:
    for schema in schemas(conn, "build_"):
        if conn.execute(f"SELECT count(*) FROM {schema}.metrics").fetchone()[0]:
            return True
    return False


def test_analyst_reads_releases_and_catalog_but_not_raw_or_scratch(loaded_city, conn,
                                                                  analyst_url):
    spec = ReleaseSpec.from_dict(run_steps(release_params()))
    kept = run_steps(release_params(k=4, accept_composition_risk="test: a second run"),
                     run_id="scratch", until="metrics")
    with psycopg.connect(analyst_url, autocommit=True) as analyst:
        assert analyst.execute(f"SELECT count(*) FROM {spec.release_name}.trajectories"
                               ).fetchone()[0] > 0
        assert analyst.execute("SELECT count(*) FROM catalog.latest").fetchone()[0] == 1
        scratch = ReleaseSpec.from_dict(kept)
        for table in ("raw.points", "raw.datasets", "raw.persons",
                      f"{scratch.work_schema}.points", f"{scratch.build_schema}.trajectories"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                analyst.execute(f"SELECT 1 FROM {table} LIMIT 1")


def test_release_ids_are_fresh_and_never_raw(loaded_city, conn):
    first = ReleaseSpec.from_dict(run_steps(release_params(k=3)))
    second = ReleaseSpec.from_dict(run_steps(
        release_params(k=4, accept_composition_risk="test: ids of two releases"), run_id="other"))
    shared = conn.execute(f"SELECT count(*) FROM {first.release_name}.trajectories a "
                          f"JOIN {second.release_name}.trajectories b USING (traj_id)")
    assert shared.fetchone()[0] == 0
    raw_ids = conn.execute("SELECT count(*) FROM raw.points p JOIN "
                           f"{first.release_name}.trajectories t ON t.traj_id::text IN "
                           "(p.traj_id, p.user_id)").fetchone()[0]
    assert raw_ids == 0


@pytest.mark.parametrize(("override", "message"), [
    ({"dataset": "nope"}, "no dataset named"),
    ({"k": 1}, "k must be >= 2"),
    ({"method": "magic"}, "unknown method"),
    ({"cell_size": -5}, "must be positive"),
    ({"start": "2030-01-02T00:00:00Z", "end": "2030-01-01T00:00:00Z"}, "empty window"),
])
def test_bad_release_parameters_are_rejected_before_any_work(loaded_city, conn, override,
                                                             message):
    with pytest.raises(InputError, match=message):
        steps.prepare(release_params(**override), None, "bad")
    assert schemas(conn, "work_") == []
