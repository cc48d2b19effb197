"""The real-data table of issue 3: one day of T-Drive, k in {2, 5, 8, 16}, kam_cut, kam_rec
and the grid baseline with a comparable cell size; every release verified and published.

Writes tests/benchmarks/results/realdata_table.json and prints a Markdown table.
Run: .venv/bin/python tests/benchmarks/realdata_table.py [day] [k,k,...]
"""

from __future__ import annotations

import sys

from _common import print_markdown_table, scratch_database, write_results
from _release_runs import run_release
from bench_kam_rec_tdrive import TDRIVE

KS = tuple(int(k) for k in sys.argv[2].split(",")) if len(sys.argv) > 2 else (2, 5, 8, 16)
RADIUS = 500.0  # kam_*: cluster radius r (the paper's experiments)
GRID_CELL = 1000.0  # grid: a square of side 2r, comparable to a cell of radius r
COLUMNS = ("k", "method", "published / input trajectories", "cells", "avg displacement (m)",
           "F-measure", "max re-id probability", "time per step (s)")


def _row(k: int, method: str, figures: dict) -> tuple:
    # A metric that is undefined for a release (e.g. no cluster to preserve) is NULL.
    defined = {name: value for name, value in figures["metrics"].items() if value is not None}
    m = {"displacement_global_avg_m": float("nan"), "cluster_f_measure": float("nan"),
         "reid_max_probability": float("nan"), **defined}
    steps = ", ".join(f"{name} {seconds:.1f}" for name, seconds in figures["steps_s"].items()
                      if seconds >= 0.5)
    # Counts in metrics are interval-filtered (privacy rule 4); the table counts the
    # published rows themselves, and the input from the window (the same for every row).
    return (k, method, f"{figures['trajectories']} / {figures['input_trajectories']}",
            f"{figures['cells']}", f"{m['displacement_global_avg_m']:.0f}",
            f"{m['cluster_f_measure']:.2f}", f"{m['reid_max_probability']:.3f}", steps)


def main(day: str = "2008-02-03") -> None:
    from anonymizers.loading import load_dataset

    window = {"start": f"{day}T00:00:00Z", "end": f"{day}T23:59:59.999999Z"}
    runs, rows = [], []
    with scratch_database() as url:
        load_dataset(TDRIVE, "tdrive", url=url)
        for k in KS:
            for method, extra in (("grid_kam_cut", {"cell_size": GRID_CELL}),
                                  ("kam_cut", {"radius": RADIUS}), ("kam_rec", {"radius": RADIUS})):
                # Twelve releases of one window: overlapping on purpose, so accepted.
                params = {"dataset": "tdrive", "method": method, "k": k, **window, **extra,
                          "accept_composition_risk": "benchmark: k x method on one window"}
                figures = run_release(url, params, f"table-{method}-{k}")
                runs.append(figures)
                rows.append(_row(k, method, figures))
                print(" | ".join(map(str, rows[-1])), flush=True)
    write_results("realdata_table", {"day": day, "runs": runs})
    print_markdown_table(COLUMNS, rows)


if __name__ == "__main__":
    main(*sys.argv[1:2])
