"""The real Airflow (not dag.test()): `anonymizers airflow up` with a schedule declared over
two days of a synthetic city, the scheduler's own runs of it (one per day), the scheduler
killed (SIGKILL, with its workers and their tasks) in the middle of both runs and started
again, Airflow's backfill command over the same days, and `down`. A family DAG, unpaused
with nothing declared for it, runs nothing.

The service runs its components against a database of this test (the data) and a
metadata database of its own on the same server, on a free port, with its files in a
folder every OS user can reach (so that what the service's files let another user read is
what their modes say: DESIGN, privacy rule 10); a finalizer kills (SIGKILL) whatever of it
is still alive, also after a failure.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psutil
import psycopg
import pytest
from conftest import with_database
from file_access import (
    assert_another_user_can_read_a_planted_file,
    assert_owner_only_modes,
    assert_unreadable_by_another_user,
    carriers,
    every_path,
    needles_of,
    require_another_user,
    scratch_folder,
)
from pipeline_helpers import catalog_rows, schemas

from anonymizers.airflow_service import COMPONENTS, AirflowService, sqlalchemy_url
from anonymizers.pipeline.steps import FAULT_ENV
from anonymizers.schedules import SCHEDULES_ENV

DAYS = ("2026-03-02", "2026-03-03")
DAG = "scheduled_city_grid"
FAMILY_DAG = "generalization"
# The scheduler creates one run per day of DAYS (catchup from the first, none after the last).
SCHEDULES = f"""
[schedules.city_grid]
dataset = "city"
method = "grid_kam_cut"
k = 3
schedule = "@daily"
start_date = {DAYS[0]}
end_date = {DAYS[1]}
catchup = true
[schedules.city_grid.params]
cell_size = 500
"""
TIMEOUT_SECONDS = 300


@pytest.fixture(scope="module")
def two_day_city(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A small synthetic city over DAYS (two days of trips)."""
    from anonymizers.synthetic import CityConfig, write_city

    folder = tmp_path_factory.mktemp("two-day-city")
    points, persons = folder / "points.csv", folder / "persons.csv"
    write_city(CityConfig(seed=11, target_points=12_000, days=len(DAYS), start=DAYS[0]),
               points, persons)
    return points, persons


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def service(db_url: str, server_url: str, dropper, two_day_city: tuple[Path, Path]
            ) -> Iterator[AirflowService]:
    """The service on this test's database (the city loaded), not yet started."""
    from anonymizers.loading import load_dataset

    require_another_user()
    load_dataset(two_day_city[0], "city", persons=two_day_city[1], url=db_url)
    metadata_db = f"test_airflow_meta_{uuid.uuid4().hex[:10]}"
    folder = scratch_folder("anonymizers-service-")
    (folder / "schedules.toml").write_text(SCHEDULES)
    service = AirflowService(
        home=folder / "service", airflow_home=folder / "airflow-home", data_url=db_url,
        metadata_db=metadata_db, port=_free_port(),
        extra_env={SCHEDULES_ENV: str(folder / "schedules.toml"),
                   # metrics hangs (until killed) after its work, inside its transaction
                   FAULT_ENV: "metrics:hang",
                   # a task lost with its worker is failed after 20 s and retried 5 s later;
                   # the dead scheduler's tasks are looked for every 10 s (default 300 s)
                   "AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT": "20",
                   "AIRFLOW__SCHEDULER__ORPHANED_TASKS_CHECK_INTERVAL": "10",
                   "ANONYMIZERS_TASK_RETRIES": "2", "ANONYMIZERS_RETRY_DELAY_SECONDS": "5"})
    try:
        yield service
    finally:
        left = service.processes()  # components (from their pid files) and descendants
        for process in left:
            with contextlib.suppress(psutil.Error):
                process.kill()
        psutil.wait_procs(left, timeout=10)
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {metadata_db} WITH (FORCE)")
        shutil.rmtree(folder, ignore_errors=True)


def _metadata(service: AirflowService) -> psycopg.Connection:
    return psycopg.connect(with_database(service.data_url, service.metadata_db),
                           autocommit=True)


def _wait(what: str, condition, timeout: float = TIMEOUT_SECONDS, service=None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if result := condition():
            return result
        time.sleep(1)
    logs = service.logs(30) if service is not None else ""
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}\n{logs}")


