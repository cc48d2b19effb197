"""Benchmark: grid_kam_cut end to end on ~1M generated points, with the time of each step.

Runs the DAG's steps in this process (the same functions the Airflow tasks call) so that
each step is timed and the Python side's peak memory is measured; Airflow's own per-task
start-up is not included. Run: .venv/bin/python tests/benchmarks/bench_grid_kam_cut.py [N]
"""

from __future__ import annotations

import sys

from _common import peak_rss_mib, scratch_database, synthetic_csv, timed, write_results

STEPS = ["project", "grid_membership", "visits_and_flows", "anonymize", "build_release", "manifest",
         "metrics", "verify", "publish", "cleanup"]


def main(points: int = 1_000_000, k: int = 5, cell_size: float = 500.0) -> None:
    from anonymizers.loading import load_dataset
    from anonymizers.pipeline import steps

    csv, persons = synthetic_csv(points)
    figures: dict = {"points": points, "k": k, "cell_size_m": cell_size, "steps_s": {}}
    with scratch_database() as url:
        with timed(figures, "load_s"):
            load_dataset(csv, "bench", persons=persons, url=url)
        params = {"dataset": "bench", "method": "grid_kam_cut", "k": k, "cell_size": cell_size}
        with timed(figures["steps_s"], "prepare"):
            spec = steps.prepare(params, None, "bench")
        for name in STEPS:
            with timed(figures["steps_s"], name):
                steps.run_step(name, spec)
        import psycopg

        with psycopg.connect(url) as conn:
            name = conn.execute("SELECT release_name FROM catalog.releases").fetchone()[0]
            figures["metrics"] = dict(conn.execute(
                f"SELECT name, value FROM {name}.metrics ORDER BY name").fetchall())
    figures["release_total_s"] = round(sum(figures["steps_s"].values()), 2)
    figures["peak_rss_mib"] = round(peak_rss_mib(), 1)
    write_results("grid_kam_cut", figures)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
