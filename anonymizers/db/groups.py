"""Query output in chunks of whole groups of rows (trajectories), and a COPY's CSV output
as record batches or numpy columns.

Steps and verifiers that look at one trajectory at a time must not hold a window's fixes
whole: at 25 million fixes their arrays alone pass the 2 GB a Python process may use,
and one Python string per fix for the ids costs more than the numbers. The
rows come ordered by their first column (the group key, e.g. the trajectory), as record
batches read while the server sends them (:mod:`anonymizers.db.arrow_reads`, or here a
``COPY (...) TO STDOUT`` parsed by pyarrow: :func:`copy_batches`), and
:func:`whole_groups` hands them on in tables of about ``chunk_rows`` rows that never
split a group, so memory grows with the chunk, not with the output.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np
import psycopg
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from anonymizers.db.sqlfiles import Name, copy_pieces
from anonymizers.sequences import ConcatenatedSequences, int_lists

__all__ = ["CHUNK_ROWS", "batch_bytes_of", "column_arrays", "copy_batches", "copy_columns",
           "whole_groups"]

# Rows per chunk, about. Deriving a 1M-fix grid release took 520 MiB peak RSS in one chunk,
# 380 MiB with 500k, 280 MiB with 250k (118 MiB of it the imports), and about as long
# (README, "One release as the data grows").
CHUNK_ROWS = 500_000
CSV_BLOCK = 8 << 20  # bytes of CSV parsed at a time, about: about 200k fixes


def copy_batches(conn: psycopg.Connection, name: str, columns: dict[str, pa.DataType],
                 params: dict[str, Any] | None = None, *, block_size: int = CSV_BLOCK,
                 **identifiers: Name) -> Iterator[pa.RecordBatch]:
    """The CSV output of the ``COPY`` in ``sql/<name>`` as record batches, from pieces of
    about ``block_size`` bytes of CSV each, parsed while the server sends the rest
    (:func:`~anonymizers.db.sqlfiles.copy_pieces`). ``columns`` names and types the CSV's
    columns in order. The COPY stays open while the caller works on a batch: the
    connection runs nothing else until the iteration ends."""
    options = {"read_options": pacsv.ReadOptions(column_names=list(columns)),
               "convert_options": pacsv.ConvertOptions(column_types=columns)}
    for piece in copy_pieces(conn, name, params, block_size, **identifiers):
        yield from pacsv.read_csv(pa.py_buffer(piece), **options).to_batches()


def copy_sequences(conn: psycopg.Connection, name: str, params: dict[str, Any] | None = None,
                   **identifiers: Name) -> tuple[np.ndarray, ConcatenatedSequences]:
    """The CSV output of the ``COPY`` in ``sql/<name>``, one row per sequence (a number,
    then the sequence's integers separated by spaces), as the numbers and the sequences:
    a row per sequence where a row per element is many times more rows to sort and send
    (the 16 million visits of 25M fixes are 1.9 million trajectories)."""
    numbers, lengths, items = [], [], []
    for batch in copy_batches(conn, name, {"number": pa.int64(), "items": pa.string()},
                              params, block_size=CSV_BLOCK, **identifiers):
        counts, found = int_lists(batch.column(1))
        numbers.append(batch.column(0).to_numpy())
        lengths.append(counts)
        items.append(found)
    flat = np.concatenate(items) if items else np.zeros(0, dtype=np.int64)
    counts = np.concatenate(lengths) if lengths else np.zeros(0, dtype=np.int64)
    return (np.concatenate(numbers) if numbers else np.zeros(0, dtype=np.int64),
            ConcatenatedSequences(flat, np.r_[0, np.cumsum(counts)]))


def copy_columns(conn: psycopg.Connection, name: str, columns: dict[str, pa.DataType],
                 params: dict[str, Any] | None = None, **identifiers: Name
                 ) -> dict[str, np.ndarray]:
    """The CSV output of the ``COPY`` in ``sql/<name>`` as one numpy array per column
    (numeric types only), parsed piece by piece as the server sends it: the whole output
    is never held as text, which for 16 million rows was most of a gigabyte next to the
    arrays parsed from it (the generalization metrics at 25M fixes)."""
    return column_arrays(copy_batches(conn, name, columns, params, block_size=CSV_BLOCK,
                                      **identifiers), columns)


def column_arrays(batches: Iterable[pa.RecordBatch], columns: dict[str, pa.DataType]
                  ) -> dict[str, np.ndarray]:
    """The ``columns`` (numeric) of ``batches`` as one numpy array each, each batch's
    part dropped once joined."""
    parts: dict[str, list[np.ndarray]] = {column: [] for column in columns}
    for batch in batches:
        for column in columns:
            parts[column].append(batch.column(column).to_numpy(zero_copy_only=False))
    return {column: np.concatenate(parts.pop(column)) if parts[column]
            else np.zeros(0, dtype=kind.to_pandas_dtype())
            for column, kind in columns.items()}


def batch_bytes_of(chunk_rows: int) -> int:
    """Bytes per batch read: a fraction of a chunk (a fix is 40-60 bytes of CSV, about as
    many in Arrow), since chunks are cut only between batches."""
    return max(1 << 16, min(CSV_BLOCK, chunk_rows * 16))


def _last_group_start(key: pa.ChunkedArray) -> int:
    """Row where the table's last group begins (its rows are the table's last run)."""
    last = key[len(key) - 1]
    return len(key) - pc.sum(pc.equal(key, last)).as_py()


def whole_groups(batches: Iterable[pa.RecordBatch], chunk_rows: int) -> Iterator[pa.Table]:
    """Regroup ``batches`` (rows ordered by their first column) into tables of at least
    ``chunk_rows`` rows, the last excepted, each ending at a group's end. The rows of the
    group a batch ends in wait for the next batch; a group longer than ``chunk_rows``
    makes a larger table."""
    pending: list[pa.RecordBatch] = []
    rows = 0
    for batch in batches:
        pending.append(batch)
        rows += batch.num_rows
        if rows < chunk_rows:
            continue
        table = pa.Table.from_batches(pending)
        cut = _last_group_start(table.column(0))
        if cut == 0:
            continue  # one group so far: it may go on in the next batch
        yield table.slice(0, cut)
        rest = table.slice(cut)
        pending, rows = rest.to_batches(), rest.num_rows
    if rows:
        yield pa.Table.from_batches(pending)
