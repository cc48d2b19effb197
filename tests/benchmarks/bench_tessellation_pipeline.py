"""Benchmark: the whole tessellation as the pipeline runs it (characteristic points,
clustering, Voronoi cells, and each fix's cell in PostGIS by 120_membership.sql, step by
step, database round trips included; the pipeline itself keeps the fixes' cells in memory
during progressive generalization, which this comparison does not run), on the same 100k-fix city as
bench_tessellation_vs_movingpandas.py, against movingpandas' TrajectoryCollectionAggregator
measured there (run that first).

Target (issue 3): at least 10x faster. Run: .venv/bin/python
tests/benchmarks/bench_tessellation_pipeline.py [points] [seed]
"""

from __future__ import annotations

import json
import sys
import time

from _common import RESULTS, peak_rss_mib, scratch_database, write_results

TESSELLATION = ["characteristic_points", "cluster", "voronoi"]
# The parameters bench_tessellation_vs_movingpandas.py gives movingpandas.
PARAMS = {"radius": 500.0, "max_distance": 500.0, "min_angle": 45.0,
          "min_stop_duration": 300.0, "stop_radius": 100.0}


def _membership(url: str, spec: dict) -> None:
    """Each fix's cell (what movingpandas' aggregator assigns points to), by
    120_membership.sql: the pipeline itself keeps them in memory during progressive
    generalization, which this comparison does not run."""
    import psycopg

    from anonymizers.db.sqlfiles import run_sql_file
    from anonymizers.release.spec import ReleaseSpec

    with psycopg.connect(url) as conn:
        run_sql_file(conn, "generalization/voronoi/120_membership.sql",
                     work=ReleaseSpec.from_dict(spec).work_schema)


def main(n_points: int = 100_000, seed: int = 3) -> None:
    from anonymizers.loading import load_dataset
    from anonymizers.pipeline import steps
    from anonymizers.synthetic import CityConfig, write_city

    csv, persons = RESULTS / "data" / f"mp_city_{n_points}_{seed}.csv", RESULTS / "data" / "p.csv"
    csv.parent.mkdir(parents=True, exist_ok=True)
    write_city(CityConfig(seed=seed, target_points=n_points), csv, persons)
    figures: dict = {"points": n_points, "seed": seed, "params": PARAMS, "steps_s": {}}
    with scratch_database() as url:
        load_dataset(csv, "city", url=url)
        spec = steps.prepare({"dataset": "city", "method": "kam_cut", "k": 5, **PARAMS},
                             None, "bench")
        steps.run_step("project", spec)
        for name in TESSELLATION:
            started = time.perf_counter()
            steps.run_step(name, spec)
            figures["steps_s"][name] = round(time.perf_counter() - started, 3)
        started = time.perf_counter()
        _membership(url, spec)
        figures["steps_s"]["membership"] = round(time.perf_counter() - started, 3)
    figures["tessellation_s"] = round(sum(figures["steps_s"].values()), 3)
    mp_file = RESULTS / "tessellation_vs_movingpandas.json"
    if mp_file.exists():
        mp = json.loads(mp_file.read_text())["movingpandas"]["times"]["aggregator_total_s"]
        figures["movingpandas_aggregator_s"] = mp
        figures["speedup"] = round(mp / figures["tessellation_s"], 1)
    figures["peak_rss_mib"] = round(peak_rss_mib(), 1)
    write_results("tessellation_pipeline", figures)


if __name__ == "__main__":
    main(*(int(arg) for arg in sys.argv[1:3]))
