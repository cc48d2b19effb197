"""The catalog is a side door (DESIGN, privacy rules 5 and 6): what an analyst reads there.

pg_class, pg_constraint, pg_index, pg_namespace, pg_description, ... are readable by every
role, and pg_get_expr / pg_get_constraintdef / pg_get_indexdef print what they hold
without checking any privilege on the table. The attack of issue 7, finding 3: the bounds
of the leaves of a dataset's partition were raw traj_id values ('381_0001', which names
person 381). These tests load a dataset cut into leaves as a large one is, connect as
analyst, read every such text of the catalog and look for every raw traj_id and user_id
(and raw timestamp and coordinate) of the dataset.
"""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from anonymizers.loading import leaves as leaves_module
from anonymizers.loading import load_dataset

# Every text of the world-readable catalogs that could carry a value of the data: names,
# partition bounds, constraint, index, default and view definitions, comments, function
# bodies, statistics (pg_stats and pg_stats_ext show only the columns one may read: the
# owner's positive control below shows they would hold the ids otherwise).
CATALOG_TEXTS = """
SELECT 'pg_class' AS source, relname || ' ' || coalesce(pg_get_expr(relpartbound, oid), '')
       || ' ' || coalesce(array_to_string(reloptions, ','), '') AS text FROM pg_class
UNION ALL SELECT 'pg_partitioned_table', pg_get_partkeydef(partrelid) FROM pg_partitioned_table
UNION ALL SELECT 'pg_constraint', conname || ' ' || coalesce(pg_get_constraintdef(oid), '')
          FROM pg_constraint
UNION ALL SELECT 'pg_namespace', nspname FROM pg_namespace
UNION ALL SELECT 'pg_stats', s::text FROM pg_stats AS s
UNION ALL SELECT 'pg_stats_ext', s::text FROM pg_stats_ext AS s
UNION ALL SELECT 'pg_statistic_ext', stxname FROM pg_statistic_ext
UNION ALL SELECT 'pg_index', pg_get_indexdef(indexrelid) || ' '
          || coalesce(pg_get_expr(indpred, indrelid), '') FROM pg_index
UNION ALL SELECT 'pg_description', description FROM pg_description
UNION ALL SELECT 'pg_attribute', attname FROM pg_attribute
UNION ALL SELECT 'pg_attrdef', pg_get_expr(adbin, adrelid) FROM pg_attrdef
UNION ALL SELECT 'pg_sequences', s::text FROM pg_sequences AS s
UNION ALL SELECT 'pg_trigger', tgname FROM pg_trigger
UNION ALL SELECT 'pg_type', typname FROM pg_type
UNION ALL SELECT 'pg_views', v::text FROM pg_views AS v
UNION ALL SELECT 'pg_proc', proname || ' ' || coalesce(prosrc, '') FROM pg_proc
UNION ALL SELECT 'pg_stat_all_tables', relname FROM pg_stat_all_tables
UNION ALL SELECT 'pg_stat_all_indexes', indexrelname FROM pg_stat_all_indexes
"""

FIND = f"""
SELECT texts.source, secret, left(texts.text, 160)
FROM ({CATALOG_TEXTS}) AS texts
JOIN unnest(%s::text[]) AS secret ON strpos(texts.text, secret) > 0
ORDER BY 1, 2
"""


def persons_and_trips() -> list[tuple[str, str]]:
    """(traj_id, user_id): T-Drive's naming (person 381's first trip is '381_0001'), with
    ids no catalog text holds by chance (a bare '381' is in any list of numbers)."""
    return [(f"q7p{person}_{trip:04d}", f"q7p{person}")
            for person in (381, 502, 617, 733) for trip in (1, 2)]


def write_points(path: Path) -> Path:
    lines = ["traj_id,user_id,t,lon,lat"]
    for number, (traj, user) in enumerate(persons_and_trips()):
        lines += [f"{traj},{user},2031-05-17T07:{number:02d}:{second:02d}Z,"
                  f"11.23456{number}{second:02d},43.76543{number}{second:02d}"
                  for second in (11, 23, 37)]
    path.write_text("\n".join(lines) + "\n")
    return path


def secrets() -> list[str]:
    """What must not be in the catalog: the raw ids, and the day of every raw fix and its
    coordinates as PostgreSQL prints them."""
    ids = sorted({value for pair in persons_and_trips() for value in pair})
    return [*ids, "2031-05-17", "11.23456", "43.76543"]


def leaks(url: str) -> list[tuple[str, str, str]]:
    with psycopg.connect(url) as conn:
        return [tuple(row) for row in conn.execute(FIND, (secrets(),)).fetchall()]


@pytest.fixture(params=["one leaf", "three leaves"])
def loaded(request: pytest.FixtureRequest, db_url: str, tmp_path: Path,
           monkeypatch: pytest.MonkeyPatch) -> int:
    """The dataset loaded, in one leaf (a small file) or three (cut as a large file is)."""
    if request.param == "three leaves":
        monkeypatch.setattr(leaves_module, "MIN_LEAF_ROWS", 2)
        monkeypatch.setattr(leaves_module, "MAX_LEAVES", 3)
    result = load_dataset(write_points(tmp_path / "points.csv"), "taxis", url=db_url)
    with psycopg.connect(db_url) as conn:
        (leaves,) = conn.execute("SELECT count(*) FROM pg_partition_tree(%s) WHERE isleaf",
                                 (f"raw.points_{result.dataset_id}",)).fetchone()
    assert leaves == (3 if request.param == "three leaves" else 1)
    return result.dataset_id


def test_the_analyst_finds_no_raw_id_time_or_position_in_the_catalog(
        loaded: int, analyst_url: str) -> None:
    assert leaks(analyst_url) == []


def test_the_scan_finds_what_the_owner_may_read(loaded: int, db_url: str) -> None:
    """Positive control: the owner reads raw.points, so pg_stats shows it its raw ids."""
    found = {(source, secret) for source, secret, _ in leaks(db_url)}
    assert ("pg_stats", "q7p381_0001") in found
    assert ("pg_stats", "q7p381") in found
    assert {source for source, _ in found} == {"pg_stats"}
