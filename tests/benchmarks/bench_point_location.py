"""Benchmark: the verifier's point location against one GEOS point and STRtree query per fix.

The verifier and the attack's input map every fix of a window onto the published cells
(issue 12: 25 million fixes). :class:`anonymizers.verifiers.point_location.CellLocator`
decides most fixes by their bucket on a lattice over the cells and tests only those near an
edge; the baseline is what the verifier did before: ``shapely.points`` for every fix, one
``STRtree.query(predicate="intersects")``, the smallest id per fix. Both run in the same
process on the same fixes, and their answers are compared (they must be equal).

Cells: clipped Voronoi cells of random generators (kam_cut / kam_rec) and a square grid
with a third of its cells missing (grid_kam_cut after suppression), over a 10 km square.

Writes tests/benchmarks/results/point_location.json and prints a Markdown table.

Run: .venv/bin/python tests/benchmarks/bench_point_location.py [--fixes 2000000] [--cells 2000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import shapely
from _common import print_markdown_table, write_results

from anonymizers.verifiers.point_location import OUTSIDE, CellLocator

SIDE_M = 10_000.0


def voronoi_cells(n: int, rng: np.random.Generator) -> np.ndarray:
    square = shapely.box(0, 0, SIDE_M, SIDE_M)
    regions = shapely.get_parts(shapely.voronoi_polygons(
        shapely.multipoints(rng.random((n, 2)) * SIDE_M), extend_to=square))
    return shapely.intersection(regions, square)


def grid_cells(n: int, rng: np.random.Generator) -> np.ndarray:
    side = int(np.sqrt(n / 0.66))
    size = SIDE_M / side
    col, row = np.tile(np.arange(side), side), np.repeat(np.arange(side), side)
    boxes = shapely.box(col * size, row * size, (col + 1) * size, (row + 1) * size)
    return boxes[rng.random(boxes.size) < 0.66]


def baseline(ids: np.ndarray, polygons: np.ndarray, x: np.ndarray, y: np.ndarray
             ) -> np.ndarray:
    """The verifier's location before the lattice (rederive.locate of stop 22)."""
    tree = shapely.STRtree(polygons)
    point, cell = tree.query(shapely.points(x, y), predicate="intersects")
    found = np.full(x.size, np.iinfo(np.int64).max)
    np.minimum.at(found, point, ids[cell])
    found[found == np.iinfo(np.int64).max] = OUTSIDE
    return found


def measure(kind: str, polygons: np.ndarray, fixes: int, rng: np.random.Generator) -> dict:
    ids = rng.permutation(len(polygons)).astype(np.int64)
    x, y = rng.random(fixes) * SIDE_M * 1.1 - 500, rng.random(fixes) * SIDE_M * 1.1 - 500
    started = time.perf_counter()
    locator = CellLocator(ids, polygons)
    built = time.perf_counter() - started
    started = time.perf_counter()
    found = locator.locate(x, y)
    located = time.perf_counter() - started
    started = time.perf_counter()
    expected = baseline(ids, polygons, x, y)
    before = time.perf_counter() - started
    assert np.array_equal(found, expected), f"{kind}: the lattice disagrees with GEOS"
    return {"cells": kind, "n_cells": len(polygons), "fixes": fixes,
            "tested_bucket_share": round(float((locator.decided == -2).mean()), 3),
            "build_s": round(built, 3), "locate_s": round(located, 3),
            "baseline_s": round(before, 3), "speedup": round(before / (built + located), 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixes", type=int, default=2_000_000)
    parser.add_argument("--cells", type=int, default=2_000)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    runs = [measure("voronoi", voronoi_cells(args.cells, rng), args.fixes, rng),
            measure("grid", grid_cells(args.cells, rng), args.fixes, rng)]
    write_results("point_location", {"runs": runs})
    columns = tuple(runs[0])
    print_markdown_table(columns, [tuple(run[c] for c in columns) for run in runs])


if __name__ == "__main__":
    main()
