"""DAG files: import cleanly, stay wiring-only, and run end to end with dag.test()."""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

import pytest
from pipeline_helpers import catalog_rows

from anonymizers import cli
from anonymizers.airflow_runner import configure_airflow, dags_folder
from anonymizers.errors import ReleaseError
from anonymizers.families.registry import FAMILIES, SHARED_STEPS_AFTER, family_params
from anonymizers.pipeline import steps

DAG_FILES = sorted(dags_folder().glob("*.py"))
HEAVY_MODULES = {"psycopg", "numpy", "pandas", "geopandas", "sklearn", "scipy", "shapely"}


@pytest.fixture(scope="module")
def dagbag():
    configure_airflow()
    from airflow.dag_processing.dagbag import DagBag

    return DagBag(dag_folder=str(dags_folder()))


def test_every_dag_file_imports_without_errors(dagbag):
    assert dagbag.import_errors == {}
    assert "generalization" in dagbag.dag_ids


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_family_dag_runs_its_steps_in_the_registry_order(dagbag, family):
    dag = dagbag.get_dag(family)
    order = ["prepare", *FAMILIES[family].steps, *SHARED_STEPS_AFTER]
    for upstream, downstream in itertools.pairwise(order):
        assert downstream in dag.get_task(upstream).downstream_task_ids
    assert set(dag.task_ids) == set(order)
    assert dag.params["k"] == 5 and dag.params["k_counts"] == "persons"
    assert dag.doc_md and "verify" in dag.doc_md


def test_the_cleanup_dag_runs_the_commands_cleanup_daily(dagbag):
    """The maintenance DAG: one task, daily, with the command's options as params."""
    dag = dagbag.get_dag("anonymizers_cleanup")
    assert dag.task_ids == ["drop_expired_scratch"]
    assert dag.timetable.expression == "0 0 * * *"  # @daily
    assert {name: dag.params[name] for name in ("older_than", "orphans", "dry_run")} == {
        "older_than": "7d", "orphans": False, "dry_run": False}
    assert dag.doc_md and "anonymizers cleanup" in dag.doc_md


def test_dag_params_come_from_the_registry_param_specs(dagbag):
    """One place: every method parameter's default and range in the DAG is its ParamSpec's."""
    dag = dagbag.get_dag("generalization")
    for spec in family_params("generalization"):
        param = dag.params.get_param(spec.name)
        assert param.value == spec.default
        assert param.schema.get("minimum", param.schema.get("exclusiveMinimum")) == spec.minimum
    assert dag.params.get_param("method").schema["enum"] == ["grid_kam_cut", "kam_cut", "kam_rec"]


@pytest.mark.parametrize("path", DAG_FILES, ids=lambda p: p.name)
def test_dag_files_are_wiring_only_and_import_nothing_heavy(path: Path):
    """A DAG file is a few lines; parsing it imports no database, numpy or family code (a
    family's package and its declaration are plain data: the registry reads them)."""
    assert len(path.read_text().splitlines()) <= 12
    probe = ("import runpy, sys; runpy.run_path(sys.argv[1]); "
             f"print(sorted(m for m in sys.modules if m.split('.')[0] in {sorted(HEAVY_MODULES)!r}"
             " or m.startswith('anonymizers.families.') and m.count('.') > 2 "
             "and not m.endswith('.declaration')))")
    found = subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True,
                           text=True, check=True)
    assert found.stdout.strip().splitlines()[-1] == "[]", found.stdout


def test_release_command_runs_the_dag_end_to_end(loaded_city, conn, capsys):
    code = cli.main(["release", "--dataset", loaded_city, "--method", "grid_kam_cut", "--k", "3",
                     "--param", "cell_size=500"])
    out = capsys.readouterr().out.strip().splitlines()
    assert code == 0
    name = out[-1]
    assert name.startswith("release_city_grid_kam_cut_")
    assert catalog_rows(conn) == [(name,)]
    assert cli.main(["verify", name]) == 0
    # Same release again: the DAG runs, finds it published, changes nothing.
    assert cli.main(["release", "--dataset", loaded_city, "--method", "grid_kam_cut",
                     "--k", "3", "--param", "cell_size=500"]) == 0
    assert catalog_rows(conn) == [(name,)]


def test_a_failing_task_fails_the_dag_run_and_publishes_nothing(loaded_city, conn,
                                                               monkeypatch):
    from anonymizers.airflow_runner import run_dag

    monkeypatch.setenv(steps.FAULT_ENV, "build_release")
    conf = {"dataset": loaded_city, "method": "grid_kam_cut", "k": 3, "cell_size": 500.0}
    with pytest.raises(ReleaseError, match=r"failed task\(s\): build_release: InjectedFault: "
                       "fault injected") as raised:
        run_dag("generalization", conf)
    # upstream_failed (they did not run), or ran and did not fail
    assert "metrics" not in str(raised.value) and "cleanup" not in str(raised.value)
    assert catalog_rows(conn) == []


def test_our_own_error_in_a_task_reaches_the_user_as_raised(db_url, small_city, conn,
                                                            capsys):
    """A dataset without places, released by the groups family with places=dataset: the
    task's InputError, which says what to do, is what the user gets; not 'DAG groups run
    ended failed ...: None'."""
    from anonymizers.loading import load_dataset

    load_dataset(small_city[0], "plain", url=db_url)  # no places file
    argv = ["release", "--dataset", "plain", "--method", "tg_overlapping", "--k", "3",
            "--param", "places=dataset"]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "error: dataset 'plain' has no places" in err, err
    assert "--param places=grid" in err and "DAG groups run" not in err
    assert catalog_rows(conn) == []
