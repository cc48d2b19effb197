"""Generated quasi-identifiers of a dataset (the ``anonymizers qids generate`` command).

The MOB family's own part of QIDs: who is present when, by the family's preparation (its
position rule and time grid), and QIDs drawn in the configurations of seed 003 §6.2
(:mod:`.qid_generation`); they are stored by the loading layer
(:func:`anonymizers.loading.qids.store_qids`), which imports no family.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import psycopg

from anonymizers.db.connection import connect
from anonymizers.db.sqlfiles import fetch_columns
from anonymizers.errors import InputError
from anonymizers.families.mob.declaration import MobParams
from anonymizers.loading.qids import Dataset, find_dataset, store_qids
from anonymizers.release.spec import area_of_use, utm_srid

__all__ = ["GENERATION_WORK", "QidGenerationResult", "generate_and_store_qids"]

GENERATION_WORK = "pg_temp"  # the preparation's tables live and die with the session
_DEFAULTS = MobParams()  # a release's defaults: QIDs on the grid a default release uses


@dataclass(frozen=True)
class QidGenerationResult:
    """What a QID generation did, on which time grid."""

    dataset: str
    dataset_id: int
    strategy: str
    max_size: int
    seed: int
    interval_s: int
    grid_start: datetime  # time point 0: the first fix floored to the interval
    n_time_points: int
    n_objects: int  # persons with a position at some time point
    n_qids: int
    n_persons: int  # persons with a QID
    replaced: int

    def summary(self) -> str:
        return (f"generated {self.n_qids} QID time(s) of {self.n_persons} of "
                f"{self.n_objects} person(s) for dataset {self.dataset!r} "
                f"({self.strategy}, max_size {self.max_size}, seed {self.seed}; "
                f"{self.n_time_points} time points every {self.interval_s} s from "
                f"{self.grid_start.isoformat()}); replaced {self.replaced}")


def generate_and_store_qids(dataset: str, strategy: str, max_size: int, seed: int,
                            interval_s: int = _DEFAULTS.interval, url: str | None = None, *,
                            srid: int | None = None) -> QidGenerationResult:
    """Generate QIDs of one configuration for ``dataset`` and make them its QIDs.

    Presence comes from the MOB preparation (sql/mob/010, 020) over the whole dataset, on
    a grid of ``interval_s`` from the first fix floored to a multiple of the interval
    (since 1970) to its last fix; a person is present at a time point when it has a
    position there (§6.1: carried forward within a trajectory). The generated time points
    are stored as timestamps of that grid, so a release with the same interval and a
    window aligned to it maps each to the same time point; a person is an object there
    if it has a position in that window (fixes outside the CRS's area of use, here that
    of ``srid``, default the UTM zone of the dataset's median fix as in a release, do not
    count). All in one transaction.

    References
    ----------
    Yarovoy et al., EDBT 2009, §6.1 (constant sampling rate, carried forward) and §6.2
    (QID configurations; see :func:`anonymizers.families.mob.qid_generation.generate_qids`).
    """
    from anonymizers.families.mob.qid_generation import check_parameters, generate_qids

    check_parameters(strategy, max_size)  # before the preparation's work, not after
    if interval_s <= 0:
        raise InputError(f"interval must be a positive number of seconds (got {interval_s}).")
    with connect(url) as conn:
        target = find_dataset(conn, dataset)
        grid = _grid(target, interval_s, srid)
        presence, user_ids = _presence(conn, grid, interval_s)
        objects, times = generate_qids(presence, strategy, max_size, seed)
        start = grid["window_start"]
        stamps = (np.datetime64(start.replace(tzinfo=None), "us")
                  + times * np.timedelta64(interval_s, "s"))  # UTC, naive
        stored = store_qids(conn, target.dataset_id, user_ids[objects], stamps)
    return QidGenerationResult(
        dataset, target.dataset_id, strategy, max_size, seed, interval_s, start,
        presence.shape[1], presence.shape[0], stored.stored, len(np.unique(objects)),
        stored.removed)


def _grid(target: Dataset, interval_s: int, srid: int | None) -> dict[str, Any]:
    """Window parameters covering the whole dataset on an interval-aligned grid."""
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    first = (target.t_min - epoch) // timedelta(seconds=interval_s)
    last = (target.t_max - epoch) // timedelta(seconds=interval_s)
    srid = srid or utm_srid(target.lon_median, target.lat_median)
    return {"dataset_id": target.dataset_id,
            "window_start": epoch + timedelta(seconds=first * interval_s),
            "window_end": epoch + timedelta(seconds=(last + 1) * interval_s),
            "srid": srid, **area_of_use(srid)}


def _presence(conn: psycopg.Connection, grid: dict[str, Any],
              interval_s: int) -> tuple[np.ndarray, np.ndarray]:
    """The presence matrix (objects x time points) and each object's user_id."""
    from anonymizers.families.mob.preparation import prepare_positions

    counts = prepare_positions(conn, GENERATION_WORK, grid, _DEFAULTS.cell_size, interval_s)
    runs = {name: np.asarray(values, dtype=np.int64) for name, values in fetch_columns(
        conn, "mob/qids/presence.sql", work=GENERATION_WORK).items()}
    # Each run adds 1 from its first time point on and takes it back after its last (an
    # object's runs are disjoint: the sum is 0 or 1, int8 keeps the matrix small).
    steps = np.zeros((counts["objects"], counts["time_points"] + 1), dtype=np.int8)
    np.add.at(steps, (runs["object_index"], runs["first_index"]), 1)
    np.add.at(steps, (runs["object_index"], runs["last_index"] + 1), -1)
    presence = np.cumsum(steps, axis=1, dtype=np.int8)[:, :-1] > 0
    user_ids = np.array(fetch_columns(conn, "mob/qids/objects.sql",
                                      work=GENERATION_WORK)["user_id"], dtype=object)
    return presence, user_ids
