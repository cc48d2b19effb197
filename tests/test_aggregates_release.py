"""Aggregates releases end to end: presence and od publish through Airflow (dag.test() via
the CLI) on the synthetic city and on a T-Drive half-day, verified; the verifier refuses
planted violations; bad zone parameters are refused in prepare with what to do; zones can
be a published generalization release's cells or a place dataset's places."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from pipeline_helpers import assert_plants_refused, catalog_rows, run_steps
from psycopg import sql
from realdata_helpers import tdrive_window

from anonymizers import cli
from anonymizers.errors import InputError
from anonymizers.loading import load_dataset
from anonymizers.release.spec import ReleaseSpec
from anonymizers.synthetic_network import write_place_dataset
from anonymizers.verifiers import verify_release


def _rows(conn: psycopg.Connection, query: str, schema: str) -> list[tuple]:
    return conn.execute(sql.SQL(query).format(s=sql.Identifier(schema))).fetchall()


def _release(dataset: str, method: str, k: int, capsys: pytest.CaptureFixture[str],
             *params: str, window: tuple[str, ...] = ()) -> str:
    argv = ["release", "--dataset", dataset, "--method", method, "--k", str(k), *window]
    for param in params:
        argv += ["--param", param]
    code = cli.main(argv)
    output = capsys.readouterr()
    assert code == 0, output.err
    return output.out.strip().splitlines()[-1]


def _check_published(analyst_url: str, name: str, k: int, table: str,
                     side: float = 500.0) -> list[tuple]:
    """The analyst's view: counts of at least k on the interval filter, bins of one hour,
    zones on the lattice of ``side`` metres, every named zone published."""
    with psycopg.connect(analyst_url) as analyst:
        zones = {zone_id: (x0, y0, x1, y1) for zone_id, x0, y0, x1, y1 in _rows(
            analyst, "SELECT zone_id, ST_XMin(geom), ST_YMin(geom), ST_XMax(geom), "
            "ST_YMax(geom) FROM {s}.zones", name)}
        # Every column but the last, fid (a row number, GIS tools' feature id).
        cells = [row[:-1] for row in analyst.execute(sql.SQL("SELECT * FROM {}").format(
            sql.Identifier(name, table))).fetchall()]
        bins = _rows(analyst, "SELECT bin_start, bin_end, n_lo, n_hi FROM {s}.bin_totals", name)
        totals = _rows(analyst, "SELECT counted, bins, n_lo, n_hi FROM {s}.totals", name)
    assert cells and bins and totals
    for *ids, start, end, n_lo, n_hi in cells:
        assert n_lo >= k and n_hi == n_lo + k - 1 and (end - start).total_seconds() == 3600
        assert set(ids) <= set(zones)
    for x0, y0, x1, y1 in zones.values():
        assert x1 - x0 == side and y1 - y0 == side and x0 % side == 0 and y0 % side == 0
    return cells


@pytest.mark.slow
@pytest.mark.parametrize(("method", "table"), [("presence", "presence_counts"),
                                               ("od", "od_counts")])
def test_both_methods_publish_the_city_through_airflow(loaded_city, conn, capsys,
                                                      analyst_url, method, table):
    extra = ("cell_size=2000",) if method == "od" else ()
    name = _release(loaded_city, method, 3, capsys, *extra)
    assert catalog_rows(conn) == [(name,)]
    assert cli.main(["verify", name]) == 0
    _check_published(analyst_url, name, 3, table, 2000.0 if method == "od" else 500.0)
    metrics = dict(_rows(conn, "SELECT name, value FROM {s}.metrics", name))
    assert 0 < metrics["person_bins_published_share"] <= 1
    assert metrics["attack_location_prosecutor_max"] <= 1 / 3


@pytest.mark.realdata
@pytest.mark.parametrize(("method", "table", "side"), [("presence", "presence_counts", 500.0),
                                                       ("od", "od_counts", 2000.0)])
def test_a_tdrive_half_day_publishes_at_k5(db_url, conn, tmp_path, capsys, analyst_url,
                                          method, table, side):
    """600 taxis over twelve hours of Beijing: counts per 500 m square and hour; moves
    (taxis keep moving) on 2 km squares."""
    start, end = "2008-02-03T00:00:00Z", "2008-02-03T12:00:00Z"
    load_dataset(tdrive_window(tmp_path, start, end), "tdrive", url=db_url)
    name = _release("tdrive", method, 5, capsys, f"cell_size={side}",
                    window=("--start", start, "--end", end))
    assert cli.main(["verify", name]) == 0
    cells = _check_published(analyst_url, name, 5, table, side)
    assert len(cells) >= 10


@pytest.fixture
def built_city(loaded_city: str, conn: psycopg.Connection) -> str:
    """A verified presence build schema of the city, not yet published."""
    spec = ReleaseSpec.from_dict(run_steps({"dataset": loaded_city, "method": "presence",
                                            "k": 3}, until="verify"))
    assert verify_release(conn, spec.build_schema).passed
    return spec.build_schema


def test_the_verifier_refuses_planted_violations(built_city, conn):
    assert_plants_refused(conn, built_city, {
        "a count below k (a cell moved to the next bin, where its zone holds fewer)": (
            "UPDATE {s}.presence_counts AS c SET bin_start = c.bin_start + interval '1 hour', "
            "bin_end = c.bin_end + interval '1 hour' WHERE (c.zone_id, c.bin_start) = ("
            "SELECT p.zone_id, p.bin_start FROM {s}.presence_counts AS p WHERE NOT EXISTS ("
            "SELECT FROM {s}.presence_counts AS q WHERE q.zone_id = p.zone_id "
            "AND q.bin_start = p.bin_start + interval '1 hour') "
            "AND p.bin_end < (SELECT window_end FROM {s}.manifest) - interval '1 hour' "
            "ORDER BY p.bin_start LIMIT 1)", "fewer than k"),
        "a wrong interval": (
            "UPDATE {s}.bin_totals SET n_lo = n_lo + 3, n_hi = n_hi + 3 "
            "WHERE bin_start = (SELECT min(bin_start) FROM {s}.bin_totals)",
            "not the interval filter's"),
        "a zone off the lattice": (
            "UPDATE {s}.zones SET geom = ST_Translate(geom, 7, 0) "
            "WHERE zone_id = (SELECT min(zone_id) FROM {s}.zones)", "not zones of the stated"),
        "a centroid off its square's centre": (
            "UPDATE {s}.zone_centroids SET geom = ST_Translate(geom, 7, 0)", "centroid"),
        "a zone no cell names": (
            "INSERT INTO {s}.zones SELECT (SELECT max(zone_id) + 1 FROM {s}.zones), "
            "ST_Translate(geom, 50000, 0) FROM {s}.zones "
            "LIMIT 1", "not zones of the stated"),
    })


@pytest.mark.parametrize(("params", "message"), [
    ({"zones": "voronoi"}, "zones=voronoi and zones_release"),
    ({"zones_release": "release_nope"}, "zones=voronoi and zones_release"),
    ({"zones": "voronoi", "zones_release": "release_nope"}, "no published generalization"),
    ({"zones": "dataset"}, "has no places"),
    ({"bin_seconds": 86400 * 3}, "shorter than one bin"),
    ({"start": "2000-01-01", "end": "2000-01-02"}, "fewer than k=3 persons"),
])
def test_bad_zone_parameters_are_refused_in_prepare(loaded_city, params, message):
    from anonymizers.pipeline import steps

    with pytest.raises(InputError, match=message) as caught:
        steps.prepare({"dataset": loaded_city, "method": "presence", "k": 3, **params}, None,
                      "run-1")
    assert "\n" not in str(caught.value)


def test_zones_release_must_be_a_generalization_release(loaded_city, conn):
    name = ReleaseSpec.from_dict(run_steps({"dataset": loaded_city, "method": "presence",
                                            "k": 3})).release_name
    with pytest.raises(InputError, match="no published generalization release"):
        run_steps({"dataset": loaded_city, "method": "od", "k": 3, "zones": "voronoi",
                   "zones_release": name, "accept_composition_risk": "test"},
                  until="map_zones")


@pytest.mark.slow
def test_zones_can_be_the_cells_of_a_published_generalization_release(loaded_city, conn):
    """zones=voronoi: the city's second half counted on the cells grid_kam_cut published
    for its first half."""
    t_min, t_max = conn.execute("SELECT t_min, t_max FROM raw.datasets WHERE name = %s",
                                (loaded_city,)).fetchone()
    middle = (t_min + (t_max - t_min) / 2).replace(minute=0, second=0, microsecond=0)
    run_steps({"dataset": loaded_city, "method": "grid_kam_cut", "k": 3, "cell_size": 500.0,
               "end": middle.isoformat()})
    cells_release = catalog_rows(conn)[0][0]
    spec = ReleaseSpec.from_dict(run_steps({
        "dataset": loaded_city, "method": "presence", "k": 3, "zones": "voronoi",
        "zones_release": cells_release, "start": middle.isoformat()}, until="verify"))
    result = verify_release(conn, spec.build_schema)
    assert result.passed, result.violations
    published = {row[0] for row in _rows(conn, "SELECT ST_AsText(geom) FROM {s}.zones",
                                         spec.build_schema)}
    cells = {row[0] for row in conn.execute(sql.SQL("SELECT ST_AsText(geom) FROM {}").format(
        sql.Identifier(cells_release, "cells"))).fetchall()}
    assert published and published <= cells
    assert_plants_refused(conn, spec.build_schema, {
        "a zone that is no cell": ("UPDATE {s}.zones SET geom = ST_Translate(geom, 1, 0)",
                                   "not zones of the stated")})


@pytest.fixture(scope="module")
def metro_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    folder = tmp_path_factory.mktemp("metro")
    files = folder / "visits.csv", folder / "places.csv", folder / "persons.csv"
    write_place_dataset(*files, n_traj=400, seed=3)
    return files


def test_zones_can_be_the_places_of_a_place_dataset(db_url, conn, metro_files):
    visits, places, persons = metro_files
    load_dataset(visits, "metro", persons=persons, places=places, url=db_url)
    spec = ReleaseSpec.from_dict(run_steps({"dataset": "metro", "method": "presence", "k": 3,
                                            "zones": "dataset"}, until="verify"))
    result = verify_release(conn, spec.build_schema)
    assert result.passed, result.violations
    kinds = {row[0] for row in _rows(conn, "SELECT GeometryType(geom) FROM {s}.zones",
                                     spec.build_schema)}
    assert kinds == {"POINT"}
    assert_plants_refused(conn, spec.build_schema, {
        "a place moved": ("UPDATE {s}.zones SET geom = ST_Translate(geom, 1, 0)",
                          "not zones of the stated")})
