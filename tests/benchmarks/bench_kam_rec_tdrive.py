"""Benchmark: kam_rec end to end on the whole T-Drive file (794k fixes), time per step.

Target (issue 3): within 5 minutes here; peak RSS of the Python side reported.
Run: .venv/bin/python tests/benchmarks/bench_kam_rec_tdrive.py [k]
"""

from __future__ import annotations

import sys
from pathlib import Path

from _common import peak_rss_mib, scratch_database, timed, write_results
from _release_runs import run_release

# ../shared/data beside the checkout, or beside a folder of git worktrees holding it.
SHARED_DATA = next((folder / "shared" / "data" for folder in Path(__file__).resolve().parents
                    if (folder / "shared" / "data").is_dir()),
                   Path(__file__).resolve().parents[3] / "shared" / "data")
TDRIVE = SHARED_DATA / "tdrive_600" / "points.csv.gz"


def main(k: int = 5) -> None:
    from anonymizers.loading import load_dataset

    figures: dict = {"input": str(TDRIVE), "k": k}
    with scratch_database() as url:
        with timed(figures, "load_s"):
            result = load_dataset(TDRIVE, "tdrive", url=url)
        figures["points"] = result.record.n_points
        params = {"dataset": "tdrive", "method": "kam_rec", "k": k}
        figures["release"] = run_release(url, params, "bench-kam-rec")
    figures["peak_rss_mib"] = round(peak_rss_mib(), 1)
    write_results(f"kam_rec_tdrive_k{k}", figures)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
