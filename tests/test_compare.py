"""The method chooser, ``anonymizers compare`` (issue 11): the uniform utility figures on a
hand-made release whose answers are known, every family's footprint on a real release,
and the command end to end (releases marked as the comparison's and unreadable by analyst,
a refused method kept as a row, the report opened in a real browser)."""

from __future__ import annotations

import json
import math
import sys
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest
from conftest import PUBLISHED_CITY
from psycopg.types.json import Jsonb

from anonymizers.cli import main
from anonymizers.compare.chooser import method_params
from anonymizers.compare.runs import backend_name, run_method
from anonymizers.compare.utility import measure_release, prepare_window
from anonymizers.db.sqlfiles import run_sql_file
from anonymizers.errors import InputError
from anonymizers.families.base import load_family
from anonymizers.families.registry import FAMILIES, METHODS
from anonymizers.loading import load_dataset
from anonymizers.release import gate
from anonymizers.reports.browser import check_page, ensure_chromium

T0 = datetime(2026, 1, 5, tzinfo=UTC)

# Four persons on one parallel (lon/lat, measured in srid 4326 itself: the figures are
# ratios and squares of degrees): a and b go from square L to square R, c stays in L, d is
# alone in F, far east.
FIXES = """traj_id,user_id,t,lon,lat
a1,a,2026-01-05T00:10:00Z,11.01,43.0
a1,a,2026-01-05T00:20:00Z,11.05,43.0
b1,b,2026-01-05T00:10:00Z,11.01,43.0
b1,b,2026-01-05T00:20:00Z,11.05,43.0
c1,c,2026-01-05T00:10:00Z,11.01,43.0
c1,c,2026-01-05T00:30:00Z,11.011,43.0
d1,d,2026-01-05T00:10:00Z,11.10,43.0
d1,d,2026-01-05T00:20:00Z,11.101,43.0
"""
SQUARES = {1: (11.0, 11.02), 2: (11.04, 11.06)}  # L and R, 0.02 degrees wide


@pytest.fixture
def four_persons(db_url: str, tmp_path: Path) -> str:
    path = tmp_path / "four.csv"
    path.write_text(FIXES)
    load_dataset(path, "four", url=db_url)
    return "four"


def _box(x0: float, x1: float) -> str:
    return f"SRID=4326;POLYGON(({x0} 42.99,{x1} 42.99,{x1} 43.01,{x0} 43.01,{x0} 42.99))"


def _generalization_release(conn: psycopg.Connection, name: str,
                            sequences: list[list[int]]) -> None:
    """The tables the generalization footprint reads: cells L, R and trajectories."""
    conn.execute(f"CREATE SCHEMA {name}")
    conn.execute(f"CREATE TABLE {name}.cells (cell_id integer, geom geometry)")
    for cell, (x0, x1) in SQUARES.items():
        conn.execute(f"INSERT INTO {name}.cells VALUES (%s, %s::geometry)",
                     (cell, _box(x0, x1)))
    conn.execute(f"CREATE TABLE {name}.trajectories (traj_id uuid DEFAULT gen_random_uuid(), "
                 "cells jsonb)")
    for cells in sequences:
        conn.execute(f"INSERT INTO {name}.trajectories (cells) VALUES (%s)", (Jsonb(cells),))


def _window(conn: psycopg.Connection):
    return prepare_window(conn, "four", T0, T0.replace(hour=1), 4326, n_queries=5)


def _ask(conn: psycopg.Connection, boxes: list[tuple[float, float]],
         hours: tuple[int, int] = (0, 1)) -> None:
    """Replace the random queries by ``boxes`` over the given span of hours, and the same
    boxes over the whole window (the hour from T0)."""
    conn.execute("TRUNCATE compare_queries")
    for i, (x0, x1) in enumerate(boxes):
        conn.execute("INSERT INTO compare_queries (query_id, box, t_start, t_end, "
                     "whole_window) VALUES (%s, %s::geometry, %s, %s, false)",
                     (i, _box(x0, x1), T0.replace(hour=hours[0]),
                      T0.replace(hour=hours[1]) if hours[1] < 24 else T0.replace(day=6)))
    conn.execute("INSERT INTO compare_queries SELECT query_id + 100, box, %s, %s, true "
                 "FROM compare_queries", (T0, T0.replace(hour=1)))
    run_sql_file(conn, "compare/025_query_truth.sql", {"window_start": T0})


