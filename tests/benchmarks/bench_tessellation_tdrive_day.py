"""Benchmark: the tessellation steps of kam_cut on one T-Drive day, time per step.

Loads the T-Drive file into a scratch database and runs kam_cut (r = 500 m) on one day, step
by step up to the release build (not the metrics, verifier and publication), and reports the
time of each step, the iterations of progressive generalization, the fixes left outside the
Voronoi clip box and whether the build's cells and generators are on the ``snap`` lattice.
Run: .venv/bin/python tests/benchmarks/bench_tessellation_tdrive_day.py [day] [k]
"""

from __future__ import annotations

import sys
import time
from typing import Any

import psycopg
from _common import scratch_database, write_results
from bench_kam_rec_tdrive import TDRIVE

STEPS = ["project", "characteristic_points", "cluster", "voronoi", "progressive_generalization",
         "anonymize", "build_release"]


def _function(name: str):
    import functools

    from anonymizers.pipeline import steps

    return functools.partial(steps.run_step, name)


def _figures(url: str, spec: dict[str, Any]) -> dict[str, Any]:
    from anonymizers.release.spec import ReleaseSpec

    release = ReleaseSpec.from_dict(spec)
    work, build = release.work_schema, release.build_schema
    snap = float(release.params.get("snap", 50.0))
    with psycopg.connect(url) as conn:
        row = conn.execute(f"""
            SELECT (SELECT count(*) FROM {work}.cells),
                   (SELECT max(iteration) FROM {work}.progressive_log),
                   (SELECT count(*) FROM {work}.points),
                   (SELECT count(*) FROM {work}.point_cells WHERE cell_id IS NOT NULL),
                   (SELECT count(*) FROM {build}.cells),
                   (SELECT ARRAY[ST_XMin(e), ST_YMin(e), ST_XMax(e), ST_YMax(e)]
                    FROM (SELECT ST_Extent(geom)::box2d AS e FROM {work}.cells) AS a),
                   (SELECT ARRAY[ST_XMin(e), ST_YMin(e), ST_XMax(e), ST_YMax(e)]
                    FROM (SELECT ST_Extent(geom)::box2d AS e FROM {build}.cells) AS b),
                   (SELECT count(*) FROM {build}.cells
                    WHERE abs(ST_X(centroid) / %(snap)s - round(ST_X(centroid) / %(snap)s))
                          > 1e-6
                       OR abs(ST_Y(centroid) / %(snap)s - round(ST_Y(centroid) / %(snap)s))
                          > 1e-6)""", {"snap": snap}).fetchone()
    assert row is not None
    cells, iterations, fixes, in_cells, published, box, extent, off_lattice = row

    def on_lattice(corners: list[float]) -> bool:
        return all(abs(v / snap - round(v / snap)) < 1e-6 for v in corners)

    return {"cells": cells, "iterations": iterations, "fixes": fixes,
            "fixes_outside_box": fixes - in_cells, "published_cells": published,
            "box": box, "box_on_lattice": on_lattice(box), "published_extent": extent,
            "published_extent_on_lattice": on_lattice(extent),
            "published_generators_off_lattice": off_lattice}


def main(day: str = "2008-02-03", k: int = 5) -> None:
    from anonymizers.loading import load_dataset
    from anonymizers.pipeline import steps

    window = {"start": f"{day}T00:00:00Z", "end": f"{day}T23:59:59.999999Z"}
    params = {"dataset": "tdrive", "method": "kam_cut", "k": k, "radius": 500.0, **window}
    figures: dict[str, Any] = {"day": day, "k": k, "steps_s": {}}
    with scratch_database() as url:
        load_dataset(TDRIVE, "tdrive", url=url)
        spec = steps.prepare(params, None, "bench-day")
        assert spec is not None
        for name in STEPS:
            started = time.perf_counter()
            _function(name)(spec)
            figures["steps_s"][name] = round(time.perf_counter() - started, 2)
            print(f"  {name}: {figures['steps_s'][name]:.2f} s", file=sys.stderr, flush=True)
        figures.update(_figures(url, spec))
    write_results(f"tessellation_tdrive_{day}_k{k}", figures)


if __name__ == "__main__":
    main(*sys.argv[1:2], *(int(a) for a in sys.argv[2:3]))
