"""Build the Airflow DAG of a method family from the registry: `dag = release_dag("mob")`.

The DAG is ``prepare`` -> the family's steps in the registry's order -> ``manifest`` ->
``metrics`` -> ``verify`` -> ``publish`` -> ``cleanup``. A step the chosen method does not
run is skipped (the tasks after it still run: trigger rule ``none_failed``); an already
published release short-circuits everything after ``prepare``. Params come from the
registry's ParamSpecs (the same ones that validate a release and write the CLI's help).

Scheduling (read when the DAG file is parsed, so set in the environment of the DAG
processor): ``ANONYMIZERS_SCHEDULE`` (a cron expression or preset, default ``@daily``;
``none`` for manual runs only), ``ANONYMIZERS_START_DATE`` (the first data interval a
backfill may ask for, default 2000-01-01) and ``ANONYMIZERS_<FAMILY>_PARAMS`` (a JSON object
of param defaults, e.g. ``{"dataset": "city", "k": 3}``: what a scheduled run releases),
``ANONYMIZERS_TASK_RETRIES`` and ``ANONYMIZERS_RETRY_DELAY_SECONDS`` (see _default_args).
Airflow 3 turns a cron string into a trigger timetable whose data interval is one instant;
a release needs the interval, so the schedule is a ``CronDataIntervalTimetable``.

Cheap to import (Airflow's SDK and the registry only): the DAG processor parses it; the
package's heavy modules are imported inside the tasks.
"""

from __future__ import annotations

import json
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
)

from anonymizers.families.registry import (
    FAMILIES,
    MACHINERY_PARAMS,
    METHODS,
    RUN_PARAMS,
    SHARED_STEPS_AFTER,
    family_params,
)
from anonymizers.release.params import ParamSpec

__all__ = ["dag_params", "param_defaults", "release_dag", "release_schedule",
           "scheduled_interval"]

SCHEDULE_ENV = "ANONYMIZERS_SCHEDULE"
START_DATE_ENV = "ANONYMIZERS_START_DATE"
DEFAULT_START_DATE = "2000-01-01"
RETRIES_ENV = "ANONYMIZERS_TASK_RETRIES"
RETRY_DELAY_ENV = "ANONYMIZERS_RETRY_DELAY_SECONDS"


def _param(spec: ParamSpec, described: str | None = None) -> Param:
    schema = spec.json_schema()
    if described:
        schema["description"] = described
    return Param(spec.default, **schema)


def dag_params(family: str) -> dict[str, Param]:
    """Every param of the family's DAG: the run's, the methods' and the machinery's."""
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
    for name, value in param_defaults(family).items():
        params[name] = Param(value, **params[name].schema)
    return params


def param_defaults(family: str) -> dict[str, Any]:
    """``ANONYMIZERS_<FAMILY>_PARAMS``: a JSON object of param defaults for this DAG (what a
    scheduled run, which has no conf, releases). An unknown name fails the DAG's import."""
    variable = f"ANONYMIZERS_{family.upper()}_PARAMS"
    text = os.environ.get(variable, "").strip()
    if not text:
        return {}
    given = json.loads(text)
    if not isinstance(given, dict):
        raise ValueError(f"{variable} must be a JSON object, e.g. {{\"dataset\": \"city\"}}")
    known = {spec.name for spec in (*RUN_PARAMS, *family_params(family), *MACHINERY_PARAMS)}
    if unknown := sorted(set(given) - known - {"method", "k_counts"}):
        raise ValueError(f"{variable} names unknown params {unknown}; known: {sorted(known)}")
    return given


def release_schedule() -> CronDataIntervalTimetable | None:
    """``ANONYMIZERS_SCHEDULE`` (default ``@daily``) as a timetable with data intervals, in
    UTC: run N releases [N's start, N's end). ``none`` (or empty): manual runs only."""
    cron = os.environ.get(SCHEDULE_ENV, "@daily").strip()
    if cron.lower() in ("", "none"):
        return None
    return CronDataIntervalTimetable(cron, timezone="UTC")


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

        raise AirflowFailException(f"{type(error).__name__}: {error}") from error


def _default_args() -> dict[str, Any]:
    """Retries of a failed task: none by default (``dag.test()``: a failure is reported at
    once); ``anonymizers airflow up`` sets ``ANONYMIZERS_TASK_RETRIES`` for the scheduler."""
    return {"retries": int(os.environ.get(RETRIES_ENV) or 0),
            "retry_delay": timedelta(seconds=float(os.environ.get(RETRY_DELAY_ENV) or 30))}


def _prepare_task() -> Any:
    @task.short_circuit(task_id="prepare")
    def prepare() -> dict[str, Any] | None:
        from anonymizers.pipeline import steps

        context = get_current_context()
        with _no_retry_of_our_errors():
            return steps.prepare(dict(context["params"]), scheduled_interval(context),
                                 context["dag_run"].run_id)

    return prepare


def _step_task(name: str, family_step: bool) -> Any:
    @task(task_id=name, trigger_rule="none_failed")
    def run(spec: dict[str, Any]) -> Any:
        from anonymizers.pipeline import steps

        if family_step and name not in METHODS[spec["method"]].steps:
            from airflow.sdk.exceptions import AirflowSkipException

            raise AirflowSkipException(f"{spec['method']} has no step {name}")
        with _no_retry_of_our_errors():
            steps.run_step(name, spec)
        return spec

    return run


def _start_date() -> datetime:
    """``ANONYMIZERS_START_DATE`` (ISO-8601, UTC when naive), default 2000-01-01: early,
    so that a backfill over old data is possible; ``catchup=False`` keeps the scheduler
    from creating a run for every day since."""
    start = datetime.fromisoformat(os.environ.get(START_DATE_ENV) or DEFAULT_START_DATE)
    return start if start.tzinfo else start.replace(tzinfo=UTC)


def release_dag(family: str) -> DAG:
    """The release DAG of ``family`` (its dag_id is the family's name)."""
    entry = FAMILIES[family]

    @dag(dag_id=family, schedule=release_schedule(), start_date=_start_date(), catchup=False,
         max_active_runs=4, doc_md=_doc(family), tags=["anonymizers", *entry.tags],
         params=dag_params(family), default_args=_default_args())
    def release() -> None:
        spec = _prepare_task()()
        tasks = [_step_task(name, family_step=True)(spec) for name in entry.steps]
        tasks += [_step_task(name, family_step=False)(spec) for name in SHARED_STEPS_AFTER]
        chain(*tasks)

    return release()


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
            "Scheduled runs release the run's data interval; manual runs take `start`/`end` "
            "params, or the whole dataset. The database comes from `DATABASE_URL` (or the "
            "embedded cluster). Built by `anonymizers.pipeline.dag_factory` from the registry.")
