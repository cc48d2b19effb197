"""Utility and risk metrics of real releases of the small synthetic city.

Each test builds a release with the pipeline's own steps (up to build_release), computes
its metrics as the metrics step does, and checks them against the manifest and against
the privacy bound: on the pipeline's output the linking attack never beats 1/k (seed 000
Theorem 10). A release planted with a sequence of fewer than k persons is refused.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import psycopg
import pytest
from pipeline_helpers import STEP_ORDER, release_params, run_steps
from psycopg.types.json import Jsonb

from anonymizers.db.connection import connect
from anonymizers.db.sqlfiles import run_sql_file
from anonymizers.errors import PrivacyViolation
from anonymizers.families.generalization import metrics as release_metrics
from anonymizers.families.generalization.cluster_preservation import cluster_preservation_report
from anonymizers.families.generalization.displacement import displacement_measures
from anonymizers.families.generalization.metrics import (
    LENGTH_BIN_EDGES_M,
    RISK_OBSERVATIONS,
    compute_release_metrics,
    measure_risk,
)
from anonymizers.families.generalization.reidentification import (
    NO_CELL,
    generalize_observations,
    reidentification_risk,
)
from anonymizers.families.registry import method_entry
from anonymizers.metrics import writer
from anonymizers.metrics.shares import Ratio
from anonymizers.pipeline import steps
from anonymizers.release.spec import ReleaseSpec
from anonymizers.verifiers.base import ATTACK_PROBABILITY, interval_count

COUNTS = ["trajectories_in", "trajectories_out", "trajectories_suppressed", "persons_in",
          "persons_out", "points_in", "cell_visits_in", "cell_visits_out", "cells_visited",
          "cells_published", "flows_published"]
DISPLACEMENT = ["displacement_local_avg_m", "displacement_global_sum_m",
                "displacement_global_avg_m", "displacement_avg_m", "displacement_sum_m"]
HOMOGENEITY = ["homogeneous_prefix_share", "homogeneous_prefixes", "continued_prefixes"]
CLUSTERS = ["cluster_precision", "cluster_recall", "cluster_f_measure",
            "cluster_precision_star", "cluster_f_measure_star"]
CLUSTER_COUNTS = ["cluster_sample_size", "clusters_original", "clusters_anonymized"]
RISK = ["reid_max_probability", "reid_bound", "reid_sample_size"]
RADIUS = 300.0  # metres: the synthetic city is small, the default 500 m leaves few cells
PROGRESSIVE = ["cells_before_generalization", "cells_after_generalization",
               "progressive_iterations"]


def build(method: str, k: int, run_id: str = "run-1") -> ReleaseSpec:
    """Run the pipeline of ``method`` on the city up to and including the manifest."""
    if method == "grid_kam_cut":
        spec = run_steps(release_params(k=k), run_id, until="manifest")
    else:
        spec = run_steps({"dataset": "city", "method": method, "k": k, "k_counts": "persons",
                          "radius": RADIUS}, run_id, until="manifest")
    assert spec is not None
    return ReleaseSpec.from_dict(spec)


def compute(release: ReleaseSpec) -> None:
    """The metrics step (with its last pass over the counts): one transaction, committed."""
    steps.metrics(release.to_dict())


def metrics(conn: psycopg.Connection, release: ReleaseSpec) -> dict[str, float | None]:
    rows = conn.execute(psycopg.sql.SQL("SELECT name, value FROM {}.metrics").format(
        psycopg.sql.Identifier(release.build_schema))).fetchall()
    return dict(rows)


def series(conn: psycopg.Connection, release: ReleaseSpec) -> dict[str, list[tuple]]:
    """Series name -> [(x, value), ...] in increasing x."""
    rows = conn.execute(psycopg.sql.SQL(
        "SELECT series, x, value FROM {}.metric_series ORDER BY series, x").format(
        psycopg.sql.Identifier(release.build_schema))).fetchall()
    result: dict[str, list[tuple]] = {}
    for name, x, value in rows:
        result.setdefault(name, []).append((x, value))
    return result


def snapshot(conn: psycopg.Connection, release: ReleaseSpec) -> tuple[list, list]:
    build = psycopg.sql.Identifier(release.build_schema)
    return tuple(conn.execute(psycopg.sql.SQL(query).format(build)).fetchall() for query in (
        "SELECT * FROM {}.metrics ORDER BY name",
        "SELECT * FROM {}.metric_series ORDER BY series, x"))


def manifest(conn: psycopg.Connection, release: ReleaseSpec) -> dict[str, Any]:
    cur = conn.execute(psycopg.sql.SQL("SELECT * FROM {}.manifest").format(
        psycopg.sql.Identifier(release.build_schema)))
    row = cur.fetchone()
    assert row is not None and cur.description is not None
    return {column.name: value for column, value in zip(cur.description, row, strict=True)}


@dataclass(frozen=True)
class WholeWindow:
    """Every fix of the window, read whole: what the metrics step read before issue 12, kept
    here as the straightforward reference its figures must still equal."""

    traj_ids: list[str]  # trajectories numbered in traj_id order
    owners: np.ndarray  # owner number of each trajectory
    xy: list[np.ndarray]  # per trajectory, its fixes in time order
    cell: list[np.ndarray]  # work cell of each fix (-1: none)
    centroid: list[np.ndarray]  # centroid of that cell (NaN: none)
    published_cell: list[np.ndarray]  # release cell of each fix (NO_CELL: not published)
    published: list[tuple[int, list[int], np.ndarray]]  # (source number, cells, line), by anon_id
    inputs: list[list[int]]  # each trajectory's visits in published cells


def read_whole_window(session: psycopg.Connection, release: ReleaseSpec) -> WholeWindow:
    """The window's fixes, published sequences and generalized inputs, all in memory."""
    ids = {name: psycopg.sql.Identifier(release.work_schema, name) for name in
           ("points", "cells", "cell_map", "anonymized", "visits")}
    table = "memberships"
    if "progressive_generalization" in method_entry(release.method).steps:
        # Each fix's cell by the reference SQL (the pipeline kept them in memory only).
        run_sql_file(session, "generalization/voronoi/120_membership.sql",
                     work=release.work_schema)
        table = "point_cells"
    rows = session.execute(psycopg.sql.SQL(
        "SELECT p.traj_id, p.user_id, ST_X(p.geom), ST_Y(p.geom), f.cell_id, "
        "ST_X(c.centroid), ST_Y(c.centroid), m.release_cell_id FROM {points} AS p "
        "LEFT JOIN {fixes} AS f USING (traj_id, t) "
        "LEFT JOIN {cells} AS c ON c.cell_id = f.cell_id "
        "LEFT JOIN {cell_map} AS m ON m.cell_id = f.cell_id ORDER BY p.traj_id, p.t").format(
        fixes=psycopg.sql.Identifier(release.work_schema, table), **ids)).fetchall()
    traj = [row[0] for row in rows]
    starts = [i for i in range(len(rows)) if i == 0 or traj[i] != traj[i - 1]]
    traj_ids = [traj[i] for i in starts]
    number = {t: i for i, t in enumerate(traj_ids)}
    owners = np.unique([rows[i][1] for i in starts], return_inverse=True)[1].reshape(-1)
    values = np.array([[math.nan if v is None else v for v in row[2:]] for row in rows],
                      dtype=np.float64).reshape(-1, 6)

    def split(columns: np.ndarray) -> list[np.ndarray]:
        return np.split(columns, starts[1:])

    published = session.execute(psycopg.sql.SQL(
        "SELECT a.source_traj_id, array_agg(m.release_cell_id ORDER BY u.ord), "
        "array_agg(ST_X(c.centroid) ORDER BY u.ord), array_agg(ST_Y(c.centroid) ORDER BY u.ord) "
        "FROM {anonymized} AS a "
        "CROSS JOIN LATERAL unnest(a.cells) WITH ORDINALITY AS u(cell_id, ord) "
        "JOIN {cell_map} AS m ON m.cell_id = u.cell_id "
        "JOIN {cells} AS c ON c.cell_id = u.cell_id "
        "GROUP BY a.anon_id, a.source_traj_id ORDER BY a.anon_id").format(**ids)).fetchall()
    visits = dict(session.execute(psycopg.sql.SQL(
        "SELECT v.traj_id, coalesce(array_agg(m.release_cell_id ORDER BY v.visit_no) "
        "FILTER (WHERE m.release_cell_id IS NOT NULL), '{{}}') FROM {visits} AS v "
        "LEFT JOIN {cell_map} AS m USING (cell_id) GROUP BY v.traj_id").format(**ids)).fetchall())
    return WholeWindow(
        traj_ids, owners, split(values[:, 0:2]),
        split(np.nan_to_num(values[:, 2], nan=-1).astype(np.int64)), split(values[:, 3:5]),
        split(np.nan_to_num(values[:, 5], nan=NO_CELL).astype(np.int64)),
        [(number[source], list(cells), np.column_stack([xs, ys]).astype(np.float64))
         for source, cells, xs, ys in published],
        [list(visits.get(t, [])) for t in traj_ids])


