"""A COPY's output in pieces of whole rows, read ahead on a thread (anonymizers.db.sqlfiles)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

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
FAILING = "COPY (SELECT 1 / (g - %(fail_at)s) FROM generate_series(1, 20000) g) TO STDOUT"


@pytest.fixture
def sql_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    (tmp_path / "test_copy_pieces_rows.sql").write_text(ROWS)
    (tmp_path / "test_copy_pieces_failing.sql").write_text(FAILING)
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
