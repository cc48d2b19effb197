"""Run the Voronoi methods (kam_cut, kam_rec) step by step in-process, and read their work.

The steps are called directly (no Airflow), in the DAG's order, so a test can stop after
any step and inspect the run's work or build schema.
"""

from __future__ import annotations

import csv
import functools
import itertools
import math
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import psycopg
import shapely

from anonymizers.families.registry import SHARED_STEPS_AFTER, method_entry
from anonymizers.pipeline import steps
from anonymizers.release.spec import ReleaseSpec
from anonymizers.verifiers.rederive import CellLocator, derive_visits

RADIUS = 300.0  # metres: the synthetic city is small, the paper's 500 m leaves few cells

# The DAG's order for the Voronoi methods (the registry's), each run in-process.
STEPS: list[tuple[str, Callable[[dict[str, Any]], Any]]] = [
    (name, functools.partial(steps.run_step, name))
    for name in (*method_entry("kam_cut").steps, *SHARED_STEPS_AFTER)
]
STEP_NAMES = [name for name, _ in STEPS]


def voronoi_params(method: str = "kam_cut", k: int = 3, dataset: str = "city",
                   **extra: Any) -> dict[str, Any]:
    return {"dataset": dataset, "method": method, "k": k, "k_counts": "persons",
            "radius": RADIUS, **extra}


def run_voronoi_steps(params: dict[str, Any], run_id: str = "run-1",
                      until: str | None = None) -> ReleaseSpec:
    """prepare + every step up to and including ``until`` (default: all of them)."""
    if until is not None and until not in STEP_NAMES:
        raise ValueError(f"no step {until!r}")
    spec = steps.prepare(params, None, run_id)
    assert spec is not None, "the release is already published"
    for name, function in STEPS:
        function(spec)
        if name == until:
            break
    return ReleaseSpec.from_dict(spec)


def one(conn: psycopg.Connection, query: str, params: Any = None) -> tuple[Any, ...]:
    """The single row of ``query``."""
    row = conn.execute(query, params).fetchone()
    assert row is not None, f"no row: {query}"
    return row


def scalar(conn: psycopg.Connection, query: str, params: Any = None) -> Any:
    return one(conn, query, params)[0]


class Totals(NamedTuple):
    trajectories: int
    cell_visits: int


def published_totals(conn: psycopg.Connection, schema: str) -> Totals:
    """Published trajectories and cell visits (sum of n_cells) of a release schema."""
    row = one(conn, f"SELECT count(*), coalesce(sum(n_cells), 0) FROM {schema}.trajectories")
    return Totals(int(row[0]), int(row[1]))


def collapse(cells: Iterable[int]) -> tuple[int, ...]:
    """Consecutive repeats collapsed: (1, 1, 2, 1) -> (1, 2, 1)."""
    return tuple(cell for cell, _ in itertools.groupby(cells))


def anonymizer_sequences(conn: psycopg.Connection, work: str) -> dict[str, tuple[int, ...]]:
    """Each trajectory's cell sequence from the visits progressive generalization wrote."""
    rows = conn.execute(f"SELECT traj_id, array_agg(cell_id ORDER BY visit_no) "
                        f"FROM {work}.visits GROUP BY traj_id").fetchall()
    return {traj: tuple(cells) for traj, cells in rows}


# The membership in SQL that the tests hold fix_cells.py and the visits to.
REFERENCE_MEMBERSHIP = ("120_membership.sql", "126_segments.sql", "128_crossings.sql")


def reference_membership(conn: psycopg.Connection, work: str) -> None:
    """{work}.point_cells, .crossings and the view .memberships on the current cells, by
    the reference SQL (the segments' scratch tables are kept)."""
    from anonymizers.db.sqlfiles import run_sql_file

    with conn.transaction():
        for name in REFERENCE_MEMBERSHIP:
            run_sql_file(conn, "generalization/voronoi/" + name, work=work)


def reference_sequences(conn: psycopg.Connection, work: str) -> dict[str, tuple[int, ...]]:
    """Each trajectory's cell sequence from the reference memberships (fixes + crossings)."""
    rows = conn.execute(f"SELECT traj_id, array_agg(cell_id ORDER BY t) FROM {work}.memberships "
                        "GROUP BY traj_id").fetchall()
    return {traj: collapse(cells) for traj, cells in rows}


