"""Where the pipeline's database is and how to connect to it, with retries for transient errors."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

import psycopg
from psycopg import errors as pg_errors

__all__ = ["TRANSIENT_ERRORS", "connect", "database_url", "retry_transient", "transaction"]

T = TypeVar("T")

# Only these are retried: a logic error retried is a logic error repeated.
TRANSIENT_ERRORS: tuple[type[Exception], ...] = (
    pg_errors.DeadlockDetected,
    pg_errors.SerializationFailure,
    pg_errors.AdminShutdown,
    psycopg.OperationalError,
)


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


@contextmanager
def transaction(url: str | None = None) -> Iterator[psycopg.Connection]:
    """A connection whose work commits on success and rolls back on any exception."""
    with connect(url) as conn:
        yield conn


def retry_transient(func: Callable[[], T], attempts: int = 4, base_delay_s: float = 0.5) -> T:
    """Run ``func``; on a transient database error wait (exponentially) and run it again."""
    for attempt in range(1, attempts + 1):
        try:
            return func()
        except TRANSIENT_ERRORS:
            if attempt == attempts:
                raise
            time.sleep(base_delay_s * 2 ** (attempt - 1))
    raise AssertionError("unreachable")
