"""A COPY's output in pieces of whole rows, read ahead on a thread (anonymizers.db.sqlfiles)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import psycopg
import pyarrow as pa
import pyarrow.csv as pacsv
import pytest

from anonymizers.db import sqlfiles
from anonymizers.db.sqlfiles import copy_out, copy_pieces

# Rows of varying length, some with a quoted line break inside (CSV allows it): a piece
# cut anywhere but between rows would not parse on its own.
ROWS = """COPY (
    SELECT g, repeat('x', mod(g, 50)) || CASE WHEN mod(g, 7) = 0 THEN E'\\n' ELSE '' END
    FROM generate_series(1, %(n)s) g
) TO STDOUT (FORMAT csv)"""
NUMBERS = """COPY (
    SELECT g, g * 0.5, -g FROM generate_series(1, %(n)s) g ORDER BY g
) TO STDOUT (FORMAT csv)"""
FAILING = "COPY (SELECT 1 / (g - %(fail_at)s) FROM generate_series(1, 20000) g) TO STDOUT"


@pytest.fixture
def sql_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    (tmp_path / "test_copy_pieces_rows.sql").write_text(ROWS)
    (tmp_path / "test_copy_pieces_failing.sql").write_text(FAILING)
    (tmp_path / "test_copy_pieces_numbers.sql").write_text(NUMBERS)
    monkeypatch.setenv("ANONYMIZERS_SQL_DIR", str(tmp_path))
    sqlfiles.read_sql.cache_clear()
    yield
    sqlfiles.read_sql.cache_clear()


def readers_alive() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("copy ")]


@pytest.mark.parametrize("piece_bytes", [1, 1_000, 1 << 20])
def test_pieces_are_whole_rows_that_add_up_to_the_output(
        conn: psycopg.Connection, sql_files: None, piece_bytes: int) -> None:
    params = {"n": 5_000}
    pieces = list(copy_pieces(conn, "test_copy_pieces_rows.sql", params, piece_bytes))
    assert b"".join(pieces) == copy_out(conn, "test_copy_pieces_rows.sql", params)
    assert all(len(piece) >= piece_bytes for piece in pieces[:-1])
    rows = [pacsv.read_csv(pa.py_buffer(piece), read_options=pacsv.ReadOptions(
        column_names=["g", "text"])).num_rows for piece in pieces]
    assert sum(rows) == 5_000
    if piece_bytes == 1_000:
        assert len(pieces) > 10
    assert not readers_alive()


def test_no_rows_give_no_piece(conn: psycopg.Connection, sql_files: None) -> None:
    assert list(copy_pieces(conn, "test_copy_pieces_rows.sql", {"n": 0})) == []


def test_a_caller_that_stops_early_leaves_the_connection_usable(
        conn: psycopg.Connection, sql_files: None) -> None:
    pieces = copy_pieces(conn, "test_copy_pieces_rows.sql", {"n": 200_000}, 1_000)
    assert len(next(pieces)) >= 1_000
    pieces.close()  # what a caller's error in the middle of the pieces does
    assert not readers_alive()
    assert conn.execute("SELECT 1").fetchone() == (1,)


def test_a_server_error_mid_copy_is_raised_in_the_caller(
        conn: psycopg.Connection, sql_files: None) -> None:
    taken = []
    with pytest.raises(psycopg.errors.DivisionByZero):
        for piece in copy_pieces(conn, "test_copy_pieces_failing.sql", {"fail_at": 15_000},
                                 1_000):
            taken.append(piece)
    assert taken, "the rows before the error came first"
    assert not readers_alive()
    conn.rollback()
    assert conn.execute("SELECT 1").fetchone() == (1,)


@pytest.mark.parametrize("n", [0, 1, 30_000])
def test_copy_columns_are_the_whole_output_as_arrays(
        conn: psycopg.Connection, sql_files: None, monkeypatch: pytest.MonkeyPatch,
        n: int) -> None:
    from anonymizers.db import groups

    monkeypatch.setattr(groups, "CSV_BLOCK", 4_096)  # many pieces
    kinds = {"g": pa.int64(), "half": pa.float64(), "minus": pa.int32()}
    found = groups.copy_columns(conn, "test_copy_pieces_numbers.sql", kinds, {"n": n})
    assert list(found) == ["g", "half", "minus"]
    assert found["g"].tolist() == list(range(1, n + 1))
    assert found["half"].tolist() == [g * 0.5 for g in range(1, n + 1)]
    assert found["minus"].dtype == np.int32 and found["minus"].sum() == -n * (n + 1) // 2


def test_an_arrow_table_copied_in_comes_back_exactly(conn: psycopg.Connection) -> None:
    """copy_arrow: text with the characters CSV quotes, an empty string (not NULL), nulls,
    and doubles that only their shortest round-trip digits give back."""
    from anonymizers.db.sqlfiles import copy_arrow

    texts = ["plain", 'with "quotes"', "comma, inside", "line\nbreak", "", None]
    doubles = [1 / 3, 476406.495840086, 1e-300, -0.0, 4491801.026550643, None]
    with conn.transaction():
        conn.execute("CREATE TEMP TABLE copied (label text, value double precision, n bigint)")
        copy_arrow(conn, "pg_temp", "copied", pa.table({
            "label": texts, "value": doubles, "n": [1, 2, 3, None, 5, 6]}))
        rows = conn.execute("SELECT label, value, n FROM copied ORDER BY n NULLS FIRST"
                            ).fetchall()
    expected = sorted(zip(texts, doubles, [1, 2, 3, None, 5, 6], strict=True),
                      key=lambda row: (row[2] is not None, row[2] or 0))
    assert rows == expected
