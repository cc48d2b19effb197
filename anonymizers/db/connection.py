"""Where the pipeline's database is and how to connect to it."""

from __future__ import annotations

import os

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

__all__ = ["APPLICATION_NAME_VARIABLE", "analyst_url", "application_name", "connect",
           "database_url"]

# The environment variable that names this process's connections in pg_stat_activity.
# ``anonymizers compare`` sets it for each method's release process, so that the backends of
# a method it stopped (or that died) can be found and ended: PostgreSQL runs a dead
# client's query on until the query next writes to the client.
APPLICATION_NAME_VARIABLE = "ANONYMIZERS_APPLICATION_NAME"


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


def application_name() -> str:
    """The application name of this process's connections: ``ANONYMIZERS_APPLICATION_NAME``
    when set, else ``anonymizers``."""
    return os.environ.get(APPLICATION_NAME_VARIABLE) or "anonymizers"


def connect(url: str | None = None, *, autocommit: bool = False) -> psycopg.Connection:
    """A new connection; the application name shows up in pg_stat_activity."""
    return psycopg.connect(
        url or database_url(), autocommit=autocommit, application_name=application_name()
    )


def analyst_url(url: str | None = None) -> str:
    """How the role ``analyst`` connects to the database of ``url`` (default: ours).

    Same server and database, user ``analyst``, never the owner's password. On an
    embedded cluster its password comes from the cluster's passfile (``passfile=``, written
    by ``db up``, mode 0600); elsewhere from libpq's usual sources (PGPASSFILE, ~/.pgpass,
    PGPASSWORD).
    """
    from anonymizers.db.cluster import passfile_beside

    info = {key: str(value) for key, value in conninfo_to_dict(url or database_url()).items()
            if value is not None and key not in ("password", "passfile")}
    info["user"] = "analyst"
    if (passfile := passfile_beside(info.get("host", ""))) is not None:
        info["passfile"] = str(passfile)
    return make_conninfo("", **info)
