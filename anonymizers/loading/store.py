"""Write validated points (and persons) into raw in one transaction, with COPY."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
from psycopg import Connection

from anonymizers.db.sqlfiles import run_sql_file
from anonymizers.errors import InputError

__all__ = ["DatasetRecord", "points_csv", "store_dataset"]

COPY_POINTS = "COPY {} (traj_id, user_id, t, lon, lat) FROM STDIN (FORMAT csv)"
COPY_PERSONS = ("COPY raw.persons (dataset_id, user_id, age, sex, education, income, attributes) "
                "FROM STDIN")
COPY_CHUNK = 8 << 20


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


def points_csv(traj_id: pd.Series, user_id: pd.Series, t: pd.Series,
               lon: np.ndarray, lat: np.ndarray) -> bytes:
    """The rows to load as CSV, built column-wise by Arrow (no Python loop over rows)."""
    table = pa.table({
        "traj_id": pa.array(traj_id, type=pa.string()),
        "user_id": pa.array(user_id, type=pa.string()),
        # Microsecond UTC timestamps: the precision of timestamptz.
        "t": pa.array(t.dt.tz_convert("UTC").dt.tz_localize(None), type=pa.timestamp("us")),
        "lon": pa.array(lon, type=pa.float64()),
        "lat": pa.array(lat, type=pa.float64()),
    })
    buffer = io.BytesIO()
    pacsv.write_csv(table, buffer, pacsv.WriteOptions(include_header=False))
    return buffer.getvalue()


def _existing(conn: Connection, name: str) -> int | None:
    row = conn.execute("SELECT dataset_id FROM raw.datasets WHERE name = %s", (name,)).fetchone()
    return None if row is None else int(row[0])


def store_dataset(conn: Connection, record: DatasetRecord, csv_rows: bytes,
                  persons: list[tuple] | None, replace: bool) -> int:
    """Load one dataset atomically; the caller's transaction commits or rolls it all back."""
    conn.execute("SET LOCAL TimeZone = 'UTC'")
    # Two loads of one name serialise here rather than race on the UNIQUE constraint.
    conn.execute("SELECT pg_advisory_xact_lock(hashtext('raw.datasets:' || %s))", (record.name,))
    old = _existing(conn, record.name)
    if old is not None and not replace:
        raise InputError(f"dataset {record.name!r} already exists; choose another --dataset "
                         "name, or pass --replace to swap it atomically for the new file.")
    if old is not None:
        run_sql_file(conn, "load/drop_dataset.sql", {"dataset_id": old},
                     partition=("raw", f"points_{old}"))
    params = {**record.__dict__, "load_report": json.dumps(record.load_report)}
    dataset_id = int(run_sql_file(conn, "load/insert_dataset.sql", params)[0][0])
    partition = ("raw", f"points_{dataset_id}")
    run_sql_file(conn, "load/create_partition.sql", {"dataset_id": dataset_id}, partition=partition)
    _copy_points(conn, partition, csv_rows)
    run_sql_file(conn, "load/attach_partition.sql", {"dataset_id": dataset_id}, partition=partition)
    if persons:
        with conn.cursor().copy(COPY_PERSONS) as copy:
            for row in persons:
                copy.write_row((dataset_id, *row))
    return dataset_id


def _copy_points(conn: Connection, partition: tuple[str, str], csv_rows: bytes) -> None:
    from psycopg import sql

    statement = sql.SQL(COPY_POINTS).format(sql.Identifier(*partition))
    with conn.cursor().copy(statement) as copy:
        view = memoryview(csv_rows)
        for start in range(0, len(view), COPY_CHUNK):
            copy.write(view[start:start + COPY_CHUNK])
