"""Tests of the loader: each case of anonymizers/loading/validation.py's decision table.

Every rejected file is checked twice: the message (names the file, the line/row or column,
and says what to do) and the database (nothing written, an existing dataset left intact).
Every dropped row is checked in the load report (count per reason, example line numbers)
and in raw.points.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import geopandas as gpd
import pandas as pd
import psycopg
import pytest
from conftest import SHARED_DATA
from shapely.geometry import LineString, Point

from anonymizers.cli import main as cli_main
from anonymizers.errors import InputError
from anonymizers.loading import LoadResult, load_dataset
from anonymizers.loading import leaves as leaves_module
from anonymizers.loading import readers as readers_module
from anonymizers.loading import store as store_module

HEADER = "traj_id,user_id,t,lon,lat"
PERSONS_HEADER = "user_id,age,sex,education,income"
Row = Sequence[object]

# A small valid file: two trajectories of two persons, in Florence.
GOOD_ROWS: list[Row] = [
    ("a", "u1", "2020-01-01T08:00:00Z", 11.25, 43.77),
    ("a", "u1", "2020-01-01T08:01:00Z", 11.26, 43.78),
    ("a", "u1", "2020-01-01T08:02:00Z", 11.27, 43.79),
    ("b", "u2", "2020-01-01T09:00:00Z", 11.20, 43.70),
    ("b", "u2", "2020-01-01T09:01:00Z", 11.21, 43.71),
]


# --------------------------------------------------------------------------- helpers


def write_csv(tmp_path: Path, rows: Sequence[Row], header: str | None = HEADER,
              name: str = "points.csv") -> Path:
    """A CSV file of ``rows`` (values joined by commas as given) under ``header``."""
    lines = [] if header is None else [header]
    lines += [",".join(str(value) for value in row) for row in rows]
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def write_persons(tmp_path: Path, rows: Sequence[Row], header: str = PERSONS_HEADER) -> Path:
    return write_csv(tmp_path, rows, header=header, name="persons.csv")


def fix(traj: str, user: str, t: str, lon: object = 11.25, lat: object = 43.77) -> Row:
    """One GPS fix as a CSV row (a position in Florence unless given)."""
    return (traj, user, t, lon, lat)


def minute(m: int) -> str:
    return f"2020-01-01T08:{m:02d}:00Z"


@dataclass(frozen=True)
class DatabaseState:
    """What the loader may write: the registry, the partitions and the rows under them."""

    datasets: tuple[tuple[int, str, int], ...]  # (dataset_id, name, n_points)
    partitions: tuple[str, ...]  # raw.points_N tables, attached or not
    points: tuple[tuple[int, int], ...]  # (dataset_id, count) in raw.points
    persons: tuple[tuple[int, int], ...]  # (dataset_id, count) in raw.persons


def database_state(conn: psycopg.Connection) -> DatabaseState:
    def rows(query: str) -> tuple[Any, ...]:
        return tuple(tuple(row) for row in conn.execute(query).fetchall())

    return DatabaseState(
        datasets=rows("SELECT dataset_id, name, n_points FROM raw.datasets ORDER BY 1"),
        partitions=tuple(name for (name,) in rows(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'raw' "
            "AND tablename ~ '^points_[0-9]+$' ORDER BY 1")),
        points=rows("SELECT dataset_id, count(*) FROM raw.points GROUP BY 1 ORDER BY 1"),
        persons=rows("SELECT dataset_id, count(*) FROM raw.persons GROUP BY 1 ORDER BY 1"),
    )


EMPTY = DatabaseState(datasets=(), partitions=(), points=(), persons=())


def expect_rejected(conn: psycopg.Connection, path: Path, *fragments: str,
                    dataset: str = "x", **options: Any) -> str:
    """Load ``path``: it must raise InputError whose message holds every ``fragment``
    (the file, the line or column, what to do), and leave the database exactly as it was."""
    before = database_state(conn)
    with pytest.raises(InputError) as caught:
        load_dataset(path, dataset, **options)
    message = str(caught.value)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    assert database_state(conn) == before
    return message


def load(path: Path, dataset: str = "x", **options: Any) -> LoadResult:
    """Load into this test's database (the db_url fixture points DATABASE_URL at it)."""
    return load_dataset(path, dataset, **options)


def load_good(tmp_path: Path, dataset: str = "x",
              rows: Sequence[Row] = GOOD_ROWS, **options: Any) -> LoadResult:
    """Load ``rows`` (GOOD_ROWS by default) from a CSV file of its own, as ``dataset``."""
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    return load(write_csv(folder, rows), dataset, **options)


def stored_points(conn: psycopg.Connection, dataset_id: int) -> list[tuple[Any, ...]]:
    """(traj_id, user_id, t, lon, lat) of a dataset in the order COPY wrote them."""
    return conn.execute(
        f"SELECT traj_id, user_id, t, lon, lat FROM raw.points_{dataset_id} ORDER BY ctid"
    ).fetchall()


def dropped(result: LoadResult) -> dict[str, int]:
    return result.record.load_report["dropped"]


def examples(result: LoadResult) -> dict[str, list[int]]:
    return result.record.load_report["examples"]


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


# --------------------------------------------------------------------------- columns, empty files


@pytest.mark.parametrize(("header", "fragment"), [
    ("traj_id,user_id,t,lon", "missing lat"),
    ("user_id,t,lon,lat", "missing traj_id"),
    ("traj_id,user_id,t,lon,lat,speed", "unexpected speed"),
    ("traj_id,user_id,time,lon,lat", "missing t; unexpected time"),
    ("traj_id,person,t,lon,lat", "missing user_id; unexpected person"),
    ("traj_id,t,lon,lat,lat", "missing user_id; repeated lat"),
    ("traj_id,user_id,t,lon,lat,lat", "repeated lat"),
], ids=["missing-lat", "missing-traj_id", "unexpected", "renamed", "renamed-user_id",
        "repeated-without-user_id", "repeated"])
def test_wrong_columns_reject_the_file(conn: psycopg.Connection, tmp_path: Path,
                                       header: str, fragment: str) -> None:
    n_fields = len(header.split(","))
    path = write_csv(tmp_path, [("a", "u1", minute(0), 11.25, 43.77, 1.0)[:n_fields]],
                     header=header)
    expect_rejected(conn, path, str(path), fragment, "Rename or remove columns",
                    "(or traj_id,t,lon,lat when the persons are unknown)")
    assert database_state(conn) == EMPTY


def test_header_with_spaces_quotes_and_bom_is_understood(conn: psycopg.Connection,
                                                         tmp_path: Path) -> None:
    path = tmp_path / "points.csv"
    header = '\ufefftraj_id, "user_id" ,t , lon,lat'  # a BOM, spaces and quotes
    path.write_text(f"{header}\na,u1,2020-01-01T08:00:00Z,11.25,43.77\n", encoding="utf-8")
    result = load(path)
    assert stored_points(conn, result.dataset_id) == [
        ("a", "u1", utc("2020-01-01T08:00:00Z"), 11.25, 43.77)]


def test_empty_file_is_rejected(conn: psycopg.Connection, tmp_path: Path) -> None:
    path = tmp_path / "points.csv"
    path.write_bytes(b"")
    expect_rejected(conn, path, str(path), "the file is empty", HEADER)
    assert database_state(conn) == EMPTY


def test_header_only_file_is_rejected(conn: psycopg.Connection, tmp_path: Path) -> None:
    path = write_csv(tmp_path, [])
    expect_rejected(conn, path, str(path), "no data rows", "Is it the right file?")
    assert database_state(conn) == EMPTY


def test_missing_file_is_rejected(conn: psycopg.Connection, tmp_path: Path) -> None:
    path = tmp_path / "nowhere.csv"
    expect_rejected(conn, path, str(path), "no such file", "Check the path")


