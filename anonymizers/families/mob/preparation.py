"""The PostGIS preparation of a MOB release: time points, objects, grid cells and QIDs."""

from __future__ import annotations

from typing import Any

import psycopg

from anonymizers.db.sqlfiles import run_sql_file
from anonymizers.errors import InputError

__all__ = ["DEFAULT_CELL_SIZE", "DEFAULT_INTERVAL_S", "POSITION_FILES", "QID_FILE",
           "prepare_mob_tables", "prepare_positions"]

DEFAULT_CELL_SIZE = 100.0  # metres
DEFAULT_INTERVAL_S = 300  # one time point every 5 minutes, as in the paper (§6.1)

# In order: each reads what the previous ones wrote in the work schema.
POSITION_FILES = ("mob/010_time_points.sql", "mob/020_positions.sql")
QID_FILE = "mob/030_qids.sql"


def prepare_mob_tables(conn: psycopg.Connection, work_schema: str,
                       window_params: dict[str, Any], cell_size: float,
                       interval_s: int) -> dict[str, int]:
    """Build the MOB tables of one window in ``work_schema``.

    ``mob_time_points`` (t_index, t), ``mob_objects`` (object_index, user_id),
    ``mob_cells`` (object_index, t_index, cx, cy) and ``mob_qids`` (object_index,
    t_index), with the one-row ``mob_qid_stats``; what each holds is in the header of its
    file under ``sql/mob/``.

    Parameters
    ----------
    conn
        Connection of the step; the tables are written in its transaction.
    work_schema
        The run's work schema (it must exist).
    window_params
        ``dataset_id``, ``window_start``, ``window_end``, ``srid`` and the lon/lat bounds
        ``lon_min`` .. ``lat_max`` (:meth:`anonymizers.release.spec.ReleaseSpec.window_params`).
    cell_size
        Side of a grid cell in metres of the CRS; the grid is anchored at its origin.
    interval_s
        Seconds between time points, which start at ``window_start``.

    Returns
    -------
    dict
        ``time_points``, ``objects``, ``cells`` and the QID counts ``qids_in_window``,
        ``qid_time_points``, ``qids_merged``, ``qids_dropped``, ``qids``,
        ``objects_with_qid``.

    References
    ----------
    Yarovoy, Bonchi, Lakshmanan, Wang. Anonymizing Moving Objects: How to Hide a MOB in a
    Crowd? EDBT 2009. §3 (a MOD over time points, positions as grid cells, QIDs), §6.1
    (constant sampling rate, no interpolation, the last observed position carried forward).
    """
    counts = prepare_positions(conn, work_schema, window_params, cell_size, interval_s)
    counts.update(_run(conn, QID_FILE, work_schema, window_params, cell_size, interval_s))
    return counts


def prepare_positions(conn: psycopg.Connection, work_schema: str,
                      window_params: dict[str, Any], cell_size: float,
                      interval_s: int) -> dict[str, int]:
    """The first part of :func:`prepare_mob_tables`: time points, objects and cells, no QIDs.

    Returns ``time_points``, ``objects`` and ``cells``. QID generation uses it to know
    when each person has a position.
    """
    if not cell_size > 0 or interval_s <= 0:
        raise InputError(f"cell_size ({cell_size}) and interval ({interval_s} s) must be "
                         "positive. Pass e.g. cell_size=100 and interval=300.")
    counts: dict[str, int] = {}
    for name in POSITION_FILES:
        counts.update(_run(conn, name, work_schema, window_params, cell_size, interval_s))
    return counts


def _run(conn: psycopg.Connection, name: str, work_schema: str, window_params: dict[str, Any],
         cell_size: float, interval_s: int) -> dict[str, int]:
    """One preparation file; the counts it ends with (a json object: by name, not position)."""
    params = {**window_params, "cell_size": float(cell_size), "interval_s": int(interval_s)}
    [(counts,)] = run_sql_file(conn, name, params, work=work_schema)
    return {key: int(value) for key, value in counts.items()}
