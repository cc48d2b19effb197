"""The windows DAGs (`<family>_windows`): one release per window of [start, end), as a mapped
task group, run end to end with dag.test() on the small city; and the pure window planner."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import threading
from datetime import UTC, datetime

import psycopg
import pytest
from pipeline_helpers import catalog_rows, release_params, run_steps, schemas
from psycopg import sql

from anonymizers.airflow_runner import configure_airflow, dags_folder, run_dag
from anonymizers.errors import InputError
from anonymizers.families.registry import FAMILIES, SHARED_STEPS_AFTER
from anonymizers.release import gate
from anonymizers.release.spec import ReleaseSpec
from anonymizers.release.windows import plan_windows, split_window

# The small city's fixes lie in 2026-03-02 04:00 .. 22:02: three windows of 6 h, each with
# more than k = 3 persons.
SPAN = {"start": "2026-03-02T04:00:00Z", "end": "2026-03-02T22:00:00Z", "window_hours": 6}
WINDOWS = [("2026-03-02T04:00:00+00:00", "2026-03-02T10:00:00+00:00"),
           ("2026-03-02T10:00:00+00:00", "2026-03-02T16:00:00+00:00"),
           ("2026-03-02T16:00:00+00:00", "2026-03-02T22:00:00+00:00")]


@pytest.fixture(scope="module")
def dagbag():
    configure_airflow()
    from airflow.dag_processing.dagbag import DagBag

    return DagBag(dag_folder=str(dags_folder()))


@pytest.fixture
def fast_metrics(monkeypatch):
    """Cluster preservation on 100 routes, not 1,500 (dag.test() runs tasks in this process)."""
    from anonymizers.families.generalization import metrics

    monkeypatch.setattr(metrics, "CLUSTER_SAMPLE", 100)


def _conf(dataset: str, **extra) -> dict:
    return {"dataset": dataset, "method": "grid_kam_cut", "k": 3, "cell_size": 500.0,
            **SPAN, **extra}


def _ledger(conn) -> list[tuple]:
    """(release, window start, window end, its manifest's verifier passed) in window order."""
    rows = conn.execute("SELECT release_name, window_start, window_end FROM catalog.releases "
                        "ORDER BY window_start").fetchall()
    return [(name, start.astimezone(UTC).isoformat(), end.astimezone(UTC).isoformat(),
             conn.execute(sql.SQL("SELECT (verifier_result ->> 'passed')::boolean FROM {}."
                                  "manifest").format(sql.Identifier(name))).fetchone()[0])
            for name, start, end in rows]


def test_every_dag_file_imports_and_every_family_has_its_windows_dag(dagbag):
    assert dagbag.import_errors == {}
    assert {f"{family}_windows" for family in FAMILIES} <= set(dagbag.dag_ids)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_windows_dag_maps_the_release_tasks_over_the_planned_windows(dagbag, family):
    from airflow.sdk.definitions.taskgroup import MappedTaskGroup

    dag = dagbag.get_dag(f"{family}_windows")
    group = dag.task_group_dict["window"]
    assert isinstance(group, MappedTaskGroup)
    order = ["prepare", *FAMILIES[family].steps, *SHARED_STEPS_AFTER]
    assert dag.task_ids == ["plan_windows", *(f"window.{name}" for name in order)]
    assert dag.get_task("plan_windows").downstream_task_ids == {"window.prepare"}
    for upstream, downstream in itertools.pairwise(order):
        assert f"window.{downstream}" in dag.get_task(f"window.{upstream}").downstream_task_ids
    # The same params as the release DAG, start and end required, and window_hours.
    release = dagbag.get_dag(family)
    assert set(dag.params) == set(release.params) | {"window_hours"}
    assert dag.params.get_param("start").schema["type"] == "string"
    assert dag.params.get_param("window_hours").schema["exclusiveMinimum"] == 0


_TASK_POOLS = """
import json, runpy, sys
from anonymizers.airflow_runner import configure_airflow, dags_folder
configure_airflow()
dag = runpy.run_path(str(dags_folder() / "generalization.py"))["windows"]
print(json.dumps(sorted({task.pool for task in dag.tasks})))
"""


def test_every_task_runs_in_the_pool_the_environment_names():
    """ANONYMIZERS_POOL bounds the steps running at once on all workers (read in a child
    process: a DAG built here with other settings breaks later dag.test() runs here)."""
    found = subprocess.run([sys.executable, "-c", _TASK_POOLS], capture_output=True, text=True,
                           env={**os.environ, "ANONYMIZERS_POOL": "anonymizers"}, check=True)
    assert json.loads(found.stdout.strip().splitlines()[-1]) == ["anonymizers"]


def test_plan_cuts_the_span_into_adjacent_windows_with_a_shorter_last():
    assert plan_windows(SPAN) == WINDOWS
    day = datetime(2026, 3, 2, tzinfo=UTC)
    assert split_window(day, day.replace(hour=5), 2, 1)[-1] == (
        "2026-03-02T04:00:00+00:00", "2026-03-02T05:00:00+00:00")


@pytest.mark.parametrize(("change", "message"), [
    ({"window_hours": 0.5}, "window_hours=0.5 is shorter than min_window_hours=1"),
    ({"window_hours": 0}, "window_hours must be positive"),
    ({"end": "2026-03-02T22:30:00Z"}, "Set end to 2026-03-02T22:00:00"),
    ({"end": "2026-03-02T04:30:00Z"}, "Widen"),
    ({"start": None}, "a windows run needs start"),
    ({"start": "yesterday"}, "not an ISO-8601 time"),
    ({"window_hours": 0.001, "min_window_hours": 0.0001}, "more than 1000"),
])
def test_plan_says_what_to_change(change, message):
    with pytest.raises(InputError, match=message):
        plan_windows({**SPAN, **change})


def test_windows_run_publishes_one_verified_release_per_window_once(loaded_city, conn,
                                                                   fast_metrics):
    assert run_dag("generalization_windows", _conf(loaded_city)).endswith("success")
    ledger = _ledger(conn)
    assert [(start, end) for _, start, end, _ in ledger] == WINDOWS
    assert all(passed for *_, passed in ledger)
    assert len({name for name, *_ in ledger}) == 3
    assert schemas(conn, "work_") == [] and schemas(conn, "build_") == []
    # Again: every window is published, so every prepare short-circuits; nothing fails.
    assert run_dag("generalization_windows", _conf(loaded_city)).endswith("success")
    assert _ledger(conn) == ledger
    # The release DAG names the same window the same release: nothing new either.
    assert run_dag("generalization", _conf(loaded_city, start=WINDOWS[0][0],
                                           end=WINDOWS[0][1])).endswith("success")
    assert _ledger(conn) == ledger


def test_a_window_that_fails_fails_alone(loaded_city, conn, fast_metrics):
    """22:00 .. 04:00 holds nobody (the city's first fix is at 04:00): that instance fails,
    the run fails, and the next window (04:00 .. 10:00) is published all the same."""
    conf = _conf(loaded_city, start="2026-03-01T22:00:00Z", end=WINDOWS[0][1])
    with pytest.raises(InputError, match="holds no fix of dataset 'city', whose fixes run from"):
        run_dag("generalization_windows", conf)
    assert [(start, end) for _, start, end, _ in _ledger(conn)] == [WINDOWS[0]]


@pytest.mark.parametrize(("window_hours", "error", "message"), [
    # passes the param's schema, refused by plan_windows (the task's own error is raised)
    (0.5, InputError, "window_hours=0.5 is shorter than min_window_hours=1"),
    # refused by the param's schema when the run is created (Airflow's ParamValidationError)
    (0, ValueError, "Invalid input for param window_hours"),
])
def test_a_bad_window_length_fails_clearly_and_publishes_nothing(loaded_city, conn,
                                                                 window_hours, error, message):
    with pytest.raises(error, match=message):
        run_dag("generalization_windows", _conf(loaded_city, window_hours=window_hours))
    assert catalog_rows(conn) == []
    assert schemas(conn, "work_") == []


def _publish_at_once(specs: list[dict]) -> dict[str, bool | str]:
    """gate.publish of every verified spec, each in its own thread and connection, at once
    (as workers on several machines would): release name -> published, or the refusal."""
    outcome: dict[str, bool | str] = {}
    barrier = threading.Barrier(len(specs))

    def publish(spec: dict) -> None:
        release = ReleaseSpec.from_dict(spec)
        barrier.wait()
        try:
            with psycopg.connect(os.environ["DATABASE_URL"]) as connection:
                outcome[release.release_name] = gate.publish(connection, release)
        except InputError as error:
            outcome[release.release_name] = str(error)

    threads = [threading.Thread(target=publish, args=(spec,)) for spec in specs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcome


def test_parallel_publishes_take_adjacent_windows_and_never_two_overlapping(loaded_city, conn,
                                                                           fast_metrics):
    """Two adjacent windows of a plan and a window overlapping both, verified apart and
    published at once: the ledger lock lets the adjacent pair through together, or the
    overlapping one alone; never an overlapping pair."""
    windows = [*WINDOWS[:2], ("2026-03-02T07:00:00+00:00", "2026-03-02T13:00:00+00:00")]
    specs = [run_steps(release_params(loaded_city, start=start, end=end), run_id=f"w{i}",
                       until="verify") for i, (start, end) in enumerate(windows)]
    names = [ReleaseSpec.from_dict(spec).release_name for spec in specs]
    outcome = _publish_at_once(specs)
    published = sorted(name for name, result in outcome.items() if result is True)
    assert published in (sorted(names[:2]), [names[2]]), outcome
    assert all("overlaps" in str(result) for result in outcome.values() if result is not True)
    assert sorted(row[0] for row in catalog_rows(conn)) == published
