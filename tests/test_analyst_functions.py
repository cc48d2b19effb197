"""The functions an analyst may call read nothing it may not read (DESIGN, privacy rule 6).

The attack (issue 7, finding 2): PostGIS's ``_postgis_selectivity(table, column, box)``
answers from the table's pg_statistic histogram, for any table named by OID, to anyone.
Called cell by cell as analyst over the leaves of raw.points, it rebuilt a 2-D histogram
of the raw fixes (252 cells held by exactly one person); over a run's work_* points, the
same while the run went on. ``_postgis_stats`` hands out the histogram itself,
``_postgis_join_selectivity``, ``_postgis_index_extent`` and ``ST_EstimatedExtent``
(SECURITY DEFINER) read the same statistics or the spatial index. sql/admin/bootstrap.sql
revokes them from PUBLIC, with pg_catalog's per-table counters pg_stat_get_*(oid);
sql/schema/014_statistics_functions.sql checks it.

The inventory test lists every function analyst may execute that runs with its owner's
rights (SECURITY DEFINER) or reads statistics, and fails on any not allowed below with a
reason: a new PostGIS, PostgreSQL or extension that opens another door fails it.
"""

from __future__ import annotations

import re
from pathlib import Path

import psycopg
import pytest
from pipeline_helpers import release_params, run_steps

from anonymizers.release.spec import ReleaseSpec

REPO = Path(__file__).resolve().parents[1]

# How an attacker walks the raw fixes: a grid over the synthetic city (conftest's
# small_city is centred on 11.2558, 43.7696), one selectivity estimate per cell.
GRID = [(11.2058 + 0.01 * i, 43.7196 + 0.01 * j) for i in range(10) for j in range(10)]
CELL = "ST_MakeEnvelope(%s, %s, %s + 0.01, %s + 0.01, 4326)"

# Every door of finding 2, called as the attack called it: a table by its OID (which
# pg_class shows everyone; its name would need USAGE on its schema), or by name where the
# function takes names.
TABLE = "%(oid)s::oid::regclass"
DOORS = {
    "_postgis_stats": f"SELECT _postgis_stats({TABLE}, 'geom')",
    "_postgis_selectivity": f"SELECT _postgis_selectivity({TABLE}, 'geom', "
                            "ST_MakeEnvelope(11.2, 43.7, 11.3, 43.8, 4326), '2')",
    "_postgis_join_selectivity": f"SELECT _postgis_join_selectivity({TABLE}, 'geom', "
                                 f"{TABLE}, 'geom', '2')",
    "_postgis_index_extent": f"SELECT _postgis_index_extent({TABLE}, 'geom')",
    "st_estimatedextent(schema, table, column)":
        "SELECT ST_EstimatedExtent(%(schema)s, %(name)s, 'geom')",
    "st_estimatedextent(schema, table, column, parent_only)":
        "SELECT ST_EstimatedExtent(%(schema)s, %(name)s, 'geom', true)",
    "st_estimatedextent(table, column)": "SELECT ST_EstimatedExtent(%(name)s, 'geom')",
    "pg_stat_get_live_tuples": f"SELECT pg_stat_get_live_tuples({TABLE})",
    "pg_stat_get_tuples_inserted": f"SELECT pg_stat_get_tuples_inserted({TABLE})",
}

# What counts as reading statistics, by name. Deliberately wide: whatever it catches must
# be on the allow-list below, with the reason it tells nothing about rows analyst may not
# read.
READS_STATISTICS = re.compile(r"^(pg_stat|_postgis_)|estimat|selectiv|histogram|_size$")

_PER_BACKEND = ("per session: for other roles' sessions the query, its progress counters, "
                "times and client address come back NULL")
_SERVER_WIDE = "server-wide counters (WAL, checkpoints, buffers, archiver): no table named"
_SIZES = ("sizes in 8 kB pages: the same as pg_class.relpages, which every role reads "
          "(psql's \\dt+ and \\l+ show them); the residual the README states")
