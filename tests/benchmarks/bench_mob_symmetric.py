"""Time the MOB algorithms (seed 003) on synthetic days: GenAG, Symmetric Anonymization,
Extreme Union and Generalize, for 5k, 45k and 150k objects at k = 16.

Not collected by pytest (``tests/benchmarks`` is in ``norecursedirs``). From the repository
root::

    .venv/bin/python -m tests.benchmarks.bench_mob_symmetric            # 5k, 45k, 150k
    .venv/bin/python -m tests.benchmarks.bench_mob_symmetric --quick    # 5k only
    .venv/bin/python -m tests.benchmarks.bench_mob_symmetric --sizes 45000 --workers 1,2

Each size runs in a fresh process so that its peak RSS (``resource.getrusage``) is its own;
forked workers are reported apart (``peak_rss_children_mib``). Figures go to
``tests/benchmarks/results/mob_symmetric.json``.

The data: ``n`` objects on a 1,000 x 1,000 grid, 288 time points (one day at 5 minutes),
Gaussian random walks (sigma 2 cells per step, reflected at the border); 30 % present all
day, the others from a random start in the first third of the day to a random end in the
last third (or all day on either side, 30 % each), and 20 % with one gap of up to 2 hours.
QIDs: a size drawn uniformly in 1..200, capped by the object's present time points, and that
many of its present time points drawn uniformly (the paper's "random" configuration; §6.2).

References
----------
.. [1] Yarovoy, Bonchi, Lakshmanan, Wang. Anonymizing Moving Objects: How to Hide a MOB in a
   Crowd? EDBT 2009, §6 (45,639 Milan objects, 150,000 Oldenburg objects, k = 16, QIDs up
   to 200 time points).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from anonymizers.families.mob.anonymity import (
    MobSets,
    extreme_union,
    suppressed_objects,
    symmetric_anonymization,
)
from anonymizers.families.mob.genag import build_hilbert_lists, gen_ag
from anonymizers.families.mob.generalize import generalize
from anonymizers.families.mob.moving_objects import MovingObjects
from anonymizers.families.mob.quality import average_information_loss, class_summary

__all__ = ["benchmark_size", "synthetic_objects"]

K = 16
N_TIMES = 288
SIDE = 1000
MAX_QID = 200
GENAG_SAMPLE = 2000  # subjects whose GenAG is timed on its own


def synthetic_objects(n: int, seed: int = 0, n_times: int = N_TIMES, side: int = SIDE,
                      max_qid: int = MAX_QID, sigma: float = 2.0) -> MovingObjects:
    """Random walks with partial presence and random QIDs (see the module docstring)."""
    rng = np.random.default_rng(seed)
    cx = _walk(rng, n, n_times, side, sigma)
    cy = _walk(rng, n, n_times, side, sigma)
    present = _presence(rng, n, n_times)
    cx[~present] = 0
    cy[~present] = 0
    size = np.minimum(rng.integers(1, max_qid + 1, n), present.sum(axis=1))
    keys = np.where(present, rng.random((n, n_times), dtype=np.float32), np.float32(2))
    order = np.argsort(keys, axis=1)
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(n_times)[None, :], axis=1)
    del keys, order
    obj, t = np.nonzero(rank < size[:, None])
    return MovingObjects.from_rows(n, n_times, *np.nonzero(present), cx[present], cy[present],
                                   obj, t)


def _walk(rng: np.random.Generator, n: int, m: int, side: int, sigma: float) -> np.ndarray:
    """One coordinate of ``n`` reflected Gaussian random walks, as int32 cells."""
    pos = rng.normal(0, sigma, (n, m)).astype(np.float32)
    pos[:, 0] = rng.uniform(0, side, n)
    np.cumsum(pos, axis=1, out=pos)
    pos = np.abs(pos) % (2 * side)
    pos = np.where(pos >= side, 2 * side - pos, pos)
    return np.minimum(pos, side - 1).astype(np.int32)


def _presence(rng: np.random.Generator, n: int, m: int) -> np.ndarray:
    t = np.arange(m)
    first = np.where(rng.random(n) < 0.3, 0, rng.integers(0, m // 3, n))
    last = np.where(rng.random(n) < 0.3, m, rng.integers(2 * m // 3, m + 1, n))
    full = rng.random(n) < 0.3
    first[full], last[full] = 0, m
    present = (t >= first[:, None]) & (t < last[:, None])
    gap = rng.random(n) < 0.2
    start = rng.integers(0, m, n)
    end = start + rng.integers(1, 25, n)
    present &= ~(gap[:, None] & (t >= start[:, None]) & (t < end[:, None]))
    present[np.arange(n), np.argmax(present, axis=1)] = True  # at least one position
    return present


def _timed(figures: dict[str, Any], key: str, work: Callable[[], Any]) -> Any:
    """Run ``work``; record wall seconds and CPU seconds (this process + reaped workers)."""
    started, cpu = time.perf_counter(), _cpu_seconds()
    result = work()
    figures[f"{key}_s"] = round(time.perf_counter() - started, 2)
    figures[f"{key}_cpu_s"] = round(_cpu_seconds() - cpu, 2)
    print(f"    {key}: {figures[f'{key}_s']:.1f} s (cpu {figures[f'{key}_cpu_s']:.1f} s)",
          file=sys.stderr, flush=True)
    return result


def _cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    workers = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + workers.ru_utime + workers.ru_stime


def _set_figures(objects: MobSets, figures: dict[str, Any], prefix: str) -> None:
    sizes = np.diff(objects.set_indptr)
    subjects = sizes > 0
    figures[f"{prefix}_suppressed"] = objects.n_suppressed
    figures[f"{prefix}_mean_set_size"] = round(float(sizes[subjects].mean()), 2)
    figures[f"{prefix}_max_set_size"] = int(sizes.max())
    figures[f"{prefix}_mean_time_set"] = round(float(np.diff(objects.time_indptr)[
        subjects].mean()), 1)


def _generalize(objects: MovingObjects, sets: MobSets, figures: dict[str, Any],
                prefix: str) -> None:
    gen = _timed(figures, f"{prefix}_generalize", lambda: generalize(objects, sets))
    summary = class_summary(gen.class_sizes(), K)
    figures[f"{prefix}_classes"] = summary.n_classes
    figures[f"{prefix}_median_class"] = summary.median_size
    figures[f"{prefix}_coverage"] = round(summary.coverage, 4)
    figures[f"{prefix}_avg_information_loss"] = round(average_information_loss(
        gen.x0, gen.y0, gen.x1, gen.y1), 4)


def benchmark_size(n: int, workers: list[int], methods: list[str]) -> dict[str, Any]:
    """Every figure of one size, measured in this process."""
    figures: dict[str, Any] = {"n_objects": n, "n_times": N_TIMES, "k": K, "max_qid": MAX_QID}
    objects = _timed(figures, "data", lambda: synthetic_objects(n))
    figures["present_share"] = round(float(objects.present.mean()), 3)
    figures["mean_qid"] = round(float(objects.qid_sizes.mean()), 1)
    lists = _timed(figures, "hilbert_lists", lambda: build_hilbert_lists(objects))
    suppressed = _timed(figures, "suppression", lambda: suppressed_objects(objects, K))
    sample = np.flatnonzero(objects.qid_sizes > 0)[:GENAG_SAMPLE]
    _timed(figures, "genag_sample", lambda: [gen_ag(lists, int(s), K - 1, ~suppressed)
                                             for s in sample])
    figures["genag_ms_per_call"] = round(1000 * figures["genag_sample_s"] / sample.size, 2)
    for method, run in (("symmetric", symmetric_anonymization), ("extreme_union", extreme_union)):
        if method not in methods:
            continue
        for w in workers:
            key = f"{method}_w{w}"
            sets = _timed(figures, key, lambda run=run, w=w: run(objects, K, lists, workers=w))
        _set_figures(sets, figures, method)
        _generalize(objects, sets, figures, method)
        del sets
    usage = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    figures["peak_rss_mib"] = round(usage, 1)
    figures["peak_rss_children_mib"] = round(children, 1)
    return figures


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5,000 objects only")
    parser.add_argument("--sizes", default="5000,45000,150000")
    parser.add_argument("--workers", default="1,2", help="worker counts to time, e.g. 1,2")
    parser.add_argument("--methods", default="symmetric,extreme_union")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # a child run
    args = parser.parse_args(argv)
    workers = [int(w) for w in args.workers.split(",")]
    methods = args.methods.split(",")
    if args.one:
        print(json.dumps(benchmark_size(args.one, workers, methods)))
        return
    sizes = [5000] if args.quick else [int(s) for s in args.sizes.split(",")]
    results = []
    for n in sizes:
        print(f"n = {n:,}", file=sys.stderr, flush=True)
        child = subprocess.run([sys.executable, "-m", "tests.benchmarks.bench_mob_symmetric",
                                "--one", str(n), "--workers", args.workers,
                                "--methods", args.methods],
                               check=True, capture_output=True, text=True)
        sys.stderr.write(child.stderr)
        results.append(json.loads(child.stdout))
    from tests.benchmarks._common import write_results

    write_results("mob_symmetric", {"command": " ".join(["bench_mob_symmetric", *argv]),
                                    "machine": _machine(), "runs": results})


def _machine() -> dict[str, Any]:
    import os

    return {"cpus": os.cpu_count(), "load_average_at_end": os.getloadavg()}


if __name__ == "__main__":
    main(sys.argv[1:])
