"""Tests of place-sequence loading (anonymizers/loading/places.py): visits + a places file.

Every refused load is checked twice, as in test_loading.py: the message (the file, the
lines, what to do) and the database (nothing written; with --replace the old version,
places included, left as it was).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import psycopg
import pyarrow.compute as pc
import pytest
from shapely.geometry import Point, Polygon

from anonymizers.cli import main as cli_main
from anonymizers.db.migrate import migrate
from anonymizers.errors import InputError
from anonymizers.loading import LoadResult, load_dataset
from anonymizers.loading import store as store_module
from anonymizers.loading.validation import RowChunk, SequenceChecks

PLACES_HEADER = "place,lon,lat"
VISITS_HEADER = "traj_id,user_id,t,place"
Row = Sequence[object]

# Three stations; coordinates with awkward binary expansions, written as a user would.
PLACES: list[Row] = [
    ("Centrale", "11.2480612", "43.7763271"),
    ("Campo di Marte", "11.27838400000001", "43.77743"),
    ("Rifredi", "11.2486", "43.7953"),
]
# Two trajectories of two persons, one station visited twice.
VISITS: list[Row] = [
    ("a", "u1", "2020-01-01T08:00:00Z", "Centrale"),
    ("a", "u1", "2020-01-01T08:12:00Z", "Rifredi"),
    ("a", "u1", "2020-01-01T08:30:00Z", "Centrale"),
    ("b", "u2", "2020-01-01T09:00:00Z", "Campo di Marte"),
    ("b", "u2", "2020-01-01T09:20:00Z", "Centrale"),
]


# --------------------------------------------------------------------------- helpers


def write_rows(path: Path, rows: Sequence[Row], header: str | None) -> Path:
    lines = [] if header is None else [header]
    lines += [",".join(str(value) for value in row) for row in rows]
    path.write_text("\n".join(lines) + "\n" if lines else "")
    return path


def write_places(tmp_path: Path, rows: Sequence[Row] = PLACES, header: str | None = PLACES_HEADER,
                 name: str = "places.csv") -> Path:
    return write_rows(tmp_path / name, rows, header)


def write_visits(tmp_path: Path, rows: Sequence[Row] = VISITS, header: str | None = VISITS_HEADER,
                 name: str = "visits.csv") -> Path:
    return write_rows(tmp_path / name, rows, header)


def visit(traj: str, m: int, place: str, user: str = "u1") -> Row:
    return (traj, user, f"2020-01-01T08:{m:02d}:00Z", place)


def load(tmp_path: Path, visits: Sequence[Row] = VISITS, places: Sequence[Row] = PLACES,
         dataset: str = "x", **options: Any) -> LoadResult:
    """Visits and places from files of their own (a fresh folder each time), as ``dataset``."""
    folder = tmp_path / f"files{len(list(tmp_path.glob('files*')))}"
    folder.mkdir()
    return load_dataset(write_visits(folder, visits), dataset,
                        places=write_places(folder, places), **options)


@dataclass(frozen=True)
class DatabaseState:
    """Everything a load may write, places included."""

    datasets: tuple[tuple[Any, ...], ...]  # (dataset_id, name, n_points, places_file)
    points: tuple[tuple[Any, ...], ...]  # (dataset_id, traj_id, t, lon, lat)
    persons: tuple[tuple[Any, ...], ...]  # (dataset_id, user_id)
    places: tuple[tuple[Any, ...], ...]  # (dataset_id, place, lon, lat)
    tables: tuple[str, ...]  # raw.points_N, its leaves, raw.persons_N


def database_state(conn: psycopg.Connection) -> DatabaseState:
    def rows(query: str) -> tuple[tuple[Any, ...], ...]:
        return tuple(tuple(row) for row in conn.execute(query).fetchall())

    return DatabaseState(
        datasets=rows("SELECT dataset_id, name, n_points, places_file FROM raw.datasets "
                      "ORDER BY 1"),
        points=rows("SELECT dataset_id, traj_id, t, lon, lat FROM raw.points ORDER BY 1, 2, 3"),
        persons=rows("SELECT dataset_id, user_id FROM raw.persons ORDER BY 1, 2"),
        places=rows("SELECT dataset_id, place, lon, lat FROM raw.places ORDER BY 1, 2"),
        tables=tuple(name for (name,) in rows(
            "SELECT relname FROM pg_class WHERE relnamespace = 'raw'::regnamespace "
            "AND relname ~ '^(points|persons)_[0-9]' AND relkind IN ('r', 'p') ORDER BY 1")),
    )


EMPTY = DatabaseState(datasets=(), points=(), persons=(), places=(), tables=())


def expect_rejected(conn: psycopg.Connection, visits: Path, places: Path | None,
                    *fragments: str, dataset: str = "x", **options: Any) -> str:
    """The load must raise InputError holding every fragment and change nothing."""
    before = database_state(conn)
    with pytest.raises(InputError) as caught:
        load_dataset(visits, dataset, places=places, **options)
    message = str(caught.value)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    assert database_state(conn) == before
    return message


def visits_with_places(conn: psycopg.Connection, dataset_id: int) -> list[tuple[Any, ...]]:
    """(traj_id, user_id, t, place) of a dataset, each fix joined exactly to its place."""
    return conn.execute(
        "SELECT p.traj_id, p.user_id, to_char(p.t AT TIME ZONE 'UTC', "
        "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), pl.place FROM raw.points AS p "
        "LEFT JOIN raw.places AS pl ON pl.dataset_id = p.dataset_id "
        "AND pl.lon = p.lon AND pl.lat = p.lat WHERE p.dataset_id = %s "
        "ORDER BY p.traj_id, p.t", (dataset_id,)).fetchall()


# --------------------------------------------------------------------------- loading


def test_visits_load_as_fixes_at_their_places(conn: psycopg.Connection, tmp_path: Path) -> None:
    result = load(tmp_path)
    assert visits_with_places(conn, result.dataset_id) == [tuple(row) for row in VISITS]
    places = conn.execute("SELECT place, lon, lat, ST_X(geom), ST_Y(geom), ST_SRID(geom) "
                          "FROM raw.places WHERE dataset_id = %s ORDER BY place",
                          (result.dataset_id,)).fetchall()
    # The very float64 the text denotes (correctly rounded), in the table and its geometry.
    assert places == sorted((name, float(lon), float(lat), float(lon), float(lat), 4326)
                            for name, lon, lat in PLACES)
    row = conn.execute("SELECT n_points, n_trajectories, n_persons, places_file, load_report "
                       "FROM raw.datasets WHERE dataset_id = %s", (result.dataset_id,)).fetchone()
    assert row[:4] == (5, 2, 2, str((tmp_path / "files0" / "places.csv").resolve()))
    assert row[4]["n_places"] == 3 and row[4]["dropped"] == {}
    assert "3 places from" in result.summary()


def test_the_fixes_carry_the_places_float8_bit_for_bit(conn: psycopg.Connection,
                                                       tmp_path: Path) -> None:
    places = [("p1", "0.1", "0.2"), ("p2", "-73.98765432101234", "40.7"), ("p3", "1e-7", "-33.3")]
    visits = [visit("a", m, name) for m, (name, *_) in enumerate(places)]
    result = load(tmp_path, visits, places)
    pairs = conn.execute(
        "SELECT float8send(p.lon) = float8send(pl.lon) AND float8send(p.lat) = float8send(pl.lat)"
        " FROM raw.points AS p JOIN raw.places AS pl USING (dataset_id, lon, lat) "
        "WHERE dataset_id = %s", (result.dataset_id,)).fetchall()
    assert pairs == [(True,)] * 3
    stored = conn.execute("SELECT lon, lat FROM raw.points ORDER BY t").fetchall()
    assert stored == [(float(lon), float(lat)) for _, lon, lat in places]


def test_every_visit_joins_exactly_one_place(conn: psycopg.Connection, tmp_path: Path) -> None:
    places = [(f"s{i}", f"{11 + i / 7:.15f}", f"{43 + i / 13:.15f}") for i in range(40)]
    visits = [visit(f"t{i}", m, f"s{(i * 7 + m * 3) % 40}", user=f"u{i}")
              for m in range(20) for i in range(6)]
    visits.sort(key=lambda row: (row[0], row[2]))
    result = load(tmp_path, visits, places)
    joined = visits_with_places(conn, result.dataset_id)
    assert [row[3] for row in joined] == [row[3] for row in visits]
    (matches,) = conn.execute("SELECT max(n) FROM (SELECT count(pl.*) AS n FROM raw.points AS p "
                              "JOIN raw.places AS pl USING (dataset_id, lon, lat) "
                              "GROUP BY p.traj_id, p.t) AS per_fix").fetchone()
    assert matches == 1


def test_persons_file_works_with_visits(conn: psycopg.Connection, tmp_path: Path) -> None:
    persons = write_rows(tmp_path / "persons.csv", [("u1", 30), ("u2", 41)], "user_id,age")
    result = load(tmp_path, persons=persons)
    assert conn.execute("SELECT user_id, age FROM raw.persons WHERE dataset_id = %s "
                        "ORDER BY 1", (result.dataset_id,)).fetchall() == [("u1", 30), ("u2", 41)]


def test_persons_file_missing_a_person_of_the_visits_is_rejected(conn: psycopg.Connection,
                                                                tmp_path: Path) -> None:
    persons = write_rows(tmp_path / "persons.csv", [("u1", 30)], "user_id,age")
    expect_rejected(conn, write_visits(tmp_path), write_places(tmp_path), str(persons),
                    "1 person(s) referenced by the points have no row here ('u2')",
                    persons=persons)


def test_visits_without_user_id_make_each_trajectory_its_own_person(
        conn: psycopg.Connection, tmp_path: Path) -> None:
    rows = [(traj, t, place) for traj, _, t, place in VISITS]
    result = load_dataset(write_visits(tmp_path, rows, "traj_id,t,place"), "x",
                          places=write_places(tmp_path))
    assert result.persons_known is False and result.warning() is not None
    assert {user for _, user, _, _ in visits_with_places(conn, result.dataset_id)} == {"a", "b"}


def test_unsorted_visits_load_in_order_with_sort(conn: psycopg.Connection,
                                                 tmp_path: Path) -> None:
    result = load(tmp_path, list(reversed(VISITS)), sort=True)
    assert visits_with_places(conn, result.dataset_id) == [tuple(row) for row in VISITS]


def test_gps_rules_apply_to_visits_a_repeated_visit_is_dropped(conn: psycopg.Connection,
                                                               tmp_path: Path) -> None:
    result = load(tmp_path, [*VISITS[:2], VISITS[1], *VISITS[2:]])
    assert result.record.load_report["dropped"] == {"duplicate_fix_same_position": 1}
    assert result.record.load_report["examples"] == {"duplicate_fix_same_position": [4]}
    assert len(visits_with_places(conn, result.dataset_id)) == 5


# --------------------------------------------------------------------------- vector places


def places_frame(crs: int | None = 4326) -> gpd.GeoDataFrame:
    """PLACES as a GeoDataFrame (with a column the loader ignores), in ``crs``."""
    frame = gpd.GeoDataFrame(
        {"place": [name for name, *_ in PLACES], "line": ["A", "B", "C"]},
        geometry=[Point(float(lon), float(lat)) for _, lon, lat in PLACES], crs=4326)
    if crs is None:
        return frame.set_crs(None, allow_override=True)
    return frame.to_crs(crs)


@pytest.mark.parametrize("suffix", [".gpkg", ".geojson"])
@pytest.mark.parametrize("crs", [4326, 3857])
def test_vector_places_file(conn: psycopg.Connection, tmp_path: Path, suffix: str,
                            crs: int) -> None:
    path = tmp_path / f"stations{suffix}"
    places_frame(crs).to_file(path, engine="pyogrio")
    result = load_dataset(write_visits(tmp_path), "x", places=path)
    assert visits_with_places(conn, result.dataset_id) == [tuple(row) for row in VISITS]
    stored = conn.execute("SELECT place, lon, lat FROM raw.places ORDER BY place").fetchall()
    for (name, lon, lat), (expected, x, y) in zip(stored, sorted(PLACES), strict=True):
        assert name == expected
        assert lon == pytest.approx(float(x), abs=1e-9)  # back from EPSG:3857
        assert lat == pytest.approx(float(y), abs=1e-9)


def test_vector_places_with_polygons_are_rejected(conn: psycopg.Connection,
                                                  tmp_path: Path) -> None:
    frame = places_frame()
    frame.loc[1, "geometry"] = Polygon([(11.27, 43.77), (11.28, 43.77), (11.28, 43.78)])
    path = tmp_path / "stations.gpkg"
    frame.to_file(path, engine="pyogrio")
    expect_rejected(conn, write_visits(tmp_path), path, str(path), "not a Point (Polygon)",
                    "rows 2", "give points", "station locations", "centroids")


def test_vector_places_without_place_column_are_rejected(conn: psycopg.Connection,
                                                         tmp_path: Path) -> None:
    path = tmp_path / "stations.geojson"
    places_frame().rename(columns={"place": "name"}).to_file(path, engine="pyogrio")
    expect_rejected(conn, write_visits(tmp_path), path, str(path), "no place column",
                    "found name, line, geometry")


@pytest.mark.filterwarnings("ignore:'crs' was not provided")
def test_vector_places_without_crs_are_rejected(conn: psycopg.Connection,
                                                tmp_path: Path) -> None:
    path = tmp_path / "stations.gpkg"
    places_frame(crs=None).to_file(path, engine="pyogrio")
    expect_rejected(conn, write_visits(tmp_path), path, str(path), "no CRS")


def test_unreadable_places_file_is_rejected(conn: psycopg.Connection, tmp_path: Path) -> None:
    path = tmp_path / "stations.gpkg"
    path.write_text("not a geopackage")
    expect_rejected(conn, write_visits(tmp_path), path, str(path), "cannot read it",
                    "CSV place,lon,lat")


# --------------------------------------------------------------------------- bad places files


@pytest.mark.parametrize(("rows", "header", "fragments"), [
    (PLACES, "place,lon", ["missing lat", "place,lon,lat"]),
    (PLACES, "name,lon,lat", ["missing place"]),
    (PLACES, "place,lon,lat,lon", ["repeated lon"]),
    ([], None, ["the file is empty", "place,lon,lat"]),
    ([], PLACES_HEADER, ["has no places"]),
    ([*PLACES, ("Centrale", "11.3", "43.8")],
     PLACES_HEADER, ["2 row(s) with a place name used more than once", "'Centrale'", "lines 2, 5",
            "merge", "rename"]),
    ([*PLACES, ("Copy", "11.2486", "43.7953"), ("Copy2", "11.2486", "43.7953")],
     PLACES_HEADER, ["3 row(s) with the coordinates of another place", "1 shared position(s)",
            "'Rifredi', 'Copy', 'Copy2' at 11.2486,43.7953", "lines 4, 5, 6",
            "merge those places into one, or move one"]),
    ([*PLACES, ("Far", "181", "43")], PLACES_HEADER, ["lon outside [-180, 180]", "lines 5"]),
    ([*PLACES, ("South", "11", "-90.5")], PLACES_HEADER, ["lat outside [-90, 90]", "lines 5"]),
    ([*PLACES, ("Nowhere", "east", "43")], PLACES_HEADER, ["not a number", "lines 5"]),
    ([*PLACES, ("Blank", "", "43")], PLACES_HEADER, ["not a number", "lines 5"]),
    ([*PLACES, ("Inf", "inf", "43")], PLACES_HEADER, ["not a number", "lines 5"]),
    ([*PLACES, ("Zero", "0", "0")], PLACES_HEADER,
     ["0,0", "lines 5", "Give those places their coordinates"]),
    ([*PLACES, ("  ", "11.3", "43.8")], PLACES_HEADER, ["an empty place", "lines 5"]),
], ids=["missing-lat", "missing-place", "repeated-column", "empty-file", "header-only",
        "duplicate-name", "duplicate-coordinates", "lon-range", "lat-range", "not-a-number",
        "empty-coordinate", "infinite", "null-island", "empty-name"])
def test_bad_places_file_is_rejected(conn: psycopg.Connection, tmp_path: Path,
                                     rows: Sequence[Row], header: str | None,
                                     fragments: list[str]) -> None:
    places = write_places(tmp_path, rows, header=header)
    expect_rejected(conn, write_visits(tmp_path), places, str(places), *fragments)
    assert database_state(conn) == EMPTY


def test_missing_places_file_is_rejected(conn: psycopg.Connection, tmp_path: Path) -> None:
    expect_rejected(conn, write_visits(tmp_path), tmp_path / "nope.csv",
                    f"{tmp_path / 'nope.csv'}: no such places file")


# --------------------------------------------------------------------------- bad visits files


@pytest.mark.parametrize(("rows", "header", "fragments"), [
    ([*VISITS, ("b", "u2", "2020-01-01T09:30:00Z", "Nowhere"),
      ("b", "u2", "2020-01-01T09:40:00Z", "Elsewhere"),
      ("b", "u2", "2020-01-01T09:50:00Z", "Nowhere")],
     VISITS_HEADER, ["3 row(s) with a place that is not in", "places.csv",
                     "2 such place(s): 'Nowhere', 'Elsewhere'", "lines 7, 8, 9",
                     "Add those places to the places file"]),
    ([*VISITS, ("b", "u2", "2020-01-01T09:30:00Z", "")],
     VISITS_HEADER, ["1 row(s) with an empty place", "lines 7", "fix or remove"]),
    ([VISITS[1], VISITS[0]], VISITS_HEADER,
     ["a timestamp earlier than the previous one of its trajectory", "lines 3", "--sort"]),
    ([("a", "u1", "yesterday", "Centrale")], VISITS_HEADER, ["unparseable timestamp"]),
    ([("a", "", "2020-01-01T08:00:00Z", "Centrale")], VISITS_HEADER, ["an empty user_id"]),
    ([("a", "u1", "2020-01-01T08:00:00Z", "Centrale", 11.2, 43.7)],
     "traj_id,user_id,t,place,lon,lat", ["unexpected lon, lat"]),
    ([("a", "u1", "2020-01-01T08:00:00Z", "11.2", "43.7")], "traj_id,user_id,t,lon,lat",
     ["--places was given", "lon,lat columns and no place column", "without --places"]),
    ([("a", "u1", "2020-01-01T08:00:00Z", "Centrale")], "traj_id,user_id,when,place",
     ["missing t", "unexpected when"]),
    ([], None, ["the file is empty", "traj_id,user_id,t,place"]),
    ([], VISITS_HEADER, ["no data rows"]),
], ids=["unknown-place", "empty-place", "backwards", "bad-time", "empty-user", "both-columns",
        "gps-file", "renamed-column", "empty-file", "header-only"])
def test_bad_visits_file_is_rejected(conn: psycopg.Connection, tmp_path: Path,
                                     rows: Sequence[Row], header: str | None,
                                     fragments: list[str]) -> None:
    visits = write_visits(tmp_path, rows, header=header)
    expect_rejected(conn, visits, write_places(tmp_path), str(visits), *fragments)
    assert database_state(conn) == EMPTY


def test_gps_file_with_places_but_no_coordinates_asks_for_places(conn: psycopg.Connection,
                                                                tmp_path: Path) -> None:
    visits = write_visits(tmp_path)
    expect_rejected(conn, visits, None, str(visits), "place column and no lon,lat",
                    "--places PLACES")


def test_a_trajectory_emptied_by_validation_is_rejected(
        conn: psycopg.Connection, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No rule of today's validation drops every visit of a trajectory (the places' own
    checks refuse what would be noise); a rule that did must not lose a sequence quietly."""
    check = SequenceChecks.check

    def dropping_trajectory_b(self: SequenceChecks, rows: RowChunk) -> RowChunk:
        kept = check(self, rows)
        of_b = pc.equal(kept.traj_id, "b").to_numpy(zero_copy_only=False)
        if of_b.any():
            self.drops.add({"some_future_rule": np.flatnonzero(of_b)}, kept.positions)
        return kept.take(np.flatnonzero(~of_b))

    monkeypatch.setattr(SequenceChecks, "check", dropping_trajectory_b)
    visits = write_visits(tmp_path)
    expect_rejected(conn, visits, write_places(tmp_path), str(visits),
                    "2 row(s) with a trajectory that no visit is left of",
                    "1 trajectory id(s), e.g. 'b'", "some_future_rule: 2", "lines 5, 6")


