"""Benchmark: peak memory of a load as the file grows, and its time against a bare COPY.

Target (issue 12, "Scale on one machine" 1): the loader streams, so its peak RSS does not
grow with the file (1M and 5M fixes: about the same; below 1 GB for any file), and on
1M fixes it still takes at most 2x a bare `psql \\copy` of the same CSV.

Each load runs in a child process of its own, in a fresh database; its peak RSS is the
child's ru_maxrss as os.wait4 reports it (Linux: KiB), so nothing of this process (the
generator, earlier loads) is counted. The child also reports the RSS it had after its
imports, before loading, and times the load itself (not the interpreter's start). The
ratio is bench_load.py's: the load against the mean of a bare copy before and after it.

Run: .venv/bin/python tests/benchmarks/bench_load_memory.py [N ...] [--files city|tracks]
[--sort] [--code DIR] [--name NAME] (default N: 1000000 5000000; --files tracks: 182 persons whose
ids do not grow with the file; --code: the checkout whose loader the children import,
e.g. an export of an older commit, to measure the loader before a change). Synthetic
files are cached under tests/benchmarks/results/data; a city above the generator's 10M is
made of copies of smaller cities with their ids prefixed (more trajectories and persons).
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
result = load_dataset(sys.argv[1], "bench", persons=sys.argv[2], url=sys.argv[3],
                      sort=sys.argv[4] == "sort")
seconds = time.perf_counter() - started
print(json.dumps({"loader_s": round(seconds, 3), "rss_after_imports_kib": before,
                  "points_loaded": result.record.n_points,
                  "trajectories": result.record.n_trajectories,
                  "persons": result.record.n_persons}))
"""


def load_in_child(csv: Path, persons: Path, url: str, code: Path, sort: bool = False) -> dict:
    """Load in a fresh interpreter; its figures, and its peak RSS from the kernel."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(csv), str(persons), url,
                              "sort" if sort else "as-is"],
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


def long_tracks(points: int, persons: int = 182, per_person: int = 4) -> tuple[Path, Path]:
    """A GPS archive of few persons and long trajectories (the issue's: 24.7M fixes of 182
    persons): ``persons`` x ``per_person`` trajectories of a fix a second, random walks
    around Beijing. The number of ids does not grow with the file."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv

    folder = RESULTS / "data"
    folder.mkdir(parents=True, exist_ok=True)
    csv, persons_csv = folder / f"tracks_{points}.csv", folder / f"tracks_{points}_persons.csv"
    if csv.exists():
        return csv, persons_csv
    persons_csv.write_text("user_id\n" + "".join(f"u{p:03d}\n" for p in range(persons)))
    tracks = persons * per_person
    lengths = np.full(tracks, points // tracks) + (np.arange(tracks) < points % tracks)
    random = np.random.default_rng(0)
    start = np.datetime64("2024-01-01T00:00:00", "s")
    with pacsv.CSVWriter(csv, pa.schema([("traj_id", pa.string()), ("user_id", pa.string()),
                                         ("t", pa.string()), ("lon", pa.float64()),
                                         ("lat", pa.float64())]),
                         write_options=pacsv.WriteOptions(quoting_style="none")) as out:
        for track, length in enumerate(lengths.tolist()):
            for first in range(0, length, 1 << 20):
                n = min(1 << 20, length - first)
                seconds = start + np.timedelta64(track * 86_400 // per_person + first, "s")
                times = pa.array(seconds + np.arange(n).astype("timedelta64[s]"))
                steps = random.normal(0, 1e-5, (n, 2)).cumsum(axis=0)
                out.write_table(pa.table({
                    "traj_id": pa.array([f"u{track // per_person:03d}_{track}"] * n),
                    "user_id": pa.array([f"u{track // per_person:03d}"] * n),
                    "t": pc.strftime(times, "%Y-%m-%dT%H:%M:%SZ"),
                    "lon": 116.4 + (track % 7) / 100 + steps[:, 0],
                    "lat": 39.9 + (track % 5) / 100 + steps[:, 1]}))
    return csv, persons_csv


def city(points: int, kind: str = "city") -> tuple[Path, Path]:
    if kind == "tracks":
        return long_tracks(points)
    return synthetic_csv(points) if points <= MAX_GENERATED else concatenated_city(points)


def measure(points: int, code: Path, with_ratio: bool, kind: str, sort: bool) -> dict:
    csv, persons = city(points, kind)
    figures: dict = {"points": points, "file": csv.name, "sort": sort,
                     "csv_bytes": csv.stat().st_size,
                     "load_average_before": os.getloadavg()}
    with scratch_database() as url:
        if with_ratio:
            bare_copy(url, csv, figures, "bare_copy_before_s")
        figures |= load_in_child(csv, persons, url, code, sort)
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
    parser.add_argument("--files", choices=["city", "tracks"], default="city",
                        help="synthetic cities (ids grow with the file: 76k trajectories "
                        "and 32k persons per 1M fixes), or long tracks of 182 persons")
    parser.add_argument("--sort", action="store_true", help="load with --sort")
    args = parser.parse_args()
    runs = [measure(points, args.code.resolve(), points == min(args.points), args.files,
                    args.sort) for points in args.points]
    write_results(args.name, {"code": str(args.code.resolve()), "runs": runs,
                              "peak_rss_mib": {run["points"]: run["peak_rss_mib"]
                                               for run in runs}})


if __name__ == "__main__":
    main()
