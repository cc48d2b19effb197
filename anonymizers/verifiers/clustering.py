"""Verify a clustering release (tcaa; seed 002) from its tables and raw data.

It reads only the release (or build) schema under test, the ledger, ``raw.points`` and
``raw.datasets``; it never imports the clustering anonymizer nor runs its SQL. First the
machinery's shared rules (:mod:`anonymizers.verifiers.base`: the rectangles' edges on the
``snap`` lattice, time points on the ``interval`` grid of the window), then the model:

1. every published region is an axis-parallel rectangle of positive area with its four
   edges on the snap lattice, at an instant (t_start = t_end), once per group and time;
2. every published group is supported by at least k distinct persons: the verifier
   re-derives, from the raw fixes of the window (its own SQL,
   ``sql/verify/clustering_support.sql``), each person's position at each published time
   point by linear interpolation between consecutive fixes of a trajectory, and counts the
   persons inside the group's rectangle at every one of its time points;
3. a group's published size (interval-filtered n_persons) is not more than that support.
"""

from __future__ import annotations

from typing import Any

import psycopg

from anonymizers.db.sqlfiles import fetch_columns, run_sql_file
from anonymizers.errors import InputError
from anonymizers.release.spec import area_of_use
from anonymizers.verifiers.base import (
    VerifierResult,
    check_shared_rules,
    interval_count,
    read_release,
)

__all__ = ["CLUSTERING_METHODS", "verify_clustering_release", "verify_release"]

CLUSTERING_METHODS = frozenset({"tcaa"})
SHOWN_GROUPS = 5  # groups named per kind of violation


def verify_clustering_release(conn: psycopg.Connection, schema: str) -> VerifierResult:
    """Check the privacy model of the clustering release (or build) schema ``schema``.

    Returns
    -------
    VerifierResult
        Passed when the shared rules hold, every region is a lattice rectangle at an
        instant, and every group is consistent with at least k distinct persons' raw data.

    References
    ----------
    Jiang & Hu. A Clustering-Anonymity Approach for Trajectory Data Publishing Considering
    both Distance and Direction, 2021: Definitions 4-6 (k trajectories per cluster,
    generalization to per-time minimum regions); k counts distinct persons here.
    """
    release = read_release(conn, schema)
    if release.manifest["method"] not in CLUSTERING_METHODS:
        raise InputError(f"{schema} is a {release.manifest['method']} release, "
                         "not a clustering one")
    result = VerifierResult(schema, release.k)
    grid = _declared_grid(release.parameters, result)
    if grid is None:
        return result
    snap, interval = grid
    if not check_shared_rules(conn, release, snap, result, time_lattice_s=interval):
        return result
    _check_regions(conn, schema, snap, result)
    _check_support(conn, release, result)
    return result


def _declared_grid(params: dict[str, Any], result: VerifierResult) -> tuple[float, float] | None:
    try:
        snap, interval = float(params["snap"]), float(params["interval"])
    except (KeyError, TypeError, ValueError):
        result.violations.append("the manifest's parameters do not declare snap and interval: "
                                 "the lattice and the time grid cannot be checked")
        return None
    if not (snap > 0 and interval > 0):
        result.violations.append(f"snap {snap:g} m and interval {interval:g} s must be positive")
        return None
    return snap, interval


def _check_regions(conn: psycopg.Connection, schema: str, snap: float,
                   result: VerifierResult) -> None:
    faults = {name: int(values[0]) for name, values in fetch_columns(
        conn, "verify/clustering_regions.sql", {"snap": snap}, release=schema).items()}
    result.checks.update({f"regions_{name}": n for name, n in faults.items()})
    texts = {"not_rectangles": "published regions are not axis-parallel rectangles of "
                               "positive area",
             "edges_off_lattice": f"published regions have an edge off the {snap:g} m lattice "
                                  "(privacy rule 2: an edge may be one person's coordinate)",
             "not_instants": "published regions have t_start different from t_end",
             "groups_without_regions": "published groups have no region",
             "repeated_times": "published groups repeat a time point"}
    for name, n in faults.items():
        if n:
            result.violations.append(f"{n} {texts[name]}")


def _check_support(conn: psycopg.Connection, release: Any, result: VerifierResult) -> None:
    manifest = release.manifest
    srid = int(manifest["srid"])
    rows = run_sql_file(conn, "verify/clustering_support.sql", {
        "dataset_id": release.dataset_id, "window_start": manifest["window_start"],
        "window_end": manifest["window_end"], "srid": srid, **area_of_use(srid)},
        release=release.schema)
    k = release.k
    thin = [(group, support) for group, _, support in rows if support < k]
    oversized = [(group, n, support) for group, n, support in rows
                 if n is not None and n > support]
    result.checks["groups"] = interval_count(len(rows), k, release.count_interval)
    result.checks["groups_below_k"] = len(thin)
    result.checks["groups_larger_than_support"] = len(oversized)
    for group, support in thin[:SHOWN_GROUPS]:
        result.violations.append(f"group {group}: only {support} distinct persons' raw data lie "
                                 f"in its rectangles at all its time points (k={k})")
    if len(thin) > SHOWN_GROUPS:
        result.violations.append(f"... and {len(thin) - SHOWN_GROUPS} more groups below k")
    for group, n, support in oversized[:SHOWN_GROUPS]:
        result.violations.append(f"group {group}: publishes n_persons={n} but only {support} "
                                 "persons are consistent with it")


# The name every family verifier exports (anonymizers.verifiers.verify_release dispatches).
verify_release = verify_clustering_release
