"""Read point files (CSV, GeoParquet, GeoPackage) as a stream of chunks of the loader's columns.

The columns are traj_id, user_id, t, lon, lat; user_id is absent when the file has none
(persons unknown: validation.py and the loader take each trajectory as its own person).
Visits to places (traj_id, user_id, t, place) are read by the same CSV reader
(places.py turns them into points).

A file is never held whole: ``PointFile.batches()`` reads it anew, CHUNK_ROWS rows at a
time (Arrow's streaming CSV reader, Parquet row batches, GDAL's Arrow stream for a
GeoPackage). What can be checked before the first row (the columns, the CRS) is checked
when the file is opened, so that a wrong file is refused before anything is staged.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from anonymizers.errors import InputError
from anonymizers.loading.validation import POINT_COLUMNS, check_columns

__all__ = ["CHUNK_ROWS", "PointFile", "csv_batches", "csv_header", "estimated_csv_rows",
           "read_csv_table", "read_points"]

TABLE_SUFFIXES = (".parquet", ".geoparquet", ".gpkg")
# Rows per chunk read, checked and copied: the loader's memory is a few chunks (README,
# "How a load runs"). 128k rows of CSV are ~8 MB of text; fewer rows per chunk cost
# more Python per row, more cost memory. Tests set it to a few rows.
CHUNK_ROWS = 1 << 17
_SAMPLE_BYTES = 1 << 20  # read to estimate a CSV's bytes per row
_PANDAS_INDEX = re.compile(r"^__index_level_\d+__$")  # a pandas index written by to_parquet


@dataclass
class PointFile:
    """An opened point file: its columns, and a fresh pass over its rows on each call."""

    source: str
    line_offset: int  # 2 for CSV (header is line 1), 1 for table formats (row numbers)
    columns: list[str]  # the loader's columns the batches hold, in POINT_COLUMNS order
    estimated_rows: int  # from the file's size or metadata: sizes the leaves, nothing else
    reader: Callable[[], Iterator[pa.RecordBatch]]

    @property
    def persons_known(self) -> bool:
        """Whether the file says whose each trajectory is (it has a user_id column)."""
        return "user_id" in self.columns

    def batches(self) -> Iterator[pa.RecordBatch]:
        """The rows in chunks of about CHUNK_ROWS, in file order, from the start."""
        return self.reader()


def read_points(path: Path) -> PointFile:
    """Open ``path``; CSV (optionally .gz) by default, GeoParquet / GeoPackage by suffix."""
    if not path.is_file():
        raise InputError(f"{path}: no such file. Check the path.")
    if path.suffix.lower() == ".gpkg":
        return _open_geopackage(path)
    if path.suffix.lower() in TABLE_SUFFIXES:
        return _open_geoparquet(path)
    expected = f"a header {','.join(POINT_COLUMNS)} and one row per GPS fix"
    header = csv_header(path, expected)
    columns = _point_columns(header, str(path))
    return PointFile(str(path), 2, columns, estimated_csv_rows(path),
                     lambda: csv_batches(path, header, columns))


def _point_columns(header: list[str], source: str) -> list[str]:
    """check_columns, after telling a file of visits to places what it needs."""
    if "place" in header and "lon" not in header and "lat" not in header:
        raise InputError(
            f"{source}: the file has a place column and no lon,lat: it holds visits to "
            "places, not GPS fixes. Give the places' coordinates with --places PLACES "
            "(a CSV place,lon,lat, or a GeoPackage/GeoJSON of points with a place column).")
    return check_columns(header, source)


def _open_text(path: Path) -> Any:
    return gzip.open(path, "rb") if path.suffix == ".gz" else path.open("rb")


def csv_header(path: Path, expected: str) -> list[str]:
    """The column names of a CSV file (optionally .gz); ``expected`` says what an empty
    file should have held."""
    with _open_text(path) as handle:
        first = handle.readline().decode("utf-8-sig", errors="replace")
    if not first.strip():
        raise InputError(f"{path}: the file is empty. Expected {expected}.")
    return [name.strip().strip('"') for name in first.rstrip("\r\n").split(",")]


def _line_lengths(path: Path) -> np.ndarray:
    """Byte lengths of the first lines of ``path`` (up to _SAMPLE_BYTES)."""
    with _open_text(path) as handle:
        sample = handle.read(_SAMPLE_BYTES)
    ends = np.flatnonzero(np.frombuffer(sample, np.uint8) == ord("\n"))
    return np.diff(np.r_[-1, ends]) if len(ends) else np.array([len(sample) + 1])


def _block_size(path: Path) -> int:
    """Bytes per Arrow block: CHUNK_ROWS average lines, and room for the longest line."""
    lengths = _line_lengths(path)
    return int(max(CHUNK_ROWS * lengths.mean(), 2 * lengths.max()))


def estimated_csv_rows(path: Path) -> int:
    size = path.stat().st_size
    if path.suffix == ".gz":
        with path.open("rb") as handle:  # gzip's trailer: the text's size modulo 2^32
            handle.seek(-4, 2)
            text_size = int.from_bytes(handle.read(4), "little")
        size = text_size if text_size >= size else 4 * size  # wrapped past 4 GiB
    return int(size / max(float(_line_lengths(path).mean()), 1.0))


def csv_batches(path: Path, header: list[str], columns: list[str]) -> Iterator[pa.RecordBatch]:
    """The ``columns`` of a CSV file (header ``header``), all as text, in chunks.

    The file is cut at line ends into blocks of about CHUNK_ROWS lines, each parsed by
    Arrow's multithreaded reader. (Arrow's own streaming reader reads up to 32 blocks
    ahead: 0.5 GB of text at this block size, the very memory this avoids.) A line break
    inside a quoted value is not supported, as it never was.
    """
    # Everything as text: parsing is the validator's job, so that it can name the bad rows.
    convert = pacsv.ConvertOptions(column_types={name: pa.string() for name in columns},
                                   include_columns=columns)
    block = _block_size(path)
    with _open_text(path) as handle:
        handle.readline()  # the header
        carry = b""
        while data := handle.read(block):
            cut = data.rfind(b"\n") + 1  # 0: no line ends in this block
            if not cut:
                carry += data
                continue
            text, carry = carry + data[:cut] if carry else data[:cut], data[cut:]
            yield _parse_csv(text, header, convert, path)
        if carry.strip():
            yield _parse_csv(carry, header, convert, path)


def _parse_csv(text: bytes, header: list[str], convert: pacsv.ConvertOptions,
               path: Path) -> pa.RecordBatch:
    """One block of whole lines. One thread, one Arrow block: on a machine whose cores
    the server's COPY backends use, Arrow's threads only cost (1M rows: 0.42 s this way,
    0.59 s with 8 MB blocks on two threads)."""
    # The names as checked (stripped of spaces, quotes and a BOM), not Arrow's raw header.
    options = pacsv.ReadOptions(column_names=header, use_threads=False,
                                block_size=len(text) + 1)
    try:
        table = pacsv.read_csv(pa.BufferReader(text), read_options=options,
                               convert_options=convert)
    except pa.ArrowInvalid as error:
        raise InputError(f"{path}: not a readable CSV file ({error}).") from error
    return table.combine_chunks().to_batches()[0] if table.num_rows else _empty(table)


def _empty(table: pa.Table) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays([pa.array([], field.type) for field in table.schema],
                                      schema=table.schema)


def read_csv_table(path: Path, check: Callable[[list[str], str], list[str]],
                   expected: str) -> pa.Table:
    """The columns of a small CSV file that ``check`` picks from its header, all as text
    (a places file: its places are all needed at once)."""
    header = csv_header(path, expected)
    columns = check(header, str(path))
    return pa.Table.from_batches(list(csv_batches(path, header, columns)),
                                 pa.schema([(name, pa.string()) for name in columns]))


# ---------------------------------------------------------------- GeoParquet, GeoPackage


def _cannot_read(path: Path, error: Exception) -> InputError:
    return InputError(f"{path}: cannot read it as GeoParquet/GeoPackage ({error}).")


def _geo_columns(names: list[str], geometry: str, path: Path) -> list[str]:
    """The loader's columns of a table whose other columns are ``names``."""
    found = [c for c in names
             if c not in (geometry, "lon", "lat") and not _PANDAS_INDEX.match(c)]
    return check_columns([*found, "lon", "lat"], str(path))


