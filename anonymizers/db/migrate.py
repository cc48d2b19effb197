"""Apply ``sql/schema/*.sql`` in order and record each in ``catalog.schema_migrations``.

Every schema file is plain SQL, safe to re-run (IF NOT EXISTS / CREATE OR REPLACE), so a
file whose checksum changed is simply applied again. Concurrent migrations serialise on
an advisory lock.
"""

from __future__ import annotations

import hashlib

import psycopg

from anonymizers.db.connection import connect
from anonymizers.db.sqlfiles import sql_dir

__all__ = ["MIGRATION_LOCK", "migrate", "schema_files"]

MIGRATION_LOCK = 7_210_001  # advisory lock key: one migration at a time per database


def schema_files() -> list[tuple[str, str]]:
    """(version, text) of every schema file, in the order they apply."""
    files = sorted((sql_dir() / "schema").glob("*.sql"))
    return [(path.stem, path.read_text()) for path in files]


def _applied(conn: psycopg.Connection) -> dict[str, str]:
    exists = conn.execute("SELECT to_regclass('catalog.schema_migrations')").fetchone()
    if exists is None or exists[0] is None:
        return {}
    rows = conn.execute("SELECT version, sha256 FROM catalog.schema_migrations").fetchall()
    return dict(rows)


def migrate(url: str | None = None) -> list[str]:
    """Bring the database to the current schema; returns the versions applied now."""
    applied_now: list[str] = []
    with connect(url, autocommit=True) as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK,))
        try:
            done = _applied(conn)
            for version, text in schema_files():
                digest = hashlib.sha256(text.encode()).hexdigest()
                if done.get(version) == digest:
                    continue
                with conn.transaction():
                    conn.execute(text.encode())  # plain SQL, no parameters: psql-compatible
                    conn.execute(
                        "INSERT INTO catalog.schema_migrations (version, sha256) VALUES (%s, %s) "
                        "ON CONFLICT (version) DO UPDATE SET sha256 = EXCLUDED.sha256, "
                        "applied_at = now()",
                        (version, digest),
                    )
                applied_now.append(version)
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK,))
    return applied_now