def test_ragged_row_is_rejected(conn: psycopg.Connection, tmp_path: Path) -> None:
    path = write_csv(tmp_path, [*GOOD_ROWS, ("b", "u2", minute(5), 11.2)])
    expect_rejected(conn, path, str(path), "not a readable CSV file", "Expected 5 columns")
    assert database_state(conn) == EMPTY


# --------------------------------------------------------------------------- timestamps


@pytest.mark.parametrize("bad", ["yesterday", "2020-02-30T08:00:00Z", ""])
def test_unparseable_timestamp_rejects_naming_the_line(conn: psycopg.Connection, tmp_path: Path,
                                                       bad: str) -> None:
    rows = [fix("a", "u1", minute(0)), fix("a", "u1", minute(1)), fix("a", "u1", bad)]
    path = write_csv(tmp_path, rows)
    message = expect_rejected(conn, path, str(path), "unparseable timestamp in column t",
                              "(lines 4)", "Use ISO-8601")
    assert message.startswith(f"{path}: 1 row(s)")
    assert database_state(conn) == EMPTY


def test_naive_timestamp_is_taken_as_utc(conn: psycopg.Connection, tmp_path: Path) -> None:
    rows = [fix("a", "u1", "2020-01-01T08:00:00"),  # no offset: UTC
            fix("a", "u1", "2020-01-01 08:01:00"),  # space separator, no offset
            fix("a", "u1", "2020-01-01T10:02:00+02:00")]  # an offset is honoured
    result = load(write_csv(tmp_path, rows))
    stored = [t for (_, _, t, _, _) in stored_points(conn, result.dataset_id)]
    assert stored == [utc("2020-01-01T08:00:00Z"), utc("2020-01-01T08:01:00Z"),
                      utc("2020-01-01T08:02:00Z")]
    # Read back as text in another time zone: the instant is still 08:00 UTC.
    conn.execute("SET TimeZone = 'Asia/Shanghai'")
    (text,) = conn.execute(f"SELECT min(t)::text FROM raw.points_{result.dataset_id}").fetchone()
    assert text == "2020-01-01 16:00:00+08"
    assert result.record.t_min == utc("2020-01-01T08:00:00Z")


def test_sub_microsecond_timestamps_are_truncated_to_microseconds(
        conn: psycopg.Connection, tmp_path: Path) -> None:
    rows = [fix("a", "u1", "2020-01-01T08:00:00.1234567Z"),
            fix("a", "u1", "2020-01-01T08:00:00.1234569Z")]  # the same microsecond
    result = load(write_csv(tmp_path, rows))
    assert dropped(result) == {"duplicate_fix_same_position": 1}
    [(_, _, t, _, _)] = stored_points(conn, result.dataset_id)
    assert t == datetime(2020, 1, 1, 8, 0, 0, 123456, tzinfo=UTC)


@pytest.mark.parametrize("path", ["arrow", "pandas"])
def test_timestamps_are_truncated_to_microseconds_also_before_1970(
        conn: psycopg.Connection, tmp_path: Path, path: str) -> None:
    # All values with an offset: Arrow's parser; one naive value among them: pandas'.
    rows = [fix("a", "u1", "1969-12-31T23:59:59.9999995Z"),
            fix("a", "u1", "1970-01-01T00:00:00.0000015Z"),
            fix("a", "u1", "2020-01-01T08:00:00" + ("Z" if path == "arrow" else ""))]
    result = load(write_csv(tmp_path, rows))
    assert [t for (_, _, t, _, _) in stored_points(conn, result.dataset_id)] == [
        datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
        datetime(1970, 1, 1, 0, 0, 0, 1, tzinfo=UTC), utc("2020-01-01T08:00:00Z")]


@pytest.mark.parametrize("suffix", ["Z", "+00:00", "", "+02:00"])
def test_one_instant_spelled_in_any_zone_is_stored_the_same(
        conn: psycopg.Connection, tmp_path: Path, suffix: str) -> None:
    hour = 10 if suffix == "+02:00" else 8
    rows = [fix("a", "u1", f"2020-01-01T{hour:02d}:{m:02d}:00{suffix}") for m in range(3)]
    result = load(write_csv(tmp_path, rows))
    assert [t for (_, _, t, _, _) in stored_points(conn, result.dataset_id)] == [
        utc(minute(m)) for m in range(3)]


# --------------------------------------------------------------------------- coordinates


@pytest.mark.parametrize(("lon", "lat"), [
    ("", 43.77), (11.25, ""), ("NaN", 43.77), (11.25, "nan"), ("abc", 43.77), ("11,25", 43.77),
    (" ", " "),
], ids=["empty-lon", "empty-lat", "NaN-lon", "nan-lat", "text-lon", "quoted-comma", "blank"])
def test_missing_or_non_numeric_coordinate_is_dropped_and_counted(
        conn: psycopg.Connection, tmp_path: Path, lon: object, lat: object) -> None:
    bad = f'"{lon}"' if lon == "11,25" else lon
    rows = [fix("a", "u1", minute(0)), fix("a", "u1", minute(1), bad, lat),
            fix("a", "u1", minute(2))]
    result = load(write_csv(tmp_path, rows))
    assert dropped(result) == {"empty_or_non_numeric_coordinate": 1}
    assert examples(result) == {"empty_or_non_numeric_coordinate": [3]}
    assert result.record.load_report["rows_read"] == 3
    assert result.record.n_points == 2
    assert [t for (_, _, t, _, _) in stored_points(conn, result.dataset_id)] == [
        utc(minute(0)), utc(minute(2))]


@pytest.mark.parametrize(("lon", "lat"), [
    (195.01217, 39.9), (-180.5, 39.9), (116.4, 90.01), (116.4, -91), ("inf", 39.9),
])
def test_coordinate_out_of_range_is_dropped_and_counted(
        conn: psycopg.Connection, tmp_path: Path, lon: object, lat: object) -> None:
    rows = [fix("a", "u1", minute(0), lon, lat), fix("a", "u1", minute(1)),
            fix("a", "u1", minute(2), lon, lat)]
    result = load(write_csv(tmp_path, rows))
    assert dropped(result) == {"coordinate_out_of_range": 2}
    assert examples(result) == {"coordinate_out_of_range": [2, 4]}
    assert len(stored_points(conn, result.dataset_id)) == 1


def test_coordinates_on_the_range_limits_are_kept(conn: psycopg.Connection,
                                                  tmp_path: Path) -> None:
    rows = [fix("a", "u1", minute(0), 180, 90), fix("a", "u1", minute(1), -180, -90),
            fix("a", "u1", minute(2), 0, 45), fix("a", "u1", minute(3), 45, 0)]
    result = load(write_csv(tmp_path, rows))
    assert dropped(result) == {}
    assert [(lon, lat) for (*_, lon, lat) in stored_points(conn, result.dataset_id)] == [
        (180, 90), (-180, -90), (0, 45), (45, 0)]


@pytest.mark.parametrize(("lon", "lat"), [(0, 0), ("0.0", "-0.0"), ("0", "0.000")])
def test_null_island_is_dropped_and_counted(conn: psycopg.Connection, tmp_path: Path,
                                            lon: object, lat: object) -> None:
    rows = [fix("a", "u1", minute(0)), fix("a", "u1", minute(1), lon, lat),
            fix("a", "u1", minute(2))]
    result = load(write_csv(tmp_path, rows))
    assert dropped(result) == {"null_island_0_0": 1}
    assert examples(result) == {"null_island_0_0": [3]}
    assert all((lon, lat) != (0, 0) for (*_, lon, lat) in stored_points(conn, result.dataset_id))


