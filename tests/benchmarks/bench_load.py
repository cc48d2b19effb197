"""Benchmark: loading 1M points vs a bare `psql \\copy` of the same CSV, in the same run.

Target (issue 2): the loader (read, validate, COPY, indexes, attach) takes at most 2x the
bare copy into an unindexed table. Run: .venv/bin/python tests/benchmarks/bench_load.py [N]
[RUNS]: RUNS runs (default 1), each in a fresh database; the figure is their median.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
from pathlib import Path

from _common import peak_rss_mib, scratch_database, synthetic_csv, timed, write_results

BARE_TABLE = ("CREATE TABLE bare_copy (traj_id text, user_id text, t timestamptz, "
              "lon double precision, lat double precision)")


def bare_copy(url: str, csv: Path, figures: dict, key: str) -> None:
    """`psql \\copy` of the CSV into a new unindexed table: the baseline."""
    psql = "/usr/lib/postgresql/15/bin/psql"
    subprocess.run([psql, url, "-qc", BARE_TABLE], check=True)
    with timed(figures, key):
        subprocess.run([psql, url, "-qc", f"\\copy bare_copy FROM '{csv}' CSV HEADER"],
                       check=True)
    subprocess.run([psql, url, "-qc", "DROP TABLE bare_copy"], check=True)


def one_run(csv: Path, persons: Path) -> dict:
    """Bare copy, loader, bare copy, in a fresh database."""
    from anonymizers.loading import load_dataset

    figures: dict = {}
    with scratch_database() as url:
        bare_copy(url, csv, figures, "bare_copy_before_s")
        with timed(figures, "loader_s"):
            result = load_dataset(csv, "bench", persons=persons, url=url)
        bare_copy(url, csv, figures, "bare_copy_after_s")
        figures["points_loaded"] = result.record.n_points
    # The baseline is the mean of the runs before and after (page cache, autovacuum, load).
    baseline = (figures["bare_copy_before_s"] + figures["bare_copy_after_s"]) / 2
    figures["ratio_loader_to_bare_copy"] = round(figures["loader_s"] / baseline, 2)
    return figures


def main(points: int = 1_000_000, runs: int = 1) -> None:
    csv, persons = synthetic_csv(points)
    figures: dict = {"points": points, "csv_bytes": csv.stat().st_size,
                     "load_average_before": os.getloadavg()}
    figures["runs"] = [one_run(csv, persons) for _ in range(runs)]
    for key in ("loader_s", "ratio_loader_to_bare_copy"):
        figures[key] = statistics.median(run[key] for run in figures["runs"])
    figures["points_loaded"] = figures["runs"][0]["points_loaded"]
    figures["load_average_after"] = os.getloadavg()
    figures["peak_rss_mib"] = round(peak_rss_mib(), 1)
    write_results("load", figures)


if __name__ == "__main__":
    main(*(int(arg) for arg in sys.argv[1:3]))