# ------------------------------------------------------------ replace, all or nothing


def test_replace_swaps_the_places_with_the_dataset(conn: psycopg.Connection,
                                                   tmp_path: Path) -> None:
    old = load(tmp_path)
    keep = load(tmp_path, dataset="keep")
    moved = [("Centrale", "11.25", "43.776"), ("Rifredi", "11.2486", "43.7953")]
    new = load(tmp_path, [VISITS[0], VISITS[1]], moved, replace=True)
    places = conn.execute("SELECT dataset_id, place, lon FROM raw.places "
                          "ORDER BY 1, 2").fetchall()
    assert {dataset_id for dataset_id, *_ in places} == {keep.dataset_id, new.dataset_id}
    assert [row for row in places if row[0] == new.dataset_id] == [
        (new.dataset_id, "Centrale", 11.25), (new.dataset_id, "Rifredi", 11.2486)]
    assert old.dataset_id not in {dataset_id for dataset_id, *_ in places}
    assert visits_with_places(conn, new.dataset_id) == [tuple(VISITS[0]), tuple(VISITS[1])]


def test_existing_name_is_refused_and_left_intact(conn: psycopg.Connection,
                                                  tmp_path: Path) -> None:
    load(tmp_path)
    expect_rejected(conn, write_visits(tmp_path), write_places(tmp_path),
                    "dataset 'x' already exists", "--replace")


