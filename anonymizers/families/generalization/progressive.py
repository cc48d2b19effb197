"""Which cells to merge in one step of progressive generalization (seed 000, Algorithm 3).

Pure decisions over per-cell statistics; the database work (Voronoi, membership, the
counts) is done by the pipeline. One step:

1. For every pair of neighbouring cells, count the owners moving between them in each
   direction; take the minimum if both are positive, else the maximum (lines 1-4).
2. P = pairs whose count is positive but below k, by increasing count (lines 5, 11).
3. Take pairs from P in order, skipping any that shares a cell with a pair already taken
   (lines 12-16). With MaxDisplacement, a pair whose merged area would have an expected
   local displacement above it is removed from P instead (§6.1.2).

Beyond the paper, two rules on generators, because a published generator is a position:

* a generator computed from the fixes of fewer than k distinct persons points at them
  (it is their mean). Such a cell is merged first, with the neighbour it exchanges most
  owners with (then the nearest); if MaxDisplacement allows no merge, its generator is
  dropped and its area goes to its neighbours, whose generators are unchanged;
* a generator with fixes of fewer than k owners within the radius r of it marks a place
  where fewer than k people were (a mean can fall in an empty spot between two roads).
  It is dropped. This is also the rule the independent verifier checks, from the
  release alone.

A merged generator is not the centroid of all fixes of a and b (Algorithm 3, line 15),
where a person with most of the fixes (a parked car) would pull it to their place, but
the mean over the persons of each person's mean position, rounded to the lattice of
``snap`` metres (privacy rule 2 of ``../shared/DESIGN.md``); the pipeline computes it in
SQL, since it needs the fixes per person. Generators are means only: a medoid is one
person's actual fix, i.e. a raw position, which a release must not publish.

The expected local displacement of a merged area is the root mean square distance of its
fixes to the merged generator, computed from per-cell sums (:func:`rms_distance`): it
bounds the mean distance from above (so MaxDisplacement is never exceeded on average),
and needs no pass over the points. The planner first judges a pair by the distance to
the fixes' centroid, the least possible RMS; the pipeline then computes the generator a
merge really gets and, when that is too far from the fixes, refuses the pair
(``refused``) and plans the step again.

Two generators that round onto one lattice point would be one Voronoi site: they are
merged (:func:`coinciding`), whatever MaxDisplacement says.

References
----------
Monreale, A., Andrienko, G., Andrienko, N., Giannotti, F., Pedreschi, D., Rinzivillo, S.,
Wrobel, S. (2010). Movement data anonymity through generalization. Transactions on Data
Privacy 3, 91-121. Algorithm 3 and §6.1.2.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

__all__ = [
    "CellStatistics",
    "MergePlan",
    "NeighbourFlows",
    "coinciding",
    "pair_counts",
    "plan_merges",
    "rms_distance",
]


@dataclass(frozen=True)
class CellStatistics:
    """Per cell (aligned arrays): fixes, sums of coordinates and squares, generator support."""

    cell_id: np.ndarray
    n_points: np.ndarray
    sx: np.ndarray
    sy: np.ndarray
    sxxyy: np.ndarray
    generator_persons: np.ndarray
    centroid_x: np.ndarray
    centroid_y: np.ndarray
    near_owners: np.ndarray  # distinct owners with a fix within r of the generator, up to k

    # The per-cell measures other than cell_id, by name (SQL results are read by name).
    FIELDS: ClassVar[tuple[str, ...]] = ("n_points", "sx", "sy", "sxxyy", "generator_persons",
                                         "centroid_x", "centroid_y", "near_owners")


@dataclass(frozen=True)
class NeighbourFlows:
    """Pairs of cells sharing an edge and the owners moving a->b and b->a."""

    a: np.ndarray
    b: np.ndarray
    a_to_b: np.ndarray
    b_to_a: np.ndarray


@dataclass
class MergePlan:
    """The decisions of one step and what they were made from."""

    merges: list[tuple[int, int]] = field(default_factory=list)
    drops: list[int] = field(default_factory=list)
    pairs_below_k: int = 0
    rejected_by_displacement: int = 0
    thin_generators: int = 0
    merged_rms_m: list[float] = field(default_factory=list)
    far_generators: int = 0

    @property
    def changes(self) -> bool:
        return bool(self.merges or self.drops)


def pair_counts(flows: NeighbourFlows) -> np.ndarray:
    """Algorithm 3, line 3: min of the two directions if both positive, else the max."""
    both = (flows.a_to_b > 0) & (flows.b_to_a > 0)
    return np.where(both, np.minimum(flows.a_to_b, flows.b_to_a),
                    np.maximum(flows.a_to_b, flows.b_to_a))


class _Cells:
    """Lookup of the statistics by cell id."""

    def __init__(self, stats: CellStatistics) -> None:
        self.stats = stats
        self.row = {int(cell): i for i, cell in enumerate(stats.cell_id)}

    def merged_rms(self, a: int, b: int) -> float:
        s, i, j = self.stats, self.row[a], self.row[b]
        n = s.n_points[i] + s.n_points[j]
        if n == 0:
            return 0.0
        cx, cy = (s.sx[i] + s.sx[j]) / n, (s.sy[i] + s.sy[j]) / n
        mean_square = (s.sxxyy[i] + s.sxxyy[j]) / n - cx * cx - cy * cy
        return float(np.sqrt(max(mean_square, 0.0)))

    def distance(self, a: int, b: int) -> float:
        s, i, j = self.stats, self.row[a], self.row[b]
        return float(np.hypot(s.centroid_x[i] - s.centroid_x[j], s.centroid_y[i] - s.centroid_y[j]))


def _thin_candidates(cells: _Cells, flows: NeighbourFlows, counts: np.ndarray,
                     k: int) -> list[tuple[int, int]]:
    """For each cell whose generator has fewer than k persons: its neighbours, best first."""
    thin = {int(c) for c, p in zip(cells.stats.cell_id, cells.stats.generator_persons,
                                   strict=True) if p < k}
    options: dict[int, list[tuple[float, float, int]]] = {cell: [] for cell in thin}
    for a, b, n in zip(flows.a.tolist(), flows.b.tolist(), counts.tolist(), strict=True):
        for cell, other in ((a, b), (b, a)):
            if cell in options:
                options[cell].append((-n, cells.distance(cell, other), other))
    return [(cell, other) for cell in sorted(options)
            for _, _, other in sorted(options[cell])]


def _below_k_candidates(flows: NeighbourFlows, counts: np.ndarray,
                        k: int) -> list[tuple[int, int]]:
    below = np.flatnonzero((counts > 0) & (counts < k))
    order = sorted(below.tolist(), key=lambda i: (counts[i], flows.a[i], flows.b[i]))
    return [(int(flows.a[i]), int(flows.b[i])) for i in order]


def plan_merges(stats: CellStatistics, flows: NeighbourFlows, k: int,
                max_displacement: float | None, *, include_pairs: bool = True,
                refused: Collection[tuple[int, int]] = ()) -> MergePlan:
    """Decide one step of progressive generalization (module docstring).

    ``include_pairs=False`` handles only generators with fewer than k persons: used once
    the step budget is spent, because those must be resolved before anything is published.
    ``refused`` pairs (a, b) are rejected as if by MaxDisplacement: their merged generator
    turned out too far from their fixes.
    """
    cells, counts = _Cells(stats), pair_counts(flows)
    plan = MergePlan(pairs_below_k=int(((counts > 0) & (counts < k)).sum()),
                     thin_generators=int((stats.generator_persons < k).sum()))
    used: set[int] = set()
    thin_pairs = _thin_candidates(cells, flows, counts, k)
    pairs = _below_k_candidates(flows, counts, k) if include_pairs else []
    for a, b in thin_pairs + pairs:
        if a in used or b in used:
            continue
        rms = cells.merged_rms(a, b)
        if (a, b) in refused or (max_displacement is not None and rms > max_displacement):
            plan.rejected_by_displacement += 1
            continue
        plan.merges.append((a, b))
        plan.merged_rms_m.append(rms)
        used.update((a, b))
    thin = {int(c) for c, p in zip(stats.cell_id, stats.generator_persons, strict=True) if p < k}
    far = {int(c) for c, n in zip(stats.cell_id, stats.near_owners, strict=True) if n < k}
    plan.far_generators = len(far)
    plan.drops = sorted((thin | far) - used)
    return plan


def rms_distance(stats: CellStatistics, rows: Sequence[int], x: float, y: float) -> float:
    """Root mean square distance of the fixes of the cells at ``rows`` to (x, y).

    From the per-cell sums: E|p - g|^2 = (E|p|^2 - |m|^2) + |m - g|^2, m the fixes' mean.
    0.0 for cells without fixes.
    """
    n = float(stats.n_points[list(rows)].sum())
    if n == 0:
        return 0.0
    mx, my = stats.sx[list(rows)].sum() / n, stats.sy[list(rows)].sum() / n
    spread = stats.sxxyy[list(rows)].sum() / n - mx * mx - my * my
    return float(np.sqrt(max(spread, 0.0) + (mx - x) ** 2 + (my - y) ** 2))


def coinciding(ids: Sequence[int], xy: np.ndarray) -> list[list[int]]:
    """Groups of generator ids sharing one position (only groups of two or more).

    Positions are compared exactly: generators are snapped to a lattice, so two that round
    to one lattice point have bit-identical coordinates.

    Examples
    --------
    >>> coinciding([4, 7, 9], np.array([[0.0, 50.0], [100.0, 0.0], [0.0, 50.0]]))
    [[4, 9]]
    """
    at: dict[tuple[float, float], list[int]] = {}
    for gen_id, (x, y) in zip(ids, np.asarray(xy, dtype=np.float64).tolist(), strict=True):
        at.setdefault((x, y), []).append(int(gen_id))
    return [group for group in at.values() if len(group) > 1]
