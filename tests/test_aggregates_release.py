"""Aggregates releases end to end: presence and od publish the synthetic city through the
shared machinery (Airflow's dag.test() through the CLI), verified; bad parameters are
refused in prepare with what to do."""

from __future__ import annotations

import psycopg
import pytest
from pipeline_helpers import catalog_rows, run_steps
from psycopg import sql

from anonymizers import cli
from anonymizers.errors import InputError
from anonymizers.release.spec import ReleaseSpec
from anonymizers.verifiers import verify_release


def _rows(conn: psycopg.Connection, query: str, schema: str) -> list[tuple]:
    return conn.execute(sql.SQL(query).format(s=sql.Identifier(schema))).fetchall()


def test_presence_smoke(loaded_city, conn):
    spec = ReleaseSpec.from_dict(run_steps({"dataset": loaded_city, "method": "od",
                                            "k": 3}, until="verify"))
    result = verify_release(conn, spec.build_schema)
    print(result.to_json())
    assert result.passed, result.violations


def test_dbg(loaded_city, conn):
    spec = ReleaseSpec.from_dict(run_steps({"dataset": loaded_city, "method": "od",
                                            "k": 3, "cell_size": 2000}, until="verify"))
    w = spec.work_schema
    for q in ["SELECT count(DISTINCT user_id), count(*) FROM {s}.ag_person_bins",
              "SELECT n, count(*) FROM {s}.ag_cells GROUP BY n ORDER BY n",
              "SELECT * FROM {s}.ag_bins",
              "SELECT count(*) FROM {s}.ag_published_cells"]:
        print(q, _rows(conn, q, w))
    print(verify_release(conn, spec.build_schema).to_json())