def test_every_reason_is_counted_with_its_first_lines(conn: psycopg.Connection,
                                                      tmp_path: Path) -> None:
    rows = [fix("a", "u1", minute(m), 0, 0) for m in range(7)]  # lines 2..8: null island
    rows += [fix("a", "u1", minute(10)), fix("a", "u1", minute(11), 200, 10)]
    result = load(write_csv(tmp_path, rows))
    assert dropped(result) == {"null_island_0_0": 7, "coordinate_out_of_range": 1}
    assert examples(result) == {"null_island_0_0": [2, 3, 4, 5, 6],  # the first five only
                                "coordinate_out_of_range": [10]}
    assert result.record.load_report["unit"] == "line"
    summary = result.summary()
    assert "rows read 9, dropped 8" in summary
    assert "null_island_0_0 (e.g. line 2, 3, 4, 5, 6)" in summary


# --------------------------------------------------------------------------- duplicates


def test_duplicate_fix_at_same_position_is_dropped(conn: psycopg.Connection,
                                                   tmp_path: Path) -> None:
    rows = [fix("a", "u1", minute(0)), fix("a", "u1", minute(1), 11.3, 43.8),
            fix("a", "u1", minute(1), 11.3, 43.8), fix("a", "u1", minute(2))]
    result = load(write_csv(tmp_path, rows))
    assert dropped(result) == {"duplicate_fix_same_position": 1}
    assert examples(result) == {"duplicate_fix_same_position": [4]}
    assert len(stored_points(conn, result.dataset_id)) == 3


def test_duplicate_time_at_other_position_keeps_the_first(conn: psycopg.Connection,
                                                          tmp_path: Path) -> None:
    rows = [fix("a", "u1", minute(0)), fix("a", "u1", minute(1), 11.3, 43.8),
            fix("a", "u1", minute(1), 11.4, 43.9), fix("a", "u1", minute(2))]
    result = load(write_csv(tmp_path, rows))
    assert dropped(result) == {"duplicate_time_other_position": 1}
    assert examples(result) == {"duplicate_time_other_position": [4]}
    stored = stored_points(conn, result.dataset_id)
    assert [(lon, lat) for (_, _, t, lon, lat) in stored if t == utc(minute(1))] == [(11.3, 43.8)]


def test_same_time_in_different_trajectories_is_not_a_duplicate(conn: psycopg.Connection,
                                                                 tmp_path: Path) -> None:
    rows = [fix("a", "u1", minute(0)), fix("b", "u1", minute(0))]
    result = load(write_csv(tmp_path, rows))
    assert dropped(result) == {}
    assert result.record.n_trajectories == 2


def test_a_noise_row_does_not_hide_a_duplicate(conn: psycopg.Connection, tmp_path: Path) -> None:
    # Line 3 repeats line 2's time at (0, 0): dropped as null island, not as a duplicate.
    rows = [fix("a", "u1", minute(0)), fix("a", "u1", minute(0), 0, 0), fix("a", "u1", minute(1))]
    result = load(write_csv(tmp_path, rows))
    assert dropped(result) == {"null_island_0_0": 1}


# --------------------------------------------------------------------------- order


def test_timestamps_going_back_reject_with_line_and_sort_hint(conn: psycopg.Connection,
                                                              tmp_path: Path) -> None:
    rows = [fix("a", "u1", minute(0)), fix("a", "u1", minute(2)), fix("a", "u1", minute(1))]
    path = write_csv(tmp_path, rows)
    expect_rejected(conn, path, str(path), "earlier than the previous one", "(lines 4)",
                    "--sort")
    assert database_state(conn) == EMPTY


def test_timestamps_going_back_load_in_order_with_sort(conn: psycopg.Connection,
                                                       tmp_path: Path) -> None:
    rows = [fix("a", "u1", minute(0), 11.0, 43.0), fix("a", "u1", minute(2), 11.2, 43.2),
            fix("a", "u1", minute(1), 11.1, 43.1)]
    result = load(write_csv(tmp_path, rows), sort=True)
    assert stored_points(conn, result.dataset_id) == [
        ("a", "u1", utc(minute(0)), 11.0, 43.0),
        ("a", "u1", utc(minute(1)), 11.1, 43.1),
        ("a", "u1", utc(minute(2)), 11.2, 43.2),
    ]


def test_non_contiguous_trajectory_is_rejected(conn: psycopg.Connection, tmp_path: Path) -> None:
    rows = [fix("a", "u1", minute(0)), fix("b", "u2", minute(0)), fix("a", "u1", minute(1))]
    path = write_csv(tmp_path, rows)
    expect_rejected(conn, path, str(path), "traj_id whose rows are not contiguous",
                    "(lines 4)", "--sort")
    assert database_state(conn) == EMPTY


def test_non_contiguous_trajectory_loads_with_sort(conn: psycopg.Connection,
                                                   tmp_path: Path) -> None:
    rows = [fix("b", "u2", minute(3)), fix("a", "u1", minute(1)), fix("b", "u2", minute(0)),
            fix("a", "u1", minute(0))]
    result = load(write_csv(tmp_path, rows), sort=True)
    assert [(traj, t) for (traj, _, t, _, _) in stored_points(conn, result.dataset_id)] == [
        ("a", utc(minute(0))), ("a", utc(minute(1))), ("b", utc(minute(0))),
        ("b", utc(minute(3)))]
    assert result.record.n_trajectories == 2


def test_sort_keeps_the_first_fix_of_the_file_on_a_duplicate_time(conn: psycopg.Connection,
                                                                   tmp_path: Path) -> None:
    rows = [fix("a", "u1", minute(1), 11.1, 43.1), fix("a", "u1", minute(0)),
            fix("a", "u1", minute(1), 11.9, 43.9)]
    result = load(write_csv(tmp_path, rows), sort=True)
    assert dropped(result) == {"duplicate_time_other_position": 1}
    assert examples(result) == {"duplicate_time_other_position": [4]}  # lines of the file
    assert [(lon, lat) for (*_, lon, lat) in stored_points(conn, result.dataset_id)] == [
        (11.25, 43.77), (11.1, 43.1)]


# --------------------------------------------------------------------------- identifiers


def test_trajectory_under_two_persons_is_rejected(conn: psycopg.Connection,
                                                  tmp_path: Path) -> None:
    rows = [fix("a", "u1", minute(0)), fix("a", "u2", minute(1)), fix("b", "u2", minute(0))]
    path = write_csv(tmp_path, rows)
    expect_rejected(conn, path, str(path), "traj_id 'a' under several user_ids",
                    "(lines 2, 3)", "give each person's trips their own traj_id")
    assert database_state(conn) == EMPTY


@pytest.mark.parametrize(("column", "row"), [
    ("traj_id", fix("", "u1", minute(1))),
    ("traj_id", fix("  ", "u1", minute(1))),
    ("user_id", fix("a", "", minute(1))),
])
def test_empty_identifier_is_rejected(conn: psycopg.Connection, tmp_path: Path,
                                      column: str, row: Row) -> None:
    path = write_csv(tmp_path, [fix("a", "u1", minute(0)), row])
    expect_rejected(conn, path, str(path), f"an empty {column}", "(lines 3)",
                    f"Every row needs a {column}")
    assert database_state(conn) == EMPTY


def test_single_noise_row_is_rejected_as_noise(conn: psycopg.Connection,
                                               tmp_path: Path) -> None:
    path = write_csv(tmp_path, [fix("a", "u1", minute(0), 0, 0)])
    expect_rejected(conn, path, str(path), "every row was dropped as noise (null_island_0_0: 1)")
    assert database_state(conn) == EMPTY


def test_file_of_noise_only_is_rejected(conn: psycopg.Connection, tmp_path: Path) -> None:
    rows = [fix("a", "u1", minute(0), 0, 0), fix("a", "u1", minute(1), 195, 40),
            fix("a", "u1", minute(2), "", 40)]
    path = write_csv(tmp_path, rows)
    expect_rejected(conn, path, str(path), "every row was dropped as noise",
                    "null_island_0_0: 1", "coordinate_out_of_range: 1",
                    "empty_or_non_numeric_coordinate: 1")
    assert database_state(conn) == EMPTY


