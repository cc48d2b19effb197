"""Time the overlapping trajectory anonymizer (Nordström 2012) on random walks of growing size.

Not collected by pytest (``tests/benchmarks`` is in ``norecursedirs``). Run from the
repository root::

    python -m tests.benchmarks.bench_trajectory_groups [n_trajectories ...]

Figures go to ``tests/benchmarks/results/trajectory_groups.json``. The data follow the
thesis' own benchmark (§5.1), scaled up: places uniform in the unit square, routes between
places closer than a radius giving about six neighbours each, and trajectories that are
random walks along routes never revisiting a place. Lengths are drawn uniform in 5..20 places
(the thesis: 4..15 routes); a walk with no unvisited neighbour left stops early (about 10
places on average). About 1.25 trajectories per person. ``k = 10`` as in §5.1. The
nonoverlapping anonymizer is timed too, on sizes up to ``--nonoverlapping-up-to``.

References
----------
.. [1] Nordström, M. Methods for Anonymizing Patterns of Human Mobility. MSc thesis, Chalmers
   2012, §5.1 (random maps, k = 10, Figure 16).
"""

from __future__ import annotations

import argparse
import math
import os
import time

import numpy as np
from scipy.spatial import cKDTree

from anonymizers.families.groups.trajectory_groups import (
    nonoverlapping_trajectory_groups,
    overlapping_trajectory_groups,
)
from tests.benchmarks._common import peak_rss_mib, write_results

__all__ = ["random_city", "random_walks", "run"]

_ATTEMPTS = 8  # tries to find an unvisited neighbour before a walk ends early


def random_city(n_places: int, rng: np.random.Generator,
                degree: float = 6.0) -> tuple[np.ndarray, np.ndarray]:
    """Routes of a random geometric graph: CSR ``(ptr, neighbours)`` of every place."""
    xy = rng.random((n_places, 2))
    pairs = cKDTree(xy).query_pairs(math.sqrt(degree / (math.pi * n_places)),
                                    output_type="ndarray")
    src = np.concatenate([pairs[:, 0], pairs[:, 1]])
    dst = np.concatenate([pairs[:, 1], pairs[:, 0]])
    order = np.argsort(src, kind="stable")
    return np.searchsorted(src[order], np.arange(n_places + 1)), dst[order]


def random_walks(n_traj: int, n_places: int = 300, seed: int = 0, min_len: int = 5,
                 max_len: int = 20) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``traj, person, place`` arrays of self-avoiding random walks on a random city."""
    rng = np.random.default_rng(seed)
    ptr, nbr = random_city(n_places, rng)
    length = rng.integers(min_len, max_len + 1, n_traj)
    walks = np.full((n_traj, max_len), -1, np.int64)
    walks[:, 0] = rng.integers(0, n_places, n_traj)
    for step in range(1, max_len):
        _step(walks, length, step, ptr, nbr, rng)
    person = rng.integers(0, max(1, int(n_traj / 1.25)), n_traj)
    keep = np.arange(max_len)[None, :] < length[:, None]
    return np.repeat(np.arange(n_traj), length), np.repeat(person, length), walks[keep]


def _step(walks: np.ndarray, length: np.ndarray, step: int, ptr: np.ndarray, nbr: np.ndarray,
          rng: np.random.Generator) -> None:
    """One step of every walk still going; walks with no unvisited neighbour end here."""
    idx = np.flatnonzero(length > step)
    for _ in range(_ATTEMPTS):
        here = walks[idx, step - 1]
        degree = ptr[here + 1] - ptr[here]
        pick = np.minimum(ptr[here] + (rng.random(idx.size) * degree).astype(np.int64),
                          nbr.size - 1)
        nxt = nbr[pick]
        ok = (degree > 0) & ~(walks[idx, :step] == nxt[:, None]).any(axis=1)
        walks[idx[ok], step] = nxt[ok]
        idx = idx[~ok]
    length[idx] = step


def run(n_traj: int, k: int, n_places: int, nonoverlapping: bool) -> dict:
    """Figures of one size: data, overlapping time and output, optional nonoverlapping."""
    traj, person, place = random_walks(n_traj, n_places)
    started = time.perf_counter()
    groups = overlapping_trajectory_groups(traj, person, place, k)
    figures = {"n_trajectories": n_traj, "n_visits": int(traj.size),
               "n_persons": int(np.unique(person).size), "k": k,
               "overlapping_s": round(time.perf_counter() - started, 3),
               "overlapping_groups": groups.n_groups,
               "longest_group": int(groups.length.max()) if groups.n_groups else 0}
    if nonoverlapping:
        started = time.perf_counter()
        result = nonoverlapping_trajectory_groups(traj, person, place, k, seed=0)
        figures["nonoverlapping_s"] = round(time.perf_counter() - started, 3)
        figures["nonoverlapping_groups"] = result.groups.n_groups
        figures["nonoverlapping_assigned"] = int(result.assignment.traj.size)
    figures["peak_rss_mib"] = round(peak_rss_mib(), 1)
    print(figures, flush=True)
    return figures


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--places", type=int, default=300)
    parser.add_argument("--nonoverlapping-up-to", type=int, default=100_000)
    args = parser.parse_args()
    runs = [run(n, args.k, args.places, n <= args.nonoverlapping_up_to) for n in args.sizes]
    write_results("trajectory_groups", {
        "command": "bench_trajectory_groups", "places": args.places,
        "lengths": "drawn uniform in 5..20 places, self-avoiding random walks that stop "
                   "early at a dead end (thesis §5.1 map, scaled)",
        "machine": {"cpus": os.cpu_count(), "load_average_at_end": os.getloadavg()},
        "runs": runs})
