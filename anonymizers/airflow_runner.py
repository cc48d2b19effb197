"""Run a release DAG in this process with ``dag.test()``: the path tests and the CLI take.

Airflow needs ``AIRFLOW_HOME`` before it is first imported and an initialised metadata
database; both are set up here on first use (under the project's home unless the user
set AIRFLOW_HOME), readable by the user only: the home is made 0700 (an older one is
tightened), and Airflow runs under the umask 0077, here and in its ``db migrate``
(:mod:`anonymizers.private_files`). ``dag.test()`` returns a failed run rather than
raising, so the state is checked and the error of the task that failed is raised: ours as
it was raised (its message says what to do), any other in a ReleaseError naming that task.
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

from anonymizers.db.cluster import default_home, secure_home
from anonymizers.errors import AnonymizerError, ReleaseError
from anonymizers.private_files import (
    AIRFLOW_FILE_SETTINGS,
    PRIVATE_UMASK,
    make_private,
    private_umask,
)
from anonymizers.risks import CALLER_ENV, COMMAND_LINE
from anonymizers.schedules import DAG_PREFIX

__all__ = ["configure_airflow", "dags_folder", "run_dag"]

log = logging.getLogger(__name__)


def dags_folder() -> Path:
    if env := os.environ.get("ANONYMIZERS_DAGS_DIR"):
        return Path(env)
    return Path(__file__).resolve().parents[1] / "dags"


def configure_airflow() -> Path:
    """Set Airflow's environment (idempotent) and migrate its metadata DB once. The home
    (and the project's, if it lies there) is the user's only."""
    if "AIRFLOW_HOME" not in os.environ:
        secure_home(default_home())
    home = Path(os.environ.setdefault("AIRFLOW_HOME", str(default_home() / "airflow")))
    os.environ.setdefault("AIRFLOW__CORE__DAGS_FOLDER", str(dags_folder()))
    os.environ.setdefault("AIRFLOW__CORE__LOAD_EXAMPLES", "False")
    os.environ.setdefault("AIRFLOW__CORE__UNIT_TEST_MODE", "False")
    for name, value in AIRFLOW_FILE_SETTINGS.items():
        os.environ.setdefault(name, value)
    make_private(home)
    marker = home / ".migrated"
    if not marker.exists():
        result = subprocess.run([sys.executable, "-m", "airflow", "db", "migrate"],
                                capture_output=True, text=True, check=False,
                                umask=PRIVATE_UMASK)
        if result.returncode != 0:
            raise ReleaseError(f"`airflow db migrate` failed:\n{result.stderr[-2000:]}")
        marker.touch(mode=0o600)
    return home


def _task_errors_listener(errors: dict[str, BaseException | str | None]) -> Any:
    """An Airflow listener that puts the error of each task instance that fails into
    ``errors`` (task id -> error, the first failure of each task).

    Airflow 3.3's dag.test() runs each task in this process (InProcessTestSupervisor), and
    the task runner reports the task's exception only to its structlog logger "task",
    which writes to its own output and never passes through the standard library's
    logging: the handler on the root logger that was here saw nothing, and the user got
    "...: None". The exception does reach the listeners' on_task_instance_failed
    (task_runner.finalize), the hook Airflow documents for this.
    """
    from airflow.listeners import hookimpl

    class TaskErrors:
        @hookimpl
        def on_task_instance_failed(self, previous_state: Any, task_instance: Any,
                                    error: BaseException | str | None) -> None:
            errors.setdefault(task_instance.task_id, error)

    return TaskErrors()


def _load_dag(dag_id: str) -> Any:
    """The DAG ``dag_id`` from its file: ``<dag_id>.py``, the file of its family, which
    holds both the family's DAGs (``<family>`` and ``<family>_windows``), or, for a declared
    schedule's ``scheduled_<name>``, ``scheduled.py``."""
    path = dags_folder() / f"{dag_id}.py"
    if dag_id.startswith(DAG_PREFIX):
        path = dags_folder() / "scheduled.py"
    elif not path.exists():
        path = dags_folder() / f"{dag_id.removesuffix('_windows')}.py"
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


def run_dag(dag_id: str, conf: dict[str, Any], log_file: Path | None = None,
            command_line: bool = True) -> str:
    """Run ``dag_id`` once with ``conf``; returns the run's final state or raises.
    Whatever Airflow writes meanwhile (airflow.cfg, airflow.db, logs) is the user's only.
    ``command_line``: the ``anonymizers`` command runs it, so a refusal names the
    command's flags (risks.CALLER_ENV); else it names the DAG params, as under Airflow."""
    home = configure_airflow()
    with private_umask(), _caller(COMMAND_LINE if command_line else None):
        return _run_dag(home, dag_id, conf, log_file)


@contextmanager
def _caller(caller: str | None) -> Iterator[None]:
    """``CALLER_ENV`` set (or unset) for the run: dag.test() runs the tasks in this process."""
    saved = os.environ.pop(CALLER_ENV, None)
    if caller is not None:
        os.environ[CALLER_ENV] = caller
    try:
        yield
    finally:
        os.environ.pop(CALLER_ENV, None)
        if saved is not None:
            os.environ[CALLER_ENV] = saved


def _run_dag(home: Path, dag_id: str, conf: dict[str, Any], log_file: Path | None) -> str:
    dag = _load_dag(dag_id)
    from airflow.sdk.listener import get_listener_manager

    errors: dict[str, BaseException | str | None] = {}
    listener = _task_errors_listener(errors)
    listeners = get_listener_manager()
    listeners.add_listener(listener)
    try:
        with _airflow_output_to(log_file or home / "logs" / f"{dag_id}-test-runs.log"):
            run = dag.test(run_conf=conf)
    finally:
        listeners.pm.unregister(listener)
    state = str(getattr(run, "state", "unknown"))
    if not state.endswith("success"):
        _raise_task_error(dag_id, state, run, errors)
    return state


def _raise_task_error(dag_id: str, state: str, run: Any,
                      errors: dict[str, BaseException | str | None]) -> None:
    """Our error of a failed task as it was raised, else a ReleaseError naming the tasks
    that failed (state exactly failed: an upstream_failed task did not run) and why."""
    failed = sorted(ti.task_id for ti in run.get_task_instances() if str(ti.state) == "failed")
    for task in failed:
        if (ours := _our_error(errors.get(task))) is not None:
            raise ours
    said = "; ".join(f"{task}: {_describe(errors.get(task))}" for task in failed)
    raise ReleaseError(f"DAG {dag_id} run ended {state}; failed task(s): {said or 'none'}")


def _our_error(error: BaseException | str | None) -> AnonymizerError | None:
    """``error`` or what caused it, if one of ours (the DAG's tasks fail ours for good by
    raising AirflowFailException from it: pipeline.dag_factory)."""
    while isinstance(error, BaseException):
        if isinstance(error, AnonymizerError):
            return error
        error = error.__cause__
    return None


def _describe(error: BaseException | str | None) -> str:
    if error is None:
        return "no error reported"
    return f"{type(error).__name__}: {error}" if isinstance(error, BaseException) else error
