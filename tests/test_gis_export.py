"""Releases as GIS tools take them: every table and view of a release of every family,
read by the analyst with GDAL (Debian's gdal-bin: ogrinfo, ogr2ogr), converts to GeoPackage
and GeoJSON without a warning and without losing a column.

What GDAL needs of a table (docs/pages/user-guide/querying.md): one geometry column, a
single-column integer primary key (GDAL's feature id; anything else is an ordinary
attribute, so ids such as cell_id survive GeoJSON) and no array columns (GeoPackage has
none). The releases are the session's published city (one method per family and MLA).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from pathlib import Path

import psycopg
import pytest

from anonymizers.errors import AnonymizerError

GDAL_PACKAGES = ("gdal-bin",)
# The key of every release table: a row number, nothing an analyst joins on.
SURROGATE_KEY = "fid"
INTEGERS = ("int2", "int4", "int8")

# The relations of a release schema the analyst reads, with their columns in order.
COLUMNS_SQL = """
SELECT c.relname AS relation, a.attname AS column_name, t.typname AS type_name
FROM pg_class AS c
JOIN pg_namespace AS n ON n.oid = c.relnamespace
JOIN pg_attribute AS a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
JOIN pg_type AS t ON t.oid = a.atttypid
WHERE n.nspname = %(schema)s AND c.relkind IN ('r', 'v', 'm')
ORDER BY c.relname, a.attnum
"""
# The single-column primary key of each table (GDAL's feature id), where there is one.
KEYS_SQL = """
SELECT c.relname AS relation, a.attname AS column_name
FROM pg_constraint AS k
JOIN pg_class AS c ON c.oid = k.conrelid
JOIN pg_namespace AS n ON n.oid = c.relnamespace
JOIN pg_attribute AS a ON a.attrelid = c.oid AND a.attnum = k.conkey[1]
WHERE n.nspname = %(schema)s AND k.contype = 'p' AND cardinality(k.conkey) = 1
"""


class GdalSetupError(AnonymizerError):
    """gdal-bin could not be installed."""


@pytest.fixture(scope="session")
def ogr2ogr() -> Path:
    """ogr2ogr's executable; installed with apt (as root or through ``sudo -n``) when
    missing, as the report's tests install chromium: CI starts from a fresh machine."""
    if shutil.which("ogr2ogr") is None or shutil.which("ogrinfo") is None:
        from anonymizers.system_packages import apt_install

        apt_install(GDAL_PACKAGES, GdalSetupError,
                    "install gdal-bin (Debian/Ubuntu) by hand and run the test again",
                    recommends=False)
    found = shutil.which("ogr2ogr")
    assert found is not None, "gdal-bin is installed but ogr2ogr is not on PATH"
    return Path(found)


@pytest.fixture(scope="session")
def analyst_city(published_city_db: str) -> str:
    """How the analyst connects to the published city (the role that reads releases)."""
    from anonymizers.db.connection import analyst_url

    return analyst_url(published_city_db)


def _relations(url: str, schema: str) -> tuple[dict[str, dict[str, str]], dict[str, str]]:
    """{relation: {column: type}} and {table: its single-column primary key}."""
    columns: dict[str, dict[str, str]] = {}
    with psycopg.connect(url, row_factory=psycopg.rows.dict_row) as conn:
        for row in conn.execute(COLUMNS_SQL, {"schema": schema}):
            columns.setdefault(row["relation"], {})[row["column_name"]] = row["type_name"]
        keys = {row["relation"]: row["column_name"]
                for row in conn.execute(KEYS_SQL, {"schema": schema})}
    return columns, keys


def _gdal(args: list[str]) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(args, capture_output=True, text=True, check=False, timeout=300)
    assert result.returncode == 0, f"{' '.join(args[:3])} failed: {result.stderr}"
    return result


def _pg_source(url: str, schema: str) -> str:
    """GDAL's PostgreSQL data source: the analyst's libpq connection string, one schema."""
    return f"PG:{url} schemas={schema}"


