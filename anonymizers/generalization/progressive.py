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

The expected local displacement of a merged area is the root mean square distance of its
fixes to the merged centroid, computed from per-cell sums: it bounds the mean distance
from above (so MaxDisplacement is never exceeded on average), and needs no pass over the
points. Generators are centroids only: a medoid is one person's actual fix, i.e. a raw
position, which a release must not publish.

References
----------
Monreale, A., Andrienko, G., Andrienko, N., Giannotti, F., Pedreschi, D., Rinzivillo, S.,
Wrobel, S. (2010). Movement data anonymity through generalization. Transactions on Data
Privacy 3, 91-121. Algorithm 3 and §6.1.2.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["CellStatistics", "MergePlan", "NeighbourFlows", "pair_counts", "plan_merges"]


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
    near_owners: np.ndarray  # distinct owners with a fix within the radius r of the generator


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
                max_displacement: float | None, *, include_pairs: bool = True) -> MergePlan:
    """Decide one step of progressive generalization (module docstring).

    ``include_pairs=False`` handles only generators with fewer than k persons: used once
    the step budget is spent, because those must be resolved before anything is published.
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
        if max_displacement is not None and rms > max_displacement:
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
