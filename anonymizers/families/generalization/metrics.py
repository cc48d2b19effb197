"""Utility and risk of a generalization release, measured on the release it is about to publish.

Runs in the shared metrics step's transaction, after the manifest and before ``verify``.
Its SQL parts insert into ``{build}.metrics`` directly; the rest it returns as a
:class:`~anonymizers.families.base.Metrics` for the shared writer
(:mod:`anonymizers.metrics.writer`), which also runs the last pass over every count. It
refuses the release when the measured re-identification probability exceeds 1/k:

* counts in and out, trajectory length histograms, progressive generalization and
  displacement (seed 000 §6.1.2, the aggregates of
  :func:`anonymizers.families.generalization.displacement.displacement_measures` over every
  fix): SQL
  (``sql/generalization/metrics/0[0-4][05]_*.sql``, over ``{work}.input_trajectories``:
  one row per trajectory, which the method's steps made);
* cluster preservation (§8.3), the linking attack (§8.4, Theorem 10) and the homogeneity
  of published prefixes: the pure functions of
  :mod:`~anonymizers.families.generalization.cluster_preservation`,
  :mod:`~anonymizers.families.generalization.reidentification` and
  :mod:`~anonymizers.families.generalization.homogeneity`,
  fed by the published and the generalized input sequences (one row per trajectory) and by
  the fixes of the sampled trajectories only (``sql/generalization/metrics/035`` to
  ``060``). Trajectories are numbered in the database
  (``035_trajectory_numbers.sql``) and the samples drawn on those numbers, so memory does
  not grow with the fixes and no identifier string reaches Python.

Privacy rule 3 (DESIGN.md) holds for everything written here: no minimum, maximum or
quantile of individual values (the attack's largest success probability, bounded by 1/k,
is the one exception), every aggregate is over at least k persons (per cell or per group
only where the cell or group has k), and counts about a part of the window are NULL when
fewer than k persons are behind them. The shared writer then runs the last pass,
``sql/metrics/095_interval_filter_counts.sql``, over every ``count`` of both tables: 0
stays, 1 .. k - 1 becomes NULL, the rest is interval-filtered.

Samples are bounded and seeded from the input fingerprint (dataset + window), so a re-run
writes the same rows and every release of one input is measured on the same trajectories.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import psycopg
import pyarrow as pa
import pyarrow.csv as pacsv

from anonymizers.db.groups import copy_columns, copy_sequences
from anonymizers.db.sqlfiles import copy_out, fetch_columns, run_sql_file
from anonymizers.errors import PrivacyViolation, ReleaseError
from anonymizers.families.base import MetricRow, Metrics, SeriesRow
from anonymizers.families.generalization.cluster_preservation import (
    cluster_preservation_of_sample,
    sample_objects,
)
from anonymizers.families.generalization.declaration import GeneralizationTraits
from anonymizers.families.generalization.homogeneity import homogeneity
from anonymizers.families.generalization.reidentification import (
    NO_CELL,
    reidentification_risk,
    reidentification_risk_of_sample,
    sample_trajectories,
)
from anonymizers.families.registry import method_entry
from anonymizers.metrics.shares import Ratio, share
from anonymizers.release.spec import ReleaseSpec
from anonymizers.sequences import ConcatenatedSequences, relabel

__all__ = [
    "CLUSTER_DECIMALS",
    "CLUSTER_MAX_DISTANCE_ANONYMIZED_M",
    "CLUSTER_MAX_DISTANCE_ORIGINAL_M",
    "CLUSTER_MIN_NEIGHBOURS",
    "CLUSTER_SAMPLE",
    "LENGTH_BIN_EDGES_M",
    "RISK_OBSERVATIONS",
    "RISK_SAMPLE",
    "compute_release_metrics",
    "measure_risk",
]

log = logging.getLogger(__name__)
METRICS_SQL = "generalization/metrics/"

# Cluster preservation (§8.3) with the clustering parameters of §8.2: OPTICS with
# MaxDistance 450 m on the original routes and MinNeighbours 5. Generalization pulls similar
# routes onto the same centroid lines, so the anonymized side needs a smaller radius (§8.2
# uses 50 m for its tessellation; 200 m here suits cells of a few hundred metres).
CLUSTER_MAX_DISTANCE_ORIGINAL_M = 450.0
CLUSTER_MAX_DISTANCE_ANONYMIZED_M = 200.0
CLUSTER_MIN_NEIGHBOURS = 5
# Trajectories clustered: the route distance matrix is quadratic in it (500: about 1 s).
CLUSTER_SAMPLE = 1_500  # a whole T-Drive day; 1,000 routes take ~2 s
# Numbers of observed points of the linking attack (§8.4, Figures 15-16 go up to 10 and more).
RISK_OBSERVATIONS = tuple(range(1, 11))
# Input trajectories attacked: bounds the cost on large windows; the maximum is checked on it.
RISK_SAMPLE = 2_000
# Lower edges (metres) of the fixed bins of the trajectory length histograms; the last bin
# is open. Fixed, so that no edge is anyone's length (quantiles were: privacy rule 3).
LENGTH_BIN_EDGES_M = (0.0, 1_000.0, 2_000.0, 5_000.0, 10_000.0, 20_000.0, 50_000.0,
                      100_000.0, 200_000.0, 500_000.0)
# Decimals of the cluster preservation figures: each is a mean over a few dozen clusters of
# ratios of their sizes, whose exact value is a fraction that gives those sizes back.
CLUSTER_DECIMALS = 2

Row = MetricRow


@dataclass(frozen=True)
class _Published:
    """The published sequences with their source trajectory (known to the pipeline only)."""

    source: np.ndarray  # input trajectory number of each published sequence
    cells: ConcatenatedSequences  # release cell ids


@contextmanager
def _timed(part: str, release: ReleaseSpec) -> Iterator[None]:
    """Log how long ``part`` took (the task log shows where the step spends its time)."""
    started = time.monotonic()
    yield
    log.info("metrics of %s: %s took %.2f s", release.build_schema, part,
             time.monotonic() - started)


def compute_release_metrics(conn: psycopg.Connection, release: ReleaseSpec) -> Metrics:
    """Measure a built release: SQL figures into ``{build}.metrics``, the rest returned.

    Parameters
    ----------
    conn : psycopg.Connection
        Connection in the caller's transaction (the pipeline's metrics step).
    release : ReleaseSpec
        The release; its work schema holds points, cells, cell_map, visits and
        anonymized, its build schema the release tables, manifest and metrics.

    Returns
    -------
    Metrics
        The scalars and series computed in Python, for the shared writer.

    Raises
    ------
    PrivacyViolation
        If the simulated linking attack succeeds with a probability above 1/k.
    ReleaseError
        If work.anonymized does not describe the published trajectories.
    """
    with _timed("counts, lengths and progressive generalization (SQL)", release):
        _sql_metrics(conn, release)
    with _timed("displacement (SQL)", release):
        rows = _displacement_rows(conn, release)
    with _timed("reading trajectory numbers and sequences", release):
        owners = _number_trajectories(conn, release)
        released = _released_cells(conn, release)
        published = _read_published(conn, release, released)
        inputs = _read_input_sequences(conn, release, owners.size, released)
    # Same input, same sample: releases of one window are compared on the same trajectories.
    seeds = np.random.SeedSequence(int(release.seed)).spawn(2)
    with _timed("homogeneity", release):
        rows += _homogeneity_rows(published)
    with _timed("cluster preservation", release):
        rows += _cluster_rows(conn, release, owners.size, np.random.default_rng(seeds[0]))
    with _timed("re-identification risk", release):
        risk_rows, series = _risk_rows(conn, release, owners, published, inputs,
                                       np.random.default_rng(seeds[1]))
    return Metrics(rows + risk_rows, series)


def _sql_metrics(conn: psycopg.Connection, release: ReleaseSpec) -> None:
    """Tables, counts, length histograms and (Voronoi methods) the progressive log."""
    schemas: dict[str, Any] = {"work": release.work_schema, "build": release.build_schema}
    run_sql_file(conn, METRICS_SQL + "005_work_mem.sql", work=release.work_schema)
    run_sql_file(conn, METRICS_SQL + "010_counts.sql", {**release.window_params(), "k": release.k},
                 **schemas)
    run_sql_file(conn, METRICS_SQL + "020_trajectory_lengths.sql",
                 {"edges": list(LENGTH_BIN_EDGES_M), "k": release.k}, **schemas)
    if _is_voronoi(release):
        run_sql_file(conn, METRICS_SQL + "030_progressive.sql", **schemas)
    mismatched = fetch_columns(conn, METRICS_SQL + "070_published_mismatch.sql",
                               **schemas)["mismatched"][0]
    if mismatched:
        raise ReleaseError(f"{release.build_schema}: {mismatched} published trajectories do not "
                           "match work.anonymized; metrics cannot be computed on the release")


# --------------------------------------------------------------------------- reading


def _fixes_table(conn: psycopg.Connection, release: ReleaseSpec) -> tuple[str, str]:
    """The relation that holds the cell of each fix (traj_id, t, cell_id)."""
    # The grid keeps its fixes' cells in memberships; the Voronoi methods' fixes are
    # looked up in their cells when asked (their memberships also hold crossed cells, and
    # progressive generalization kept the fixes' cells in memory only).
    if not _is_voronoi(release):
        return release.work_schema, "memberships"
    run_sql_file(conn, METRICS_SQL + "038_voronoi_fix_cells.sql", work=release.work_schema)
    return "pg_temp", "voronoi_fix_cells"


def _is_voronoi(release: ReleaseSpec) -> bool:
    """Whether the method's cells are data-driven (progressive generalization made them)."""
    traits: GeneralizationTraits = method_entry(release.method).traits
    return traits.cells == "voronoi"


