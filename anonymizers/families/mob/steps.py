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

from anonymizers.db.sqlfiles import copy_frame, copy_out, fetch_columns, run_sql_file
from anonymizers.families.mob.declaration import MobParams, MobTraits
from anonymizers.families.registry import method_entry
from anonymizers.processes import available_processes
from anonymizers.release.step import step

__all__ = ["anonymize_objects", "build_objects", "prepare_objects", "read_int_columns",
           "read_moving_objects"]

log = logging.getLogger(__name__)


def prepare_objects(spec: dict[str, Any]) -> dict[str, int]:
    """Time points, one object per person, carried-forward grid cells and QIDs (PostGIS)."""
    from anonymizers.families.mob.preparation import PositionRule, prepare_mob_tables

    with step("prepare_objects", spec) as (release, conn):
        params = MobParams.of(release.params)
        counts = prepare_mob_tables(conn, release.work_schema, release.window_params(),
                                    params.cell_size, params.interval,
                                    PositionRule.of(params))
    log.info("MOB preparation of %s: %s", release.release_name, counts)
    return counts


def read_int_columns(conn: psycopg.Connection, name: str, **identifiers: str
                     ) -> dict[str, np.ndarray]:
    """The integer columns, by name, that the ``COPY ... TO STDOUT (FORMAT csv, HEADER)``
    of ``sql/<name>`` writes (never by position: reordering a SELECT list must not swap
    two columns)."""
    header, _, body = copy_out(conn, name, None, **identifiers).partition(b"\n")
    names = header.decode().strip().split(",")
    values = (np.loadtxt(io.BytesIO(body), delimiter=",", dtype=np.int64, ndmin=2) if body
              else np.empty((0, len(names)), dtype=np.int64))
    return {column: values[:, i] for i, column in enumerate(names)}


def read_moving_objects(conn: psycopg.Connection, work: str) -> Any:
    """The prepared window as a MovingObjects (cells, presence, QIDs as time-point sets)."""
    from anonymizers.families.mob.moving_objects import MovingObjects

    sizes = fetch_columns(conn, "mob/038_read_sizes.sql", work=work)
    [n_objects], [n_times] = sizes["n_objects"], sizes["n_time_points"]
    cells = read_int_columns(conn, "mob/040_read_cells.sql", work=work)
    qids = read_int_columns(conn, "mob/045_read_qids.sql", work=work)
    return MovingObjects.from_rows(int(n_objects), int(n_times), cells["object_index"],
                                   cells["t_index"], cells["cx"], cells["cy"],
                                   qids["object_index"], qids["t_index"])


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
    from anonymizers.families.mob.outside_qids import OutsideQids
    from anonymizers.families.mob.stand_ins import anonymize_without_stand_ins

    with step("anonymize_objects", spec) as (release, conn):
        objects = read_moving_objects(conn, release.work_schema)
        lists = build_hilbert_lists(objects)
        options: dict[str, Any] = {"lists": lists, "workers": available_processes()}
        traits: MobTraits = method_entry(release.method).traits
        if traits.generalization == "extreme_union":
            anonymize = extreme_union
        else:  # its rankings carry over the rounds (extreme union's groups do not)
            anonymize, options["rankings"] = symmetric_anonymization, Rankings(lists, release.k)
        params = MobParams.of(release.params)
        outside = OutsideQids.of(params, _withheld_box(conn, release, params))
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


def _withheld_box(conn: psycopg.Connection, release: Any,
                  params: MobParams) -> tuple[int, int, int, int]:
    """Inclusive cell ranges of the withheld region: the CRS's area of use."""
    box = fetch_columns(conn, "mob/055_area_of_use_cells.sql",
                        {**release.window_params(), "cell_size": params.cell_size})
    [x0], [y0], [x1], [y1] = box["x0"], box["y0"], box["x1"], box["y1"]
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
    copy_frame(conn, work, table, frame)


def build_objects(spec: dict[str, Any]) -> None:
    """The release tables objects and positions under the build schema (with presence
    hidden, the withheld region of every object at every time point its person has no
    position)."""
    with step("build_objects", spec) as (release, conn):
        params = MobParams.of(release.params)
        x0, y0, x1, y1 = _withheld_box(conn, release, params)
        run_sql_file(conn, "mob/080_build_release.sql",
                     {"srid": release.srid, "cell_size": params.cell_size,
                      "presence": params.presence,
                      "box_x0": x0, "box_y0": y0, "box_x1": x1, "box_y1": y1},
                     work=release.work_schema, build=release.build_schema)
