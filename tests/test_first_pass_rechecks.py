"""The first privacy pass, replayed on every family that publishes coordinates: one
published release of the small city per family (conftest's ``published_city``: grid_kam_cut,
mob_symmetric, tcaa, mla_iterative_kmeans, tg_nonoverlapping with grid places).

* a clip box or extent that is the data's own: no side of a published geometry column's
  extent is the window's outermost fix, to the millimetre, give or take any numeric
  parameter of the manifest (the Voronoi box was the fixes' extent plus r);
* a coordinate computed from fewer than k persons: every published vertex lies on the
  family's declared lattice (a lattice that does not depend on the data), so no vertex is
  any person's coordinate (the generator was a parked taxi's place);
* homogeneity: published sequences of places (trajectory groups) whose prefix has a single
  continuation tell whoever knows a target took the prefix where they went next; the
  release publishes that share (as the generalization family does).

Each replay is also run against a planted fault, so it can fail.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from psycopg import sql

from anonymizers.release.spec import area_of_use
from anonymizers.verifiers import verify_release
from anonymizers.verifiers.base import interval_count

# The parameter whose lattice every published vertex of a method lies on, and its divisor
# (the grid's cells publish their centres too: half a cell).
LATTICE = {"grid_kam_cut": ("cell_size", 2), "mob_symmetric": ("cell_size", 1),
           "tcaa": ("snap", 1), "mla_iterative_kmeans": ("epsilon", 1),
           "tg_nonoverlapping": ("cell_size", 2)}  # groups drawn through squares' centres
TOLERANCE_M = 1e-3


@pytest.fixture
def city_conn(published_city_db: str) -> Iterator[psycopg.Connection]:
    with psycopg.connect(published_city_db) as conn:
        yield conn


def _one(conn: psycopg.Connection, query: sql.Composed | str,
         params: dict[str, Any] | None = None) -> tuple[Any, ...]:
    row = conn.execute(query, params).fetchone()
    assert row is not None
    return row


def _manifest(conn: psycopg.Connection, schema: str) -> dict:
    row = _one(conn, sql.SQL("SELECT parameters, srid, dataset, window_start, window_end "
                             "FROM {}.manifest").format(sql.Identifier(schema)))
    params = row[0] if isinstance(row[0], dict) else json.loads(row[0])
    return {"params": params, "srid": row[1], "dataset": row[2], "start": row[3],
            "end": row[4]}


def _geometry_columns(conn: psycopg.Connection, schema: str) -> list[tuple[str, str]]:
    return conn.execute("SELECT f_table_name, f_geometry_column FROM geometry_columns "
                        "WHERE f_table_schema = %s ORDER BY 1, 2", (schema,)).fetchall()


def _fix_extent(conn: psycopg.Connection, manifest: dict) -> tuple[float, ...]:
    """The window's own extent in the release's CRS: what a clip box must never be."""
    window = {"srid": manifest["srid"], "dataset": manifest["dataset"],
              "start": manifest["start"], "end": manifest["end"],
              **area_of_use(manifest["srid"])}
    return _one(
        conn, "SELECT min(ST_X(xy)), min(ST_Y(xy)), max(ST_X(xy)), max(ST_Y(xy)) "
        "FROM raw.points JOIN raw.datasets USING (dataset_id), "
        "ST_Transform(geom, %(srid)s) AS xy WHERE name = %(dataset)s "
        "AND t >= %(start)s AND t < %(end)s AND lon BETWEEN %(lon_min)s AND %(lon_max)s "
        "AND lat BETWEEN %(lat_min)s AND %(lat_max)s", window)


def data_extent_sides(conn: psycopg.Connection, schema: str) -> list[str]:
    """The sides of published extents that are the window's outermost fix, give or take a
    numeric parameter of the manifest: 'table.column side (parameter)'."""
    manifest = _manifest(conn, schema)
    fixes = _fix_extent(conn, manifest)
    shifts = {"0": 0.0, **{name: float(value) for name, value in manifest["params"].items()
                           if isinstance(value, int | float) and not isinstance(value, bool)}}
    found = []
    for table, column in _geometry_columns(conn, schema):
        sides = _one(conn, sql.SQL(
            "SELECT ST_XMin(e), ST_YMin(e), ST_XMax(e), ST_YMax(e) "
            "FROM (SELECT ST_Extent({c}) AS e FROM {t}) AS x").format(
            c=sql.Identifier(column), t=sql.Identifier(schema, table)))
        if sides[0] is None:
            continue
        for side, value, fix, outward in zip(("west", "south", "east", "north"), sides,
                                             fixes, (-1, -1, 1, 1), strict=True):
            found += [f"{table}.{column} {side} ({name})" for name, shift in shifts.items()
                      if abs(value - outward * shift - fix) < TOLERANCE_M]
    return found


def off_lattice_vertices(conn: psycopg.Connection, schema: str, lattice: float) -> int:
    """Published vertices (every geometry column) with a coordinate off the lattice."""
    off = 0
    for table, column in _geometry_columns(conn, schema):
        off += _one(conn, sql.SQL(
            "SELECT count(*) FROM {t}, ST_DumpPoints({c}) AS d, "
            "unnest(ARRAY[ST_X(d.geom), ST_Y(d.geom)]) AS v "
            "WHERE abs(v / %(l)s - round(v / %(l)s)) * %(l)s > %(tol)s").format(
            c=sql.Identifier(column), t=sql.Identifier(schema, table)),
            {"l": lattice, "tol": TOLERANCE_M})[0]
    return off


def _lattice(conn: psycopg.Connection, method: str, schema: str) -> float:
    name, divisor = LATTICE[method]
    return float(_manifest(conn, schema)["params"][name]) / divisor


@pytest.mark.slow
@pytest.mark.parametrize("method", sorted(LATTICE))
def test_no_published_extent_is_the_window_s_own(published_city, city_conn, method):
    schema = published_city[method]
    assert _geometry_columns(city_conn, schema)
    assert data_extent_sides(city_conn, schema) == []


@pytest.mark.slow
@pytest.mark.parametrize("method", sorted(LATTICE))
def test_every_published_vertex_lies_on_the_family_s_lattice(published_city, city_conn,
                                                             method):
    schema = published_city[method]
    assert off_lattice_vertices(city_conn, schema, _lattice(city_conn, method, schema)) == 0


@pytest.mark.slow
def test_the_replays_find_a_planted_data_extent_and_an_off_lattice_edge(published_city,
                                                                        city_conn):
    """A TCAA rectangle whose west edge is the window's westmost fix minus snap (the
    first pass's clip box, one lattice step out) and one moved by a metre."""
    schema = published_city["tcaa"]
    west = _fix_extent(city_conn, _manifest(city_conn, schema))[0]
    one = sql.SQL("(group_id, seq) = (SELECT group_id, seq FROM {r} LIMIT 1)").format(
        r=sql.Identifier(schema, "group_regions"))
    with city_conn.transaction(force_rollback=True):
        city_conn.execute(sql.SQL(
            "UPDATE {r} SET geom = ST_MakeEnvelope(%s - 50, ST_YMin(geom), ST_XMax(geom), "
            "ST_YMax(geom), ST_SRID(geom)) WHERE {one}").format(
            r=sql.Identifier(schema, "group_regions"), one=one), (west,))
        assert "group_regions.geom west (snap)" in data_extent_sides(city_conn, schema)
    with city_conn.transaction(force_rollback=True):
        city_conn.execute(sql.SQL("UPDATE {r} SET geom = ST_Translate(geom, 1, 0) "
                                  "WHERE {one}").format(
            r=sql.Identifier(schema, "group_regions"), one=one))
        # the ring's five points (the last closes it), each x a metre off
        assert off_lattice_vertices(city_conn, schema, 50.0) == 5


