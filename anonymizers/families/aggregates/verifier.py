"""Verify an aggregates release (presence, od) from raw data.

It reads only the release (or build) schema under test, the ledger and ``raw``; it never
imports the aggregates anonymizer nor runs its SQL (``sql/aggregates/*.sql``): the zones,
each person's dominant zone per bin and the whole true table are derived again by
``sql/aggregates/verify/*.sql``. It reads the family's declaration (what each method
claims to count). First the machinery's shared rules (:mod:`anonymizers.verifiers.base`,
with the bins as the release's time grid), then the family's model:

1. **zones**: every published zone is exactly a square of the lattice of ``cell_size``
   metres that a fix of the window is in (zones=grid), a place of the dataset (dataset),
   or a cell of the published generalization release ``zones_release`` (voronoi), with
   the expected centroid; no two published zones are the same zone; every zone is named
   by a published cell;
2. **cells**: each published cell is a whole bin of the window in the table its method
   publishes, counts at least k distinct persons in the true table, and its interval is
   the interval filter's (``n_lo = k + I * floor((n - k) / I)``, ``n_hi = n_lo + I - 1``);
   no cell is published twice;
3. **totals**: the same for every published bin total and the window total;
4. **remainders** (secondary suppression): for every published bin total, its true count
   minus its published cells' is 0 or at least k; for the published window total, its true
   count minus its highest published parts (a published bin total, else the bin's
   published cells) is 0 or at least k.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import psycopg

from anonymizers.db.sqlfiles import fetch_columns, fetch_rows, run_sql_file
from anonymizers.errors import InputError
from anonymizers.families.aggregates.declaration import AggregatesParams, AggregatesTraits
from anonymizers.families.registry import METHODS
from anonymizers.release.spec import area_of_use
from anonymizers.verifiers.base import (
    ReleaseUnderTest,
    VerifierResult,
    check_shared_rules,
    interval_count,
    read_release,
)

__all__ = ["TrueTable", "check_remainders", "derive_true_table", "published_table",
           "verify_release"]

SHOWN = 5  # items named per kind of violation
CellKey = tuple[int, str | None, str]  # bin, origin zone key (od), zone key


@dataclass(frozen=True)
class TrueTable:
    """The table as the verifier derives it from raw data: every cell with at least one
    person and every whole bin's total, by the verifier's own zone keys."""

    cells: dict[CellKey, int]
    bins: dict[int, int]
    n_bins: int

    @property
    def window(self) -> int:
        return sum(self.bins.values())


def _settings(release: ReleaseUnderTest) -> tuple[AggregatesParams, AggregatesTraits]:
    method = METHODS.get(release.manifest["method"])
    if method is None or method.family != "aggregates":
        raise InputError(f"{release.schema} is no release of the aggregates family")
    traits: AggregatesTraits = method.traits
    return AggregatesParams.of(release.parameters), traits


def _n_bins(release: ReleaseUnderTest, bin_seconds: int) -> int:
    span = release.manifest["window_end"] - release.manifest["window_start"]
    return int(span.total_seconds() // bin_seconds)


def derive_true_table(conn: psycopg.Connection, release: ReleaseUnderTest) -> TrueTable:
    """The true table of the release's window (temporary tables agv_* of ``conn``'s
    session hold the derivation, agv_person_bins each person's dominant zone per bin)."""
    params, traits = _settings(release)
    manifest = release.manifest
    srid = int(manifest["srid"])
    window = {"dataset_id": release.dataset_id, "window_start": manifest["window_start"],
              "window_end": manifest["window_end"], "bin_seconds": params.bin_seconds,
              "srid": srid}
    if params.zones == "grid":
        run_sql_file(conn, "aggregates/verify/010_grid_fixes.sql",
                     {**window, **area_of_use(srid), "cell_size": params.cell_size})
    elif params.zones == "dataset":
        run_sql_file(conn, "aggregates/verify/011_dataset_fixes.sql", window)
    else:
        source, cells_srid = _source_cells(conn, params.zones_release)
        run_sql_file(conn, "aggregates/verify/012_release_cell_fixes.sql",
                     {**window, "cells_srid": cells_srid}, cells=source)
    n_bins = _n_bins(release, params.bin_seconds)
    run_sql_file(conn, "aggregates/verify/020_true_cells.sql",
                 {"n_bins": n_bins, "od": traits.counts == "od"})
    cells = fetch_columns(conn, "aggregates/verify/060_read_true_cells.sql")
    bins = fetch_columns(conn, "aggregates/verify/061_read_true_bins.sql")
    return TrueTable(
        {(int(b), o, z): int(n) for b, o, z, n in zip(
            cells["bin"], cells["origin_key"], cells["zone_key"], cells["n"], strict=True)},
        {int(b): int(n) for b, n in zip(bins["bin"], bins["n"], strict=True)}, n_bins)


