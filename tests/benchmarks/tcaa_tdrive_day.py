"""TCAA (seed 002) on one day of T-Drive: releases for k in {2, 5, 10, 16}, each verified and
published; pieces, groups, persons kept, IL (eq. 1), area per rectangle, run time per step and
the peak RSS of this process. The synchronization policy on real data (slices of
``slice_seconds``, points every ``interval``) is the README's.

Writes tests/benchmarks/results/tcaa_tdrive_day.json and prints a Markdown table.
Run: .venv/bin/python tests/benchmarks/tcaa_tdrive_day.py [day] [slice_seconds]
"""

from __future__ import annotations

import sys
from datetime import datetime, timedelta
from typing import Any

from _common import peak_rss_mib, print_markdown_table, scratch_database, write_results
from _release_runs import run_release
from bench_kam_rec_tdrive import TDRIVE

KS = (2, 5, 10, 16)
COLUMNS = ("k", "pieces", "groups", "persons published", "IL (eq. 1)",
           "area per rectangle (km2)", "cluster_pieces (s)", "verify (s)", "total (s)",
           "peak RSS (MiB)")


def _row(k: int, figures: dict[str, Any]) -> tuple:
    m = figures["metrics"]
    return (k, m.get("tcaa_pieces"), figures["groups"],
            f"{m.get('persons_published_share', float('nan')):.2f}",
            f"{m.get('tcaa_information_loss', float('nan')):.4f}",
            f"{m.get('area_per_region_m2', float('nan')) / 1e6:.2f}",
            figures["steps_s"]["cluster_pieces"], figures["steps_s"]["verify"],
            figures["total_s"], f"{figures['peak_rss_mib']:.0f}")


def main(day: str = "2008-02-03", slice_seconds: str = "3600") -> None:
    from anonymizers.loading import load_dataset

    start = datetime.fromisoformat(f"{day}T00:00:00+00:00")
    window = {"start": start.isoformat(), "end": (start + timedelta(days=1)).isoformat()}
    runs, rows = [], []
    with scratch_database() as url:
        load_dataset(TDRIVE, "tdrive", url=url)
        for k in KS:
            params = {"dataset": "tdrive", "method": "tcaa", "k": k, **window,
                      "slice_seconds": int(slice_seconds),
                      "accept_composition_risk": "benchmark: k on one window"}
            figures = run_release(url, params, f"tcaa-{k}", tables=("groups", "group_regions"))
            figures["peak_rss_mib"] = round(peak_rss_mib(), 1)
            runs.append({"k": k, **figures})
            rows.append(_row(k, figures))
            print(" | ".join(map(str, rows[-1])), flush=True)
    write_results("tcaa_tdrive_day", {"day": day, "slice_seconds": slice_seconds, "runs": runs})
    print_markdown_table(COLUMNS, rows)


if __name__ == "__main__":
    main(*sys.argv[1:3])
