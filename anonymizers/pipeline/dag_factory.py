"""Build the Airflow DAGs of a method family from the registry: `dag = release_dag("mob")`,
`dag = windows_dag("mob")`.

A release is ``prepare`` -> the family's steps in the registry's order -> ``manifest`` ->
``metrics`` -> ``verify`` -> ``publish`` -> ``cleanup``. A step the chosen method does not
run is skipped (the tasks after it still run: trigger rule ``none_failed``); an already
published release short-circuits everything after ``prepare``. Params come from the
registry's ParamSpecs (the same ones that validate a release and write the CLI's help).

``release_dag`` runs one release per DAG run. ``windows_dag`` (dag_id ``<family>_windows``)
cuts the params' [start, end) into windows of ``window_hours`` (task ``plan_windows``) and
runs the same tasks once per window, as a mapped task group (``window``): the instances
are independent (own work and build schemas, own release), so an executor with several
workers runs them in parallel; publish serialises only the ledger check, per dataset.

Scheduling: the family DAGs are manual (schedule None: unpausing one creates no run).
Each scheduled release is declared in the schedules file (:mod:`anonymizers.schedules`)
and becomes a DAG of its own, ``scheduled_<name>`` (``scheduled_dags``), built by
``release_dag`` with the declaration: its cron or preset as a ``CronDataIntervalTimetable``
(Airflow 3 turns a cron string into a trigger timetable whose data interval is one
instant; a release needs the interval), its start and end dates, and its dataset, method,
k, parameters and accepted risks as the params' defaults. Read when the DAG file is
parsed, so in the environment of the DAG processor: ``ANONYMIZERS_SCHEDULES``,
``ANONYMIZERS_START_DATE`` (the first data interval a family DAG's backfill may ask for,
default 2000-01-01), ``ANONYMIZERS_TASK_RETRIES`` and ``ANONYMIZERS_RETRY_DELAY_SECONDS``
(see _default_args), ``ANONYMIZERS_POOL`` (an Airflow pool every task runs in: caps
concurrent steps on a cluster).

The run names its release: ``publish`` pushes the release's name as the XCom ``release``
(the run page's XCom tab). Airflow 3.3 lets a task read its DAG run's note, not write it
(the Task Execution API's DagRun is read-only; the note is set by the public REST API,
with a user's token, which a task does not hold).

Cheap to import (Airflow's SDK and the registry only): the DAG processor parses it; the
package's heavy modules are imported inside the tasks.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

from airflow.sdk import (
    DAG,
    CronDataIntervalTimetable,
    Param,
    chain,
    dag,
    get_current_context,
    task,
    task_group,
)

from anonymizers.families.registry import (
    FAMILIES,
    MACHINERY_PARAMS,
    METHODS,
    RUN_PARAMS,
    SHARED_STEPS_AFTER,
    WINDOWS_PARAMS,
    family_params,
)
from anonymizers.parameters import ParamSpec
from anonymizers.schedules import Schedule, load_schedules

__all__ = ["dag_params", "release_dag", "scheduled_dags", "scheduled_interval", "windows_dag",
           "windows_params"]

START_DATE_ENV = "ANONYMIZERS_START_DATE"
DEFAULT_START_DATE = "2000-01-01"
RETRIES_ENV = "ANONYMIZERS_TASK_RETRIES"
RETRY_DELAY_ENV = "ANONYMIZERS_RETRY_DELAY_SECONDS"
POOL_ENV = "ANONYMIZERS_POOL"

log = logging.getLogger(__name__)


def _param(spec: ParamSpec, described: str | None = None) -> Param:
    schema = spec.json_schema()
    if described:
        schema["description"] = described
    return Param(spec.default, **schema)


def dag_params(family: str, defaults: dict[str, Any] | None = None) -> dict[str, Param]:
    """Every param of the family's DAG: the run's, the methods' and the machinery's, with
    ``defaults`` (a declared schedule's: what its runs release) instead of the specs'."""
    methods = [m for m in METHODS.values() if m.family == family]
    params = {spec.name: _param(spec) for spec in RUN_PARAMS}
    params["method"] = Param(methods[0].name, enum=[m.name for m in methods],
                             description="; ".join(f"{m.name}: {m.variant}" for m in methods))
    params["k_counts"] = Param("persons", enum=["persons"],
                               description="What k counts: distinct persons, always")
    for spec in family_params(family):
        users = [m.name for m in methods if spec in m.params]
        prefix = "" if len(users) == len(methods) else f"{', '.join(users)}: "
        params[spec.name] = _param(spec, prefix + spec.help)
    params.update((spec.name, _param(spec)) for spec in MACHINERY_PARAMS)
    for name, value in (defaults or {}).items():
        params[name] = Param(value, **params[name].schema)
    return params


def scheduled_interval(context: Any) -> tuple[Any, Any] | None:
    """The data interval of a scheduled or backfill run; None for a manual run (its window
    comes from the params or is the whole dataset). Read from Airflow's own run-type enum."""
    from airflow.utils.types import DagRunType

    run_type = DagRunType(context["dag_run"].run_type)
    if run_type in (DagRunType.SCHEDULED, DagRunType.BACKFILL_JOB):
        return context["data_interval_start"], context["data_interval_end"]
    return None


@contextmanager
def _no_retry_of_our_errors() -> Iterator[None]:
    """A user mistake or a privacy violation fails the task for good (a retry would end the
    same); anything else (a lost connection, a killed worker, a bug) is retried, as many
    times as ``ANONYMIZERS_TASK_RETRIES`` says: every step is one transaction, safe to re-run.
    The original error is the cause of Airflow's."""
    from anonymizers.errors import InputError, PrivacyViolation, ReleaseError

    try:
        yield
    except (InputError, PrivacyViolation, ReleaseError) as error:
        from airflow.sdk.exceptions import AirflowFailException

        # In the task log with its traceback (run_dag reads the error itself, from the
        # failed task instance: airflow_runner).
        log.error("%s: %s", type(error).__name__, error, exc_info=error)
        raise AirflowFailException(f"{type(error).__name__}: {error}") from error


def _default_args() -> dict[str, Any]:
    """Retries of a failed task: none by default (``dag.test()``: a failure is reported at
    once); ``anonymizers airflow up`` sets ``ANONYMIZERS_TASK_RETRIES`` for the scheduler.
    ``ANONYMIZERS_POOL``: the Airflow pool of every task (create it first, ``airflow pools
    set``), so that the pool's slots bound the steps running at once on all workers."""
    args: dict[str, Any] = {
        "retries": int(os.environ.get(RETRIES_ENV) or 0),
        "retry_delay": timedelta(seconds=float(os.environ.get(RETRY_DELAY_ENV) or 30))}
    if pool := os.environ.get(POOL_ENV, "").strip():
        args["pool"] = pool
    return args


def _prepare_task(window_hours: float | None = None) -> Any:
    """``prepare``: the window is the mapped ``window`` ([start, end), ISO) of a windows run,
    else the params' start/end, the scheduled data interval (or its last ``window_hours``,
    a declared fixed length) or the whole dataset."""
    @task.short_circuit(task_id="prepare", show_return_value_in_logs=False)
    def prepare(window: list[str] | None = None) -> dict[str, Any] | None:
        from anonymizers.pipeline import steps

        context = get_current_context()
        params, interval = dict(context["params"]), scheduled_interval(context)
        if window is not None:
            params.update(start=window[0], end=window[1])
            interval = None
        if interval is not None and window_hours is not None:
            interval = (interval[1] - timedelta(hours=window_hours), interval[1])
        with _no_retry_of_our_errors():
            return steps.prepare(params, interval, context["dag_run"].run_id)

    return prepare


def _plan_task() -> Any:
    @task(task_id="plan_windows")
    def plan_windows() -> list[list[str]]:
        """The windows of this run: a short list of [start, end) ISO pairs (XCom)."""
        from anonymizers.release.windows import plan_windows as plan

        with _no_retry_of_our_errors():
            return [list(window) for window in plan(dict(get_current_context()["params"]))]

    return plan_windows


def _release_tasks(family: str, spec: Any) -> None:
    """The family's steps, then the shared ones, in order, each given prepare's spec.
    ``publish`` also pushes the release's name (XCom ``release``): the run page shows it."""
    tasks = [_step_task(name, family_step=True)(spec) for name in FAMILIES[family].steps]
    tasks += [_step_task(name, family_step=False)(spec) for name in SHARED_STEPS_AFTER]
    chain(*tasks)


def _step_task(name: str, family_step: bool) -> Any:
    # The spec travels by XCom; the task log need not repeat it after every step.
    @task(task_id=name, trigger_rule="none_failed", show_return_value_in_logs=False)
    def run(spec: dict[str, Any] | None) -> Any:
        from airflow.sdk.exceptions import AirflowSkipException

        from anonymizers.pipeline import steps

        if spec is None:
            # prepare found the release published. Its short-circuit skips this task in the
            # release DAG, but not inside a mapped task group: Airflow 3.3's
            # NotPreviouslySkippedDep reads the skip record at map index -1 when the parent
            # is mapped only through its group. So every step checks for itself.
            raise AirflowSkipException("the release is already published")
        if family_step and name not in METHODS[spec["method"]].steps:
            raise AirflowSkipException(f"{spec['method']} has no step {name}")
        with _no_retry_of_our_errors():
            steps.run_step(name, spec)
        if name == "publish":
            from anonymizers.release.spec import ReleaseSpec

            released = ReleaseSpec.from_dict(spec).release_name
            get_current_context()["ti"].xcom_push(key="release", value=released)
        return spec

    return run


def _start_date() -> datetime:
    """``ANONYMIZERS_START_DATE`` (ISO-8601, UTC when naive), default 2000-01-01: the start
    date of the manual DAGs (a declared schedule has its own)."""
    start = datetime.fromisoformat(os.environ.get(START_DATE_ENV) or DEFAULT_START_DATE)
    return start if start.tzinfo else start.replace(tzinfo=UTC)


def release_dag(family: str, declared: Schedule | None = None) -> DAG:
    """The release DAG of ``family`` (its dag_id is the family's name), manual runs only;
    with ``declared``, the DAG of that scheduled release (``scheduled_<name>``): the same
    tasks, on the declared schedule, its params' defaults the declaration's."""
    entry = FAMILIES[family]
    settings: dict[str, Any] = {"dag_id": family, "schedule": None,
                                "start_date": _start_date(), "catchup": False,
                                "doc_md": _doc(family), "params": dag_params(family)}
    if declared is not None:
        settings = {"dag_id": declared.dag_id, "start_date": declared.start_date,
                    "end_date": declared.end_date, "catchup": declared.catchup,
                    "schedule": CronDataIntervalTimetable(declared.schedule, timezone="UTC"),
                    "doc_md": _scheduled_doc(declared) + "\n\n" + _doc(family),
                    "params": dag_params(family, declared.conf())}

    @dag(**settings, max_active_runs=4, tags=["anonymizers", *entry.tags,
                                              *(["scheduled"] if declared else [])],
         default_args=_default_args())
    def release() -> None:
        window_hours = declared.window_hours if declared else None
        _release_tasks(family, _prepare_task(window_hours)())

    return release()


def scheduled_dags() -> dict[str, DAG]:
    """``{dag_id: DAG}`` of every schedule declared in the schedules file (none without
    one). A wrong file fails the import of the DAG file, with the message naming the entry
    and key (``anonymizers airflow up`` refuses it before starting anything)."""
    return {declared.dag_id: release_dag(declared.family, declared)
            for declared in load_schedules()}


def _scheduled_doc(declared: Schedule) -> str:
    return (f"### Scheduled release `{declared.name}`\n\nDeclared in the schedules file "
            f"(`anonymizers airflow schedules` lists them): {declared.describe()}. The "
            "release each run published is the XCom `release` of its `publish` task.")


def windows_params(family: str) -> dict[str, Param]:
    """The family's params, with start and end required, and ``window_hours``."""
    params = dag_params(family)
    for name in ("start", "end"):
        params[name] = Param(type="string", minLength=1, description=(
            "Start of the first window, ISO-8601 (e.g. 2026-03-02T00:00:00Z)" if name == "start"
            else "End of the last window, exclusive, ISO-8601"))
    params.update((spec.name, _param(spec)) for spec in WINDOWS_PARAMS)
    return params


def windows_dag(family: str) -> DAG:
    """The windows DAG of ``family`` (dag_id ``<family>_windows``): one release per window
    of [start, end), each a mapped instance of the task group ``window``. Manual runs only
    (``airflow dags trigger``, the UI or ``dag.test()``); scheduled single windows and
    backfills are the declared schedules' DAGs (``scheduled_<name>``)."""
    entry = FAMILIES[family]

    @dag(dag_id=f"{family}_windows", schedule=None, start_date=_start_date(), catchup=False,
         max_active_runs=4, doc_md=_windows_doc(family),
         tags=["anonymizers", "windows", *entry.tags], params=windows_params(family),
         default_args=_default_args())
    def windows() -> None:
        @task_group(group_id="window")
        def one_window(window: list[str]) -> None:
            _release_tasks(family, _prepare_task()(window))

        one_window.expand(window=_plan_task()())

    return windows()


def _doc(family: str) -> str:
    """The DAG's UI documentation: the family, its methods and steps, the privacy model."""
    entry = FAMILIES[family]
    methods = "\n".join(f"* `{m.name}`: {m.variant}; steps {' -> '.join(m.steps)}"
                        for m in METHODS.values() if m.family == family)
    return (f"### {entry.title}\n\nOne run publishes one release of one dataset with one "
            f"method over one time window:\n\n`prepare` -> {' -> '.join(entry.steps)} -> "
            f"{' -> '.join(SHARED_STEPS_AFTER)}. A step the method does not run is skipped; "
            "`verify` is the gate (an independent verifier on the tables exactly as they will "
            f"be published).\n\n{methods}\n\n**Privacy model.** {entry.privacy_model}\n\n"
            "Manual runs only: runs take `start`/`end` params, or the whole dataset. A "
            "scheduled release is declared in the schedules file and runs as a DAG "
            "`scheduled_<name>` with these tasks, each run releasing its data interval. "
            "The database comes from `DATABASE_URL` (or the "
            "embedded cluster). Built by `anonymizers.pipeline.dag_factory` from the registry. "
            f"The DAG `{family}_windows` runs the same tasks once per window of a longer span.")


def _windows_doc(family: str) -> str:
    return (f"### {FAMILIES[family].title}: one release per window\n\n`plan_windows` cuts "
            "[`start`, `end`) into consecutive windows of `window_hours` (the last may be "
            "shorter, never below `min_window_hours`); then the task group `window` runs once "
            f"per window (mapped): `prepare` -> {' -> '.join(FAMILIES[family].steps)} -> "
            f"{' -> '.join(SHARED_STEPS_AFTER)}, exactly as the DAG `{family}` does for one "
            "window. The instances are independent (own schemas, own release) and run in "
            "parallel on as many workers as the executor has; `publish` checks the ledger "
            "under a lock per dataset. A window already published does nothing.")
