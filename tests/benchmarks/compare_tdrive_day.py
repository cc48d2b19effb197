"""`anonymizers compare` on one T-Drive day (issue 11): every registered method at one k on
the same window, each a verified release for this comparison only, utility against
measured risk, run time and peak memory of each release's process.

In a scratch database: T-Drive (600 taxis) is loaded, MOB's QIDs are generated (graph
strategy, at most 100 time points, as tests/benchmarks/mob_tdrive_table.py), then the
command runs as a user runs it, every method with its default parameters except the groups'
demographics=none (T-Drive has no demographic attributes); a method still
running after --method-timeout is stopped and shown as such. Writes the report to
tests/benchmarks/results/compare_tdrive_day/ (index.html, comparison.png,
comparison.json, comparison.md) and compare_tdrive_day.json (those figures with the
machine's load), copies the chart to tests/benchmarks/figures/ (the README's picture), and
prints the Markdown table.

Run: .venv/bin/python tests/benchmarks/compare_tdrive_day.py [day] [k] [method_timeout_s]
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from datetime import date, timedelta

from _common import RESULTS, scratch_database, write_results
from bench_kam_rec_tdrive import TDRIVE

FIGURES = RESULTS.parent / "figures"


def main(day: str = "2008-02-03", k: str = "5", method_timeout: str = "1800") -> None:
    from anonymizers.cli import main as cli
    from anonymizers.families.mob.qids import generate_and_store_qids
    from anonymizers.loading import load_dataset

    out = RESULTS / "compare_tdrive_day"
    end = (date.fromisoformat(day) + timedelta(days=1)).isoformat()
    with scratch_database() as url:
        os.environ["DATABASE_URL"] = url
        load_dataset(TDRIVE, "tdrive", url=url)
        generate_and_store_qids("tdrive", "graph", 100, seed=1, url=url)
        started = time.perf_counter()
        code = cli(["compare", "--dataset", "tdrive", "--k", k, "--start", f"{day}T00:00:00Z",
                    "--end", f"{end}T00:00:00Z", "--method-timeout", method_timeout,
                    "--param", "demographics=none",
                    "--out", str(out)])
        total = round(time.perf_counter() - started, 1)
    if code != 0:
        raise SystemExit(f"compare exited with {code}")
    figures = json.loads((out / "comparison.json").read_text())
    write_results("compare_tdrive_day", {
        "day": day, "k": int(k), "total_s": total, "machine": {
            "cpus": os.cpu_count(), "load_average_at_end": os.getloadavg()},
        **figures})
    FIGURES.mkdir(exist_ok=True)  # committed, unlike results/: the README shows it
    shutil.copyfile(out / "comparison.png", FIGURES / "compare_tdrive_day.png")
    print((out / "comparison.md").read_text())


if __name__ == "__main__":
    main(*sys.argv[1:4])
