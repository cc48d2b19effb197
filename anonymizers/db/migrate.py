"""Apply ``sql/schema/*.sql`` in order and record each in ``catalog.schema_migrations``.

Every schema file is plain SQL, safe to re-run (IF NOT EXISTS / CREATE OR REPLACE). An
applied file never changes: one whose checksum differs from the recorded one is refused
(re-running an edited migration silently would leave databases that applied the old and
the new text in different states); a change is a new numbered file. Concurrent migrations
serialise on an advisory lock.

The migrating role need not be a superuser. What only a superuser may do (PostGIS, the
role analyst, revoking PostGIS's statistics functions) is in sql/admin/bootstrap.sql; a
schema file that finds it missing stops with ``insufficient_privilege`` and a hint naming
that file, raised here as a DatabaseSetupError (one line, no traceback, in the CLI).
"""

from __future__ import annotations

import hashlib
import logging

import psycopg
from psycopg import errors

from anonymizers.db.connection import connect
from anonymizers.db.sqlfiles import fetch_row, fetch_rows, sql_dir
from anonymizers.errors import DatabaseSetupError

__all__ = ["MIGRATION_LOCK", "migrate", "schema_files"]

MIGRATION_LOCK = 7_210_001  # advisory lock key: one migration at a time per database

log = logging.getLogger(__name__)


def schema_files() -> list[tuple[str, str]]:
    """(version, text) of every schema file, in the order they apply."""
    files = sorted((sql_dir() / "schema").glob("*.sql"))
    return [(path.stem, path.read_text()) for path in files]


def _applied(conn: psycopg.Connection) -> dict[str, str]:
    exists = fetch_row(conn, "db/relation_exists.sql",
                       {"relation": "catalog.schema_migrations"})
    if exists is None or not exists["present"]:
        return {}
    return {row["version"]: row["sha256"]
            for row in fetch_rows(conn, "db/applied_migrations.sql")}


def migrate(url: str | None = None) -> list[str]:
    """Bring the database to the current schema; returns the versions applied now."""
    applied_now: list[str] = []
    with connect(url, autocommit=True) as conn:
        conn.add_notice_handler(_warn)
        conn.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK,))
        try:
            done = _applied(conn)
            for version, text in schema_files():
                digest = hashlib.sha256(text.encode()).hexdigest()
                if done.get(version) == digest:
                    continue
                if version in done:
                    raise DatabaseSetupError(
                        f"sql/schema/{version}.sql changed after this database applied it "
                        f"(recorded sha256 {done[version][:12]}..., now {digest[:12]}...): "
                        "an applied migration never changes; restore the file and put the "
                        "change in a new numbered file")
                _apply(conn, version, text, digest)
                applied_now.append(version)
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK,))
    return applied_now


def _apply(conn: psycopg.Connection, version: str, text: str, digest: str) -> None:
    """One schema file and its row in catalog.schema_migrations, in one transaction."""
    try:
        with conn.transaction():
            conn.execute(text.encode())  # plain SQL, no parameters: psql-compatible
            conn.execute(
                "INSERT INTO catalog.schema_migrations (version, sha256) VALUES (%s, %s) "
                "ON CONFLICT (version) DO UPDATE SET sha256 = EXCLUDED.sha256, "
                "applied_at = now()",
                (version, digest),
            )
    except errors.InsufficientPrivilege as error:
        diag = error.diag
        hint = diag.message_hint or (
            "A superuser runs sql/admin/bootstrap.sql once in this database "
            '(README, "Using it": Database).')
        raise DatabaseSetupError(
            f"sql/schema/{version}.sql needs what role {conn.info.user} may not do: "
            f"{diag.message_primary}. {hint}") from error


def _warn(notice: psycopg.errors.Diagnostic) -> None:
    """A schema file's RAISE WARNING reaches the operator (notices stay quiet)."""
    if notice.severity_nonlocalized == "WARNING":
        log.warning("%s (%s)", notice.message_primary, notice.message_hint)
