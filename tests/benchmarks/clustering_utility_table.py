"""Utility side by side on one T-Drive day at one k: TCAA, the three MLA variants and kam_rec
(issue 9), every release verified and published through the shared machinery.

Per release: what it published, the share of persons and of fixes it keeps, the area of
the region a published location is generalized to, kam_rec's displacement, and one
range-query distortion measured the same way on every release: 100 random rectangles
(seeded; sides 1/40 to 1/4 of the extent of the central 98 % of the day's fixes), the true
count being the distinct raw trajectories with a fix inside, the released estimate the
published trajectory units whose geometry overlaps the rectangle (groups: their
n_persons, each member a trajectory or a piece of one; kam_rec: its published trajectories);
the error |estimate - true| / true is averaged over rectangles with a true count. Two
estimates, as MOB's §6.3 (seed 003), over the whole window since kam_rec publishes no time:
"possibly inside" counts the units with a region or cell overlapping the rectangle,
"definitely inside" those with a region or cell inside it. Writes
tests/benchmarks/results/clustering_utility_table.json and prints a Markdown table.

Run: .venv/bin/python tests/benchmarks/clustering_utility_table.py [day] [k]
"""

from __future__ import annotations

import sys
from datetime import datetime, timedelta
from typing import Any

import numpy as np
import psycopg
from _common import peak_rss_mib, print_markdown_table, scratch_database, write_results
from _release_runs import run_release
from bench_kam_rec_tdrive import TDRIVE
from psycopg import sql

METHODS = ("tcaa", "mla_heuristic", "mla_kmeans", "mla_iterative_kmeans", "kam_rec")
QUERIES = 100
COLUMNS = ("method", "published", "persons kept", "fixes kept", "area per location (km²)",
           "displacement (m)", "range error (possibly inside)",
           "range error (definitely inside)", "anonymize (s)", "verify (s)", "total (s)")
ANONYMIZE_STEP = {"tcaa": "cluster_pieces", "kam_rec": "anonymize"}


def main(day: str = "2008-02-03", k: str = "5") -> None:
    from anonymizers.loading import load_dataset

    start = datetime.fromisoformat(f"{day}T00:00:00+00:00")
    window = {"start": start.isoformat(), "end": (start + timedelta(days=1)).isoformat()}
    runs, rows = [], []
    with scratch_database() as url:
        load_dataset(TDRIVE, "tdrive", url=url)
        for method in METHODS:
            params = {"dataset": "tdrive", "method": method, "k": int(k), **window,
                      "accept_composition_risk": "benchmark: methods side by side"}
            tables = ("cells", "trajectories") if method == "kam_rec" else ("groups",)
            figures = run_release(url, params, f"utility-{method}", tables=tables)
            with psycopg.connect(url) as conn:
                figures.update(_measures(conn, figures["release"], method))
            figures["peak_rss_mib"] = round(peak_rss_mib(), 1)
            runs.append(figures)
            rows.append(_row(method, figures))
            print(" | ".join(map(str, rows[-1])), flush=True)
    write_results("clustering_utility_table", {"day": day, "k": int(k), "runs": runs})
    print_markdown_table(COLUMNS, rows)


def _row(method: str, figures: dict[str, Any]) -> tuple:
    m, steps = figures["metrics"], figures["steps_s"]
    anonymize = steps.get(ANONYMIZE_STEP.get(method, "align_clusters"))
    published = (f"{figures['trajectories']} trajectories" if method == "kam_rec"
                 else f"{figures['groups']} groups")
    displacement = m.get("displacement_avg_m")
    return (method, published, f"{figures['persons_kept']:.2f}", figures["fixes_kept"],
            f"{figures['area_per_location_m2'] / 1e6:.3f}",
            f"{displacement:.0f}" if displacement is not None else "-",
            f"{figures['range_error_possibly']:.3f}", f"{figures['range_error_definitely']:.3f}",
            anonymize, steps["verify"],
            figures["total_s"])


def _measures(conn: psycopg.Connection, release: str, method: str) -> dict[str, Any]:
    m = dict(conn.execute(sql.SQL("SELECT name, value FROM {}").format(
        sql.Identifier(release, "metrics"))).fetchall())
    if method == "kam_rec":
        persons = m["persons_out"] / m["persons_in"]
        fixes = f"{m['cell_visits_out'] / m['cell_visits_in']:.3f} (visits)"
        area = _kam_rec_area_per_location(conn, release)
    else:
        persons, fixes = m["persons_published_share"], f"{m['fixes_published_share']:.3f}"
        area = m.get("area_per_location_m2") or m["area_per_region_m2"]
    possibly, definitely = _range_query_errors(conn, release, method)
    return {"persons_kept": float(persons), "fixes_kept": fixes,
            "area_per_location_m2": float(area), "range_error_possibly": possibly,
            "range_error_definitely": definitely}


