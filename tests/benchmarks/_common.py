"""Shared by the benchmarks: a scratch database, a synthetic CSV, peak memory, results file."""

from __future__ import annotations

import json
import os
import resource
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

RESULTS = Path(__file__).resolve().parent / "results"


def server_url() -> str:
    from anonymizers.db.cluster import EmbeddedCluster

    return os.environ.get("DATABASE_URL") or EmbeddedCluster.default().up()


def with_database(url: str, dbname: str) -> str:
    return make_conninfo(**{**conninfo_to_dict(url), "dbname": dbname})


@contextmanager
def scratch_database() -> Iterator[str]:
    """A migrated database that is dropped afterwards."""
    from anonymizers.db.migrate import migrate

    admin = with_database(server_url(), "postgres")
    name = f"bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    url = with_database(admin, name)
    migrate(url)
    os.environ["DATABASE_URL"] = url
    try:
        yield url
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def synthetic_csv(points: int, seed: int = 1) -> tuple[Path, Path]:
    """A cached synthetic city of about ``points`` fixes."""
    from anonymizers.synthetic import CityConfig, write_city

    folder = RESULTS / "data"
    folder.mkdir(parents=True, exist_ok=True)
    csv = folder / f"city_{points}_{seed}.csv"
    persons = folder / f"city_{points}_{seed}_persons.csv"
    if not csv.exists():
        write_city(CityConfig(seed=seed, target_points=points), csv, persons)
    return csv, persons


def peak_rss_mib() -> float:
    """Peak resident memory of this process (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@contextmanager
def timed(figures: dict, key: str) -> Iterator[None]:
    started = time.perf_counter()
    yield
    figures[key] = round(time.perf_counter() - started, 3)
    print(f"  {key}: {figures[key]:.2f} s", file=sys.stderr, flush=True)


def write_results(name: str, figures: dict) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(figures, indent=2, default=str))
    print(json.dumps(figures, indent=2, default=str))
    return path


def print_markdown_table(columns: tuple[str, ...], rows: list[tuple]) -> None:
    """``rows`` under ``columns`` as a Markdown table on stdout."""
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for row in rows:
        print("| " + " | ".join(map(str, row)) + " |")