def _gpkg_columns(path: Path, layer: str) -> set[str]:
    with sqlite3.connect(path) as gpkg:
        return {row[1] for row in gpkg.execute(f'PRAGMA table_info("{layer}")')}


def _geojson_columns(path: Path) -> tuple[set[str], bool, int]:
    """(property names, whether any feature has a geometry, number of features)."""
    features = json.loads(path.read_text())["features"]
    names = {name for feature in features for name in feature["properties"]}
    return names, any(f["geometry"] is not None for f in features), len(features)


@pytest.mark.parametrize("method", ["grid_kam_cut", "mob_symmetric", "tcaa",
                                    "mla_iterative_kmeans", "tg_nonoverlapping", "presence",
                                    "od"])
def test_every_release_table_converts_to_geopackage_and_geojson_whole(
        method: str, published_city: dict[str, str], analyst_city: str, ogr2ogr: Path,
        tmp_path: Path) -> None:
    release = published_city[method]
    source = _pg_source(analyst_city, release)
    columns, keys = _relations(analyst_city, release)
    assert {"manifest", "metrics"} <= set(columns), f"{release}: the analyst sees {columns}"

    listing = _gdal(["ogrinfo", "-ro", "-so", "-al", source])
    problems = [f"ogrinfo: {listing.stderr.strip()}"] if listing.stderr.strip() else []
    for relation, types in columns.items():
        geometries = [name for name, kind in types.items() if kind == "geometry"]
        if len(geometries) > 1:
            problems.append(f"{relation}: {len(geometries)} geometry columns {geometries}")
        if arrays := [name for name, kind in types.items() if kind.startswith("_")]:
            problems.append(f"{relation}: array columns {arrays}")
        key = keys.get(relation)
        if _is_table(analyst_city, release, relation) and types.get(key or "") not in INTEGERS:
            problems.append(f"{relation}: no single-column integer primary key ({key})")
        problems += _converted_whole(ogr2ogr, source, relation, types, keys.get(relation),
                                     tmp_path)
    assert problems == [], f"{release}:\n" + "\n".join(problems)


def _is_table(url: str, schema: str, relation: str) -> bool:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT to_regclass(%s) IS NOT NULL AND EXISTS (SELECT 1 FROM "
                           "pg_class WHERE oid = to_regclass(%s) AND relkind = 'r')",
                           (f'"{schema}"."{relation}"',) * 2).fetchone()
    return bool(row and row[0])


def _converted_whole(ogr2ogr: Path, source: str, relation: str, types: dict[str, str],
                     key: str | None, folder: Path) -> list[str]:
    """What ogr2ogr lost or warned about converting one relation to GPKG and GeoJSON."""
    problems = []
    gpkg, geojson = folder / f"{relation}.gpkg", folder / f"{relation}.geojson"
    for out, driver in ((gpkg, "GPKG"), (geojson, "GeoJSON")):
        result = _gdal([str(ogr2ogr), "-f", driver, str(out), source, relation])
        if result.stderr.strip():
            problems.append(f"{relation} -> {driver}: {result.stderr.strip()}")
    # GeoPackage keeps every column: the feature id as its fid column, named after the key.
    if missing := set(types) - _gpkg_columns(gpkg, relation):
        problems.append(f"{relation} -> GPKG: columns lost {sorted(missing)}")
    # GeoJSON keeps every attribute; the feature id is not one, so the key must be fid (a
    # row number), never an id a user joins on (cell_id, group_id).
    geometry = {name for name, kind in types.items() if kind == "geometry"}
    wanted = set(types) - geometry - ({key} if key == SURROGATE_KEY else set())
    names, has_geometry, n = _geojson_columns(geojson)
    if n:  # an empty layer writes no properties to compare
        if missing := wanted - names:
            problems.append(f"{relation} -> GeoJSON: columns lost {sorted(missing)}")
        if geometry and not has_geometry:
            problems.append(f"{relation} -> GeoJSON: geometry lost")
    return problems


