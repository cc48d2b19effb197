"""Utility and risk metrics of real releases of the small synthetic city.

Each test builds a release with the pipeline's own steps (up to build_release), computes
its metrics as the metrics step does, and checks them against the manifest and against
the privacy bound: on the pipeline's output the linking attack never beats 1/k (seed 000
Theorem 10). A release planted with a sequence of fewer than k persons is refused.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import psycopg
import pytest
from pipeline_helpers import release_params, run_steps

from anonymizers.db.connection import connect
from anonymizers.errors import PrivacyViolation
from anonymizers.metrics.reidentification import NO_CELL, generalize_observations
from anonymizers.pipeline import release_metrics, steps, tessellation
from anonymizers.pipeline.release_metrics import (
    LENGTH_QUANTILES,
    RISK_OBSERVATIONS,
    compute_release_metrics,
    measure_risk,
)
from anonymizers.release.spec import ReleaseSpec

# The order of dags/generalization.py for the Voronoi methods.
VORONOI_STEPS = [(steps, "project"), *[(tessellation, name) for name in (
    "characteristic_points", "cluster", "voronoi", "membership", "progressive_generalization")],
    *[(steps, name) for name in ("visits_and_flows", "anonymize", "build_release")]]

COUNTS = ["trajectories_in", "trajectories_out", "trajectories_suppressed", "persons_in",
          "persons_out", "points_in", "cell_visits_in", "cell_visits_out", "cells_visited",
          "cells_published", "flows_published"]
DISPLACEMENT = ["displacement_local_avg_m", "displacement_local_max_m",
                "displacement_global_sum_m", "displacement_global_avg_m",
                "displacement_global_max_m", "displacement_avg_m", "displacement_max_m",
                "displacement_sum_m"]
CLUSTERS = ["cluster_precision", "cluster_recall", "cluster_f_measure",
            "cluster_precision_star", "cluster_f_measure_star"]
CLUSTER_COUNTS = ["cluster_sample_size", "clusters_original", "clusters_anonymized"]
RISK = ["reid_max_probability", "reid_bound", "reid_sample_size"]
RADIUS = 300.0  # metres: the synthetic city is small, the default 500 m leaves few cells
PROGRESSIVE = ["cells_before_generalization", "cells_after_generalization",
               "progressive_iterations"]


def build(method: str, k: int, run_id: str = "run-1") -> ReleaseSpec:
    """Run the pipeline of ``method`` on the city up to and including build_release."""
    if method == "grid_kam_cut":
        spec = run_steps(release_params(k=k), run_id, until="build_release")
    else:
        spec = steps.prepare({"dataset": "city", "method": method, "k": k,
                              "k_counts": "persons", "radius": RADIUS}, None, run_id)
        assert spec is not None
        for module, name in VORONOI_STEPS:
            getattr(module, name)(spec)
    assert spec is not None
    return ReleaseSpec.from_dict(spec)


def compute(release: ReleaseSpec) -> None:
    """The metrics step: one transaction, committed."""
    with connect() as conn:
        compute_release_metrics(conn, release)


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


def check_counts(found: dict[str, float | None], facts: dict[str, Any]) -> None:
    assert found["trajectories_in"] == facts["trajectories_in"]
    assert found["trajectories_out"] == facts["trajectories_out"]
    assert found["trajectories_suppressed"] == facts["suppressed"]
    assert found["persons_in"] == facts["persons_in"]
    assert found["points_in"] == facts["points_in"]
    assert 0 < found["persons_out"] <= found["persons_in"]  # type: ignore[operator]
    assert 0 < found["cells_published"] <= found["cells_visited"]  # type: ignore[operator]


def check_utility(found: dict[str, float | None], lines: dict[str, list[tuple]]) -> None:
    d = {name: float(found[name]) for name in DISPLACEMENT}  # type: ignore[arg-type]
    assert d["displacement_global_max_m"] >= d["displacement_global_avg_m"] > 0
    assert d["displacement_local_max_m"] >= d["displacement_local_avg_m"] > 0
    assert d["displacement_global_sum_m"] == pytest.approx(
        d["displacement_global_avg_m"] * found["points_in"])  # type: ignore[operator]
    assert d["displacement_avg_m"] == d["displacement_global_avg_m"]
    for name in CLUSTERS:
        assert 0 <= found[name] <= 1, name  # type: ignore[operator]
    assert found["cluster_sample_size"] == min(release_metrics.CLUSTER_SAMPLE,
                                               found["trajectories_in"])  # type: ignore[type-var]
    assert found["clusters_original"] >= 1  # type: ignore[operator]
    for name in ("length.original_m", "length.published_m"):
        xs, values = zip(*lines[name], strict=True)
        assert list(xs) == list(LENGTH_QUANTILES)
        assert all(a <= b for a, b in itertools.pairwise(values)), name
        assert values[0] >= 0


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
    missing = {*COUNTS, *DISPLACEMENT, *CLUSTERS, *CLUSTER_COUNTS, *RISK} - set(found)
    assert not missing
    check_counts(found, manifest(conn, release))
    check_utility(found, lines)
    check_risk(found, lines, k)
    check_progressive(found, lines, method)
    before = snapshot(conn, release)
    compute(release)
    assert snapshot(conn, release) == before


def test_metric_series_is_documented_and_the_release_still_verifies(loaded_city, conn):
    release = build("grid_kam_cut", 3)
    compute(release)
    comments = conn.execute(
        "SELECT a.attname, col_description(a.attrelid, a.attnum), "
        "       obj_description(a.attrelid, 'pg_class') "
        "FROM pg_attribute AS a WHERE a.attrelid = %s::regclass AND a.attnum > 0 "
        "AND NOT a.attisdropped", (f"{release.build_schema}.metric_series",)).fetchall()
    assert {name for name, _, _ in comments} == {"series", "x", "value", "unit", "description"}
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


def _rare_observed_pattern(fixes, inputs: list[list[int]], k: int) -> tuple[int, list[int]]:
    """An input trajectory and the g() of its first fixes contained in < k owners' inputs."""
    observed = fixes.split(fixes.published_cell)
    for i, cells in enumerate(observed):
        for j in range(2, min(len(cells), max(RISK_OBSERVATIONS)) + 1):
            pattern = list(generalize_observations(cells[:j]))
            if NO_CELL in pattern:
                break
            holders = {int(fixes.owners[n]) for n, seq in enumerate(inputs)
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
        fixes = release_metrics._read_fixes(session, release)
        inputs = release_metrics._read_input_sequences(session, release, fixes)
    source, pattern = _rare_observed_pattern(fixes, inputs, release.k)
    work, build_ = (psycopg.sql.Identifier(s) for s in (release.work_schema,
                                                         release.build_schema))
    # Publish it consistently in the work schema (with its source) and in the release.
    conn.execute(psycopg.sql.SQL(
        "INSERT INTO {w}.anonymized (source_traj_id, cells) SELECT %s, array_agg(m.cell_id "
        "ORDER BY u.ord) FROM unnest(%s::integer[]) WITH ORDINALITY AS u(cell, ord) "
        "JOIN {w}.cell_map AS m ON m.release_cell_id = u.cell").format(w=work),
        (fixes.traj_ids[source], pattern))
    conn.execute(psycopg.sql.SQL("INSERT INTO {}.trajectories (cells, n_cells) VALUES (%s, %s)")
                 .format(build_), (pattern, len(pattern)))
    with pytest.raises(PrivacyViolation, match="exceeds 1/k"):
        compute(release)