def reference_figures(window: WholeWindow, release: ReleaseSpec) -> dict[str, Any]:
    """The displacement, cluster and risk figures computed on the whole window at once."""
    cells = np.concatenate(window.cell)
    inside = cells >= 0
    owner = np.repeat(window.owners, [len(c) for c in window.cell])
    d = displacement_measures(np.concatenate(window.xy)[inside],
                              np.concatenate(window.centroid)[inside], cells[inside],
                              owner[inside], release.k)
    lines: list[np.ndarray | None] = [None] * len(window.traj_ids)
    for source, _, line in window.published:
        if lines[source] is None:
            lines[source] = line
    seeds = np.random.SeedSequence(release.seed).spawn(2)
    clusters = cluster_preservation_report(
        window.xy, lines, release_metrics.CLUSTER_MAX_DISTANCE_ORIGINAL_M,
        release_metrics.CLUSTER_MAX_DISTANCE_ANONYMIZED_M, release_metrics.CLUSTER_MIN_NEIGHBOURS,
        release_metrics.CLUSTER_SAMPLE, np.random.default_rng(seeds[0]))
    sources = np.array([source for source, _, _ in window.published], dtype=np.int64)
    risk = reidentification_risk(
        window.published_cell, window.owners, [c for _, c, _ in window.published],
        window.owners[sources], window.inputs, RISK_OBSERVATIONS, release.k,
        max_trajectories=release_metrics.RISK_SAMPLE, rng=np.random.default_rng(seeds[1]))
    return {
        "displacement_local_avg_m": d["local_mean_avg"],
        "displacement_global_sum_m": d["global_sum"],
        "displacement_global_avg_m": d["global_mean"],
        **{f"cluster_{name}": round(float(clusters[name]), release_metrics.CLUSTER_DECIMALS)
           for name in ("precision", "recall", "f_measure", "precision_star", "f_measure_star")},
        "cluster_sample_size": clusters["sample_size"],
        "clusters_original": clusters["n_clusters_original"],
        "clusters_anonymized": clusters["n_clusters_anonymized"],
        "reid_max_probability": risk["max"],
        "reid_sample_size": risk["n_trajectories"],
        **{f"reid.{key}@{row['observations']}": row[key] for row in risk["by_observations"]
           for key in ("mean", "max", "fraction_zero")},
    }


