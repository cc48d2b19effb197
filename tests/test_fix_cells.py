"""The fixes' cells kept in memory by progressive generalization
(anonymizers.families.generalization.fix_cells), against GEOS polygons and brute force."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest
import shapely

from anonymizers.families.generalization import fix_cells
from anonymizers.families.generalization.fix_cells import GAP, FixCells, Tessellation

BOX = (0.0, 0.0, 1000.0, 800.0)


def tessellation(ids: np.ndarray, xy: np.ndarray) -> tuple[Tessellation, dict[int, object]]:
    """Voronoi cells of the generators clipped to BOX (GEOS), and the Tessellation with
    the pairs sharing an edge."""
    box = shapely.box(*BOX)
    regions = shapely.voronoi_polygons(shapely.multipoints(xy), extend_to=box)
    polygons = {}
    for region in shapely.get_parts(regions):
        inside = [int(i) for i, p in zip(ids, xy, strict=True)
                  if region.contains(shapely.Point(p))]
        polygons[inside[0]] = shapely.intersection(region, box)
    at = {int(i): p for i, p in zip(ids, xy, strict=True)}
    edges = []  # (a, b, low, high): the shared stretch of the bisector, as 112_cell_edges.sql
    for a, b in itertools.combinations(sorted(polygons), 2):
        shared = shapely.intersection(polygons[a], polygons[b])
        if shared.length > 0:
            middle, e = (at[a] + at[b]) / 2, at[b] - at[a]
            along = (shapely.get_coordinates(shared) - middle) @ (np.array([-e[1], e[0]])
                                                                 / np.hypot(*e))
            edges.append((a, b, along.min(), along.max()))
    order = np.argsort(ids)
    a, b, low, high = (np.array(column) for column in zip(*edges, strict=True))
    cells = Tessellation(np.asarray(ids, np.int64)[order], xy[order, 0].copy(),
                         xy[order, 1].copy(), BOX, a.astype(np.int64), b.astype(np.int64),
                         low, high)
    return cells, polygons


def random_generators(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    xy = np.column_stack([rng.uniform(50, 950, n), rng.uniform(50, 750, n)])
    return rng.permutation(np.arange(10, 10 + 3 * n, 3))[:n], xy


def random_walks(rng: np.random.Generator, trajectories: int, length: int
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Fixes of random walks, some leaving the box: continues, person, x, y."""
    steps = rng.normal(0, 60, size=(trajectories, length, 2))
    start = np.column_stack([rng.uniform(-100, 1100, trajectories),
                             rng.uniform(-100, 900, trajectories)])
    xy = (start[:, None, :] + np.cumsum(steps, axis=1)).reshape(-1, 2)
    continues = np.ones((trajectories, length), dtype=bool)
    continues[:, -1] = False
    person = np.repeat(np.arange(trajectories) // 2, length)  # two trajectories a person
    return continues.ravel(), person, xy[:, 0].copy(), xy[:, 1].copy()


def located(seed: int, generators: int, trajectories: int, length: int
            ) -> tuple[Tessellation, dict[int, object], FixCells]:
    """Random cells and random walks' fixes, each fix located."""
    rng = np.random.default_rng(seed)
    cells, polygons = tessellation(*random_generators(rng, generators))
    fixes = FixCells(*random_walks(rng, trajectories, length))
    fixes.locate(cells)
    return cells, polygons, fixes


def cells_by_polygon(polygons: dict[int, object], x: np.ndarray, y: np.ndarray) -> list[int]:
    """The smallest id of the cells whose polygon holds each point (GEOS), or GAP."""
    found = []
    for px, py in zip(x, y, strict=True):
        holding = [c for c, polygon in polygons.items() if shapely.intersects_xy(polygon, px, py)]
        found.append(min(holding) if holding else GAP)
    return found


def crossings_by_polygon(polygons: dict[int, object], ax: float, ay: float, bx: float,
                         by: float, c1: int, c2: int) -> list[int]:
    """The cells a segment runs through with some length inside them, in order of entry,
    other than its ends' cells (GEOS)."""
    line = shapely.LineString([(ax, ay), (bx, by)])
    entered = []
    for cell, polygon in polygons.items():
        piece = shapely.intersection(polygon, line)
        if cell in (c1, c2) or piece.length < 1e-6:
            continue
        entered.append((line.project(shapely.Point(shapely.get_coordinates(piece)[0]))
                        if piece.geom_type == "LineString"
                        else min(line.project(shapely.Point(c))
                                 for c in shapely.get_coordinates(piece)), cell))
    return [cell for _, cell in sorted(entered)]


def crossings_of(fixes: FixCells) -> dict[int, list[int]]:
    found: dict[int, list[int]] = {}
    for segment, cell in zip(fixes.crossings.segment.tolist(), fixes.crossings.cell.tolist(),
                             strict=True):
        found.setdefault(segment, []).append(cell)
    return found


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_each_fix_is_in_the_cell_whose_polygon_holds_it_and_outside_the_box_in_none(
        seed: int) -> None:
    _, polygons, fixes = located(seed, 25, 20, 30)
    assert (fixes.cell == GAP).any() and (fixes.cell != GAP).any()
    assert fixes.cell.tolist() == cells_by_polygon(polygons, fixes.x, fixes.y)


def test_a_fix_on_an_edge_or_a_vertex_is_in_the_cell_of_the_smallest_id() -> None:
    xy = np.array([[250.0, 400.0], [750.0, 400.0], [500.0, 150.0], [500.0, 650.0]])
    cells, polygons = tessellation(np.array([40, 30, 20, 10]), xy)
    # The vertex of all four, an edge of 40 and 10, one of 30 and 20, box corners, inside 30.
    x = np.array([500.0, 375.0, 625.0, 0.0, 1000.0, 600.0])
    y = np.array([400.0, 525.0, 275.0, 0.0, 800.0, 400.0])
    fixes = FixCells(np.zeros(6, bool), np.zeros(6, int), x, y)
    fixes.locate(cells)
    assert fixes.cell.tolist() == cells_by_polygon(polygons, x, y) == [10, 10, 20, 40, 30, 30]


@pytest.mark.parametrize("seed", [4, 5])
def test_crossings_are_the_cells_a_segment_runs_through_in_order(seed: int) -> None:
    rng = np.random.default_rng(seed)
    cells, polygons = tessellation(*random_generators(rng, 30))
    continues, person, x, y = random_walks(rng, 15, 40)
    x[::7] *= 3  # long jumps, across several cells and out of the box
    fixes = FixCells(continues, person, x, y)
    fixes.locate(cells)
    found, expected = crossings_of(fixes), {}
    for i in np.flatnonzero(continues):
        crossed = crossings_by_polygon(polygons, x[i], y[i], x[i + 1], y[i + 1],
                                       int(fixes.cell[i]), int(fixes.cell[i + 1]))
        if crossed:
            expected[int(i)] = crossed
    assert sum(map(len, expected.values())) > 50
    assert found == expected


@pytest.mark.parametrize("seed", [9, 10])
def test_segments_standing_still_or_along_an_axis_cross_what_their_polygons_say(
        seed: int) -> None:
    """A taxi parked outside the box, or driving parallel to its edge outside it, is in
    no cell between its fixes either: with no move along an axis, a segment outside the
    box's range there misses the box (it once ran from the nearest cell, a visit that no
    polygon holds and the verifier never counts)."""
    rng = np.random.default_rng(seed)
    cells, polygons = tessellation(*random_generators(rng, 30))
    continues, person, x, y = random_walks(rng, 20, 40)
    x[::7] *= 3  # far out of the box, where the next fixes stand or run along an axis
    for every, same_x, same_y in ((3, True, True), (5, True, False), (4, False, True)):
        at = np.arange(every, len(x), every)
        x[at] = np.where(same_x, x[at - 1], x[at])
        y[at] = np.where(same_y, y[at - 1], y[at])
    fixes = FixCells(continues, person, x, y)
    fixes.locate(cells)
    segment = np.flatnonzero(continues)
    outside = segment[(fixes.cell[segment] == GAP) & (fixes.cell[segment + 1] == GAP)
                      & ((x[segment] == x[segment + 1]) | (y[segment] == y[segment + 1]))]
    assert outside.size > 20  # still or along an axis, between two gaps
    found, expected = crossings_of(fixes), {}
    for i in segment:
        crossed = crossings_by_polygon(polygons, x[i], y[i], x[i + 1], y[i + 1],
                                       int(fixes.cell[i]), int(fixes.cell[i + 1]))
        if crossed:
            expected[int(i)] = crossed
    assert found == expected


def test_a_car_parked_outside_the_box_visits_no_cell() -> None:
    cells, _ = tessellation(np.array([1, 2, 3]),
                            np.array([[100.0, 400.0], [500.0, 400.0], [900.0, 400.0]]))
    # Parked west of the box, then along its northern edge but above it, then into cell 3.
    x = np.array([-300.0, -300.0, -300.0, 50.0, 800.0, 900.0])
    y = np.array([400.0, 400.0, 900.0, 900.0, 900.0, 400.0])
    fixes = FixCells(np.array([True] * 5 + [False]), np.zeros(6, int), x, y)
    fixes.locate(cells)
    assert fixes.cell.tolist() == [GAP] * 5 + [3]
    assert crossings_of(fixes) == {}
    (found,) = fixes.visits(np.arange(6) * 60_000_000)
    assert found.cell.tolist() == [3]


def test_moves_skip_gaps_and_take_the_crossings_in_order() -> None:
    # Three cells in a row (ids 1, 2, 3); the trajectory goes 1, gap, 1 -> (2) -> 3, 3;
    # a second one only stays in 3.
    cells, _ = tessellation(np.array([1, 2, 3]),
                            np.array([[100.0, 400.0], [500.0, 400.0], [900.0, 400.0]]))
    x = np.array([100.0, -50.0, 150.0, 950.0, 960.0, 900.0, 910.0])
    y = np.array([400.0, 400.0, 400.0, 400.0, 400.0, 100.0, 110.0])
    continues = np.array([True, True, True, True, False, True, False])
    person = np.array([5, 5, 5, 5, 5, 6, 6])
    fixes = FixCells(continues, person, x, y)
    fixes.locate(cells)
    assert fixes.cell.tolist() == [1, GAP, 1, 3, 3, 3, 3]
    assert crossings_of(fixes) == {2: [2]}
    assert [m.tolist() for m in fixes.moves()] == [[5, 5], [1, 2], [2, 3]]


def test_visits_collapse_repeats_across_gaps_and_time_the_crossings() -> None:
    # The trajectory of the test above: 1, gap, 1 -> (2) -> 3, 3 at minutes 0..4, the
    # crossing of cell 2 entered half way between minutes 2 and 3; then 3, 3.
    cells, _ = tessellation(np.array([1, 2, 3]),
                            np.array([[100.0, 400.0], [500.0, 400.0], [900.0, 400.0]]))
    x = np.array([100.0, -50.0, 150.0, 950.0, 960.0, 900.0, 910.0])
    y = np.array([400.0, 400.0, 400.0, 400.0, 400.0, 100.0, 110.0])
    fixes = FixCells(np.array([True, True, True, True, False, True, False]),
                     np.array([5, 5, 5, 5, 5, 6, 6]), x, y)
    fixes.locate(cells)
    minute = 60_000_000
    times = np.array([0, 1, 2, 3, 4, 10, 11]) * minute
    (found,) = fixes.visits(times)
    assert found.trajectory.tolist() == [0, 0, 0, 1]
    assert found.visit_no.tolist() == [1, 2, 3, 1]
    assert found.cell.tolist() == [1, 2, 3, 3]
    assert found.n_points.tolist() == [2, 1, 2, 2]
    # Cell 2 is entered where the segment (150 -> 950) meets the bisector at 300 m: s 3/16.
    entry = 2 * minute + round(minute * 3 / 16)
    assert found.t_enter.tolist() == [0, entry, 3 * minute, 10 * minute]
    assert found.t_exit.tolist() == [2 * minute, entry, 4 * minute, 11 * minute]


def test_displacement_sums_the_fixes_of_each_cell_and_counts_their_persons() -> None:
    cells, _, fixes = located(4, 15, 10, 20)
    found = fixes.displacement(cells)
    inside = fixes.cell != GAP
    assert (~inside).any() and inside.any()
    for i, cell in enumerate(cells.ids.tolist()):
        mine = fixes.cell == cell
        assert found.n_points[i] == mine.sum()
        assert found.distance_sum[i] == pytest.approx(np.hypot(
            fixes.x[mine] - cells.x[i], fixes.y[mine] - cells.y[i]).sum())
        assert found.persons[i] == np.unique(fixes.person[mine]).size
    assert found.persons_in_cells == np.unique(fixes.person[inside]).size


@pytest.mark.parametrize("seed", [6, 7, 8])
def test_an_update_where_cells_changed_equals_locating_every_fix_again(seed: int) -> None:
    rng = np.random.default_rng(seed)
    ids, xy = random_generators(rng, 30)
    before, old_polygons = tessellation(ids, xy)
    continues, person, x, y = random_walks(rng, 25, 40)
    fixes = FixCells(continues, person, x, y)
    fixes.locate(before)
    # A step: two generators merged into one at their midpoint (it keeps one id), one
    # dropped; an outermost one dropped, so that the box would move in the pipeline.
    keep = np.ones(len(ids), dtype=bool)
    a, b, dropped = rng.choice(len(ids), 3, replace=False)
    xy = xy.copy()
    xy[a] = (xy[a] + xy[b]) / 2
    keep[[b, dropped]] = False
    after, new_polygons = tessellation(ids[keep], xy[keep])
    changed = [c for c, polygon in old_polygons.items()
               if c not in new_polygons or not shapely.equals_exact(polygon, new_polygons[c])]
    assert len(changed) < len(ids) - 5, "the step changed nearly every cell"
    looked_at = fixes.update(after, np.array(changed), box_moved=True)
    assert 0 < looked_at < len(fixes)
    fresh = FixCells(continues, person, x, y)
    fresh.locate(after)
    assert fixes.cell.tolist() == fresh.cell.tolist()
    assert crossings_of(fixes) == crossings_of(fresh)
    np.testing.assert_allclose(fixes.crossings.s, fresh.crossings.s, rtol=0, atol=1e-12)
    for mine, theirs in zip(fixes.moves(), fresh.moves(), strict=True):
        assert mine.tolist() == theirs.tolist()


def test_a_group_s_generator_is_the_mean_of_its_persons_mean_fixes() -> None:
    cells, _, fixes = located(9, 12, 30, 20)
    person, x, y = fixes.person, fixes.x, fixes.y
    groups = {100: [int(cells.ids[0]), int(cells.ids[1])], 200: [int(cells.ids[2])],
              300: [999]}  # a cell without fixes: no support
    support = fixes.group_support(
        np.array([g for g, members in groups.items() for _ in members]),
        np.array([c for members in groups.values() for c in members]))
    assert support.group.tolist() == [100, 200]
    for i, group in enumerate(support.group.tolist()):
        inside = np.isin(fixes.cell, groups[group])
        owners = np.unique(person[inside])
        means = np.array([[x[inside & (person == p)].mean(), y[inside & (person == p)].mean()]
                          for p in owners])
        assert support.n_persons[i] == len(owners)
        assert support.n_points[i] == inside.sum()
        assert (support.x[i], support.y[i]) == pytest.approx(tuple(means.mean(axis=0)))


def test_sums_per_cell_are_those_of_its_fixes() -> None:
    cells, _, fixes = located(10, 15, 10, 30)
    x, y = fixes.x, fixes.y
    sums = fixes.statistics(cells)
    for i, cell in enumerate(cells.ids.tolist()):
        mine = fixes.cell == cell
        assert sums.n_points[i] == mine.sum()
        assert sums.sx[i] == pytest.approx(x[mine].sum())
        assert sums.sxxyy[i] == pytest.approx((x[mine] ** 2 + y[mine] ** 2).sum())
    in_cell = fixes.cell != GAP
    at = np.searchsorted(cells.ids, fixes.cell[in_cell])
    distance = np.hypot(x[in_cell] - cells.x[at], y[in_cell] - cells.y[at])
    assert sums.distance_sum == pytest.approx(distance.sum())
    assert sums.distance_max == pytest.approx(distance.max())


def test_passes_in_chunks_give_what_one_pass_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(11)
    cells, _ = tessellation(*random_generators(rng, 20))
    walks = random_walks(rng, 12, 25)
    whole = FixCells(*walks)
    whole.locate(cells)
    times = np.arange(len(whole)) * 1_000_000
    (one_pass,), one_sum = list(whole.visits(times)), whole.displacement(cells)
    one_length, one_moves = whole.trajectories(), whole.moves()
    one_statistics = whole.statistics(cells)
    monkeypatch.setattr(fix_cells, "QUERY_ROWS", 7)  # chunks ending inside trajectories
    monkeypatch.setattr(fix_cells, "VISIT_ROWS", 7)
    monkeypatch.setattr(fix_cells, "WALK_ROWS", 3)
    chunked = FixCells(*walks)
    chunked.locate(cells)
    assert chunked.cell.tolist() == whole.cell.tolist()
    assert crossings_of(chunked) == crossings_of(whole) != {}
    for mine, theirs in zip(chunked.moves(), one_moves, strict=True):
        assert mine.tolist() == theirs.tolist()
    for mine, theirs in zip(chunked.statistics(cells), one_statistics, strict=True):
        assert mine == pytest.approx(theirs)
    parts = list(chunked.visits(times))  # whole trajectories of about 7 fixes each
    assert len(parts) > 1
    joined = [np.concatenate(column) for column in zip(*parts, strict=True)]
    for mine, theirs in zip(joined, one_pass, strict=True):
        assert mine.tolist() == theirs.tolist()
    for mine, theirs in zip(chunked.displacement(cells), one_sum, strict=True):
        assert mine == pytest.approx(theirs)
    for mine, theirs in zip(chunked.trajectories(), one_length, strict=True):
        assert mine.tolist() == pytest.approx(theirs.tolist())


def test_a_trajectory_s_length_sums_its_own_segments_only() -> None:
    # Two trajectories: a 3-4-5 triangle's two legs, then one fix far away.
    fixes = FixCells(np.array([True, True, False, False]), np.array([0, 0, 0, 1]),
                     np.array([0.0, 3.0, 3.0, 500.0]), np.array([0.0, 0.0, 4.0, 500.0]))
    counts, lengths = fixes.trajectories()
    assert counts.tolist() == [3, 1] and lengths.tolist() == [7.0, 0.0]
    empty = FixCells(np.zeros(0, bool), np.zeros(0), np.zeros(0), np.zeros(0))
    assert [part.tolist() for part in empty.trajectories()] == [[], []]


def test_segments_going_straight_into_the_next_cell_skip_the_walk_and_cross_nothing() -> None:
    cells, _, fixes = located(12, 25, 20, 30)
    continues, x, y = fixes.continues, fixes.x, fixes.y
    first = np.flatnonzero(continues)
    first = first[(fixes.cell[first] != fixes.cell[first + 1]) & (fixes.cell[first] != GAP)
                  & (fixes.cell[first + 1] != GAP)]
    straight = cells.straight(x[first], y[first], x[first + 1] - x[first],
                              y[first + 1] - y[first], fixes.cell[first], fixes.cell[first + 1])
    assert 0 < straight.sum() < len(first)
    assert not np.isin(first[straight], fixes.crossings.segment).any()
    # With no shared edge known, every segment is walked: the same crossings.
    no_edges = dataclasses.replace(cells, low=np.full(len(cells.a), np.inf),
                                   high=np.full(len(cells.a), -np.inf))
    walked = FixCells(continues, fixes.person, x, y)
    walked.locate(no_edges)
    assert crossings_of(walked) == crossings_of(fixes) != {}


def test_a_tessellation_without_known_edges_gives_fixes_cells_and_no_crossing() -> None:
    """Without neighbours a walk cannot leave its first cell: it stops there, with no
    crossing and no error; the fixes' cells and moves do not depend on the edges."""
    cells = Tessellation(np.array([1, 2]), np.array([0.0, 100.0]), np.array([0.0, 0.0]),
                         (-50.0, -50.0, 150.0, 50.0), np.zeros(0, np.int64),
                         np.zeros(0, np.int64), np.zeros(0), np.zeros(0))
    fixes = FixCells(np.array([True, True, False]), np.zeros(3, int),
                     np.array([0.0, 40.0, 90.0]), np.zeros(3))
    fixes.locate(cells)
    assert fixes.cell.tolist() == [1, 1, 2]
    assert len(fixes.crossings.cell) == 0
    assert [m.tolist() for m in fixes.moves()] == [[0], [1], [2]]
