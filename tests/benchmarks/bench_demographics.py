"""Time the demographic anonymizers (Nordström 2012, §4.4): the GA against Mondrian.

Not collected by pytest (``tests/benchmarks`` is in ``norecursedirs``). Run from the
repository root::

    python -m tests.benchmarks.bench_demographics [n_individuals ...] [--k 10] [--seeds 2]

Figures go to ``tests/benchmarks/results/demographics.json``: for every group size, with two
attributes (age, income) and three (age, income, sex), the seconds, classes, suppressed
individuals, Kullback penalty (eq. 30) and discernability metric (eq. 32) of the GA (the
thesis' parameters: population 40, 40 generations, crossover and mutation rates 0.8) and of
Mondrian (§5.2), and the time of boundary hiding (§4.4.5). The data imitate the Adults
attributes of §5.2 (ages 17-90 skewed young, log-normal income rising with age); the atomic
intervals are five years of age, 5,000 of income and the two sexes (§4.4.1).

References
----------
.. [1] Nordström, M. Methods for Anonymizing Patterns of Human Mobility. MSc thesis, Chalmers
   2012, §4.4.4, §5.2 (Figures 18-19).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from anonymizers.families.groups.demographics import (
    DemographicClasses,
    atomic_grid,
    classes_kullback_penalty,
    discernability_metric,
    genetic_demographic_classes,
    hide_boundaries,
    mondrian_demographic_classes,
)
from tests.benchmarks._common import peak_rss_mib, write_results

__all__ = ["demographics", "run"]

_DOMAIN = np.array([[0.0, 120.0], [0.0, 200_000.0], [0.0, 2.0]])
_BINS = np.array([24, 40, 2])


def demographics(n: int, n_attributes: int, seed: int = 0) -> np.ndarray:
    """float (n, n_attributes): age, income and sex of ``n`` synthetic individuals."""
    rng = np.random.default_rng(seed)
    age = np.clip(17 + rng.gamma(2.5, 9.0, n), 17, 90)
    income = np.clip(rng.lognormal(10.0 + 0.012 * (age - 17), 0.55), 0, 199_999)
    sex = rng.integers(0, 2, n).astype(float)
    return np.c_[age, income, sex][:, :n_attributes]


def _figures(classes: DemographicClasses, seconds: float) -> dict:
    return {"seconds": round(seconds, 3), "classes": classes.n_classes,
            "suppressed": classes.n_suppressed,
            "kullback_penalty": round(classes_kullback_penalty(classes), 1),
            "discernability": round(discernability_metric(classes), 1)}


def run(n: int, n_attributes: int, k: int, seeds: int) -> dict:
    """GA (one run per seed) and Mondrian on one synthetic group."""
    x = demographics(n, n_attributes)
    grid = atomic_grid(_DOMAIN[:n_attributes], _BINS[:n_attributes])
    started = time.perf_counter()
    mondrian = mondrian_demographic_classes(x, grid, k)
    figures = {"n": n, "attributes": n_attributes, "atomic_intervals": grid.n_cells, "k": k,
               "mondrian": _figures(mondrian, time.perf_counter() - started), "ga": []}
    for seed in range(seeds):
        started = time.perf_counter()
        ga = genetic_demographic_classes(x, grid, k, seed=seed)
        figures["ga"].append({"seed": seed, **_figures(ga.classes, time.perf_counter() - started),
                              "initial_best_kp": round(float(ga.best_penalty[0]), 1)})
    started = time.perf_counter()
    hidden = hide_boundaries(x, ga.classes)
    figures["hide_boundaries_s"] = round(time.perf_counter() - started, 4)
    moved = (hidden.cell_lower != ga.classes.bounds.cell_lower) | (
        hidden.cell_upper != ga.classes.bounds.cell_upper)
    figures["hidden_bounds_moved_fraction"] = round(float(moved.mean()), 3)
    print(figures, flush=True)
    return figures


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[100, 1_000, 10_000])
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--seeds", type=int, default=2)
    args = parser.parse_args()
    started = time.perf_counter()
    runs = [run(n, d, args.k, args.seeds) for n in args.sizes for d in (2, 3)]
    write_results("demographics", {
        "command": "bench_demographics", "ga": "population 40, 40 generations, crossover 0.8, "
                                             "mutation 0.8, 4 random initial trees",
        "atomic_intervals": "age [0, 120) / 5 years, income [0, 200000) / 5000, sex 2 codes",
        "total_s": round(time.perf_counter() - started, 1),
        "peak_rss_mib": round(peak_rss_mib(), 1),
        "machine": {"cpus": os.cpu_count(), "load_average_at_end": os.getloadavg()},
        "runs": runs})
