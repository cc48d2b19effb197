"""Read what a release report shows: the manifest, metrics, series, tables and layers.

Everything here reads the published release schema only (the density view of the raw
window is :mod:`anonymizers.reports.density`). SQL lives in ``sql/report/`` (and, for a
family's own layers, in the file its :class:`~anonymizers.families.base.ReportLayer` names).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import psycopg
import shapely
from psycopg import sql
from psycopg.rows import dict_row

from anonymizers.db.sqlfiles import fetch_columns, fetch_row, fetch_rows, read_sql
from anonymizers.errors import InputError
from anonymizers.families.base import ReportLayer

__all__ = ["LayerRows", "Metric", "ReleaseData", "Series", "TableInfo", "read_layer",
           "read_release", "release_family"]

SHARED_TABLES = ("manifest", "metrics", "metric_series")


@dataclass(frozen=True)
class Metric:
    """One row of the release's ``metrics`` table."""

    name: str
    value: float | None
    unit: str
    description: str


@dataclass(frozen=True)
class Series:
    """One series of ``metric_series``: values along x (None where suppressed/undefined)."""

    name: str
    x: tuple[float, ...]
    values: tuple[float | None, ...]
    unit: str
    description: str


@dataclass(frozen=True)
class TableInfo:
    """A data table of the release: its name, row count and ``COMMENT ON`` text."""

    name: str
    rows: int
    comment: str


@dataclass(frozen=True)
class LayerRows:
    """The rows of one report layer: shapely geometries with their weights and times."""

    layer: ReportLayer
    geometries: tuple[Any, ...]
    weights: tuple[float | None, ...]
    starts: tuple[datetime | None, ...]
    ends: tuple[datetime | None, ...]


@dataclass
class ReleaseData:
    """Everything the report reads from a release schema."""

    schema: str
    manifest: dict[str, Any]
    metrics: list[Metric] = field(default_factory=list)
    series: list[Series] = field(default_factory=list)
    tables: list[TableInfo] = field(default_factory=list)
    layers: list[LayerRows] = field(default_factory=list)

    @property
    def k(self) -> int:
        return int(self.manifest["k"])


def _manifest(conn: psycopg.Connection, schema: str) -> dict[str, Any]:
    exists = fetch_row(conn, "db/relation_exists.sql", {"relation": f"{schema}.manifest"})
    if exists is None or not exists["present"]:
        raise InputError(f"{schema} is not a release (no manifest table); list them with "
                         "`anonymizers releases`")
    found = fetch_columns(conn, "report/manifest.sql", release=schema)
    if not found or not next(iter(found.values())):
        raise InputError(f"{schema} has no manifest row: not a release")
    return {column: values[0] for column, values in found.items()}


def release_family(manifest: dict[str, Any]) -> str:
    """The name of the family whose method made the release."""
    from anonymizers.families.registry import method_entry

    return method_entry(str(manifest["method"])).family


def _tables(conn: psycopg.Connection, schema: str) -> list[TableInfo]:
    tables = []
    for table in fetch_rows(conn, "report/release_tables.sql", {"schema": schema}):
        name = table["table_name"]
        rows = fetch_columns(conn, "report/table_rows.sql", table=(schema, name))["n_rows"][0]
        tables.append(TableInfo(name, int(rows), table["comment"] or ""))
    return tables


def _metrics(conn: psycopg.Connection, schema: str) -> list[Metric]:
    rows = fetch_rows(conn, "report/metrics.sql", release=schema)
    return [Metric(row["name"], None if row["value"] is None else float(row["value"]),
                   row["unit"], row["description"])
            for row in rows]


def _series(conn: psycopg.Connection, schema: str) -> list[Series]:
    rows = fetch_rows(conn, "report/metric_series.sql", release=schema)
    grouped: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        grouped.setdefault(row["series"], []).append(row)
    return [Series(name, tuple(float(r["x"]) for r in points),
                   tuple(None if r["value"] is None else float(r["value"]) for r in points),
                   points[0]["unit"], points[0]["description"])
            for name, points in grouped.items()]


def _layer_query(schema: str, layer: ReportLayer) -> sql.Composed:
    """The SELECT of a table layer (sql/report/layer.sql) or the family's own file."""
    if layer.query is not None:
        return sql.SQL(read_sql(layer.query)).format(release=sql.Identifier(schema))

    def column(name: str | None) -> sql.Composable:
        return sql.NULL if name is None else sql.Identifier(name)

    return sql.SQL(read_sql("report/layer.sql")).format(
        table=sql.Identifier(schema, layer.table), geometry=sql.Identifier(layer.geometry),
        weight=column(layer.weight), t_start=column(layer.time_start),
        t_end=column(layer.time_end))


def read_layer(conn: psycopg.Connection, schema: str, layer: ReportLayer) -> LayerRows:
    """The geometries (shapely), weights and times of one layer of release ``schema``."""
    # Composed from the family's file or report/layer.sql: read by name all the same.
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(_layer_query(schema, layer)).fetchall()
    geometries = tuple(shapely.from_wkb([bytes(row["wkb"]) for row in rows])) if rows else ()
    return LayerRows(layer, geometries,
                     tuple(None if row["weight"] is None else float(row["weight"])
                           for row in rows),
                     tuple(row["t_start"] for row in rows), tuple(row["t_end"] for row in rows))


def read_release(conn: psycopg.Connection, schema: str,
                 layers: tuple[ReportLayer, ...]) -> ReleaseData:
    """The manifest, metrics, series, data tables and ``layers`` of release ``schema``."""
    manifest = _manifest(conn, schema)
    tables = _tables(conn, schema)
    names = {table.name for table in tables}
    data = ReleaseData(schema, manifest,
                       tables=[t for t in tables if t.name not in SHARED_TABLES])
    if "metrics" in names:
        data.metrics = _metrics(conn, schema)
    if "metric_series" in names:
        data.series = _series(conn, schema)
    data.layers = [read_layer(conn, schema, layer) for layer in layers
                   if layer.query is not None or layer.table in names]
    return data
