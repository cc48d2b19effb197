"""Build the maintenance DAG ``anonymizers_cleanup``: `dag = cleanup_dag()`.

One task, ``drop_expired_scratch``, runs what ``anonymizers cleanup`` runs
(:func:`anonymizers.release.scratch.cleanup_scratch`): the work and build schemas of runs
that failed or were abandoned longer ago than ``older_than`` go, whatever their release.
Every release run already does the same at its start; this DAG covers an installation
whose releases stop (nothing starts to clean up) and takes the orphans when asked.

Scheduling (read when the DAG file is parsed): ``ANONYMIZERS_CLEANUP_SCHEDULE`` (a cron
expression or preset, default ``@daily``; ``none`` for manual runs only) and
``ANONYMIZERS_SCRATCH_RETENTION`` (the default of ``older_than``, else 7d).

Cheap to import (Airflow's SDK and the retention's defaults only): the task imports the
database code when it runs.
"""

from __future__ import annotations

import logging
import os
from datetime import UTC, datetime
from typing import Any

from airflow.sdk import DAG, Param, dag, get_current_context, task

from anonymizers.pipeline.dag_factory import _no_retry_of_our_errors
from anonymizers.release.retention import DEFAULT_RETENTION, RETENTION_ENV, default_retention

__all__ = ["CLEANUP_DAG_ID", "CLEANUP_SCHEDULE_ENV", "cleanup_dag"]

CLEANUP_DAG_ID = "anonymizers_cleanup"
CLEANUP_SCHEDULE_ENV = "ANONYMIZERS_CLEANUP_SCHEDULE"

log = logging.getLogger(__name__)

_DOC = """### Cleanup of scratch schemas

Drops the work and build schemas (`work_*`, `build_*`) of every release run whose last step
ended or failed longer ago than `older_than` (default 7 days, or
`ANONYMIZERS_SCRATCH_RETENTION`), whatever its release, and forgets those runs. A run whose
step is running is never touched, nor is a published release. `orphans` also drops the
scratch schemas no run knows (left by an older version); `dry_run` only lists. The task log
has one line per schema with its size, and the total freed. Every release run does the same
at its start; this DAG is what `anonymizers cleanup` runs, on a schedule
(`ANONYMIZERS_CLEANUP_SCHEDULE`, default `@daily`)."""


def _schedule() -> str | None:
    cron = os.environ.get(CLEANUP_SCHEDULE_ENV, "@daily").strip()
    return None if cron.lower() in ("", "none") else cron


def _params() -> dict[str, Param]:
    return {
        "older_than": Param(default_retention(), type="string", minLength=1, description=(
            "How long a failed or idle run's work and build schemas are kept: a duration "
            f"like 7d, 12h or 90m, at least 1h (default ${RETENTION_ENV}, else "
            f"{DEFAULT_RETENTION})")),
        "orphans": Param(False, type="boolean", description=(
            "Also drop the scratch schemas that no run of the ledger knows (left by an "
            "older version; their age is unknown)")),
        "dry_run": Param(False, type="boolean", description=(
            "List what would be dropped, with sizes, in the task log; drop nothing")),
    }


@task(task_id="drop_expired_scratch")
def _drop_expired_scratch() -> dict[str, Any]:
    """The CLI's cleanup; returns only counts (XCom), the task log has one line a schema."""
    from anonymizers.release.scratch import cleanup_scratch

    params = get_current_context()["params"]
    with _no_retry_of_our_errors():
        result = cleanup_scratch(params["older_than"], orphans=bool(params["orphans"]),
                                 dry_run=bool(params["dry_run"]), option="older_than")
    for line in result.lines() or [f"nothing to drop: no run idle or failed for longer "
                                   f"than {result.older_than}"]:
        log.info("%s", line)
    return {"schemas": len(result.dropped), "freed_bytes": result.freed_bytes,
            "kept_runs": len(result.kept), "dry_run": result.dry_run}


def cleanup_dag() -> DAG:
    """The maintenance DAG (dag_id ``anonymizers_cleanup``), daily unless told otherwise."""

    @dag(dag_id=CLEANUP_DAG_ID, schedule=_schedule(),
         start_date=datetime(2000, 1, 1, tzinfo=UTC), catchup=False, max_active_runs=1,
         doc_md=_DOC, tags=["anonymizers", "maintenance"], params=_params())
    def anonymizers_cleanup() -> None:
        _drop_expired_scratch()

    return anonymizers_cleanup()
