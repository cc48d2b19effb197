"""Run one release step by step (the functions the DAG's tasks call), timing each step."""

from __future__ import annotations

import time
from typing import Any

import psycopg


def run_release(url: str, params: dict[str, Any], run_id: str,
                tables: tuple[str, ...] = ("cells", "trajectories")) -> dict[str, Any]:
    """Time every step of one release; returns the step times and the release's metrics."""
    from anonymizers.families.registry import SHARED_STEPS_AFTER, method_entry
    from anonymizers.pipeline import steps

    figures: dict[str, Any] = {"params": params, "steps_s": {}}
    started = time.perf_counter()
    spec = steps.prepare(params, None, run_id)
    figures["steps_s"]["prepare"] = round(time.perf_counter() - started, 3)
    if spec is None:
        raise RuntimeError(f"release {params} is already published in this database")
    for name in [*method_entry(params["method"]).steps, *SHARED_STEPS_AFTER]:
        started = time.perf_counter()
        steps.run_step(name, spec)
        figures["steps_s"][name] = round(time.perf_counter() - started, 3)
    figures["total_s"] = round(sum(figures["steps_s"].values()), 2)
    figures.update(_published(url, spec, tables))
    return figures


def _published(url: str, spec: dict[str, Any], tables: tuple[str, ...]) -> dict[str, Any]:
    """The release's metrics, and exact counts of what it published and of its input."""
    with psycopg.connect(url) as conn:
        name = conn.execute("SELECT release_name FROM catalog.releases "
                            "ORDER BY published_at DESC LIMIT 1").fetchone()[0]
        metrics = dict(conn.execute(f"SELECT name, value FROM {name}.metrics").fetchall())
        sizes = {table: conn.execute(f"SELECT count(*) FROM {name}.{table}").fetchone()[0]
                 for table in tables}
        inputs = conn.execute(
            "SELECT count(DISTINCT traj_id) FROM raw.points WHERE dataset_id = %s "
            "AND t >= %s AND t < %s",
            (spec["dataset_id"], spec["window_start"], spec["window_end"])).fetchone()[0]
    return {"release": name, "metrics": metrics, **sizes, "input_trajectories": inputs}
