"""Read point files (CSV, GeoParquet, GeoPackage) into a table of the loader's columns.

The columns are traj_id, user_id, t, lon, lat; user_id is absent when the file has none
(persons unknown: validation.py and the loader take each trajectory as its own person).
Visits to places (traj_id, user_id, t, place) are read by the same CSV reader
(places.py turns them into points).
"""

from __future__ import annotations

import gzip
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv

from anonymizers.errors import InputError
from anonymizers.loading.validation import POINT_COLUMNS, check_columns

__all__ = ["PointFile", "csv_header", "read_csv_table", "read_points"]

TABLE_SUFFIXES = (".parquet", ".geoparquet", ".gpkg")


@dataclass
class PointFile:
    """What was read: the columns as read, and how to turn positions into line numbers."""

    table: pa.Table  # Arrow, not pandas: a million ids never become Python strings
    source: str
    line_offset: int  # 2 for CSV (header is line 1), 1 for table formats (row numbers)

    @property
    def persons_known(self) -> bool:
        """Whether the file says whose each trajectory is (it has a user_id column)."""
        return "user_id" in self.table.column_names


def read_points(path: Path) -> PointFile:
    """Read ``path``; CSV (optionally .gz) by default, GeoParquet / GeoPackage by suffix."""
    if not path.is_file():
        raise InputError(f"{path}: no such file. Check the path.")
    if path.suffix.lower() in TABLE_SUFFIXES:
        return PointFile(_read_geo_table(path), str(path), 1)
    expected = f"a header {','.join(POINT_COLUMNS)} and one row per GPS fix"
    return PointFile(read_csv_table(path, _point_columns, expected), str(path), 2)


def _point_columns(header: list[str], source: str) -> list[str]:
    """check_columns, after telling a file of visits to places what it needs."""
    if "place" in header and "lon" not in header and "lat" not in header:
        raise InputError(
            f"{source}: the file has a place column and no lon,lat: it holds visits to "
            "places, not GPS fixes. Give the places' coordinates with --places PLACES "
            "(a CSV place,lon,lat, or a GeoPackage/GeoJSON of points with a place column).")
    return check_columns(header, source)


def csv_header(path: Path, expected: str) -> list[str]:
    """The column names of a CSV file (optionally .gz); ``expected`` says what an empty
    file should have held."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8-sig", errors="replace") as handle:
        first = handle.readline()
    if not first.strip():
        raise InputError(f"{path}: the file is empty. Expected {expected}.")
    return [name.strip().strip('"') for name in first.rstrip("\r\n").split(",")]


def read_csv_table(path: Path, check: Callable[[list[str], str], list[str]],
                   expected: str) -> pa.Table:
    """The columns of a CSV file that ``check`` picks from its header, all as text."""
    header = csv_header(path, expected)
    columns = check(header, str(path))
    # Everything as text: parsing is the validator's job, so that it can name the bad rows.
    types = {name: pa.string() for name in columns}
    # The names as checked (stripped of spaces, quotes and a BOM), not Arrow's raw header.
    names = pacsv.ReadOptions(column_names=header, skip_rows=1)
    try:
        table = pacsv.read_csv(path, read_options=names, convert_options=pacsv.ConvertOptions(
            column_types=types, include_columns=columns))
    except pa.ArrowInvalid as error:
        raise InputError(f"{path}: not a readable CSV file ({error}).") from error
    return table.select(columns)


def _read_geo_table(path: Path) -> pa.Table:
    import geopandas as gpd

    try:
        frame = (gpd.read_parquet(path) if path.suffix.lower() != ".gpkg"
                 else gpd.read_file(path, engine="pyogrio"))
    except Exception as error:  # pyogrio/pyarrow raise many types; all mean "cannot read"
        raise InputError(f"{path}: cannot read it as GeoParquet/GeoPackage ({error}).") from error
    if frame.crs is None:
        raise InputError(f"{path}: the geometry has no CRS; set one (e.g. EPSG:4326).")
    geom_types = set(frame.geometry.dropna().geom_type.unique())
    if not geom_types <= {"Point"}:
        raise InputError(f"{path}: geometries must be Points, found {sorted(geom_types)}.")
    columns = check_columns([c for c in frame.columns
                             if c not in (frame.geometry.name, "lon", "lat")]
                            + ["lon", "lat"], str(path))
    frame = frame.to_crs(4326)
    empty = frame.geometry.isna() | frame.geometry.is_empty
    lon = frame.geometry.x.where(~empty)
    lat = frame.geometry.y.where(~empty)
    values = {"traj_id": frame["traj_id"].astype("string"),
              "user_id": frame["user_id"].astype("string") if "user_id" in columns else None,
              "t": frame["t"], "lon": lon.astype(float), "lat": lat.astype(float)}
    return pa.Table.from_pandas(pd.DataFrame({name: values[name] for name in columns}),
                                preserve_index=False)
