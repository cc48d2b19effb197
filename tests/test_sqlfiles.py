"""anonymizers.db.sqlfiles: COPY output streamed in chunks that never split a trajectory."""

from __future__ import annotations

import psycopg
import pyarrow as pa
import pytest

from anonymizers.db.sqlfiles import copy_out, copy_out_groups
from anonymizers.families.generalization.tessellation import POINT_COLUMNS

POINTS_FOR_PYTHON = "generalization/voronoi/100_points_for_python.sql"


def work_points(conn: psycopg.Connection, lengths: list[int]) -> str:
    """A work schema whose points table holds one trajectory per length (traj i of person
    i % 3, fixes a minute apart)."""
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
    return "w"


@pytest.mark.parametrize("chunk_bytes", [1, 300, 5_000, 10**9])
def test_chunks_hold_whole_trajectories_and_together_the_whole_output(
        conn: psycopg.Connection, chunk_bytes: int) -> None:
    lengths = [1, 40, 3, 1, 120, 7, 2, 60]
    work = work_points(conn, lengths)
    chunks = list(copy_out_groups(conn, POINTS_FOR_PYTHON, POINT_COLUMNS,
                                  chunk_bytes=chunk_bytes, work=work))
    whole = pa.concat_tables(chunks)
    expected = copy_out(conn, POINTS_FOR_PYTHON, work=work).decode().splitlines()
    assert whole.num_rows == sum(lengths) == len(expected)
    assert whole["traj"].to_pylist() == [line.split(",")[0] for line in expected]
    assert whole["x"].to_pylist() == [float(line.split(",")[3]) for line in expected]
    seen: set[str] = set()
    for chunk in chunks:  # a trajectory lies in one chunk only
        trajectories = set(chunk["traj"].to_pylist())
        assert not trajectories & seen
        seen |= trajectories
    if chunk_bytes <= 300:
        assert len(chunks) > 1, "the chunk size did not cut the output"


def test_an_empty_output_gives_no_chunk(conn: psycopg.Connection) -> None:
    work = work_points(conn, [])
    assert list(copy_out_groups(conn, POINTS_FOR_PYTHON, POINT_COLUMNS, work=work)) == []


def test_a_long_output_streams_in_several_chunks(conn: psycopg.Connection) -> None:
    """Chunks are yielded while the COPY runs (not only at its end), and the caller can use
    the connection again once the iteration is over."""
    work = work_points(conn, [50] * 40)
    sizes = [chunk.num_rows for chunk in copy_out_groups(
        conn, POINTS_FOR_PYTHON, POINT_COLUMNS, chunk_bytes=2_000, work=work)]
    assert len(sizes) > 5 and sum(sizes) == 2_000
    assert conn.execute("SELECT count(*) FROM w.points").fetchone() == (2_000,)
