"""Large reads straight into Arrow on a connection of their own, in the caller's snapshot
(anonymizers.db.arrow_reads)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import psycopg
import pyarrow as pa
import pytest

from anonymizers.db import arrow_reads, sqlfiles
from anonymizers.db.arrow_reads import read_batches, read_columns, read_groups

FILES = {
    "rows.sql": "SELECT g AS n, 'row ' || g AS label, g * 0.5 AS half, "
                "timestamptz '2026-03-02 04:00:00+00' + g * interval '1 microsecond' AS t "
                "FROM generate_series(1, %(n)s) AS g ORDER BY g",
    "shared.sql": "SELECT n FROM public.shared ORDER BY n",
    "literal.sql": "SELECT %(text)s::text AS text, 100 %% 7 AS rest",
    "constant.sql": "SELECT 1 / 0 AS q",
    "failing.sql": "SELECT 1 / (g - %(fail_at)s) AS q FROM generate_series(1, 300000) AS g",
    "setting.sql": "SET work_mem = '7MB'",
    "work_mem.sql": "SELECT current_setting('work_mem') AS work_mem, "
                    "current_setting('transaction_isolation') AS isolation",
    "groups.sql": "SELECT g / 10 AS grp, g AS n FROM generate_series(0, 99999) AS g ORDER BY g",
}


@pytest.fixture
def sql_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name, text in FILES.items():
        (tmp_path / name).write_text(text)
    monkeypatch.setenv("ANONYMIZERS_SQL_DIR", str(tmp_path))
    sqlfiles.read_sql.cache_clear()
    yield
    sqlfiles.read_sql.cache_clear()


ROW_COLUMNS = {"n": pa.int64(), "label": pa.string(), "half": pa.float64(),
               "t": pa.timestamp("us", tz="UTC")}


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(arrow_reads, "BATCH_BYTES", 100_000)


def test_rows_come_typed_and_in_order(conn: psycopg.Connection, sql_files: None,
                                      small_batches: None) -> None:
    n = 200_000
    batches = list(read_batches(conn, "rows.sql", ROW_COLUMNS, {"n": n}))
    table = pa.Table.from_batches(batches)
    assert len(batches) > 1 and table.schema == pa.schema(list(ROW_COLUMNS.items()))
    assert table["n"].to_pylist() == list(range(1, n + 1))
    assert table["label"][n - 1].as_py() == f"row {n}"
    assert table["half"].to_numpy().sum() == n * (n + 1) / 4
    micros = table["t"].cast(pa.int64()).to_numpy()
    assert (np.diff(micros) == 1).all() and micros[0] == 1_772_424_000_000_001


def test_values_are_bound_and_a_literal_percent_stays(conn: psycopg.Connection,
                                                      sql_files: None) -> None:
    tricky = "it's -- not; a 'quote' %(n)s \\ end"
    table = pa.Table.from_batches(list(read_batches(
        conn, "literal.sql", {"text": pa.string(), "rest": pa.int32()}, {"text": tricky})))
    assert table.to_pylist() == [{"text": tricky, "rest": 2}]


def test_the_read_sees_the_callers_snapshot_not_what_others_committed_since(
        conn: psycopg.Connection, db_url: str, sql_files: None) -> None:
    """Rows committed before the read are read; rows another connection commits while the
    caller's transaction is open are not, in the first statement's snapshot of a
    REPEATABLE READ caller as in a READ COMMITTED one's latest."""
    conn.execute("CREATE TABLE public.shared (n integer)")
    conn.execute("INSERT INTO public.shared VALUES (1), (2)")
    conn.commit()
    conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
    with conn.transaction():
        conn.execute("SELECT 1")  # the snapshot is taken here
        with psycopg.connect(db_url, autocommit=True) as other:
            other.execute("INSERT INTO public.shared VALUES (3)")
        found = read_columns(conn, "shared.sql", {"n": pa.int32()})
    assert found["n"].tolist() == [1, 2]


def test_an_error_of_the_server_is_psycopgs_error_of_its_sqlstate(
        conn: psycopg.Connection, sql_files: None, small_batches: None) -> None:
    """Before the rows (the planner folds the constant), and after batches were handed on
    (the driver gives no SQLSTATE for an error among the rows: a DatabaseError)."""
    with pytest.raises(psycopg.errors.DivisionByZero, match="division by zero"):
        list(read_batches(conn, "constant.sql", {"q": pa.int32()}))
    handed = 0
    with pytest.raises(psycopg.DatabaseError, match="division by zero"):
        for _ in read_batches(conn, "failing.sql", {"q": pa.int32()}, {"fail_at": 250_000}):
            handed += 1
    assert handed > 0
    with pytest.raises(ValueError, match=r"returns columns \['q'\], expected \['p'\]"):
        list(read_batches(conn, "failing.sql", {"p": pa.int32()}, {"fail_at": -1}))


def test_a_table_the_callers_transaction_locked_fails_after_the_lock_timeout(
        conn: psycopg.Connection, sql_files: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Instead of waiting for ever for a lock its own caller holds."""
    conn.execute("CREATE TABLE public.shared (n integer)")
    conn.commit()
    monkeypatch.setattr(arrow_reads, "LOCK_TIMEOUT", "200ms")
    with conn.transaction():
        conn.execute("LOCK TABLE public.shared IN ACCESS EXCLUSIVE MODE")
        with pytest.raises(psycopg.errors.LockNotAvailable):
            read_columns(conn, "shared.sql", {"n": pa.int32()})


def test_files_before_the_query_set_the_reading_session(conn: psycopg.Connection,
                                                        sql_files: None) -> None:
    with conn.transaction():
        table = pa.Table.from_batches(list(read_batches(
            conn, "work_mem.sql", {"work_mem": pa.string(), "isolation": pa.string()},
            before=("setting.sql",))))
    assert table.to_pylist() == [{"work_mem": "7MB", "isolation": "repeatable read"}]


def test_an_early_stop_ends_the_read_and_the_connection_goes_on(
        conn: psycopg.Connection, sql_files: None) -> None:
    with conn.transaction():
        batches = read_batches(conn, "rows.sql", ROW_COLUMNS, {"n": 2_000_000})
        first = next(batches)
        batches.close()
        assert first.num_rows > 0
        assert conn.execute("SELECT 41 + 1").fetchone() == (42,)


def test_groups_are_never_split_between_chunks(conn: psycopg.Connection, sql_files: None,
                                               small_batches: None) -> None:
    chunks = list(read_groups(conn, "groups.sql", {"grp": pa.int32(), "n": pa.int32()},
                              chunk_rows=7_003))
    assert len(chunks) > 5
    assert sum(chunk.num_rows for chunk in chunks) == 100_000
    for chunk in chunks:
        assert chunk.num_rows % 10 == 0  # ten rows per group
        assert chunk.num_rows >= 7_003 or chunk is chunks[-1]
