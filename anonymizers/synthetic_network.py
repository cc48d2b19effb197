"""A synthetic place network with random-walk trajectories (seed 004 §5.1's random maps).

Places are uniform in the unit square; routes join places closer than ``radius`` (the thesis:
80 places, 0.17); a trajectory starts at a random place and walks along routes without
visiting a place twice, for a length drawn uniform in ``min_len .. max_len`` places (the
thesis: 4 to 15 routes, i.e. 5 to 16 places), ending early at a dead end. Used by the
trajectory-groups tests and benchmarks, and written as a place-sequence dataset
(:func:`write_place_dataset`) that ``anonymizers load --places`` reads.

References
----------
.. [1] Nordström, M. Methods for Anonymizing Patterns of Human Mobility. MSc thesis, Chalmers
   2012, §5.1 (random maps, Figures 15-17).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.spatial import cKDTree

__all__ = ["RandomNetwork", "random_network", "random_walks", "write_place_dataset"]

_ATTEMPTS = 8  # tries to find an unvisited neighbour before a walk ends early


@dataclass(frozen=True, eq=False)
class RandomNetwork:
    """Places in the unit square and their routes, as CSR: place ``i``'s neighbours are
    ``neighbours[ptr[i]:ptr[i + 1]]``."""

    xy: np.ndarray
    ptr: np.ndarray
    neighbours: np.ndarray

    @property
    def n_places(self) -> int:
        return int(self.xy.shape[0])


def random_network(n_places: int, rng: np.random.Generator,
                   radius: float | None = None) -> RandomNetwork:
    """A random geometric graph; ``radius`` None gives about six neighbours per place."""
    xy = rng.random((n_places, 2))
    if radius is None:
        radius = math.sqrt(6.0 / (math.pi * n_places))
    pairs = cKDTree(xy).query_pairs(radius, output_type="ndarray")
    src = np.concatenate([pairs[:, 0], pairs[:, 1]])
    dst = np.concatenate([pairs[:, 1], pairs[:, 0]])
    order = np.argsort(src, kind="stable")
    return RandomNetwork(xy, np.searchsorted(src[order], np.arange(n_places + 1)), dst[order])


def random_walks(network: RandomNetwork, n_traj: int, rng: np.random.Generator,
                 min_len: int = 5, max_len: int = 16, trajectories_per_person: float = 1.0
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``traj, person, place`` arrays (one row per visit) of self-avoiding random walks."""
    length = rng.integers(min_len, max_len + 1, n_traj)
    walks = np.full((n_traj, max_len), -1, np.int64)
    walks[:, 0] = rng.integers(0, network.n_places, n_traj)
    for step in range(1, max_len):
        _step(walks, length, step, network, rng)
    person = (np.arange(n_traj) if trajectories_per_person == 1.0 else
              rng.integers(0, max(1, int(n_traj / trajectories_per_person)), n_traj))
    keep = np.arange(max_len)[None, :] < length[:, None]
    return np.repeat(np.arange(n_traj), length), np.repeat(person, length), walks[keep]


def _step(walks: np.ndarray, length: np.ndarray, step: int, network: RandomNetwork,
          rng: np.random.Generator) -> None:
    """One step of every walk still going; walks with no unvisited neighbour end here."""
    ptr, nbr = network.ptr, network.neighbours
    idx = np.flatnonzero(length > step)
    for _ in range(_ATTEMPTS):
        here = walks[idx, step - 1]
        degree = ptr[here + 1] - ptr[here]
        pick = np.minimum(ptr[here] + (rng.random(idx.size) * degree).astype(np.int64),
                          max(nbr.size - 1, 0))
        nxt = nbr[pick] if nbr.size else np.full(idx.size, -1)
        ok = (degree > 0) & ~(walks[idx, :step] == nxt[:, None]).any(axis=1)
        walks[idx[ok], step] = nxt[ok]
        idx = idx[~ok]
    length[idx] = step


def write_place_dataset(visits: Path, places: Path, persons: Path, n_traj: int, *,
                        seed: int = 0, n_places: int = 80, radius: float = 0.17,
                        origin: tuple[float, float] = (11.2, 43.74), span_deg: float = 0.05,
                        start: datetime = datetime(2026, 3, 2, 7, tzinfo=UTC)) -> None:
    """Write a §5.1 random map as a place-sequence dataset: visits CSV
    (traj_id,user_id,t,place, a visit a minute), places CSV (place,lon,lat: the unit square
    scaled to ``span_deg`` degrees at ``origin``) and persons CSV (user_id,age,income)."""
    rng = np.random.default_rng(seed)
    network = random_network(n_places, rng, radius)
    traj, person, place = random_walks(network, n_traj, rng, trajectories_per_person=1.25)
    first = np.r_[0, np.flatnonzero(np.diff(traj)) + 1]
    step = np.arange(traj.size) - np.repeat(first, np.diff(np.r_[first, traj.size]))
    offset = rng.integers(0, 8 * 3600, n_traj)[traj] + 60 * step
    pd.DataFrame({"traj_id": [f"t{i}" for i in traj], "user_id": [f"u{i}" for i in person],
                  "t": pd.to_datetime(start) + pd.to_timedelta(offset, unit="s"),
                  "place": [f"s{i}" for i in place]}).to_csv(visits, index=False)
    lon = origin[0] + span_deg * network.xy[:, 0]
    lat = origin[1] + span_deg * network.xy[:, 1]
    pd.DataFrame({"place": [f"s{i}" for i in range(n_places)], "lon": lon,
                  "lat": lat}).to_csv(places, index=False)
    users = np.unique(person)
    age = 18 + np.floor(rng.beta(2.0, 3.0, users.size) * 68).astype(np.int64)
    pd.DataFrame({"user_id": [f"u{i}" for i in users], "age": age,
                  "income": np.round(rng.lognormal(10.2, 0.5, users.size))}).to_csv(
        persons, index=False)