def _kam_rec_area_per_location(conn: psycopg.Connection, release: str) -> float:
    """Mean area of the cell of each published location (each cell of each published
    trajectory)."""
    return float(conn.execute(sql.SQL(
        "SELECT avg(ST_Area(c.geom)) FROM {t} AS t CROSS JOIN LATERAL unnest(t.cells) AS u(id) "
        "JOIN {c} AS c ON c.cell_id = u.id").format(
        t=sql.Identifier(release, "trajectories"), c=sql.Identifier(release, "cells"))
    ).fetchone()[0])


def _range_query_errors(conn: psycopg.Connection, release: str,
                        method: str) -> tuple[float, float]:
    """Mean |estimate - true| / true over the seeded rectangles with a true count, for the
    possibly-inside and the definitely-inside estimate."""
    _window_fixes(conn, release)
    _queries(conn, release)
    truth = dict(conn.execute(
        "SELECT q.query_id, count(DISTINCT f.traj_id) FROM bench_queries AS q "
        "JOIN bench_fixes AS f ON f.xy && q.box GROUP BY q.query_id").fetchall())
    errors = []
    for test in ("ST_Intersects", "ST_Within"):
        estimate = dict(conn.execute(_estimate_sql(release, method, test)).fetchall())
        error = [abs(float(estimate.get(q, 0)) - n) / n for q, n in truth.items() if n]
        errors.append(float(np.mean(error)) if error else float("nan"))
    return errors[0], errors[1]


def _estimate_sql(release: str, method: str, test: str) -> sql.Composed:
    """Published units per rectangle whose geometry passes ``test`` (region, rectangle)."""
    if method == "kam_rec":
        return sql.SQL(
            "SELECT q.query_id, count(DISTINCT t.traj_id) FROM bench_queries AS q "
            "JOIN {c} AS c ON c.geom && q.box AND {test}(c.geom, q.box) "
            "JOIN {t} AS t ON c.cell_id = ANY (t.cells) GROUP BY q.query_id").format(
            c=sql.Identifier(release, "cells"), t=sql.Identifier(release, "trajectories"),
            test=sql.Identifier(test.lower()))
    return sql.SQL(
        "SELECT q.query_id, sum(g.n_persons) FROM bench_queries AS q "
        "CROSS JOIN LATERAL (SELECT DISTINCT r.group_id FROM {r} AS r "
        "                    WHERE r.geom && q.box AND {test}(r.geom, q.box)) AS hit "
        "JOIN {g} AS g USING (group_id) GROUP BY q.query_id").format(
        r=sql.Identifier(release, "group_regions"), g=sql.Identifier(release, "groups"),
        test=sql.Identifier(test.lower()))


def _window_fixes(conn: psycopg.Connection, release: str) -> None:
    conn.execute("DROP TABLE IF EXISTS bench_fixes")
    conn.execute(sql.SQL(
        "CREATE TEMP TABLE bench_fixes AS SELECT p.traj_id, ST_Transform(p.geom, m.srid) AS xy "
        "FROM raw.points AS p JOIN raw.datasets AS d USING (dataset_id) CROSS JOIN {m} AS m "
        "WHERE d.name = m.dataset AND p.t >= m.window_start AND p.t < m.window_end").format(
        m=sql.Identifier(release, "manifest")))
    conn.execute("CREATE INDEX ON bench_fixes USING gist (xy)")
    conn.execute("ANALYZE bench_fixes")


def _queries(conn: psycopg.Connection, release: str) -> None:
    """The same seeded rectangles for every release (the day's fixes are the same)."""
    srid = conn.execute(sql.SQL("SELECT srid FROM {}").format(
        sql.Identifier(release, "manifest"))).fetchone()[0]
    x0, x1, y0, y1 = conn.execute(
        "SELECT percentile_cont(0.01) WITHIN GROUP (ORDER BY ST_X(xy)), "
        "percentile_cont(0.99) WITHIN GROUP (ORDER BY ST_X(xy)), "
        "percentile_cont(0.01) WITHIN GROUP (ORDER BY ST_Y(xy)), "
        "percentile_cont(0.99) WITHIN GROUP (ORDER BY ST_Y(xy)) FROM bench_fixes").fetchone()
    rng = np.random.default_rng(0)
    span = np.array([x1 - x0, y1 - y0])
    sides = rng.uniform(span / 40, span / 4, size=(QUERIES, 2))
    corners = np.array([x0, y0]) + rng.random((QUERIES, 2)) * (span - sides)
    conn.execute("DROP TABLE IF EXISTS bench_queries")
    conn.execute("CREATE TEMP TABLE bench_queries (query_id int, box geometry)")
    with conn.cursor().copy("COPY bench_queries FROM STDIN") as copy:
        for i, ((cx, cy), (w, h)) in enumerate(zip(corners, sides, strict=True)):
            copy.write_row([i, f"SRID={srid};POLYGON(({cx} {cy},{cx + w} {cy},{cx + w} "
                               f"{cy + h},{cx} {cy + h},{cx} {cy}))"])


if __name__ == "__main__":
    main(*sys.argv[1:3])
