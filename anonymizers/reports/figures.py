"""The report's PNG figures (matplotlib, no display, no tiles): maps, small multiples, curves.

Every function draws published data (a release's layers, metrics and series) or the
k-supported squares of the density view, and writes one PNG. Coordinates are the release's
metric CRS; there is no basemap, so the page needs no tile server or network.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

import numpy as np
import shapely
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator

from anonymizers.reports.density import DensityView
from anonymizers.reports.release_data import LayerRows, Series
from anonymizers.reports.risk import RiskPanel

__all__ = ["Extent", "before_after_figure", "density_extent", "extent_of", "map_figure",
           "risk_figure", "safer_figure", "series_figure", "small_multiples_figure", "time_panels"]

Extent = tuple[float, float, float, float]  # xmin, ymin, xmax, ymax
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2")
DPI = 100
DENSE_POLYGONS = 2_000  # more rectangles than this are drawn as a coverage image
COVERAGE_PIXELS = 800  # the coverage image's longer side


def extent_of(layers: Sequence[LayerRows], density: DensityView | None) -> Extent | None:
    """The box around every drawn geometry and shown square, with a 3 % margin."""
    boxes = [shapely.total_bounds(np.asarray(rows.geometries, dtype=object))
             for rows in layers if rows.geometries]
    if density is not None and density.bins:
        boxes.append(density_extent(density))
    return _padded(boxes)


def density_extent(density: DensityView) -> np.ndarray:
    """The box of the shown squares (lattice edges: it depends on no single fix)."""
    corners = np.array([b.bounds for b in density.bins])
    return np.array([corners[:, 0].min(), corners[:, 1].min(),
                     corners[:, 2].max(), corners[:, 3].max()])


def _padded(boxes: list[np.ndarray]) -> Extent | None:
    boxes = [box for box in boxes if np.all(np.isfinite(box))]
    if not boxes:
        return None
    stacked = np.vstack(boxes)
    xmin, ymin = stacked[:, 0].min(), stacked[:, 1].min()
    xmax, ymax = stacked[:, 2].max(), stacked[:, 3].max()
    pad = 0.03 * max(xmax - xmin, ymax - ymin, 1.0)
    return (xmin - pad, ymin - pad, xmax + pad, ymax + pad)


def _widths(weights: Sequence[float | None], low: float = 0.4, high: float = 4.0) -> np.ndarray:
    """Line widths (or marker scales) growing linearly with the weights."""
    values = np.array([np.nan if w is None else w for w in weights], dtype=float)
    if values.size == 0 or np.all(np.isnan(values)):
        return np.full(values.size, 1.0)
    lo, hi = np.nanmin(values), np.nanmax(values)
    scaled = (values - lo) / (hi - lo) if hi > lo else np.full(values.size, 0.5)
    return np.where(np.isnan(scaled), low, low + (high - low) * scaled)


def _parts(rows: LayerRows, keep: np.ndarray | None = None
           ) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray], np.ndarray]:
    """Polygon rings, lines and points of a layer (multi-parts exploded), with the width
    of each line and point."""
    polygons: list[np.ndarray] = []
    lines: list[np.ndarray] = []
    points: list[np.ndarray] = []
    line_widths: list[float] = []
    widths = _widths(rows.weights)
    for index, geometry in enumerate(rows.geometries):
        if keep is not None and not keep[index]:
            continue
        for part in shapely.get_parts(geometry):
            kind = part.geom_type
            if kind == "Polygon":
                polygons.append(np.asarray(part.exterior.coords))
            elif kind == "LineString":
                lines.append(np.asarray(part.coords))
                line_widths.append(float(widths[index]))
            elif kind == "Point":
                points.append(np.asarray(part.coords[0]))
                line_widths.append(float(widths[index]))
    return polygons, lines, points, np.asarray(line_widths)


def _draw_layer(ax: Axes, rows: LayerRows, colour: str, keep: np.ndarray | None = None,
                fill_alpha: float = 0.08, view: Extent | None = None) -> None:
    polygons, lines, points, widths = _parts(rows, keep)
    boxes = _rectangles(polygons) if len(polygons) > DENSE_POLYGONS else None
    if boxes is not None:
        _draw_coverage(ax, boxes, colour, view)
    elif polygons:
        ax.add_collection(PolyCollection(polygons, facecolors=colour, edgecolors=colour,
                                         linewidths=0.4, alpha=max(fill_alpha, 0.02)))
        ax.add_collection(PolyCollection(polygons, facecolors="none", edgecolors=colour,
                                         linewidths=0.4, alpha=0.5))
    if lines:
        ax.add_collection(LineCollection(lines, colors=colour, alpha=0.6,
                                         linewidths=widths[:len(lines)]))
    if points:
        xy = np.vstack(points)
        ax.scatter(xy[:, 0], xy[:, 1], s=6 * widths[len(lines):] ** 2, color=colour,
                   alpha=0.7, linewidths=0)


def _rectangles(polygons: list[np.ndarray]) -> np.ndarray | None:
    """The (x0, y0, x1, y1) of every ring when each is an axis-aligned rectangle (the
    regions of MOB, TCAA and MLA), else None."""
    boxes = np.empty((len(polygons), 4))
    for index, ring in enumerate(polygons):
        xs, ys = np.unique(ring[:, 0]), np.unique(ring[:, 1])
        if ring.shape[0] != 5 or xs.size > 2 or ys.size > 2:
            return None
        boxes[index] = (xs[0], ys[0], xs[-1], ys[-1])
    return boxes


def _draw_coverage(ax: Axes, boxes: np.ndarray, colour: str, view: Extent | None = None
                   ) -> None:
    """Many rectangles as one image: how many of them cover each pixel (log scale, the
    layer's colour). Tens of thousands of translucent polygons took minutes to draw and
    showed only a blur; the count of overlapping regions is what the eye reads there."""
    from matplotlib.colors import LinearSegmentedColormap, to_rgb

    if view is not None:  # counted over the map's extent only: its pixels are the map's
        boxes = _clipped(boxes, view)
        if boxes.size == 0:
            return
    x_min, y_min = boxes[:, 0].min(), boxes[:, 1].min()
    x_max, y_max = boxes[:, 2].max(), boxes[:, 3].max()
    size = max(x_max - x_min, y_max - y_min, 1.0) / COVERAGE_PIXELS
    width = math.ceil((x_max - x_min) / size) + 1
    height = math.ceil((y_max - y_min) / size) + 1
    ix0 = np.floor((boxes[:, 0] - x_min) / size).astype(np.int64)
    iy0 = np.floor((boxes[:, 1] - y_min) / size).astype(np.int64)
    # A rectangle covers every pixel it touches (at least one), so none vanishes.
    ix1 = np.maximum(np.ceil((boxes[:, 2] - x_min) / size).astype(np.int64), ix0 + 1)
    iy1 = np.maximum(np.ceil((boxes[:, 3] - y_min) / size).astype(np.int64), iy0 + 1)
    steps = np.zeros((height + 1, width + 1), dtype=np.int64)  # 2-D difference array
    np.add.at(steps, (iy0, ix0), 1)
    np.add.at(steps, (iy0, ix1), -1)
    np.add.at(steps, (iy1, ix0), -1)
    np.add.at(steps, (iy1, ix1), 1)
    covered = np.cumsum(np.cumsum(steps, axis=0), axis=1)[:height, :width]
    shown = np.ma.masked_less(covered.astype(float), 1.0)
    # From the least covered point: where regions the size of the whole area (MOB's
    # withheld positions) cover everything, the scale shows what the smaller ones add.
    low = float(shown.min()) if shown.count() else 1.0
    rgb = to_rgb(colour)
    ramp = LinearSegmentedColormap.from_list("coverage", [(*rgb, 0.15), (*rgb, 0.95)])
    image = ax.imshow(shown, origin="lower", cmap=ramp, interpolation="nearest",
                      extent=(x_min, x_min + width * size, y_min, y_min + height * size),
                      norm=_coverage_norm(low, float(covered.max())))
    bar = ax.figure.colorbar(image, cax=ax.inset_axes((0.05, 0.05, 0.4, 0.025)),
                             orientation="horizontal")
    bar.set_label("regions covering each point", fontsize=7)
    bar.ax.tick_params(labelsize=6)


def _clipped(boxes: np.ndarray, view: Extent) -> np.ndarray:
    """The boxes cut to ``view``; those outside it dropped."""
    cut = np.column_stack([np.maximum(boxes[:, 0], view[0]), np.maximum(boxes[:, 1], view[1]),
                           np.minimum(boxes[:, 2], view[2]), np.minimum(boxes[:, 3], view[3])])
    return cut[(cut[:, 2] > cut[:, 0]) & (cut[:, 3] > cut[:, 1])]


def _coverage_norm(low: float, high: float) -> Normalize:
    """A log scale over a wide range of counts, a linear one over a narrow range (whose
    log ticks would crowd into one unreadable label)."""
    from matplotlib.colors import LogNorm

    high = max(high, low + 1.0)
    return LogNorm(vmin=low, vmax=high) if high >= 10 * low else Normalize(low, high)


def crs_name(srid: int) -> str:
    """``EPSG:32632 (WGS 84 / UTM zone 32N)``: the code and the name a reader knows."""
    from pyproj import CRS
    from pyproj.exceptions import CRSError

    try:
        return f"EPSG:{srid} ({CRS.from_epsg(srid).name})"
    except CRSError:
        return f"EPSG:{srid}"


def scale_length(span: float) -> float:
    """A round length (1, 2 or 5 times a power of ten, metres) near a fifth of ``span``.

    >>> scale_length(12_000), scale_length(900), scale_length(40_000)
    (2000.0, 100.0, 5000.0)
    """
    target = max(span, 1.0) / 5
    power = 10 ** math.floor(math.log10(target))
    return float(max(step * power for step in (1, 2, 5) if step * power <= target))


def _scale_bar(ax: Axes, extent: Extent) -> None:
    """A bar of a round length at the lower right, labelled in m or km."""
    width = extent[2] - extent[0]
    length = scale_length(width)
    x1 = extent[2] - 0.04 * width
    y = extent[1] + 0.04 * (extent[3] - extent[1])
    ax.plot([x1 - length, x1], [y, y], color="black", linewidth=3, solid_capstyle="butt")
    label = f"{length / 1000:g} km" if length >= 1000 else f"{length:g} m"
    ax.annotate(label, (x1 - length / 2, y), xytext=(0, 4), textcoords="offset points",
                ha="center", va="bottom", fontsize=8)


def _frame(ax: Axes, extent: Extent, srid: int, scale_bar: bool = True) -> None:
    ax.set_xlim(extent[0], extent[2])
    ax.set_ylim(extent[1], extent[3])
    ax.set_aspect("equal")
    ax.ticklabel_format(style="plain", useOffset=False)
    ax.xaxis.set_major_locator(MaxNLocator(4))
    ax.yaxis.set_major_locator(MaxNLocator(5))
    ax.tick_params(labelsize=7)
    ax.set_xlabel(f"easting (m), {crs_name(srid)}", fontsize=8)
    ax.set_ylabel("northing (m)", fontsize=8)
    if scale_bar:
        _scale_bar(ax, extent)


def _save(figure: Figure, path: Path) -> Path:
    figure.savefig(path, dpi=DPI, bbox_inches="tight")
    return path


def map_figure(layers: Sequence[LayerRows], extent: Extent, srid: int, path: Path) -> Path:
    """Every layer of the release over the extent, one colour per layer (a legend)."""
    figure = Figure(figsize=(11, 11))
    ax = figure.add_subplot()
    for index, rows in enumerate(layers):
        colour = COLOURS[index % len(COLOURS)]
        fill = 0.02 if rows.layer.over_time else 0.08  # many overlapping regions
        _draw_layer(ax, rows, colour, fill_alpha=fill, view=extent)
        ax.plot([], [], color=colour, linewidth=3, label=rows.layer.label)
    if layers:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9, frameon=False)
    _frame(ax, extent, srid)
    ax.set_title("Published geometry", fontsize=10)
    return _save(figure, path)


def _draw_density(ax: Axes, density: DensityView) -> None:
    from matplotlib.colors import LogNorm

    rings = [np.array([(x0, y0), (x1, y0), (x1, y1), (x0, y1)])
             for x0, y0, x1, y1 in (b.bounds for b in density.bins)]
    values = np.array([b.n_fixes for b in density.bins], dtype=float)
    norm = LogNorm(vmin=max(values.min(), 1.0), vmax=max(values.max(), 2.0))
    collection = PolyCollection(rings, array=values, cmap="viridis", norm=norm,
                                edgecolors="none")
    ax.add_collection(collection)
    # Inside the axes, so that the before and after panels keep the same size.
    bar = ax.figure.colorbar(collection, cax=ax.inset_axes((0.55, 0.05, 0.4, 0.025)),
                             orientation="horizontal")
    bar.set_label("fixes per square (interval-filtered)", fontsize=7)
    bar.ax.tick_params(labelsize=6)


def before_after_figure(density: DensityView | None, layers: Sequence[LayerRows],
                        extent: Extent, srid: int, path: Path) -> Path:
    """Left: the raw window as squares of at least k persons; right: what was published.
    Both over the shown squares' extent when there are some (where the data is: a few
    far-away regions, e.g. of GPS outliers, would shrink it to a dot), else ``extent``."""
    if density is not None and density.bins:
        extent = _padded([density_extent(density)]) or extent
    figure = Figure(figsize=(16, 8))
    before, after = figure.subplots(1, 2)
    if density is not None:
        _draw_density(before, density)
        before.set_title(f"Before: raw fixes in {density.size:g} m squares of at least "
                         f"k = {density.k} persons", fontsize=10)
    else:
        before.set_title("Before: no square holds k persons", fontsize=10)
    for index, rows in enumerate(layers):
        _draw_layer(after, rows, COLOURS[index % len(COLOURS)],
                    fill_alpha=0.02 if rows.layer.over_time else 0.08, view=extent)
    after.set_title("After: the published geometry", fontsize=10)
    for ax in (before, after):
        _frame(ax, extent, srid)
    return _save(figure, path)


def time_panels(start: datetime, end: datetime, n_times: int,
                most: int = 12) -> list[tuple[datetime, datetime]]:
    """The window cut into at most ``most`` equal half-open panels (fewer when the layer
    has fewer distinct times)."""
    count = max(1, min(most, n_times))
    step = (end - start) / count
    return [(start + i * step, start + (i + 1) * step) for i in range(count)]


def _in_panel(rows: LayerRows, low: datetime, high: datetime) -> np.ndarray:
    """Rows whose time span [t_start, t_end] meets the panel [low, high)."""
    return np.array([s is None or (s < high and (e or s) >= low)
                     for s, e in zip(rows.starts, rows.ends, strict=True)], dtype=bool)


def small_multiples_figure(rows: LayerRows, window: tuple[datetime, datetime],
                           extent: Extent, srid: int, path: Path, colour: str = COLOURS[0]
                           ) -> Path:
    """A layer that varies over time, one small map per equal part of the window."""
    distinct = len({s for s in rows.starts if s is not None})
    panels = time_panels(window[0], window[1], distinct)
    columns = min(4, len(panels))
    lines = math.ceil(len(panels) / columns)
    figure = Figure(figsize=(4.4 * columns, 4.4 * lines))
    axes = np.atleast_1d(figure.subplots(lines, columns, squeeze=False)).ravel()
    for ax, (low, high) in zip(axes, panels, strict=False):
        keep = _in_panel(rows, low, high)
        _draw_layer(ax, rows, colour, keep=keep, fill_alpha=0.05, view=extent)
        _frame(ax, extent, srid, scale_bar=ax is axes[0])
        ax.set_xlabel("")
        ax.set_ylabel("")
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_title(f"{low:%Y-%m-%d %H:%M} – {high:%H:%M} UTC ({int(keep.sum())})",
                     fontsize=8)
    for ax in axes[len(panels):]:
        ax.set_axis_off()
    figure.suptitle(f"{rows.layer.label}, over the window ({crs_name(srid)})", fontsize=10)
    return _save(figure, path)


def _plot_series(ax: Axes, series: Series, **style: object) -> None:
    x = np.array(series.x, dtype=float)
    y = np.array([np.nan if v is None else v for v in series.values], dtype=float)
    ax.plot(x, y, marker="o", markersize=3, linewidth=1.2,
            **{"label": series.name, **style})  # type: ignore[arg-type]


# One style per kind of curve, the same in every panel: one legend serves them all.
CURVE_STYLES = {"max": ("#d62728", "-", "largest probability (worst-off person)"),
                "mean": ("#1f77b4", "--", "average probability over attacked persons")}


def _curve_style(name: str) -> tuple[str, str, str]:
    return CURVE_STYLES.get(name.rsplit(".", 1)[-1], ("#555555", ":", name))


def risk_figure(panels: Sequence[RiskPanel], k: int, path: Path) -> Path:
    """Small multiples: one panel per attack, probability of re-identification (0 to 1)
    against the number of observations the attacker knows, the 1/k line labelled in every
    panel, one legend below the panels (outside the data)."""
    columns = min(3, len(panels))
    rows = math.ceil(len(panels) / columns)
    figure = Figure(figsize=(4.2 * columns, 3.0 * rows + 0.8), layout="constrained")
    axes = np.atleast_1d(figure.subplots(rows, columns, squeeze=False, sharey=True)).ravel()
    bound = 1.0 / k
    labels: dict[str, tuple[str, str]] = {}
    for ax, panel in zip(axes, panels, strict=False):
        for one in panel.series:
            colour, line, label = _curve_style(one.name)
            _plot_series(ax, one, color=colour, linestyle=line, label=label)
            labels[label] = (colour, line)
        ax.axhline(bound, color="black", linewidth=1.2, zorder=1)  # under a curve at 1/k
        ax.annotate(f"1/k = {bound:.2g}", (1.0, bound), xycoords=("axes fraction", "data"),
                    xytext=(-2, 3), textcoords="offset points", ha="right", fontsize=8)
        ax.axhspan(bound, 1.05, color="#d62728", alpha=0.06, linewidth=0)
        ax.set_ylim(0, 1.05)
        ax.set_title(panel.title, fontsize=9)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        xs = {x for one in panel.series for x in one.x}
        if len(xs) == 1:  # one knowledge length: a point, not an axis of fractions
            ax.set_xlim(min(xs) - 1, min(xs) + 1)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
    for ax in axes[len(panels):]:
        ax.set_axis_off()
    figure.supxlabel("observations the attacker knows (j)", fontsize=9)
    figure.supylabel("probability of re-identification", fontsize=9)
    handles = [Line2D([], [], color=c, linestyle=ls, marker="o",  # type: ignore[arg-type]
                      markersize=3)
               for c, ls in labels.values()]
    handles.append(Line2D([], [], color="black", linewidth=1.2))
    figure.legend(handles, [*labels, "1/k: no one may be re-identified above this line"],
                  loc="outside upper center", ncol=3, fontsize=8, frameon=False)
    return _save(figure, path)


def safer_figure(series: Sequence[Series], path: Path) -> Path:
    """Measures where higher is safer (e.g. the share of attacked trajectories that defeat
    the attack), on their own axis: never read as a probability of re-identification."""
    figure = Figure(figsize=(7, 3.6), layout="constrained")
    ax = figure.add_subplot()
    for one in series:
        _plot_series(ax, one)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("observations the attacker knows (j)", fontsize=9)
    ax.set_ylabel("share (higher is safer)", fontsize=9)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(alpha=0.3)
    figure.legend(loc="outside lower center", fontsize=8, frameon=False)
    ax.set_title("Shares of attacked trajectories that defeat the attack (higher is safer)",
                 fontsize=9)
    return _save(figure, path)


def series_figure(series: Sequence[Series], title: str, path: Path) -> Path:
    """Other series of the release (e.g. per iteration, per length bin), one line each."""
    figure = Figure(figsize=(8, 4.5))
    ax = figure.add_subplot()
    for one in series:
        _plot_series(ax, one)
    ax.set_xlabel("x (see the table below)", fontsize=9)
    ax.set_ylabel(", ".join(sorted({one.unit for one in series})), fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(title, fontsize=10)
    return _save(figure, path)