@pytest.mark.slow
def test_trajectory_groups_publish_the_share_of_prefixes_with_one_continuation(
        published_city, city_conn):
    """Homogeneity on the groups' sequences: the prefix tree of every published group, a
    prefix followed by exactly one place tells where a target who travelled it went next."""
    from anonymizers.families.generalization.homogeneity import homogeneity

    schema = published_city["tg_nonoverlapping"]
    sequences = [places for (places,) in city_conn.execute(sql.SQL(
        "SELECT places FROM {}").format(sql.Identifier(schema, "groups"))).fetchall()]
    codes: dict[str, int] = {}
    found = homogeneity([[codes.setdefault(p, len(codes)) for p in s] for s in sequences])
    metrics = dict(city_conn.execute(sql.SQL("SELECT name, value FROM {}").format(
        sql.Identifier(schema, "metrics"))).fetchall())
    assert found.continued and found.homogeneous  # the attack finds such prefixes
    k = city_conn.execute(sql.SQL("SELECT k FROM {}").format(
        sql.Identifier(schema, "manifest"))).fetchone()[0]
    assert metrics["homogeneous_prefix_share"] == pytest.approx(  # from filtered counts
        interval_count(found.homogeneous, k, k) / interval_count(found.continued, k, k))


@pytest.mark.slow
def test_the_shared_clip_rule_reads_polygons_of_any_geometry_column(published_city,
                                                                   city_conn):
    """Trajectory groups publish their places in a geometry(Geometry) column (cells,
    points or Voronoi cells): the shared rule must see a clip side there off the lattice,
    not only the family's own check of each place."""
    schema = published_city["tg_nonoverlapping"]
    with city_conn.transaction(force_rollback=True):
        city_conn.execute(sql.SQL(
            "UPDATE {p} SET geom = ST_MakeEnvelope(ST_XMin(geom), ST_YMin(geom), "
            "ST_XMax(geom) + 1, ST_YMax(geom), ST_SRID(geom)) WHERE place_id = "
            "(SELECT place_id FROM {p} ORDER BY ST_XMax(geom) DESC LIMIT 1)").format(
            p=sql.Identifier(schema, "places")))
        result = verify_release(city_conn, schema)
    assert any("east edge of places" in v and "500 m lattice" in v
               for v in result.violations), result.violations