def _source_cells(conn: psycopg.Connection, name: str | None) -> tuple[tuple[str, str], int]:
    found = fetch_columns(conn, "aggregates/verify/005_zones_release.sql",
                          {"release_name": name})
    method = found["method"][0] if found["method"] else None
    entry = METHODS.get(method) if method else None
    if entry is None or entry.family != "generalization" or found["cells_srid"][0] is None:
        raise InputError(f"zones_release={name!r} is no published generalization release with "
                         "cells: the zones of this release cannot be checked")
    return (str(name), "cells"), int(found["cells_srid"][0])


# --------------------------------------------------------------------------- checks


def _check_zones(conn: psycopg.Connection, schema: str, result: VerifierResult
                 ) -> dict[int, str]:
    """Published zone id -> the verifier's zone key (rule 1)."""
    found = fetch_columns(conn, "aggregates/verify/030_published_zones.sql",
                          zones=(schema, "zones"), zone_centroids=(schema, "zone_centroids"))
    keys: dict[int, str] = {}
    unknown = []
    for zone_id, key, centroid_ok in zip(found["zone_id"], found["zone_key"],
                                         found["centroid_ok"], strict=True):
        if key is None:
            unknown.append(zone_id)
            continue
        keys[int(zone_id)] = str(key)
        if not centroid_ok:
            result.violations.append(f"zone {zone_id}: its centroid is not the one its zone "
                                     "has (the square's centre, the place's point, none for "
                                     "a cell of zones_release)")
    if unknown:
        result.violations.append(
            f"{len(unknown)} published zone(s) are not zones of the stated source (a square "
            "of the lattice a fix of the window is in, a place of the dataset, a cell of "
            f"zones_release): ids {sorted(unknown)[:SHOWN]}")
    twice = [key for key, n in Counter(keys.values()).items() if n > 1]
    if twice:
        result.violations.append(f"{len(twice)} zone(s) are published twice under two ids")
    result.checks["zones"] = len(found["zone_id"])
    return keys


def _check_count(what: str, true_n: int, n_lo: int, n_hi: int, release: ReleaseUnderTest,
                 result: VerifierResult) -> None:
    k, width = release.k, release.count_interval
    if true_n < k:
        result.violations.append(f"{what} counts {true_n} persons, fewer than k={k}")
        return
    expected = interval_count(true_n, k, width)
    if (n_lo, n_hi) != (expected, (expected or 0) + width - 1):
        result.violations.append(f"{what}: interval [{n_lo}, {n_hi}] is not the interval "
                                 f"filter's for its true count (k={k}, size {width})")


def _check_cells(conn: psycopg.Connection, release: ReleaseUnderTest, table: TrueTable,
                 zones: dict[int, str], traits: AggregatesTraits,
                 bin_seconds: int, result: VerifierResult) -> set[CellKey]:
    """The published cells' keys (rule 2)."""
    schema = release.schema
    found = fetch_rows(conn, "aggregates/verify/040_published_cells.sql", {
        "window_start": release.manifest["window_start"], "bin_seconds": bin_seconds},
        presence=(schema, "presence_counts"), od=(schema, "od_counts"))
    expected_source = "od_counts" if traits.counts == "od" else "presence_counts"
    published: Counter[CellKey] = Counter()
    for row in found:
        source, origin_id, zone_id, bin_ = (row["source"], row["origin_zone_id"],
                                            row["zone_id"], row["bin"])
        n_lo, n_hi = row["n_lo"], row["n_hi"]
        what = f"{source} cell (zone {zone_id}, bin {bin_})"
        if source != expected_source:
            result.violations.append(f"{what}: a {release.manifest['method']} release "
                                     f"publishes {expected_source} only")
            continue
        if bin_ is None or not 0 <= bin_ < table.n_bins:
            result.violations.append(f"{what}: not a whole bin of the window")
            continue
        if zone_id not in zones or (origin_id is not None and origin_id not in zones):
            result.violations.append(f"{what}: names a zone that is not published or checked")
            continue
        key = (int(bin_), zones.get(origin_id) if origin_id is not None else None,
               zones[zone_id])
        published[key] += 1
        _check_count(what, table.cells.get(key, 0), n_lo, n_hi, release, result)
    twice = [key for key, n in published.items() if n > 1]
    if twice:
        result.violations.append(f"{len(twice)} cell(s) are published twice")
    named = {z for _, origin, zone in published for z in (origin, zone) if z is not None}
    if unnamed := set(zones.values()) - named:
        result.violations.append(f"{len(unnamed)} published zone(s) are named by no "
                                 "published cell")
    result.checks["cells"] = len(found)
    return set(published)