def _no_crs(path: Path) -> InputError:
    return InputError(f"{path}: the geometry has no CRS; set one (e.g. EPSG:4326).")


def _open_geoparquet(path: Path) -> PointFile:
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(path)
        geo = json.loads((parquet.schema_arrow.metadata or {}).get(b"geo", b"null"))
    except Exception as error:  # pyarrow raises many types; all mean "cannot read"
        raise _cannot_read(path, error) from error
    if not geo or geo.get("primary_column") not in geo.get("columns", {}):
        raise _cannot_read(path, ValueError("no GeoParquet 'geo' metadata"))
    geometry = geo["primary_column"]
    meta = geo["columns"][geometry]
    crs = meta.get("crs", "OGC:CRS84")  # GeoParquet: no key means lon/lat, null unknown
    if crs is None:
        raise _no_crs(path)
    columns = _geo_columns(parquet.schema_arrow.names, geometry, path)
    read = [c for c in columns if c not in ("lon", "lat")] + [geometry]

    def batches() -> Iterator[pa.RecordBatch]:
        to_lonlat = _to_lonlat(crs)
        with pq.ParquetFile(path) as handle:
            for batch in handle.iter_batches(batch_size=CHUNK_ROWS, columns=read):
                yield _loader_batch(batch, columns, geometry, to_lonlat, path)

    return PointFile(str(path), 1, columns, parquet.metadata.num_rows, batches)