# --------------------------------------------------------------------------- persons


def test_person_missing_from_persons_file_is_rejected(conn: psycopg.Connection,
                                                      tmp_path: Path) -> None:
    points = write_csv(tmp_path, GOOD_ROWS)
    persons = write_persons(tmp_path, [("u1", 30, "F", "BSc", 1000)])
    expect_rejected(conn, points, str(persons), "1 person(s)", "'u2'",
                    "Add them, or load without --persons", persons=persons)
    assert database_state(conn) == EMPTY


def test_duplicate_person_is_rejected(conn: psycopg.Connection, tmp_path: Path) -> None:
    points = write_csv(tmp_path, GOOD_ROWS)
    persons = write_persons(tmp_path, [("u1", 30, "F", "", ""), ("u2", 40, "M", "", ""),
                                       ("u1", 31, "F", "", "")])
    expect_rejected(conn, points, str(persons), "user_id 'u1' appears more than once",
                    "(line 4)", "one row per person", persons=persons)
    assert database_state(conn) == EMPTY


@pytest.mark.parametrize(("column", "value", "kind"), [
    ("age", "thirty", "integer"), ("age", "30.5", "integer"), ("income", "lots", "number"),
])
def test_non_numeric_person_column_is_rejected(conn: psycopg.Connection, tmp_path: Path,
                                               column: str, value: str, kind: str) -> None:
    points = write_csv(tmp_path, GOOD_ROWS)
    good = {"user_id": "u1", "age": "30", "sex": "F", "education": "BSc", "income": "1000"}
    bad = {**good, "user_id": "u2", column: value}
    persons = write_persons(tmp_path, [tuple(good.values()), tuple(bad.values())])
    expect_rejected(conn, points, str(persons), f"column {column} must be {kind}",
                    f"line 3 has {value!r}", "Fix it or leave the cell empty", persons=persons)
    assert database_state(conn) == EMPTY


def test_persons_typed_and_extra_columns_are_stored(conn: psycopg.Connection,
                                                    tmp_path: Path) -> None:
    points = write_csv(tmp_path, GOOD_ROWS)
    persons = write_persons(
        tmp_path,
        [("u1", "30", "F", "BSc", "1234.5", "nurse", "Prato"),
         ("u2", "", "", "", "", "driver", ""),  # empty cells: NULL, no attribute
         ("u3", "50", "M", "PhD", "9", "retired", "Pisa")],  # not in the points: not stored
        header=PERSONS_HEADER + ",occupation,city",
    )
    result = load(points, persons=persons)
    rows = conn.execute(
        "SELECT user_id, age, sex, education, income, attributes FROM raw.persons "
        "WHERE dataset_id = %s ORDER BY user_id", (result.dataset_id,)).fetchall()
    assert rows == [
        ("u1", 30, "F", "BSc", 1234.5, {"occupation": "nurse", "city": "Prato"}),
        ("u2", None, None, None, None, {"occupation": "driver"}),
    ]
    assert result.record.n_persons == 2
    (persons_file,) = conn.execute("SELECT persons_file FROM raw.datasets").fetchone()
    assert persons_file == str(persons.resolve())


def test_persons_file_with_only_user_id_and_extra_columns(conn: psycopg.Connection,
                                                          tmp_path: Path) -> None:
    points = write_csv(tmp_path, GOOD_ROWS)
    persons = write_persons(tmp_path, [("u1", "x"), ("u2", "y")], header="user_id,group")
    result = load(points, persons=persons)
    rows = conn.execute("SELECT user_id, age, attributes FROM raw.persons ORDER BY 1").fetchall()
    assert rows == [("u1", None, {"group": "x"}), ("u2", None, {"group": "y"})]
    assert result.record.n_persons == 2


def test_a_column_of_numbers_is_stored_as_numbers(conn: psycopg.Connection,
                                                  tmp_path: Path) -> None:
    """An extra column whose every filled cell is a number holds JSON numbers, which a
    demographic grid reads (e.g. height:0:250:25); a column with any text keeps its text."""
    points = write_csv(tmp_path, GOOD_ROWS)
    persons = write_persons(tmp_path, [("u1", "181.5", "3"), ("u2", "", "B")],
                            header="user_id,height,zone")
    result = load(points, persons=persons)
    rows = conn.execute("SELECT user_id, attributes, jsonb_typeof(attributes -> 'height') "
                        "FROM raw.persons WHERE dataset_id = %s ORDER BY 1",
                        (result.dataset_id,)).fetchall()
    assert rows == [("u1", {"height": 181.5, "zone": "3"}, "number"),
                    ("u2", {"zone": "B"}, None)]


# --------------------------------------------------------------------------- persons unknown


def without_user_id(rows: Sequence[Row]) -> list[Row]:
    return [(traj, t, lon, lat) for (traj, _, t, lon, lat) in rows]


def test_points_without_user_id_make_each_trajectory_its_own_person(
        conn: psycopg.Connection, tmp_path: Path) -> None:
    rows = [*GOOD_ROWS, fix("b", "u2", "2020-01-01T09:01:00Z")]  # a repeated time: dropped
    # Any column order, as with user_id.
    path = write_csv(tmp_path, [(t, lat, traj, lon) for (traj, t, lon, lat)
                                in without_user_id(rows)], header="t,lat,traj_id,lon")
    result = load(path)
    assert stored_points(conn, result.dataset_id) == [
        (traj, traj, utc(t), lon, lat) for (traj, _, t, lon, lat) in GOOD_ROWS]
    assert (result.record.n_trajectories, result.record.n_persons) == (2, 2)
    assert dropped(result) == {"duplicate_time_other_position": 1}
    assert result.persons_known is False
    (report,) = conn.execute("SELECT load_report FROM raw.datasets").fetchone()
    assert report["persons_known"] is False
    assert "2 trajectories, persons unknown (each trajectory is its own person)" in (
        result.summary())
    warning = result.warning()
    assert warning is not None
    for fragment in (str(path.resolve()), "no user_id column",
                     "each trajectory is taken as its own person",
                     "k will count trajectories as persons", "overstates the anonymity"):
        assert fragment in warning


def test_points_without_user_id_sort_in_chunks(conn: psycopg.Connection, tmp_path: Path,
                                               small_chunks: None) -> None:
    """--sort stages each trajectory as its own person and reads it back so."""
    path = write_csv(tmp_path, without_user_id(list(reversed(STREAM_ROWS))),
                     header="traj_id,t,lon,lat")
    result = load(path, sort=True)
    stored = stored_points(conn, result.dataset_id)
    assert sorted(stored) == sorted((traj, traj, utc(t), lon, lat)
                                    for (traj, _, t, lon, lat) in STREAM_ROWS)
    assert (result.record.n_trajectories, result.record.n_persons) == (10, 10)


def test_points_with_user_id_say_the_persons_are_known(conn: psycopg.Connection,
                                                      tmp_path: Path) -> None:
    result = load_good(tmp_path)
    assert result.persons_known is True and result.warning() is None
    (report,) = conn.execute("SELECT load_report FROM raw.datasets").fetchone()
    assert report["persons_known"] is True
    assert "5 points, 2 trajectories, 2 persons" in result.summary()


def test_persons_file_with_points_without_user_id_is_rejected(conn: psycopg.Connection,
                                                             tmp_path: Path) -> None:
    points = write_csv(tmp_path, without_user_id(GOOD_ROWS), header="traj_id,t,lon,lat")
    persons = write_persons(tmp_path, [("u1", 30, "F", "BSc", 1000)])
    expect_rejected(conn, points, str(persons), f"{points} has no user_id column",
                    "Add a user_id column to the points", "or load without --persons",
                    persons=persons)
    assert database_state(conn) == EMPTY


