"""The comparison's report: one table, one utility-against-risk chart, the figures as JSON.

``index.html`` (the release report's offline page, every value escaped), ``comparison.png``
(five panels: each headline utility against the largest measured re-identification
probability, one point per method, the 1/k line), ``comparison.json`` and
``comparison.md`` (the table, for a note or a README).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from anonymizers.compare.chooser import Comparison, MethodResult
from anonymizers.reports.page import (
    Definitions,
    FigureRef,
    Paragraph,
    Part,
    Section,
    Table,
    format_value,
    render_page,
)

__all__ = ["COLUMNS", "table_rows", "write_report"]

COLUMNS = ("method", "release", "fixes published", "area per location (km²)",
           "range-query error (spans)", "range-query error (whole window)",
           "flow preservation", "largest risk (model)", "covered-model risk", "run time (s)",
           "peak memory (MiB)")
PANELS = (("fixes_published_share", "share of fixes published", "higher is better"),
          ("area_per_location_m2", "area per published location (km²)", "lower is better"),
          ("range_query_error", "range-query error, random spans", "lower is better"),
          ("range_query_error_whole_window", "range-query error, whole window",
           "lower is better"),
          ("flow_preservation", "flow preservation (weighted Jaccard)", "higher is better"))


def table_rows(comparison: Comparison) -> list[tuple[Any, ...]]:
    """One row per method: what it published (or why not), utility, risk, cost."""
    return [_row(result) for result in comparison.results]


def _row(result: MethodResult) -> tuple[Any, ...]:
    run, h, r = result.run, result.headline, result.risk
    if run.release is None:
        return (run.method, f"not published: {run.error}", *("—",) * 7, run.wall_s,
                run.peak_rss_mib)
    utility: tuple[Any, ...] = ("—",) * 5 if h is None else (
        _fixed(h.fixes_published_share), _fixed(h.area_per_location_m2 / 1e6),
        _fixed(h.range_query_error), _fixed(h.range_query_error_whole_window),
        _fixed(h.flow_preservation))
    risk: tuple[Any, ...] = ("—", "—") if r is None else (
        _fixed(r.prosecutor_max) + (f" ({r.worst_model})" if r.worst_model else ""),
        _fixed(r.covered_max))
    return (run.method, run.release, *utility, *risk, run.wall_s, run.peak_rss_mib)


def _fixed(value: float) -> str:
    return "undefined" if math.isnan(value) else f"{value:.3f}"


def markdown_table(comparison: Comparison) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(format_value(v) for v in row) + " |"
              for row in table_rows(comparison)]
    return "\n".join(lines) + "\n"


def write_report(comparison: Comparison, out: Path) -> Path:
    """Write the comparison's page, chart, JSON and Markdown table under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "comparison.json").write_text(json.dumps(comparison.to_json(), indent=2,
                                                    default=str))
    (out / "comparison.md").write_text(markdown_table(comparison))
    chart = utility_risk_figure(comparison.results, comparison.k, out / "comparison.png")
    page = out / "index.html"
    page.write_text(render_page(
        f"Comparison {comparison.comparison}",
        f"dataset {comparison.dataset}, k = {comparison.k}", _sections(comparison, chart)),
        encoding="utf-8")
    return page


def _sections(comparison: Comparison, chart: Path | None) -> list[Section]:
    window, attacks = comparison.window, comparison.attacks
    about = Section("What was compared", [Definitions([
        ("window", "no method was published" if window is None else
         f"{window.start.isoformat()} .. {window.end.isoformat()} ({window.fixes:,} fixes, "
         f"EPSG:{window.srid})"),
        ("releases", "each method released through the normal gate and verified, marked "
         f"with comparison {comparison.comparison}: composition risk accepted for this "
         "comparison only, and analyst cannot read them"),
        ("utility", "measured from each release's published locations against the raw "
         "window: the share of its fixes inside a published location at a time it stands "
         "for; the mean area of a published location; the mean relative error of 200 "
         "seeded range queries (distinct persons in a box during a random span, and in the "
         "same box over the whole window, the release counting the persons of every unit "
         "possibly inside); the weighted Jaccard index of raw and published flows between "
         "the squares of a lattice"),
        ("risk", "the attack suite (knowledge of 1 to "
         f"{max(attacks.lengths)} observations, {attacks.max_targets} targets, "
         f"{attacks.max_instances} instances each): the largest probability of "
         "re-identification over every model, and over the models the method's privacy "
         "model covers (never above 1/k for a published release)"),
        ("cost", "wall time and peak resident memory of each release's own process"),
    ])])
    table = Section("Methods side by side", [Table(COLUMNS, table_rows(comparison))])
    notes: list[Part] = [Paragraph(f"{r.run.method}: {note}") for r in comparison.results
                         for note in r.notes]
    sections = [about, table]
    if chart is not None:
        sections.append(Section("Utility against measured risk", [FigureRef(
            chart.name, "utility against risk",
            f"Each point a method; the dashed line is 1/k = {1 / comparison.k:.3f}.")]))
    if notes:
        sections.append(Section("Notes", notes))
    return sections


def utility_risk_figure(results: Sequence[MethodResult], k: int, path: Path) -> Path | None:
    """Five panels, each headline utility against the largest measured risk."""
    measured = [r for r in results if r.headline is not None and r.risk is not None]
    if not measured:
        return None
    figure = Figure(figsize=(15, 8.5))
    for i, (name, label, better) in enumerate(PANELS):
        ax = figure.add_subplot(2, 3, i + 1)
        scale = 1e-6 if name == "area_per_location_m2" else 1.0
        for j, result in enumerate(measured):
            x = result.risk.prosecutor_max if result.risk else math.nan
            y = getattr(result.headline, name) * scale
            ax.scatter([x], [y], color=f"C{j % 10}", s=36, zorder=3)
            ax.annotate(result.run.method, (x, y), textcoords="offset points",
                        xytext=(4, 3), fontsize=7)
        ax.axvline(1 / k, color="0.4", linestyle="--", linewidth=1)
        ax.set_xlim(0, 1.05)
        ax.set_xlabel("largest re-identification probability measured")
        ax.set_ylabel(label)
        ax.set_title(better, fontsize=8, loc="right", color="0.35")
        ax.grid(True, linewidth=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    return path
