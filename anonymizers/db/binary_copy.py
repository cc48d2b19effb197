"""Arrow tables encoded as rows of PostgreSQL's binary COPY format, in C++, with no Python
object per row.

Why binary: the server reads a binary field with no parsing. At 25M fixes, the 16 million
visits of progressive generalization took the server 19.0 s as CSV and 10.7 s as binary,
most of the difference its parsing of timestamp text; the 15 million characteristic
points (an integer and two doubles) 7.9 s against 3.9 s (psql ``\\copy`` of the same rows
from a file, each format). Arrow no longer formats doubles and times as text either.

A row is the field count (int16), then per field its length in bytes (int32; -1 for
NULL) and its bytes, big-endian. Runs of fixed-width fields are numpy records, text
columns Arrow binary arrays, and the pieces are joined element-wise: the values buffer of
the result is the rows, one after another. Rows are encoded :data:`CHUNK_ROWS` at a time,
so that the pieces stay in the CPU cache (2M visits: 1.1 s in one block) and the server
stores one chunk while the next is encoded. Only the column types of :data:`FIXED` and
text are encoded; :func:`encodable` says whether a table's are. The loader's own rows
(:mod:`anonymizers.loading.binary_copy`) are laid out by hand the same way.

References
----------
PostgreSQL documentation, COPY, "Binary Format".
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["CHUNK_ROWS", "FIXED", "HEADER", "PG_EPOCH_US", "TEXT", "TRAILER", "encodable",
           "encode_rows", "encoded_chunks", "records_as_binary"]

# The binary COPY stream's signature, flags (no OIDs) and header extension length (none).
HEADER = b"PGCOPY\n\xff\r\n\x00" + (0).to_bytes(4, "big") + (0).to_bytes(4, "big")
TRAILER = (-1).to_bytes(2, "big", signed=True)  # a field count of -1 ends the rows
PG_EPOCH_US = 946_684_800_000_000  # 2000-01-01T00:00:00Z, the zero of timestamptz
CHUNK_ROWS = 16_384  # rows encoded at a time

# Fixed-width types (format_type names): the Arrow type a column is cast to, and the
# big-endian numpy type of the field's bytes.
FIXED: dict[str, tuple[pa.DataType, str]] = {
    "smallint": (pa.int16(), ">i2"),
    "integer": (pa.int32(), ">i4"),
    "bigint": (pa.int64(), ">i8"),
    "real": (pa.float32(), ">f4"),
    "double precision": (pa.float64(), ">f8"),
    "boolean": (pa.uint8(), "u1"),
    # Microseconds since 2000-01-01 00:00 UTC; an Arrow time without a zone is taken as UTC.
    "timestamp with time zone": (pa.timestamp("us"), ">i8"),
    "timestamp without time zone": (pa.timestamp("us"), ">i8"),
}
TEXT = frozenset({"text", "character varying"})
NULL_FIELD = pa.scalar(b"\xff\xff\xff\xff", pa.large_binary())  # a field's length of -1
NOTHING = pa.scalar(b"", pa.large_binary())  # what joins the fields: nothing


def encodable(types: Sequence[str]) -> bool:
    """Whether columns of these types (format_type names) can be encoded here."""
    return all(kind in FIXED or _base(kind) in TEXT for kind in types)


def encoded_chunks(data: pa.Table, types: Sequence[str], chunk_rows: int = CHUNK_ROWS
                   ) -> Iterator[pa.Buffer]:
    """The rows of ``data`` encoded as :func:`encode_rows` does, ``chunk_rows`` at a time.
    Every value is checked against its column's type here, before the first chunk: a
    value that does not fit raises before anything is sent.

    Raises
    ------
    pyarrow.ArrowInvalid
        If a value does not fit its column's type (e.g. an integer past int32).
    """
    _check_width(data, types)
    # Cast once, whole (a safe cast: out-of-range values raise); the chunks' own casts to
    # the same types then cost nothing.
    cast = pa.table([data.column(i).cast(FIXED[kind][0]) if kind in FIXED else data.column(i)
                     for i, kind in enumerate(types)], names=data.column_names)
    return (encode_rows(cast.slice(start, chunk_rows), types)
            for start in range(0, cast.num_rows, chunk_rows))


def encode_rows(data: pa.Table, types: Sequence[str]) -> pa.Buffer:
    """The rows of ``data`` in the binary COPY format (no header or trailer), its columns
    encoded as the target columns' ``types`` (format_type names, in the table's order); a
    value that does not fit its column's type raises pyarrow.ArrowInvalid."""
    _check_width(data, types)
    if not data.num_rows:
        return pa.py_buffer(b"")
    pieces = _Pieces(data.num_rows)
    pieces.add_constant(data.num_columns, ">i2")
    for i, kind in enumerate(types):
        _add_column(pieces, data.column(i).combine_chunks(), kind)
    rows = pc.binary_join_element_wise(*pieces.joined(), NOTHING)
    _, offsets, values = rows.buffers()
    first, end = np.frombuffer(offsets, dtype=np.int64)[[rows.offset, rows.offset + len(rows)]]
    return values.slice(int(first), int(end - first))


