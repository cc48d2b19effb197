"""Where the pipeline's database is and how to connect to it."""

from __future__ import annotations

import os

import psycopg

__all__ = ["connect", "database_url"]


def database_url() -> str:
    """``DATABASE_URL`` when set (the user's own PostGIS), else the embedded cluster's URL.

    The embedded cluster is not started here; ``anonymizers db up`` (or any CLI command)
    does that.
    """
    if url := os.environ.get("DATABASE_URL"):
        return url
    if url := os.environ.get("AIRFLOW_CONN_ANONYMIZERS_DB"):
        return url
    from anonymizers.db.cluster import EmbeddedCluster

    return EmbeddedCluster.default().url()


def connect(url: str | None = None, *, autocommit: bool = False) -> psycopg.Connection:
    """A new connection; the application name shows up in pg_stat_activity."""
    return psycopg.connect(
        url or database_url(), autocommit=autocommit, application_name="anonymizers"
    )
