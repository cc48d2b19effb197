"""Place-sequence datasets: read the places file, turn visits into fixes at their places.

Telecom and transit data come as sequences of places (stations, cell towers): a visits CSV
``traj_id,user_id,t,place`` (user_id optional, as for GPS fixes) and a places file, a CSV
``place,lon,lat`` (WGS84; other columns are ignored) or any vector file GeoPandas reads
(GeoPackage, GeoJSON, GeoParquet, ...) with a ``place`` column and Point geometries in any
CRS. Each visit becomes an ordinary fix at its place's coordinates, the very float64 values
stored in raw.places (sql/schema/031_raw_places.sql), so every family runs on it and a
visit's place is recovered by the exact join on (dataset_id, lon, lat). The fixes then go
through the GPS loader's validation (validation.py) and storing, unchanged.

Every problem refuses the load, naming the file, the first lines (rows, for a vector file),
how many there are and what to do; nothing is written to the database:

=============================================  =============================================
places file                                    why it is refused
=============================================  =============================================
no such file, empty, no data row               nothing to load; likely a wrong path
no place, lon or lat column; repeated column   the file is not in the format we think
geometry not a Point; missing; no CRS          a place needs one position (centroids, say)
empty place name; a name twice                 a visit could not say which place it means
lon/lat not a number, out of range, or (0, 0)  a position we cannot trust or store
two places at identical coordinates            a fix would join both: merge them or move one
=============================================  =============================================

=============================================  =============================================
visits file                                    why it is refused
=============================================  =============================================
lon,lat columns instead of place               GPS fixes: load them without --places
columns other than traj_id,user_id,t,place     the file is not in the format we think
an empty place; a place not in the places file the visit has no position
every rule of validation.py                    ids, timestamps, order (or --sort), repeats
a trajectory left without a visit              no sequence to release
=============================================  =============================================
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from anonymizers.errors import InputError
from anonymizers.loading.binary_copy import PlaceRows
from anonymizers.loading.readers import (
    TABLE_SUFFIXES,
    PointFile,
    csv_batches,
    csv_header,
    estimated_csv_rows,
    read_csv_table,
)
from anonymizers.loading.validation import (
    EXAMPLES,
    Drops,
    check_columns,
    hash_ids,
    reject_rows,
)

__all__ = ["PLACES_FILE_COLUMNS", "VISIT_COLUMNS", "check_every_trajectory_kept",
           "read_places", "read_visits"]

PLACES_FILE_COLUMNS = ("place", "lon", "lat")
VISIT_COLUMNS = ("traj_id", "user_id", "t", "place")
PARQUET_SUFFIXES = (".parquet", ".geoparquet")


@dataclass
class _PlacesRead:
    """A places file as read, before its checks: names (may hold nulls), lon/lat (NaN where
    not a number), and how positions become what the user sees (as in validation.py)."""

    names: pa.StringArray
    lon: np.ndarray
    lat: np.ndarray
    line_offset: int  # 2: CSV lines (header is line 1); 1: rows of a vector file


def read_places(path: Path) -> PlaceRows:
    """The places of ``path`` (CSV place,lon,lat, or a vector file of points), checked."""
    if not path.is_file():
        raise InputError(f"{path}: no such places file. Check the path.")
    read = _read_places_csv(path) if _is_csv(path) else _read_places_vector(path)
    _check_places(read, str(path))
    return PlaceRows(read.names, read.lon, read.lat)


def _is_csv(path: Path) -> bool:
    suffixes = [suffix.lower() for suffix in path.suffixes]
    return suffixes[-1:] in ([".csv"], [".txt"]) or suffixes[-2:] == [".csv", ".gz"]


def _places_columns(header: list[str], source: str) -> list[str]:
    """place, lon, lat, each once; any other column is ignored (a station's line, say)."""
    missing = [c for c in PLACES_FILE_COLUMNS if c not in header]
    repeated = sorted({c for c in PLACES_FILE_COLUMNS if header.count(c) > 1})
    problems = [f"{what} {', '.join(names)}" for what, names in
                (("missing", missing), ("repeated", repeated)) if names]
    if problems:
        raise InputError(
            f"{source}: a places file needs the columns {','.join(PLACES_FILE_COLUMNS)} "
            f"(WGS84 degrees; other columns are ignored); {'; '.join(problems)}. "
            "Rename columns so the header has each of them once.")
    return list(PLACES_FILE_COLUMNS)


def _read_places_csv(path: Path) -> _PlacesRead:
    expected = f"a header {','.join(PLACES_FILE_COLUMNS)} and one row per place"
    table = read_csv_table(path, _places_columns, expected)
    return _PlacesRead(table.column("place").combine_chunks(), _numbers(table.column("lon")),
                       _numbers(table.column("lat")), 2)


def _numbers(values: pa.ChunkedArray) -> np.ndarray:
    """Numbers from text, NaN where a value is not one (the checks name those lines).

    Arrow's parser and Python's float() both round correctly: a coordinate is the same
    float64 whichever of them read it.
    """
    text = pc.utf8_trim_whitespace(values)
    try:
        return pc.cast(text, pa.float64()).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # all or nothing: find the bad ones
        return np.array([_number(value) for value in text.to_pylist()], dtype=float)


def _number(text: str | None) -> float:
    try:
        return float(text) if text is not None else math.nan
    except ValueError:
        return math.nan


def _read_places_vector(path: Path) -> _PlacesRead:
    """A vector file's places, reprojected to WGS84; only Point geometries are places."""
    import geopandas as gpd

    try:
        frame = (gpd.read_parquet(path) if path.suffix.lower() in PARQUET_SUFFIXES
                 else gpd.read_file(path, engine="pyogrio"))
    except Exception as error:  # pyogrio/pyarrow raise many types; all mean "cannot read"
        raise InputError(
            f"{path}: cannot read it as a places file ({error}). Give a CSV place,lon,lat "
            "(.csv) or a vector file (GeoPackage, GeoJSON, ...) of points with a place "
            "column.") from error
    if "place" not in frame.columns:
        raise InputError(
            f"{path}: the places file has no place column (found "
            f"{', '.join(map(str, frame.columns))}). Name the column of the places' names "
            "place: the visits' place column refers to it.")
    if frame.crs is None:
        raise InputError(f"{path}: the geometry has no CRS; set one (e.g. EPSG:4326).")
    _check_points(frame.geometry, str(path))
    if frame.crs.to_epsg() != 4326:
        frame = frame.to_crs(4326)
    names = pa.array(frame["place"].astype("string"), pa.string())
    return _PlacesRead(names, frame.geometry.x.to_numpy(dtype=float),
                       frame.geometry.y.to_numpy(dtype=float), 1)


def _check_points(geometry: pd.Series, source: str) -> None:
    """Every place has one Point; anything else is refused with what to give instead."""
    kinds = geometry.geom_type
    missing = np.flatnonzero((geometry.isna() | geometry.is_empty).to_numpy())
    if len(missing):
        reject_rows(source, "no geometry", missing, 1,
                    "Give each place a point (its position), or remove it.")
    other = np.flatnonzero((kinds != "Point").to_numpy())
    if len(other):
        found = ", ".join(sorted(set(kinds.iloc[other])))
        reject_rows(source, f"a geometry that is not a Point ({found})", other, 1,
                    "A place is one position: give points, e.g. the station locations, or "
                    "the centroids of the areas (GeoPandas: geometry.centroid, in a metric "
                    "CRS).")


def _check_places(read: _PlacesRead, source: str) -> None:
    """Refuse a places file that is empty, or whose names or positions are not usable."""
    if len(read.lon) == 0:
        raise InputError(f"{source}: the places file has no places. Is it the right file?")
    blank = _blank(read.names)
    if len(blank):
        reject_rows(source, "an empty place", blank, read.line_offset,
                    "Every place needs a name (the visits' place column refers to it); "
                    "fix or remove those rows.")
    _check_coordinates(read, source)
    _check_unique_names(read, source)
    _check_unique_positions(read, source)


def _blank(names: pa.Array) -> np.ndarray:
    """Positions of null names and of names of only whitespace."""
    empty = pc.or_kleene(pc.is_null(names), pc.equal(pc.utf8_trim_whitespace(names), ""))
    return np.flatnonzero(empty.to_numpy(zero_copy_only=False))


def _check_coordinates(read: _PlacesRead, source: str) -> None:
    lon, lat, offset = read.lon, read.lat, read.line_offset
    not_number = np.flatnonzero(~(np.isfinite(lon) & np.isfinite(lat)))
    if len(not_number):
        reject_rows(source, "a lon or lat that is not a number", not_number, offset,
                    "Give each place its WGS84 lon and lat in degrees, e.g. 11.2558,43.7696.")
    outside = np.flatnonzero((np.abs(lon) > 180) | (np.abs(lat) > 90))
    if len(outside):
        reject_rows(source, "a lon outside [-180, 180] or a lat outside [-90, 90]", outside,
                    offset, "Give WGS84 degrees, lon then lat: are they swapped, or in "
                    "another CRS?")
    null_island = np.flatnonzero((lon == 0) & (lat == 0))
    if len(null_island):
        reject_rows(source, "lon,lat 0,0 (what exports write for an unknown position)",
                    null_island, offset,
                    "Give those places their coordinates, or remove them and their visits.")


def _check_unique_names(read: _PlacesRead, source: str) -> None:
    names = pd.Series(read.names.to_pylist())
    repeated = names.duplicated(keep=False).to_numpy()
    if repeated.any():
        distinct = names[repeated].unique()
        reject_rows(source, f"a place name used more than once ({len(distinct)} such "
                    f"name(s), e.g. {distinct[0]!r})", np.flatnonzero(repeated),
                    read.line_offset, "One row per place: merge the rows of a place, or "
                    "rename one of them.")


def _check_unique_positions(read: _PlacesRead, source: str) -> None:
    # + 0.0 makes -0.0 the 0.0 that PostgreSQL's UNIQUE (and its =) takes it for.
    lon, lat = read.lon + 0.0, read.lat + 0.0
    rows = np.flatnonzero(pd.DataFrame({"lon": lon, "lat": lat}).duplicated(keep=False))
    if not len(rows):
        return
    same = rows[(lon[rows] == lon[rows[0]]) & (lat[rows] == lat[rows[0]])]
    names = ", ".join(repr(read.names[int(row)].as_py()) for row in same[:EXAMPLES])
    count = len(np.unique(np.c_[lon[rows], lat[rows]], axis=0))
    where = f"{float(lon[rows[0]])},{float(lat[rows[0]])}"
    reject_rows(source, f"the coordinates of another place ({count} shared position(s), "
                f"e.g. {names} at {where})", rows, read.line_offset,
                "A visit is found again by its place's exact coordinates: merge those "
                "places into one, or move one of them.")


def read_visits(path: Path, places: PlaceRows, places_source: str) -> PointFile:
    """The visits CSV ``path`` as the GPS loader's stream: traj_id,[user_id],t,lon,lat,
    each visit at its place's coordinates (the values of ``places`` themselves)."""
    if not path.is_file():
        raise InputError(f"{path}: no such file. Check the path.")
    if path.suffix.lower() in TABLE_SUFFIXES:
        raise InputError(f"{path}: visits are read from CSV ({','.join(VISIT_COLUMNS)}); "
                         "export them as CSV.")
    expected = f"a header {','.join(VISIT_COLUMNS)} and one row per visit"
    header = csv_header(path, expected)
    columns = _visit_columns(header, str(path))
    point_columns = [c for c in columns if c != "place"] + ["lon", "lat"]

    def batches() -> Iterator[pa.RecordBatch]:
        start = 0
        for batch in csv_batches(path, header, columns):
            yield _at_places(batch, start, places, str(path), places_source)
            start += batch.num_rows

    return PointFile(str(path), 2, point_columns, estimated_csv_rows(path), batches)


def _visit_columns(header: list[str], source: str) -> list[str]:
    """check_columns for visits, after telling a file of GPS fixes what it is."""
    if "place" not in header and "lon" in header and "lat" in header:
        raise InputError(
            f"{source}: --places was given, but the file has lon,lat columns and no place "
            "column: it holds GPS fixes, not visits. Load it without --places, or give it "
            f"the columns {','.join(VISIT_COLUMNS)}.")
    return check_columns(header, source, VISIT_COLUMNS)


def _at_places(batch: pa.RecordBatch, start: int, places: PlaceRows, source: str,
               places_source: str) -> pa.RecordBatch:
    """The visits of a chunk (rows ``start``... of the file) with lon, lat of their places
    instead of the place column."""
    visited = batch.column("place")
    blank = _blank(visited)
    if len(blank):
        reject_rows(source, "an empty place", blank + start, 2,
                    f"Every visit needs a place of {places_source}; fix or remove those rows.")
    index = pc.index_in(visited, value_set=places.names)
    unknown = np.flatnonzero(index.is_null().to_numpy(zero_copy_only=False))
    if len(unknown):
        names = pc.unique(visited.take(pa.array(unknown))).to_pylist()
        shown = ", ".join(map(repr, names[:EXAMPLES])) + (", ..." if len(names) > EXAMPLES
                                                          else "")
        reject_rows(source, f"a place that is not in {places_source} ({len(names)} such "
                    f"place(s): {shown})", unknown + start, 2,
                    "Add those places to the places file, or correct the visits' place.")
    at = index.to_numpy(zero_copy_only=False)
    names = [c for c in batch.schema.names if c != "place"]
    return pa.RecordBatch.from_arrays(
        [batch.column(c) for c in names] + [pa.array(places.lon[at], pa.float64()),
                                            pa.array(places.lat[at], pa.float64())],
        names=[*names, "lon", "lat"])


def check_every_trajectory_kept(empty: np.ndarray, drops: Drops, visits: PointFile) -> None:
    """Refuse visits whose validation left some trajectory without any visit (``empty``:
    the hashes of their traj_ids, validation.hash_ids).

    A GPS trajectory of noise only just disappears; a sequence of places that the checks
    emptied is a broken export the user should hear about. The ids and lines of those
    trajectories are found by reading the file once more (only when refusing it).
    """
    if not len(empty):
        return
    lines, names, start = [], [], 0
    for batch in visits.batches():
        encoded = pc.dictionary_encode(batch.column("traj_id"))
        distinct = encoded.dictionary.to_pylist()
        emptied = np.isin(hash_ids(distinct), empty)
        names += [name for name, hit in zip(distinct, emptied, strict=True) if hit]
        lines.append(np.flatnonzero(emptied[encoded.indices.to_numpy()]) + start)
        start += batch.num_rows
    reject_rows(visits.source, f"a trajectory that no visit is left of after the checks "
                f"({len(empty)} trajectory id(s), e.g. {names[0]!r}; dropped "
                f"{drops.summary()})", np.concatenate(lines), visits.line_offset,
                "A trajectory is a sequence of places: fix its visits, or remove it.")
