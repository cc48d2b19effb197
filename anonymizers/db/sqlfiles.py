"""Run the SQL files of ``sql/``: schema names go in as identifiers, values as bound parameters.

A file may hold several statements. Placeholders ``{work}``, ``{build}`` (schema names)
are filled with ``psycopg.sql.Identifier``; ``%(name)s`` placeholders are values, bound
by psycopg's client-side cursor (which escapes them; it is what lets one file hold
several statements, which the server-side extended protocol does not allow).
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg import sql

from anonymizers.errors import ReleaseError

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

__all__ = ["compose_sql", "copy_frame", "copy_out", "copy_out_groups", "fetch_columns",
           "read_sql", "run_sql_file", "sql_dir"]


def sql_dir() -> Path:
    """The project's ``sql/`` folder (``ANONYMIZERS_SQL_DIR`` overrides, e.g. in a container)."""
    if env := os.environ.get("ANONYMIZERS_SQL_DIR"):
        return Path(env)
    return Path(__file__).resolve().parents[2] / "sql"


@cache
def read_sql(name: str) -> str:
    path = sql_dir() / name
    if not path.is_file():
        raise FileNotFoundError(f"SQL file {path} not found (is ANONYMIZERS_SQL_DIR right?)")
    return path.read_text()


Name = str | tuple[str, ...]  # a schema, or a qualified (schema, table)


def compose_sql(name: str, **identifiers: Name) -> sql.Composed:
    """The text of ``sql/<name>`` with ``{placeholder}`` bound to (qualified) identifiers."""
    bound = {
        key: sql.Identifier(*value) if isinstance(value, tuple) else sql.Identifier(value)
        for key, value in identifiers.items()
    }
    return sql.SQL(read_sql(name)).format(**bound)  # type: ignore[arg-type]


def _execute(conn: psycopg.Connection, name: str, params: dict[str, Any] | None,
             identifiers: dict[str, Name]) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Every statement of ``sql/<name>``; the column names and rows of the last result."""
    with psycopg.ClientCursor(conn) as cur:
        # Always bind (even {}), so every file writes a literal % as %% whatever its parameters.
        cur.execute(compose_sql(name, **identifiers), params or {})
        names: list[str] = []
        rows: list[tuple[Any, ...]] = []
        while True:
            if cur.description is not None:
                names = [column.name for column in cur.description]
                rows = cur.fetchall()
            if not cur.nextset():
                break
        return names, rows


def run_sql_file(
    conn: psycopg.Connection,
    name: str,
    params: dict[str, Any] | None = None,
    **identifiers: Name,
) -> list[tuple[Any, ...]]:
    """Execute every statement of ``sql/<name>``; returns the rows of the last one (if any)."""
    return _execute(conn, name, params, identifiers)[1]


def fetch_columns(conn: psycopg.Connection, name: str, params: dict[str, Any] | None = None,
                  **identifiers: Name) -> dict[str, list[Any]]:
    """Like :func:`run_sql_file`, but the last result by column name (never by position:
    reordering a SELECT list must not silently swap two measures)."""
    names, rows = _execute(conn, name, params, identifiers)
    if len(set(names)) != len(names):
        raise ReleaseError(f"sql/{name}: the result has duplicate column names {names}")
    columns = list(zip(*rows, strict=True)) if rows else [()] * len(names)
    return {column: list(values) for column, values in zip(names, columns, strict=True)}


def copy_out(conn: psycopg.Connection, name: str, params: dict[str, Any] | None = None,
             **identifiers: Name) -> bytes:
    """The output of the ``COPY (...) TO STDOUT`` statement in ``sql/<name>``."""
    chunks: list[bytes] = []
    with conn.cursor().copy(compose_sql(name, **identifiers), params or {}) as copy:
        chunks.extend(bytes(data) for data in copy)
    return b"".join(chunks)


# About a million fixes of CSV: a chunk's arrays stay in the tens of megabytes.
CHUNK_BYTES = 64 * 2**20


def copy_out_groups(conn: psycopg.Connection, name: str, columns: dict[str, pa.DataType],
                    params: dict[str, Any] | None = None, *, chunk_bytes: int = CHUNK_BYTES,
                    **identifiers: Name) -> Iterator[pa.Table]:
    """The CSV output of the ``COPY (...) TO STDOUT`` in ``sql/<name>``, ordered by its
    first column, as tables of about ``chunk_bytes`` each that never split a group of
    rows sharing the first column (a trajectory): memory bounded by the chunk, not the
    output. ``columns`` names and types the CSV's columns in order. The connection runs
    nothing else until the iteration ends (psycopg holds it for the COPY): a caller that
    writes what it computed from a chunk keeps it until then."""

    held = bytearray()
    pending: pa.Table | None = None
    with conn.cursor().copy(compose_sql(name, **identifiers), params or {}) as copy:
        for data in copy:
            held += data
            if len(held) >= chunk_bytes:
                cut = held.rfind(b"\n") + 1
                table = _with_pending(pending, _read_csv(bytes(held[:cut]), columns))
                del held[:cut]
                done, pending = _split_last_group(table)
                if done.num_rows:
                    yield done
    table = _with_pending(pending, _read_csv(bytes(held), columns))
    if table is not None and table.num_rows:
        yield table


def _read_csv(data: bytes, columns: dict[str, pa.DataType]) -> pa.Table | None:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    if not data:
        return None
    return pacsv.read_csv(pa.py_buffer(data),
                          read_options=pacsv.ReadOptions(column_names=list(columns)),
                          convert_options=pacsv.ConvertOptions(column_types=columns))


def _with_pending(pending: pa.Table | None, table: pa.Table | None) -> pa.Table | None:
    import pyarrow as pa

    if pending is None or table is None:
        return table if pending is None else pending
    return pa.concat_tables([pending, table])


def _split_last_group(table: pa.Table | None) -> tuple[pa.Table, pa.Table | None]:
    """``table`` cut before the rows of its last group (the group may go on in the next
    chunk): (complete groups, last group)."""
    import numpy as np
    import pyarrow.compute as pc

    assert table is not None and table.num_rows
    key = table.column(0)
    differs = np.flatnonzero(~pc.equal(key, key[-1]).to_numpy(zero_copy_only=False))
    start = int(differs[-1]) + 1 if differs.size else 0
    return table.slice(0, start), table.slice(start)


def copy_frame(conn: psycopg.Connection, schema: str, table: str, frame: pd.DataFrame) -> None:
    """Append ``frame`` to ``schema.table`` (COPY as CSV, columns by name; NA is NULL)."""
    statement = sql.SQL("COPY {} ({}) FROM STDIN (FORMAT csv)").format(
        sql.Identifier(schema, table),
        sql.SQL(", ").join(sql.Identifier(column) for column in frame.columns))
    buffer = io.StringIO()
    frame.to_csv(buffer, index=False, header=False)
    with conn.cursor().copy(statement) as copy:
        copy.write(buffer.getvalue())