def test_headline_figures_on_a_release_with_known_answers(conn, four_persons):
    _generalization_release(conn, "release_hand", [[1, 2], [1, 2], [1]])  # d suppressed
    window = _window(conn)
    _ask(conn, [(11.0, 11.02), (11.04, 11.06), (11.09, 11.11)])  # L: 3, R: 2, F: 1 person
    found = measure_release(conn, window, "release_hand", "generalization/compare_footprint.sql")
    assert found.fixes_published_share == pytest.approx(6 / 8)  # d's two fixes are not
    assert found.locations == 5
    assert found.area_per_location_m2 == pytest.approx(0.02 * 0.02)
    assert found.queries == 3
    # L: 3 units for 3 persons; R: 2 for 2; F: none for 1 person
    assert found.range_query_error == pytest.approx((0 + 0 + 1) / 3)
    assert found.range_query_error_definitely == pytest.approx((0 + 0 + 1) / 3)
    assert found.range_query_error_whole_window == pytest.approx((0 + 0 + 1) / 3)
    assert found.flow_preservation == pytest.approx(1.0)  # L -> R by two persons, both


def test_lost_and_invented_flows_lower_flow_preservation(conn, four_persons):
    window = _window(conn)
    _generalization_release(conn, "release_stay", [[1], [1], [1]])
    assert measure_release(conn, window, "release_stay",
                           "generalization/compare_footprint.sql").flow_preservation == 0.0
    _generalization_release(conn, "release_more", [[1, 2], [1, 2], [1, 2], [1, 2]])
    found = measure_release(conn, window, "release_more", "generalization/compare_footprint.sql")
    assert found.flow_preservation == pytest.approx(2 / 4)  # min 2 / max 4


def test_a_location_stands_only_for_its_time(conn, four_persons):
    """Clustering regions hold [t_start, t_end): a fix outside it is not published there."""
    conn.execute("CREATE SCHEMA release_timed")
    conn.execute("CREATE TABLE release_timed.groups (group_id integer, n_persons integer)")
    conn.execute("INSERT INTO release_timed.groups VALUES (1, 3)")
    conn.execute("CREATE TABLE release_timed.group_regions (group_id integer, seq integer, "
                 "t_start timestamptz, t_end timestamptz, geom geometry)")
    conn.execute("INSERT INTO release_timed.group_regions VALUES (1, 0, %s, %s, %s::geometry)",
                 (T0, T0.replace(minute=15), _box(11.0, 11.02)))
    conn.execute("CREATE TABLE release_timed.manifest (parameters jsonb)")
    conn.execute("""INSERT INTO release_timed.manifest VALUES ('{"interval": 60}')""")
    window = _window(conn)
    _ask(conn, [(11.0, 11.02), (11.0, 11.02)])
    conn.execute("UPDATE compare_queries SET t_start = %s, t_end = %s, truth = 1 "
                 "WHERE query_id = 1", (T0.replace(minute=25), T0.replace(minute=35)))
    found = measure_release(conn, window, "release_timed", "clustering/compare_footprint.sql")
    assert found.fixes_published_share == pytest.approx(3 / 8)  # a, b, c at 00:10 only
    # the whole hour: 3 persons, 3 published; 00:25-00:35: c, and nothing published then
    assert found.range_query_error == pytest.approx((0 + 1) / 2)
    assert found.range_query_error_whole_window == pytest.approx(0)  # both boxes: 3 for 3


def test_a_withheld_mob_position_is_no_location(conn, four_persons):
    """A MOB region holding the CRS's whole area of use says nothing about where: it neither
    covers fixes nor meets range queries."""
    conn.execute("CREATE SCHEMA release_mob")
    conn.execute("CREATE TABLE release_mob.positions (object_id integer, t timestamptz, "
                 "geom geometry)")
    at = T0.replace(minute=10)
    conn.execute("INSERT INTO release_mob.positions VALUES (1, %s, %s::geometry), "
                 "(2, %s, 'SRID=4326;POLYGON((-180 -90,180 -90,180 90,-180 90,-180 -90))')",
                 (at, _box(11.0, 11.02), at))
    conn.execute("CREATE TABLE release_mob.manifest (parameters jsonb)")
    conn.execute("""INSERT INTO release_mob.manifest VALUES ('{"interval": 300}')""")
    window = _window(conn)
    _ask(conn, [(11.09, 11.11)])  # F: d, whom only the withheld region would "meet"
    found = measure_release(conn, window, "release_mob", "mob/compare_footprint.sql")
    assert found.locations == 1
    assert found.fixes_published_share == pytest.approx(3 / 8)  # a, b, c at 00:10 in L
    assert found.range_query_error == pytest.approx(1.0)  # F: 0 estimated for 1


def test_every_family_lists_its_published_locations(published_city, published_city_db):
    assert {METHODS[m].family for m in PUBLISHED_CITY} == set(FAMILIES)
    with psycopg.connect(published_city_db, autocommit=True) as conn:
        start, end, srid = conn.execute(
            f"SELECT window_start, window_end, srid FROM "
            f"{published_city['grid_kam_cut']}.manifest").fetchone()
        window = prepare_window(conn, "city", start, end, srid)
        for method, release in published_city.items():
            footprint = load_family(METHODS[method].family).footprint
            assert footprint is not None, method
            found = measure_release(conn, window, release, footprint)
            assert 0 < found.fixes_published_share <= 1, method
            assert found.locations > 0 and found.area_per_location_m2 > 0, method
            assert 0 <= found.flow_preservation <= 1, method
            assert found.queries > 0 and found.range_query_error >= 0, method