ALLOWED: dict[str, str] = {
    **dict.fromkeys([
        "pg_stat_get_activity", "pg_stat_get_progress_info", "pg_stat_get_backend_idset",
        "pg_stat_get_backend_pid", "pg_stat_get_backend_dbid", "pg_stat_get_backend_userid",
        "pg_stat_get_backend_activity", "pg_stat_get_backend_wait_event_type",
        "pg_stat_get_backend_wait_event", "pg_stat_get_backend_activity_start",
        "pg_stat_get_backend_xact_start", "pg_stat_get_backend_start",
        "pg_stat_get_backend_client_addr", "pg_stat_get_backend_client_port"], _PER_BACKEND),
    **dict.fromkeys([
        "pg_stat_get_archiver", "pg_stat_get_bgwriter_timed_checkpoints",
        "pg_stat_get_bgwriter_requested_checkpoints",
        "pg_stat_get_bgwriter_buf_written_checkpoints", "pg_stat_get_bgwriter_buf_written_clean",
        "pg_stat_get_bgwriter_maxwritten_clean", "pg_stat_get_bgwriter_stat_reset_time",
        "pg_stat_get_checkpoint_write_time", "pg_stat_get_checkpoint_sync_time",
        "pg_stat_get_buf_written_backend", "pg_stat_get_buf_fsync_backend",
        "pg_stat_get_buf_alloc", "pg_stat_get_wal", "pg_stat_get_wal_senders",
        "pg_stat_get_wal_receiver", "pg_stat_get_recovery_prefetch", "pg_stat_get_slru",
        "pg_stat_get_replication_slot", "pg_stat_get_snapshot_timestamp",
        "pg_stat_clear_snapshot", "pg_stat_force_next_flush"], _SERVER_WIDE),
    **dict.fromkeys([
        "pg_relation_size", "pg_table_size", "pg_total_relation_size", "pg_indexes_size",
        "pg_database_size", "pg_tablespace_size"], _SIZES),
    "pg_column_size": "the size of a value the caller already holds",
    "pg_statistics_obj_is_visible": "whether a statistics object's name is on the search path",
    "_postgis_deprecate": "prints a deprecation notice; reads no table",
    "_postgis_pgsql_version": "the server's version string",
    "_postgis_scripts_pgsql_version": "the version PostGIS's scripts were built for",
}


class Table:
    """A table as the attacker knows it from pg_class: OID, schema and name."""

    def __init__(self, oid: int, schema: str, name: str) -> None:
        self.oid, self.schema, self.name = oid, schema, name

    def names(self) -> dict[str, object]:
        return {"oid": self.oid, "schema": self.schema, "name": self.name}


def _tables(analyst: psycopg.Connection, schema: str, pattern: str) -> list[Table]:
    """Tables of ``schema`` named like ``pattern``, found as the attacker finds them."""
    rows = analyst.execute(
        "SELECT c.oid::bigint, n.nspname, c.relname FROM pg_class AS c JOIN pg_namespace AS n "
        "ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relkind = 'r' "
        "AND c.relname ~ %s ORDER BY 3", (schema, pattern)).fetchall()
    return [Table(*row) for row in rows]


def _histogram(analyst: psycopg.Connection, table: Table) -> list[float]:
    """The attack: the selectivity of each grid cell, i.e. a 2-D histogram of the fixes."""
    return [analyst.execute(f"SELECT _postgis_selectivity(%s::oid::regclass, 'geom', {CELL}, "
                            "'2')", (table.oid, lon, lat, lon, lat)).fetchone()[0]
            for lon, lat in GRID]


