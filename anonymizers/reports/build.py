"""Build a release's report: read it, draw its figures, write ``index.html`` beside them.

Generic over families: what is drawn comes from the family's
:attr:`~anonymizers.families.base.Family.report_layers` (layers with time columns become
small multiples over the window); what is tabulated and said comes from the shared
``manifest``, ``metrics`` and ``metric_series`` tables that every release holds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import psycopg

from anonymizers.reports import figures
from anonymizers.reports.checks_words import check_rows
from anonymizers.reports.counts import counts_note, page_counts
from anonymizers.reports.density import DensityView, read_density
from anonymizers.reports.page import Definitions, FigureRef, Paragraph, Section, Table, render_page
from anonymizers.reports.release_data import ReleaseData, Series, read_release, release_family
from anonymizers.reports.risk import RISK_PREFIXES, is_risk_series, risk_panels, summary_sentences
from anonymizers.reports.words import manifest_sentences, parameter_rows, plain

__all__ = ["RISK_PREFIXES", "Report", "build_report", "is_attack_metric", "is_risk_series"]

FIGURES = "figures"
OWN_FIGURES = ("map.png", "before_after.png", "risk.png", "risk_*.png", "over_time_*.png",
               "series_*.png")


@dataclass(frozen=True)
class Report:
    """Where a report was written: the page and its figures."""

    page: Path
    figures: tuple[Path, ...]


def is_attack_metric(name: str) -> bool:
    """Scalar metrics of the attack suite (``attack_<model>_...``), tabulated apart."""
    return name.startswith("attack_")


def build_report(conn: psycopg.Connection, release: str, out: Path,
                 log: Callable[[str], None] | None = None) -> Report:
    """Read release ``release``, draw its figures into ``out/figures`` and write
    ``out/index.html``.

    Parameters
    ----------
    conn : psycopg.Connection
        A connection of the pipeline's role: it reads the release and, for the density
        view only, the raw fixes of the release's window, as squares of at least k persons.
    release : str
        The release schema (or a build schema: anything with a manifest).
    out : Path
        The report's folder, created if missing; figures of an earlier report in
        ``out/figures`` are replaced.
    log : callable, optional
        Receives one line per stage.

    Returns
    -------
    Report
        The page and the figures written.

    Raises
    ------
    InputError
        If ``release`` has no manifest (not a release).
    """
    from anonymizers.families.base import load_family

    say = log or (lambda message: None)
    data = read_release(conn, release, ())
    family = load_family(release_family(data.manifest))
    data.layers = read_release(conn, release, family.report_layers).layers
    say(f"read {release}: {sum(len(r.geometries) for r in data.layers)} geometries in "
        f"{len(data.layers)} layers, {len(data.metrics)} metrics, {len(data.series)} series")
    density = read_density(conn, data.manifest)
    _clear_figures(out / FIGURES)
    sections, drawn = _sections(data, density, plain(family.entry.title), out)
    page = out / "index.html"
    page.write_text(render_page(f"Release report: {release}",
                                f"{data.manifest['method']} on {data.manifest['dataset']}, "
                                f"k = {data.k}", sections), encoding="utf-8")
    say(f"wrote {page} and {len(drawn)} figures")
    return Report(page, tuple(drawn))


def _clear_figures(folder: Path) -> None:
    """An empty figures folder: no figure of an earlier report stays beside this one."""
    folder.mkdir(parents=True, exist_ok=True)
    for pattern in OWN_FIGURES:
        for stale in folder.glob(pattern):
            stale.unlink()


def _sections(data: ReleaseData, density: DensityView | None, family_title: str,
              out: Path) -> tuple[list[Section], list[Path]]:
    drawn: list[Path] = []
    sections = [_summary_section(data), _manifest_section(data, family_title)]
    sections += _map_sections(data, density, out, drawn)
    sections += [_metrics_section(data), _risk_section(data, out, drawn)]
    if other := _series_section(data, out, drawn):
        sections.append(other)
    sections.append(_tables_section(data))
    return sections, drawn


def _summary_section(data: ReleaseData) -> Section:
    """The top of the page: the worst attack against 1/k, accepted risks, the verdict."""
    return Section("Summary: is anyone re-identifiable?", [
        Definitions(summary_sentences(data.manifest, data.metrics)),
        Paragraph(counts_note(page_counts(data), int(data.manifest["count_interval"])))])


def _manifest_section(data: ReleaseData, family_title: str) -> Section:
    manifest = data.manifest
    return Section("The release in words", [
        Definitions(manifest_sentences(manifest, family_title)),
        Paragraph("What the independent verifier checked, with the figure it recorded in the "
                  "manifest:"),
        Table(("what was checked", "figure", "how it is counted"),
              check_rows(manifest.get("verifier_result"), data.k)),
        Paragraph("Parameters of the method, as the manifest records them (values chosen "
                  "automatically are shown as chosen; a parameter left unset shows what "
                  "applies instead):"),
        Table(("parameter", "value"), parameter_rows(manifest)),
    ])


def _figure(out: Path, name: str, drawn: list[Path]) -> tuple[Path, str]:
    path = out / FIGURES / name
    drawn.append(path)
    return path, f"{FIGURES}/{name}"


def _map_sections(data: ReleaseData, density: DensityView | None, out: Path,
                  drawn: list[Path]) -> list[Section]:
    extent, cut = _map_extent(data, density)
    srid = int(data.manifest["srid"])
    section = Section("Map of the published geometry")
    if extent is None:
        section.parts.append(Paragraph("This release has no geometry to draw."))
        return [section]
    path, src = _figure(out, "map.png", drawn)
    figures.map_figure(data.layers, extent, srid, path)
    section.parts += [
        FigureRef(src, "map of the published geometry",
                  "Every geometry layer of the release over the extent of what was published, "
                  f"in {figures.crs_name(srid)}, with a scale bar (no basemap: the page "
                  "needs no network)." + (CUT_NOTE if cut else "")),
        Table(("layer", "table", "geometries drawn (exact)", "weight (width or size)"),
              [(r.layer.label, r.layer.table, len(r.geometries), r.layer.weight or "—")
               for r in data.layers])]
    sections = [section, *_time_sections(data, extent, out, drawn)]
    sections.append(_before_after_section(data, density, extent, out, drawn))
    return sections


CUT_NOTE = (" Some published regions reach far beyond where the data is (e.g. positions "
            "withheld as the whole area of use): the map shows where the data is, and those "
            "regions are cut at its edge.")
# A published extent this many times the area of the raw data's shown squares is drawn
# over the squares' extent instead: a map of a whole UTM zone shows a dot.
FAR_BEYOND = 25.0


def _map_extent(data: ReleaseData, density: DensityView | None
                ) -> tuple[figures.Extent | None, bool]:
    """The published data's extent (a small margin), or the shown raw squares' extent when
    some published regions reach far beyond it; and whether regions are cut."""
    published = figures.extent_of(data.layers, None)
    where = figures.extent_of([], density)
    if published is None or where is None:
        return published or where, False
    if _area(published) > FAR_BEYOND * _area(where):
        return where, True
    return published, False


def _area(extent: figures.Extent) -> float:
    return max(extent[2] - extent[0], 1.0) * max(extent[3] - extent[1], 1.0)


def _time_sections(data: ReleaseData, extent: figures.Extent, out: Path,
                   drawn: list[Path]) -> list[Section]:
    window = (data.manifest["window_start"], data.manifest["window_end"])
    sections = []
    for index, rows in enumerate(r for r in data.layers if r.layer.over_time):
        if not rows.geometries:
            continue
        path, src = _figure(out, f"over_time_{index}_{rows.layer.table}.png", drawn)
        figures.small_multiples_figure(rows, window, extent, int(data.manifest["srid"]), path)
        sections.append(Section(f"Over time: {rows.layer.label}", [FigureRef(
            src, f"{rows.layer.label} over the window",
            "Small multiples: the window cut into equal parts; each map shows the regions "
            "whose time meets that part (the number of regions in brackets).")]))
    return sections


def _before_after_section(data: ReleaseData, density: DensityView | None,
                          extent: figures.Extent, out: Path, drawn: list[Path]) -> Section:
    path, src = _figure(out, "before_after.png", drawn)
    figures.before_after_figure(density, data.layers, extent, int(data.manifest["srid"]),
                                path)
    k = data.k
    if density is None:
        rule = (f"No square of any size up to the coarsest holds fixes of {k} distinct "
                "persons, so the raw window is not drawn at all.")
    else:
        rule = (f"The raw fixes of the window are counted in squares of {density.size:g} m of "
                f"a lattice anchored at the CRS origin; a square is drawn only when at least "
                f"k = {k} distinct persons have a fix in it, never an individual fix, and its "
                "count went through the interval filter. The size is the finest of "
                "250 m to 20 km at which the drawn squares hold at least 80 % of the fixes; "
                f"here they hold {100 * density.shown_share:.0f} %.")
    return Section("Before and after", [
        FigureRef(src, "raw density before, published geometry after",
                  "Left: the raw window as an aggregate; right: what the release publishes, "
                  "over the same extent: that of the drawn squares, where the data is (the "
                  "map above shows all that was published)."),
        Paragraph(rule)])


def _metrics_section(data: ReleaseData) -> Section:
    rows = [(m.name, m.value, m.unit, plain(m.description))
            for m in data.metrics if not is_attack_metric(m.name)]
    section = Section("Utility and risk metrics")
    if rows:
        section.parts.append(Table(("metric", "value", "unit", "what it measures"), rows))
    else:
        section.parts.append(Paragraph("This release has no metrics."))
    section.parts.append(Paragraph("A dash is a value suppressed (a count below k) or "
                                   "undefined."))
    return section


def _risk_section(data: ReleaseData, out: Path, drawn: list[Path]) -> Section:
    panels, safer = risk_panels(data.series)
    section = Section("Re-identification risk, attack by attack")
    if panels:
        path, src = _figure(out, "risk.png", drawn)
        figures.risk_figure(panels, data.k, path)
        section.parts += [
            FigureRef(src, "risk of re-identification, one panel per attack",
                      "One panel per attack: the probability that the attacker picks the "
                      "right person, against how many observations of the person the "
                      "attacker knows. The solid red line is the worst-off person, the dashed "
                      f"blue line the average; no point may rise above the black line 1/k = "
                      f"{1.0 / data.k:.3g} (the shaded band)."),
            _series_table([one for panel in panels for one in panel.series])]
    else:
        section.parts.append(Paragraph(
            "This release has no risk curve: no metric series named reid.* or attack.* "
            "(run `anonymizers attack` on it to measure one)."))
    if safer:
        path, src = _figure(out, "risk_safer.png", drawn)
        figures.safer_figure(safer, path)
        section.parts += [
            FigureRef(src, "shares where higher is safer",
                      "Measures where HIGHER IS SAFER, on their own axis (not a probability "
                      "of re-identification): e.g. the share of attacked trajectories for "
                      "which the attack finds no match at all."),
            _series_table(safer)]
    attack = [(m.name, m.value, m.unit, plain(m.description))
              for m in data.metrics if is_attack_metric(m.name)]
    section.parts.append(Table(("attack metric", "value", "unit", "what it measures"), attack)
                         if attack else Paragraph("No attack metrics (attack_*) recorded."))
    return section


def _series_table(series: list[Series]) -> Table:
    return Table(("series", "unit", "what it measures"),
                 [(s.name, s.unit, plain(s.description)) for s in series])


def _series_section(data: ReleaseData, out: Path, drawn: list[Path]) -> Section | None:
    other = [s for s in data.series if not is_risk_series(s.name)]
    if not other:
        return None
    grouped: dict[str, list[Series]] = {}
    for one in other:
        grouped.setdefault(one.name.split(".")[0], []).append(one)
    section = Section("Other measures along an axis")
    for prefix, series in grouped.items():
        path, src = _figure(out, f"series_{len(drawn)}.png", drawn)
        figures.series_figure(series, prefix, path)
        section.parts += [FigureRef(src, f"series {prefix}", f"The series {prefix}.*"),
                          _series_table(series)]
    return section


def _tables_section(data: ReleaseData) -> Section:
    return Section("Tables of the release", [Table(
        ("table", "rows", "what it holds (COMMENT ON TABLE)"),
        [(t.name, t.rows, plain(t.comment)) for t in data.tables])])
