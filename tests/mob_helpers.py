"""Tiny builders and brute-force oracles for the MOB algorithm tests (seed 003)."""

from __future__ import annotations

import numpy as np

from anonymizers.families.mob.genag import HilbertLists, eligible_mask
from anonymizers.families.mob.generalize import Generalization
from anonymizers.families.mob.hilbert import hilbert_cell
from anonymizers.families.mob.moving_objects import MovingObjects

__all__ = [
    "EXAMPLE_4_HILBERT",
    "EXAMPLE_4_QIDS",
    "brute_force_suppressed",
    "brute_force_top",
    "classes_at",
    "example_1",
    "example_4",
    "mobs",
    "random_objects",
    "scalar_xy2d",
]

# Example 4 (Figure 5): Hilbert indices (order 3) of O1..O5 at t1..t4, chosen so that the
# nearest neighbours by summed deviation are those of the paper: O1 -> O2 on {t1, t2},
# O2 -> O4 on {t3}, O3 -> O4 on {t2, t4}, O4 -> O2 on {t4}, O5 -> O1 on {t1, t3, t4}.
EXAMPLE_4_HILBERT = np.array([[10, 10, 30, 12],
                              [12, 11, 20, 42],
                              [40, 30, 60, 45],
                              [50, 32, 22, 40],
                              [7, 50, 31, 10]])
EXAMPLE_4_QIDS = [[0, 1], [2], [1, 3], [3], [0, 2, 3]]  # t1, t2 / t3 / t2, t4 / t4 / t1, t3, t4


def mobs(cx: list[list[int]], cy: list[list[int]], qids: list[list[int]],
         present: list[list[bool]] | None = None) -> MovingObjects:
    """MovingObjects from nested lists (objects x time points)."""
    return MovingObjects.from_arrays(np.array(cx), np.array(cy),
                                     None if present is None else np.array(present), qids)


def example_1() -> MovingObjects:
    """Figure 1(a): O1..O3 at t1, t2 (the paper's 1-based coordinates minus 1 as cells)."""
    return mobs([[0, 4], [1, 1], [5, 2]], [[1, 2], [2, 6], [5, 5]], [[0], [1], [1]])


def example_4() -> MovingObjects:
    """Example 4: cells whose Hilbert indices are :data:`EXAMPLE_4_HILBERT`."""
    x, y = hilbert_cell(EXAMPLE_4_HILBERT, 3)  # they span x and y 0..7: nothing shifts
    return MovingObjects.from_arrays(x, y, None, EXAMPLE_4_QIDS)


def random_objects(rng: np.random.Generator, n: int, m: int, side: int,
                   p_present: float, p_qid: float) -> MovingObjects:
    """Uniform random cells on a side x side grid, random presence and QIDs."""
    cx = rng.integers(0, side, (n, m))
    cy = rng.integers(0, side, (n, m))
    present = rng.random((n, m)) < p_present
    qids = [np.flatnonzero(present[i] & (rng.random(m) < p_qid)) for i in range(n)]
    return MovingObjects.from_arrays(cx, cy, present, qids)


def scalar_xy2d(order: int, x: int, y: int) -> int:
    """The textbook one-cell xy2d (Wikipedia, "Hilbert curve"), for comparison."""
    n, d, s = 1 << order, 0, (1 << order) >> 1
    while s > 0:
        rx = int((x & s) > 0)
        ry = int((y & s) > 0)
        d += s * s * ((3 * rx) ^ ry)
        if ry == 0:
            if rx == 1:
                x, y = n - 1 - x, n - 1 - y
            x, y = y, x
        s >>= 1
    return d


def brute_force_top(lists: HilbertLists, subject: int, count: int,
                    allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Score every candidate; the ``count`` best by (summed deviation, object)."""
    objects = lists.objects
    cands = np.arange(objects.n_objects)
    ok = eligible_mask(objects, subject, cands) & (cands != subject)
    if allowed is not None:
        ok &= allowed
    cands = cands[ok]
    times = objects.qid(subject)
    scores = np.abs(lists.hilbert[cands][:, times] - lists.hilbert[subject, times]).sum(axis=1)
    best = np.lexsort((cands, scores))[:count]
    return cands[best], scores[best]


def brute_force_suppressed(objects: MovingObjects, k: int,
                           excluded: np.ndarray | None = None) -> np.ndarray:
    """The suppression fixed point from ``excluded``, by counting every pair (the plain
    definition)."""
    n = objects.n_objects
    present, qid = objects.present, objects.qid_matrix
    # eligible[a, b]: b present at QID(a) and a present at QID(b)
    covers = ~(qid[:, None, :] & ~present[None, :, :]).any(axis=2)
    eligible = covers & covers.T & ~np.eye(n, dtype=bool)
    suppressed = np.zeros(n, dtype=bool) if excluded is None else excluded.copy()
    while True:
        count = (eligible & ~suppressed[None, :]).sum(axis=1)
        short = (objects.qid_sizes > 0) & ~suppressed & (count < k - 1)
        if not short.any():
            return suppressed
        suppressed |= short


def classes_at(gen: Generalization, t: int, one_based: bool = False) -> set[frozenset[int]]:
    """The equivalence classes at time point ``t`` as sets of objects."""
    rows = (gen.t == t) & (gen.cls >= 0)
    classes: dict[int, set[int]] = {}
    for obj, cls in zip(gen.obj[rows].tolist(), gen.cls[rows].tolist(), strict=True):
        classes.setdefault(cls, set()).add(obj + int(one_based))
    return {frozenset(c) for c in classes.values()}