def _airflow(service: AirflowService, *args: str) -> str:
    result = service.airflow(*args)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    return result.stdout


def _backfill(service: AirflowService, *extra: str) -> int:
    """Airflow's own backfill command over DAYS; the id of the backfill it made."""
    _airflow(service, "backfill", "create", "--dag-id", DAG, "--from-date", DAYS[0],
             "--to-date", DAYS[1], *extra)
    with _metadata(service) as conn:
        row = conn.execute("SELECT max(id) FROM backfill WHERE dag_id = %s", (DAG,)).fetchone()
    assert row is not None and row[0] is not None
    return int(row[0])


def _running(service: AirflowService, task_id: str) -> int:
    with _metadata(service) as conn:
        row = conn.execute("SELECT count(*) FROM task_instance WHERE task_id = %s "
                           "AND state = 'running' AND dag_id = %s", (task_id, DAG)).fetchone()
    return int(row[0]) if row else 0


def _terminate_tasks(conn: psycopg.Connection) -> int:
    """Terminate the pipeline's connections inside a transaction (a step at work: running a
    statement or computing in Python between two); how many."""
    rows = conn.execute(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = "
        "current_database() AND application_name = 'anonymizers' AND state IN ('active', "
        "'idle in transaction') AND pid <> pg_backend_pid()").fetchall()
    return sum(1 for (done,) in rows if done)


def _tree(process: psutil.Process) -> list[psutil.Process]:
    return [process, *process.children(recursive=True)]


def _scheduled_runs_done(service: AirflowService) -> list[tuple] | None:
    """The scheduler's own runs of the declared schedule (interval start, state, the release
    its publish named), once all have ended."""
    with _metadata(service) as conn:
        runs = conn.execute(
            "SELECT r.data_interval_start, r.state, x.value FROM dag_run AS r "
            "LEFT JOIN xcom AS x ON x.dag_run_id = r.id AND x.task_id = 'publish' "
            "AND x.key = 'release' WHERE r.dag_id = %s AND r.run_type = 'scheduled' "
            "ORDER BY 1", (DAG,)).fetchall()
    if len(runs) == len(DAYS) and all(state in ("success", "failed") for _, state, _ in runs):
        return runs
    return None


def _xcom_text(value: object) -> str:
    """An XCom's string as the metadata database returns it (JSON, decoded or not)."""
    if isinstance(value, bytes | bytearray):
        value = value.decode()
    text = str(value)
    return str(json.loads(text)) if text.startswith('"') else text


def _backfill_runs_done(service: AirflowService, backfill_id: int) -> list[tuple] | None:
    """The backfill's runs (interval start, state) once the scheduler marked it complete
    (until then Airflow refuses another backfill of the DAG)."""
    with _metadata(service) as conn:
        complete = conn.execute("SELECT completed_at IS NOT NULL FROM backfill WHERE id = %s",
                                (backfill_id,)).fetchone()
        if not (complete and complete[0]):
            return None
        runs = conn.execute(
            "SELECT r.data_interval_start, r.state FROM dag_run AS r "
            "JOIN backfill_dag_run AS b ON b.dag_run_id = r.id "
            "WHERE b.backfill_id = %s ORDER BY 1", (backfill_id,)).fetchall()
    if len(runs) == len(DAYS) and all(state in ("success", "failed") for _, state in runs):
        return runs
    return None


