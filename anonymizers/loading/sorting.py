"""--sort in bounded memory: the rows are staged in PostgreSQL and read back in order.

A file whose trajectories are not contiguous, or whose fixes go back in time, cannot be
put in order by looking at one chunk at a time, and holding the file is what the loader
must not do. So the rows that pass the row checks (validation.RowChecks) go by binary
COPY into a temporary table with their position in the file, and come back by
``COPY (SELECT ... ORDER BY traj_id COLLATE "C", t, position) TO STDOUT``, read by Arrow's
CSV reader a block of whole lines at a time; the sequence checks then see them as a sorted file
(byte order of traj_id, then time, then the file's order: a repeated instant keeps the
file's first fix). The server sorts within work_mem and spills the rest to disk; this
process holds a chunk. It costs the server one more write and read of the rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from types import TracebackType
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
from psycopg import sql

from anonymizers.db.connection import connect
from anonymizers.loading import readers
from anonymizers.loading.binary_copy import (
    HEADER,
    PG_EPOCH_US,
    TRAILER,
    PointRows,
    binary_copy_rows,
)
from anonymizers.loading.validation import RowChecks, RowChunk

__all__ = ["SortedRows"]

# The same binary row layout as raw.points' COPY (binary_copy.py): t, lon, lat, an int8
# (here the row's position in the file instead of traj_key), traj_id, user_id.
STAGE = ("CREATE TEMPORARY TABLE sort_stage (t bigint, lon float8, lat float8, pos bigint, "
         "traj_id text, user_id text) ON COMMIT DROP")
COPY_IN = "COPY sort_stage (t, lon, lat, pos, traj_id, user_id) FROM STDIN (FORMAT binary)"
_TYPES = {"pos": pa.int64(), "t": pa.int64(), "lon": pa.float64(), "lat": pa.float64(),
          "traj_id": pa.string(), "user_id": pa.string()}
# float8's text output is the shortest that reads back as the same double (PostgreSQL 12+).
# CSV has no column names: the SELECT list is made from the names Arrow reads the columns
# by, so that the two cannot disagree (lon and lat swapped).
COPY_OUT = sql.SQL('COPY (SELECT {} FROM sort_stage ORDER BY traj_id COLLATE "C", t, pos) '
                   'TO STDOUT (FORMAT csv)').format(
    sql.SQL(", ").join(sql.Identifier(name) for name in _TYPES))
_ROW_BYTES = 64  # about a staged row as CSV: sizes Arrow's blocks


def _line_end(buffer: bytearray) -> int:
    """Just past the buffer's last line end outside a quoted value (0: none): in
    PostgreSQL's CSV a value with a line break is quoted, and its quotes are doubled."""
    end = len(buffer)
    while (end := buffer.rfind(b"\n", 0, end)) >= 0:
        if buffer.count(b'"', 0, end) % 2 == 0:
            return end + 1
    return 0


def _blocks(parts: Iterable[Any], size: int) -> Iterator[bytes]:  # parts: bytes-like
    """The COPY's output regrouped into blocks of whole lines of about ``size`` bytes."""
    buffer = bytearray()
    for part in parts:
        buffer += part
        if len(buffer) >= size and (cut := _line_end(buffer)):
            yield bytes(buffer[:cut])
            del buffer[:cut]
    if buffer:
        yield bytes(buffer)


class SortedRows:
    """A transaction holding the staged rows: ``stage`` them, then read back ``rows``."""

    def __init__(self, url: str | None) -> None:
        self.url = url

    def __enter__(self) -> SortedRows:
        self.conn = connect(self.url)
        self.conn.execute(STAGE)
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.conn.rollback()  # the table goes with the transaction
        self.conn.close()

    def stage(self, chunks: Iterable[RowChunk]) -> int:
        """COPY the rows of ``chunks`` into the stage; how many there were."""
        staged = 0
        with self.conn.cursor().copy(COPY_IN) as copy:
            copy.write(HEADER)
            for chunk in chunks:
                rows = PointRows(chunk.traj_id, chunk.user_id, chunk.t_us, chunk.lon,
                                 chunk.lat, chunk.positions)
                for buffer in binary_copy_rows(rows):
                    copy.write(buffer)
                staged += len(chunk)
            copy.write(TRAILER)
        return staged

    def rows(self, checks: RowChecks) -> Iterator[RowChunk]:
        """The staged rows by traj_id (byte order), t, position in the file, in chunks."""
        convert = pacsv.ConvertOptions(column_types=_TYPES, strings_can_be_null=False,
                                       quoted_strings_can_be_null=False)
        parse = pacsv.ParseOptions(newlines_in_values=True)
        with self.conn.cursor().copy(COPY_OUT) as copy:
            for block in _blocks(copy, readers.CHUNK_ROWS * _ROW_BYTES):
                options = pacsv.ReadOptions(column_names=list(_TYPES), use_threads=False,
                                            block_size=len(block) + 1)
                table = pacsv.read_csv(pa.BufferReader(block), read_options=options,
                                       parse_options=parse, convert_options=convert)
                yield _chunk(table.combine_chunks().to_batches()[0], checks)


def _chunk(batch: pa.RecordBatch, checks: RowChecks) -> RowChunk:
    traj_id, user_id = batch.column("traj_id"), batch.column("user_id")
    traj = checks.traj.lookup(traj_id)
    user = checks.user.lookup(user_id) if checks.persons_known else traj
    return RowChunk(batch.column("pos").to_numpy(), traj, user, traj_id, user_id,
                    batch.column("t").to_numpy() + np.int64(PG_EPOCH_US),
                    batch.column("lon").to_numpy(), batch.column("lat").to_numpy())