def check_counts(found: dict[str, float | None], facts: dict[str, Any]) -> None:
    assert found["trajectories_in"] == facts["trajectories_in"]
    # The manifest gives the published table's size exactly; every count metric is filtered.
    assert found["trajectories_out"] == interval_count(facts["trajectories_out"],
                                                       facts["k"], facts["count_interval"])
    assert found["trajectories_suppressed"] == facts["suppressed"]
    assert found["persons_in"] == facts["persons_in"]
    assert found["points_in"] == facts["points_in"]
    assert 0 < found["persons_out"] <= found["persons_in"]  # type: ignore[operator]
    assert 0 < found["cells_published"] <= found["cells_visited"]  # type: ignore[operator]


def check_utility(found: dict[str, float | None], lines: dict[str, list[tuple]]) -> None:
    d = {name: float(found[name]) for name in DISPLACEMENT}  # type: ignore[arg-type]
    assert d["displacement_global_avg_m"] > 0 and d["displacement_local_avg_m"] > 0
    # Over the fixes inside a cell (the Voronoi cells need not cover every outlying fix);
    # points_in is the lower end of an interval of width count_interval (here k <= 5).
    fixes = d["displacement_global_sum_m"] / d["displacement_global_avg_m"]
    assert 0.9 * found["points_in"] <= fixes < found["points_in"] + 5  # type: ignore[operator]
    assert d["displacement_avg_m"] == d["displacement_global_avg_m"]
    for name in CLUSTERS:
        assert 0 <= found[name] <= 1, name  # type: ignore[operator]
    assert found["cluster_sample_size"] == min(release_metrics.CLUSTER_SAMPLE,
                                               found["trajectories_in"])  # type: ignore[type-var]
    assert found["clusters_original"] >= 1  # type: ignore[operator]
    for name in ("length_histogram.original", "length_histogram.published"):
        xs, values = zip(*lines[name], strict=True)
        assert list(xs) == list(LENGTH_BIN_EDGES_M)
        assert any(values), name  # the city's trips are a few km long: some bin has k persons
        assert all(value is None or value >= 3 for value in values), name  # k >= 3 here
    assert 0 <= found["homogeneous_prefix_share"] <= 1  # type: ignore[operator]
    assert found["homogeneous_prefixes"] <= found["continued_prefixes"]  # type: ignore[operator]