def verifier_sequences(conn: psycopg.Connection, work: str) -> dict[str, tuple[int, ...]]:
    """Each trajectory's cell sequence as the verifier derives it (shapely, with crossings)
    from the window's fixes and the work schema's current cells. Fixes in no cell are gaps:
    dropped, as the verifier's containment does, and the visits on both sides of a gap are
    consecutive (A, gap, A is one visit of A, as in the anonymizer's visits; either way a
    sequence is contained in the other). A trajectory wholly in gaps has no sequence."""
    rows = conn.execute(f"SELECT traj_id, user_id, ST_X(geom), ST_Y(geom) FROM {work}.points "
                        "ORDER BY traj_id, t").fetchall()
    traj, names = pd.factorize(pd.Series([row[0] for row in rows]), sort=False)
    owner = pd.factorize(pd.Series([row[1] for row in rows]), sort=False)[0]
    x = np.array([row[2] for row in rows], dtype=float)
    y = np.array([row[3] for row in rows], dtype=float)
    cells = conn.execute(f"SELECT cell_id, ST_AsBinary(geom) FROM {work}.cells ORDER BY cell_id"
                         ).fetchall()
    ids = np.array([cell[0] for cell in cells], dtype=np.int64)
    polygons = shapely.from_wkb([bytes(cell[1]) for cell in cells])
    derived = derive_visits(traj, owner, x, y, CellLocator(ids, polygons), crossings=True)
    sequences, _ = derived.sequences(drop_outside=True)
    return {str(names[i]): collapse(int(c) for c in seq) for i, seq in enumerate(sequences)
            if seq}


def schemas(conn: psycopg.Connection, prefix: str) -> list[str]:
    rows = conn.execute("SELECT nspname FROM pg_namespace WHERE nspname LIKE %s ORDER BY 1",
                        (prefix.replace("_", "\\_") + "%",)).fetchall()
    return [row[0] for row in rows]


# --------------------------------------------------------------------- hand-made datasets

ORIGIN = (11.2558, 43.7696)  # lon, lat (Florence, UTM zone 32N)


def lonlat(x: float, y: float) -> tuple[float, float]:
    """Metres east/north of ORIGIN -> lon/lat (equirectangular, fine at city scale)."""
    lon0, lat0 = ORIGIN
    return (lon0 + x / (111_320.0 * math.cos(math.radians(lat0))), lat0 + y / 110_540.0)


class Fix(NamedTuple):
    traj_id: str
    user_id: str
    t: datetime
    x: float  # metres east of ORIGIN
    y: float  # metres north of ORIGIN


def write_points_csv(path: Path, fixes: Iterable[Fix]) -> Path:
    """A points CSV the loader takes (traj_id,user_id,t,lon,lat), rows in trajectory order."""
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["traj_id", "user_id", "t", "lon", "lat"])
        for fix in sorted(fixes, key=lambda f: (f.traj_id, f.t)):
            lon, lat = lonlat(fix.x, fix.y)
            writer.writerow([fix.traj_id, fix.user_id, fix.t.isoformat(), f"{lon:.7f}",
                             f"{lat:.7f}"])
    return path


def trip(traj_id: str, user_id: str, start: datetime, stops: list[tuple[float, float]],
         minutes_per_leg: float = 5.0) -> list[Fix]:
    """One fix at each of ``stops``, ``minutes_per_leg`` apart."""
    return [Fix(traj_id, user_id, start + timedelta(minutes=i * minutes_per_leg), x, y)
            for i, (x, y) in enumerate(stops)]


def route(traj_id: str, user_id: str, start: datetime, corners: list[tuple[float, float]],
          spacing: float = 250.0, seconds_per_fix: float = 60.0) -> list[Fix]:
    """Fixes every ``spacing`` metres along the polyline through ``corners``."""
    points = [corners[0]]
    for (x0, y0), (x1, y1) in itertools.pairwise(corners):
        steps = max(1, math.ceil(math.hypot(x1 - x0, y1 - y0) / spacing))
        points += [(x0 + (x1 - x0) * i / steps, y0 + (y1 - y0) * i / steps)
                   for i in range(1, steps + 1)]
    return [Fix(traj_id, user_id, start + timedelta(seconds=i * seconds_per_fix), x, y)
            for i, (x, y) in enumerate(points)]


def load_fixes(db_url: str, folder: Path, dataset: str, fixes: Iterable[Fix]) -> str:
    """Load hand-made fixes as ``dataset``."""
    from anonymizers.loading import load_dataset

    load_dataset(write_points_csv(folder / f"{dataset}.csv", fixes), dataset, url=db_url)
    return dataset


def on_lattice(value: float, snap: float) -> bool:
    """``value`` is a multiple of ``snap`` (within 1e-6 of a step, as the verifier checks)."""
    return abs(value / snap - round(value / snap)) <= 1e-6


def extent(conn: psycopg.Connection, table: str, column: str = "geom") -> tuple[float, ...]:
    """(xmin, ymin, xmax, ymax) of a geometry column, e.g. ``work_x.cells``."""
    return tuple(float(v) for v in one(
        conn, f"SELECT ST_XMin(e), ST_YMin(e), ST_XMax(e), ST_YMax(e) "
              f"FROM (SELECT ST_Extent({column})::box2d AS e FROM {table}) AS x"))


def projected_fixes(conn: psycopg.Connection, work: str) -> pd.DataFrame:
    """The window's fixes in the release's metric CRS: traj_id, user_id, t, x, y."""
    rows = conn.execute(f"SELECT traj_id, user_id, t, ST_X(geom), ST_Y(geom) "
                        f"FROM {work}.points ORDER BY traj_id, t").fetchall()
    return pd.DataFrame(rows, columns=["traj_id", "user_id", "t", "x", "y"])
