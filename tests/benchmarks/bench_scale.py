"""Benchmark: how one release grows with the data, 1M -> 5M -> 25M fixes (issue 12).

Target ("Scale on one machine" 2): kam_rec over a whole synthetic city of 25 million fixes
in at most 10 minutes, with at most 2 GB peak RSS in any Python process; the same table for
grid_kam_cut and the heaviest method of each other family (``--method``).

For each size: the synthetic city (cached under tests/benchmarks/results/data; the
generator streams it) is loaded into a fresh database, then the release runs in a child
process of its own, step by step as the DAG's tasks call them (_release_runs.run_release:
every step timed). The child's peak RSS is its VmHWM or a forked worker's ru_maxrss,
whichever is larger (os.wait4's ru_maxrss of the child would start at this process's RSS,
the loader's); after each step the child records its peak so far, which tells the step
that set it. PostgreSQL's own memory is bounded by its settings
(the embedded cluster's are in the README), not measured here.

Writes tests/benchmarks/results/scale_<method>.json (every figure, the machine's load
before and after each release) and tests/benchmarks/figures/scale_<method>.png (time and
peak RSS against fixes, log-log, with a line of slope 1 through the smallest size), and
prints the growth table in Markdown.

A release whose resident memory (with that of the processes it forked) passes
--max-rss-gib (default 8) is killed and recorded with the memory it had reached.

``--task-by-task`` runs every step in a fresh process of its own instead, one after the
other, as Airflow's executors run a DAG run's task instances (only ``dag.test()`` runs
them all in one process): each step's time is taken inside its process (the interpreter's
start and imports are recorded apart, ``process_start_s``), the peak RSS is the largest
step's. Its results and figure are ``scale_<method>_tasks``.

A method's parameters are given as ``--param key=value`` (repeatable), as to ``anonymizers
release``. The MOB methods need quasi-identifiers: ``--qids graph`` generates them after the
load with that strategy of ``anonymizers qids generate`` (``--qid-max-size``, seed 1, the
release's interval), timed apart as ``qids_s``.

Run: .venv/bin/python tests/benchmarks/bench_scale.py [--method kam_rec] [--k 5]
     [--sizes 1000000 5000000 25000000] [--max-rss-gib 8] [--add] [--task-by-task]
     [--param key=value ...] [--qids STRATEGY [--qid-max-size 40]]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from _common import (
    RESULTS,
    print_markdown_table,
    scratch_database,
    synthetic_csv,
    timed,
    write_results,
)

FIGURES = RESULTS.parent / "figures"
TARGET_S, TARGET_RSS_MIB, TARGET_POINTS = 600, 2048, 25_000_000

# The peak so far of a process is VmHWM, the high-water mark of its memory since it was
# exec'd (its ru_maxrss starts at the RSS the benchmark had when it forked it), or that of
# a forked worker of its (RUSAGE_CHILDREN): each is a Python process of the release.
PEAK = """
import resource
def peak_mib():
    own = next(int(line.split()[1]) for line in open("/proc/self/status")
               if line.startswith("VmHWM:"))
    workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return round(max(own, workers) / 1024, 1)
"""

CHILD = PEAK + """
import json, sys
sys.path.insert(0, sys.argv[3])
from _release_runs import run_release
from anonymizers.pipeline import steps

peaks = {}
original = steps.run_step
def run_step(name, spec):
    result = original(name, spec)
    peaks[name] = peak_mib()
    return result
