"""Arrow tables as rows of COPY's binary format (anonymizers.db.binary_copy), and
copy_arrow, which sends them so when the target's column types allow."""

from __future__ import annotations

import datetime as dt

import numpy as np
import psycopg
import pyarrow as pa
import pytest

from anonymizers.db import binary_copy
from anonymizers.db.sqlfiles import copy_arrow

TEXTS = ["plain", 'with "quotes"', "comma, tab\tand\nbreak", "", None, "ünïcødé ✓", "\\N"]
TIMES = [dt.datetime(2026, 3, 2, 4, 0, 0, 1), dt.datetime(1999, 12, 31, 23, 59, 59, 999999),
         dt.datetime(2000, 1, 1), None, dt.datetime(1970, 1, 1), dt.datetime(2262, 4, 11),
         dt.datetime(2026, 11, 28, 12, 0)]
ALL_TYPES = """CREATE TEMP TABLE copied (
    label text, code varchar(20), small smallint, n integer, big bigint, r real,
    value double precision, flag boolean, at timestamptz, wall timestamp)"""


def _all_types_table() -> pa.Table:
    n = len(TEXTS)
    return pa.table({
        "label": TEXTS,
        "code": [f"c{i}" if i % 3 else None for i in range(n)],
        "small": pa.array([-32768, 32767, 0, None, 1, 2, 3], pa.int64()),
        "n": pa.array([2**31 - 1, -(2**31), 7, 8, None, 0, -1], pa.int64()),
        "big": [2**63 - 1, -(2**63), None, 0, 1, -1, 42],
        "r": pa.array([0.5, -1.25, None, 3.0, 0.0, 1024.0, -0.0], pa.float32()),
        "value": [1 / 3, 476406.495840086, 1e-300, -0.0, None, float("inf"), 4491801.026550643],
        "flag": [True, False, None, True, True, False, False],
        "at": pa.array(TIMES, pa.timestamp("us")),
        "wall": pa.array(TIMES, pa.timestamp("us")),
    })


def _server_rows(conn: psycopg.Connection, query: str) -> bytes:
    """The rows of the server's own binary COPY of ``query`` (header and trailer cut)."""
    output = bytearray()
    with conn.cursor().copy(f"COPY ({query}) TO STDOUT (FORMAT binary)") as copy:
        for data in copy:
            output += data
    assert output.startswith(binary_copy.HEADER) and output.endswith(binary_copy.TRAILER)
    return bytes(output[len(binary_copy.HEADER):-len(binary_copy.TRAILER)])


def test_every_type_comes_back_exactly_through_a_binary_copy(conn: psycopg.Connection) -> None:
    """NULLs of every type, an empty string (not NULL), text CSV would quote or escape,
    extremes of each integer width, -0.0, infinity, times before 2000 and 1970 (negative
    in the format) and to the microsecond."""
    data = _all_types_table()
    with conn.transaction():
        conn.execute("SET LOCAL TimeZone = 'America/Chicago'")  # binary is UTC: no effect
        conn.execute(ALL_TYPES)
        copy_arrow(conn, "pg_temp", "copied", data)
        rows = conn.execute("SELECT label, code, small, n, big, r, value, flag, "
                            "at AT TIME ZONE 'UTC', wall FROM copied").fetchall()
    expected = list(zip(*(data.column(i).to_pylist() for i in range(data.num_columns)),
                        strict=True))
    assert rows == expected


def test_the_encoded_rows_are_the_bytes_the_server_writes(conn: psycopg.Connection) -> None:
    """encode_rows against PostgreSQL's own binary COPY TO of the same values."""
    data = pa.table({"id": ["a", None, "ccc"], "n": pa.array([1, 2, None], pa.int32()),
                     "x": [0.1, None, -2.5], "t": pa.array([TIMES[0], TIMES[1], None],
                                                           pa.timestamp("us"))})
    ours = binary_copy.encode_rows(data, ["text", "integer", "double precision",
                                          "timestamp with time zone"])
    theirs = _server_rows(conn, """SELECT * FROM (VALUES
        ('a', 1, 0.1::float8, timestamptz '2026-03-02 04:00:00.000001+00'),
        (NULL, 2, NULL, timestamptz '1999-12-31 23:59:59.999999+00'),
        ('ccc', NULL, -2.5, NULL)) AS v(id, n, x, t)""")
    assert ours.to_pybytes() == theirs


def test_a_value_past_its_columns_width_is_refused_and_nothing_is_copied(
        conn: psycopg.Connection) -> None:
    with conn.transaction():
        conn.execute("CREATE TEMP TABLE narrow (n integer)")
        with pytest.raises(pa.ArrowInvalid):
            copy_arrow(conn, "pg_temp", "narrow", pa.table({"n": [1, 2**31]}))
        assert conn.execute("SELECT count(*) FROM narrow").fetchone() == (0,)