def test_trajectories_of_unknown_persons_never_share_a_person_across_leaves(
        conn: psycopg.Connection, tmp_path: Path, small_leaves: None) -> None:
    result = load(write_csv(tmp_path, without_user_id(LEAF_ROWS), header="traj_id,t,lon,lat"))
    assert result.record.n_persons == result.record.n_trajectories == 6
    pairs = conn.execute("SELECT DISTINCT traj_id, user_id FROM raw.points").fetchall()
    assert sorted(pairs) == sorted({(traj, traj) for (traj, *_) in LEAF_ROWS})


# --------------------------------------------------------------------------- dataset names


def test_existing_dataset_name_is_refused_and_left_intact(conn: psycopg.Connection,
                                                          tmp_path: Path) -> None:
    first = load_good(tmp_path)
    before = database_state(conn)
    assert before.datasets == ((first.dataset_id, "x", 5),)
    other = write_csv(tmp_path, GOOD_ROWS[:2], name="other.csv")
    expect_rejected(conn, other, "dataset 'x' already exists", "--replace")
    assert database_state(conn) == before


def test_replace_swaps_the_dataset(conn: psycopg.Connection, tmp_path: Path) -> None:
    old = load_good(tmp_path)
    keep = load_good(tmp_path, dataset="keep")  # another dataset: untouched
    new = load_good(tmp_path, rows=GOOD_ROWS[:2], replace=True)
    assert new.dataset_id != old.dataset_id
    state = database_state(conn)
    assert [(name, n) for (_, name, n) in state.datasets] == [("keep", 5), ("x", 2)]
    assert f"points_{old.dataset_id}" not in state.partitions
    assert f"points_{new.dataset_id}" in state.partitions
    assert dict(state.points) == {keep.dataset_id: 5, new.dataset_id: 2}
    assert conn.execute("SELECT count(*) FROM raw.datasets WHERE name = 'x'").fetchone() == (1,)


def test_replace_of_a_missing_dataset_just_loads(conn: psycopg.Connection,
                                                 tmp_path: Path) -> None:
    result = load_good(tmp_path, replace=True)
    assert database_state(conn).datasets == ((result.dataset_id, "x", 5),)


@pytest.mark.parametrize("name", ["Bad-Name", "1abc", "", "a" * 21, "x y", "abc\n", "é"])
def test_invalid_dataset_name_is_rejected(conn: psycopg.Connection, tmp_path: Path,
                                          name: str) -> None:
    path = write_csv(tmp_path, GOOD_ROWS)
    expect_rejected(conn, path, f"dataset name {name!r}", "lowercase letters", dataset=name)
    assert database_state(conn) == EMPTY


@pytest.mark.parametrize(("bad_rows", "fragment"), [
    ([fix("a", "u1", minute(1)), fix("a", "u1", minute(0))], "earlier than the previous"),
    ([fix("a", "u1", "never")], "unparseable timestamp"),
    ([fix("a", "u1", minute(0), 0, 0)], "every row was dropped as noise"),
], ids=["backwards", "bad-time", "all-noise"])
def test_rejected_replacement_leaves_the_old_dataset_intact(
        conn: psycopg.Connection, tmp_path: Path, bad_rows: list[Row], fragment: str) -> None:
    load_good(tmp_path, persons=write_persons(tmp_path, [("u1",), ("u2",)],
                                                    header="user_id"))
    before = database_state(conn)
    assert before.points and before.persons
    expect_rejected(conn, write_csv(tmp_path, bad_rows, name="bad.csv"), fragment,
                    replace=True)
    assert database_state(conn) == before


