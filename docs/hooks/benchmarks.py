"""MkDocs hook: the benchmark pages, rendered from the result files committed with the benchmarks.

A page asks for a rendering with a line ``<!-- render: NAME -->``; the hook replaces it with
Markdown made from the JSON / JSON-lines files under ``tests/benchmarks/measured`` and
``tests/benchmarks/results``, so every figure on those pages is data, never hand-typed. What
a file measures and the command that reproduces it come from the docstring of the benchmark
that writes it (its first paragraph and its ``Run:`` line). A name no renderer knows stops
the build (a typo would otherwise leave a page silently empty). The figures the benchmarks
draw (``tests/benchmarks/figures/*.png``) are copied into the site.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "tests" / "benchmarks"
RESULT_DIRS = (BENCH / "measured", BENCH / "results")
FIGURES_URI = "benchmarks/figures"
MARKER = re.compile(r"^<!-- render: ([a-z_]+) -->$", re.MULTILINE)

# Result files with a renderer of their own (by file name pattern); the rest are listed
# generically on the benchmarks page.
DAYS = re.compile(r"(kam_rec|kam_cut)_tdrive_days_.*\.json$")
SPECIFIC = (DAYS, re.compile(r"tcaa_edge_strips\.json$"),
            re.compile(r"mob_outside_qids\.json$"), re.compile(r"(matrix|differential)\.jsonl$"),
            re.compile(r"adult\.json$"))


# ----------------------------------------------------------------------------- reading


def result_files() -> list[Path]:
    """Every result file present under measured/ and results/ (top level only: results/data
    holds cached input data, not results)."""
    found: list[Path] = []
    for folder in RESULT_DIRS:
        if folder.is_dir():
            found += sorted(p for p in folder.iterdir() if p.suffix in (".json", ".jsonl"))
    return found


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The records of a sweep; a cell run again replaces its earlier line, as the runner's
    own reader does."""
    records: dict[tuple[Any, ...], dict[str, Any]] = {}
    for line in path.read_text().splitlines():
        if line.strip():
            record = json.loads(line)
            records[(record.get("window"), record.get("method"), record.get("k"))] = record
    return list(records.values())


def script_for(path: Path) -> Path | None:
    """The benchmark that writes a result file: the script named like it, else one whose
    source names the file's stem."""
    stem = re.sub(r"_(before|after)$", "", path.stem)
    scripts = sorted(p for p in BENCH.glob("*.py") if not p.name.startswith("_"))
    for script in scripts:
        if stem.startswith(script.stem):
            return script
    for script in scripts:
        if f'"{stem}' in script.read_text() or f"results/{stem}" in script.read_text():
            return script
    return None


def docstring_parts(script: Path) -> tuple[str, str]:
    """(first paragraph, Run: command) of a benchmark's module docstring."""
    doc = ast.get_docstring(ast.parse(script.read_text())) or ""
    paragraphs = [p.strip() for p in doc.split("\n\n") if p.strip()]
    summary = " ".join(paragraphs[0].split()) if paragraphs else ""
    run = re.search(r"^Run: (.*?)(?:\n\n|\n[A-Z(`]|\Z)", doc, re.MULTILINE | re.DOTALL)
    command = " ".join(run.group(1).replace("\\\n", " ").split()) if run else ""
    return summary, command


def provenance(path: Path, command: str | None = None, script: Path | None = None) -> str:
    """What a file measures (its benchmark's docstring) and how to produce it again."""
    script = script or script_for(path)
    rel = path.relative_to(REPO).as_posix()
    if script is None:
        return f"`{rel}`: no benchmark in tests/benchmarks names this file.\n"
    summary, run = docstring_parts(script)
    lines = [f"`{rel}`, written by `{script.relative_to(REPO).as_posix()}`: {summary}", ""]
    if command or run:
        lines += ["Reproduce:", "", "```sh", command or run, "```", ""]
    return "\n".join(lines)


# ----------------------------------------------------------------------------- formatting