def test_a_type_binary_copy_cannot_encode_goes_as_csv(conn: psycopg.Connection) -> None:
    """A jsonb or geometry column (format_type names not encoded) sends the table as CSV."""
    assert not binary_copy.encodable(["integer", "jsonb"])
    assert not binary_copy.encodable(["geometry(Point,4326)"])
    assert binary_copy.encodable(["character varying(3)", "timestamp without time zone"])
    with conn.transaction():
        conn.execute("CREATE TEMP TABLE mixed (n integer, doc jsonb, g geometry(Point, 4326))")
        copy_arrow(conn, "pg_temp", "mixed", pa.table({
            "n": [1, None], "doc": ['{"a": [1, "x,y"]}', None],
            "g": ["SRID=4326;POINT(1 2)", None]}))
        rows = conn.execute("SELECT n, doc, ST_AsText(g) FROM mixed ORDER BY n").fetchall()
    assert rows == [(1, {"a": [1, "x,y"]}, "POINT(1 2)"), (None, None, None)]


def test_an_empty_table_and_a_sliced_one_copy_what_they_hold(conn: psycopg.Connection) -> None:
    """No rows: nothing but the header and trailer; a slice of chunked columns (offsets
    that do not start at 0): its own rows only."""
    assert binary_copy.encode_rows(pa.table({"n": pa.array([], pa.int32())}), ["integer"]
                                   ).size == 0
    chunked = pa.table({"s": pa.chunked_array([["x", "yy"], ["zzz", None, "w"]]),
                        "n": pa.chunked_array([[1, 2], [3, 4, 5]])}).slice(1, 3)
    with conn.transaction():
        conn.execute("CREATE TEMP TABLE sliced (s text, n bigint)")
        copy_arrow(conn, "pg_temp", "sliced", pa.table({"s": pa.array([], pa.string()),
                                                        "n": pa.array([], pa.int64())}))
        copy_arrow(conn, "pg_temp", "sliced", chunked)
        rows = conn.execute("SELECT s, n FROM sliced ORDER BY n").fetchall()
    assert rows == [("yy", 2), ("zzz", 3), (None, 4)]


def test_many_rows_of_the_visits_layout_come_back(conn: psycopg.Connection) -> None:
    """The layout progressive generalization writes (two texts, then fixed-width numbers):
    a hundred thousand rows, summed on both sides."""
    rng = np.random.default_rng(7)
    n = 100_000
    micros = rng.integers(1_600_000_000_000_000, 1_800_000_000_000_000, n)
    data = pa.table({"traj": pa.array([f"t{i // 7}" for i in range(n)]),
                     "cell": rng.integers(0, 500, n).astype(np.int32),
                     "t_enter": pa.array(micros, pa.timestamp("us"))})
    with conn.transaction():
        conn.execute("CREATE TEMP TABLE visits_like (traj text, cell integer, t_enter timestamptz)")
        copy_arrow(conn, "pg_temp", "visits_like", data)
        found = conn.execute(
            "SELECT count(*), count(DISTINCT traj), sum(cell), "
            "sum((extract(epoch FROM t_enter) * 1000000)::bigint) FROM visits_like").fetchone()
    assert found == (n, len(set(data["traj"].to_pylist())), int(data["cell"].to_numpy().sum()),
                     sum(micros.tolist()))


def test_a_zoned_arrow_time_is_the_instant_it_names(conn: psycopg.Connection) -> None:
    rome = dt.timezone(dt.timedelta(hours=1))
    instant = dt.datetime(2026, 3, 2, 5, 30, tzinfo=rome)
    with conn.transaction():
        conn.execute("CREATE TEMP TABLE zoned (at timestamptz)")
        copy_arrow(conn, "pg_temp", "zoned", pa.table({
            "at": pa.array([instant], pa.timestamp("us", tz="Europe/Rome"))}))
        found = conn.execute("SELECT at FROM zoned").fetchone()
    assert found is not None and found[0] == instant


def test_a_time_without_a_zone_is_utc_also_when_the_table_goes_as_csv(
        conn: psycopg.Connection) -> None:
    """A jsonb column sends the table as CSV; its times still mean UTC, whatever the
    session's TimeZone, as in the binary format."""
    with conn.transaction():
        conn.execute("SET LOCAL TimeZone = 'America/Chicago'")
        conn.execute("CREATE TEMP TABLE timed (doc jsonb, at timestamptz)")
        copy_arrow(conn, "pg_temp", "timed", pa.table({
            "doc": ["{}"], "at": pa.array([TIMES[0]], pa.timestamp("us"))}))
        found = conn.execute("SELECT at FROM timed").fetchone()
    assert found is not None and found[0] == TIMES[0].replace(tzinfo=dt.UTC)
