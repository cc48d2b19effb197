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


def test_persons_of_the_previous_contract_move_into_a_partition_per_dataset(
        conn: psycopg.Connection, db_url: str, tmp_path: Path) -> None:
    path, persons = tmp_path / "points.csv", tmp_path / "persons.csv"
    path.write_text(POINTS)
    persons.write_text("user_id,age,hobby\nu1,30,chess\n")
    one = load_dataset(path, "one", persons=persons, url=db_url).dataset_id
    two = load_dataset(path, "two", persons=persons, url=db_url).dataset_id
    # The previous contract: one plain raw.persons, holding both datasets' persons.
    conn.execute("CREATE TABLE raw.persons_plain (dataset_id integer NOT NULL REFERENCES "
                 "raw.datasets ON DELETE CASCADE, user_id text NOT NULL, age integer, "
                 "sex text, education text, income double precision, attributes jsonb "
                 "NOT NULL DEFAULT '{}'::jsonb, PRIMARY KEY (dataset_id, user_id))")
    conn.execute("INSERT INTO raw.persons_plain SELECT * FROM raw.persons")
    conn.execute("DROP TABLE raw.persons")
    conn.execute("ALTER TABLE raw.persons_plain RENAME TO persons")
    conn.execute("ALTER INDEX raw.persons_plain_pkey RENAME TO persons_pkey")
    conn.execute("DELETE FROM catalog.schema_migrations "
                 "WHERE version = '012_raw_persons_by_dataset'")
    assert migrate(db_url) == ["012_raw_persons_by_dataset"]
    partitions = conn.execute(
        "SELECT c.relname, count(p.*) FROM pg_inherits AS i JOIN pg_class AS c "
        "ON c.oid = i.inhrelid LEFT JOIN raw.persons AS p ON p.tableoid = c.oid "
        "WHERE i.inhparent = 'raw.persons'::regclass GROUP BY 1 ORDER BY 1").fetchall()
    assert partitions == [(f"persons_{one}", 1), (f"persons_{two}", 1)]
    assert migrate(db_url) == []
    three = load_dataset(path, "one", persons=persons, url=db_url, replace=True).dataset_id
    rows = conn.execute("SELECT dataset_id, user_id, age, attributes FROM raw.persons "
                        "ORDER BY 1").fetchall()
    assert rows == [(two, "u1", 30, {"hobby": "chess"}), (three, "u1", 30, {"hobby": "chess"})]
    conn.execute("DELETE FROM raw.datasets WHERE dataset_id = %s", (two,))  # cascades
    assert conn.execute("SELECT count(*) FROM raw.persons").fetchone() == (1,)