def check_risk(found: dict[str, float | None], lines: dict[str, list[tuple]], k: int) -> None:
    assert found["reid_bound"] == 1 / k
    assert found["reid_max_probability"] is not None
    assert 0 < found["reid_max_probability"] <= 1 / k  # the key property (Theorem 10)
    assert [x for x, _ in lines["reid.max"]] == [float(j) for j in RISK_OBSERVATIONS]
    for _, value in lines["reid.max"]:
        assert value is None or value <= 1 / k
    for (_, mean), (_, largest) in zip(lines["reid.mean"], lines["reid.max"], strict=True):
        assert mean is None or 0 <= mean <= largest


def check_progressive(found: dict[str, float | None], lines: dict[str, list[tuple]],
                      method: str) -> None:
    if method == "grid_kam_cut":
        assert not [name for name in lines if name.startswith("progressive.")]
        assert not set(PROGRESSIVE) & set(found)
        return
    cells = lines["progressive.cells"]
    assert [x for x, _ in cells] == [float(i) for i in range(len(cells))]
    assert found["cells_before_generalization"] == cells[0][1]
    assert found["cells_after_generalization"] == cells[-1][1] <= cells[0][1]
    assert found["progressive_iterations"] == len(cells) - 1
    for name in ("pairs_below_k", "merges", "drops", "displacement_avg_m"):
        assert len(lines[f"progressive.{name}"]) == len(cells)
    assert found["cells_after_generalization"] == found["cells_visited"]


@pytest.mark.parametrize(("method", "k"), [("grid_kam_cut", 3), ("grid_kam_cut", 5),
                                           ("kam_cut", 3), ("kam_rec", 3), ("kam_rec", 5)])
def test_release_metrics_are_sane_bounded_and_idempotent(loaded_city, conn, method, k):
    release = build(method, k)
    compute(release)
    found, lines = metrics(conn, release), series(conn, release)
    missing = {*COUNTS, *DISPLACEMENT, *CLUSTERS, *CLUSTER_COUNTS, *RISK, *HOMOGENEITY} \
        - set(found)
    assert not missing
    check_counts(found, manifest(conn, release))
    check_utility(found, lines)
    check_risk(found, lines, k)
    check_progressive(found, lines, method)
    before = snapshot(conn, release)
    compute(release)
    assert snapshot(conn, release) == before


@pytest.mark.parametrize(("method", "samples"), [("grid_kam_cut", (40, 55)),
                                                 ("kam_cut", (40, 55)),
                                                 ("grid_kam_cut", (10_000, 10_000))])
