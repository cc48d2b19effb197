"""
### Generalization releases (seed 000: Monreale et al., 2010)

One run publishes one release of one dataset with one method over one time window:

`prepare` (window, work schema) -> `project` (SQL: window cut + metric CRS) ->
`grid_membership` (SQL: cells, membership) -> `visits_and_flows` (SQL: cell sequences,
flows with fewer than k supporters dropped) -> `anonymize` (Python: prefix tree, KAM_CUT)
-> `build_release` (SQL: release tables under a hidden name) -> `metrics` -> `verify`
(independent privacy check: the gate) -> `publish` (atomic rename + catalog row) ->
`cleanup`. The verifier runs last, on the tables exactly as they will be published.

Scheduled runs release the run's data interval; manual runs take `start`/`end` params, or
the whole dataset. The database comes from `DATABASE_URL` (or the embedded cluster).
This file is wiring only: no database access and no heavy import at parse time.
"""

from __future__ import annotations

import os

import pendulum
from airflow.sdk import Param, dag, get_current_context, task

METHODS = ["grid_kam_cut"]
# After prepare, in order; each is a function of anonymizers.pipeline.steps.
STEPS = ["project", "grid_membership", "visits_and_flows", "anonymize", "build_release",
         "metrics", "verify", "publish", "cleanup"]


def step_task(name: str):
    """An Airflow task running steps.<name>(spec) and handing the spec to the next task."""

    @task(task_id=name)
    def run(spec: dict) -> dict:
        from anonymizers.pipeline import steps  # imported at run time, not at parse time

        getattr(steps, name)(spec)
        return spec

    return run


@dag(
    dag_id="generalization",
    schedule=os.environ.get("ANONYMIZERS_SCHEDULE", "@daily"),
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    max_active_runs=4,
    doc_md=__doc__,
    tags=["anonymizers", "seed-000"],
    params={
        "dataset": Param("demo", type="string", description="Dataset name (raw.datasets)"),
        "method": Param("grid_kam_cut", enum=METHODS),
        "k": Param(5, type="integer", minimum=2, description="Anonymity threshold"),
        "k_counts": Param("persons", enum=["persons", "trajectories"],
                          description="What k counts (distinct persons by default)"),
        "cell_size": Param(1000.0, type="number", exclusiveMinimum=0,
                           description="grid_kam_cut: grid cell size in metres"),
        "start": Param(None, type=["null", "string"], description="Window start (ISO-8601)"),
        "end": Param(None, type=["null", "string"], description="Window end, exclusive"),
        "srid": Param(None, type=["null", "integer"], description="Metric CRS (default: UTM)"),
    },
)
def generalization():
    @task.short_circuit
    def prepare():
        from anonymizers.pipeline import steps

        context = get_current_context()
        run = context["dag_run"]
        scheduled = str(run.run_type) in ("scheduled", "backfill", "DagRunType.SCHEDULED",
                                          "DagRunType.BACKFILL_JOB")
        interval = ((context["data_interval_start"], context["data_interval_end"])
                    if scheduled else None)
        return steps.prepare(dict(context["params"]), interval, run.run_id)

    spec = prepare()
    for step in STEPS:
        spec = step_task(step)(spec)


dag = generalization()