UNCOMMENTED_SQL = """
SELECT 'schema' AS what, n.nspname AS name
FROM pg_namespace AS n
WHERE n.nspname = %(schema)s AND obj_description(n.oid, 'pg_namespace') IS NULL
UNION ALL
SELECT 'relation', c.relname
FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
WHERE n.nspname = %(schema)s AND c.relkind IN ('r', 'v', 'm')
  AND obj_description(c.oid, 'pg_class') IS NULL
UNION ALL
SELECT 'column', c.relname || '.' || a.attname
FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
JOIN pg_attribute AS a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
WHERE n.nspname = %(schema)s AND c.relkind IN ('r', 'v', 'm')
  AND col_description(c.oid, a.attnum) IS NULL
ORDER BY 1, 2
"""


@pytest.mark.parametrize("method", ["grid_kam_cut", "mob_symmetric", "tcaa",
                                    "mla_iterative_kmeans", "tg_nonoverlapping", "presence",
                                    "od"])
def test_the_analyst_reads_a_comment_on_every_release_schema_table_and_column(
        method: str, published_city: dict[str, str], analyst_city: str) -> None:
    with psycopg.connect(analyst_city) as conn:
        missing = conn.execute(UNCOMMENTED_SQL, {"schema": published_city[method]}).fetchall()
    assert missing == []


def test_the_analyst_reads_a_comment_on_every_catalog_table_view_and_column(
        published_city: dict[str, str], analyst_city: str) -> None:
    with psycopg.connect(analyst_city) as conn:
        missing = conn.execute(UNCOMMENTED_SQL, {"schema": "catalog"}).fetchall()
    assert missing == []


def test_the_groups_verifier_refuses_a_group_drawn_off_its_places(
        published_city: dict[str, str], published_city_db: str) -> None:
    """A group's line is the points of its published places in order, nothing else
    (privacy rule 2): one vertex moved 30 m is refused, as is a line in another order."""
    from psycopg import sql

    from anonymizers.families.groups.verifier import verify_groups_release

    schema = published_city["tg_nonoverlapping"]
    groups = sql.Identifier(schema, "groups")
    with psycopg.connect(published_city_db) as conn:
        clean = verify_groups_release(conn, schema)
        assert clean.passed, clean.violations
        assert clean.checks["group_geometry"] == 0 and clean.checks["od_geometry"] == 0
        for change in ("ST_SetPoint(geom, 0, ST_Translate(ST_StartPoint(geom), 30, 0))",
                       "ST_Reverse(geom)"):
            conn.execute(sql.SQL(
                "UPDATE {g} SET geom = " + change + " WHERE fid = (SELECT min(fid) FROM {g} "
                "WHERE geom IS NOT NULL AND NOT ST_Equals(ST_StartPoint(geom), "
                "ST_EndPoint(geom)))").format(g=groups))
            planted = verify_groups_release(conn, schema)
            conn.rollback()
            assert planted.checks["group_geometry"] == 1, change
            assert any("not the line through its places" in v for v in planted.violations)


def test_a_raw_id_inside_a_published_json_list_is_refused(
        published_city: dict[str, str], published_city_db: str) -> None:
    """Lists are JSON now (groups.places): the shared identifier scan reads every string in
    them, as it read every element of a text array."""
    from psycopg import sql

    from anonymizers.families.groups.verifier import verify_groups_release

    schema = published_city["tg_nonoverlapping"]
    with psycopg.connect(published_city_db) as conn:
        row = conn.execute("SELECT user_id FROM raw.points LIMIT 1").fetchone()
        assert row is not None, "the city has no fix"
        (user_id,) = row
        conn.execute(sql.SQL(
            "UPDATE {g} SET places = places || to_jsonb(%s::text) "
            "WHERE fid = (SELECT min(fid) FROM {g})").format(
            g=sql.Identifier(schema, "groups")), (user_id,))
        planted = verify_groups_release(conn, schema)
        conn.rollback()
    assert any("groups.places holds 1 raw traj_id/user_id" in v for v in planted.violations), \
        planted.violations