def _number_trajectories(conn: psycopg.Connection, release: ReleaseSpec) -> np.ndarray:
    """Number the input trajectories (temporary table metrics_trajectories); their owners.

    Returns
    -------
    np.ndarray of int
        Owner number (what k counts) of each trajectory number 0, 1, ...
    """
    run_sql_file(conn, METRICS_SQL + "035_trajectory_numbers.sql", work=release.work_schema)
    return copy_columns(conn, METRICS_SQL + "036_trajectory_owners.sql",
                        {"owner": pa.int64()})["owner"]


def _read_sample_routes(conn: psycopg.Connection, release: ReleaseSpec,
                        chosen: np.ndarray) -> list[np.ndarray]:
    """The original route, (m, 2) fix positions in time order, of each chosen trajectory."""
    table = _copy_table(copy_out(conn, METRICS_SQL + "045_sample_routes.sql",
                                 {"chosen": chosen.tolist()}, work=release.work_schema),
                        {"traj": pa.int64(), "x": pa.float64(), "y": pa.float64()})
    xy = np.column_stack([table["x"].to_numpy(), table["y"].to_numpy()])
    return [xy[run] for run in _runs(table["traj"].to_numpy(), chosen)]


def _read_observations(conn: psycopg.Connection, release: ReleaseSpec, chosen: np.ndarray,
                       first: int) -> list[np.ndarray]:
    """Published cell (:data:`NO_CELL`: none) of the first ``first`` fixes of each chosen
    trajectory, in time order."""
    table = _copy_table(copy_out(conn, METRICS_SQL + "047_sample_observations.sql",
                                 {"chosen": chosen.tolist(), "first": first},
                                 work=release.work_schema,
                                 fixes=_fixes_table(conn, release)),
                        {"traj": pa.int64(), "published": pa.int64()})
    published = table["published"].fill_null(NO_CELL).to_numpy()
    return [published[run] for run in _runs(table["traj"].to_numpy(), chosen)]


