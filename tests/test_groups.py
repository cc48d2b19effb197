"""Query output streamed in chunks that never split a trajectory (anonymizers.db.groups,
read by anonymizers.db.arrow_reads)."""

from __future__ import annotations

import psycopg
import pyarrow as pa
import pytest

from anonymizers.db.arrow_reads import read_groups
from anonymizers.db.sqlfiles import run_sql_file
from anonymizers.families.generalization.tessellation import POINT_COLUMNS

POINTS_FOR_PYTHON = "generalization/voronoi/100_points_for_python.sql"


def work_points(conn: psycopg.Connection, lengths: list[int]) -> str:
    """A work schema whose points table holds one trajectory per length (traj i of person
    i % 3, fixes a minute apart), committed: the reads run on a connection of their own."""
    conn.execute("CREATE SCHEMA w")
    conn.execute("CREATE TABLE w.points (traj_id text, user_id text, t timestamptz, "
                 "geom geometry(Point, 32632))")
    conn.execute("""
        INSERT INTO w.points
        SELECT 'traj-' || lpad(i::text, 3, '0'), 'person-' || (i %% 3),
               timestamptz '2026-01-01' + j * interval '1 minute',
               ST_SetSRID(ST_MakePoint(1000 * i + j, 5000000 + j), 32632)
        FROM unnest(%s::integer[]) WITH ORDINALITY AS l (n, i), generate_series(1, n) AS j
    """, (lengths,))
    conn.commit()
    return "w"


@pytest.mark.parametrize("chunk_rows", [1, 10, 100, 10**9])
def test_chunks_hold_whole_trajectories_and_together_the_whole_output(
        conn: psycopg.Connection, chunk_rows: int) -> None:
    lengths = [1, 40, 3, 1, 120, 7, 2, 60]
    work = work_points(conn, lengths)
    chunks = list(read_groups(conn, POINTS_FOR_PYTHON, POINT_COLUMNS,
                              chunk_rows=chunk_rows, work=work))
    whole = pa.concat_tables(chunks)
    expected = run_sql_file(conn, POINTS_FOR_PYTHON, work=work)
    assert whole.num_rows == sum(lengths) == len(expected)
    assert whole["traj_id"].to_pylist() == [row[0] for row in expected]
    assert whole["t"].to_pylist() == [row[2] for row in expected]
    assert whole["x"].to_pylist() == [row[3] for row in expected]
    seen: set[str] = set()
    for chunk in chunks:  # a trajectory lies in one chunk only
        trajectories = set(chunk["traj_id"].to_pylist())
        assert not trajectories & seen
        seen |= trajectories
    if chunk_rows <= 100:
        assert len(chunks) > 1, "the chunk size did not cut the output"


def test_an_empty_output_gives_no_chunk(conn: psycopg.Connection) -> None:
    work = work_points(conn, [])
    assert list(read_groups(conn, POINTS_FOR_PYTHON, POINT_COLUMNS, work=work)) == []


def test_a_long_output_streams_in_several_chunks(conn: psycopg.Connection) -> None:
    """Chunks are yielded while the read runs (not only at its end; they are cut between
    the driver's batches of at least 64 KiB), and the caller's connection stays usable."""
    work = work_points(conn, [500] * 40)
    sizes = [chunk.num_rows for chunk in read_groups(
        conn, POINTS_FOR_PYTHON, POINT_COLUMNS, chunk_rows=100, work=work)]
    assert len(sizes) > 5 and sum(sizes) == 20_000
    assert conn.execute("SELECT count(*) FROM w.points").fetchone() == (20_000,)
