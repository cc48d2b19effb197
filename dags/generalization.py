"""
### Generalization releases (seed 000: Monreale et al., 2010)

One run publishes one release of one dataset with one method over one time window:

`prepare` (window, work schema) -> `project` (SQL: window cut + metric CRS) -> either
`grid_membership` (SQL: fixed grid; method grid_kam_cut) or `characteristic_points`
(Python) -> `cluster` (Python, radius r) -> `voronoi` (SQL) -> `membership` (SQL, with
crossed cells) -> `progressive_generalization` (Python decisions over SQL; methods
kam_cut, kam_rec) -> `visits_and_flows` (SQL: cell sequences, flows with fewer than k
supporters dropped) -> `anonymize` (Python: prefix tree, KAM_CUT or KAM_REC)
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
from airflow.sdk import Param, chain, dag, get_current_context, task

METHODS = ["grid_kam_cut", "kam_cut", "kam_rec"]
GRID = ["grid_membership"]
VORONOI = ["characteristic_points", "cluster", "voronoi", "membership",
           "progressive_generalization"]
AFTER = ["visits_and_flows", "anonymize", "build_release", "metrics", "verify", "publish",
         "cleanup"]
# Module of anonymizers.pipeline holding each step (imported at run time, not parse time).
MODULES = {**dict.fromkeys(VORONOI, "tessellation"), "grid_membership": "steps",
           "project": "steps", **dict.fromkeys(AFTER, "steps")}


def step_task(name: str, **task_args):
    """An Airflow task running anonymizers.pipeline.<module>.<name>(spec)."""

    @task(task_id=name, **task_args)
    def run(spec: dict) -> dict:
        import importlib

        module = importlib.import_module(f"anonymizers.pipeline.{MODULES[name]}")
        getattr(module, name)(spec)
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
        "k_counts": Param("persons", enum=["persons"],
                          description="What k counts: distinct persons, always"),
        "count_interval": Param(None, type=["null", "integer"], minimum=1,
                                description="Interval filter size I_s of published counts "
                                            "(default k; 1 = exact counts)"),
        "min_window_hours": Param(1.0, type="number", exclusiveMinimum=0,
                                  description="Shortest window (below 1 h needs "
                                              "accept_composition_risk)"),
        "accept_composition_risk": Param(None, type=["null", "string"],
                                         description="Reason to publish a window that overlaps "
                                                     "a published one or is short (recorded)"),
        "min_continuations": Param(1, type="integer", minimum=1,
                                   description="Cut published prefixes with fewer distinct "
                                               "continuations (1 = off)"),
        "cell_size": Param(1000.0, type="number", exclusiveMinimum=0,
                           description="grid_kam_cut: grid cell size in metres"),
        "radius": Param(500.0, type="number", exclusiveMinimum=0,
                        description="kam_*: desired cluster radius r, metres"),
        "min_angle": Param(45.0, type="number", description="kam_*: significant turn, degrees"),
        "min_stop_duration": Param(300.0, type="number",
                                   description="kam_*: significant stop, seconds"),
        "stop_radius": Param(100.0, type="number", description="kam_*: stop radius, metres"),
        "max_distance": Param(1000.0, type="number",
                              description="kam_*: max distance between characteristic points"),
        "max_displacement": Param(1000.0, type="number", minimum=0,
                                  description="kam_*: MaxDisplacement, metres (0: no limit)"),
        "max_iterations": Param(50, type="integer", minimum=0,
                                description="kam_*: progressive generalization steps"),
        "snap": Param(50.0, type="number", exclusiveMinimum=0,
                      description="kam_*: lattice (m) of generators and the clip box"),
        "p": Param(0.4, type="number", exclusiveMinimum=0, maximum=1,
                   description="kam_rec: share of a trajectory a recovery must keep"),
        "lcs_candidates": Param(32, type="integer", minimum=1,
                                description="kam_rec: sequences ClosestLCS compares with"),
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

    @task.branch
    def choose_tessellation(spec: dict) -> str:
        return GRID[0] if spec["method"] == "grid_kam_cut" else VORONOI[0]

    spec = step_task("project")(prepare())
    grid = [step_task(name)(spec) for name in GRID]
    voronoi = [step_task(name)(spec) for name in VORONOI]
    chain(choose_tessellation(spec), [grid[0], voronoi[0]])
    chain(*voronoi)
    # Runs after whichever tessellation ran (the other one is skipped by the branch).
    joined = step_task(AFTER[0], trigger_rule="none_failed_min_one_success")(spec)
    chain([grid[-1], voronoi[-1]], joined)
    chain(joined, *[step_task(name)(spec) for name in AFTER[1:]])


dag = generalization()
