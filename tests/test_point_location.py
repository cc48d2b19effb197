"""The verifier's point location (anonymizers/verifiers/point_location.py) equals one
``intersects`` test per point and cell, the smallest id winning, on every kind of input."""

from __future__ import annotations

import numpy as np
import pytest
import shapely

from anonymizers.verifiers.point_location import OUTSIDE, CellLocator

FAR = np.array([612_345.5, 5_234_567.25])  # a UTM-like offset: coordinates round at 1e-9 m


def reference(ids: np.ndarray, polygons: np.ndarray, x: np.ndarray, y: np.ndarray
              ) -> np.ndarray:
    """One GEOS point per fix against every cell: slow and obviously right."""
    points = shapely.points(x, y)
    found = np.full(x.size, OUTSIDE, dtype=np.int64)
    for cell_id, polygon in sorted(zip(ids.tolist(), polygons, strict=True), reverse=True):
        found[shapely.intersects(polygon, points)] = cell_id
    return found


def voronoi(n: int, rng: np.random.Generator) -> np.ndarray:
    square = shapely.box(0, 0, 1000, 1000)
    regions = shapely.get_parts(shapely.voronoi_polygons(
        shapely.multipoints(rng.random((n, 2)) * 1000), extend_to=square))
    return shapely.intersection(regions, square)


def grid(cells: int, size: float, rng: np.random.Generator) -> np.ndarray:
    col, row = (a.ravel() for a in np.meshgrid(np.arange(cells), np.arange(cells)))
    boxes = shapely.box(col * size, row * size, col * size + size, row * size + size)
    return boxes[rng.random(boxes.size) < 0.7]  # with holes: unpublished cells


def on_edges(polygons: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every vertex and every edge's midpoint: points on shared boundaries."""
    xy = shapely.get_coordinates(shapely.boundary(polygons))
    middle = (xy[:-1] + xy[1:]) / 2
    return np.r_[xy[:, 0], middle[:, 0]], np.r_[xy[:, 1], middle[:, 1]]


def cells_and_points(kind: str, rng: np.random.Generator
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    if kind == "voronoi":
        polygons = voronoi(60, rng)
    elif kind == "grid":
        polygons = grid(12, 1000 / 12, rng)
    elif kind == "overlapping":  # not a tessellation: the smallest id still wins
        polygons = np.array([shapely.box(0, 0, 600, 600), shapely.box(400, 400, 1000, 1000),
                             shapely.Point(500, 500).buffer(80),
                             shapely.Polygon([(0, 1000), (1000, 0), (1000, 30)])])
    elif kind == "one thin cell":
        polygons = np.array([shapely.Polygon([(0, 0), (1000, 1), (1000, 2)])])
    elif kind == "far from the origin":
        polygons = shapely.transform(voronoi(60, rng), lambda xy: xy + FAR)
    else:
        raise AssertionError(kind)
    ids = rng.permutation(len(polygons)).astype(np.int64) * 7 + 3
    x, y = rng.random(20_000) * 1200 - 100, rng.random(20_000) * 1200 - 100
    if kind == "far from the origin":
        x, y = x + FAR[0], y + FAR[1]
    edge_x, edge_y = on_edges(polygons)
    return ids, polygons, np.r_[x, edge_x], np.r_[y, edge_y]


@pytest.mark.parametrize("kind", ["voronoi", "grid", "overlapping", "one thin cell",
                                  "far from the origin"])
@pytest.mark.parametrize("seed", [0, 1])
def test_locate_equals_one_intersects_test_per_point(kind: str, seed: int) -> None:
    ids, polygons, x, y = cells_and_points(kind, np.random.default_rng(seed))
    found = CellLocator(ids, polygons).locate(x, y)
    np.testing.assert_array_equal(found, reference(ids, polygons, x, y))
    assert (found == OUTSIDE).any() and (found != OUTSIDE).any()


def test_most_points_need_no_geometry_test() -> None:
    """What makes it fast: only buckets an edge runs through are tested."""
    locator = CellLocator(*cells_and_points("voronoi", np.random.default_rng(0))[:2])
    assert (locator.decided == -2).mean() < 0.3


def test_no_cells_or_no_points() -> None:
    empty = CellLocator(np.zeros(0, dtype=np.int64), np.array([], dtype=object))
    assert empty.locate(np.array([1.0, 2.0]), np.array([3.0, 4.0])).tolist() == [OUTSIDE] * 2
    one = CellLocator(np.array([4]), np.array([shapely.box(0, 0, 1, 1)]))
    assert one.locate(np.zeros(0), np.zeros(0)).size == 0
    assert one.locate(np.array([0.5, 1.0, 1.5]), np.array([0.5, 1.0, 0.5])).tolist() == [
        4, 4, OUTSIDE]