steps.run_step = run_step
figures = run_release(sys.argv[1], json.loads(sys.argv[2]), "bench-scale", tables=())
figures["peak_rss_after_step_mib"] = peaks
figures["peak_rss_mib"] = peak_mib()
print(json.dumps(figures, default=str))
"""


def release_in_child(url: str, params: dict, max_rss_mib: float) -> dict:
    """The release in a fresh interpreter: its step times, metrics and peak RSS. A child
    whose resident memory passes ``max_rss_mib`` is killed (the machine is shared) and the
    run recorded as stopped there."""
    figures, peak, error = _in_child(
        CHILD, [url, json.dumps(params), str(Path(__file__).parent)], url, max_rss_mib)
    if error:
        return {"error": error, "peak_rss_mib": peak}
    return figures


def release_task_by_task(url: str, params: dict, max_rss_mib: float) -> dict:
    """The release with every step in a fresh interpreter of its own, one after the other,
    as Airflow's executors run task instances (``dag.test()`` alone runs them all in one
    process): each step's time (measured inside its process, so without the interpreter's
    start and imports, which are timed apart), its peak RSS (its own or a forked worker's),
    the largest of them, and the release's metrics."""
    from _release_runs import _published

    from anonymizers.families.registry import SHARED_STEPS_AFTER, method_entry

    figures: dict = {"params": params, "steps_s": {}, "peak_rss_after_step_mib": {},
                     "process_start_s": {}}
    spec: dict | None = params
    for name in ["prepare", *method_entry(params["method"]).steps, *SHARED_STEPS_AFTER]:
        started = time.perf_counter()
        found, peak, error = _in_child(STEP_CHILD, [name, json.dumps(spec), "bench-scale"],
                                       url, max_rss_mib)
        if error:
            return {**figures, "error": f"{name}: {error}", "peak_rss_mib": peak}
        figures["peak_rss_after_step_mib"][name] = found["peak_rss_mib"]
        figures["steps_s"][name] = found["s"]
        figures["process_start_s"][name] = round(time.perf_counter() - started - found["s"], 3)
        if name == "prepare":
            spec = found["result"]
            if spec is None:
                return {**figures, "error": "already published in this database",
                        "peak_rss_mib": peak}
    figures["total_s"] = round(sum(figures["steps_s"].values()), 2)
    figures["peak_rss_mib"] = max(figures["peak_rss_after_step_mib"].values())
    assert spec is not None
    figures.update(_published(url, spec, ()))
    return figures


def _in_child(code: str, args: list[str], url: str,
              max_rss_mib: float) -> tuple[dict, float, str | None]:
    """Run ``code`` in a fresh interpreter: the JSON of its last line of output, its
    os.wait4 ru_maxrss (an upper bound of its peak: it starts at this process's RSS) and
    an error, if it failed or was killed for passing ``max_rss_mib``."""
    with tempfile.TemporaryFile() as output:
        child = subprocess.Popen([sys.executable, "-c", code, *args], stdout=output,
                                 env={**os.environ, "DATABASE_URL": url})
        stopped = None
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            if stopped is None and _rss_mib(child.pid) > max_rss_mib:
                stopped = f"stopped: resident memory passed {max_rss_mib:.0f} MiB"
                for pid in _descendants(child.pid):
                    os.kill(pid, 9)
                child.kill()
            time.sleep(0.2)
        child.returncode = os.waitstatus_to_exitcode(status)
        output.seek(0)
        lines = output.read().decode().strip().splitlines()
    peak = round(usage.ru_maxrss / 1024, 1)
    if stopped or child.returncode:
        return {}, peak, stopped or f"the child failed ({child.returncode})"
    return json.loads(lines[-1]), peak, None


STEP_CHILD = PEAK + """
import json, sys, time
from anonymizers.pipeline import steps

name, spec = sys.argv[1], json.loads(sys.argv[2])
started = time.perf_counter()
result = (steps.prepare(spec, None, sys.argv[3]) if name == "prepare"
          else steps.run_step(name, spec))
elapsed = time.perf_counter() - started
print(json.dumps({"s": round(elapsed, 3), "result": result, "peak_rss_mib": peak_mib()},
                 default=str))
"""


def _descendants(pid: int) -> list[int]:
    """The processes ``pid`` forked, and theirs (Linux /proc)."""
    try:
        children = [int(c) for c in
                    Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except (FileNotFoundError, ProcessLookupError):
        return []
    return [found for child in children for found in (child, *_descendants(child))]


def _rss_mib(pid: int) -> float:
    """Current resident memory of ``pid`` and of the processes it forked (a step's forked
    workers, such as the release-time attack, count against the limit too), 0 once gone."""
    total = 0.0
    for process in (pid, *_descendants(pid)):
        try:
            for line in Path(f"/proc/{process}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) / 1024
        except (FileNotFoundError, ProcessLookupError):
            pass
    return total


def measure(points: int, params: dict, max_rss_mib: float, qids: QidSet | None = None,
            task_by_task: bool = False) -> dict:
    from anonymizers.loading import load_dataset

    csv, persons = synthetic_csv(points)
    figures: dict = {"points": points, "method": params["method"], "k": params["k"]}
    with scratch_database() as url:
        with timed(figures, "load_s"):
            result = load_dataset(csv, "scale", persons=persons, url=url)
        figures["trajectories"] = result.record.n_trajectories
        figures["persons"] = result.record.n_persons
        if qids is not None:
            with timed(figures, "qids_s"):
                figures["qids"] = generate_qids(url, qids, params)
        figures["load_average_before"] = os.getloadavg()
        started = time.perf_counter()
        run = release_task_by_task if task_by_task else release_in_child
        figures["release"] = run(url, params, max_rss_mib)
        figures["release_wall_s"] = round(time.perf_counter() - started, 1)
        figures["load_average_after"] = os.getloadavg()
    release = figures["release"]
    print(f"  {points:,} fixes: {release.get('total_s', release.get('error'))} s, peak RSS "
          f"{release['peak_rss_mib']:.0f} MiB", file=sys.stderr, flush=True)
    return figures


@dataclass(frozen=True)
class QidSet:
    """A configuration of ``anonymizers qids generate`` (seed 003 §6.2)."""

    strategy: str
    max_size: int
    seed: int = 1


def generate_qids(url: str, qids: QidSet, params: dict) -> dict:
    """Generate the dataset's QIDs on the release's time grid; what was generated."""
    from anonymizers.families.mob.qids import generate_and_store_qids

    generated = generate_and_store_qids(
        "scale", qids.strategy, qids.max_size, qids.seed,
        int(params.get("interval", 300)), url=url)
    return {"strategy": qids.strategy, "max_size": qids.max_size, "seed": qids.seed,
            "summary": generated.summary()}


def release_params(method: str, k: int, given: list[str]) -> dict:
    """The release's parameters: dataset, method, k and each ``key=value`` given."""
    from anonymizers.cli import param_pairs

    return {"dataset": "scale", "method": method, "k": k, **param_pairs(given)}


def plot(runs: list[dict], method: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points = [run["points"] for run in runs]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for axis, key, label in ((axes[0], "total_s", "release time (s)"),
                             (axes[1], "peak_rss_mib", "peak RSS of the release (MiB)")):
        values = [run["release"][key] for run in runs]
        axis.loglog(points, values, "o-", label=method)
        axis.loglog(points, [values[0] * p / points[0] for p in points], ":", color="grey",
                    label="linear growth")
        target = TARGET_S if key == "total_s" else TARGET_RSS_MIB
        axis.axhline(target, color="red", linewidth=0.8, label="kam_rec's target at 25M")
        axis.set_xlabel("fixes")
        axis.set_ylabel(label)
        axis.legend(fontsize=8)
    fig.suptitle(f"{method}: time and memory against fixes (synthetic city)")
    fig.tight_layout()
    path.parent.mkdir(exist_ok=True)
    fig.savefig(path, dpi=100)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--method", default="kam_rec")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--sizes", type=int, nargs="+",
                        default=[1_000_000, 5_000_000, TARGET_POINTS])
    parser.add_argument("--max-rss-gib", type=float, default=8.0,
                        help="kill a release whose resident memory passes this")
    parser.add_argument("--add", action="store_true",
                        help="keep the runs of other sizes already in the results file")
    parser.add_argument("--task-by-task", action="store_true",
                        help="every step in a process of its own, as Airflow's executors "
                             "run tasks (results and figure named scale_<method>_tasks)")
    parser.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                        help="a parameter of the method, as to anonymizers release")
    parser.add_argument("--qids", metavar="STRATEGY",
                        help="generate QIDs with this strategy after the load (MOB)")
    parser.add_argument("--qid-max-size", type=int, default=40,
                        help="most times per generated QID")
    args = parser.parse_args()
    params = release_params(args.method, args.k, args.param)
    qids = QidSet(args.qids, args.qid_max_size) if args.qids else None
    name = f"scale_{args.method}" + ("_tasks" if args.task_by_task else "")
    results = RESULTS / f"{name}.json"
    runs: list[dict] = ([run for run in json.loads(results.read_text())["runs"]
                         if run["points"] not in args.sizes]
                        if args.add and results.exists() else [])
    for points in args.sizes:  # the figures so far are written after each size
        runs.append(measure(points, params, args.max_rss_gib * 1024, qids,
                            args.task_by_task))
        runs.sort(key=lambda run: run["points"])
        write_results(name, {"machine": {"cpus": os.cpu_count()}, "runs": runs})
    runs = [run for run in runs if "error" not in run["release"]]
    if not runs:
        return
    plot(runs, args.method, FIGURES / f"{name}.png")
    steps = list(runs[0]["release"]["steps_s"])
    print_markdown_table(
        ("fixes", "trajectories", "load (s)", "release (s)", "peak RSS (MiB)", *steps),
        [(f"{run['points']:,}", f"{run['trajectories']:,}", round(run["load_s"]),
          round(run["release"]["total_s"]), round(run["release"]["peak_rss_mib"]),
          *(round(run["release"]["steps_s"].get(step, 0), 1) for step in steps))
         for run in runs])


if __name__ == "__main__":
    main()
