"""Run the SQL files of ``sql/``: schema names go in as identifiers, values as bound parameters.

A file may hold several statements. Placeholders ``{work}``, ``{build}`` (schema names)
are filled with ``psycopg.sql.Identifier``; ``%(name)s`` placeholders are values, bound
by psycopg's client-side cursor (which escapes them; it is what lets one file hold
several statements, which the server-side extended protocol does not allow).
"""

from __future__ import annotations

import io
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg import sql
from psycopg.abc import Buffer

from anonymizers.errors import ReleaseError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["compose_sql", "copy_frame", "copy_out", "copy_stream", "fetch_columns", "read_sql",
           "run_sql_file", "sql_dir"]


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
    # One buffer, not a bytes object per chunk: a text COPY sends one message per row, and
    # millions of small objects plus their join took ~9x the output (32 MiB -> +286 MiB).
    output = bytearray()
    with conn.cursor().copy(compose_sql(name, **identifiers), params or {}) as copy:
        for data in copy:
            output += data
    return bytes(output)


class _CopyReader(io.RawIOBase):
    """The data of a running ``COPY ... TO STDOUT`` as a raw byte stream.

    psycopg yields one row per block (each in memory of its own, so blocks may be kept);
    a read joins as many as it asks for, rather than returning one row per call. Readers
    such as pyarrow's read ahead on a thread of their own: :meth:`stop` waits for a read in
    progress and makes later ones see the end, so that the COPY is not read from two
    threads while psycopg ends it.
    """

    def __init__(self, copy: psycopg.Copy) -> None:
        self._blocks = iter(copy)
        self._rest = memoryview(b"")
        self._lock = threading.Lock()
        self._stopped = False

    def readable(self) -> bool:
        return True

    def stop(self) -> None:
        with self._lock:
            self._stopped = True

    def readinto(self, buffer: Any) -> int:
        with self._lock:
            return 0 if self._stopped else self._fill(buffer)

    def _fill(self, buffer: Any) -> int:
        wanted = len(buffer)
        parts: list[Buffer] = [self._rest]
        size = len(self._rest)
        while size < wanted:
            block = next(self._blocks, None)
            if block is None:
                break
            parts.append(block)
            size += len(block)
        data = memoryview(b"".join(parts))
        taken = min(wanted, len(data))
        buffer[:taken] = data[:taken]
        self._rest = data[taken:]
        return taken


@contextmanager
def copy_stream(conn: psycopg.Connection, name: str, params: dict[str, Any] | None = None,
                buffer_size: int = 1 << 20, **identifiers: Name) -> Iterator[io.BufferedReader]:
    """The output of the ``COPY (...) TO STDOUT`` statement in ``sql/<name>`` as a file
    read while the server sends it: only what the reader asks for at a time (plus
    ``buffer_size`` bytes of buffer) is held here, where :func:`copy_out` holds all of it.
    The connection runs nothing else until the block ends."""
    with conn.cursor().copy(compose_sql(name, **identifiers), params or {}) as copy:
        reader = _CopyReader(copy)
        try:
            yield io.BufferedReader(reader, buffer_size)
        finally:
            reader.stop()  # before psycopg ends the COPY (reading what is left, if any)


def copy_frame(conn: psycopg.Connection, schema: str, table: str, frame: pd.DataFrame) -> None:
    """Append ``frame`` to ``schema.table`` (COPY as CSV, columns by name; NA is NULL)."""
    statement = sql.SQL("COPY {} ({}) FROM STDIN (FORMAT csv)").format(
        sql.Identifier(schema, table),
        sql.SQL(", ").join(sql.Identifier(column) for column in frame.columns))
    buffer = io.StringIO()
    frame.to_csv(buffer, index=False, header=False)
    with conn.cursor().copy(statement) as copy:
        copy.write(buffer.getvalue())
