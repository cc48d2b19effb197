"""The one writer of release metrics: every family's figures reach ``{build}.metrics`` and
``{build}.metric_series`` here, and every count then goes through the interval filter.

:func:`reset` empties the tables before a family measures (its SQL may insert rows
directly); :func:`write` copies what the family returned and runs the shared last pass
(``sql/metrics/095_interval_filter_counts.sql``: privacy rules 3 and 4).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import psycopg
from psycopg import sql

from anonymizers.db.sqlfiles import run_sql_file

__all__ = ["reset", "write"]

_COLUMNS = {"metrics": ("name", "value", "unit", "description"),
            "metric_series": ("series", "x", "value", "unit", "description")}


def reset(conn: psycopg.Connection, build: str) -> None:
    """Empty ``metrics`` and recreate ``metric_series`` (a re-run writes the same rows)."""
    run_sql_file(conn, "metrics/000_tables.sql", build=build)


def _value(value: Any) -> Any:
    """A number for the database (NaN, i.e. undefined, becomes NULL); text stays text."""
    if isinstance(value, bool | str) or value is None:
        return value
    if isinstance(value, float | int | np.number):
        number = float(value)
        return None if math.isnan(number) else number
    return value


def _copy(conn: psycopg.Connection, build: str, table: str,
          rows: Sequence[tuple[Any, ...]]) -> None:
    statement = sql.SQL("COPY {} ({}) FROM STDIN").format(
        sql.Identifier(build, table),
        sql.SQL(", ").join(sql.Identifier(column) for column in _COLUMNS[table]))
    with conn.cursor().copy(statement) as copy:
        for row in rows:
            copy.write_row([_value(v) for v in row])


def write(conn: psycopg.Connection, build: str, rows: Sequence[tuple[Any, ...]],
          series: Sequence[tuple[Any, ...]], k: int, count_interval: int) -> None:
    """COPY a family's scalars and series, then interval-filter every count of both tables."""
    _copy(conn, build, "metrics", rows)
    _copy(conn, build, "metric_series", series)
    run_sql_file(conn, "metrics/095_interval_filter_counts.sql",
                 {"k": k, "count_interval": count_interval}, build=build)