def _copy_table(data: bytes, types: dict[str, pa.DataType]) -> pa.Table:
    """A COPY's CSV output as typed columns (no string column: nothing per row in Python)."""
    if not data:  # an empty CSV is an error to pyarrow, an empty sample is not one here
        return pa.table({column: pa.array([], kind) for column, kind in types.items()})
    return pacsv.read_csv(pa.py_buffer(data),
                          read_options=pacsv.ReadOptions(column_names=list(types)),
                          convert_options=pacsv.ConvertOptions(column_types=types))


def _runs(traj: np.ndarray, chosen: np.ndarray) -> list[slice]:
    """The rows of each chosen trajectory, ``traj`` being sorted (the COPYs order by it)."""
    starts = np.searchsorted(traj, chosen, "left").tolist()
    stops = np.searchsorted(traj, chosen, "right").tolist()
    return [slice(start, stop) for start, stop in zip(starts, stops, strict=True)]


def _read_published(conn: psycopg.Connection, release: ReleaseSpec,
                    released: tuple[np.ndarray, np.ndarray]) -> _Published:
    """The published sequences (release cell ids) and their source trajectory number."""
    source, cells = copy_sequences(conn, METRICS_SQL + "050_published_sources.sql",
                                   work=release.work_schema)
    published, left_out = relabel(cells, *released)
    if left_out:
        raise ReleaseError(f"{left_out} cells of published sequences are missing from "
                           "work.cell_map: the build and the work schema disagree")
    return _Published(source=source, cells=published)


