"""The Fig. 8-shaped table of issue 8: one day of T-Drive, MOB releases for k in {2, 4, 8, 16}
(QIDs up to 100 time points) and QID sizes {20, 40, 100} (k = 16), every release verified and
published; IL, classes, median class size, coverage, both distortions, run time and the peak
RSS of this process.

Writes tests/benchmarks/results/mob_tdrive_table.json and prints a Markdown table.
Run: .venv/bin/python tests/benchmarks/mob_tdrive_table.py [day] [method]
"""

from __future__ import annotations

import sys
import time
from typing import Any

import psycopg
from _common import peak_rss_mib, print_markdown_table, scratch_database, write_results
from _release_runs import run_release
from bench_kam_rec_tdrive import TDRIVE

SETTINGS = [(k, 100) for k in (2, 4, 8, 16)] + [(16, size) for size in (20, 40)]
METRICS = ("mob_information_loss_avg", "mob_equivalence_classes", "mob_class_size_median",
           "mob_class_coverage", "mob_possibly_inside_distortion",
           "mob_definitely_inside_distortion")
COLUMNS = ("k", "max QID size", "objects published / in", "avg IL", "classes",
           "median class size", "coverage", "possibly-in distortion",
           "definitely-in distortion", "run time (s)", "peak RSS (MiB)")


def _exact(url: str, release: str) -> dict[str, int]:
    """Exact figures of the published tables (metrics counts are interval-filtered)."""
    with psycopg.connect(url) as conn:
        row = conn.execute(f"SELECT (SELECT count(*) FROM {release}.objects), "
                           f"(SELECT count(*) FROM {release}.positions)").fetchone()
    return {"objects": int(row[0]), "positions": int(row[1])}


def _row(k: int, size: int, figures: dict[str, Any]) -> tuple:
    m = {name: figures["metrics"].get(name) for name in METRICS}
    shown = [f"{v:.4f}" if isinstance(v, float) and v < 10 else f"{v}" for v in m.values()]
    return (k, size, f"{figures['exact']['objects']} / {figures['metrics'].get('mob_objects')}",
            *shown, f"{figures['total_s']:.1f}", f"{figures['peak_rss_mib']:.0f}")


def main(day: str = "2008-02-03", method: str = "mob_symmetric") -> None:
    from anonymizers.families.mob.qids import generate_and_store_qids
    from anonymizers.loading import load_dataset

    window = {"start": f"{day}T00:00:00Z", "end": f"{day}T23:59:59Z"}
    runs, rows = [], []
    with scratch_database() as url:
        load_dataset(TDRIVE, "tdrive", url=url)
        for k, size in SETTINGS:
            started = time.perf_counter()
            generate_and_store_qids("tdrive", "graph", size, seed=1, url=url)
            params = {"dataset": "tdrive", "method": method, "k": k, **window,
                      "accept_composition_risk": "benchmark: k x QID size on one window"}
            figures = run_release(url, params, f"mob-{k}-{size}", tables=())
            figures["qid_generation_s"] = round(time.perf_counter() - started
                                                - figures["total_s"], 2)
            figures["exact"] = _exact(url, figures["release"])
            figures["peak_rss_mib"] = round(peak_rss_mib(), 1)
            runs.append({"k": k, "max_qid_size": size, **figures})
            rows.append(_row(k, size, figures))
            print(" | ".join(map(str, rows[-1])), flush=True)
    write_results("mob_tdrive_table", {"day": day, "method": method, "runs": runs})
    print_markdown_table(COLUMNS, rows)


if __name__ == "__main__":
    main(*sys.argv[1:3])