def cell(value: Any) -> str:
    """A table cell: numbers rounded for reading, text without pipes or line breaks."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:,.3f}".rstrip("0").rstrip(".") if abs(value) < 1000 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    text = json.dumps(value) if isinstance(value, (dict, list)) else str(value)
    return " ".join(text.replace("|", "/").split())


def table(header: Iterable[str], rows: Iterable[Iterable[Any]]) -> str:
    head = list(header)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def share(value: Any) -> Any:
    return None if value is None else round(float(value), 3)


# ----------------------------------------------------------------------------- renderers


def render_tdrive_days() -> str:
    """Whole T-Drive days through kam_cut / kam_rec, compared item by item with the verifier."""
    parts = []
    for path in (p for p in result_files() if DAYS.search(p.name)):
        data = json.loads(path.read_text())
        runs = data["runs"]
        days = ",".join(sorted({r["day"] for r in runs}))
        ks = ",".join(str(k) for k in sorted({r["k"] for r in runs}))
        command = (f"PYTHONPATH=. .venv/bin/python tests/benchmarks/kam_rec_tdrive_days.py "
                   f"--method {data['method']} --k {ks} --days {days} --compare "
                   f"--out {path.stem}")
        rows = [(r["day"], r["k"], r["outcome"], r["comparison"]["items"],
                 r["comparison"]["not_contained"], r["comparison"]["overcounted"],
                 r.get("total_s")) for r in sorted(runs, key=lambda r: (r["k"], r["day"]))]
        parts += [f"### {path.name}", "",
                  provenance(path, command, BENCH / "kam_rec_tdrive_days.py"),
                  table(("day", "k", "outcome", "items compared", "trajectories not contained",
                         "items overcounted", "steps (s)"), rows)]
    return "\n".join(parts) or "No result file of this benchmark is committed.\n"


def render_tcaa_edge_strips() -> str:
    """TCAA: what rectangle edges reveal, by lattice."""
    parts = []
    for path in (p for p in result_files() if p.name == "tcaa_edge_strips.json"):
        data = json.loads(path.read_text())
        window = data["window"]
        rows = [(r["snap"], share(r["metrics"].get("region_edges_one_person_share")),
                 share(r["metrics"].get("region_edges_below_k_share")),
                 r["metrics"]["area_per_region_m2"] / 1e6,
                 share(r["metrics"].get("tcaa_information_loss")),
                 share(r["metrics"].get("persons_published_share")), r.get("total_s"))
                for r in sorted(data["runs"], key=lambda r: r["snap"])]
        parts += [f"### {path.name}", "", provenance(path),
                  f"Window {window['start']} to {window['end']}, k = {data['k']}.", "",
                  table(("snap (m)", "edges with one person in their strip",
                         "edges with fewer than k", "area per rectangle (km²)", "IL (eq. 1)",
                         "persons published", "release (s)"), rows)]
    return "\n".join(parts) or "No result file of this benchmark is committed.\n"


def render_mob_outside_qids() -> str:
    """MOB: what an object publishes outside every QID, against the attack suite."""
    parts = []
    for path in (p for p in result_files() if p.name == "mob_outside_qids.json"):
        data = json.loads(path.read_text())
        rows = []
        for r in sorted(data["runs"], key=lambda r: (r["presence"], r["outside_qids"], r["k"])):
            worst = max(((a["prosecutor_max"], name) for name, a in r["attacks"].items()),
                        key=lambda pair: pair[0], default=(None, ""))
            rows.append((r["presence"], r["outside_qids"], r["k"],
                         share(r["metrics"].get("mob_information_loss_avg")),
                         share(r["located"].get("located_share")),
                         r["located"].get("located_mean_area_km2"), share(worst[0]), worst[1],
                         "refused" if r.get("refused_by_gate") else "passes",
                         r.get("verified"), r.get("total_s")))
        window = data["window"]
        parts += [f"### {path.name}", "", provenance(path),
                  f"Window {window['start']} to {window['end']}; QIDs: {data['qids']}; "
                  f"attack settings: {cell(data['attack_settings'])}.", "",
                  table(("presence", "outside_qids", "k", "avg IL", "rows with a location",
                         "mean located area (km²)", "largest attack risk", "attack",
                         "gate (risk above 1/k)", "verified", "release (s)"), rows)]
    return "\n".join(parts) or "No result file of this benchmark is committed.\n"


def percent(value: Any) -> Any:
    return None if value is None else round(100 * float(value), 2)


def render_adult() -> str:
    """The GA and Mondrian on UCI Adult under each numbering of the categorical values."""
    path = BENCH / "results" / "adult.json"
    if not path.exists():
        return f"`{path.relative_to(REPO).as_posix()}` is not committed yet.\n"
    data = json.loads(path.read_text())
    order = {name: i for i, name in enumerate(data["numberings"])}
    rows = [(r["k"], r["numbering"], percent(r["mondrian_ncp"]), percent(r.get("ga_ncp")),
             r["mondrian_kullback"], r.get("ga_kullback"), r["mondrian_discernability"],
             r.get("ga_discernability"), r["mondrian_classes"], r.get("ga_classes"),
             r.get("ga_suppressed"), r["mondrian_s"], r.get("ga_s"),
             r.get("ga_generations"))
            for r in sorted(data["runs"], key=lambda r: (-r["k"], order[r["numbering"]]))]
    public = data.get("public_mondrian_ncp_k10_strict_reported") or {}
    reported = (f"The public Mondrian's own figures for strict Mondrian at k = 10 on these "
                f"records (reported, not measured here): {percent(public['first_appearance']):.2f}"
                f" % with its numbering (`first_appearance`; its README says "
                f"{percent(public['readme']):.2f} %), {percent(public['alphabetical']):.2f} % on "
                "`alphabetical` codes." if public else "")
    return "\n".join([
        provenance(path, data.get("command")),
        f"{data['records']:,} records; GA population {data['population']}. {reported}", "",
        table(("k", "numbering", "Mondrian NCP (%)", "GA NCP (%)", "Mondrian Kullback",
               "GA Kullback", "Mondrian discernability", "GA discernability",
               "Mondrian classes", "GA classes", "GA suppressed", "Mondrian (s)", "GA (s)",
               "GA generations"), rows)])


def render_sweep(name: str) -> str:
    """The real-data matrix or the differential sweep (tests/benchmarks/realdata_matrix.py)."""
    path = BENCH / "measured" / f"{name}.jsonl"
    command = ("PYTHONPATH=. .venv/bin/python tests/benchmarks/realdata_matrix.py "
               f"--sweep {name}")
    if not path.exists():
        return (f"`{path.relative_to(REPO).as_posix()}` is not committed yet. Produce it "
                f"with:\n\n```sh\n{command}\n```\n")
    records = sorted(read_jsonl(path), key=lambda r: (r["method"], r["window"], r["k"]))
    outcomes = sorted({r["outcome"] for r in records})
    summary = [(m, *(sum(1 for r in records if r["method"] == m and r["outcome"] == o)
                     for o in outcomes)) for m in sorted({r["method"] for r in records})]
    rows = [(r["method"], r["window"], r["k"], r["outcome"], r.get("total_s"),
             r.get("peak_rss_mib"), (r.get("comparison") or {}).get("overcounted"),
             str(r.get("message") or (r.get("comparison") or {}).get("skipped") or "")[:300])
            for r in records]
    return "\n".join([
        provenance(path, command),
        "Outcomes per method:", "", table(("method", *outcomes), summary),
        "Every release:", "",
        table(("method", "window", "k", "outcome", "time (s)", "peak RSS (MiB)",
               "items overcounted", "message"), rows)])


def _scalars(run: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in run.items() if not isinstance(v, (dict, list))}


def render_other_results() -> str:
    """Every other result file: its provenance and, when it holds runs, their scalar fields."""
    parts = []
    for path in result_files():
        if any(p.search(path.name) for p in SPECIFIC):
            continue
        parts += [f"### {path.name}", "", provenance(path)]
        records = (read_jsonl(path) if path.suffix == ".jsonl"
                   else json.loads(path.read_text()))
        runs = records.get("runs") if isinstance(records, dict) else records
        if isinstance(runs, list) and runs and all(isinstance(r, dict) for r in runs):
            columns = list(dict.fromkeys(k for r in runs for k in _scalars(r)))[:12]
            parts.append(table(columns, ([r.get(c) for c in columns] for r in runs)))
        elif isinstance(records, dict):
            parts.append(table(("figure", "value"), sorted(_scalars(records).items())))
    return "\n".join(parts) or "No other result file is committed.\n"


FIGURE_CAPTIONS = {
    "compare_tdrive_day": "Every method at k = 5 on one T-Drive day: utility against the "
                          "largest measured risk (`compare_tdrive_day.py`).",
    "scale_": "One release as the synthetic city grows (`bench_scale.py`)",
}


def render_figures() -> str:
    """The figures the benchmarks drew, each with what it shows."""
    lines = []
    for png in sorted((BENCH / "figures").glob("*.png")):
        caption = FIGURE_CAPTIONS.get(png.stem)
        if caption is None and png.stem.startswith("scale_"):
            method = png.stem.removeprefix("scale_").removesuffix("_tasks")
            how = ("each step in a process of its own, as Airflow's executors run them"
                   if png.stem.endswith("_tasks") else "all steps in one process")
            caption = f"{FIGURE_CAPTIONS['scale_']}: `{method}`, {how}."
        lines += [f"![{png.stem}](figures/{png.name})", "", caption or png.stem, ""]
    return "\n".join(lines) or "No figure is committed.\n"


RENDERERS: dict[str, Callable[[], str]] = {
    "tdrive_days": render_tdrive_days,
    "tcaa_edge_strips": render_tcaa_edge_strips,
    "mob_outside_qids": render_mob_outside_qids,
    "adult": render_adult,
    "matrix": lambda: render_sweep("matrix"),
    "differential": lambda: render_sweep("differential"),
    "other_results": render_other_results,
    "figures": render_figures,
}


def render_markers(markdown: str) -> str:
    """Replace every ``<!-- render: NAME -->`` line by its rendering."""
    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in RENDERERS:
            raise PluginError(f"unknown benchmark rendering {name!r}: one of "
                              f"{', '.join(sorted(RENDERERS))}")
        return RENDERERS[name]()

    return MARKER.sub(replace, markdown)


# ----------------------------------------------------------------------------- MkDocs events


def on_files(files: Files, config: Any) -> Files:
    """Copy the benchmarks' figures into the site, beside the benchmarks page."""
    for png in sorted((BENCH / "figures").glob("*.png")):
        files.append(File.generated(config, f"{FIGURES_URI}/{png.name}",
                                    abs_src_path=str(png)))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    return render_markers(markdown)
