"""kam_rec over whole T-Drive days: which days does the gate publish, and how long does each take?

T-Drive (../shared/data/tdrive_600) is loaded once, as one dataset, into a database of its
own; then one release per UTC day and k runs every step in-process (the functions the
DAG's tasks call), with the composition risk accepted (two k over one day overlap). A
refused release says which item the verifier counted below k. With ``--compare``, each
release is also compared item by item before the gate (tests/differential/generalization.py):
the trajectories whose published cells, as the anonymizer saw them, are not a subsequence
of the verifier's derivation, and the items the anonymizer counts more persons for.

Run: PYTHONPATH=. .venv/bin/python tests/benchmarks/kam_rec_tdrive_days.py \
        [--method kam_rec] [--k 5[,8,...]] [--days 2008-02-03,2008-02-05] [--compare] \
        [--until STEP] [--keep DBNAME] [--out NAME]
``--keep`` reuses (or creates and keeps) the database DBNAME, loaded once.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import psycopg
from _common import server_url, with_database, write_results

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the comparison

# ../shared/data next to the checkout (a git worktree sits one level deeper).
TDRIVE = next((folder / "shared" / "data" / "tdrive_600" / "points.csv.gz"
               for folder in Path(__file__).resolve().parents
               if (folder / "shared" / "data").is_dir()),
              Path("../shared/data/tdrive_600/points.csv.gz"))


def database(name: str) -> str:
    """The URL of database ``name``, created, migrated and loaded with T-Drive if new."""
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


def compared(url: str, work: str, build: str) -> dict[str, Any]:
    """The item-by-item comparison of a built release (before the gate)."""
    from differential.generalization import compare_release

    with psycopg.connect(url) as conn:
        comparison = compare_release(conn, work, build)
    over = comparison.overcounted()
    return {"items": len(comparison.items), "not_contained": len(comparison.not_contained()),
            "overcounted": len(over),
            "overcounted_items": [(item.kind, item.anonymizer, item.verifier) for item in over]}


def release_day(url: str, method: str, day: date, k: int, args: argparse.Namespace
                ) -> dict[str, Any]:
    """One release of ``day`` (UTC): published, or the verifier's refusal."""
    from anonymizers.errors import PrivacyViolation
    from anonymizers.families.registry import SHARED_STEPS_AFTER, method_entry
    from anonymizers.pipeline import steps
    from anonymizers.release.spec import ReleaseSpec

    params = {"dataset": "tdrive", "method": method, "k": k,
              "start": f"{day.isoformat()}T00:00:00+00:00",
              "end": f"{(day + timedelta(days=1)).isoformat()}T00:00:00+00:00",
              "accept_composition_risk": "measuring a method on every T-Drive day",
              **dict(item.split("=", 1) for item in args.param)}
    started = time.perf_counter()
    figures: dict[str, Any] = {"method": method, "day": day.isoformat(), "k": k, "steps_s": {}}
    spec = steps.prepare(params, None, f"days-{day.isoformat()}-k{k}-{time.time_ns()}")
    if spec is None:
        raise RuntimeError(f"{params} is already published in this database")
    release = ReleaseSpec.from_dict(spec)
    try:
        for name in [*method_entry(method).steps, *SHARED_STEPS_AFTER]:
            at = time.perf_counter()
            steps.run_step(name, spec)
            figures["steps_s"][name] = round(time.perf_counter() - at, 2)
            if name == "manifest" and args.compare:  # built, not yet checked
                figures["comparison"] = compared(url, release.work_schema, release.build_schema)
            if name == args.until:
                break
        figures["outcome"] = "published" if args.until is None else f"stopped after {args.until}"
    except PrivacyViolation as refusal:
        figures["outcome"] = "refused"
        figures["violations"] = str(refusal)
    # The steps' time only: the comparison is not the release's.
    figures["total_s"] = round(sum(figures["steps_s"].values()), 1)
    figures["wall_s"] = round(time.perf_counter() - started, 1)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--method", default="kam_rec")
    parser.add_argument("--k", default="5", help="comma-separated")
    parser.add_argument("--days", default="2008-02-03,2008-02-05", help="comma-separated")
    parser.add_argument("--compare", action="store_true",
                        help="compare the anonymizer's counts with the verifier's first")
    parser.add_argument("--keep", default=None, help="database to reuse (kept afterwards)")
    parser.add_argument("--until", default=None, help="stop after this step")
    parser.add_argument("--param", action="append", default=[],
                        help="key=value: a release parameter (repeatable)")
    parser.add_argument("--out", default=None, help="results name (tests/benchmarks/results)")
    args = parser.parse_args()
    name = args.keep or f"bench_days_{time.time_ns() % 10**8}"
    started = time.perf_counter()
    url = database(name)
    figures: dict[str, Any] = {"method": args.method, "load_s": round(time.perf_counter()
                                                                       - started, 1), "runs": []}
    try:
        for k in (int(text) for text in args.k.split(",")):
            for text in args.days.split(","):
                run = release_day(url, args.method, date.fromisoformat(text), k, args)
                print(run, flush=True)
                figures["runs"].append(run)
    finally:
        if not args.keep:
            admin = with_database(server_url(), "postgres")
            with psycopg.connect(admin, autocommit=True) as conn:
                conn.execute(psycopg.sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
                    psycopg.sql.Identifier(name)))
    if args.out:
        write_results(args.out, figures)


if __name__ == "__main__":
    main()
