"""Seed 004 §5.1: both trajectory anonymizers on random maps, time and preserved ratio R.

Not collected by pytest (``tests/benchmarks`` is in ``norecursedirs``). Run from the
repository root::

    python -m tests.benchmarks.bench_trajectory_groups --thesis [n_trajectories ...]
    python -m tests.benchmarks.bench_trajectory_groups [n_trajectories ...]   # scaled up

Figures go to ``tests/benchmarks/results/trajectory_groups[_thesis].json``.

``--thesis`` is the thesis' own setting (§5.1, Figures 16-17): 80 places uniform in the unit
square, routes between places closer than 0.17, trajectories that are self-avoiding random
walks of 4-15 routes (5-16 places; a walk with no unvisited neighbour left ends early), one
trajectory per person, k = 10, every point the mean of five maps. Without it, a scaled-up
map (``--places``, about six neighbours each, 1.25 trajectories per person) measures how far
the implementation goes (toward 1M trajectories).

R is eq. 33 as the thesis' text reads it: the total length of the groups times the number of
their trajectories, over the total length of the input trajectories (eq. 33 as printed is its
inverse). For the overlapping anonymizer it can exceed 1, since its groups share visits.

References
----------
.. [1] Nordström, M. Methods for Anonymizing Patterns of Human Mobility. MSc thesis, Chalmers
   2012, §5.1 (random maps, k = 10, Figures 16-17, eq. 33).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from anonymizers.families.groups.trajectory_groups import (
    nonoverlapping_trajectory_groups,
    overlapping_trajectory_groups,
)
from anonymizers.synthetic_network import random_network, random_walks
from tests.benchmarks._common import peak_rss_mib, write_results

__all__ = ["preserved_ratio", "run"]


def preserved_ratio(length: np.ndarray, n_trajectories: np.ndarray, n_visits: int) -> float:
    """R (eq. 33, as the text reads it): sum of l(tg) s(tg) over the input's total length."""
    return float(np.sum(length * n_trajectories) / n_visits)


def _walks(n_traj: int, seed: int, thesis: bool, n_places: int
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    if thesis:
        return random_walks(random_network(80, rng, 0.17), n_traj, rng, 5, 16)
    return random_walks(random_network(n_places, rng), n_traj, rng, 5, 20,
                        trajectories_per_person=1.25)


def _one(n_traj: int, k: int, seed: int, thesis: bool, n_places: int,
         nonoverlapping: bool) -> dict:
    traj, person, place = _walks(n_traj, seed, thesis, n_places)
    started = time.perf_counter()
    groups = overlapping_trajectory_groups(traj, person, place, k)
    figures = {"overlapping_s": time.perf_counter() - started,
               "overlapping_groups": groups.n_groups,
               "overlapping_R": preserved_ratio(groups.length, groups.n_trajectories, traj.size),
               "n_visits": int(traj.size), "n_persons": int(np.unique(person).size)}
    if nonoverlapping:
        started = time.perf_counter()
        result = nonoverlapping_trajectory_groups(traj, person, place, k, seed=seed)
        figures["nonoverlapping_s"] = time.perf_counter() - started
        figures["nonoverlapping_groups"] = result.groups.n_groups
        figures["nonoverlapping_R"] = preserved_ratio(
            result.groups.length, result.groups.n_trajectories, traj.size)
    return figures


def run(n_traj: int, k: int, n_places: int, nonoverlapping: bool, thesis: bool,
        maps: int) -> dict:
    """Figures of one size, the mean over ``maps`` random maps (seeds 0..maps-1)."""
    each = [_one(n_traj, k, seed, thesis, n_places, nonoverlapping) for seed in range(maps)]
    figures: dict = {"n_trajectories": n_traj, "k": k, "maps": maps}
    for key in each[0]:
        figures[key] = round(float(np.mean([f[key] for f in each])), 4)
    figures["peak_rss_mib"] = round(peak_rss_mib(), 1)
    print(figures, flush=True)
    return figures


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int)
    parser.add_argument("--thesis", action="store_true", help="the thesis' 80-place maps")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--places", type=int, default=300)
    parser.add_argument("--maps", type=int, default=None, help="maps per size (thesis: 5)")
    parser.add_argument("--nonoverlapping-up-to", type=int, default=100_000)
    args = parser.parse_args()
    sizes = args.sizes or ([100, 200, 500, 1000, 2000, 5000, 10_000] if args.thesis
                           else [10_000, 100_000, 1_000_000])
    maps = args.maps or (5 if args.thesis else 1)
    runs = [run(n, args.k, args.places, n <= args.nonoverlapping_up_to, args.thesis, maps)
            for n in sizes]
    write_results("trajectory_groups_thesis" if args.thesis else "trajectory_groups", {
        "command": "bench_trajectory_groups" + (" --thesis" if args.thesis else ""),
        "map": ("80 places, routes under 0.17, walks of 5-16 places, one trajectory per "
                "person (thesis §5.1)" if args.thesis else
                f"{args.places} places, ~6 neighbours, walks of 5-20 places, 1.25 "
                "trajectories per person (scaled)"),
        "R": "eq. 33 as the text reads it: sum l(tg) n_trajectories(tg) / sum l(t)",
        "machine": {"cpus": os.cpu_count(), "load_average_at_end": os.getloadavg()},
        "runs": runs})
