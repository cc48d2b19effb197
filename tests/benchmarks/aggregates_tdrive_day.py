"""`anonymizers compare` of the aggregates family on one T-Drive day: presence, od and the
fixed-grid baseline grid_kam_cut at one k on the same window, each a verified release for
this comparison only; range-query error (possibly / definitely inside, and over the whole
window), share of fixes published, flow preservation, measured risk, run time and peak
memory of each release's process.

In a scratch database: the T-Drive day is loaded, then the command runs as a user runs it,
twice: ``--methods presence,od,grid_kam_cut`` with default parameters (500 m squares and
one-hour bins for the aggregates, 1 km cells for grid_kam_cut), then presence and od on
2 km squares (600 taxis spread over Beijing rarely put 5 in one 500 m square in one hour).
Writes the reports to tests/benchmarks/results/aggregates_tdrive_day*/ and the figures to
tests/benchmarks/measured/aggregates_tdrive_day.json, and prints the Markdown tables.

Run: .venv/bin/python tests/benchmarks/aggregates_tdrive_day.py [day] [k]
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

from _common import RESULTS, scratch_database
from bench_kam_rec_tdrive import TDRIVE

MEASURED = Path(__file__).resolve().parent / "measured"
# name: (methods, extra arguments of `anonymizers compare`)
RUNS = {"default": ("presence,od,grid_kam_cut", []),
        "2km": ("presence,od", ["--param", "presence.cell_size=2000",
                                "--param", "od.cell_size=2000"])}


def _day_csv(day: str, folder: Path) -> Path:
    """The fixes of ``day`` (UTC) as a loader CSV (times of one format compare as text)."""
    import gzip

    end = (date.fromisoformat(day) + timedelta(days=1)).isoformat()
    path = folder / f"tdrive_{day}.csv"
    with gzip.open(TDRIVE, "rt") as source, path.open("w") as out:
        out.write(next(source))
        out.writelines(line for line in source if day <= line.split(",", 3)[2] < end)
    return path


def main(day: str = "2008-02-03", k: str = "5") -> None:
    from anonymizers.loading import load_dataset

    end = (date.fromisoformat(day) + timedelta(days=1)).isoformat()
    window = ["--start", f"{day}T00:00:00Z", "--end", f"{end}T00:00:00Z"]
    measured: dict[str, object] = {"day": day, "k": int(k), "runs": {}}
    with tempfile.TemporaryDirectory() as folder, scratch_database() as url:
        os.environ["DATABASE_URL"] = url
        load_dataset(_day_csv(day, Path(folder)), "tdrive", url=url)
        for name, (methods, extra) in RUNS.items():
            measured["runs"][name] = _compare(name, k, window, methods, extra)  # type: ignore[index]
    measured["machine"] = {"cpus": os.cpu_count(), "load_average_at_end": os.getloadavg()}
    MEASURED.mkdir(exist_ok=True)
    (MEASURED / "aggregates_tdrive_day.json").write_text(
        json.dumps(measured, indent=2, default=str) + "\n")


def _compare(name: str, k: str, window: list[str], methods: str,
             extra: list[str]) -> dict[str, object]:
    from anonymizers.cli import main as cli

    out = RESULTS / f"aggregates_tdrive_day_{name}"
    argv = ["compare", "--dataset", "tdrive", "--k", k, *window, "--methods", methods,
            *extra, "--out", str(out)]
    started = time.perf_counter()
    if (code := cli(argv)) != 0:
        raise SystemExit(f"compare exited with {code}")
    total = round(time.perf_counter() - started, 1)
    print((out / "comparison.md").read_text())
    return {"command": "anonymizers " + " ".join(argv[:-2]), "total_s": total,
            **json.loads((out / "comparison.json").read_text())}


if __name__ == "__main__":
    main(*sys.argv[1:3])
