"""Benchmark: the loader of two checkouts, interleaved, against a bare COPY of 1M fixes.

On a shared machine the bare copy varies by 2x from one minute to the next; interleaving
the two loaders (each in a child process, as bench_load_memory.py runs it) with a bare
copy before each gives each load the baseline of its own minute. The ratio is
bench_load.py's: the load against the mean of the bare copies around it.
Run: .venv/bin/python tests/benchmarks/bench_load_interleaved.py OTHER_CHECKOUT [ROUNDS]
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

from _common import scratch_database, synthetic_csv, write_results
from bench_load import bare_copy
from bench_load_memory import REPO, load_in_child


def main(other: Path, rounds: int = 5) -> None:
    csv, persons = synthetic_csv(1_000_000)
    codes = {"this": REPO, "other": other.resolve()}
    runs: dict[str, list[dict]] = {name: [] for name in codes}
    for _ in range(rounds):
        for name, code in codes.items():
            figures: dict = {}
            with scratch_database() as url:
                bare_copy(url, csv, figures, "bare_copy_before_s")
                figures |= load_in_child(csv, persons, url, code)
                bare_copy(url, csv, figures, "bare_copy_after_s")
            baseline = (figures["bare_copy_before_s"] + figures["bare_copy_after_s"]) / 2
            figures["ratio_loader_to_bare_copy"] = round(figures["loader_s"] / baseline, 2)
            runs[name].append(figures)
    summary = {name: {"code": str(codes[name]),
                      "median_ratio": statistics.median(r["ratio_loader_to_bare_copy"]
                                                        for r in runs[name]),
                      "median_loader_s": statistics.median(r["loader_s"] for r in runs[name]),
                      "median_peak_rss_mib": statistics.median(r["peak_rss_mib"]
                                                               for r in runs[name]),
                      "runs": runs[name]} for name in codes}
    write_results("load_interleaved", summary)


if __name__ == "__main__":
    main(Path(sys.argv[1]), *(int(arg) for arg in sys.argv[2:3]))