def _open_geopackage(path: Path) -> PointFile:
    import pyogrio
    from pyogrio.raw import open_arrow

    try:
        info = pyogrio.read_info(path)
    except Exception as error:  # pyogrio raises many types; all mean "cannot read"
        raise _cannot_read(path, error) from error
    if info["crs"] is None:
        raise _no_crs(path)
    geometry = info.get("geometry_name") or "wkb_geometry"
    columns = _geo_columns(list(info["fields"]), geometry, path)

    def batches() -> Iterator[pa.RecordBatch]:
        to_lonlat = _to_lonlat(info["crs"])
        try:
            stream = open_arrow(path, batch_size=CHUNK_ROWS, use_pyarrow=True)
            meta, reader = stream.__enter__()
        except Exception as error:  # as above
            raise _cannot_read(path, error) from error
        try:
            name = meta.get("geometry_name") or "wkb_geometry"
            for batch in reader:
                yield _loader_batch(batch, columns, name, to_lonlat, path)
        finally:
            stream.__exit__(None, None, None)

    return PointFile(str(path), 1, columns, int(info["features"]), batches)


def _to_lonlat(crs: Any) -> Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """x, y in ``crs`` to lon, lat in EPSG:4326 (what GeoPandas' to_crs(4326) does)."""
    from pyproj import CRS, Transformer

    source = CRS.from_user_input(crs)
    transform = Transformer.from_crs(source, CRS.from_epsg(4326), always_xy=True).transform
    return lambda x, y: transform(x, y)


def _loader_batch(batch: pa.RecordBatch, columns: list[str], geometry: str,
                  to_lonlat: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]],
                  path: Path) -> pa.RecordBatch:
    """A table format's batch as the loader's columns: ids as text, lon/lat of the points."""
    import shapely
    from shapely.geometry.base import GEOMETRY_TYPES

    shapes = shapely.from_wkb(batch.column(geometry).to_numpy(zero_copy_only=False))
    kinds = shapely.get_type_id(shapes)
    present = kinds >= 0  # -1: no geometry
    if not (kinds[present] == shapely.GeometryType.POINT).all():
        found = sorted({GEOMETRY_TYPES[kind] for kind in np.unique(kinds[present])})
        raise InputError(f"{path}: geometries must be Points, found {found}.")
    lon, lat = to_lonlat(shapely.get_x(shapes), shapely.get_y(shapes))  # NaN: none, empty
    values: dict[str, Any] = {"lon": pa.array(lon, pa.float64()),
                              "lat": pa.array(lat, pa.float64())}
    for name in columns:
        if name in ("traj_id", "user_id"):
            values[name] = pc.cast(batch.column(name), pa.string())
        elif name == "t":
            values[name] = batch.column(name)
    return pa.RecordBatch.from_arrays([values[name] for name in columns], names=columns)