def test_parameters_go_to_the_methods_that_take_them():
    chosen = method_params(["grid_kam_cut", "kam_rec", "tcaa"],
                           ["count_interval=4", "grid_kam_cut.cell_size=250"])
    assert chosen["grid_kam_cut"] == {"count_interval": "4", "cell_size": "250"}
    assert chosen["tcaa"] == {"count_interval": "4"}
    for bad, said in (("cell_size", "key=value"), ("tcaa.cell_sise=3", "no compared method"),
                      ("mob_symmetric.interval=60", "not among the compared"),
                      ("comparison=x", "no compared method")):
        with pytest.raises(InputError, match=said):
            method_params(["grid_kam_cut", "tcaa"], [bad])


def test_compare_publishes_for_the_comparison_only(db_url, loaded_city, tmp_path, capsys):
    out = tmp_path / "comparison"
    code = main(["compare", "--dataset", "city", "--k", "3",
                 "--methods", "grid_kam_cut,tcaa", "--param", "grid_kam_cut.cell_size=500",
                 "--param", "tcaa.slice_seconds=-5", "--out", str(out)])
    assert code == 0
    figures = json.loads((out / "comparison.json").read_text())
    by_method = {m["method"]: m for m in figures["methods"]}
    grid, tcaa = by_method["grid_kam_cut"], by_method["tcaa"]
    assert tcaa["run"]["release"] is None and "slice_seconds" in tcaa["run"]["error"]
    release = grid["run"]["release"]
    assert release.startswith("release_city_grid_kam_cut_")
    assert 0 < grid["headline"]["fixes_published_share"] <= 1
    assert 0 < grid["risk"]["covered_max"] <= 1 / 3 + 1e-9
    assert grid["run"]["peak_rss_mib"] > 50 and grid["run"]["wall_s"] > 0
    assert "| grid_kam_cut |" in capsys.readouterr().out
    with psycopg.connect(db_url, autocommit=True) as conn:
        marked = conn.execute("SELECT comparison, composition_risk FROM catalog.releases "
                              "WHERE release_name = %s", (release,)).fetchone()
        assert marked[0] == figures["comparison"] and "this comparison only" in marked[1]
        assert not conn.execute("SELECT has_schema_privilege('analyst', %s, 'USAGE')",
                                (release,)).fetchone()[0]
        assert conn.execute("SELECT count(*) FROM catalog.latest").fetchone()[0] == 0
        # still in the ledger: an ordinary release of the same window is refused
        spec = gate.resolve_spec(conn, {"dataset": "city", "method": "grid_kam_cut", "k": 3,
                                        "start": figures["window"]["start"],
                                        "end": figures["window"]["end"]}, None, "check")
        with pytest.raises(InputError, match="overlaps 1 published"):
            gate.check_composition(conn, spec)
    check = check_page(out / "index.html", tmp_path / "shot.png", ensure_chromium())
    assert check.passed, check
    assert (out / "comparison.png").stat().st_size > 10_000
    assert math.isclose(figures["k"], 3)


# A method's release process in miniature: it starts a long query through our connect() and
# prints its backend's pid; "crash" dies at once (SIGKILL) with the query sent, "timeout"
# waits for it until run_method stops it.
SLEEPER = """
import os, signal, sys
from anonymizers.db.connection import connect
conn = connect(autocommit=True)
print(conn.info.backend_pid, flush=True)
if sys.argv[1] == "crash":
    conn.pgconn.send_query(b"SELECT pg_sleep(600)")
    conn.pgconn.flush()
    os.kill(os.getpid(), signal.SIGKILL)
conn.execute("SELECT pg_sleep(600)")
"""


@pytest.mark.parametrize(("end", "said"), [("timeout", "not finished in 4 s"),
                                           ("crash", "exit code -9")])
def test_a_method_that_ended_abnormally_leaves_no_query_running(db_url, tmp_path, end, said):
    # PostgreSQL runs a dead client's query on (a killed MLA run's for 35 minutes).
    name = backend_name("city_20260101T000000_abcd", "mla_iterative_kmeans")
    assert len(name.encode()) <= 63 and name.startswith("anonymizers compare city_")
    run = run_method([sys.executable, "-c", SLEEPER, end], "sleeper", db_url,
                     tmp_path / "sleeper.log", 4 if end == "timeout" else 60,
                     application_name=name)
    assert run.release is None and run.error is not None and run.error.startswith(said)
    assert run.wall_s < 20
    backend = int(Path(run.log).with_suffix(".out").read_text().split()[0])
    with psycopg.connect(db_url, autocommit=True) as conn:
        left = conn.execute("SELECT pid, query FROM pg_stat_activity WHERE pid = %s "
                            "OR application_name = %s", (backend, name)).fetchall()
    assert left == []