def test_metrics_equal_a_whole_window_computation(loaded_city, monkeypatch, method, samples):
    """Issue 12: displacement summed in SQL, the samples drawn on trajectory numbers and only
    their fixes read give the figures of the whole window read at once (small samples: the
    draws pick a subset, so the numbering must be the reference's order; large: all)."""
    monkeypatch.setattr(release_metrics, "CLUSTER_SAMPLE", samples[0])
    monkeypatch.setattr(release_metrics, "RISK_SAMPLE", samples[1])
    release = build(method, 3)
    with connect() as session:
        window = read_whole_window(session, release)
        expected = reference_figures(window, release)
        writer.reset(session, release.build_schema)  # as the metrics step does first
        found = compute_release_metrics(session, release)
        session.rollback()
    # A ratio of counts reaches the writer as its two counts: its exact quotient here.
    rows = {name: _exact(value) for name, value, _, _ in found.rows}
    rows.update({f"{name}@{x:g}": _exact(value) for name, x, value, _, _ in found.series})
    assert rows["displacement_avg_m"] == rows["displacement_global_avg_m"]
    assert rows["displacement_sum_m"] == rows["displacement_global_sum_m"]
    for name, value in expected.items():
        if name.startswith("displacement_"):  # summed in another order: rounding only
            assert rows[name] == pytest.approx(value, rel=1e-12), name
        else:
            assert rows[name] == value or (math.isnan(rows[name]) and math.isnan(value)), name
    assert rows["cluster_sample_size"] == min(samples[0], len(window.traj_ids))
    assert rows["reid_sample_size"] == min(samples[1], len(window.traj_ids))


def _exact(value: Any) -> Any:
    return value.exact if isinstance(value, Ratio) else value


def test_metric_series_is_documented_and_the_release_still_verifies(loaded_city, conn):
    release = build("grid_kam_cut", 3)
    compute(release)
    comments = conn.execute(
        "SELECT a.attname, col_description(a.attrelid, a.attnum), "
        "       obj_description(a.attrelid, 'pg_class') "
        "FROM pg_attribute AS a WHERE a.attrelid = %s::regclass AND a.attnum > 0 "
        "AND NOT a.attisdropped", (f"{release.build_schema}.metric_series",)).fetchall()
    assert {name for name, _, _ in comments} == {"series", "x", "value", "unit", "description",
                                                 "numerator", "denominator", "fid"}
    assert all(column and table for _, column, table in comments)
    steps.verify(release.to_dict())  # the new table passes the gate (no ids, no timestamps)


def test_crafted_unique_sequence_is_refused() -> None:
    # Person 0 alone travels 1 -> 2; the release publishes it: one observation pair names them.
    observed = [np.array([1, 1, 2]), np.array([3]), np.array([3])]
    with pytest.raises(PrivacyViolation, match="exceeds 1/k"):
        measure_risk(observed, np.array([0, 1, 2]), [[1, 2]], np.array([0]),
                     [[1, 2], [3], [3]], 3, rng=0)
    # Published only what three persons share: within the bound.
    result = measure_risk(observed, np.array([0, 1, 2]), [[3]] * 2, np.array([1, 2]),
                          [[1, 2, 3], [3], [3]], 3, rng=0)
    assert result["max"] <= 1 / 3


def _rare_observed_pattern(window: WholeWindow, k: int) -> tuple[int, list[int]]:
    """An input trajectory and the g() of its first fixes contained in < k owners' inputs."""
    for i, cells in enumerate(window.published_cell):
        for j in range(2, min(len(cells), max(RISK_OBSERVATIONS)) + 1):
            pattern = list(generalize_observations(cells[:j]))
            if NO_CELL in pattern:
                break
            holders = {int(window.owners[n]) for n, seq in enumerate(window.inputs)
                       if _contains(seq, pattern)}
            if len(holders) < k:
                return i, pattern
    raise AssertionError("no rare pattern in the city: the plant needs another dataset")


def _contains(sequence: list[int], pattern: list[int]) -> bool:
    cells = iter(sequence)
    return all(cell in cells for cell in pattern)