class _Pieces:
    """A row's bytes as pieces joined element-wise: runs of fixed-width numbers become one
    array of records, so that few arrays are joined (one per text column and the runs
    between them: joining an array per field took three times as long)."""

    def __init__(self, rows: int) -> None:
        self.rows = rows
        self._done: list[pa.Array] = []
        # The current run's fields: big-endian numbers, or one number for every row.
        self._record: list[tuple[np.dtype, np.ndarray | int]] = []

    def add_fixed(self, numbers: np.ndarray) -> None:
        self._record.append((numbers.dtype, numbers))

    def add_constant(self, value: int, layout: str) -> None:
        self._record.append((np.dtype(layout), value))

    def add_bytes(self, values: pa.Array) -> None:
        self._flush()
        self._done.append(values)

    def joined(self) -> list[pa.Array]:
        self._flush()
        return self._done

    def _flush(self) -> None:
        if not self._record:
            return
        record = np.empty(self.rows, dtype=[(f"f{i}", kind)
                                            for i, (kind, _) in enumerate(self._record)])
        for i, (_, numbers) in enumerate(self._record):
            record[f"f{i}"] = numbers
        self._record = []
        self._done.append(records_as_binary(record, large=True))


def records_as_binary(records: np.ndarray, large: bool = False) -> pa.Array:
    """Fixed-width numpy records as an Arrow binary array (``large``: large_binary, int64
    offsets), without copying them: offsets of equal steps make the records a binary
    array as they lie."""
    width = records.dtype.itemsize
    kind, offset = (pa.large_binary(), np.int64) if large else (pa.binary(), np.int32)
    offsets = np.arange(0, (len(records) + 1) * width, width, dtype=offset)
    return pa.Array.from_buffers(kind, len(records),
                                 [None, pa.py_buffer(offsets), pa.py_buffer(records)])


def _add_column(pieces: _Pieces, values: pa.Array, kind: str) -> None:
    """Each row's field of ``values``: its length (-1 for NULL), then its bytes."""
    valid = values.is_valid().to_numpy(zero_copy_only=False) if values.null_count else None
    if _base(kind) in TEXT:
        text = values.cast(pa.large_binary())
        lengths = pc.binary_length(text).to_numpy(zero_copy_only=False)
        pieces.add_fixed(np.where(valid, lengths, -1).astype(">i4") if valid is not None
                         else lengths.astype(">i4"))
        pieces.add_bytes(text.fill_null(b"") if valid is not None else text)
    elif kind in FIXED:
        arrow_type, layout = FIXED[kind]
        numbers = _numbers(values, arrow_type).astype(layout)
        if valid is None:
            pieces.add_constant(numbers.dtype.itemsize, ">i4")
            pieces.add_fixed(numbers)
        else:  # a NULL has no bytes after its length: the field's width varies
            one = _Pieces(len(numbers))
            one.add_constant(numbers.dtype.itemsize, ">i4")
            one.add_fixed(numbers)
            pieces.add_bytes(pc.if_else(valid, one.joined()[0], NULL_FIELD))
    else:
        raise TypeError(f"binary COPY cannot encode a column of type {kind}")


def _numbers(values: pa.Array, arrow_type: pa.DataType) -> np.ndarray:
    """The column's values as numbers of the field's type (NULL as 0: it is not sent)."""
    cast = values.cast(arrow_type)  # a safe cast: out-of-range values raise
    if pa.types.is_timestamp(arrow_type):
        return cast.cast(pa.int64()).fill_null(0).to_numpy() - PG_EPOCH_US
    return cast.fill_null(0).to_numpy(zero_copy_only=False)


def _check_width(data: pa.Table, types: Sequence[str]) -> None:
    if len(types) != data.num_columns:
        raise ValueError(f"{data.num_columns} columns to copy but {len(types)} target types")


def _base(kind: str) -> str:
    """A type name without its modifier: ``character varying(20)`` -> ``character varying``."""
    return kind.split("(", 1)[0]
