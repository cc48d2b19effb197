"""Write validated points (and persons) into raw with COPY, visible all at once or not at all.

Three phases, so that the index builds can use both cores:

1. stage: a new unattached table ``raw.points_<id>`` is created, filled by a binary COPY
   streamed while it is encoded, and analysed, in one transaction (no WAL with
   wal_level=minimal). Nothing reads unattached tables.
2. index: the spatial and the time indexes are built on two connections in parallel.
3. publish: one short transaction checks the name (refuse, or --replace), registers the
   dataset, attaches the table and loads the persons.

A failure drops the staged table; a killed load leaves one that the next load drops
(orphan_partitions.sql), after checking no running load holds it (advisory lock).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd
import psycopg
from psycopg import sql

from anonymizers.db.connection import connect
from anonymizers.db.sqlfiles import run_sql_file
from anonymizers.errors import InputError
from anonymizers.loading.binary_copy import COLUMNS, PointRows, binary_copy_chunks
from anonymizers.loading.persons import KNOWN_COLUMNS

__all__ = ["DatasetRecord", "persons_csv", "store_dataset"]

COPY_POINTS = f"COPY {{}} ({', '.join(COLUMNS)}) FROM STDIN (FORMAT binary)"
COPY_PERSONS = ("COPY raw.persons (dataset_id, user_id, age, sex, education, income, "
                "attributes) FROM STDIN (FORMAT csv)")
STAGING_LOCK = 7_210_002  # advisory lock class: (STAGING_LOCK, dataset_id) while loading


@dataclass
class DatasetRecord:
    """The raw.datasets row of a load (parameters of sql/load/insert_dataset.sql)."""

    name: str
    source_file: str
    source_sha256: str
    persons_file: str | None
    n_points: int
    n_trajectories: int
    n_persons: int
    t_min: Any
    t_max: Any
    lon_median: float
    lat_median: float
    load_report: dict


def persons_csv(persons: pd.DataFrame, dataset_id: int) -> bytes:
    """raw.persons rows as CSV; columns other than the known ones become jsonb attributes."""
    extra = [c for c in persons.columns if c != "user_id" and c not in KNOWN_COLUMNS]
    attributes = [json.dumps({key: value for key, value in record.items() if value != ""})
                  for record in persons[extra].to_dict("records")]
    rows = pd.DataFrame({"dataset_id": dataset_id, "user_id": persons["user_id"]})
    for column in KNOWN_COLUMNS:
        rows[column] = persons[column] if column in persons.columns else None
    rows["attributes"] = attributes
    return rows.to_csv(index=False, header=False).encode()


def _copy(conn: psycopg.Connection, statement: sql.Composable,
          chunks: Iterable[bytes | memoryview]) -> None:
    """COPY the chunks in turn: each is sent while the server stores the previous one."""
    with conn.cursor().copy(statement) as copy:
        for chunk in chunks:
            copy.write(chunk)


def _drop_orphans(conn: psycopg.Connection) -> None:
    for relname, dataset_id in run_sql_file(conn, "load/orphan_partitions.sql"):
        taken = conn.execute("SELECT pg_try_advisory_lock(%s, %s)",
                             (STAGING_LOCK, dataset_id)).fetchone()
        if taken and taken[0]:
            conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier("raw", relname)))
            conn.execute("SELECT pg_advisory_unlock(%s, %s)", (STAGING_LOCK, dataset_id))


def _draw_id(guard: psycopg.Connection) -> int:
    """A new dataset id, locked for this load (the orphan sweep leaves locked ids alone)."""
    _drop_orphans(guard)
    dataset_id = int(guard.execute(
        "SELECT nextval(pg_get_serial_sequence('raw.datasets', 'dataset_id'))").fetchone()[0])
    guard.execute("SELECT pg_advisory_lock(%s, %s)", (STAGING_LOCK, dataset_id))
    return dataset_id


def _stage(url: str | None, dataset_id: int, rows: PointRows) -> None:
    """Create the dataset's table, fill it and analyse it, in one transaction."""
    partition = ("raw", f"points_{dataset_id}")
    with connect(url) as conn:
        run_sql_file(conn, "load/create_partition.sql", {"dataset_id": dataset_id},
                     partition=partition)
        _copy(conn, sql.SQL(COPY_POINTS).format(sql.Identifier(*partition)),
              binary_copy_chunks(rows))
        # Here rather than when publishing: the publish transaction stays short.
        conn.execute(sql.SQL("ANALYZE {}").format(sql.Identifier(*partition)))


def _build_indexes(url: str | None, dataset_id: int) -> None:
    partition = ("raw", f"points_{dataset_id}")

    def build(name: str) -> None:
        with connect(url) as conn:
            run_sql_file(conn, name, partition=partition)

    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(build, ["load/index_geometry.sql", "load/index_time.sql"]))


def _publish(url: str | None, dataset_id: int, record: DatasetRecord,
             persons: Future[bytes] | None, replace: bool) -> None:
    with connect(url) as conn:
        # Two loads of one name serialise here rather than race on the UNIQUE constraint.
        conn.execute("SELECT pg_advisory_xact_lock(hashtext('raw.datasets:' || %s))",
                     (record.name,))
        row = conn.execute("SELECT dataset_id FROM raw.datasets WHERE name = %s",
                           (record.name,)).fetchone()
        if row is not None and not replace:
            raise InputError(f"dataset {record.name!r} already exists; choose another "
                             "--dataset name, or pass --replace to swap it atomically.")
        if row is not None:
            run_sql_file(conn, "load/drop_dataset.sql", {"dataset_id": row[0]},
                         partition=("raw", f"points_{row[0]}"))
        params = {**asdict(record), "dataset_id": dataset_id,
                  "load_report": json.dumps(record.load_report)}
        run_sql_file(conn, "load/insert_dataset.sql", params)
        run_sql_file(conn, "load/attach_partition.sql", {"dataset_id": dataset_id},
                     partition=("raw", f"points_{dataset_id}"))
        if persons is not None:
            _copy(conn, sql.SQL(COPY_PERSONS), [persons.result()])


def store_dataset(url: str | None, record: DatasetRecord, rows: PointRows,
                  persons: pd.DataFrame | None, replace: bool) -> int:
    """Load one dataset; returns its id. On any failure nothing of it stays visible."""
    with connect(url, autocommit=True) as guard, ThreadPoolExecutor(max_workers=1) as helper:
        exists = guard.execute("SELECT 1 FROM raw.datasets WHERE name = %s",
                               (record.name,)).fetchone()
        if exists and not replace:  # checked again under the lock when publishing
            raise InputError(f"dataset {record.name!r} already exists; choose another "
                             "--dataset name, or pass --replace to swap it atomically.")
        dataset_id = _draw_id(guard)
        try:
            # The persons' CSV is built while the points are copied (the COPY waits on
            # the server most of the time, with the GIL released).
            payload = (helper.submit(persons_csv, persons, dataset_id)
                       if persons is not None else None)
            _stage(url, dataset_id, rows)
            _build_indexes(url, dataset_id)
            _publish(url, dataset_id, record, payload, replace)
        except BaseException:
            guard.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(
                sql.Identifier("raw", f"points_{dataset_id}")))
            raise
        finally:
            guard.execute("SELECT pg_advisory_unlock(%s, %s)", (STAGING_LOCK, dataset_id))
    return dataset_id
