"""Run a release DAG in this process with ``dag.test()``: the path tests and the CLI take.

Airflow needs ``AIRFLOW_HOME`` before it is first imported and an initialised metadata
database; both are set up here on first use (under the project's home unless the user
set AIRFLOW_HOME). ``dag.test()`` returns a failed run rather than raising, so the
state is checked and the first error of a failed task is reported.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from anonymizers.db.cluster import default_home
from anonymizers.errors import AnonymizerError, ReleaseError

__all__ = ["configure_airflow", "dags_folder", "run_dag"]

log = logging.getLogger(__name__)


def dags_folder() -> Path:
    if env := os.environ.get("ANONYMIZERS_DAGS_DIR"):
        return Path(env)
    return Path(__file__).resolve().parents[1] / "dags"


def configure_airflow() -> Path:
    """Set Airflow's environment (idempotent) and migrate its metadata DB once."""
    home = Path(os.environ.setdefault("AIRFLOW_HOME", str(default_home() / "airflow")))
    os.environ.setdefault("AIRFLOW__CORE__DAGS_FOLDER", str(dags_folder()))
    os.environ.setdefault("AIRFLOW__CORE__LOAD_EXAMPLES", "False")
    os.environ.setdefault("AIRFLOW__CORE__UNIT_TEST_MODE", "False")
    home.mkdir(parents=True, exist_ok=True)
    marker = home / ".migrated"
    if not marker.exists():
        result = subprocess.run([sys.executable, "-m", "airflow", "db", "migrate"],
                                capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise ReleaseError(f"`airflow db migrate` failed:\n{result.stderr[-2000:]}")
        marker.touch()
    return home


class _FirstError(logging.Handler):
    """Remembers the first of our own errors raised inside a task."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.error: BaseException | None = None

    def emit(self, record: logging.LogRecord) -> None:
        if self.error is None and record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            self.error = error if isinstance(error, AnonymizerError) else self.error or error


def _load_dag(dag_id: str) -> Any:
    path = dags_folder() / f"{dag_id}.py"
    spec = importlib.util.spec_from_file_location(f"anonymizers_dag_{dag_id}", path)
    if spec is None or spec.loader is None:
        raise ReleaseError(f"no DAG file {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for value in vars(module).values():
        if getattr(value, "dag_id", None) == dag_id and hasattr(value, "test"):
            return value
    raise ReleaseError(f"{path} defines no DAG {dag_id!r}")


@contextmanager
def _airflow_output_to(log_file: Path) -> Iterator[None]:
    """Airflow's task logs go to ``log_file``; our step progress still reaches the terminal.

    Airflow's structlog holds the process's stdout itself, so the redirect is done on
    file descriptors 1 and 2, not on sys.stdout.
    """
    log_file.parent.mkdir(parents=True, exist_ok=True)
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    terminal = os.fdopen(os.dup(2), "w", buffering=1)
    progress = logging.StreamHandler(terminal)
    progress.setFormatter(logging.Formatter("  %(message)s"))
    steps_logger = logging.getLogger("anonymizers.pipeline")
    steps_logger.addHandler(progress)
    steps_logger.setLevel(logging.INFO)
    with log_file.open("a") as sink:
        os.dup2(sink.fileno(), 1)
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            steps_logger.removeHandler(progress)
            terminal.close()
            for fd in saved:
                os.close(fd)


def run_dag(dag_id: str, conf: dict[str, Any], log_file: Path | None = None) -> str:
    """Run ``dag_id`` once with ``conf``; returns the run's final state or raises."""
    home = configure_airflow()
    dag = _load_dag(dag_id)
    catcher = _FirstError()
    # The root logger's handlers may be replaced while a task runs (Airflow configures its
    # logging); the package's own logger keeps the catcher (the tasks log our errors there).
    watched = [logging.getLogger(), logging.getLogger("anonymizers")]
    for logger in watched:
        logger.addHandler(catcher)
    try:
        with _airflow_output_to(log_file or home / "logs" / f"{dag_id}-test-runs.log"):
            run = dag.test(run_conf=conf)
    finally:
        for logger in watched:
            logger.removeHandler(catcher)
    state = str(getattr(run, "state", "unknown"))
    if not state.endswith("success"):
        failed = [ti.task_id for ti in run.get_task_instances() if str(ti.state).endswith("failed")]
        if isinstance(catcher.error, AnonymizerError):
            raise catcher.error
        raise ReleaseError(f"DAG {dag_id} run ended {state}; failed task(s): "
                           f"{', '.join(failed) or 'none'}: {catcher.error}")
    return state
