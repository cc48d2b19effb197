"""The PostGIS preparation of a MOB release: time points, objects, grid cells and QIDs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psycopg

from anonymizers.db.sqlfiles import fetch_columns
from anonymizers.errors import InputError
from anonymizers.families.mob.declaration import MobParams

__all__ = ["POSITION_FILES", "POSITION_SCOPES", "QID_FILE", "PositionRule",
           "prepare_mob_tables", "prepare_positions"]

# In order: each reads what the previous ones wrote in the work schema.
POSITION_FILES = ("mob/010_time_points.sql", "mob/020_positions.sql")
QID_FILE = "mob/030_qids.sql"
# Which fixes may stand for a person at a time point: those of the trajectory running then
# (the paper's carried-forward position within a trajectory), or the person's last fix.
POSITION_SCOPES: tuple[str, ...] = {
    spec.name: spec for spec in MobParams.specs()}["position_scope"].choices or ()
_DEFAULTS = MobParams()


@dataclass(frozen=True)
class PositionRule:
    """When a person has a position at a time point, and which: the last fix at or before
    it of a trajectory running then (``scope`` "trajectory") or of the person ("person":
    the last fix lasts to the window's end), at most ``lookback_s`` seconds old (None: no
    limit). The release records both (``position_scope``, ``position_lookback``) so that
    an outside recount of the attack graph derives the same positions. The defaults are
    those of :class:`~anonymizers.families.mob.declaration.MobParams`."""

    scope: str = _DEFAULTS.position_scope
    lookback_s: int | None = _DEFAULTS.position_lookback

    def __post_init__(self) -> None:
        if self.scope not in POSITION_SCOPES:
            raise InputError(f"position_scope {self.scope!r} must be one of "
                             f"{', '.join(POSITION_SCOPES)}")
        if self.lookback_s is not None and self.lookback_s <= 0:
            raise InputError(f"position_lookback ({self.lookback_s} s) must be positive; "
                             "leave it empty for no limit")

    @classmethod
    def of(cls, params: MobParams) -> PositionRule:
        """The rule of a release's typed parameters."""
        return cls(params.position_scope, params.position_lookback)

    def sql_params(self) -> dict[str, Any]:
        return {"position_scope": self.scope, "position_lookback_s": self.lookback_s}


def prepare_mob_tables(conn: psycopg.Connection, work_schema: str,
                       window_params: dict[str, Any], cell_size: float,
                       interval_s: int, rule: PositionRule = PositionRule()) -> dict[str, int]:
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
    rule
        Which fix is a person's position at a time point (:class:`PositionRule`).

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
    counts = prepare_positions(conn, work_schema, window_params, cell_size, interval_s, rule)
    counts.update(_run(conn, QID_FILE, work_schema, window_params, cell_size, interval_s,
                       rule))
    return counts


def prepare_positions(conn: psycopg.Connection, work_schema: str,
                      window_params: dict[str, Any], cell_size: float,
                      interval_s: int, rule: PositionRule = PositionRule()) -> dict[str, int]:
    """The first part of :func:`prepare_mob_tables`: time points, objects and cells, no QIDs.

    Returns ``time_points``, ``objects`` and ``cells``. QID generation uses it to know
    when each person has a position.
    """
    if not cell_size > 0 or interval_s <= 0:
        raise InputError(f"cell_size ({cell_size}) and interval ({interval_s} s) must be "
                         "positive. Pass e.g. cell_size=100 and interval=300.")
    counts: dict[str, int] = {}
    for name in POSITION_FILES:
        counts.update(_run(conn, name, work_schema, window_params, cell_size, interval_s,
                           rule))
    return counts


def _run(conn: psycopg.Connection, name: str, work_schema: str, window_params: dict[str, Any],
         cell_size: float, interval_s: int, rule: PositionRule) -> dict[str, int]:
    """One preparation file; the counts it ends with (a json object: by name, not position)."""
    params = {**window_params, "cell_size": cell_size, "interval_s": interval_s,
              **rule.sql_params()}
    [counts] = fetch_columns(conn, name, params, work=work_schema)["counts"]
    return {key: int(value) for key, value in counts.items()}