def test_a_planted_sequence_of_fewer_than_k_persons_is_refused(loaded_city, conn):
    release = build("grid_kam_cut", 3)
    with connect() as session:
        window = read_whole_window(session, release)
    source, pattern = _rare_observed_pattern(window, release.k)
    work, build_ = (psycopg.sql.Identifier(s) for s in (release.work_schema,
                                                         release.build_schema))
    # Publish it consistently in the work schema (with its source) and in the release.
    conn.execute(psycopg.sql.SQL(
        "INSERT INTO {w}.anonymized (source_traj_id, cells) SELECT %s, array_agg(m.cell_id "
        "ORDER BY u.ord) FROM unnest(%s::integer[]) WITH ORDINALITY AS u(cell, ord) "
        "JOIN {w}.cell_map AS m ON m.release_cell_id = u.cell").format(w=work),
        (window.traj_ids[source], pattern))
    conn.execute(psycopg.sql.SQL("INSERT INTO {}.trajectories (cells, n_cells) VALUES (%s, %s)")
                 .format(build_), (Jsonb([int(cell) for cell in pattern]), len(pattern)))
    with pytest.raises(PrivacyViolation, match="exceeds 1/k"):
        compute(release)




# ------------------------------------------------------- issue 7, findings 5 and 11: replays

# What the verifier refuses (privacy rule 3), written again here: a name of an order statistic.
ORDER_STATISTIC = re.compile(r"(^|[._])(max|min|maximum|minimum|quantile|percentile|median)"
                             r"($|[._])")
# Bounded by 1/k, not raw values: the §8.4 risk and the attack suite's largest probabilities.
RISK_FIGURES = {"reid_max_probability", "reid.max"}


def published_figures(conn: psycopg.Connection, release: ReleaseSpec) -> list[tuple]:
    """(name, unit, value) of every row of metrics and metric_series."""
    build = psycopg.sql.Identifier(release.build_schema)
    return conn.execute(psycopg.sql.SQL(
        "SELECT name, unit, value FROM {b}.metrics UNION ALL "
        "SELECT series, unit, value FROM {b}.metric_series").format(b=build)).fetchall()


def largest_displacement(release: ReleaseSpec) -> float:
    """The figure the review solved for one taxi's fix: the largest fix-to-centroid distance."""
    with connect() as session:
        window = read_whole_window(session, release)
    xy, centroid = np.concatenate(window.xy), np.concatenate(window.centroid)
    inside = np.concatenate(window.cell) >= 0
    return float(np.hypot(*(xy[inside] - centroid[inside]).T).max())


@pytest.mark.parametrize(("method", "k"), [("grid_kam_cut", 3), ("kam_cut", 5)])
def test_no_order_statistic_and_no_count_below_k_is_published(loaded_city, conn, method, k):
    """Finding 5: the maxima over raw fixes (2,334 km on T-Drive, plus the clip box: one
    taxi's fix) and the length quantiles are gone; every count is 0, >= k or NULL."""
    release = build(method, k)
    compute(release)
    figures = published_figures(conn, release)
    assert {name for name, *_ in figures} >= {"displacement_global_avg_m",
                                              "length_histogram.original"}
    leaking = [name for name, unit, _ in figures
               if ORDER_STATISTIC.search(name) and name not in RISK_FIGURES
               and not (unit == "probability" and ATTACK_PROBABILITY.match(name))]
    assert not leaking
    small = [(name, value) for name, unit, value in figures
             if unit == "count" and value is not None and 0 < value < k]
    assert not small
    worst = largest_displacement(release)
    assert not [name for name, _, value in figures
                if value is not None and value == pytest.approx(worst, abs=0.01)]
    steps.verify(release.to_dict())  # and the verifier's rule 3 agrees


def plant_lonely_long_trip(conn: psycopg.Connection, release: ReleaseSpec) -> float:
    """One new person whose single trip, 300 km of zigzag in the city, is the only one of
    its length in the window; returns that length."""
    work = psycopg.sql.Identifier(release.work_schema)
    conn.execute(psycopg.sql.SQL(
        "INSERT INTO {w}.points (traj_id, user_id, t, geom) "
        "SELECT 'lonely_trip', 'lonely_person', s.t0 + i * interval '10 seconds', "
        "       ST_Translate(s.here, 1500 * (i % 2), 0) "
        "FROM (SELECT min(t) AS t0, ST_Centroid(ST_Collect(geom)) AS here "
        "      FROM (SELECT t, geom FROM {w}.points LIMIT 1000) AS sample) AS s "
        "CROSS JOIN generate_series(0, 200) AS i").format(w=work))
    return 200 * 1500.0


