"""DAG files: import cleanly, stay wiring-only, and run end to end with dag.test()."""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

import pytest
from pipeline_helpers import STEP_ORDER, catalog_rows

from anonymizers import cli
from anonymizers.airflow_runner import configure_airflow, dags_folder
from anonymizers.errors import ReleaseError
from anonymizers.pipeline import steps

DAG_FILES = sorted(dags_folder().glob("*.py"))
HEAVY_MODULES = {"anonymizers", "psycopg", "numpy", "pandas", "geopandas", "sklearn", "scipy"}


@pytest.fixture(scope="module")
def dagbag():
    configure_airflow()
    from airflow.dag_processing.dagbag import DagBag

    return DagBag(dag_folder=str(dags_folder()))


def test_every_dag_file_imports_without_errors(dagbag):
    assert dagbag.import_errors == {}
    assert "generalization" in dagbag.dag_ids


def test_generalization_dag_runs_the_steps_in_order(dagbag):
    dag = dagbag.get_dag("generalization")
    order = ["prepare", *STEP_ORDER]
    for upstream, downstream in itertools.pairwise(order):
        assert downstream in dag.get_task(upstream).downstream_task_ids
    assert dag.params["k"] == 5 and dag.params["k_counts"] == "persons"
    assert dag.doc_md and "verify" in dag.doc_md


@pytest.mark.parametrize("path", DAG_FILES, ids=lambda p: p.name)
def test_dag_files_import_nothing_heavy_at_parse_time(path: Path):
    """Module-level imports only: heavy or database modules are imported inside tasks."""
    tree = ast.parse(path.read_text())
    for node in tree.body:
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        for name in names:
            assert name.split(".")[0] not in HEAVY_MODULES, f"{path.name} imports {name}"


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
    with pytest.raises(ReleaseError, match="build_release"):
        run_dag("generalization", conf)
    assert catalog_rows(conn) == []