def test_the_selectivity_histogram_of_raw_points_is_refused(
        loaded_city: str, conn: psycopg.Connection, analyst_url: str) -> None:
    with psycopg.connect(analyst_url, autocommit=True) as analyst:
        leaves = _tables(analyst, "raw", "^points_")
        assert leaves, "the loader made no leaf of raw.points"
        for leaf in leaves:
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                _histogram(analyst, leaf)
    # There was something to steal: the leaves' geometries have statistics.
    (analysed,) = conn.execute("SELECT count(*) FROM pg_stats WHERE schemaname = 'raw' "
                               "AND attname = 'geom'").fetchone()
    assert analysed >= len(leaves)


@pytest.mark.parametrize("door", sorted(DOORS))
def test_every_statistics_door_is_closed_on_raw_points(
        loaded_city: str, analyst_url: str, door: str) -> None:
    with psycopg.connect(analyst_url, autocommit=True) as analyst:
        leaf = _tables(analyst, "raw", "^points_")[0]
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            analyst.execute(DOORS[door], leaf.names())


def test_a_running_release_s_work_points_are_closed_too(
        loaded_city: str, analyst_url: str) -> None:
    spec = ReleaseSpec.from_dict(run_steps(release_params(), until="metrics"))
    with psycopg.connect(analyst_url, autocommit=True) as analyst:
        (points,) = _tables(analyst, spec.work_schema, "^points$")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            _histogram(analyst, points)
        for door in sorted(DOORS):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                analyst.execute(DOORS[door], points.names())


def test_every_function_analyst_may_execute_that_reads_statistics_or_runs_as_its_owner_is_allowed(
        loaded_city: str, analyst_url: str) -> None:
    with psycopg.connect(analyst_url, autocommit=True) as analyst:
        rows = analyst.execute(
            "SELECT p.oid::regprocedure::text, p.proname, p.prosecdef FROM pg_proc AS p "
            "WHERE has_function_privilege(p.oid, 'EXECUTE')").fetchall()
    assert len(rows) > 1000  # the inventory saw pg_catalog and PostGIS
    doors = sorted(signature for signature, name, definer in rows
                   if (definer or READS_STATISTICS.search(name)) and name not in ALLOWED)
    assert doors == []


def test_the_inventory_would_catch_each_door_of_finding_2() -> None:
    for name in ("_postgis_stats", "_postgis_selectivity", "_postgis_join_selectivity",
                 "_postgis_index_extent", "st_estimatedextent", "pg_stat_get_live_tuples",
                 "pg_stat_get_tuples_inserted", "pg_stat_get_db_tuples_inserted"):
        assert READS_STATISTICS.search(name) and name not in ALLOWED, name


def test_the_owner_keeps_its_monitoring_and_analyst_its_psql(
        loaded_city: str, conn: psycopg.Connection, analyst_url: str) -> None:
    (analysed,) = conn.execute("SELECT count(*) FROM pg_stat_user_tables WHERE schemaname = "
                               "'raw' AND last_analyze IS NOT NULL").fetchone()
    assert analysed > 0
    with psycopg.connect(analyst_url, autocommit=True) as analyst:
        # psql's \d and \dt+ read pg_class and the sizes, not the counters.
        names = analyst.execute("SELECT relname FROM pg_stat_all_tables").fetchall()
        assert names
        analyst.execute("SELECT pg_size_pretty(pg_total_relation_size('catalog.releases'))")


def test_the_pipeline_calls_none_of_the_revoked_functions() -> None:
    revoked = re.compile(r"_postgis_(stats|selectivity|join_selectivity|index_extent)|"
                         r"st_estimatedextent|pg_stat_get_|pg_stat_have_stats", re.IGNORECASE)
    callers = [str(path.relative_to(REPO))
               for folder in ("anonymizers", "sql", "dags")
               for path in sorted((REPO / folder).rglob("*"))
               if path.suffix in (".py", ".sql") and path.parts[-2:-1] != ("admin",)
               and path.name != "014_statistics_functions.sql"
               and revoked.search(path.read_text())]
    assert callers == []
