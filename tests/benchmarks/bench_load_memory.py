"""Benchmark: peak memory of a load as the file grows, and its time against a bare COPY.

Target (issue 12, "Scale on one machine" 1): the loader streams, so its peak RSS does not
grow with the file (1M and 5M fixes: about the same; below 1 GB for any file), and on
1M fixes it still takes at most 2x a bare `psql \\copy` of the same CSV.

Each load runs in a child process of its own, in a fresh database; its peak RSS is the
child's ru_maxrss as os.wait4 reports it (Linux: KiB), so nothing of this process (the
generator, earlier loads) is counted. The child also reports the RSS it had after its
imports, before loading, and times the load itself (not the interpreter's start). The
ratio is bench_load.py's: the load against the mean of a bare copy before and after it.

Run: .venv/bin/python tests/benchmarks/bench_load_memory.py [N ...] [--code DIR]
(default N: 1000000 5000000; --code: the checkout whose loader the children import,
e.g. another worktree to measure the loader before a change). Synthetic files are cached
under tests/benchmarks/results/data; a file above the generator's 10M is made of
copies of smaller cities with their ids prefixed (more trajectories and persons too).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from _common import RESULTS, scratch_database, synthetic_csv, write_results
from bench_load import bare_copy

REPO = Path(__file__).resolve().parents[2]
MAX_GENERATED = 10_000_000  # the synthetic generator's limit (synthetic.py)

CHILD = """
import json, resource, sys, time
from anonymizers.loading import load_dataset
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.perf_counter()
result = load_dataset(sys.argv[1], "bench", persons=sys.argv[2], url=sys.argv[3])
seconds = time.perf_counter() - started
print(json.dumps({"loader_s": round(seconds, 3), "rss_after_imports_kib": before,
                  "points_loaded": result.record.n_points,
                  "trajectories": result.record.n_trajectories,
                  "persons": result.record.n_persons}))
"""


def load_in_child(csv: Path, persons: Path, url: str, code: Path) -> dict:
    """Load in a fresh interpreter; its figures, and its peak RSS from the kernel."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(csv), str(persons), url],
                             stdout=subprocess.PIPE, env=env, cwd=code)
    assert child.stdout is not None
    output = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise RuntimeError(f"the loading child failed ({child.returncode})")
    figures = json.loads(output)
    figures["peak_rss_mib"] = round(usage.ru_maxrss / 1024, 1)
    figures["rss_after_imports_mib"] = round(figures.pop("rss_after_imports_kib") / 1024, 1)
    print(f"  {csv.name}: {figures['loader_s']:.2f} s, peak RSS "
          f"{figures['peak_rss_mib']:.0f} MiB", file=sys.stderr, flush=True)
    return figures


def concatenated_city(points: int) -> tuple[Path, Path]:
    """A city of ``points`` fixes made of generated ones, ids prefixed per copy."""
    folder = RESULTS / "data"
    csv, persons = folder / f"city_{points}_cat.csv", folder / f"city_{points}_cat_persons.csv"
    if csv.exists():
        return csv, persons
    parts: list[tuple[str, Path, Path]] = []
    left, seed = points, 1
    while left > 0:
        size = min(left, MAX_GENERATED)
        parts.append((f"c{seed}_", *synthetic_csv(size, seed)))
        left, seed = left - size, seed + 1
    for target, column in ((csv, 0), (persons, 1)):
        sources = [(prefix, (points_file, persons_file)[column])
                   for prefix, points_file, persons_file in parts]
        with target.open("w") as out:
            out.write(sources[0][1].open().readline())  # the header
            for prefix, source_path in sources:
                with source_path.open() as source:
                    source.readline()
                    for line in source:  # prefix traj_id and user_id (points), user_id
                        out.write(prefix + (line.replace(",", "," + prefix, 1)
                                            if column == 0 else line))
    return csv, persons


def city(points: int) -> tuple[Path, Path]:
    return synthetic_csv(points) if points <= MAX_GENERATED else concatenated_city(points)


def measure(points: int, code: Path, with_ratio: bool) -> dict:
    csv, persons = city(points)
    figures: dict = {"points": points, "csv_bytes": csv.stat().st_size,
                     "load_average_before": os.getloadavg()}
    with scratch_database() as url:
        if with_ratio:
            bare_copy(url, csv, figures, "bare_copy_before_s")
        figures |= load_in_child(csv, persons, url, code)
        if with_ratio:
            bare_copy(url, csv, figures, "bare_copy_after_s")
            baseline = (figures["bare_copy_before_s"] + figures["bare_copy_after_s"]) / 2
            figures["ratio_loader_to_bare_copy"] = round(figures["loader_s"] / baseline, 2)
    figures["load_average_after"] = os.getloadavg()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("points", nargs="*", type=int, default=[1_000_000, 5_000_000])
    parser.add_argument("--code", type=Path, default=REPO)
    parser.add_argument("--name", default="load_memory", help="results/<name>.json")
    args = parser.parse_args()
    runs = [measure(points, args.code.resolve(), points == min(args.points))
            for points in args.points]
    write_results(args.name, {"code": str(args.code.resolve()), "runs": runs,
                              "peak_rss_mib": {run["points"]: run["peak_rss_mib"]
                                               for run in runs}})


if __name__ == "__main__":
    main()
