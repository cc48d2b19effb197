"""Time KAM_REC on a realistic synthetic city: Zipf-popular cells and shared commuter routes.

Not collected by pytest (``tests/benchmarks`` is in ``norecursedirs``).  Run it with
``python -m tests.benchmarks.bench_prefix_tree [n] [seed]`` from the repository root.

References
----------
.. [1] A. Monreale et al., "Movement Data Anonymity through Generalization",
   Transactions on Data Privacy 3 (2010), Algorithm 5 (KAM_REC); Section 8 uses
   k = 5 and p = 40 %, the defaults here.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from anonymizers.families.generalization.prefix_tree import kam_rec

__all__ = ["benchmark_kam_rec", "synthetic_dataset"]

_SIDE = 45  # 45 x 45 = 2,025 cells, the ~2,000 of a city-scale tessellation


def synthetic_dataset(n: int, seed: int = 0) -> tuple[list[list[int]], list[int]]:
    """Generate ``n`` generalized trips over a grid, with their owners.

    Route end points are drawn from a Zipf cell popularity, routes themselves are
    Zipf-popular, each person repeats one to three habitual routes, and trips trim
    their route and take small detours, so most trips are near-duplicates but few
    are identical: the sparse case KAM_REC is meant for.

    Parameters
    ----------
    n : int
        Number of trips.
    seed : int
        Seed of the random generator.

    Returns
    -------
    sequences : list of list of int
        Cell ids (0 .. 2,024), consecutive repeats collapsed, ~20 cells on average.
    owners : list of int
        Person id of each trip, about four trips per person.

    References
    ----------
    .. [1] Monreale et al., Trans. Data Privacy 3 (2010), Section 8 (Milan data).
    """
    rng = np.random.default_rng(seed)
    routes = _routes(rng, max(50, n // 20))
    route_weights = _zipf(len(routes), 1.0)
    n_people = max(1, n // 4)
    habits = [
        rng.choice(len(routes), size=rng.integers(1, 4), p=route_weights) for _ in range(n_people)
    ]
    owners = rng.integers(n_people, size=n).tolist()
    sequences = [_trip(rng, routes[int(rng.choice(habits[owner]))]) for owner in owners]
    return sequences, owners


def benchmark_kam_rec(n: int = 10_000, seed: int = 0, k: int = 5, p: float = 0.4) -> float:
    """Return the wall-clock seconds ``kam_rec`` takes on ``synthetic_dataset(n, seed)``.

    Parameters
    ----------
    n : int
        Number of trips.
    seed : int
        Seed of the generator.
    k : int
        Anonymity threshold.
    p : float
        Minimum recovered fraction.

    Returns
    -------
    float
        Seconds spent in ``kam_rec`` alone (data generation excluded).

    References
    ----------
    .. [1] Monreale et al., Trans. Data Privacy 3 (2010), Algorithm 5.
    """
    sequences, owners = synthetic_dataset(n, seed)
    start = time.perf_counter()
    kam_rec(sequences, owners, k, p)
    return time.perf_counter() - start


def _zipf(size: int, exponent: float) -> np.ndarray:
    """Normalized Zipf weights 1 / rank**exponent."""
    weights = 1.0 / np.arange(1, size + 1) ** exponent
    return weights / weights.sum()


def _routes(rng: np.random.Generator, count: int) -> list[list[int]]:
    """Monotone lattice paths between Zipf-popular cells, 8 to 32 steps long."""
    popularity = _zipf(_SIDE * _SIDE, 1.1)[rng.permutation(_SIDE * _SIDE)]
    routes = []
    while len(routes) < count:
        a, b = rng.choice(_SIDE * _SIDE, size=2, p=popularity)
        (ax, ay), (bx, by) = divmod(int(a), _SIDE), divmod(int(b), _SIDE)
        if 8 <= abs(ax - bx) + abs(ay - by) <= 32:
            routes.append(_lattice_path(rng, (ax, ay), (bx, by)))
    return routes


def _lattice_path(
    rng: np.random.Generator, start: tuple[int, int], end: tuple[int, int]
) -> list[int]:
    """A random shortest grid path from ``start`` to ``end``, as cell ids."""
    (x, y), (ex, ey) = start, end
    steps = [0] * abs(ex - x) + [1] * abs(ey - y)
    rng.shuffle(steps)
    path = [x * _SIDE + y]
    for step in steps:
        if step == 0:
            x += 1 if ex > x else -1
        else:
            y += 1 if ey > y else -1
        path.append(x * _SIDE + y)
    return path


def _trip(rng: np.random.Generator, route: list[int]) -> list[int]:
    """One trip along ``route``: maybe trimmed at both ends, with rare one-cell detours."""
    start, stop = 0, len(route)
    if rng.random() < 0.5:
        start = int(rng.integers(0, len(route) // 4 + 1))
        stop = len(route) - int(rng.integers(0, len(route) // 4 + 1))
    cells = [_detour(rng, cell) if rng.random() < 0.03 else cell for cell in route[start:stop]]
    return [cell for i, cell in enumerate(cells) if i == 0 or cell != cells[i - 1]]


def _detour(rng: np.random.Generator, cell: int) -> int:
    """A random 4-neighbour of ``cell`` inside the grid."""
    x, y = divmod(cell, _SIDE)
    dx, dy = [(1, 0), (-1, 0), (0, 1), (0, -1)][int(rng.integers(4))]
    return min(max(x + dx, 0), _SIDE - 1) * _SIDE + min(max(y + dy, 0), _SIDE - 1)


if __name__ == "__main__":
    size = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    seed_arg = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    print(f"kam_rec on {size} trips: {benchmark_kam_rec(size, seed_arg):.2f} s")
