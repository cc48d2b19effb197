"""Schema migrations: a database of the previous contract is brought to the current one."""

from __future__ import annotations

from pathlib import Path

import psycopg

from anonymizers.db.migrate import migrate
from anonymizers.loading import load_dataset

POINTS = "traj_id,user_id,t,lon,lat\na,u1,2020-01-01T08:00:00Z,11.25,43.77\n"


def raw_points_indexes(conn: psycopg.Connection) -> list[str]:
    return [name for (name,) in conn.execute(
        "SELECT indexname FROM pg_indexes WHERE schemaname = 'raw' AND tablename = 'points' "
        "ORDER BY 1").fetchall()]


def test_the_spatial_index_of_raw_points_is_dropped_and_loads_still_work(
        conn: psycopg.Connection, db_url: str, tmp_path: Path) -> None:
    path = tmp_path / "points.csv"
    path.write_text(POINTS)
    load_dataset(path, "before", url=db_url)
    # The previous contract: a GiST index on raw.points (built on every partition), and
    # 011_raw_points_indexes not applied yet.
    conn.execute("CREATE INDEX points_geom_idx ON raw.points USING gist (geom)")
    conn.execute("DELETE FROM catalog.schema_migrations WHERE version = '011_raw_points_indexes'")
    assert "points_geom_idx" in raw_points_indexes(conn)
    assert migrate(db_url) == ["011_raw_points_indexes"]
    assert raw_points_indexes(conn) == ["points_t_idx", "points_traj_t_idx"]
    assert migrate(db_url) == []  # applied once
    load_dataset(path, "after", url=db_url)
    (n,) = conn.execute("SELECT count(*) FROM raw.points").fetchone()
    assert n == 2


def test_every_schema_file_is_safe_to_run_again(conn: psycopg.Connection, db_url: str) -> None:
    conn.execute("DELETE FROM catalog.schema_migrations")
    assert len(migrate(db_url)) == len(list((Path(__file__).parents[1] / "sql" / "schema")
                                            .glob("*.sql")))
    assert raw_points_indexes(conn) == ["points_t_idx", "points_traj_t_idx"]
