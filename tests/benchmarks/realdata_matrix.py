"""Every method on real data, default parameters: does each release publish, and does the
anonymizer ever count an item above the verifier's recount?

Two sweeps share this runner:

* the **real-data matrix** (``--sweep matrix``, the default): every registered method x
  every T-Drive day x k in {2, 5, 10}, plus Gowalla NYC over its whole period (check-ins as
  fixes; as place visits for the trajectory groups). Each cell's outcome: ``published``,
  ``refused early`` (``prepare`` said why, in seconds), ``refused at <step>`` (a step
  before the gate refused, e.g. the attack check of the metrics), ``refused by the gate``
  (the independent verifier counted an item below k: the anonymizer is wrong), ``error``
  (a bug) or ``timeout``; its run time and the peak memory of the process that ran it
  (PostgreSQL's own memory is not in it).
* the **differential sweep** (``--sweep differential``): every method x every T-Drive day
  and half-day x k in {2, 3, 5, 8, 10, 16}, each release built and then compared item by
  item before the gate (tests/differential: the anonymizer's own count of every published
  item against the verifier's recount); ``overcounted`` items are bugs. The matrix makes
  the same comparison (it costs seconds) and then runs the release to its end.

Every cell runs in a process of its own (its peak memory is its own; a crash or a timeout
loses one cell). Results are appended as JSON lines to tests/benchmarks/measured/<sweep>.jsonl
as each cell ends, so a sweep resumes where it stopped (``--redo`` runs cells again), and
tests/benchmarks/measured/<sweep>.md is rendered from them. The data are loaded once into
the database ``--database`` (default ``realdata_sweeps``), which is kept between runs.

MOB needs quasi-identifiers and the data have none. T-Drive's are generated once with the
configuration of the paper's experiments (``graph``, at most 100 time points, seed 1, on
MOB's default interval), as ``anonymizers qids generate`` would. Gowalla gets none: one
check-in every few days, carried forward as a position on a 5-minute grid over 20 months,
is not the moving-object data MOB is for, and a release of it must say so early. Two windows of one
dataset overlap: the composition risk is accepted and recorded, as a benchmark must.

Run: PYTHONPATH=. .venv/bin/python tests/benchmarks/realdata_matrix.py \
        [--sweep matrix|differential] [--methods m1,m2] [--k 2,5,10] [--windows W1,W2] \
        [--until STEP] [--timeout 1800] [--database NAME] [--redo] [--render]
Windows are named ``tdrive:2008-02-03``, ``tdrive:2008-02-03/am`` (00-12 UTC),
``tdrive:2008-02-03/pm`` and ``gowalla``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import asdict, dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
from _common import server_url, with_database
from groups_realdata import GOWALLA, gowalla_place_sequences

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the comparisons

MEASURED = Path(__file__).resolve().parent / "measured"  # committed, unlike results/
TDRIVE = GOWALLA.parents[1] / "tdrive_600" / "points.csv.gz"
TDRIVE_DAYS = tuple((date(2008, 2, 2) + timedelta(days=n)).isoformat() for n in range(7))
SWEEPS = {"matrix": {"k": (2, 5, 10), "halves": False, "gowalla": True, "compare": True},
          "differential": {"k": (2, 3, 5, 8, 10, 16), "halves": True, "gowalla": False,
                           "compare": True}}
QIDS = {"strategy": "graph", "max_size": 100, "seed": 1}
GOWALLA_PLACE_CELL_M = 500.0  # venues snapped to the centres of a 500 m grid (UTM 18N)
ACCEPTED = "measuring every method on every window of real data"


@dataclass(frozen=True)
class Cell:
    """One release of the sweep."""

    window: str
    method: str
    k: int

    def key(self) -> str:
        return f"{self.window} {self.method} k={self.k}"


# ------------------------------------------------------------------------ the data


def database(name: str) -> str:
    """The URL of database ``name``: created, migrated and loaded with T-Drive and Gowalla
    (as fixes, as place visits) and their generated QIDs, the first time only."""
    from anonymizers.db.migrate import migrate

    admin = with_database(server_url(), "postgres")
    url = with_database(admin, name)
    with psycopg.connect(admin, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s",
                            (name,)).fetchone():
            conn.execute(psycopg.sql.SQL("CREATE DATABASE {}").format(
                psycopg.sql.Identifier(name)))
    migrate(url)
    os.environ["DATABASE_URL"] = url
    _load_once(url)
    return url


def _loaded(url: str) -> set[str]:
    with psycopg.connect(url) as conn:
        return {row[0] for row in conn.execute("SELECT name FROM raw.datasets")}


def _load_once(url: str) -> None:
    from anonymizers.families.mob.qids import generate_and_store_qids
    from anonymizers.loading import load_dataset

    mob_interval = _default("mob_symmetric", "interval")
    loaded = _loaded(url)
    if "tdrive" not in loaded:
        load_dataset(TDRIVE, "tdrive", url=url, sort=True)
        generate_and_store_qids("tdrive", QIDS["strategy"], QIDS["max_size"], QIDS["seed"],
                                interval_s=int(mob_interval), url=url)
    if "gowalla" not in loaded:
        load_dataset(GOWALLA, "gowalla", url=url, sort=True)
    if "gowalla_places" not in loaded:
        with tempfile.TemporaryDirectory() as folder:
            visits, places = gowalla_place_sequences(Path(folder), GOWALLA_PLACE_CELL_M)
            load_dataset(visits, "gowalla_places", places=places, url=url, sort=True)


def _default(method: str, name: str) -> Any:
    from anonymizers.families.registry import METHODS

    return next(spec.default for spec in METHODS[method].params if spec.name == name)


def window_bounds(url: str, window: str, method: str) -> dict[str, str]:
    """The dataset and [start, end) of a named window (Gowalla: its whole period; the
    trajectory groups read its check-ins as place visits)."""
    if window == "gowalla":
        from anonymizers.families.registry import METHODS

        dataset = "gowalla_places" if METHODS[method].family == "groups" else "gowalla"
        with psycopg.connect(url) as conn:
            first, last = conn.execute(
                "SELECT min(t), max(t) FROM raw.points JOIN raw.datasets USING (dataset_id) "
                "WHERE name = %s", (dataset,)).fetchone()
        day = timedelta(days=1)
        return {"dataset": dataset, "start": _midnight(first).isoformat(),
                "end": (_midnight(last) + day).isoformat()}
    dataset, _, rest = window.partition(":")
    day_text, _, half = rest.partition("/")
    start = datetime.fromisoformat(f"{day_text}T00:00:00+00:00")
    hours = {"": (0, 24), "am": (0, 12), "pm": (12, 24)}[half]
    return {"dataset": dataset, "start": (start + timedelta(hours=hours[0])).isoformat(),
            "end": (start + timedelta(hours=hours[1])).isoformat()}


def _midnight(moment: datetime) -> datetime:
    return moment.replace(hour=0, minute=0, second=0, microsecond=0)


# ------------------------------------------------------------------------ one cell


def run_cell(url: str, cell: Cell, compare: bool, until: str | None) -> dict[str, Any]:
    """One release, step by step as the DAG runs them, in this process; its outcome."""
    from anonymizers.errors import AnonymizerError, PrivacyViolation
    from anonymizers.families.registry import SHARED_STEPS_AFTER, method_entry
    from anonymizers.pipeline import steps

    params = {**window_bounds(url, cell.window, cell.method), "method": cell.method,
              "k": cell.k, "accept_composition_risk": ACCEPTED}
    figures: dict[str, Any] = {**asdict(cell), "steps_s": {}}
    step_name = "prepare"
    started = time.perf_counter()
    try:
        spec = steps.prepare(params, None, f"sweep-{time.time_ns()}")
        figures["steps_s"]["prepare"] = round(time.perf_counter() - started, 2)
        if spec is None:
            return {**figures, "outcome": "already published"}
        for step_name in [*method_entry(cell.method).steps, *SHARED_STEPS_AFTER]:
            at = time.perf_counter()
            steps.run_step(step_name, spec)
            figures["steps_s"][step_name] = round(time.perf_counter() - at, 2)
            if step_name == "manifest" and compare:
                figures["comparison"] = _compared(url, cell, spec)
            if step_name == until:
                figures["outcome"] = f"built (stopped after {until})"
                _drop_scratch(url, spec)  # a sweep would pile up tens of MB a cell
                break
        else:
            figures["outcome"] = "published"
    except PrivacyViolation as refusal:
        figures["outcome"] = {"prepare": "refused early", "verify": "refused by the gate"
                              }.get(step_name, f"refused at {step_name}")
        figures["message"] = str(refusal)
    except AnonymizerError as refusal:
        figures["outcome"] = ("refused early" if step_name == "prepare"
                              else f"failed at {step_name}")
        figures["message"] = str(refusal)
    except Exception as bug:
        figures["outcome"] = f"error at {step_name}"
        figures["message"] = "".join(traceback.format_exception_only(bug)).strip()
    figures["total_s"] = round(time.perf_counter() - started, 1)
    return figures


def _drop_scratch(url: str, spec: dict[str, Any]) -> None:
    """The scratch schemas of a release built only to be compared (never published)."""
    from anonymizers.release.spec import ReleaseSpec

    release = ReleaseSpec.from_dict(spec)
    with psycopg.connect(url, autocommit=True) as conn:
        for name in (release.work_schema, release.build_schema):
            conn.execute(psycopg.sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(
                psycopg.sql.Identifier(name)))


def _compared(url: str, cell: Cell, spec: dict[str, Any]) -> dict[str, Any]:
    from differential import comparer, summary

    from anonymizers.families.registry import METHODS
    from anonymizers.release.spec import ReleaseSpec

    release = ReleaseSpec.from_dict(spec)
    try:
        compare = comparer(METHODS[cell.method].family)
    except LookupError as missing:
        return {"skipped": str(missing)}
    at = time.perf_counter()
    with psycopg.connect(url) as conn:
        comparison = compare(conn, release.work_schema, release.build_schema)
    return {**summary(comparison, cell.k), "seconds": round(time.perf_counter() - at, 1)}


def run_in_child(url: str, cell: Cell, compare: bool, until: str | None,
                 timeout_s: float) -> dict[str, Any]:
    """``run_cell`` in a process of its own: its peak memory, and a timeout."""
    with tempfile.NamedTemporaryFile("r", suffix=".json") as out:
        child = subprocess.Popen(
            [sys.executable, __file__, "--child", json.dumps(asdict(cell)), "--child-out",
             out.name, *(["--compare"] if compare else []),
             *(["--until", until] if until else [])],
            env={**os.environ, "DATABASE_URL": url})
        started = time.monotonic()
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - started > timeout_s:
                child.kill()
                _, status, usage = os.wait4(child.pid, 0)
                return {**asdict(cell), "outcome": "timeout", "total_s": round(timeout_s),
                        "peak_rss_mib": round(usage.ru_maxrss / 1024)}
            time.sleep(0.5)
        text = Path(out.name).read_text()
    figures = json.loads(text) if text else {**asdict(cell), "outcome": "error (crashed)",
                                             "message": f"exit status {status}"}
    figures["peak_rss_mib"] = round(usage.ru_maxrss / 1024)  # Linux: KiB
    return figures


# ------------------------------------------------------------------------ the sweep


def cells(args: argparse.Namespace, methods: list[str]) -> list[Cell]:
    sweep = SWEEPS[args.sweep]
    ks = [int(k) for k in args.k.split(",")] if args.k else list(sweep["k"])
    if args.windows:
        windows = args.windows.split(",")
    else:
        windows = [f"tdrive:{day}" for day in TDRIVE_DAYS]
        if sweep["halves"]:
            windows += [f"tdrive:{day}/{half}" for day in TDRIVE_DAYS for half in ("am", "pm")]
        if sweep["gowalla"]:
            windows.append("gowalla")
    # Every method on a window before the next window: an early stop still covers them all.
    return [Cell(window, method, k) for k in ks for window in windows for method in methods]


def read_results(path: Path) -> dict[str, dict[str, Any]]:
    if not path.exists():
        return {}
    found = {}
    for line in path.read_text().splitlines():
        record = json.loads(line)
        found[Cell(record["window"], record["method"], record["k"]).key()] = record
    return found


def render(sweep: str, title: str) -> str:
    """The sweep's tables as the documentation site shows them (one renderer for both: the
    site's hook, docs/hooks/benchmarks.py, reads the same JSON lines)."""
    hook = Path(__file__).resolve().parents[2] / "docs" / "hooks" / "benchmarks.py"
    spec = importlib.util.spec_from_file_location("docs_benchmarks_hook", hook)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return f"# {title}\n\n{module.render_sweep(sweep)}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sweep", choices=sorted(SWEEPS), default="matrix")
    parser.add_argument("--methods", default=None, help="comma-separated (default: all)")
    parser.add_argument("--k", default=None, help="comma-separated (default: the sweep's)")
    parser.add_argument("--windows", default=None, help="comma-separated (default: the sweep's)")
    parser.add_argument("--until", default=None, help="stop each release after this step")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per cell")
    parser.add_argument("--database", default="realdata_sweeps")
    parser.add_argument("--redo", action="store_true", help="run cells already in the results")
    parser.add_argument("--render", action="store_true", help="only render the table")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--child-out", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--compare", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        cell = Cell(**json.loads(args.child))
        figures = run_cell(os.environ["DATABASE_URL"], cell, args.compare, args.until)
        Path(args.child_out).write_text(json.dumps(figures, default=str))
        return
    from anonymizers.families.registry import METHODS

    results = MEASURED / f"{args.sweep}.jsonl"
    title = {"matrix": "Every method on real data, default parameters",
             "differential": "The anonymizer's counts against the verifier's, item by item"
             }[args.sweep]
    if not args.render:
        url = database(args.database)
        done = {} if args.redo else read_results(results)
        compare = SWEEPS[args.sweep]["compare"]
        until = args.until or ("manifest" if args.sweep == "differential" else None)
        methods = args.methods.split(",") if args.methods else list(METHODS)
        MEASURED.mkdir(parents=True, exist_ok=True)
        for cell in cells(args, methods):
            if cell.key() in done:
                continue
            figures = run_in_child(url, cell, compare, until, args.timeout)
            print(json.dumps({key: figures.get(key) for key in (
                "window", "method", "k", "outcome", "total_s", "peak_rss_mib", "message")}),
                flush=True)
            with results.open("a") as out:
                out.write(json.dumps(figures, default=str) + "\n")
    (MEASURED / f"{args.sweep}.md").write_text(render(args.sweep, title))


if __name__ == "__main__":
    main()