@pytest.mark.slow
def test_a_declared_schedule_publishes_each_interval_once_through_a_killed_scheduler(
        service: AirflowService, conn: psycopg.Connection):
    from anonymizers.verifiers import verify_release

    clock = time.monotonic()
    phases: list[str] = []

    def phase(label: str) -> None:
        phases.append(f"{label}: {time.monotonic() - clock:.0f} s")
        print(phases[-1])  # shown with -s: how long the real components take here

    started = service.up(log=lambda _: None)
    phase("up")
    assert set(started) == set(COMPONENTS)
    assert "scheduler: running" in service.status()
    with _metadata(service) as meta:  # the dag-processor has stored the DAGs
        _wait("the DAGs in the metadata DB", lambda: meta.execute(
            "SELECT count(*) = 2 FROM dag WHERE dag_id IN (%s, %s)",
            (DAG, FAMILY_DAG)).fetchone()[0], service=service)
    # Nothing is declared for the family DAG: unpaused, it runs nothing (checked at the end).
    _airflow(service, "dags", "unpause", FAMILY_DAG)
    _airflow(service, "dags", "unpause", DAG)
    phase("DAGs stored and unpaused")
    # The scheduler's runs of both days hang in metrics: the scheduler, its workers and
    # their tasks are killed.
    _wait("both runs in their metrics step", lambda: _running(service, "metrics") == 2,
          service=service)
    scheduler = service.processes()[0]
    assert scheduler.pid == service.pid("scheduler")
    killed = _tree(scheduler)
    for process in killed:
        process.kill()
    psutil.wait_procs(killed, timeout=10)
    phase(f"both in metrics; scheduler and {len(killed) - 1} descendants killed")
    assert catalog_rows(conn) == [] and schemas(conn, "release_") == []  # nothing partial
    del service.extra_env[FAULT_ENV]
    assert service.up(log=lambda _: None)["scheduler"] != scheduler.pid  # the scheduler only
    phase("scheduler started again")
    # A transient database error: the retried metrics steps lose their connections in the
    # middle of their transaction (as in a server restart); Airflow runs them again.
    terminated = _wait("a retried metrics step at work", lambda: _terminate_tasks(conn),
                       service=service)
    phase(f"{terminated} task connection(s) terminated")
    _wait("two releases in the catalog", lambda: len(catalog_rows(conn)) == len(DAYS),
          service=service)
    runs = _wait("the scheduled runs to end", lambda: _scheduled_runs_done(service),
                 service=service)
    assert [state for _, state, _ in runs] == ["success"] * len(DAYS)
    # Each run names the release it published (the XCom `release` of its publish task).
    assert sorted(_xcom_text(value) for _, _, value in runs) == [
        row[0] for row in catalog_rows(conn)]
    phase("two releases published")
    _assert_private_and_free_of_the_digest(service, conn)
    phase("files checked as another user")
    with _metadata(service) as meta:  # metrics ran again, in a retry
        tries = meta.execute("SELECT try_number FROM task_instance WHERE task_id = 'metrics' "
                             "AND dag_id = %s", (DAG,)).fetchall()
    assert len(tries) == len(DAYS) and all(try_number >= 2 for try_number, in tries)
    lost = [path for path in service.airflow_home.glob(f"logs/dag_id={DAG}/*/task_id=metrics/*")
            if "terminating connection" in path.read_text(errors="replace")]
    assert lost, "no metrics attempt failed on its terminated connection"
    windows = conn.execute("SELECT release_name, window_start::date::text, "
                           "(window_end - window_start)::text FROM catalog.releases "
                           "ORDER BY window_start").fetchall()
    assert [(day, length) for _, day, length in windows] == [(d, "1 day") for d in DAYS]
    for name, _, _ in windows:
        assert verify_release(conn, name).passed, name

    # Airflow's backfill over the same days, reprocessing the completed runs: the gate
    # finds both published.
    again = _backfill(service, "--reprocess-behavior", "completed")
    runs = _wait("the second backfill's runs to end",
                 lambda: _backfill_runs_done(service, again), service=service)
    assert [state for _, state in runs] == ["success"] * len(DAYS)
    assert [row[0] for row in catalog_rows(conn)] == sorted(name for name, _, _ in windows)
    assert schemas(conn, "work_") == schemas(conn, "build_") == []
    phase("backfill again: nothing published twice")
    with _metadata(service) as meta:  # unpaused long ago, with nothing declared
        assert meta.execute("SELECT count(*) FROM dag_run WHERE dag_id = %s",
                            (FAMILY_DAG,)).fetchone()[0] == 0

    alive = service.processes()
    stopped = service.down(log=lambda _: None)
    assert {p.pid for p in alive} <= set(stopped)
    assert not [p for p in alive if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    assert "scheduler: not running" in service.status()
    assert not list(service.home.glob("*.pid"))
    phase("down")


def _assert_private_and_free_of_the_digest(service: AirflowService,
                                           conn: psycopg.Connection) -> None:
    """Another OS user reads nothing of the service's files (the admin password, airflow.cfg,
    component and task logs, pid files, secrets), and neither they nor Airflow's metadata
    (XCom, rendered fields, run conf) hold the loaded file's plain digest."""
    files = every_path(service.home) + every_path(service.airflow_home)
    names = {path.name for path in files}
    assert {"simple_auth_manager_passwords.json.generated", "airflow.cfg", "secrets.json",
            "api-server.log", "scheduler.pid"} <= names, sorted(names)
    assert any(path.name.startswith("attempt=") for path in files)  # task logs
    assert_another_user_can_read_a_planted_file(service.home.parent)
    assert_unreadable_by_another_user(files)
    assert_owner_only_modes(files)
    row = conn.execute("SELECT source_sha256 FROM raw.datasets").fetchone()
    assert row is not None
    needles = needles_of(row[0], [])
    assert carriers(service.home, needles) + carriers(service.airflow_home, needles) == []
    with _metadata(service) as meta:
        for table in ("xcom", "rendered_task_instance_fields", "dag_run", "log"):
            text = meta.execute(f"SELECT string_agg(t::text, ' ') FROM {table} AS t").fetchone()
            assert text is not None
            found = [label for label, needle in needles.items() if needle in (text[0] or "")]
            assert found == [], f"{table}: {found}"


# ------------------------------------------------------------ without the service (fast)


_DAG_SETTINGS = """
import json, runpy, sys
from anonymizers.airflow_runner import configure_airflow, dags_folder
configure_airflow()
dag = runpy.run_path(str(dags_folder() / sys.argv[1]))["dag"]
delay = dag.default_args.get("retry_delay")
print(json.dumps({
    "timetable": type(dag.timetable).__name__,
    "expression": getattr(dag.timetable, "expression", None),
    "start_date": dag.start_date.isoformat() if dag.start_date else None,
    "catchup": dag.catchup, "params": {name: dag.params[name] for name in dag.params},
    "retries": dag.default_args.get("retries"),
    "retry_delay": None if delay is None else delay.total_seconds()}, default=str))
"""


def _load_dag(**env: str) -> dict:
    """The settings of the DAG as its file builds them under ``env``, read in a child
    process: a DAG built in this process with other settings makes later ``dag.test()``
    runs of the same dag_id here fail ("the dag is not serialized")."""
    result = subprocess.run([sys.executable, "-c", _DAG_SETTINGS, f"{FAMILY_DAG}.py"],
                            env={**os.environ, **env}, capture_output=True, text=True,
                            check=False)
    if result.returncode != 0:
        raise ValueError(result.stderr[-3000:])
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_a_user_mistake_fails_a_task_for_good_anything_else_is_retried():
    """Retries are for lost workers and connections (the service sets 2): an InputError or
    PrivacyViolation becomes Airflow's no-retry failure, with the original as its cause."""
    import psycopg.errors

    from anonymizers.airflow_runner import configure_airflow

    # Before this process first imports Airflow: configured without our DAGs folder, every
    # later dag.test() here fails ("the dag is not serialized").
    configure_airflow()
    from airflow.sdk.exceptions import AirflowFailException

    from anonymizers.errors import InputError, PrivacyViolation
    from anonymizers.pipeline import dag_factory

    for error in (InputError("fewer than k"), PrivacyViolation("k not met")):
        with pytest.raises(AirflowFailException) as failed, \
                dag_factory._no_retry_of_our_errors():
            raise error
        assert failed.value.__cause__ is error
    with pytest.raises(psycopg.errors.AdminShutdown), dag_factory._no_retry_of_our_errors():
        raise psycopg.errors.AdminShutdown("terminating connection")
    assert _load_dag()["retries"] == 0  # dag.test(): report at once
    retried = _load_dag(ANONYMIZERS_TASK_RETRIES="2", ANONYMIZERS_RETRY_DELAY_SECONDS="5")
    assert retried["retries"] == 2
    assert retried["retry_delay"] == 5


def test_sqlalchemy_url_keeps_the_unix_socket_of_a_libpq_url():
    url = sqlalchemy_url("postgresql://anonymizers@/anonymizers?host=/srv/run&port=54329")
    assert url == "postgresql+psycopg2://anonymizers@/anonymizers?host=/srv/run&port=54329"
    assert sqlalchemy_url("postgresql://u:pw@db:5432/meta") == (
        "postgresql+psycopg2://u:pw@/meta?host=db&port=5432")