def _released_cells(conn: psycopg.Connection, release: ReleaseSpec
                    ) -> tuple[np.ndarray, np.ndarray]:
    """The work cells the release publishes (ascending) and their release cell ids."""
    found = fetch_columns(conn, "generalization/085_published_cells.sql",
                          work=release.work_schema)
    return (np.array(found["cell_id"], dtype=np.int64),
            np.array(found["release_cell_id"], dtype=np.int64))


def _read_published_routes(conn: psycopg.Connection, release: ReleaseSpec,
                           chosen: np.ndarray) -> list[np.ndarray | None]:
    """Published line of each chosen trajectory (its first published sequence), or None."""
    found = fetch_columns(conn, METRICS_SQL + "055_published_routes.sql",
                          {"chosen": chosen.tolist()}, work=release.work_schema)
    lines = {source: np.column_stack([xs, ys]).astype(np.float64)
             for source, xs, ys in zip(found["traj_no"], found["xs"], found["ys"], strict=True)}
    return [lines.get(number) for number in chosen.tolist()]


def _read_input_sequences(conn: psycopg.Connection, release: ReleaseSpec,
                          n_trajectories: int, released: tuple[np.ndarray, np.ndarray]
                          ) -> ConcatenatedSequences:
    """Each input trajectory's visits in published cell ids (by trajectory number; the
    visits of cells the release does not publish left out)."""
    numbers, visits = copy_sequences(conn, "generalization/065_visit_sequences.sql",
                                     work=release.work_schema,
                                     numbers=("pg_temp", "metrics_trajectories"))
    # Rows in trajectory number order, one per trajectory with visits (none: empty).
    lengths = np.zeros(n_trajectories, dtype=np.int64)
    lengths[numbers] = visits.lengths()
    return relabel(ConcatenatedSequences(visits.flat, np.r_[0, np.cumsum(lengths)]),
                   *released)[0]


# --------------------------------------------------------------------------- measures


def _displacement_rows(conn: psycopg.Connection, release: ReleaseSpec) -> list[Row]:
    """Andrienko's displacement of the fixes to their cell's centroid, as aggregates over at
    least k persons (no maximum: it is one fix's distance), from the
    fixes summed per cell where their cells are known (progressive generalization for the
    Voronoi methods, the database for the grid): every fix counts, none is read here."""
    sums = (release.work_schema, "cell_displacement")  # progressive generalization's
    if not _is_voronoi(release):
        run_sql_file(conn, METRICS_SQL + "039_located_grid_fixes.sql", work=release.work_schema)
        run_sql_file(conn, METRICS_SQL + "041_grid_cell_displacement.sql",
                     work=release.work_schema, located=("pg_temp", "located_grid_fixes"))
        sums = ("pg_temp", "cell_displacement")
    found = fetch_columns(conn, METRICS_SQL + "040_displacement.sql", {"k": release.k},
                          sums=sums)
    # NULL (too few persons, or no fix in a cell) is what displacement_measures calls NaN.
    d = {name: math.nan if values[0] is None else float(values[0])
         for name, values in found.items()}
    about = "distance from a fix to the centroid of its cell"
    return [
        ("displacement_local_avg_m", d["local_mean_avg"], "m",
         f"Average over the cells whose fixes belong to at least k persons of the cell's "
         f"average {about} (local average, seed 000 §6.1.2)"),
        ("displacement_global_sum_m", d["global_sum"], "m", f"Sum over all fixes of the {about}"),
        ("displacement_global_avg_m", d["global_mean"], "m",
         f"Average over all fixes of the {about}"),
        # The names of the first metrics step, kept for existing readers.
        ("displacement_avg_m", d["global_mean"], "m", "Same as displacement_global_avg_m"),
        ("displacement_sum_m", d["global_sum"], "m", "Same as displacement_global_sum_m"),
    ]


