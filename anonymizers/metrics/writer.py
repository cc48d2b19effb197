"""The one writer of release metrics: every family's figures reach ``{build}.metrics`` and
``{build}.metric_series`` here, and every count then goes through the interval filter.

:func:`reset` empties the tables before a family measures (its SQL may insert rows
directly); :func:`write` copies what the family returned and runs the shared last pass
(``sql/metrics/095_interval_filter_counts.sql``: privacy rules 3, 4 and 8). A value that
is a :class:`~anonymizers.metrics.shares.Ratio` is copied as its two exact counts
(``numerator``, ``denominator``, value NULL); the last pass filters both and divides, so
no family publishes a quotient of exact counts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import psycopg
from psycopg import sql

from anonymizers.db.sqlfiles import run_sql_file
from anonymizers.metrics.shares import Ratio

__all__ = ["reset", "write"]

_COLUMNS = {"metrics": ("name", "value", "unit", "description", "numerator", "denominator"),
            "metric_series": ("series", "x", "value", "unit", "description", "numerator",
                              "denominator")}
_VALUE = {"metrics": 1, "metric_series": 2}  # position of the value in a family's row


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


def _with_counts(row: tuple[Any, ...], at: int) -> list[Any]:
    """A family's row with numerator and denominator appended: a Ratio's exact counts (its
    value left to the last pass), else NULL."""
    value = row[at]
    if isinstance(value, Ratio):
        return [*row[:at], None, *row[at + 1:], value.part, value.whole]
    return [*(_value(v) for v in row), None, None]


def _copy(conn: psycopg.Connection, build: str, table: str,
          rows: Sequence[tuple[Any, ...]]) -> None:
    statement = sql.SQL("COPY {} ({}) FROM STDIN").format(
        sql.Identifier(build, table),
        sql.SQL(", ").join(sql.Identifier(column) for column in _COLUMNS[table]))
    with conn.cursor().copy(statement) as copy:
        for row in rows:
            copy.write_row(_with_counts(row, _VALUE[table]))


def write(conn: psycopg.Connection, build: str, rows: Sequence[tuple[Any, ...]],
          series: Sequence[tuple[Any, ...]], k: int, count_interval: int) -> None:
    """COPY a family's scalars and series, then interval-filter every count of both tables
    and compute every ratio of counts from its filtered counts."""
    _copy(conn, build, "metrics", rows)
    _copy(conn, build, "metric_series", series)
    run_sql_file(conn, "metrics/095_interval_filter_counts.sql",
                 {"k": k, "count_interval": count_interval}, build=build)
