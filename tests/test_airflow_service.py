"""The real Airflow (not dag.test()): `anonymizers airflow up`, Airflow's own backfill
command over two days of a synthetic city, and `down`.

The service runs its components against a database of this test (the data) and a
metadata database of its own on the same server, on a free port, with its files under
tmp_path; a finalizer kills (SIGKILL) whatever of it is still alive, also after a failure.
"""

from __future__ import annotations

import contextlib
import json
import socket
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psutil
import psycopg
import pytest
from conftest import with_database
from pipeline_helpers import catalog_rows, schemas

from anonymizers.airflow_service import COMPONENTS, AirflowService

DAYS = ("2026-03-02", "2026-03-03")
DAG = "generalization"
PARAMS = {"dataset": "city", "method": "grid_kam_cut", "k": 3, "cell_size": 500}
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
def service(db_url: str, server_url: str, dropper, two_day_city: tuple[Path, Path],
            tmp_path: Path) -> Iterator[AirflowService]:
    """The service on this test's database (the city loaded), not yet started."""
    from anonymizers.loading import load_dataset

    load_dataset(two_day_city[0], "city", persons=two_day_city[1], url=db_url)
    metadata_db = f"test_airflow_meta_{uuid.uuid4().hex[:10]}"
    service = AirflowService(
        home=tmp_path / "service", airflow_home=tmp_path / "airflow-home", data_url=db_url,
        metadata_db=metadata_db, port=_free_port(),
        extra_env={"ANONYMIZERS_SCHEDULE": "@daily",
                   f"ANONYMIZERS_{DAG.upper()}_PARAMS": json.dumps(PARAMS)})
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


def _metadata(service: AirflowService) -> psycopg.Connection:
    return psycopg.connect(with_database(service.data_url, service.metadata_db),
                           autocommit=True)


def _wait(what: str, condition, timeout: float = TIMEOUT_SECONDS, service=None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if result := condition():
            return result
        time.sleep(2)
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


def _backfill_runs_done(service: AirflowService, backfill_id: int) -> list[tuple] | None:
    with _metadata(service) as conn:
        runs = conn.execute(
            "SELECT r.data_interval_start, r.state FROM dag_run AS r "
            "JOIN backfill_dag_run AS b ON b.dag_run_id = r.id "
            "WHERE b.backfill_id = %s ORDER BY 1", (backfill_id,)).fetchall()
    if len(runs) == len(DAYS) and all(state in ("success", "failed") for _, state in runs):
        return runs
    return None


def test_a_backfill_by_the_real_scheduler_publishes_one_verified_release_per_day(
        service: AirflowService, conn: psycopg.Connection):
    from anonymizers.verifiers import verify_release

    started = service.up(log=lambda _: None)
    assert set(started) == set(COMPONENTS)
    assert "scheduler: running" in service.status()
    with _metadata(service) as meta:  # the dag-processor has stored the DAG
        _wait("the DAG in the metadata DB", lambda: meta.execute(
            "SELECT 1 FROM dag WHERE dag_id = %s", (DAG,)).fetchone(), service=service)
    _airflow(service, "dags", "unpause", DAG)

    first = _backfill(service)
    _wait("two releases in the catalog", lambda: len(catalog_rows(conn)) == len(DAYS),
          service=service)
    runs = _wait("the backfill's runs to end", lambda: _backfill_runs_done(service, first),
                 service=service)
    assert [state for _, state in runs] == ["success"] * len(DAYS)
    windows = conn.execute("SELECT release_name, window_start::date::text, "
                           "(window_end - window_start)::text FROM catalog.releases "
                           "ORDER BY window_start").fetchall()
    assert [(day, length) for _, day, length in windows] == [(d, "1 day") for d in DAYS]
    for name, _, _ in windows:
        assert verify_release(conn, name).passed, name

    # Again, reprocessing the completed runs: the gate finds both published.
    again = _backfill(service, "--reprocess-behavior", "completed")
    runs = _wait("the second backfill's runs to end",
                 lambda: _backfill_runs_done(service, again), service=service)
    assert [state for _, state in runs] == ["success"] * len(DAYS)
    assert [row[0] for row in catalog_rows(conn)] == sorted(name for name, _, _ in windows)
    assert schemas(conn, "work_") == schemas(conn, "build_") == []

    alive = service.processes()
    stopped = service.down(log=lambda _: None)
    assert {p.pid for p in alive} <= set(stopped)
    assert not [p for p in alive if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    assert "scheduler: not running" in service.status()
    assert not list(service.home.glob("*.pid"))