@pytest.mark.slow
def test_a_tcaa_group_pins_its_members_to_its_next_rectangles(published_city, city_conn):
    """Homogeneity on TCAA is the model: whoever knows where a published target was at one
    time point of a slice, and finds one group's rectangle there, learns the target's
    rectangles for the rest of the slice (every member is in all of them). Replayed on the
    members' positions the verifier derives: most lie in exactly one group's rectangle,
    and that group has k members (what the model promises, all it promises)."""
    from anonymizers.families.clustering.verifier import support_window
    from anonymizers.families.clustering.verifier_support import derive_support
    from anonymizers.verifiers.base import read_release

    schema = published_city["tcaa"]
    release = read_release(city_conn, schema)
    support = derive_support(city_conn, schema, support_window(release))
    boxes, positions = support.boxes, support.positions
    last_t = {}  # each group's last time point: no rectangle follows it
    for group, t in zip(boxes.group.tolist(), boxes.t.tolist(), strict=True):
        last_t[group] = max(last_t.get(group, t), t)
    point, box = boxes.holding(positions.t, positions.x, positions.y)
    holding: dict[int, set[int]] = {}
    for p, b in zip(point.tolist(), box.tolist(), strict=True):
        holding.setdefault(p, set()).add(int(boxes.group[b]))
    members = set(zip(support.member_group.tolist(), support.member_person.tolist(),
                      strict=True))
    pinned = followed = 0
    for p, groups in holding.items():
        mine = [g for g in groups if (g, int(positions.person[p])) in members]
        if mine and positions.t[p] < last_t[mine[0]]:
            followed += 1
            pinned += len(groups) == 1
    sizes = {group: n for group, _, n in support.rows()}
    assert followed and pinned / followed > 0.5
    assert min(sizes.values()) >= release.k


@pytest.mark.slow
def test_voronoi_places_are_a_published_release_s_cells_with_no_data_extent(loaded_city,
                                                                           conn):
    """Trajectory groups with places=voronoi publish the Voronoi cells of a kam_cut
    release (first half of the day; the groups on the second half): no extent of either
    release is its window's own, every place is exactly one of the cells, and each cell's
    generator is on the snap lattice (its k persons the generalization verifier checks)."""
    from pipeline_helpers import catalog_rows, run_steps

    t_min, t_max = _one(conn, "SELECT t_min, t_max FROM raw.datasets WHERE name = %(n)s",
                        {"n": loaded_city})
    middle = (t_min + (t_max - t_min) / 2).isoformat()
    run_steps({"dataset": loaded_city, "method": "kam_cut", "k": 3, "radius": 300.0,
               "end": middle})
    cells = catalog_rows(conn)[0][0]
    run_steps({"dataset": loaded_city, "method": "tg_nonoverlapping", "k": 3,
               "places": "voronoi", "places_release": cells, "demographics": "none",
               "start": middle})
    groups = next(name for (name,) in catalog_rows(conn) if name != cells)
    assert data_extent_sides(conn, cells) == [] and data_extent_sides(conn, groups) == []
    snap = float(_manifest(conn, cells)["params"]["snap"])
    faults = _one(conn, sql.SQL(
        "SELECT count(*) FILTER (WHERE c.cell_id IS NULL), "
        "       count(*) FILTER (WHERE abs(v / %(s)s - round(v / %(s)s)) * %(s)s > %(t)s), "
        "       count(*) "
        "FROM {p} AS p LEFT JOIN {c} AS c "
        "  ON c.cell_id::text = p.place_id AND ST_Equals(c.geom, p.geom) "
        "LEFT JOIN {q} AS q USING (cell_id) "
        "LEFT JOIN LATERAL unnest(ARRAY[ST_X(q.geom), ST_Y(q.geom)]) AS v ON true"
    ).format(p=sql.Identifier(groups, "places"), c=sql.Identifier(cells, "cells"),
             q=sql.Identifier(cells, "cell_centroids")),
        {"s": snap, "t": TOLERANCE_M})
    assert faults[0] == 0 and faults[1] == 0 and faults[2] > 0