def _check_totals(conn: psycopg.Connection, release: ReleaseUnderTest, table: TrueTable,
                  bin_seconds: int, result: VerifierResult) -> tuple[set[int], bool]:
    """The published bins, and whether the window total is published (rule 3)."""
    schema = release.schema
    found = fetch_columns(conn, "aggregates/verify/050_published_bins.sql", {
        "window_start": release.manifest["window_start"], "bin_seconds": bin_seconds},
        bins=(schema, "bin_totals"))
    published: set[int] = set()
    for bin_, n_lo, n_hi in zip(found["bin"], found["n_lo"], found["n_hi"], strict=True):
        if bin_ is None or not 0 <= bin_ < table.n_bins or bin_ in published:
            result.violations.append(f"bin total of bin {bin_}: not a whole bin of the window, "
                                     "or published twice")
            continue
        published.add(int(bin_))
        _check_count(f"bin total of bin {bin_}", table.bins[int(bin_)], n_lo, n_hi, release,
                     result)
    totals = fetch_columns(conn, "aggregates/verify/070_published_totals.sql",
                           totals=(schema, "totals"))
    if len(totals["n_lo"]) > 1:
        result.violations.append("the window total is published more than once")
    for bins, n_lo, n_hi in zip(totals["bins"], totals["n_lo"], totals["n_hi"], strict=True):
        if bins != table.n_bins:
            result.violations.append(f"the window total says {bins} bins, the window holds "
                                     f"{table.n_bins} whole bins")
        _check_count("the window total", table.window, n_lo, n_hi, release, result)
    result.checks["bin_totals"] = len(published)
    return published, bool(totals["n_lo"])


def check_remainders(table: TrueTable, cells: set[CellKey], bins: set[int], window: bool,
                     k: int) -> list[str]:
    """The secondary suppression's rule (rule 4): the violations, as text."""
    shown: Counter[int] = Counter()
    for key in cells:
        shown[key[0]] += table.cells.get(key, 0)
    found = []
    for b in sorted(bins):
        rest = table.bins[b] - shown[b]
        if 0 < rest < k:
            found.append(f"bin total of bin {b} minus its published cells leaves {rest} "
                         f"persons, between 1 and k - 1 = {k - 1} (secondary suppression)")
    if window:
        covered = sum(table.bins[b] if b in bins else shown[b] for b in table.bins)
        rest = table.window - covered
        if 0 < rest < k:
            found.append(f"the window total minus its highest published parts (bin totals, "
                          f"else cells) leaves {rest}, between 1 and k - 1 = {k - 1} "
                          "(secondary suppression)")
    return found


# --------------------------------------------------------------------------- entry


def published_table(conn: psycopg.Connection, schema: str
                    ) -> tuple[TrueTable, set[CellKey], VerifierResult]:
    """The true table of release ``schema`` and the keys of its published cells (the
    attack adapter's view), with what the checks of rules 1-2 found on the way."""
    release = read_release(conn, schema)
    params, traits = _settings(release)
    result = VerifierResult(schema, release.k)
    table = derive_true_table(conn, release)
    zones = _check_zones(conn, schema, result)
    cells = _check_cells(conn, release, table, zones, traits, params.bin_seconds, result)
    return table, cells, result


def verify_release(conn: psycopg.Connection, schema: str) -> VerifierResult:
    """Check the aggregates model on release (or build) schema ``schema``."""
    release = read_release(conn, schema)
    params, traits = _settings(release)
    result = VerifierResult(schema, release.k)
    lattice = params.cell_size if params.zones == "grid" else 1e-6
    if not check_shared_rules(conn, release, lattice, result,
                              time_lattice_s=float(params.bin_seconds)):
        return result
    table = derive_true_table(conn, release)
    zones = _check_zones(conn, schema, result)
    cells = _check_cells(conn, release, table, zones, traits, params.bin_seconds, result)
    bins, window = _check_totals(conn, release, table, params.bin_seconds, result)
    result.violations += check_remainders(table, cells, bins, window, release.k)
    result.checks["remainders_checked"] = len(bins) + int(window)
    return result
