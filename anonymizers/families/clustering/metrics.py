"""The metrics of a clustering release (seed 002 eq. 1; seed 001 eq. 3-6; counts), measured
on the release about to publish."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pandas as pd
import psycopg

from anonymizers.db.sqlfiles import copy_out, fetch_columns, run_sql_file
from anonymizers.families.base import MetricRow, Metrics
from anonymizers.families.clustering.declaration import ClusteringTraits, MlaParams, TcaaParams
from anonymizers.families.registry import method_entry
from anonymizers.metrics.shares import Ratio, share

__all__ = ["measure_release"]


def measure_release(conn: psycopg.Connection, release: Any) -> Metrics:
    """The metrics of the release's method (TCAA or MLA)."""
    traits: ClusteringTraits = method_entry(release.method).traits
    if traits.aligned:
        return _measure_aligned(conn, release)
    return _measure_synchronized(conn, release)


def _measure_aligned(conn: psycopg.Connection, release: Any) -> Metrics:
    """MLA (seed 001): loss in bits against full suppression (eq. 3-4, §5.1's bound), the
    increase in trajectory length (Fig. 4c-d), area per location (eq. 5-6), the below-k
    share plain k'-means would have published (Fig. 5b), what the repair did, counts."""
    found = {name: values[0] for name, values in fetch_columns(
        conn, "clustering/065_aligned_measures.sql", work=release.work_schema,
        build=release.build_schema).items()}
    rows: list[MetricRow] = [
        ("mla_loss_ratio", _loss_ratio(found, release.k, release.count_interval), "ratio",
         "Information loss in bits (seed 001 eq. 4 over x, y and time, suppressed points at "
         "the root) over the loss of suppressing every point of the window (bits per point "
         "times the window's fixes, interval-filtered like points_in)"),
        ("mla_loss_bits", int(found["loss_bits"]), "bits",
         "Total information loss in bits (seed 001 eq. 4: x, y and time of every point of "
         "the window, a suppressed point at the roots)"),
        ("mla_cluster_loss_bits_mean", share(found["cluster_loss_bits_sum"], found["clusters"]),
         "bits",
         "Loss in bits of a published cluster, averaged over the published clusters (seed 001 "
         "Fig. 4b)"),
        ("mla_bits_per_point", int(found["bits_per_point"]), "bits",
         "Bits a point loses when suppressed: the depths of the x, y and time hierarchies"),
        ("mla_length_increase",
         share(found["length_increase_sum"], found["published_trajectories"]), "points",
         "Mean over published trajectories of published regions minus the trajectory's points "
         "(seed 001 §5.1; negative when suppression outweighs alignment)"),
        ("area_per_location_m2", _float(found["area_per_location_m2"]), "m2",
         "Area of the region a published point is generalized to, averaged over published "
         "points (seed 001 eq. 5-6)"),
        ("mla_below_k_share_before_repair",
         share(found["below_k_trajectories"], found["clustered_trajectories"]), "ratio",
         "Share of trajectories the clustering put in clusters of fewer than k persons, which "
         "seed 001 would publish; here merged into their nearest cluster or suppressed"),
        ("fixes_published_share", share(found["points_published"], found["points_in"]),
         "ratio", "Share of the window's fixes generalized into a published region (the "
         "others: aligned with gaps, in columns or clusters below k, outside the grid, after "
         "the last whole time bin)"),
        ("mla_merged_clusters", int(found["merged_clusters"]), "count",
         "Clusters below k persons merged into their nearest cluster"),
        ("mla_suppressed_clusters", int(found["suppressed_clusters"]), "count",
         "Clusters not published (below k with nothing to merge into, or no region of k)"),
    ]
    return Metrics(rows + _published_rows(found) + _aligned_edge_rows(conn, release))


def _aligned_edge_rows(conn: psycopg.Connection, release: Any) -> list[MetricRow]:
    """What the regions' edges reveal on the epsilon lattice: a region is a node of dyadic
    hierarchies, so its members have points in each half of it (the node is their lowest
    common ancestor), not within epsilon of its edges; the shares are of edges whose half
    holds one person of the window, or fewer than k, during the region's interval. Fixes
    are the window's own (every person of it, as the verifier reads them from raw)."""
    found = {name: values[0] for name, values in fetch_columns(
        conn, "clustering/068_aligned_edge_strips.sql",
        {"window_start": release.window_start, "epsilon": MlaParams.of(release.params).epsilon,
         "k": release.k}, work=release.work_schema, build=release.build_schema).items()}
    return _strip_rows(found, "the half of the region next to the edge (the whole region "
                              "when it is one epsilon cell wide), during its time interval")


