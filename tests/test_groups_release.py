"""Trajectory-group releases end to end (seed 004): a place-sequence dataset and a GPS city
mapped onto grid cells, through the Airflow DAG; the published tables as an analyst reads
them; the independent verifier on planted violations; bad parameters."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from pipeline_helpers import assert_plants_refused, catalog_rows, run_steps
from psycopg import sql

from anonymizers import cli
from anonymizers.errors import InputError
from anonymizers.loading import load_dataset
from anonymizers.release.spec import ReleaseSpec
from anonymizers.synthetic_network import write_place_dataset
from anonymizers.verifiers import verify_release


def _rows(conn: psycopg.Connection, query: str, schema: str) -> list[tuple]:
    return conn.execute(sql.SQL(query).format(s=sql.Identifier(schema))).fetchall()


@pytest.fixture(scope="module")
def metro_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """A §5.1 random map of 80 stations and 400 trajectories, as a place-sequence dataset."""
    folder = tmp_path_factory.mktemp("metro")
    files = folder / "visits.csv", folder / "places.csv", folder / "persons.csv"
    write_place_dataset(*files, n_traj=400, seed=3)
    return files


@pytest.fixture
def loaded_metro(db_url: str, metro_files: tuple[Path, Path, Path]) -> str:
    visits, places, persons = metro_files
    load_dataset(visits, "metro", persons=persons, places=places, url=db_url)
    return "metro"


def _release(dataset: str, method: str, k: int, capsys: pytest.CaptureFixture[str],
             *params: str) -> str:
    argv = ["release", "--dataset", dataset, "--method", method, "--k", str(k)]
    for param in params:
        argv += ["--param", param]
    code = cli.main(argv)
    output = capsys.readouterr()
    assert code == 0, output.err
    return output.out.strip().splitlines()[-1]


@pytest.mark.slow
def test_nonoverlapping_publishes_a_place_dataset_with_od_groups_and_ga_classes(
        loaded_metro, conn, capsys, analyst_url):
    name = _release(loaded_metro, "tg_nonoverlapping", 5, capsys, "demographic_grid="
                    "age:0:120:24,income:0:500000:50")
    assert catalog_rows(conn) == [(name,)]
    assert cli.main(["verify", name]) == 0
    with psycopg.connect(analyst_url) as analyst:
        groups = _rows(analyst, "SELECT group_id, places, length, n_lo, n_hi FROM {s}.groups",
                       name)
        places = dict(_rows(analyst, "SELECT place_id, ST_AsText(geom) FROM {s}.places", name))
        od = _rows(analyst, "SELECT group_id, kind, places, n_lo FROM {s}.od_groups", name)
        classes = _rows(analyst, "SELECT group_id, age_lo, age_hi, income_lo, income_hi, n_lo, "
                        "n_hi FROM {s}.demographic_classes", name)
        metrics = dict(_rows(analyst, "SELECT name, value FROM {s}.metrics", name))
    assert groups and all(n_lo >= 5 and n_hi == n_lo + 4 and length == len(seq)
                          for _, seq, length, n_lo, n_hi in groups)
    assert all(p.startswith("s") and places[p].startswith("POINT") for p in places)
    assert {p for _, seq, *_ in groups for p in seq} <= set(places)
    assert od and {kind for _, kind, *_ in od} == {"origin", "destination"}
    assert classes and all(lo < hi and (lo % 5) == 0 for _, lo, hi, *_ in classes)
    assert 0 < metrics["tg_preserved_ratio"] <= 1
    assert "tg_classes_suppressed_by_hiding" in metrics
    # Counts in metrics go through the interval filter (k = 5, I_s = 5).
    assert metrics["tg_od_groups"] <= len(od) < metrics["tg_od_groups"] + 5


@pytest.mark.slow
def test_overlapping_publishes_a_gps_city_on_grid_cells_with_mondrian_classes(
        loaded_city, conn, capsys, analyst_url):
    name = _release(loaded_city, "tg_overlapping", 4, capsys, "demographics=mondrian",
                    "cell_size=400")
    assert cli.main(["verify", name]) == 0
    with psycopg.connect(analyst_url) as analyst:
        groups = _rows(analyst, "SELECT places, n_lo, n_hi FROM {s}.groups", name)
        cells = _rows(analyst, "SELECT place_id, ST_XMin(geom), ST_YMin(geom), ST_XMax(geom), "
                      "ST_YMax(geom) FROM {s}.places", name)
        manifest = _rows(analyst, "SELECT parameters FROM {s}.manifest", name)[0][0]
        classes = _rows(analyst, "SELECT age_lo, age_hi, n_lo FROM {s}.demographic_classes",
                        name)
    assert groups and all(n_hi == n_lo + 3 for _, n_lo, n_hi in groups)
    assert classes and all(lo < hi and n_lo >= 4 for lo, hi, n_lo in classes)
    for place, x0, y0, x1, y1 in cells:
        column, row = map(int, place.split(":"))
        assert (x0, y0, x1, y1) == (column * 400, row * 400, (column + 1) * 400, (row + 1) * 400)
    assert manifest["places"] == "grid" and manifest["demographics"] == "mondrian"


@pytest.fixture
def built_metro(loaded_metro: str, conn: psycopg.Connection) -> str:
    """A verified tg_nonoverlapping build schema of the metro, not yet published."""
    spec = ReleaseSpec.from_dict(run_steps({"dataset": loaded_metro,
                                            "method": "tg_nonoverlapping", "k": 4,
                                            "demographics": "mondrian"}, until="verify"))
    assert verify_release(conn, spec.build_schema).passed
    return spec.build_schema


def test_the_verifier_refuses_planted_violations(built_metro, conn):
    assert_plants_refused(conn, built_metro, {
        "reversed sequence": (
            "UPDATE {s}.groups SET places = (SELECT jsonb_agg(e ORDER BY i DESC) FROM "
            "jsonb_array_elements(places) WITH ORDINALITY AS u(e, i)) WHERE group_id = "
            "(SELECT min(group_id) FROM {s}.groups WHERE length > 1)", ""),
        "interval without the count": (
            "UPDATE {s}.groups SET n_lo = n_lo + 40, n_hi = n_hi + 40", ""),
        "moved place": ("UPDATE {s}.places SET geom = ST_Translate(geom, 7, 0)", ""),
        "class bound off the grid": (
            "UPDATE {s}.demographic_classes SET age_lo = age_lo + 1", ""),
    })


@pytest.mark.parametrize(("params", "message"), [
    ({"method": "tg_overlapping", "k": 6, "interval_size": 2}, "below k/2"),
    ({"method": "tg_overlapping", "k": 6, "interval_size": 3}, "with demographic classes"),
    ({"method": "tg_nonoverlapping", "k": 4, "demographic_grid": "age:0:120"},
     "attribute:lower:upper:bins"),
    ({"method": "tg_nonoverlapping", "k": 4, "demographic_grid": "age:0:50:10"},
     "outside demographic_grid"),
    ({"method": "tg_nonoverlapping", "k": 4, "demographic_grid": "height:0:250:25",
      "demographics": "ga"}, "needs persons with height"),
    ({"method": "tg_nonoverlapping", "k": 4, "places": "dataset"}, "has no places"),
])
def test_bad_parameters_are_refused_with_what_to_do(loaded_city, params, message):
    with pytest.raises(InputError, match=message):
        run_steps({"dataset": loaded_city, **params}, until="build_places_release")


@pytest.mark.slow
def test_places_can_be_the_cells_of_a_published_generalization_release(loaded_city, conn):
    """places=voronoi: a GPS window mapped onto the cells another release published (here
    grid_kam_cut's, on the first half of the day; the groups on the second half)."""
    t_min, t_max = conn.execute("SELECT t_min, t_max FROM raw.datasets WHERE name = %s",
                                (loaded_city,)).fetchone()
    middle = t_min + (t_max - t_min) / 2
    run_steps({"dataset": loaded_city, "method": "grid_kam_cut", "k": 3, "cell_size": 500.0,
               "end": middle.isoformat()})
    cells_release = catalog_rows(conn)[0][0]
    spec = ReleaseSpec.from_dict(run_steps({
        "dataset": loaded_city, "method": "tg_nonoverlapping", "k": 3, "places": "voronoi",
        "places_release": cells_release, "demographics": "mondrian",
        "start": middle.isoformat()}, until="verify"))
    result = verify_release(conn, spec.build_schema)
    assert result.passed, result.violations
    published = dict(_rows(conn, "SELECT place_id, ST_AsText(geom) FROM {s}.places",
                           spec.build_schema))
    cells = dict(conn.execute(sql.SQL("SELECT cell_id::text, ST_AsText(geom) FROM {}").format(
        sql.Identifier(cells_release, "cells"))).fetchall())
    assert published and all(cells[place] == geom for place, geom in published.items())
    assert_plants_refused(conn, spec.build_schema, {
        "a place that is no cell": (
            "UPDATE {s}.places SET place_id = 'x' || place_id", "")})


def test_voronoi_places_need_a_published_generalization_release(loaded_city):
    with pytest.raises(InputError, match="places=voronoi and places_release"):
        run_steps({"dataset": loaded_city, "method": "tg_overlapping", "k": 4,
                   "places": "voronoi"}, until="map_places")
    with pytest.raises(InputError, match="no published generalization release"):
        run_steps({"dataset": loaded_city, "method": "tg_overlapping", "k": 4,
                   "places": "voronoi", "places_release": "release_nope"}, until="map_places")


def test_rerunning_the_steps_gives_the_same_release(loaded_metro, conn):
    """Tasks are idempotent: every step re-run (as Airflow's clear does) starts from empty
    work tables and, with the same seed, builds the same groups and classes."""
    from anonymizers.pipeline import steps

    spec = run_steps({"dataset": loaded_metro, "method": "tg_nonoverlapping", "k": 4,
                      "demographics": "mondrian"}, until="build_places_release")
    schema = ReleaseSpec.from_dict(spec).build_schema
    query = ("SELECT (SELECT array_agg(places::text || n_lo ORDER BY places::text) FROM "
             "{s}.groups), (SELECT array_agg(places::text ORDER BY places::text) FROM "
             "{s}.od_groups), (SELECT array_agg(age_lo::text || n_lo ORDER BY age_lo, n_lo) "
             "FROM {s}.demographic_classes)")
    first = _rows(conn, query, schema)
    for name in ("map_places", "group_trajectories", "demographic_classes",
                 "build_places_release"):
        steps.run_step(name, spec)
    assert _rows(conn, query, schema) == first
    assert all(part for part in first[0])


def test_grid_od_groups_name_all_eight_cells_around_their_centre(loaded_city, conn):
    """A common group names its centre and the 8 lattice cells around it, visited or not:
    which neighbours somebody visited must not show (rule 1)."""
    spec = ReleaseSpec.from_dict(run_steps({
        "dataset": loaded_city, "method": "tg_nonoverlapping", "k": 3, "demographics": "none",
        "cell_size": 500.0}, until="verify"))
    od = _rows(conn, "SELECT places FROM {s}.od_groups", spec.build_schema)
    assert od
    for (places,) in od:
        cells = sorted(tuple(map(int, p.split(":"))) for p in places)
        col, row = cells[4]
        assert cells == [(col + dc, row + dr) for dc in (-1, 0, 1) for dr in (-1, 0, 1)]
    unvisited = _rows(conn, "SELECT count(*) FROM {s}.places WHERE place_id NOT IN "
                      "(SELECT jsonb_array_elements_text(places) FROM {s}.groups)",
                      spec.build_schema)[0][0]
    assert unvisited > 0 and verify_release(conn, spec.build_schema).passed
