"""The steps of a MOB release (seed 003): preparation in PostGIS, anonymization in Python,
the release tables in PostGIS.

Each step runs in one transaction (:func:`anonymizers.pipeline.steps.step`), reads and
writes only its run's work/build schema (plus raw, read-only) and gives the same outcome
when re-run. Data moves between steps through tables of the work schema.
"""

from __future__ import annotations

import io
import logging
from typing import Any

import numpy as np
import pandas as pd
import psycopg
from psycopg import sql

from anonymizers.db.sqlfiles import copy_out, run_sql_file
from anonymizers.errors import InputError
from anonymizers.processes import available_processes
from anonymizers.release.step import step

__all__ = ["anonymize_objects", "build_objects", "prepare_objects", "read_moving_objects"]

log = logging.getLogger(__name__)


def prepare_objects(spec: dict[str, Any]) -> dict[str, int]:
    """Time points, one object per person, carried-forward grid cells and QIDs (PostGIS)."""
    from anonymizers.families.mob.preparation import PositionRule, prepare_mob_tables

    with step("prepare_objects", spec) as (release, conn):
        counts = prepare_mob_tables(conn, release.work_schema, release.window_params(),
                                    float(release.params["cell_size"]),
                                    int(release.params["interval"]),
                                    PositionRule.of(release.params))
    log.info("MOB preparation of %s: %s", release.release_name, counts)
    return counts


def _csv_ints(data: bytes, columns: int) -> np.ndarray:
    if not data:
        return np.empty((0, columns), dtype=np.int64)
    return np.loadtxt(io.BytesIO(data), delimiter=",", dtype=np.int64, ndmin=2)


def read_moving_objects(conn: psycopg.Connection, work: str) -> Any:
    """The prepared window as a MovingObjects (cells, presence, QIDs as time-point sets)."""
    from anonymizers.families.mob.moving_objects import MovingObjects

    counts = conn.execute(sql.SQL(
        "SELECT (SELECT count(*) FROM {o}), (SELECT count(*) FROM {t})").format(
        o=sql.Identifier(work, "mob_objects"), t=sql.Identifier(work, "mob_time_points"))
    ).fetchone()
    n_objects, n_times = (int(counts[0]), int(counts[1])) if counts else (0, 0)
    cells = _csv_ints(copy_out(conn, "mob/040_read_cells.sql", work=work), 4)
    qids = _csv_ints(copy_out(conn, "mob/045_read_qids.sql", work=work), 2)
    return MovingObjects.from_rows(n_objects, n_times, cells[:, 0], cells[:, 1], cells[:, 2],
                                   cells[:, 3], qids[:, 0], qids[:, 1])


def anonymize_objects(spec: dict[str, Any]) -> dict[str, int]:
    """Extreme Union or Symmetric Anonymization, then Generalize (Algorithms 1-5), again
    until no suppressed object could pass for a published one, or, with presence hidden,
    once, the suppressed objects published blank (:mod:`..stand_ins`)."""
    from anonymizers.families.mob.anonymity import (
        Rankings,
        extreme_union,
        symmetric_anonymization,
    )
    from anonymizers.families.mob.genag import build_hilbert_lists
    from anonymizers.families.mob.stand_ins import anonymize_without_stand_ins

    with step("anonymize_objects", spec) as (release, conn):
        objects = read_moving_objects(conn, release.work_schema)
        lists = build_hilbert_lists(objects)
        options: dict[str, Any] = {"lists": lists, "workers": available_processes()}
        if release.method == "mob_extreme_union":
            anonymize = extreme_union
        else:  # its rankings carry over the rounds (extreme union's groups do not)
            anonymize, options["rankings"] = symmetric_anonymization, Rankings(lists, release.k)
        outside = _outside_qids(conn, release)
        unambiguous = anonymize_without_stand_ins(objects, release.k, anonymize, outside,
                                                  **options)
        sets, regions = unambiguous.sets, unambiguous.regions
        published = unambiguous.published_objects()
        run_sql_file(conn, "mob/050_anonymized_tables.sql", work=release.work_schema)
        _copy(conn, release.work_schema, "mob_published",
              {"object_index": published, "blank": unambiguous.blank[published]})
        _copy(conn, release.work_schema, "mob_sets", _set_pairs(sets))
        _copy(conn, release.work_schema, "mob_regions", regions.columns(),
              null_below_zero=("class_id",))
    return {"objects": objects.n_objects, "suppressed": int(sets.n_suppressed),
            "suppressed_for_stand_ins": unambiguous.excluded, "rounds": unambiguous.rounds,
            "blank": int(unambiguous.blank.sum())}


