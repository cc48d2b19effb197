"""Large query results read straight into Arrow record batches, by the ADBC PostgreSQL
driver, in the snapshot of the caller's transaction.

Why: psycopg hands a ``COPY ... TO STDOUT`` over one Python call per row. At 25M fixes
that was most of a large read: iterating the 16 million visits' cells alone took 9.7 s
where the server sent them in 3.5 to 4.0 s, and parsing CSV came on top. The ADBC driver
runs the same binary COPY and decodes it into Arrow in C (the 16 million cells in 4.0 s,
the 25 million fixes with their two text ids in 12.3 s; psycopg's CSV path took 10.4 and
about 25 s).

The read runs on a connection of its own, which imports the snapshot of the caller's
transaction (``pg_export_snapshot``): it sees what that transaction saw, committed rows
only. So it is for tables an earlier step committed (the window's fixes, the visits, raw
data), not for what the calling transaction wrote itself or its temporary tables. The
driver reads while the caller works on the batches before (:data:`BATCHES_AHEAD`).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import psycopg
import pyarrow as pa
from psycopg import pq
from psycopg.conninfo import make_conninfo
from psycopg.rows import dict_row

from anonymizers.db.connection import application_name
from anonymizers.db.groups import CHUNK_ROWS, batch_bytes_of, column_arrays, whole_groups
from anonymizers.db.sqlfiles import Name, compose_sql, put_unless_stopped

__all__ = ["BATCHES_AHEAD", "BATCH_BYTES", "LOCK_TIMEOUT", "read_batches", "read_columns",
           "read_groups"]

# Batches read ahead of the caller, at most: keeps the server sending.
BATCHES_AHEAD = 2
# Bytes of a batch, about (the driver's default).
BATCH_BYTES = 16 << 20
# How long the reading connection waits for a lock: a table the caller's transaction has
# locked (written, dropped) cannot be read here, and would otherwise wait for ever.
LOCK_TIMEOUT = "1min"


def read_batches(conn: psycopg.Connection, name: str, columns: dict[str, pa.DataType],
                 params: dict[str, Any] | None = None, *, before: Sequence[str] = (),
                 batch_bytes: int | None = None, **identifiers: Name
                 ) -> Iterator[pa.RecordBatch]:
    """The rows of the query in ``sql/<name>`` (a SELECT; values bound as psycopg binds
    them, identifiers as :func:`~anonymizers.db.sqlfiles.compose_sql` does), as record
    batches of ``columns`` (the query's columns, in order, cast to these types).

    ``before`` names SQL files run first on the reading connection (settings, as
    ``SET LOCAL`` would make them in the caller's transaction); ``batch_bytes`` the size of
    a batch, about (default :data:`BATCH_BYTES`). Errors of the server are raised
    as psycopg's exception of their SQLSTATE, as the step's own queries raise them.
    Closing the iterator early ends the read.
    """
    statements = [psycopg.ClientCursor(conn).mogrify(compose_sql(file, **identifiers),
                                                     (params or {}) if file == name else {})
                  for file in (*before, name)]
    snapshot = _exported_snapshot(conn)
    schema = pa.schema(list(columns.items()))
    batches: queue.Queue[pa.RecordBatch | BaseException | None] = queue.Queue(BATCHES_AHEAD)
    stop = threading.Event()
    reader = threading.Thread(target=_read, name=f"read {name}", daemon=True,
                              args=(_conninfo(conn), snapshot, statements,
                                    batch_bytes or BATCH_BYTES, batches, stop))
    reader.start()
    try:
        while (batch := batches.get()) is not None:
            if isinstance(batch, BaseException):
                raise batch
            if batch.schema.names != schema.names:
                raise ValueError(f"sql/{name} returns columns {batch.schema.names}, "
                                 f"expected {schema.names}")
            yield batch.cast(schema)
    finally:
        stop.set()
        reader.join()


def read_groups(conn: psycopg.Connection, name: str, columns: dict[str, pa.DataType],
                params: dict[str, Any] | None = None, *, chunk_rows: int = CHUNK_ROWS,
                before: Sequence[str] = (), **identifiers: Name) -> Iterator[pa.Table]:
    """:func:`read_batches` of a query ordered by its first column (the group key, e.g. the
    trajectory), as tables of at least ``chunk_rows`` rows (the last excepted) that never
    split a group (:func:`~anonymizers.db.groups.whole_groups`, which cuts between batches
    only: the batches are a fraction of a chunk)."""
    yield from whole_groups(read_batches(conn, name, columns, params, before=before,
                                         batch_bytes=batch_bytes_of(chunk_rows),
                                         **identifiers), chunk_rows)


def read_columns(conn: psycopg.Connection, name: str, columns: dict[str, pa.DataType],
                 params: dict[str, Any] | None = None, **identifiers: Name
                 ) -> dict[str, np.ndarray]:
    """:func:`read_batches` as one numpy array per column (numeric types only)."""
    return column_arrays(read_batches(conn, name, columns, params, before=(), batch_bytes=None,
                                      **identifiers), columns)


def _exported_snapshot(conn: psycopg.Connection) -> str | None:
    """The snapshot of ``conn``'s open transaction, for another connection to import (None
    outside a transaction: there is nothing to share)."""
    if conn.info.transaction_status != pq.TransactionStatus.INTRANS:
        return None
    # Inline, not a file of sql/: the query files a caller reads may come from elsewhere
    # (ANONYMIZERS_SQL_DIR), this one is the reader's own.
    with conn.cursor(row_factory=dict_row) as cur:
        row = cur.execute("SELECT pg_export_snapshot() AS snapshot").fetchone()
    return str(row["snapshot"]) if row else None


def _conninfo(conn: psycopg.Connection) -> str:
    """How to reach the same database as ``conn``, as the same role."""
    info = {**conn.info.get_parameters(), "application_name": application_name()}
    if conn.info.password:
        info["password"] = conn.info.password
    return make_conninfo("", **info)


def _read(conninfo: str, snapshot: str | None, statements: list[str], batch_bytes: int,
          batches: queue.Queue[pa.RecordBatch | BaseException | None],
          stop: threading.Event) -> None:
    """On a thread: run ``statements`` (the last one the query) in the snapshot, handing
    the query's batches on until the caller stops taking them."""
    import adbc_driver_manager
    import adbc_driver_postgresql.dbapi as adbc
    from adbc_driver_postgresql import StatementOptions

    try:
        with adbc.connect(conninfo) as reading, reading.cursor() as cursor:
            cursor.adbc_statement.set_options(
                **{StatementOptions.BATCH_SIZE_HINT_BYTES.value: str(batch_bytes)})
            if snapshot is not None:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                cursor.execute(f"SET TRANSACTION SNAPSHOT '{snapshot}'")  # the server's id
            # A lock the caller's own transaction holds would never be granted here.
            cursor.execute(f"SET lock_timeout = '{LOCK_TIMEOUT}'")
            for statement in statements[:-1]:
                cursor.execute(statement)
            cursor.execute(statements[-1])
            for batch in cursor.fetch_record_batch():
                if not put_unless_stopped(batches, batch, stop):
                    return
        put_unless_stopped(batches, None, stop)
    except (adbc_driver_manager.Error, OSError) as error:
        put_unless_stopped(batches, _as_psycopg_error(error), stop)
    except BaseException as error:  # the caller raises it
        put_unless_stopped(batches, error, stop)


def _as_psycopg_error(error: Exception) -> Exception:
    """The psycopg exception of the driver's error's SQLSTATE, its message kept. An error
    in the middle of the rows comes through Arrow's stream without a SQLSTATE (an
    OSError): a DatabaseError, or an OperationalError when the server sent no ERROR (a
    lost connection)."""
    sqlstate = getattr(error, "sqlstate", None)
    try:
        kind = (psycopg.errors.lookup(sqlstate) if sqlstate
                else psycopg.DatabaseError if "ERROR:" in str(error) else psycopg.OperationalError)
    except KeyError:
        kind = psycopg.DatabaseError
    converted = kind(str(error))
    converted.__cause__ = error
    return converted