def test_failure_during_replace_keeps_the_old_dataset(conn: psycopg.Connection, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    persons = write_persons(tmp_path, [("u1", 30, "F", "", ""), ("u2", 40, "M", "", "")])
    old = load_good(tmp_path, persons=persons)
    before = database_state(conn)
    run = store_module.run_sql_file

    def run_then_fail(conn: psycopg.Connection, name: str, *args: Any, **kwargs: Any) -> Any:
        rows = run(conn, name, *args, **kwargs)
        if name == "load/attach_persons.sql":  # the publish transaction's last statement,
            raise RuntimeError("disk full")  # after the old dataset was dropped and the new
        return rows  # points and persons attached

    monkeypatch.setattr(store_module, "run_sql_file", run_then_fail)
    with pytest.raises(RuntimeError, match="disk full"):
        load_good(tmp_path, rows=GOOD_ROWS[:2], persons=persons, replace=True)
    assert database_state(conn) == before
    assert before.persons == ((old.dataset_id, 2),)
    assert len(stored_points(conn, old.dataset_id)) == 5


# --------------------------------------------------------------------------- parallel leaves


@pytest.fixture
def small_leaves(monkeypatch: pytest.MonkeyPatch) -> None:
    """Leaves of a few rows, so that a small file is loaded as a large one is."""
    monkeypatch.setattr(leaves_module, "MIN_LEAF_ROWS", 2)
    monkeypatch.setattr(leaves_module, "MAX_LEAVES", 3)


# Contiguous trajectories, not in text order; ids whose byte order is not alphabetical.
LEAF_ROWS: list[Row] = [
    fix(traj, user, minute(m), 11.2 + m / 100, 43.7 + i / 100)
    for i, (traj, user) in enumerate([("z", "u1"), ("é", "u2"), ("A b", "u3"), ("a", "u3"),
                                      ("Z", "u4"), ("ab", "u5")])
    for m in range(3)
]


def leaves_of(conn: psycopg.Connection, dataset_id: int) -> list[tuple[str, str]]:
    """(leaf, bounds) under raw.points_<dataset_id>."""
    return conn.execute(
        "SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) FROM pg_inherits AS i "
        "JOIN pg_class AS c ON c.oid = i.inhrelid WHERE i.inhparent = %s::regclass "
        "ORDER BY c.relname", (f"raw.points_{dataset_id}",)).fetchall()


def raw_tables(conn: psycopg.Connection) -> list[str]:
    """raw.points_<id>, its leaves raw.points_<id>_<n> and raw.persons_<id>, of any load."""
    return [name for (name,) in conn.execute(
        "SELECT relname FROM pg_class WHERE relnamespace = 'raw'::regnamespace "
        "AND relname ~ '^(points|persons)_' AND relkind IN ('r', 'p') ORDER BY 1").fetchall()]


def datasets_with_tables(conn: psycopg.Connection) -> set[int]:
    """The dataset ids that some table of raw_tables() belongs to."""
    return {int(name.split("_")[1]) for name in raw_tables(conn)}


def test_a_large_file_loads_into_leaves_that_keep_the_file_order(
        conn: psycopg.Connection, tmp_path: Path, small_leaves: None) -> None:
    result = load(write_csv(tmp_path, LEAF_ROWS))
    leaves = leaves_of(conn, result.dataset_id)
    # Six trajectories of three rows, each to the leaf that has had the fewest rows when it
    # starts (they stream in file order: z, é, A b | a, Z, ab); the bounds are the leaves'
    # traj_key ranges, which depend on the leaf's number only.
    assert leaves == [
        (f"points_{result.dataset_id}_0", "FOR VALUES FROM ('0') TO ('4294967296')"),
        (f"points_{result.dataset_id}_1", "FOR VALUES FROM ('4294967296') TO ('8589934592')"),
        (f"points_{result.dataset_id}_2", "FOR VALUES FROM ('8589934592') TO ('12884901888')")]
    keys = conn.execute("SELECT DISTINCT tableoid::regclass::text, traj_key, traj_id "
                        "FROM raw.points ORDER BY traj_key").fetchall()
    # The leaf's number in the high 32 bits, the order of appearance in the low ones.
    leaf = f"raw.points_{result.dataset_id}"
    assert keys == [(f"{leaf}_0", 0, "z"), (f"{leaf}_0", 3, "a"),
                    (f"{leaf}_1", 2**32 + 1, "é"), (f"{leaf}_1", 2**32 + 4, "Z"),
                    (f"{leaf}_2", 2 * 2**32 + 2, "A b"), (f"{leaf}_2", 2 * 2**32 + 5, "ab")]
    expected = [(traj, user, utc(t), lon, lat) for (traj, user, t, lon, lat) in LEAF_ROWS]
    for leaf, _ in leaves:
        stored = conn.execute(f"SELECT traj_id, user_id, t, lon, lat FROM raw.{leaf} "
                              "ORDER BY ctid").fetchall()
        assert stored == [row for row in expected if row in stored]  # in the file's order
    everything = conn.execute("SELECT traj_id, user_id, t, lon, lat FROM raw.points "
                              "WHERE dataset_id = %s", (result.dataset_id,)).fetchall()
    assert sorted(everything) == sorted(expected)
    assert result.record.n_points == 18 and result.record.n_trajectories == 6


def test_leaves_carry_the_parents_indexes_and_statistics(
        conn: psycopg.Connection, tmp_path: Path, small_leaves: None) -> None:
    result = load(write_csv(tmp_path, LEAF_ROWS))
    for leaf, _ in leaves_of(conn, result.dataset_id):
        indexes = conn.execute(
            "SELECT split_part(pg_get_indexdef(i.indexrelid), ' USING ', 2), "
            "(SELECT array_agg(a.relid::regclass::text ORDER BY a.n) "
            " FROM pg_partition_ancestors(i.indexrelid) WITH ORDINALITY AS a(relid, n)) "
            "FROM pg_index AS i WHERE i.indrelid = %s::regclass ORDER BY 1",
            (f"raw.{leaf}",)).fetchall()
        assert [(definition, chain[1:]) for definition, chain in indexes] == [
            ("btree (t)", [f"raw.points_{result.dataset_id}_t_idx", "raw.points_t_idx"]),
            ("btree (traj_id, t)", [f"raw.points_{result.dataset_id}_traj_id_t_idx",
                                    "raw.points_traj_t_idx"])]
    (analysed,) = conn.execute(
        "SELECT count(*) FROM pg_stat_user_tables WHERE schemaname = 'raw' "
        "AND relname ~ %s AND last_analyze IS NOT NULL",
        (f"^points_{result.dataset_id}_[0-9]+$",)).fetchone()
    assert analysed == 3


def test_sort_and_drops_work_across_leaves(conn: psycopg.Connection, tmp_path: Path,
                                           small_leaves: None) -> None:
    rows = [*reversed(LEAF_ROWS), fix("a", "u3", minute(1), 0, 0)]  # backwards, one null island
    result = load(write_csv(tmp_path, rows), sort=True)
    assert dropped(result) == {"null_island_0_0": 1}
    stored = conn.execute("SELECT tableoid::regclass::text, traj_id, t FROM raw.points "
                          "WHERE dataset_id = %s ORDER BY 1, ctid",
                          (result.dataset_id,)).fetchall()
    # Each leaf holds its trajectories sorted (by traj_id in byte order, then time).
    by_leaf: dict[str, list[tuple[str, datetime]]] = {}
    for leaf, traj, t in stored:
        by_leaf.setdefault(leaf, []).append((traj, t))
    assert len(by_leaf) == 3
    for rows_of_leaf in by_leaf.values():
        assert rows_of_leaf == sorted(rows_of_leaf, key=lambda row: (row[0].encode(), row[1]))
    assert sorted(row for rows_of_leaf in by_leaf.values() for row in rows_of_leaf) == sorted(
        (traj, utc(t)) for (traj, _, t, _, _) in LEAF_ROWS)


def test_replace_of_a_dataset_in_leaves(conn: psycopg.Connection, tmp_path: Path,
                                        small_leaves: None) -> None:
    old = load(write_csv(tmp_path, LEAF_ROWS))
    new = load_good(tmp_path, rows=LEAF_ROWS[:9], replace=True)
    assert raw_tables(conn) == [f"points_{new.dataset_id}", f"points_{new.dataset_id}_0",
                                f"points_{new.dataset_id}_1", f"points_{new.dataset_id}_2"]
    assert database_state(conn).points == ((new.dataset_id, 9),)
    assert old.dataset_id != new.dataset_id


def test_a_failing_leaf_leaves_nothing(conn: psycopg.Connection, tmp_path: Path,
                                       small_leaves: None,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    keep = load_good(tmp_path, dataset="keep")
    before = database_state(conn)
    built = store_module._build_leaf

    def build_then_fail(url: str | None, dataset_id: int, leaf: Any, leaves: int) -> None:
        built(url, dataset_id, leaf, leaves)  # committed, as a leaf of a killed load would be
        if leaf.number == 1:
            raise RuntimeError("disk full")

    monkeypatch.setattr(store_module, "_build_leaf", build_then_fail)
    with pytest.raises(RuntimeError, match="disk full"):
        load(write_csv(tmp_path, LEAF_ROWS))
    assert database_state(conn) == before
    assert datasets_with_tables(conn) == {keep.dataset_id}


def test_leaves_of_a_killed_load_are_dropped_by_the_next_load_only_once_it_is_over(
        conn: psycopg.Connection, db_url: str, tmp_path: Path, small_leaves: None) -> None:
    # A load killed while publishing: its leaves are committed and nobody cleans up.
    def killed(*args: Any) -> None:
        raise KeyboardInterrupt

    persons = write_persons(tmp_path, [(f"u{i}",) for i in range(1, 6)], header="user_id")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(store_module, "_publish", killed)
        patch.setattr(store_module, "_drop_staged", lambda *args: None)
        with pytest.raises(KeyboardInterrupt):
            load(write_csv(tmp_path, LEAF_ROWS), persons=persons)
    orphans = raw_tables(conn)
    assert len(orphans) == 4 and database_state(conn) == EMPTY  # 3 leaves, the persons
    (killed_id,) = datasets_with_tables(conn)
    # While another session holds the killed load's lock (as if it still ran): left alone.
    with psycopg.connect(db_url, autocommit=True) as running:
        running.execute("SELECT pg_advisory_lock(%s, %s)",
                        (store_module.STAGING_LOCK, killed_id))
        first = load_good(tmp_path, dataset="first")
        assert datasets_with_tables(conn) == {killed_id, first.dataset_id}
    second = load_good(tmp_path, dataset="second")
    assert datasets_with_tables(conn) == {first.dataset_id, second.dataset_id}


# --------------------------------------------------------------------------- streaming


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks of 3 rows, so that a small file streams through as a large one does."""
    monkeypatch.setattr(readers_module, "CHUNK_ROWS", 3)


# Ten trajectories of four fixes, two per person: 40 rows, 10 chunks or more.
STREAM_ROWS: list[Row] = [fix(f"t{i // 4}", f"u{i // 8}", minute(i % 4), 11.2 + i / 1000, 43.7)
                          for i in range(40)]


@dataclass
class StreamLog:
    """What happened, in order: ("read", rows) per chunk read, ("sent", rows) per COPY part."""

    events: list[tuple[str, int]]

    def first(self, kind: str) -> int:
        return next(i for i, (what, _) in enumerate(self.events) if what == kind)

    def last(self, kind: str) -> int:
        return max(i for i, (what, _) in enumerate(self.events) if what == kind)


@pytest.fixture
def stream_log(monkeypatch: pytest.MonkeyPatch, small_chunks: None) -> StreamLog:
    log = StreamLog([])
    batches, send = readers_module.csv_batches, store_module.Staging.send

    def logged_batches(*args: Any) -> Any:
        for batch in batches(*args):
            log.events.append(("read", batch.num_rows))
            yield batch

    def logged_send(self: Any, number: int, rows: Any) -> None:
        send(self, number, rows)
        log.events.append(("sent", len(rows)))

    monkeypatch.setattr(readers_module, "csv_batches", logged_batches)
    monkeypatch.setattr(store_module.Staging, "send", logged_send)
    return log


def test_the_file_streams_in_chunks_into_the_copy(conn: psycopg.Connection, tmp_path: Path,
                                                  small_leaves: None,
                                                  stream_log: StreamLog) -> None:
    """Rows reach the leaves' COPY while the file is still being read (no whole-file read)."""
    result = load(write_csv(tmp_path, STREAM_ROWS))
    reads = [rows for what, rows in stream_log.events if what == "read"]
    assert len(reads) >= 8 and max(reads) <= 6 and sum(reads) == 40
    assert stream_log.first("sent") < stream_log.last("read")
    assert sum(rows for what, rows in stream_log.events if what == "sent") == 40
    stored = conn.execute("SELECT traj_id, user_id, t, lon, lat FROM raw.points "
                          "WHERE dataset_id = %s", (result.dataset_id,)).fetchall()
    assert sorted(stored) == sorted((traj, user, utc(t), lon, lat)
                                    for (traj, user, t, lon, lat) in STREAM_ROWS)
    assert len(leaves_of(conn, result.dataset_id)) == 3
    assert (result.record.n_trajectories, result.record.n_persons) == (10, 5)
    assert (result.record.lon_median, result.record.lat_median) == (11.2195, 43.7)


@pytest.mark.parametrize(("row", "fragments"), [
    (fix("t9", "u4", "yesterday"), ["1 row(s) with an unparseable timestamp", "(lines 39)",
                                    "Use ISO-8601"]),
    (fix("t0", "u0", minute(5)), ["a traj_id whose rows are not contiguous", "(lines 39)",
                                  "--sort"]),
    (fix("t9", "u0", minute(3)), ["traj_id 't9' under several user_ids", "39)",
                                  "give each person's trips their own traj_id"]),
    (fix("t9", "u4", "2020-01-01T07:59:00Z"), ["a timestamp earlier than the previous one",
                                               "(lines 39)"]),
    (fix("", "u4", minute(3)), ["an empty traj_id", "(lines 39)"]),
])
def test_a_bad_row_in_a_late_chunk_rolls_everything_back(
        conn: psycopg.Connection, tmp_path: Path, small_leaves: None, stream_log: StreamLog,
        row: Row, fragments: list[str]) -> None:
    """Line 39 is in one of the last chunks: the leaves have taken rows already; nothing
    of them stays (under another user_id, the lines are those of t9 in its chunk)."""
    keep = load_good(tmp_path, dataset="keep")
    before, tables = database_state(conn), raw_tables(conn)
    rows = [*STREAM_ROWS[:37], row, *STREAM_ROWS[38:]]
    path = write_csv(tmp_path, rows)
    expect_rejected(conn, path, str(path), *fragments)
    assert sum(rows for what, rows in stream_log.events if what == "sent") >= 30
    assert database_state(conn) == before
    assert raw_tables(conn) == tables and datasets_with_tables(conn) == {keep.dataset_id}


def test_repeats_and_order_are_judged_across_chunks(conn: psycopg.Connection, tmp_path: Path,
                                                    small_chunks: None) -> None:
    """A chunk's first row is compared with the last kept row of the chunks before."""
    rows = [fix("a", "u1", minute(0)), fix("a", "u1", minute(1), 11.3, 43.8),
            fix("a", "u1", minute(2), 11.4, 43.9),  # chunk 1 ends
            fix("a", "u1", minute(2), 11.4, 43.9), fix("a", "u1", minute(2), 11.5, 43.9),
            fix("a", "u1", minute(2), 0, 0)]  # chunk 2: two repeats, one null island
    result = load(write_csv(tmp_path, rows))
    assert dropped(result) == {"duplicate_fix_same_position": 1,
                               "duplicate_time_other_position": 1, "null_island_0_0": 1}
    assert examples(result) == {"duplicate_fix_same_position": [5],
                                "duplicate_time_other_position": [6], "null_island_0_0": [7]}
    assert len(stored_points(conn, result.dataset_id)) == 3


def test_sort_in_chunks_orders_the_whole_file(conn: psycopg.Connection, tmp_path: Path,
                                              small_chunks: None, small_leaves: None) -> None:
    """--sort orders across chunks (in PostgreSQL), keeping the file's first fix of an
    instant and naming repeats by their line in the file."""
    rows = [*reversed(STREAM_ROWS), fix("t0", "u0", minute(0), 11.9, 43.9)]
    result = load(write_csv(tmp_path, rows), sort=True)
    assert dropped(result) == {"duplicate_time_other_position": 1}
    assert examples(result) == {"duplicate_time_other_position": [42]}
    stored = conn.execute("SELECT tableoid::regclass::text, traj_id, t, lon FROM raw.points "
                          "WHERE dataset_id = %s ORDER BY 1, ctid",
                          (result.dataset_id,)).fetchall()
    for leaf in {leaf for leaf, *_ in stored}:
        of_leaf = [(traj, t) for name, traj, t, _ in stored if name == leaf]
        assert of_leaf == sorted(of_leaf)
    assert sorted((traj, t, lon) for _, traj, t, lon in stored) == sorted(
        (traj, utc(t), lon) for (traj, _, t, lon, _) in STREAM_ROWS)


# --------------------------------------------------------------------------- GeoParquet, GPKG


def geo_frame(crs: int | None = 4326) -> gpd.GeoDataFrame:
    """Three fixes of one trajectory in Florence, with tz-aware timestamps."""
    return gpd.GeoDataFrame(
        {"traj_id": ["a", "a", "a"], "user_id": ["u1", "u1", "u1"],
         "t": pd.to_datetime([minute(0), minute(1), minute(2)], utc=True)},
        geometry=[Point(11.25, 43.77), Point(11.26, 43.78), Point(11.2701, 43.7912)],
        crs=crs,
    )


def write_geo(frame: gpd.GeoDataFrame, path: Path) -> Path:
    if path.suffix == ".gpkg":
        frame.to_file(path, driver="GPKG", engine="pyogrio")
    else:
        frame.to_parquet(path)
    return path


@pytest.mark.parametrize("suffix", [".parquet", ".gpkg"])
@pytest.mark.parametrize("crs", [4326, 3857])
def test_geo_table_round_trip(conn: psycopg.Connection, tmp_path: Path,
                              suffix: str, crs: int) -> None:
    original = geo_frame()
    path = write_geo(original.to_crs(crs), tmp_path / f"points{suffix}")
    result = load(path)
    assert dropped(result) == {}
    assert result.record.load_report["unit"] == "row"
    stored = stored_points(conn, result.dataset_id)
    assert [(traj, user, t) for (traj, user, t, _, _) in stored] == [
        ("a", "u1", utc(minute(m))) for m in range(3)]
    for (*_, lon, lat), point in zip(stored, original.geometry, strict=True):
        assert lon == pytest.approx(point.x, abs=1e-9)
        assert lat == pytest.approx(point.y, abs=1e-9)


@pytest.mark.parametrize("suffix", [".parquet", ".gpkg"])
def test_geo_table_noise_is_reported_by_row(conn: psycopg.Connection, tmp_path: Path,
                                            suffix: str) -> None:
    frame = geo_frame()
    frame.loc[1, "geometry"] = Point(0, 0)
    result = load(write_geo(frame, tmp_path / f"points{suffix}"))
    assert dropped(result) == {"null_island_0_0": 1}
    assert examples(result) == {"null_island_0_0": [2]}
    assert "(e.g. row 2)" in result.summary()


@pytest.mark.parametrize("suffix", [".parquet", ".gpkg"])
def test_geo_table_with_non_point_geometry_is_rejected(conn: psycopg.Connection, tmp_path: Path,
                                                       suffix: str) -> None:
    frame = geo_frame()
    frame.loc[1, "geometry"] = LineString([(11.25, 43.77), (11.26, 43.78)])
    path = write_geo(frame, tmp_path / f"points{suffix}")
    expect_rejected(conn, path, str(path), "geometries must be Points", "LineString")
    assert database_state(conn) == EMPTY


@pytest.mark.filterwarnings("ignore:'crs' was not provided")  # that is the point here
@pytest.mark.parametrize("suffix", [".parquet", ".gpkg"])
def test_geo_table_without_crs_is_rejected(conn: psycopg.Connection, tmp_path: Path,
                                           suffix: str) -> None:
    path = write_geo(geo_frame(crs=None), tmp_path / f"points{suffix}")
    expect_rejected(conn, path, str(path), "no CRS", "set one (e.g. EPSG:4326)")
    assert database_state(conn) == EMPTY


@pytest.mark.parametrize("suffix", [".parquet", ".gpkg"])
def test_geo_table_with_wrong_columns_is_rejected(conn: psycopg.Connection, tmp_path: Path,
                                                  suffix: str) -> None:
    frame = geo_frame().rename(columns={"user_id": "person"})
    path = write_geo(frame, tmp_path / f"points{suffix}")
    expect_rejected(conn, path, str(path), "missing user_id", "unexpected person")
    assert database_state(conn) == EMPTY


@pytest.mark.parametrize("suffix", [".parquet", ".gpkg"])
def test_geo_table_without_user_id_makes_each_trajectory_its_own_person(
        conn: psycopg.Connection, tmp_path: Path, suffix: str) -> None:
    frame = geo_frame().drop(columns="user_id")
    result = load(write_geo(frame, tmp_path / f"points{suffix}"))
    assert result.persons_known is False and result.warning() is not None
    assert [(traj, user) for (traj, user, *_) in stored_points(conn, result.dataset_id)] == [
        ("a", "a")] * 3
    assert result.record.n_persons == 1


@pytest.mark.parametrize("suffix", [".parquet", ".gpkg"])
def test_geo_table_streams_in_chunks(conn: psycopg.Connection, tmp_path: Path, suffix: str,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """One row per chunk: rows keep their numbers, noise and bad geometries in a late
    chunk are found there."""
    monkeypatch.setattr(readers_module, "CHUNK_ROWS", 1)
    frame = geo_frame()
    frame.loc[2, "geometry"] = Point(0, 0)
    path = write_geo(frame, tmp_path / f"points{suffix}")
    assert [batch.num_rows for batch in readers_module.read_points(path).batches()] == [1] * 3
    result = load(path)
    assert examples(result) == {"null_island_0_0": [3]} and result.record.n_points == 2
    frame.loc[2, "geometry"] = LineString([(11.25, 43.77), (11.26, 43.78)])
    bad = write_geo(frame, tmp_path / f"bad{suffix}")
    expect_rejected(conn, bad, str(bad), "geometries must be Points", "LineString", dataset="y")


def test_unreadable_geo_table_is_rejected(conn: psycopg.Connection, tmp_path: Path) -> None:
    path = tmp_path / "points.parquet"
    path.write_text(HEADER + "\n")
    expect_rejected(conn, path, str(path), "cannot read it as GeoParquet/GeoPackage")


# --------------------------------------------------------------------------- whole datasets


def test_small_city_loads_without_drops(conn: psycopg.Connection,
                                        small_city: tuple[Path, Path]) -> None:
    points, persons = small_city
    result = load(points, "city", persons=persons)
    csv = pd.read_csv(points, dtype={"traj_id": str, "user_id": str})
    report = result.record.load_report
    assert report["rows_read"] == len(csv)
    assert report["dropped"] == {}
    assert result.record.n_points == len(csv)
    assert result.record.n_trajectories == csv["traj_id"].nunique()
    assert result.record.n_persons == csv["user_id"].nunique()
    state = database_state(conn)
    assert state.points == ((result.dataset_id, len(csv)),)
    assert state.persons == ((result.dataset_id, csv["user_id"].nunique()),)
    assert state.datasets == ((result.dataset_id, "city", len(csv)),)


@pytest.mark.realdata
def test_tdrive_loads_with_its_noise_reported(conn: psycopg.Connection) -> None:
    path = SHARED_DATA / "tdrive_600" / "points.csv.gz"
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    result = load(path, "tdrive")
    report = result.record.load_report
    assert report["rows_read"] == 794_484
    assert report["dropped"]["coordinate_out_of_range"] == 2
    assert report["dropped"]["null_island_0_0"] == 186
    duplicates = sum(count for reason, count in report["dropped"].items()
                     if reason.startswith("duplicate_"))
    assert duplicates == 156
    n_dropped = sum(report["dropped"].values())
    assert result.record.n_points == 794_484 - n_dropped
    assert database_state(conn).points == ((result.dataset_id, 794_484 - n_dropped),)
    (lon_max,) = conn.execute("SELECT max(abs(lon)) FROM raw.points").fetchone()
    assert lon_max <= 180


# --------------------------------------------------------------------------- CLI


def test_cli_reports_a_bad_file_in_one_line(db_url: str, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    bad = write_csv(tmp_path, [fix("a", "u1", minute(1)), fix("a", "u1", minute(0))])
    assert cli_main(["load", str(bad), "--dataset", "x"]) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line]
    assert lines[-1].startswith(f"error: {bad}: ")
    assert "--sort" in lines[-1]
    assert "Traceback" not in err
    assert [line for line in lines if line.startswith("error")] == [lines[-1]]
    with psycopg.connect(db_url) as check:
        assert database_state(check) == EMPTY


def test_cli_loads_and_prints_the_summary(db_url: str, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    rows = [*GOOD_ROWS, fix("b", "u2", "2020-01-01T09:05:00Z", 0, 0)]
    assert cli_main(["load", str(write_csv(tmp_path, rows)), "--dataset", "x"]) == 0
    out = capsys.readouterr().out
    assert re.match(r"loaded dataset 'x' \(id \d+\): 5 points, 2 trajectories, 2 persons", out)
    assert "dropped        1 null_island_0_0 (e.g. line 7)" in out


def test_cli_says_that_k_counts_trajectories_when_persons_are_unknown(
        db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_csv(tmp_path, without_user_id(GOOD_ROWS), header="traj_id,t,lon,lat")
    assert cli_main(["load", str(path), "--dataset", "x"]) == 0
    captured = capsys.readouterr()
    assert re.match(r"loaded dataset 'x' \(id \d+\): 5 points, 2 trajectories, persons "
                    r"unknown \(each trajectory is its own person\)", captured.out)
    warning = [line for line in captured.err.splitlines() if line.startswith("warning:")]
    assert len(warning) == 1
    assert "k will count trajectories as persons" in warning[0]
    assert "overstates the anonymity" in warning[0]


def test_cli_rejects_persons_for_points_without_user_id(
        db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_csv(tmp_path, without_user_id(GOOD_ROWS), header="traj_id,t,lon,lat")
    persons = write_persons(tmp_path, [("u1",), ("u2",)], header="user_id")
    assert cli_main(["load", str(path), "--dataset", "x", "--persons", str(persons)]) == 2
    err = capsys.readouterr().err
    assert f"error: {persons}: a persons file was given, but {path} has no user_id" in err
    assert "Traceback" not in err


def test_load_report_is_stored_as_json(conn: psycopg.Connection, tmp_path: Path) -> None:
    result = load_good(tmp_path, rows=[*GOOD_ROWS, fix("b", "u2", minute(30), 0, 0)])
    (report,) = conn.execute("SELECT load_report FROM raw.datasets").fetchone()
    assert report == json.loads(json.dumps(result.record.load_report))
    assert report["dropped"] == {"null_island_0_0": 1}
