"""Run the SQL files of ``sql/``: schema names go in as identifiers, values as bound parameters.

A file may hold several statements. Placeholders ``{work}``, ``{build}`` (schema names)
are filled with ``psycopg.sql.Identifier``; ``%(name)s`` placeholders are values, bound
by psycopg's client-side cursor (which escapes them; it is what lets one file hold
several statements, which the server-side extended protocol does not allow).
"""

from __future__ import annotations

import io
import os
import queue
import threading
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg import sql

from anonymizers.errors import ReleaseError

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

__all__ = ["compose_sql", "copy_arrow", "copy_frame", "copy_out", "copy_pieces",
           "fetch_columns", "fetch_row", "fetch_rows", "put_unless_stopped", "read_sql",
           "run_sql_file", "sql_dir"]


def sql_dir() -> Path:
    """The project's ``sql/`` folder (``ANONYMIZERS_SQL_DIR`` overrides, e.g. in a container)."""
    if env := os.environ.get("ANONYMIZERS_SQL_DIR"):
        return Path(env)
    return Path(__file__).resolve().parents[2] / "sql"


@cache
def read_sql(name: str) -> str:
    """The text of ``sql/<name>``; ReleaseError saying where it was looked for if missing."""
    path = sql_dir() / name
    if not path.is_file():
        family = name.split("/", 1)[0]
        raise ReleaseError(
            f"the SQL file sql/{name} is missing (looked for {path}): the installation is "
            f"incomplete or the code names a file that does not exist. Reinstall the package, "
            f"or set ANONYMIZERS_SQL_DIR to the project's sql/ folder; a family's SQL lives "
            f"under sql/<family>/ (here sql/{family}/).")
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


def fetch_rows(conn: psycopg.Connection, name: str, params: dict[str, Any] | None = None,
               **identifiers: Name) -> list[dict[str, Any]]:
    """Like :func:`run_sql_file`, but each row of the last result as a dict by column name."""
    names, rows = _execute(conn, name, params, identifiers)
    if len(set(names)) != len(names):
        raise ReleaseError(f"sql/{name}: the result has duplicate column names {names}")
    return [dict(zip(names, row, strict=True)) for row in rows]


def fetch_row(conn: psycopg.Connection, name: str, params: dict[str, Any] | None = None,
              **identifiers: Name) -> dict[str, Any] | None:
    """The first row of the last result of ``sql/<name>`` by column name (None: no row)."""
    rows = fetch_rows(conn, name, params, **identifiers)
    return rows[0] if rows else None


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


def copy_pieces(conn: psycopg.Connection, name: str, params: dict[str, Any] | None = None,
                piece_bytes: int = 8 << 20, **identifiers: Name) -> Iterator[bytes]:
    """The output of the ``COPY (...) TO STDOUT`` statement in ``sql/<name>`` in pieces of
    whole rows, each of at least ``piece_bytes`` bytes (the last may be smaller), read by a
    thread of its own while the caller works on the pieces before: at most
    :data:`PIECES_AHEAD` pieces wait, where :func:`copy_out` holds all of the output. The
    connection runs nothing else until the iteration ends. Closing the iterator early
    cancels the COPY (in a transaction, that aborts it, as any error does).

    A ``COPY TO`` sends every row in a message of its own, and psycopg yields one message
    per block, so a piece cut between blocks never splits a row (not even a CSV row with a
    quoted line break): each piece can be parsed on its own, with all of pyarrow's
    threads. Reading ahead keeps the server sending while the caller computes."""
    pieces: queue.Queue[bytes | BaseException | None] = queue.Queue(PIECES_AHEAD)
    stop = threading.Event()

    def read() -> None:
        try:
            with conn.cursor().copy(compose_sql(name, **identifiers), params or {}) as copy:
                piece = bytearray()
                for row in copy:
                    piece += row
                    if len(piece) >= piece_bytes:
                        if not put_unless_stopped(pieces, bytes(piece), stop):
                            raise _Stopped  # psycopg cancels the COPY on an error only
                        piece = bytearray()
                if piece:
                    put_unless_stopped(pieces, bytes(piece), stop)
            put_unless_stopped(pieces, None, stop)
        except _Stopped:
            pass
        except BaseException as error:  # the caller raises it
            put_unless_stopped(pieces, error, stop)

    reader = threading.Thread(target=read, name=f"copy {name}", daemon=True)
    reader.start()
    try:
        while (piece := pieces.get()) is not None:
            if isinstance(piece, BaseException):
                raise piece
            yield piece
    finally:
        stop.set()
        reader.join()  # the COPY is over before the connection is used again


