"""Time TCAA's TClustering (seed 002) on synthetic slices of 1k to 30k pieces at k = 5.

Not collected by pytest (``tests/benchmarks`` is in ``norecursedirs``). From the repository
root::

    .venv/bin/python -m tests.benchmarks.bench_tcaa_similarity                 # 1k .. 30k
    .venv/bin/python -m tests.benchmarks.bench_tcaa_similarity --sizes 1000,3000

Each size runs in a fresh process so that its peak RSS (``resource.getrusage``) is its own.
Figures go to ``tests/benchmarks/results/tcaa_similarity.json``, with the growth exponent b
of a least-squares fit seconds ~ N^b (TClustering is O(N^2 n) time, O(N n) memory).

The data: one slice of an hour at 5 minutes (13 time points); ``N`` Gaussian random walks
(sigma 100 m a step) started uniformly in a 20 km square, as metres.

References
----------
.. [1] Jiang & Hu, A Clustering-Anonymity Approach for Trajectory Data Publishing Considering
   both Distance and Direction, CIT 29(4), 2021, §6 (3,000 Oldenburg trajectories).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from typing import Any

import numpy as np

from anonymizers.families.clustering.tcaa import information_loss, tclustering
from tests.benchmarks._common import peak_rss_mib

__all__ = ["benchmark_size", "growth_exponent", "synthetic_pieces"]

K = 5
N_TIMES = 13
SIDE = 20_000.0  # metres
STEP = 100.0  # metres, sigma of a 5-minute step


def synthetic_pieces(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``n`` random walks of ``N_TIMES`` positions (see the module docstring)."""
    rng = np.random.default_rng(seed)
    X = np.cumsum(rng.normal(0, STEP, (n, N_TIMES)), axis=1) + rng.uniform(0, SIDE, (n, 1))
    Y = np.cumsum(rng.normal(0, STEP, (n, N_TIMES)), axis=1) + rng.uniform(0, SIDE, (n, 1))
    return X, Y


def benchmark_size(n: int) -> dict[str, Any]:
    """Every figure of one size, measured in this process."""
    X, Y = synthetic_pieces(n)
    started = time.perf_counter()
    labels = tclustering(X, Y, K, lam=0.6, alpha=0.8, rng=0)
    seconds = time.perf_counter() - started
    sizes = np.bincount(labels)
    return {"n_pieces": n, "n_times": N_TIMES, "k": K,
            "tclustering_s": round(seconds, 2),
            "clusters": int(sizes.size), "min_cluster": int(sizes.min()),
            "max_cluster": int(sizes.max()),
            "information_loss": round(information_loss(X, Y, labels), 5),
            "peak_rss_mib": round(peak_rss_mib(), 1)}


def growth_exponent(sizes: list[int], seconds: list[float]) -> float | None:
    """Slope b of log(seconds) = a + b log(N), or None with fewer than two sizes."""
    if len(sizes) < 2:
        return None
    return round(float(np.polyfit(np.log(sizes), np.log(seconds), 1)[0]), 2)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,3000,10000,30000")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # a child run
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(benchmark_size(args.one)))
        return
    runs = []
    for n in (int(s) for s in args.sizes.split(",")):
        print(f"n = {n:,}", file=sys.stderr, flush=True)
        child = subprocess.run([sys.executable, "-m", "tests.benchmarks.bench_tcaa_similarity",
                                "--one", str(n)], check=True, capture_output=True, text=True)
        runs.append(json.loads(child.stdout))
        print(f"  {runs[-1]['tclustering_s']:.2f} s, {runs[-1]['peak_rss_mib']:.0f} MiB",
              file=sys.stderr, flush=True)
    from tests.benchmarks._common import write_results

    exponent = growth_exponent([r["n_pieces"] for r in runs], [r["tclustering_s"] for r in runs])
    write_results("tcaa_similarity", {
        "command": " ".join(["bench_tcaa_similarity", *argv]),
        "machine": {"cpus": os.cpu_count(), "load_average_at_end": os.getloadavg()},
        "growth_exponent": exponent, "runs": runs})
    _print_table(runs, exponent)


def _print_table(runs: list[dict[str, Any]], exponent: float | None) -> None:
    print(f"{'N':>8} {'seconds':>9} {'peak MiB':>9} {'clusters':>9} {'sizes':>7} {'IL':>8}")
    for r in runs:
        print(f"{r['n_pieces']:>8,} {r['tclustering_s']:>9.2f} {r['peak_rss_mib']:>9.0f} "
              f"{r['clusters']:>9,} {r['min_cluster']:>3}-{r['max_cluster']:<3} "
              f"{r['information_loss']:>8.4f}")
    print(f"growth exponent (seconds ~ N^b): b = {exponent}")


if __name__ == "__main__":
    main(sys.argv[1:])
