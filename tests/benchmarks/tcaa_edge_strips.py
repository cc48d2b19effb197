"""What TCAA's rectangle edges reveal on a 6-hour T-Drive window, by lattice: for snap in
{50, 100, 200, 500} m, one verified, published release each (k and the window fixed), and
its metrics region_edges_one_person_share (edges whose outermost snap-wide strip holds
exactly one person of the window: one group member placed within snap metres) and
region_edges_below_k_share, with the rectangles' area and IL (eq. 1) they cost.

Writes tests/benchmarks/results/tcaa_edge_strips.json, a copy committed as
tests/benchmarks/measured/tcaa_edge_strips.json (results/ is not in git), and prints a
Markdown table.
Run: .venv/bin/python tests/benchmarks/tcaa_edge_strips.py [start] [hours] [k]
(default: 2008-02-03T00:00:00+00:00, 6 hours, k = 5; TCAA's defaults otherwise).
"""

from __future__ import annotations

import sys
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from _common import peak_rss_mib, print_markdown_table, scratch_database, write_results
from _release_runs import run_release

SNAPS = (50, 100, 200, 500)
MEASURED = Path(__file__).resolve().parent / "measured"  # committed, unlike results/
COLUMNS = ("snap (m)", "rectangles", "edges", "one person in strip", "below k in strip",
           "area per rectangle (km2)", "IL (eq. 1)", "metrics step (s)", "total (s)")


def tdrive() -> Path:
    """The T-Drive points beside the checkout (../shared from the repository or its
    worktree folder)."""
    here = Path(__file__).resolve()
    for folder in here.parents:
        found = folder / "shared" / "data" / "tdrive_600" / "points.csv.gz"
        if found.is_file():
            return found
    raise SystemExit("shared/data/tdrive_600/points.csv.gz not found beside the checkout")


def _row(snap: int, figures: dict[str, Any]) -> tuple:
    m, rectangles = figures["metrics"], figures["group_regions"]
    return (snap, rectangles, 4 * rectangles,
            f"{m['region_edges_one_person_share']:.3f}",
            f"{m['region_edges_below_k_share']:.3f}",
            f"{m['area_per_region_m2'] / 1e6:.3f}", f"{m['tcaa_information_loss']:.4f}",
            figures["steps_s"]["metrics"], figures["total_s"])


def main(start: str = "2008-02-03T00:00:00+00:00", hours: str = "6", k: str = "5") -> None:
    from anonymizers.loading import load_dataset

    begin = datetime.fromisoformat(start)
    window = {"start": begin.isoformat(),
              "end": (begin + timedelta(hours=float(hours))).isoformat()}
    runs, rows = [], []
    with scratch_database() as url:
        load_dataset(tdrive(), "tdrive", url=url)
        for snap in SNAPS:
            params = {"dataset": "tdrive", "method": "tcaa", "k": int(k), **window,
                      "snap": float(snap),
                      "accept_composition_risk": "benchmark: the lattice on one window"}
            figures = run_release(url, params, f"tcaa-snap-{snap}",
                                  tables=("groups", "group_regions"))
            figures["peak_rss_mib"] = round(peak_rss_mib(), 1)
            runs.append({"snap": snap, **figures})
            rows.append(_row(snap, figures))
            print(" | ".join(map(str, rows[-1])), flush=True)
    path = write_results("tcaa_edge_strips", {"window": window, "k": int(k), "runs": runs})
    MEASURED.mkdir(exist_ok=True)
    (MEASURED / path.name).write_text(path.read_text())
    print_markdown_table(COLUMNS, rows)


if __name__ == "__main__":
    main(*sys.argv[1:4])