# Pieces read ahead of the caller, at most: enough to keep the server sending.
PIECES_AHEAD = 2


class _Stopped(Exception):
    """The caller of copy_pieces stopped taking pieces."""


def put_unless_stopped(items: queue.Queue[Any], item: Any, stop: threading.Event) -> bool:
    """Hand ``item`` to a reader thread's caller unless it stopped taking them (``stop``);
    whether it was handed."""
    while not stop.is_set():
        try:
            items.put(item, timeout=0.1)
            return True
        except queue.Full:
            continue
    return False


def copy_arrow(conn: psycopg.Connection, schema: str, table: str, data: pa.Table) -> None:
    """Append ``data`` to ``schema.table`` (columns by name; null is NULL, an empty string
    stays one), in COPY's binary format when every target column's type allows it
    (:mod:`anonymizers.db.binary_copy`: the server parses nothing; 16 million visits took
    it 19.0 s as CSV, 10.7 s as binary), else as CSV that Arrow writes in C++, with the
    shortest digits that give each double back exactly (pandas' ``to_csv`` takes ten times
    as long: 3M rows, 2.2 against 22.3 s)."""
    from anonymizers.db import binary_copy

    listed = fetch_columns(conn, "db/column_types.sql", {
        "relation": sql.Identifier(schema, table).as_string(conn)})
    found = dict(zip(listed["name"], listed["type"], strict=True))
    types = [found.get(column, "") for column in data.column_names]
    if binary_copy.encodable(types):
        # Checked first: a value its column cannot hold raises before the COPY starts.
        chunks = binary_copy.encoded_chunks(data, types)
        with conn.cursor().copy(_copy_in(schema, table, data.column_names, "binary")) as copy:
            copy.write(binary_copy.HEADER)
            for rows in chunks:
                copy.write(memoryview(rows))
            copy.write(binary_copy.TRAILER)
        return
    import pyarrow as pa
    import pyarrow.csv as pacsv

    # A time without a zone is UTC here as in the binary format: written with its zone,
    # not as wall-clock text the session's TimeZone would read.
    data = pa.table([column.cast(pa.timestamp(column.type.unit, tz="UTC"))
                     if pa.types.is_timestamp(column.type) and column.type.tz is None
                     else column for column in data.columns], names=data.column_names)
    sink = pa.BufferOutputStream()
    pacsv.write_csv(data, sink, pacsv.WriteOptions(include_header=False,
                                                   quoting_style="needed"))
    with conn.cursor().copy(_copy_in(schema, table, data.column_names)) as copy:
        copy.write(sink.getvalue())


def copy_frame(conn: psycopg.Connection, schema: str, table: str, frame: pd.DataFrame) -> None:
    """Append ``frame`` to ``schema.table`` (COPY as CSV, columns by name; NA is NULL)."""
    buffer = io.StringIO()
    frame.to_csv(buffer, index=False, header=False)
    with conn.cursor().copy(_copy_in(schema, table, frame.columns)) as copy:
        copy.write(buffer.getvalue())


def _copy_in(schema: str, table: str, columns: Iterable[str],
             format: str = "csv") -> sql.Composed:
    """``COPY schema.table (columns) FROM STDIN`` in ``format`` (csv or binary)."""
    return sql.SQL("COPY {} ({}) FROM STDIN (FORMAT {})").format(
        sql.Identifier(schema, table),
        sql.SQL(", ").join(sql.Identifier(column) for column in columns),
        sql.SQL({"csv": "csv", "binary": "binary"}[format]))