def test_one_persons_unique_length_does_not_show_in_the_histogram(loaded_city, conn):
    """Finding 5, length quantiles: with x = 1.0 (or the top quantile over a small window)
    a quantile was one person's trip length. The histogram's bins are fixed and count
    persons with NULL below k: adding one person with a unique 300 km trip to the window
    leaves the input length histogram exactly as it was."""
    spec = run_steps(release_params(k=3), until="metrics")
    assert spec is not None
    release = ReleaseSpec.from_dict(spec)
    before = series(conn, release)["length_histogram.original"]
    average = metrics(conn, release)["length_original_avg_m"]
    length = plant_lonely_long_trip(conn, release)
    for name in STEP_ORDER[STEP_ORDER.index("grid_membership"):STEP_ORDER.index("metrics") + 1]:
        steps.run_step(name, spec)
    found, after = metrics(conn, release), series(conn, release)
    assert after["length_histogram.original"] == before
    top = max(x for x, _ in after["length_histogram.original"] if x <= length)
    assert dict(after["length_histogram.original"])[top] is None  # an empty bin looks the same
    figures = published_figures(conn, release)
    assert not [name for name, _, value in figures
                if value is not None and value == pytest.approx(length, rel=1e-6)]
    # The trip is in the window (the average over >= k persons moved), not in the histogram.
    assert found["length_original_avg_m"] > average  # type: ignore[operator]


def continuations(sequences: list[list[int]]) -> dict[tuple[int, ...], set[int]]:
    """Every published prefix with a continuation -> its distinct continuations."""
    found: dict[tuple[int, ...], set[int]] = {}
    for cells in sequences:
        for end in range(1, len(cells)):
            found.setdefault(tuple(cells[:end]), set()).add(cells[end])
    return found


def published_sequences(conn: psycopg.Connection, release: ReleaseSpec) -> list[list[int]]:
    return [row[0] for row in conn.execute(psycopg.sql.SQL("SELECT cells FROM {}.trajectories")
                                           .format(psycopg.sql.Identifier(release.build_schema)))]


def test_homogeneity_is_reported_and_min_continuations_removes_it(loaded_city, conn):
    """Finding 11: a published prefix with a single continuation tells where whoever took it
    went next. By default the share is reported; with min_continuations=2 there is none."""
    first = run_steps(release_params(k=3), until="metrics")
    assert first is not None
    default = ReleaseSpec.from_dict(first)
    found = metrics(conn, default)
    nexts = continuations(published_sequences(conn, default))
    single = sum(len(cells) == 1 for cells in nexts.values())
    assert single > 0, "the city has no homogeneous prefix: the replay needs another window"
    # Published from the filtered counts, never their exact quotient (privacy rule 8).
    assert found["homogeneous_prefix_share"] == (interval_count(single, 3, 3)
                                                 / interval_count(len(nexts), 3, 3))
    assert found["homogeneous_prefixes"] == interval_count(single, 3, 3)

    spec = run_steps(release_params(k=3, min_continuations=2), "diverse", until="metrics")
    assert spec is not None
    diverse = ReleaseSpec.from_dict(spec)
    nexts = continuations(published_sequences(conn, diverse))
    assert nexts and all(len(cells) >= 2 for cells in nexts.values())
    found = metrics(conn, diverse)
    assert found["homogeneous_prefix_share"] == 0
    assert found["homogeneous_prefixes"] == 0
    # Truncation publishes the same number of trajectories, shorter, and still verifies.
    assert metrics(conn, default)["trajectories_out"] == found["trajectories_out"]
    assert found["cell_visits_out"] < metrics(conn, default)["cell_visits_out"]  # type: ignore[operator]
    result = steps.verify(spec)
    assert result["checks"]["prefixes_with_few_continuations"] == 0