def _homogeneity_rows(published: _Published) -> list[Row]:
    """Share of published prefixes with a single continuation."""
    found = homogeneity(published.cells)
    prefixes = ("published prefixes (cell sequences that start a published trajectory, of "
                "length 1 or more)")
    return [
        ("homogeneous_prefix_share", share(found.homogeneous, found.continued), "ratio",
         f"Among the {prefixes} followed by at least one cell, the share followed by exactly "
         "one distinct cell: knowing that someone took such a prefix tells where they went "
         "next (see parameter min_continuations); NULL when no prefix has a continuation"),
        ("homogeneous_prefixes", found.homogeneous, "count",
         f"Distinct {prefixes} followed by exactly one distinct cell"),
        ("continued_prefixes", found.continued, "count",
         f"Distinct {prefixes} followed by at least one cell"),
    ]


def _cluster_rows(conn: psycopg.Connection, release: ReleaseSpec, n_trajectories: int,
                  rng: np.random.Generator) -> list[Row]:
    """Cluster preservation (§8.3) of a sample of the input trajectories."""
    if not n_trajectories:
        return []
    # The draw of cluster_preservation_report, made before reading: only the sample's fixes
    # and lines leave the database.
    chosen = sample_objects(n_trajectories, CLUSTER_SAMPLE, rng)
    report = cluster_preservation_of_sample(
        _read_sample_routes(conn, release, chosen),
        _read_published_routes(conn, release, chosen),
        CLUSTER_MAX_DISTANCE_ORIGINAL_M, CLUSTER_MAX_DISTANCE_ANONYMIZED_M,
        CLUSTER_MIN_NEIGHBOURS)
    if report["note"]:
        log.info("cluster preservation: %s", report["note"])
    how = (f"OPTICS on route similarity, MaxDistance {CLUSTER_MAX_DISTANCE_ORIGINAL_M:g} m "
           f"original / {CLUSTER_MAX_DISTANCE_ANONYMIZED_M:g} m anonymized, MinNeighbours "
           f"{CLUSTER_MIN_NEIGHBOURS}, on cluster_sample_size trajectories (seed 000 §8.3); "
           f"rounded to {CLUSTER_DECIMALS} decimals")

    def rounded(name: str) -> float:
        return round(float(report[name]), CLUSTER_DECIMALS)

    return [
        ("cluster_precision", rounded("precision"), "ratio", f"Cluster precision: {how}"),
        ("cluster_recall", rounded("recall"), "ratio", f"Cluster recall: {how}"),
        ("cluster_f_measure", rounded("f_measure"), "ratio", f"Cluster F-measure: {how}"),
        ("cluster_precision_star", rounded("precision_star"), "ratio",
         f"Cluster precision not counting original noise: {how}"),
        ("cluster_f_measure_star", rounded("f_measure_star"), "ratio",
         f"F-measure of precision* and recall: {how}"),
        ("cluster_sample_size", report["sample_size"], "count",
         "Input trajectories sampled for cluster preservation (seeded by the input)"),
        ("clusters_original", report["n_clusters_original"], "count",
         "Clusters of the sampled original routes"),
        ("clusters_anonymized", report["n_clusters_anonymized"], "count",
         "Clusters of the published lines of the sampled trajectories"),
    ]