@pytest.mark.parametrize(("visits", "places", "fragment"), [
    (VISITS, [*PLACES, ("Centrale", "11.3", "43.8")], "used more than once"),
    (VISITS, [*PLACES, ("Twin", "11.2486", "43.7953")], "coordinates of another place"),
    ([*VISITS, visit("c", 0, "Nowhere")], PLACES, "not in"),
    ([VISITS[1], VISITS[0]], PLACES, "--sort"),
], ids=["duplicate-name", "duplicate-coordinates", "unknown-place", "backwards"])
def test_rejected_replacement_keeps_the_old_version_and_its_places(
        conn: psycopg.Connection, tmp_path: Path, visits: Sequence[Row],
        places: Sequence[Row], fragment: str) -> None:
    persons = write_rows(tmp_path / "persons.csv", [("u1",), ("u2",)], "user_id")
    load(tmp_path, persons=persons)
    before = database_state(conn)
    assert before.places and before.points and before.persons
    folder = tmp_path / "bad"
    folder.mkdir()
    expect_rejected(conn, write_visits(folder, visits), write_places(folder, places), fragment,
                    replace=True)
    assert database_state(conn) == before


def test_a_failure_after_the_places_are_copied_leaves_nothing(
        conn: psycopg.Connection, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    old = load(tmp_path)
    before = database_state(conn)
    run = store_module.run_sql_file

    def run_then_fail(conn: psycopg.Connection, name: str, *args: Any, **kwargs: Any) -> Any:
        rows = run(conn, name, *args, **kwargs)
        if name == "load/attach_partition.sql":  # the places are in by now
            raise RuntimeError("disk full")
        return rows

    monkeypatch.setattr(store_module, "run_sql_file", run_then_fail)
    with pytest.raises(RuntimeError, match="disk full"):
        load(tmp_path, [VISITS[0]], [PLACES[0]], replace=True)
    assert database_state(conn) == before
    assert {row[0] for row in before.places} == {old.dataset_id}


def test_deleting_a_dataset_deletes_its_places(conn: psycopg.Connection, tmp_path: Path) -> None:
    result = load(tmp_path)
    conn.execute("DELETE FROM raw.datasets WHERE dataset_id = %s", (result.dataset_id,))
    assert conn.execute("SELECT count(*) FROM raw.places").fetchone() == (0,)


def test_a_database_of_the_previous_contract_gains_raw_places(
        conn: psycopg.Connection, db_url: str, tmp_path: Path) -> None:
    gps = write_rows(tmp_path / "gps.csv", [("a", "u1", "2020-01-01T08:00:00Z", 11.2, 43.7)],
                     "traj_id,user_id,t,lon,lat")
    gps_id = load_dataset(gps, "gps").dataset_id
    conn.execute("DROP TABLE raw.places")  # the contract before 031_raw_places
    conn.execute("ALTER TABLE raw.datasets DROP COLUMN places_file")
    conn.execute("DELETE FROM catalog.schema_migrations WHERE version = '031_raw_places'")
    assert migrate(db_url) == ["031_raw_places"]
    assert migrate(db_url) == []
    result = load(tmp_path)
    assert conn.execute("SELECT dataset_id, places_file IS NULL FROM raw.datasets "
                        "ORDER BY 1").fetchall() == [(gps_id, True), (result.dataset_id, False)]
    assert len(visits_with_places(conn, result.dataset_id)) == 5


def test_the_analyst_reads_no_places(conn: psycopg.Connection, tmp_path: Path,
                                     analyst_url: str) -> None:
    load(tmp_path)
    with psycopg.connect(analyst_url) as analyst, pytest.raises(
            psycopg.errors.InsufficientPrivilege):
        analyst.execute("SELECT * FROM raw.places")


# --------------------------------------------------------------------------- CLI


def test_cli_loads_visits_and_prints_the_places(db_url: str, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    visits, places = write_visits(tmp_path), write_places(tmp_path)
    assert cli_main(["load", str(visits), "--dataset", "x", "--places", str(places)]) == 0
    out = capsys.readouterr().out
    assert "5 points, 2 trajectories, 2 persons" in out
    assert f"3 places from {places.resolve()}" in out


@pytest.mark.parametrize("bad", ["places", "visits"])
def test_cli_reports_a_bad_file_in_one_line(db_url: str, tmp_path: Path, bad: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    places = write_places(tmp_path, [*PLACES, ("Twin", "11.2486", "43.7953")]
                          if bad == "places" else PLACES)
    visits = write_visits(tmp_path, [*VISITS, visit("c", 0, "Nowhere")]
                          if bad == "visits" else VISITS)
    assert cli_main(["load", str(visits), "--dataset", "x", "--places", str(places)]) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line]
    assert lines[-1].startswith(f"error: {places if bad == 'places' else visits}: ")
    assert "Traceback" not in err
    assert [line for line in lines if line.startswith("error")] == [lines[-1]]
    with psycopg.connect(db_url) as check:
        assert database_state(check) == EMPTY


def test_cli_tells_a_visits_file_without_places_to_pass_them(
        db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    visits = write_visits(tmp_path)
    assert cli_main(["load", str(visits), "--dataset", "x"]) == 2
    err = capsys.readouterr().err
    assert f"error: {visits}: the file has a place column and no lon,lat" in err
    assert "--places PLACES" in err and "Traceback" not in err
