"""The headline utility of releases of one window, measured the same way for every family.

Every family lists its published locations through :attr:`Family.footprint` (a unit, the
persons it stands for, each location's geometry and the time it stands for). Against the
window's raw fixes that gives four figures a data owner can compare across methods:

* **share of fixes published**: the window's fixes that lie in a published location at a
  time it stands for (counted on a fixed sample of 20,000 fixes of larger windows: a
  binomial share's 95 % interval is then within ±0.7 points);
* **area per published location** (m²): what a location is generalized to;
* **range-query error**: seeded random boxes and time spans over the central 98 % of the
  fixes, each answered from the raw data (distinct persons inside) and from the release
  (the persons of the units with a location that may lie inside: "possibly inside", and
  that certainly do: "definitely inside"), averaged as |estimate - truth| / truth; and the
  same boxes over the whole window, which releases without time answer as well as any;
* **flow preservation**: the raw and the published moves between the squares of a lattice
  over the same extent, compared as a weighted Jaccard index (1: the same flows).

The figures read raw data: they are for the data owner choosing a method and are never
published in a release. Each is an aggregate over fixes, queries or flows (privacy rule 3
holds even here).

References
----------
Yarovoy, Bonchi, Lakshmanan, Wang. Anonymizing Moving Objects: How to Hide a MOB in a
Crowd? EDBT 2009, §6.3 (possibly / definitely inside range-query distortion).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

import numpy as np
import psycopg
from psycopg import sql

from anonymizers.db.sqlfiles import compose_sql, fetch_columns, run_sql_file
from anonymizers.errors import InputError
from anonymizers.release.spec import area_of_use

__all__ = ["QUERIES", "Headline", "Window", "measure_release", "prepare_window"]

SAMPLE = 20_000  # fixes the share of fixes published is counted on (all, when fewer)
QUERIES = 200  # range-query boxes per comparison (each asked over a span and the window)
LATTICE_SQUARES = 8  # the flow lattice has about this many squares along the longer side


@dataclass(frozen=True)
class Window:
    """The compared window as measured once: its extent, queries and flow lattice."""

    dataset: str
    start: datetime
    end: datetime
    srid: int
    fixes: int
    extent: tuple[float, float, float, float]  # x0, y0, x1, y1 (central 98 %)
    lattice_side: float  # metres

    @property
    def lattice(self) -> dict[str, float]:
        """The flow lattice, anchored half a square before the extent: not on the line
        where the extreme fixes (and centroids a rounding away from them) lie."""
        half = self.lattice_side / 2
        return {"x0": self.extent[0] - half, "y0": self.extent[1] - half,
                "side": self.lattice_side}


@dataclass(frozen=True)
class Headline:
    """One release's headline utility (NaN where a figure is undefined)."""

    fixes_published_share: float
    area_per_location_m2: float
    range_query_error: float  # possibly inside, over random spans
    range_query_error_definitely: float
    range_query_error_whole_window: float  # possibly inside, the same boxes, whole window
    flow_preservation: float
    locations: int
    queries: int  # queries with a true answer above 0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def prepare_window(conn: psycopg.Connection, dataset: str, start: datetime, end: datetime,
                   srid: int, seed: int = 0, n_queries: int = QUERIES) -> Window:
    """The window's fixes, random queries (with their true answers) and raw flows, as
    temporary tables of ``conn``'s session, asked of every release measured after."""
    found = fetch_columns(conn, "compare/010_window_fixes.sql", {
        "dataset": dataset, "window_start": start, "window_end": end, "srid": srid,
        "sample": SAMPLE})
    fixes = int(found["fixes"][0])
    if fixes == 0:
        raise InputError(f"the window {start} .. {end} of dataset {dataset!r} holds no fixes")
    x0, x1, y0, y1 = (float(found[name][0]) for name in ("x0", "x1", "y0", "y1"))
    side = (max(x1 - x0, y1 - y0) or 1.0) / LATTICE_SQUARES  # 1: every fix at one point
    window = Window(dataset, start, end, srid, fixes, (x0, y0, x1, y1), side)
    run_sql_file(conn, "compare/020_queries.sql")
    _copy_queries(conn, window, np.random.default_rng(seed), n_queries)
    run_sql_file(conn, "compare/025_query_truth.sql", {"window_start": start})
    run_sql_file(conn, "compare/030_raw_flows.sql", window.lattice)
    return window


def _copy_queries(conn: psycopg.Connection, window: Window, rng: np.random.Generator,
                  n: int) -> None:
    """Boxes with sides from 1/40 to 1/4 of the extent, spans from 1/24 to 1/2 of the
    window, placed uniformly inside both; each box also over the whole window."""
    x0, y0, x1, y1 = window.extent
    longer = max(x1 - x0, y1 - y0) or 1.0
    span = np.array([x1 - x0 or longer, y1 - y0 or longer])  # a line of fixes: square boxes
    sides = rng.uniform(span / 40, span / 4, size=(n, 2))
    corners = np.array([x0, y0]) + rng.random((n, 2)) * (span - sides)
    seconds = (window.end - window.start).total_seconds()
    lengths = rng.uniform(seconds / 24, seconds / 2, size=n)
    offsets = rng.random(n) * (seconds - lengths)
    zone = window.start.tzinfo
    with conn.cursor().copy("COPY compare_queries (query_id, box, t_start, t_end, "
                            "whole_window) FROM STDIN") as copy:
        for i in range(n):
            (cx, cy), (w, h) = corners[i], sides[i]
            box = (f"SRID={window.srid};POLYGON(({cx} {cy},{cx + w} {cy},{cx + w} {cy + h},"
                   f"{cx} {cy + h},{cx} {cy}))")
            start = window.start.timestamp() + offsets[i]
            copy.write_row([2 * i, box, datetime.fromtimestamp(start, zone),
                            datetime.fromtimestamp(start + lengths[i], zone), False])
            copy.write_row([2 * i + 1, box, window.start, window.end, True])


def measure_release(conn: psycopg.Connection, window: Window, release: str,
                    footprint: str) -> Headline:
    """The headline utility of ``release`` (published on ``window``), from the family's
    ``footprint`` query, against the tables :func:`prepare_window` made."""
    conn.execute("DROP TABLE IF EXISTS pg_temp.compare_footprint")
    # Every footprint may read the window's CRS and its area of use (a region holding it
    # says nothing about where: MOB's withheld positions).
    conn.execute(sql.SQL("CREATE TEMP TABLE compare_footprint AS ")
                 + compose_sql(footprint, release=release),
                 {"srid": window.srid, **area_of_use(window.srid)})
    run_sql_file(conn, "compare/035_footprint_index.sql", {
        "window_start": window.start,
        "window_seconds": (window.end - window.start).total_seconds()})
    found = {name: values[0] for name, values in fetch_columns(
        conn, "compare/040_release_measures.sql", window.lattice).items()}
    return Headline(
        fixes_published_share=_ratio(found["covered"], found["fixes"]),
        area_per_location_m2=_float(found["area"]),
        range_query_error=_float(found["possibly_error"]),
        range_query_error_definitely=_float(found["definitely_error"]),
        range_query_error_whole_window=_float(found["window_error"]),
        flow_preservation=_float(found["flow_preservation"]),
        locations=int(found["locations"]), queries=int(found["queries"]))


def _float(value: Any) -> float:
    return float("nan") if value is None else float(value)


def _ratio(part: Any, whole: Any) -> float:
    return float(part) / float(whole) if whole else float("nan")