def measure_risk(observed_cells: Sequence[np.ndarray], owners: np.ndarray,
                 published: Sequence[Sequence[int]], published_owners: np.ndarray,
                 input_sequences: Sequence[Sequence[int]], k: int,
                 rng: np.random.Generator | int | None) -> dict[str, Any]:
    """The linking attack of §8.4 on a release; raises if it beats the 1/k bound.

    Parameters are those of
    :func:`~anonymizers.families.generalization.reidentification.reidentification_risk`
    (the observations are :data:`RISK_OBSERVATIONS`, at most :data:`RISK_SAMPLE`
    trajectories).

    Returns
    -------
    dict
        :func:`~anonymizers.families.generalization.reidentification.reidentification_risk`'s
        result.

    Raises
    ------
    PrivacyViolation
        If some attack succeeds with probability above 1/k: the release must not be
        published (Theorem 10 guarantees at most 1/k for a k-anonymous release).
    """
    result: dict[str, Any] = reidentification_risk(
        observed_cells, owners, published, published_owners, input_sequences,
        RISK_OBSERVATIONS, k, max_trajectories=RISK_SAMPLE, rng=rng)
    return _within_bound(result, k)


def _within_bound(result: dict[str, Any], k: int) -> dict[str, Any]:
    """``result`` of the linking attack, or PrivacyViolation if it beats 1/k."""
    if result["max"] > result["bound"]:
        raise PrivacyViolation(
            f"re-identification probability {result['max']:.4f} exceeds 1/k = "
            f"{result['bound']:.4f} (k={k}): some published sequence is contained in the "
            f"sequences of fewer than k owners; the release must not be published")
    return result


def _attack_sample(conn: psycopg.Connection, release: ReleaseSpec, owners: np.ndarray,
                   published: _Published, inputs: ConcatenatedSequences,
                   rng: np.random.Generator) -> dict[str, Any]:
    """:func:`measure_risk` with the trajectories drawn first and only their fixes read."""
    chosen = sample_trajectories(owners.size, RISK_SAMPLE, rng)
    # The attacker observes the first fixes only: no more of them leave the database.
    observed = _read_observations(conn, release, chosen, max(RISK_OBSERVATIONS))
    result: dict[str, Any] = reidentification_risk_of_sample(
        observed, owners, published.cells, owners[published.source], inputs,
        RISK_OBSERVATIONS, release.k)
    return _within_bound(result, release.k)


def _risk_rows(conn: psycopg.Connection, release: ReleaseSpec, owners: np.ndarray,
               published: _Published, inputs: ConcatenatedSequences,
               rng: np.random.Generator) -> tuple[list[Row], list[SeriesRow]]:
    """Re-identification probability per number of observed points (§8.4)."""
    result = _attack_sample(conn, release, owners, published, inputs, rng)
    rows: list[Row] = [
        ("reid_max_probability", result["max"], "probability",
         f"Largest success probability of the linking attack (seed 000 §8.4, Theorem 10) over "
         f"1 to {max(RISK_OBSERVATIONS)} observed fixes of reid_sample_size input trajectories"),
        ("reid_bound", result["bound"], "probability", "1/k: the bound the maximum must respect"),
        ("reid_sample_size", result["n_trajectories"], "count",
         "Input trajectories attacked (sample seeded by the input)"),
    ]
    attack = ("the linking attack when the attacker observes x fixes of a trajectory (its "
              "first x, mapped to published cells; seed 000 §8.4)")
    what = {"mean": ("probability", "Average success probability of"),
            "max": ("probability", "Largest success probability of")}
    series: list[SeriesRow] = [
        (f"reid.{key}", float(row["observations"]), row[key], unit, f"{text} {attack}")
        for key, (unit, text) in what.items() for row in result["by_observations"]]
    series += [("reid.fraction_zero", float(row["observations"]),
                Ratio(int(row["zero"]), int(row["n"])), "ratio",
                f"Share of attacked trajectories that defeat {attack}")
               for row in result["by_observations"]]
    return rows, series
