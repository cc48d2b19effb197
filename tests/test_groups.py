"""anonymizers.db.groups: COPY output streamed in chunks that never split a trajectory."""

from __future__ import annotations

import psycopg
import pyarrow as pa
import pytest

from anonymizers.db.groups import copy_out_groups
from anonymizers.db.sqlfiles import copy_out
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


@pytest.mark.parametrize("chunk_rows", [1, 10, 100, 10**9])
def test_chunks_hold_whole_trajectories_and_together_the_whole_output(
        conn: psycopg.Connection, chunk_rows: int) -> None:
    lengths = [1, 40, 3, 1, 120, 7, 2, 60]
    work = work_points(conn, lengths)
    chunks = list(copy_out_groups(conn, POINTS_FOR_PYTHON, POINT_COLUMNS,
                                  chunk_rows=chunk_rows, work=work))
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
    if chunk_rows <= 100:
        assert len(chunks) > 1, "the chunk size did not cut the output"


def test_an_empty_output_gives_no_chunk(conn: psycopg.Connection) -> None:
    work = work_points(conn, [])
    assert list(copy_out_groups(conn, POINTS_FOR_PYTHON, POINT_COLUMNS, work=work)) == []


def test_a_long_output_streams_in_several_chunks(conn: psycopg.Connection) -> None:
    """Chunks are yielded while the COPY runs (not only at its end; they are cut between
    pyarrow's parsed blocks of at least 64 KiB), and the caller can use the connection
    again once the iteration is over."""
    work = work_points(conn, [500] * 40)
    sizes = [chunk.num_rows for chunk in copy_out_groups(
        conn, POINTS_FOR_PYTHON, POINT_COLUMNS, chunk_rows=100, work=work)]
    assert len(sizes) > 5 and sum(sizes) == 20_000
    assert conn.execute("SELECT count(*) FROM w.points").fetchone() == (20_000,)
