"""Schema migrations: a database of the previous contract is brought to the current one."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from anonymizers.db.migrate import migrate
from anonymizers.errors import DatabaseSetupError
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


def leaves_and_bounds(conn: psycopg.Connection, dataset_id: int) -> list[tuple[str, str]]:
    return conn.execute(
        "SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) FROM pg_inherits AS i "
        "JOIN pg_class AS c ON c.oid = i.inhrelid WHERE i.inhparent = %s::regclass "
        "ORDER BY 1", (f"raw.points_{dataset_id}",)).fetchall()


def to_leaves_by_traj_id(conn: psycopg.Connection, dataset_id: int, cut: str) -> None:
    """The contract before 013: raw.points has no traj_key, and a dataset's leaves are cut
    by traj_id range in byte order, with CHECKs on the same bounds (as the loader made them)."""
    part = f"raw.points_{dataset_id}"
    rows = conn.execute(f"SELECT dataset_id, traj_id, user_id, t, lon, lat FROM {part} "
                        "ORDER BY traj_id, t").fetchall()
    conn.execute(f"ALTER TABLE raw.points DETACH PARTITION {part}")
    conn.execute(f"DROP TABLE {part}")
    conn.execute("ALTER TABLE raw.points DROP COLUMN traj_key")
    conn.execute(f"CREATE TABLE {part} PARTITION OF raw.points FOR VALUES IN ({dataset_id}) "
                 'PARTITION BY RANGE (traj_id COLLATE "C")')
    for number, (lower, upper) in enumerate([("''", f"'{cut}'"), (f"'{cut}'", "MAXVALUE")]):
        conn.execute(f"CREATE TABLE {part}_{number} PARTITION OF {part} "
                     f"FOR VALUES FROM ({lower}) TO ({upper})")
        conn.execute(f'ALTER TABLE {part}_{number} ADD CONSTRAINT in_traj_range CHECK '
                     f'(traj_id COLLATE "C" >= {lower}'
                     + (f' AND traj_id COLLATE "C" < {upper})' if upper != "MAXVALUE" else ")"))
    with conn.cursor().copy(f"COPY {part} (dataset_id, traj_id, user_id, t, lon, lat) "
                             "FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)
    conn.execute("UPDATE raw.datasets SET load_report = load_report - 'persons_known'")
    conn.execute("DELETE FROM catalog.schema_migrations "
                 "WHERE version = '013_surrogate_partition_keys'")


def test_leaves_cut_by_traj_id_are_converted_to_surrogate_keys(
        conn: psycopg.Connection, db_url: str, tmp_path: Path) -> None:
    path = tmp_path / "points.csv"
    path.write_text("traj_id,user_id,t,lon,lat\n" + "".join(
        f"{traj},{traj[:4]},2020-01-01T08:0{m}:00Z,11.2{m},43.7{m}\n"
        for traj in ("p381_0002", "p381_0001", "p502_0001") for m in range(2)))
    dataset_id = load_dataset(path, "taxis", url=db_url).dataset_id
    before = conn.execute("SELECT traj_id, user_id, t, lon, lat, geom FROM raw.points "
                          "ORDER BY 1, 3").fetchall()
    to_leaves_by_traj_id(conn, dataset_id, "p381_0002")
    assert leaves_and_bounds(conn, dataset_id)[1] == (
        f"points_{dataset_id}_1", "FOR VALUES FROM ('p381_0002') TO (MAXVALUE)")

    assert migrate(db_url) == ["013_surrogate_partition_keys"]
    assert leaves_and_bounds(conn, dataset_id) == [
        (f"points_{dataset_id}_0", "FOR VALUES FROM ('0') TO ('4294967296')")]
    after = conn.execute("SELECT traj_id, user_id, t, lon, lat, geom FROM raw.points "
                         "ORDER BY 1, 3").fetchall()
    assert after == before
    keys = conn.execute("SELECT DISTINCT traj_key, traj_id FROM raw.points ORDER BY 1").fetchall()
    assert keys == [(0, "p381_0001"), (1, "p381_0002"), (2, "p502_0001")]
    # The loader's index names, the parent's indexes adopted, no raw id in a constraint.
    indexes = conn.execute("SELECT indexname FROM pg_indexes WHERE schemaname = 'raw' "
                           "AND tablename ~ '^points_[0-9]' ORDER BY 1").fetchall()
    assert [name for (name,) in indexes] == [
        f"points_{dataset_id}_0_t_idx", f"points_{dataset_id}_0_traj_id_t_idx",
        f"points_{dataset_id}_t_idx", f"points_{dataset_id}_traj_id_t_idx"]
    definitions = conn.execute("SELECT pg_get_constraintdef(oid) FROM pg_constraint "
                               "WHERE connamespace = 'raw'::regnamespace").fetchall()
    assert not [text for (text,) in definitions if "p381" in text or "p502" in text]
    (report,) = conn.execute("SELECT load_report FROM raw.datasets").fetchone()
    assert report["persons_known"] is True

    assert migrate(db_url) == []  # applied once; and safe to run again:
    conn.execute("DELETE FROM catalog.schema_migrations "
                 "WHERE version = '013_surrogate_partition_keys'")
    assert migrate(db_url) == ["013_surrogate_partition_keys"]
    assert leaves_and_bounds(conn, dataset_id) == [
        (f"points_{dataset_id}_0", "FOR VALUES FROM ('0') TO ('4294967296')")]
    # The loader works on the converted database, a --replace of the converted dataset too.
    load_dataset(path, "other", url=db_url)
    replaced = load_dataset(path, "taxis", url=db_url, replace=True).dataset_id
    counts = conn.execute("SELECT d.name, count(*) FROM raw.points AS p JOIN raw.datasets "
                          "AS d USING (dataset_id) GROUP BY 1 ORDER BY 1").fetchall()
    assert counts == [("other", 6), ("taxis", 6)]
    assert f"points_{dataset_id}" not in {name for (name,) in conn.execute(
        "SELECT relname FROM pg_class WHERE relnamespace = 'raw'::regnamespace").fetchall()}
    assert replaced != dataset_id


def test_an_edited_applied_migration_is_refused_and_changes_nothing(
        conn: psycopg.Connection, db_url: str) -> None:
    conn.execute("UPDATE catalog.schema_migrations SET sha256 = repeat('0', 64) "
                 "WHERE version = '020_catalog'")
    before = conn.execute("SELECT version, sha256, applied_at FROM catalog.schema_migrations "
                          "ORDER BY version").fetchall()
    with pytest.raises(DatabaseSetupError, match=r"sql/schema/020_catalog\.sql changed"):
        migrate(db_url)
    assert conn.execute("SELECT version, sha256, applied_at FROM catalog.schema_migrations "
                        "ORDER BY version").fetchall() == before
