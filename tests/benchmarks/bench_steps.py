"""Benchmark: one release's shared steps (metrics, verify) alone, each in a fresh process.

The whole-release benchmark (bench_scale.py) takes most of an hour at 25M fixes; the steps
this project's own Python runs after the manifest (the family's measures, the attack suite,
the independent verifier) are where its memory peaks. This loads a cached synthetic city
into a database kept between runs (``bench_steps_<method>_<points>``), builds the release
up to its manifest once (printing each step's time and the peak RSS so far), and then
times each asked step in a child process of its own (peak RSS from os.wait4, so only that
step counts). The steps are idempotent, so running
them again on the same prepared release compares code versions on the same data. The
verifier reads the metrics the metrics step wrote: run ``metrics`` before ``verify`` once.

Writes tests/benchmarks/results/steps_<method>_<points>.json (appending one run per call,
with the code's git commit) and prints the figures.

Run: .venv/bin/python tests/benchmarks/bench_steps.py [--method grid_kam_cut]
     [--points 25000000] [--steps metrics verify] [--fresh]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import psycopg
from _common import RESULTS, server_url, synthetic_csv, with_database

# Each step's time and the process's peak RSS after it go to stderr, so a preparation is
# also a profile of the release up to its manifest.
PREPARE = """
import json, resource, sys, time
from anonymizers.families.registry import method_entry
from anonymizers.loading import load_dataset
from anonymizers.pipeline import steps
csv, persons, method = sys.argv[1], sys.argv[2], sys.argv[3]
started = time.perf_counter()
load_dataset(csv, "scale", persons=persons)
print(f"  load: {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)
spec = steps.prepare({"dataset": "scale", "method": method, "k": 5}, None, "bench-steps")
for name in [*method_entry(method).steps, "manifest"]:
    started = time.perf_counter()
    steps.run_step(name, spec)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"  {name}: {time.perf_counter() - started:.1f} s, peak RSS so far {peak:.0f} MiB",
          file=sys.stderr, flush=True)
print(json.dumps(spec, default=str))
"""

STEP = """
import json, sys, time
from anonymizers.pipeline import steps
started = time.perf_counter()
steps.run_step(sys.argv[1], json.loads(sys.argv[2]))
print(round(time.perf_counter() - started, 1))
"""


def database(method: str, points: int, fresh: bool) -> tuple[str, bool]:
    """URL of the kept database, and whether it must be prepared."""
    from anonymizers.db.migrate import migrate

    name = f"bench_steps_{method}_{points}"
    admin = with_database(server_url(), "postgres")
    with psycopg.connect(admin, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s",
                              (name,)).fetchone() is not None
        if exists and fresh:
            conn.execute(f"DROP DATABASE {name} WITH (FORCE)")
        if fresh or not exists:
            conn.execute(f"CREATE DATABASE {name}")
    url = with_database(admin, name)
    if fresh or not exists:
        migrate(url)
    return url, fresh or not exists


def child(code: str, args: list[str], url: str) -> tuple[str, float]:
    """Last stdout line and peak RSS (MiB) of ``code`` run in a fresh interpreter."""
    process = subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE,
                               env={**os.environ, "DATABASE_URL": url})
    out = process.stdout.read().decode() if process.stdout else ""
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"child failed: {args[:1]}")
    return out.strip().splitlines()[-1], round(usage.ru_maxrss / 1024, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--method", default="grid_kam_cut")
    parser.add_argument("--points", type=int, default=25_000_000)
    parser.add_argument("--steps", nargs="+", default=["metrics", "verify"])
    parser.add_argument("--fresh", action="store_true", help="load and prepare again")
    args = parser.parse_args()
    url, prepare = database(args.method, args.points, args.fresh)
    results = RESULTS / f"steps_{args.method}_{args.points}.json"
    saved = json.loads(results.read_text()) if results.exists() and not prepare else {}
    if prepare:
        csv, persons = synthetic_csv(args.points)
        started = time.perf_counter()
        line, peak = child(PREPARE, [str(csv), str(persons), args.method], url)
        saved = {"spec": json.loads(line), "runs": [],
                 "prepare": {"s": round(time.perf_counter() - started, 1), "peak_rss_mib": peak}}
        RESULTS.mkdir(parents=True, exist_ok=True)
        results.write_text(json.dumps(saved, indent=2, default=str))  # a failed step keeps it
    elif "spec" not in saved:
        raise SystemExit(f"{results} is missing: run again with --fresh")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=Path(__file__).parent).stdout.strip()
    run: dict = {"commit": commit, "load_average_before": os.getloadavg(), "steps": {}}
    for step in args.steps:
        seconds, peak = child(STEP, [step, json.dumps(saved["spec"])], url)
        run["steps"][step] = {"s": float(seconds), "peak_rss_mib": peak}
        print(f"  {step}: {seconds} s, peak RSS {peak:.0f} MiB", file=sys.stderr, flush=True)
    run["load_average_after"] = os.getloadavg()
    saved["runs"].append(run)
    results.write_text(json.dumps(saved, indent=2, default=str))
    print(json.dumps(run, indent=2))


if __name__ == "__main__":
    main()
