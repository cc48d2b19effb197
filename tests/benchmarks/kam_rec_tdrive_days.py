"""kam_rec over whole T-Drive days: which days does the gate publish, and how long does each take?

T-Drive (../shared/data/tdrive_600) is loaded once, as one dataset, into a database of its
own; then one kam_rec release per UTC day runs every step in-process (the functions the
DAG's tasks call), with the composition risk accepted (the days are adjacent, but a second
k over the same day overlaps). A refused release says which item the verifier counted
below k.

Run: PYTHONPATH=. .venv/bin/python tests/benchmarks/kam_rec_tdrive_days.py \
        [--k 5] [--days 2008-02-03,2008-02-05] [--keep DBNAME]
``--keep`` reuses (or creates and keeps) the database DBNAME, loaded once.
"""

from __future__ import annotations

import argparse
import time
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import psycopg
from _common import server_url, with_database, write_results

# ../shared/data next to the checkout (a git worktree sits one level deeper).
TDRIVE = next((folder / "shared" / "data" / "tdrive_600" / "points.csv.gz"
               for folder in Path(__file__).resolve().parents
               if (folder / "shared" / "data").is_dir()),
              Path("../shared/data/tdrive_600/points.csv.gz"))


def database(name: str) -> str:
    """The URL of database ``name``, created, migrated and loaded with T-Drive if new."""
    import os

    from anonymizers.db.migrate import migrate
    from anonymizers.loading import load_dataset

    admin = with_database(server_url(), "postgres")
    url = with_database(admin, name)
    os.environ["DATABASE_URL"] = url
    with psycopg.connect(admin, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if not exists:
            conn.execute(psycopg.sql.SQL("CREATE DATABASE {}").format(psycopg.sql.Identifier(name)))
    migrate(url)
    with psycopg.connect(url) as conn:
        loaded = conn.execute("SELECT 1 FROM raw.datasets WHERE name = 'tdrive'").fetchone()
    if not loaded:
        load_dataset(TDRIVE, "tdrive", url=url)
    return url


def release_day(day: date, k: int, until: str | None = None,
                extra: dict[str, str] | None = None) -> dict[str, Any]:
    """One kam_rec release of ``day`` (UTC): published, or the verifier's refusal."""
    from anonymizers.errors import PrivacyViolation
    from anonymizers.families.registry import SHARED_STEPS_AFTER, method_entry
    from anonymizers.pipeline import steps
    from anonymizers.release.spec import ReleaseSpec

    params = {"dataset": "tdrive", "method": "kam_rec", "k": k,
              "start": f"{day.isoformat()}T00:00:00+00:00",
              "end": f"{(day + timedelta(days=1)).isoformat()}T00:00:00+00:00",
              "accept_composition_risk": "measuring kam_rec on every T-Drive day",
              **(extra or {})}
    run_id = f"days-{day.isoformat()}-k{k}-{time.time_ns()}"
    started = time.perf_counter()
    figures: dict[str, Any] = {"day": day.isoformat(), "k": k, "steps_s": {}}
    spec = steps.prepare(params, None, run_id)
    assert spec is not None
    release = ReleaseSpec.from_dict(spec)
    figures["work_schema"], figures["build_schema"] = release.work_schema, release.build_schema
    try:
        for name in [*method_entry("kam_rec").steps, *SHARED_STEPS_AFTER]:
            at = time.perf_counter()
            steps.run_step(name, spec)
            figures["steps_s"][name] = round(time.perf_counter() - at, 2)
            if name == until:
                break
        figures["outcome"] = "published" if until is None else f"stopped after {until}"
    except PrivacyViolation as refusal:
        figures["outcome"] = "refused"
        figures["violations"] = str(refusal)
    figures["total_s"] = round(time.perf_counter() - started, 1)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--days", default="2008-02-03,2008-02-05")
    parser.add_argument("--keep", default=None, help="database to reuse (kept afterwards)")
    parser.add_argument("--until", default=None, help="stop after this step")
    parser.add_argument("--param", action="append", default=[],
                        help="key=value: a release parameter (repeatable)")
    parser.add_argument("--out", default=None, help="results name (tests/benchmarks/results)")
    args = parser.parse_args()
    name = args.keep or f"bench_days_{time.time_ns() % 10**8}"
    database(name)
    runs = []
    try:
        for text in args.days.split(","):
            run = release_day(date.fromisoformat(text), args.k, args.until,
                              dict(item.split("=", 1) for item in args.param))
            print(run, flush=True)
            runs.append(run)
    finally:
        if not args.keep:
            admin = with_database(server_url(), "postgres")
            with psycopg.connect(admin, autocommit=True) as conn:
                conn.execute(psycopg.sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
                    psycopg.sql.Identifier(name)))
    if args.out:
        write_results(args.out, {"k": args.k, "runs": runs})


if __name__ == "__main__":
    main()