def _set_pairs(sets: Any) -> dict[str, np.ndarray]:
    """S(O) of every object as (object, member) pairs: the groups the release was made on,
    kept in the work schema so that they can be compared with what the verifier counts."""
    owners = np.repeat(np.arange(sets.n_objects), np.diff(sets.set_indptr))
    return {"object_index": owners, "member_index": sets.set_members}


def _outside_qids(conn: psycopg.Connection, release: Any) -> Any:
    """The release's rule for positions outside every QID (:mod:`..outside_qids`)."""
    from anonymizers.families.mob.outside_qids import OutsideQids

    params = release.params
    cell, coarse = float(params["cell_size"]), float(params.get("coarse_cell_size") or 1000.0)
    factor = round(coarse / cell)
    if factor < 1 or abs(factor * cell - coarse) > 1e-6 * coarse:
        raise InputError(f"coarse_cell_size ({coarse:g} m) must be a whole multiple of "
                         f"cell_size ({cell:g} m), e.g. {10 * cell:g}")
    return OutsideQids(str(params.get("outside_qids") or "hiding_set"), factor,
                       _withheld_box(conn, release), str(params.get("presence") or "hidden"))


def _withheld_box(conn: psycopg.Connection, release: Any) -> tuple[int, int, int, int]:
    """Inclusive cell ranges of the withheld region: the CRS's area of use."""
    [(x0, y0, x1, y1)] = run_sql_file(conn, "mob/055_area_of_use_cells.sql",
                                      {**release.window_params(),
                                       "cell_size": float(release.params["cell_size"])})
    return int(x0), int(y0), int(x1), int(y1)


def _copy(conn: psycopg.Connection, work: str, table: str, columns: dict[str, np.ndarray],
          null_below_zero: tuple[str, ...] = ()) -> None:
    """COPY integer columns; in ``null_below_zero`` a negative value means NULL (a class id
    of -1: the object's own cell). Cell coordinates may be negative, so no other column
    uses a marker."""
    frame = pd.DataFrame({name: pd.array(values.astype(np.int64), dtype="Int64")
                          for name, values in columns.items()})
    for name in null_below_zero:
        frame.loc[frame[name] < 0, name] = pd.NA
    statement = sql.SQL("COPY {} ({}) FROM STDIN (FORMAT csv)").format(
        sql.Identifier(work, table), sql.SQL(", ").join(map(sql.Identifier, columns)))
    buffer = io.StringIO()
    frame.to_csv(buffer, index=False, header=False)
    with conn.cursor().copy(statement) as copy:
        copy.write(buffer.getvalue())


def build_objects(spec: dict[str, Any]) -> None:
    """The release tables objects and positions under the build schema (with presence
    hidden, the withheld region of every object at every time point its person has no
    position)."""
    with step("build_objects", spec) as (release, conn):
        x0, y0, x1, y1 = _withheld_box(conn, release)
        run_sql_file(conn, "mob/080_build_release.sql",
                     {"srid": release.srid, "cell_size": float(release.params["cell_size"]),
                      "presence": str(release.params.get("presence") or "hidden"),
                      "box_x0": x0, "box_y0": y0, "box_x1": x1, "box_y1": y1},
                     work=release.work_schema, build=release.build_schema)
