"""Verify a clustering release (tcaa, seed 002; mla_*, seed 001) from its tables and raw data.

It reads only the release (or build) schema under test, the ledger, ``raw.points`` and
``raw.datasets``; it never imports the clustering anonymizer nor runs its SQL. First the
machinery's shared rules (:mod:`anonymizers.verifiers.base`: the rectangles' edges on the
declared lattice, times on the declared time grid of the window), then the model:

1. every published region is an axis-parallel rectangle of positive area with its four
   edges on the lattice (TCAA: ``snap``; MLA: ``epsilon``); TCAA's are at an instant
   (t_start = t_end), once per group and time; MLA's are intervals t_start < t_end;
2. every published group is supported by at least k distinct persons, re-derived from the
   raw fixes of the window by the verifier's own SQL:

   * TCAA (``sql/clustering/verify/positions.sql``, then
     :mod:`anonymizers.families.clustering.verifier_support`): each person's position at each
     published time point, by linear interpolation between consecutive fixes of a
     trajectory, inside the group's rectangle at every one of its time points;
   * MLA (``sql/clustering/verify/sequence_support.sql``): a trajectory of the person
     with fixes inside the group's regions and time intervals, one region after the other
     in seq order, each matched by a later fix than the one before;

3. a group's published size (interval-filtered n_persons) is not more than that support;
4. TCAA: every rectangle holds the positions of at least k persons at its time point
   (anyone of the window; counted in the same pass as the groups' members).

What the method publishes (instants or aligned intervals) and which lattice its manifest
declares are read from the method's declared traits and typed parameters
(:mod:`anonymizers.families.clustering.declaration`), never from the anonymizer's code.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import psycopg

from anonymizers.db.sqlfiles import fetch_columns, run_sql_file
from anonymizers.errors import InputError
from anonymizers.families.clustering.declaration import ClusteringTraits, MlaParams, TcaaParams
from anonymizers.families.clustering.verifier_support import (
    GroupSupport,
    Support,
    derive_support,
)
from anonymizers.families.registry import METHODS
from anonymizers.release.spec import area_of_use
from anonymizers.verifiers.base import (
    VerifierResult,
    check_shared_rules,
    interval_count,
    read_release,
)

__all__ = ["declared_traits", "sequence_support", "support_window",
           "verify_clustering_release", "verify_release"]

SHOWN_GROUPS = 5  # groups named per kind of violation


def verify_clustering_release(conn: psycopg.Connection, schema: str) -> VerifierResult:
    """Check the privacy model of the clustering release (or build) schema ``schema``.

    Returns
    -------
    VerifierResult
        Passed when the shared rules hold, every region is a lattice rectangle (at an
        instant for TCAA, over an interval for MLA), and every group is consistent with at
        least k distinct persons' raw data.

    References
    ----------
    Jiang & Hu. A Clustering-Anonymity Approach for Trajectory Data Publishing Considering
    both Distance and Direction, 2021: Definitions 4-6 (k trajectories per cluster,
    generalization to per-time minimum regions). Shaham et al. Privacy Preserving Location
    Data Publishing: A Machine Learning Approach, §3.2 (k-anonymity of the generalized
    trajectories of a cluster). k counts distinct persons here.
    """
    release = read_release(conn, schema)
    aligned = declared_traits(release).aligned
    result = VerifierResult(schema, release.k)
    grid = _declared_grid(release.parameters, aligned, result)
    if grid is None:
        return result
    lattice, time_step = grid
    if not check_shared_rules(conn, release, lattice, result, time_lattice_s=time_step):
        return result
    _check_regions(conn, schema, lattice, aligned, result)
    _check_support(conn, release, aligned, result)
    return result


def declared_traits(release: Any) -> ClusteringTraits:
    """The declared traits of the method a release's manifest names; InputError when it is
    not a clustering method."""
    method = release.manifest["method"]
    entry = METHODS.get(method)
    if entry is None or entry.family != "clustering":
        raise InputError(f"{release.schema} is a {method} release, not a clustering one")
    traits: ClusteringTraits = entry.traits
    return traits


def _declared_grid(params: dict[str, Any], aligned: bool,
                   result: VerifierResult) -> tuple[float, float] | None:
    """The spatial lattice and time grid the manifest declares (MLA: epsilon, time_bin;
    TCAA: snap, interval), typed and checked by the method's declared parameters (both
    positive); None with a violation when they cannot be."""
    names = ("epsilon", "time_bin") if aligned else ("snap", "interval")
    # A lattice the manifest does not record is not checked against a default one.
    if missing := [name for name in names if params.get(name) in (None, "")]:
        result.violations.append(f"the manifest's parameters do not declare "
                                 f"{' and '.join(missing)}: the lattice and the time grid "
                                 "cannot be checked")
        return None
    try:
        if aligned:
            mla = MlaParams.of(params)
            return mla.epsilon, mla.time_bin
        tcaa = TcaaParams.of(params)
        return tcaa.snap, tcaa.interval
    except InputError as error:
        result.violations.append(f"the manifest's parameters cannot be checked: {error}")
        return None


def _check_regions(conn: psycopg.Connection, schema: str, snap: float, aligned: bool,
                   result: VerifierResult) -> None:
    faults = {name: int(values[0]) for name, values in fetch_columns(
        conn, "clustering/verify/regions.sql", {"snap": snap}, release=schema).items()}
    # Instants (TCAA) or intervals (MLA): the other kind's faults are the right shape.
    for name in (("not_instants", "repeated_times") if aligned else ("empty_intervals",)):
        del faults[name]
    result.checks.update({f"regions_{name}": n for name, n in faults.items()})
    texts = {"not_rectangles": "published regions are not axis-parallel rectangles of "
                               "positive area",
             "edges_off_lattice": f"published regions have an edge off the {snap:g} m lattice "
                                  "(privacy rule 2: an edge may be one person's coordinate)",
             "not_instants": "published regions have t_start different from t_end",
             "empty_intervals": "published regions have t_end not after t_start",
             "groups_without_regions": "published groups have no region",
             "repeated_times": "published groups repeat a time point"}
    for name, n in faults.items():
        if n:
            result.violations.append(f"{n} {texts[name]}")


def support_window(release: Any) -> dict[str, Any]:
    """Parameters of clustering/verify/positions.sql: the release's window, CRS and its area,
    and the longest gap interpolated across (None: a release from before the rule, every
    gap)."""
    manifest = release.manifest
    srid = int(manifest["srid"])
    return {"dataset_id": release.dataset_id, "window_start": manifest["window_start"],
            "window_end": manifest["window_end"], "srid": srid, **area_of_use(srid),
            "max_gap_seconds": release.parameters.get("max_gap_seconds")}


def _check_support(conn: psycopg.Connection, release: Any, aligned: bool,
                   result: VerifierResult) -> None:
    window = support_window(release)
    k = release.k
    if aligned:
        rows = sequence_support(conn, release.schema, window)
    else:
        derived = derive_support(conn, release.schema, window)
        rows = derived.rows()
        _check_rectangles(derived, k, result)
    where = ("in its regions in order" if aligned
             else "in its rectangles at all its time points")
    thin = [row for row in rows if row.support < k]
    oversized = [row for row in rows if row.n_persons is not None and row.n_persons > row.support]
    result.checks["groups"] = interval_count(len(rows), k, release.count_interval)
    result.checks["groups_below_k"] = len(thin)
    result.checks["groups_larger_than_support"] = len(oversized)
    for row in thin[:SHOWN_GROUPS]:
        result.violations.append(f"group {row.group_id}: only {row.support} distinct persons' "
                                 f"raw data lie {where} (k={k})")
    if len(thin) > SHOWN_GROUPS:
        result.violations.append(f"... and {len(thin) - SHOWN_GROUPS} more groups below k")
    for row in oversized[:SHOWN_GROUPS]:
        result.violations.append(f"group {row.group_id}: publishes n_persons={row.n_persons} but "
                                 f"only {row.support} persons are consistent with it")


def _check_rectangles(support: Support, k: int, result: VerifierResult) -> None:
    """Every TCAA rectangle holds at least k persons at its time point (its group's
    members are inside it, so a group of k supporters makes every rectangle of k: a
    rectangle below k is a group below k, named once more by its time point)."""
    thin = [(group, t) for group, t, persons in support.region_rows() if persons < k]
    result.checks["regions_below_k"] = len(thin)
    for group, t in thin[:SHOWN_GROUPS]:
        at = datetime.fromtimestamp(t, UTC).isoformat()
        result.violations.append(f"group {group}: its rectangle at {at} holds fewer than "
                                 f"k={k} persons' positions")


def sequence_support(conn: psycopg.Connection, schema: str,
                     window: dict[str, Any]) -> list[GroupSupport]:
    """(group_id, n_persons, support) of every group of an aligned release: the persons
    with a trajectory whose raw fixes pass the group's regions in order."""
    with conn.transaction():  # the temporary tables live until its commit
        run_sql_file(conn, "clustering/verify/sequence_fixes.sql", window)
        found = fetch_columns(conn, "clustering/verify/sequence_support.sql", release=schema)
    return [GroupSupport(*row) for row in zip(found["group_id"], found["n_persons"],
                                              found["support"], strict=True)]


# The name every family verifier exports (anonymizers.verifiers.verify_release dispatches).
verify_release = verify_clustering_release
