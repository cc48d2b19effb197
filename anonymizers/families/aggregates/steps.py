"""The steps of an aggregates release: the window's fixes mapped onto zones and each
person's dominant zone per bin (PostGIS), the cells counted (PostGIS), the suppression
search (numpy), the release tables (PostGIS).

Each step runs in one transaction (:func:`anonymizers.release.step.step`), reads and
writes only its run's work/build schema (plus raw, read-only) and gives the same outcome
when re-run. Data moves between steps through tables of the work schema.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd
import psycopg

from anonymizers.db.sqlfiles import copy_frame, fetch_columns, fetch_row, run_sql_file
from anonymizers.errors import InputError
from anonymizers.families.aggregates import suppression
from anonymizers.families.aggregates.declaration import AggregatesParams, AggregatesTraits
from anonymizers.families.registry import METHODS, method_entry
from anonymizers.release.step import step

__all__ = ["build_aggregates", "count_cells", "map_zones", "n_bins", "resolve_params",
           "suppress_cells", "traits_of", "zones_release_cells"]

log = logging.getLogger(__name__)

# What a cell counts (the method's traits) -> who it counts, and what the window total is.
_MEMBERS = {"presence": "aggregates/030_presence_members.sql",
            "od": "aggregates/031_od_members.sql"}
_COUNTED = {"presence": ("person-bins", "persons"), "od": ("moves", "moves")}


def traits_of(method: str) -> AggregatesTraits:
    traits: AggregatesTraits = method_entry(method).traits
    return traits


def n_bins(window: tuple[str, str], bin_seconds: int) -> int:
    """The whole bins of ``bin_seconds`` in the window [start, end)."""
    start, end = (datetime.fromisoformat(moment) for moment in window)
    return int((end - start).total_seconds() // bin_seconds)


# --------------------------------------------------------------------------- prepare


def resolve_params(conn: psycopg.Connection, dataset: str, dataset_id: int, k: int,
                   params: dict[str, Any], window: tuple[str, str]) -> dict[str, Any]:
    """Refuse, before the run, what the dataset or the window cannot serve: zones=dataset
    without places, zones=voronoi without a published generalization release, a window
    shorter than one bin or with fewer than k persons."""
    chosen = AggregatesParams.of(params)
    if chosen.zones == "voronoi" or chosen.zones_release is not None:
        if chosen.zones != "voronoi" or not chosen.zones_release:
            raise InputError("zones=voronoi and zones_release=RELEASE go together: name the "
                             "published generalization release whose cells are the zones "
                             "(`anonymizers releases` lists them)")
        zones_release_cells(conn, chosen.zones_release)
    if n_bins(window, chosen.bin_seconds) < 1:
        raise InputError(f"the window {window[0]} .. {window[1]} is shorter than one bin of "
                         f"bin_seconds={chosen.bin_seconds}: widen the window or shorten the "
                         "bins")
    found = fetch_columns(conn, "aggregates/001_window_persons.sql", {
        "dataset_id": dataset_id, "window_start": window[0], "window_end": window[1]})
    if chosen.zones == "dataset" and not found["has_places"][0]:
        raise InputError(f"dataset {dataset!r} has no places: load it with `anonymizers load "
                         f"FILE --dataset {dataset} --places PLACES --replace`, or release it "
                         "with --param zones=grid")
    if int(found["persons"][0]) < k:
        raise InputError(f"the window {window[0]} .. {window[1]} of dataset {dataset!r} holds "
                         f"fewer than k={k} persons: no count could be published; widen the "
                         "window")
    return params


def zones_release_cells(conn: psycopg.Connection, name: str) -> tuple[tuple[str, str], int]:
    """The cells table of the published generalization release ``name`` and its SRID;
    InputError if it is none."""
    found = fetch_columns(conn, "aggregates/002_zones_release.sql", {"release_name": name})
    method = found["method"][0] if found["method"] else None
    entry = METHODS.get(method) if method else None
    if entry is None or entry.family != "generalization" or not found["has_cells"][0]:
        raise InputError(f"zones_release={name!r} is no published generalization release "
                         "(kam_cut, kam_rec, grid_kam_cut): its cells would be the zones; "
                         "`anonymizers releases` lists them")
    return (name, "cells"), int(found["cells_srid"][0])


# --------------------------------------------------------------------------- map_zones


def map_zones(spec: dict[str, Any]) -> dict[str, Any]:
    """The window's fixes on zones, and each person's dominant zone per whole bin."""
    with step("map_zones", spec) as (release, conn):
        chosen = AggregatesParams.of(release.params)
        work = release.work_schema
        params = {**release.window_params(), "bin_seconds": chosen.bin_seconds}
        if chosen.zones == "dataset":
            run_sql_file(conn, "aggregates/011_dataset_zones.sql", params, work=work)
        elif chosen.zones == "voronoi":
            cells, cells_srid = zones_release_cells(conn, str(chosen.zones_release))
            run_sql_file(conn, "aggregates/012_release_cell_zones.sql",
                         {**params, "cells_srid": cells_srid}, work=work, cells=cells)
        else:
            run_sql_file(conn, "aggregates/010_grid_zones.sql",
                         {**params, "cell_size": chosen.cell_size}, work=work)
        bins = n_bins((release.window_start, release.window_end), chosen.bin_seconds)
        run_sql_file(conn, "aggregates/020_person_bins.sql", {"n_bins": bins}, work=work)
    return {"zones": chosen.zones, "bins": bins}


# --------------------------------------------------------------------------- count_cells


def count_cells(spec: dict[str, Any]) -> dict[str, Any]:
    """Who each cell counts (presence or moves, by the method's traits), and every cell's
    and bin's true count."""
    with step("count_cells", spec) as (release, conn):
        work = release.work_schema
        counts = traits_of(release.method).counts
        bins = n_bins((release.window_start, release.window_end),
                      AggregatesParams.of(release.params).bin_seconds)
        run_sql_file(conn, _MEMBERS[counts], work=work)
        run_sql_file(conn, "aggregates/035_cells.sql", {"n_bins": bins}, work=work)
        cells = fetch_row(conn, "aggregates/036_count_cells.sql", work=work)
    return {"counts": counts, "cells": int(cells["n_cells"]) if cells else 0}


# --------------------------------------------------------------------------- suppress_cells


def suppress_cells(spec: dict[str, Any]) -> dict[str, int]:
    """Primary and secondary suppression (:mod:`.suppression`) of the run's cells, bin
    totals and window total; writes what is published."""
    with step("suppress_cells", spec) as (release, conn):
        work = release.work_schema
        cells = fetch_columns(conn, "aggregates/040_read_cells.sql", work=work)
        bins = fetch_columns(conn, "aggregates/041_read_bins.sql", work=work)
        cell_index = np.asarray(cells["cell_index"], np.int64)
        cell_bin = np.asarray(cells["bin"], np.int64)
        cell_n = np.asarray(cells["n"], np.int64)
        bin_n = np.asarray(bins["n"], np.int64)
        chosen = suppression.suppress(cell_bin, cell_n, bin_n, release.k)
        run_sql_file(conn, "aggregates/045_suppression_tables.sql", work=work)
        copy_frame(conn, work, "ag_published_cells",
                   pd.DataFrame({"cell_index": cell_index[chosen.cells]}))
        copy_frame(conn, work, "ag_published_bins",
                   pd.DataFrame({"bin": np.asarray(bins["bin"], np.int64)[chosen.bins]}))
        copy_frame(conn, work, "ag_window",
                   pd.DataFrame({"n": [int(bin_n.sum())], "published": [chosen.window]}))
        primary = suppression.primary(cell_n, bin_n, release.k)
    return {"cells": int(cell_n.size), "published": int(chosen.cells.sum()),
            "secondary": int(primary.cells.sum() - chosen.cells.sum()),
            "bins_published": int(chosen.bins.sum())}


# --------------------------------------------------------------------------- build


def build_aggregates(spec: dict[str, Any]) -> None:
    """The release tables zones, presence_counts, od_counts, bin_totals, totals."""
    with step("build_aggregates", spec) as (release, conn):
        work, build = release.work_schema, release.build_schema
        chosen = AggregatesParams.of(release.params)
        run_sql_file(conn, "aggregates/050_release_tables.sql", build=build)
        zones = ("aggregates/052_zones_points.sql" if chosen.zones == "dataset"
                 else "aggregates/051_zones_polygons.sql")
        run_sql_file(conn, zones, {"srid": release.srid}, build=build)
        run_sql_file(conn, "aggregates/060_build_release.sql", {
            "k": release.k, "interval_size": release.count_interval,
            "window_start": release.window_start, "bin_seconds": chosen.bin_seconds,
            "counted": _COUNTED[traits_of(release.method).counts][0],
            "bin_counted": _COUNTED[traits_of(release.method).counts][1],
            "n_bins": n_bins((release.window_start, release.window_end), chosen.bin_seconds)},
            work=work, build=build)
