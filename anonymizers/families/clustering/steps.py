"""The steps of a clustering release (seed 002, TCAA): the window's fixes in PostGIS, the
synchronization and clustering in Python, the generalized group trajectories in PostGIS.

Each step runs in one transaction (:func:`anonymizers.pipeline.steps.step`), reads and
writes only its run's work/build schema (plus raw, read-only) and gives the same outcome
when re-run. Data moves between steps through tables of the work schema.
"""

from __future__ import annotations

import io
import logging
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import psycopg

from anonymizers.db.sqlfiles import copy_frame, copy_out, run_sql_file
from anonymizers.errors import InputError
from anonymizers.pipeline.steps import step

if TYPE_CHECKING:
    from anonymizers.families.clustering.tcaa import SynchronizedPieces

__all__ = ["build_groups", "cluster_pieces", "prepare_fixes", "usable_window_seconds"]

log = logging.getLogger(__name__)


def prepare_fixes(spec: dict[str, Any]) -> None:
    """The window's fixes projected to the release's CRS, with integer keys (PostGIS)."""
    with step("prepare_fixes", spec) as (release, conn):
        run_sql_file(conn, "clustering/010_window_fixes.sql", release.window_params(),
                     work=release.work_schema)


def usable_window_seconds(window_seconds: float, slice_seconds: int, interval: int) -> float:
    """The part of the window covered by whole slices (a partial last slice is left out:
    its pieces would not be synchronized with the others); InputError if none is."""
    if slice_seconds % interval:
        raise InputError(f"slice_seconds={slice_seconds} is not a multiple of "
                         f"interval={interval}; choose slice_seconds = n * interval")
    usable = (window_seconds // slice_seconds) * slice_seconds
    if usable <= 0:
        raise InputError(f"the window ({window_seconds:g} s) is shorter than one slice "
                         f"(slice_seconds={slice_seconds}); lower slice_seconds")
    return float(usable)


def cluster_pieces(spec: dict[str, Any]) -> dict[str, int]:
    """TSynchzing on the window's time grid, then TClustering per slice (Algorithms 1-2);
    writes the pieces, their positions and the private group assignment."""
    from anonymizers.families.clustering.tcaa import synchronize_on_grid, tcaa

    with step("cluster_pieces", spec) as (release, conn):
        params = release.params
        interval, slice_seconds = int(params["interval"]), int(params["slice_seconds"])
        window = (datetime.fromisoformat(release.window_end)
                  - datetime.fromisoformat(release.window_start)).total_seconds()
        end = usable_window_seconds(window, slice_seconds, interval)
        fixes = pd.read_csv(io.BytesIO(copy_out(conn, "clustering/015_read_fixes.sql",
                                                work=release.work_schema)),
                            names=["traj", "person", "s", "x", "y"])
        inside = fixes["s"].to_numpy() <= end  # a slice ends at its last time point
        fixes = fixes[inside]
        pieces = synchronize_on_grid(
            fixes["traj"].to_numpy(np.int64), fixes["person"].to_numpy(np.int64),
            fixes["s"].to_numpy(float), fixes["x"].to_numpy(float), fixes["y"].to_numpy(float),
            0.0, end, interval=float(interval), slice_seconds=float(slice_seconds))
        labels = tcaa(pieces, release.k, lam=float(params["lam"]),
                      alpha=float(params["alpha"]), seed=int(release.input_fingerprint[:8], 16))
        _write(conn, release.work_schema, pieces, labels)
    return {"pieces": pieces.n_pieces, "grouped": int((labels >= 0).sum()),
            "persons_without_piece": int(pieces.uncovered_persons.size)}


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
        params = release.params
        run_sql_file(conn, "clustering/080_build_release.sql", {
            "srid": release.srid, "snap": float(params["snap"]), "k": release.k,
            "count_interval": release.count_interval, "window_start": release.window_start,
            "slice_seconds": int(params["slice_seconds"]),
            "interval_s": int(params["interval"])},
            work=release.work_schema, build=release.build_schema)