def _loss_ratio(found: dict[str, Any], k: int, count_interval: int) -> Ratio:
    """Loss bits over the full-suppression bound, bits per point times the *filtered* fixes:
    the exact bound is a multiple of bits_per_point (published), so any filter of it
    narrower than that would give the window's exact number of fixes back."""
    bits = int(found["bits_per_point"])
    points = int(found["full_suppression_bits"]) // bits if bits else 0
    filtered = 0 if points == 0 else (None if points < k
                                      else k + count_interval * ((points - k) // count_interval))
    return Ratio(int(found["loss_bits"]), bits * (filtered or 0))


def _published_rows(found: dict[str, Any]) -> list[MetricRow]:
    persons = share(found["persons_published"], found["persons_in"])
    return [("area_per_region_m2", _float(found["area_per_region_m2"]), "m2",
             "Average area of a published group region"),
            ("persons_published_share", persons, "ratio",
             "Share of the window's persons who are in a published group"),
            ("groups_regions", int(found["regions"]), "count",
             "Published group regions")]


def _measure_synchronized(conn: psycopg.Connection, release: Any) -> Metrics:
    """TCAA: IL (eq. 1) over the slices, area per published rectangle, persons kept,
    counts."""
    work = release.work_schema
    slices = {"slice_seconds": TcaaParams.of(release.params).slice_seconds}
    found = {name: values[0] for name, values in fetch_columns(
        conn, "clustering/060_measures.sql", slices, work=work,
        build=release.build_schema).items()}
    rows: list[MetricRow] = [_information_loss(conn, work), *_published_rows(found)]
    rows.append(("fixes_published_share", share(found["points_published"], found["points_in"]),
                 "ratio", "Share of the window's fixes inside the slice of a piece that is in a "
                 "published group (what the group's rectangles stand for)"))
    rows.append(("tcaa_pieces", int(found["pieces"]), "count",
                 "Synchronized pieces (one person over one time slice) that were clustered"))
    return Metrics(rows + _edge_rows(conn, release))


def _edge_rows(conn: psycopg.Connection, release: Any) -> list[MetricRow]:
    """What the rectangles' edges reveal at the snap lattice: the share of edges whose
    outermost strip (snap wide) holds exactly one person of the window, and fewer than k.

    Positions are the verifier's derivation from raw fixes (every person of the window at
    each published time point), not the family's synchronized pieces, which leave out the
    persons without a piece in that slice: they are there for an attacker too."""
    params = TcaaParams.of(release.params)
    snap = params.snap
    with conn.transaction():  # the positions' temporary tables live until its commit
        run_sql_file(conn, "clustering/verify/positions.sql",
                     {**release.window_params(), "max_gap_seconds": params.max_gap_seconds},
                     release=release.build_schema)
        found = {name: values[0] for name, values in fetch_columns(
            conn, "clustering/067_edge_strips.sql",
            {"window_start": release.window_start, "snap": snap, "k": release.k},
            build=release.build_schema).items()}
    return _strip_rows(found, f"the outermost {snap:g} m (snap) inside the edge, at the "
                              "rectangle's time point")


def _strip_rows(found: dict[str, Any], strip: str) -> list[MetricRow]:
    """The two edge shares, each a ratio of two counts of edges."""
    return [("region_edges_one_person_share",
             share(found["edges_one_person"], found["edges"]), "ratio",
             f"Share of the published regions' edges with exactly one person of the window in "
             f"{strip}: such an edge places one group member within that strip (a coarser "
             "lattice lowers it)"),
            ("region_edges_below_k_share", share(found["edges_below_k"], found["edges"]),
             "ratio", f"Share of the published regions' edges with fewer than k persons of the "
             f"window in {strip}")]


def _float(value: Any) -> float:
    return float(value) if value is not None else float("nan")


def _information_loss(conn: psycopg.Connection, work: str) -> MetricRow:
    """Eq. 1 on each slice's synchronized set (its published groups against the box of all
    its pieces), averaged over every (group, time point) of the release."""
    from anonymizers.families.clustering.tcaa import information_loss

    data = copy_out(conn, "clustering/070_read_grouped.sql", work=work)
    frame = pd.read_csv(io.BytesIO(data), names=["piece", "slice", "group", "seq", "x", "y"])
    n = int(frame["seq"].max()) + 1 if len(frame) else 0
    total, weight = 0.0, 0
    for _, part in frame.groupby("slice", sort=True):
        labels = part["group"].to_numpy(np.int64)[::n]
        groups = np.unique(labels[labels >= 0]).size
        if groups:  # eq. 1 averages over the m groups x n time points of one set
            total += information_loss(part["x"].to_numpy(float).reshape(-1, n),
                                      part["y"].to_numpy(float).reshape(-1, n),
                                      labels) * groups * n
            weight += groups * n
    value = total / weight if weight else float("nan")
    return ("tcaa_information_loss", value, "ratio",
            "IL of seed 002 eq. 1: mean over published (group, time point) of the area of the "
            "group's minimum bounding rectangle over the area of the rectangle of all pieces "
            "of its slice at that time (0 = exact, 1 = no better than the whole set)")
