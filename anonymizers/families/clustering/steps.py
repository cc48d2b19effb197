"""The steps of a clustering release: the window's fixes in PostGIS; then, for TCAA (seed
002), synchronization and clustering in Python and the per-time rectangles in PostGIS, or,
for MLA (seed 001), clustering and alignment in Python and the aligned regions in PostGIS.

Each step runs in one transaction (:func:`anonymizers.pipeline.steps.step`), reads and
writes only its run's work/build schema (plus raw, read-only) and gives the same outcome
when re-run. Data moves between steps through tables of the work schema.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import psycopg
import pyarrow as pa

from anonymizers.db.arrow_reads import read_columns
from anonymizers.db.sqlfiles import copy_frame, run_sql_file
from anonymizers.errors import InputError, ReleaseError
from anonymizers.families.clustering.declaration import ClusteringTraits, MlaParams, TcaaParams
from anonymizers.families.registry import method_entry
from anonymizers.release.step import step

if TYPE_CHECKING:
    from anonymizers.families.clustering.mla import MlaRelease
    from anonymizers.families.clustering.mla_loss import Grid
    from anonymizers.families.clustering.tcaa import SynchronizedPieces

__all__ = [
    "align_clusters",
    "build_aligned_groups",
    "build_groups",
    "cluster_pieces",
    "prepare_fixes",
    "usable_window_seconds",
]

log = logging.getLogger(__name__)

# The columns of clustering/015_read_fixes.sql.
_FIXES = {"traj_index": pa.int32(), "person_index": pa.int32(), "s": pa.float64(),
          "x": pa.float64(), "y": pa.float64()}


def prepare_fixes(spec: dict[str, Any]) -> None:
    """The window's fixes projected to the release's CRS, with integer keys (PostGIS)."""
    with step("prepare_fixes", spec) as (release, conn):
        run_sql_file(conn, "clustering/010_window_fixes.sql", release.window_params(),
                     work=release.work_schema)


def usable_window_seconds(window_seconds: float, period: int, name: str) -> float:
    """The part of the window covered by whole periods of ``period`` seconds (a partial
    last one is left out: its fixes would not be comparable with the others'); InputError
    naming the parameter ``name`` if none is."""
    usable = (window_seconds // period) * period
    if usable <= 0:
        raise InputError(f"the window ({window_seconds:g} s) is shorter than one period of "
                         f"{name}={period}; lower {name}")
    return float(usable)


def _window_seconds(release: Any) -> float:
    return (datetime.fromisoformat(release.window_end)
            - datetime.fromisoformat(release.window_start)).total_seconds()


def _read_fixes(conn: psycopg.Connection, work: str, end: float) -> pd.DataFrame:
    """The prepared fixes with s < ``end``, by trajectory and time."""
    columns = read_columns(conn, "clustering/015_read_fixes.sql", _FIXES, {"end": end},
                           work=work)
    return pd.DataFrame(dict(zip(("traj", "person", "s", "x", "y"), columns.values(),
                                 strict=True)))


def cluster_pieces(spec: dict[str, Any]) -> dict[str, int]:
    """TSynchzing on the window's time grid, then TClustering per slice (Algorithms 1-2);
    writes the pieces, their positions and the private group assignment."""
    from anonymizers.families.clustering.tcaa import synchronize_on_grid, tcaa

    with step("cluster_pieces", spec) as (release, conn):
        params = TcaaParams.of(release.params)
        interval, slice_seconds = params.interval, params.slice_seconds
        if slice_seconds % interval:
            raise InputError(f"slice_seconds={slice_seconds} is not a multiple of "
                             f"interval={interval}; choose slice_seconds = n * interval")
        end = usable_window_seconds(_window_seconds(release), slice_seconds, "slice_seconds")
        fixes = _read_fixes(conn, release.work_schema, end)
        pieces = synchronize_on_grid(
            fixes["traj"].to_numpy(np.int64), fixes["person"].to_numpy(np.int64),
            fixes["s"].to_numpy(float), fixes["x"].to_numpy(float), fixes["y"].to_numpy(float),
            0.0, end, interval=interval, slice_seconds=slice_seconds,
            max_gap=params.max_gap_seconds)
        labels = tcaa(pieces, release.k, lam=params.lam, alpha=params.alpha,
                      seed=_seed(release))
        _write(conn, release.work_schema, pieces, labels)
    return {"pieces": pieces.n_pieces, "grouped": int((labels >= 0).sum()),
            "persons_without_piece": int(pieces.uncovered_persons.size)}


def _seed(release: Any) -> int:
    """A seed fixed for the source file, window and installation secret (reruns, and runs
    after a reload of the file, give the same release): the release's keyed seed."""
    return int(release.seed) & 0xFFFFFFFF  # 32 bits: scikit-learn's random_state


def _write(conn: psycopg.Connection, work: str, pieces: SynchronizedPieces,
           labels: np.ndarray) -> None:
    """The pieces, their positions and the private group assignment (COPY)."""
    run_sql_file(conn, "clustering/020_synchronized_tables.sql", work=work)
    ids = np.arange(pieces.n_pieces)
    copy_frame(conn, work, "cl_pieces", pd.DataFrame({
        "piece_id": ids, "person_index": pieces.piece_person, "traj_index": pieces.piece_traj,
        "slice": pieces.piece_slice}))
    n = pieces.points_per_slice
    copy_frame(conn, work, "cl_positions", pd.DataFrame({
        "piece_id": np.repeat(ids, n), "seq": np.tile(np.arange(n), pieces.n_pieces),
        "x": pieces.X.ravel(), "y": pieces.Y.ravel()}))
    run_sql_file(conn, "clustering/030_groups_table.sql", work=work)
    grouped = labels >= 0
    copy_frame(conn, work, "cl_groups", pd.DataFrame({"piece_id": ids[grouped],
                                                      "group_index": labels[grouped]}))


def build_groups(spec: dict[str, Any]) -> None:
    """The release tables groups and group_regions (TGeneralizing in PostGIS)."""
    with step("build_groups", spec) as (release, conn):
        params = TcaaParams.of(release.params)
        _release_tables(conn, release)
        run_sql_file(conn, "clustering/080_build_release.sql", {
            "srid": release.srid, "snap": params.snap, "k": release.k,
            "count_interval": release.count_interval, "window_start": release.window_start,
            "slice_seconds": params.slice_seconds, "interval_s": params.interval},
            work=release.work_schema, build=release.build_schema)


def align_clusters(spec: dict[str, Any]) -> dict[str, int]:
    """MLA (seed 001): cluster the window's trajectories on the ε grid and time bins, align
    each cluster and keep what k persons support; writes the regions, the private
    membership and the run's loss figures."""
    from anonymizers.families.clustering import mla

    with step("align_clusters", spec) as (release, conn):
        params = MlaParams.of(release.params)
        time_bin = params.time_bin
        end = usable_window_seconds(_window_seconds(release), time_bin, "time_bin")
        fixes = _read_fixes(conn, release.work_schema, end)
        if fixes.empty:
            raise InputError("the window has no fixes inside whole time bins; widen the window "
                             "or lower time_bin")
        grid = _core_grid(fixes, params.epsilon, time_bin, int(end // time_bin),
                          params.coverage)
        inside = grid.contains(fixes["x"].to_numpy(float), fixes["y"].to_numpy(float))
        fixes = fixes[inside]
        traits: ClusteringTraits = method_entry(release.method).traits
        run = {"heuristic": mla.mla_heuristic, "kmeans": mla.mla_kmeans,
               "iterative_kmeans": mla.mla_iterative_kmeans}[traits.clustering]
        result = run(fixes["traj"].to_numpy(np.int64), fixes["person"].to_numpy(np.int64),
                     fixes["s"].to_numpy(float), fixes["x"].to_numpy(float),
                     fixes["y"].to_numpy(float), k=release.k, grid=grid, seed=_seed(release))
        _write_aligned(conn, release.work_schema, result, int((~inside).sum()))
    return {"clusters": len(result.clusters), "suppressed_points": result.suppressed_points,
            "suppressed_trajectories": result.suppressed_trajectories}


def _core_grid(fixes: pd.DataFrame, epsilon: float, time_bin: int, n_bins: int,
               coverage: float) -> Grid:
    """The anchored grid (:meth:`Grid.anchored`) of the central ``coverage`` share of the
    fixes on each axis. Why not all of them: one GPS outlier hundreds of kilometres away
    would deepen both hierarchies and blow up every region whose column it joins; the
    fixes outside the block are suppressed instead (charged the full loss in bits)."""
    from anonymizers.families.clustering.mla_loss import Grid

    tail = (1.0 - coverage) / 2
    x, y = (np.quantile(fixes[axis].to_numpy(float), [tail, 1.0 - tail]) for axis in "xy")
    return Grid.anchored(x, y, epsilon, time_bin, n_bins)


def _write_aligned(conn: psycopg.Connection, work: str, result: MlaRelease,
                   outside: int) -> None:
    """The clusters' regions, their private membership and the run's figures (COPY); the
    ``outside`` fixes beyond the grid count as suppressed points of full loss."""
    run_sql_file(conn, "clustering/040_aligned_tables.sql", work=work)
    clusters = result.clusters
    sizes = np.array([len(c.regions) for c in clusters], dtype=np.int64)
    regions = (np.concatenate([c.regions for c in clusters]) if clusters
               else np.empty((0, 6)))
    copy_frame(conn, work, "ml_clusters", pd.DataFrame({
        "cluster_index": np.arange(len(clusters)),
        "matched_persons": [c.matched_persons for c in clusters]}))
    copy_frame(conn, work, "ml_regions", pd.DataFrame({
        "cluster_index": np.repeat(np.arange(len(clusters)), sizes),
        "seq": np.concatenate([np.arange(n) for n in sizes]) if clusters else [],
        **{name: regions[:, i] for i, name in enumerate(
            ("x_lo", "x_hi", "y_lo", "y_hi", "t_lo", "t_hi"))},
        "n_points": np.concatenate([c.region_points for c in clusters]) if clusters else [],
        "n_persons": np.concatenate([c.region_persons for c in clusters]) if clusters else [],
    }))
    copy_frame(conn, work, "ml_members", pd.DataFrame({
        "cluster_index": np.repeat(np.arange(len(clusters)),
                                   [len(c.trajectories) for c in clusters]),
        "traj_index": np.concatenate([c.trajectories for c in clusters]) if clusters else [],
    }))
    lost = outside * result.grid.bits_per_point
    copy_frame(conn, work, "ml_summary", pd.DataFrame([{
        "loss_bits": result.loss_bits + lost,
        "cluster_loss_bits_sum": int(result.cluster_loss_bits.sum()),
        "clusters": len(clusters),
        "full_suppression_bits": result.full_suppression_bits + lost,
        "bits_per_point": result.grid.bits_per_point,
        "merged_clusters": result.merged_clusters,
        "suppressed_clusters": result.suppressed_clusters,
        **_aligned_counts(result),
        "area_per_location_m2": result.area_per_location}]))


def _aligned_counts(result: MlaRelease) -> dict[str, int]:
    """The counts behind MLA's below-k share and mean length increase: the metrics publish
    ratios from filtered counts, never the exact quotients (privacy rule 8)."""
    published = sum(len(c.trajectories) for c in result.clusters)
    clustered = published + result.suppressed_trajectories  # the clusters partition them
    counts = {"below_k_trajectories": round(result.below_k_share * clustered),
              "clustered_trajectories": clustered,
              "length_increase_sum": round(result.length_increase * published),
              "published_trajectories": published}
    for part, whole, exact in (("below_k_trajectories", "clustered_trajectories",
                                result.below_k_share),
                               ("length_increase_sum", "published_trajectories",
                                result.length_increase)):
        if counts[whole] and abs(counts[part] / counts[whole] - exact) > 1e-9 * max(1, abs(exact)):
            raise ReleaseError(f"MLA's {part} over {whole} ({counts[part]} / {counts[whole]}) "
                               f"is not its ratio {exact}: the run's figures disagree")
    return counts


def build_aligned_groups(spec: dict[str, Any]) -> None:
    """The release tables groups and group_regions of an MLA release (PostGIS)."""
    with step("build_aligned_groups", spec) as (release, conn):
        _release_tables(conn, release)
        run_sql_file(conn, "clustering/085_build_aligned_release.sql", {
            "srid": release.srid, "k": release.k, "count_interval": release.count_interval,
            "window_start": release.window_start},
            work=release.work_schema, build=release.build_schema)


def _release_tables(conn: psycopg.Connection, release: Any) -> None:
    """The empty release tables of every clustering method, in a fresh build schema."""
    run_sql_file(conn, "clustering/075_release_tables.sql", {"srid": release.srid},
                 build=release.build_schema)
