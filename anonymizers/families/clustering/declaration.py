"""The clustering family's declaration (TCAA, MLA): methods, typed parameters and traits.

Plain data, cheap to import (the registry reads it at DAG parse time).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from anonymizers.families.declaration import DifferencingRules, FamilyEntry, MethodEntry
from anonymizers.parameters import MethodParams, lattice, param

__all__ = ["FAMILY", "METHODS", "ClusteringTraits", "MlaParams", "TcaaParams"]


@dataclass(frozen=True)
class ClusteringTraits:
    """What tells the family's methods apart.

    ``aligned``: groups are aligned sequences of regions and time intervals (MLA, seed 001)
    rather than rectangles at synchronized instants (TCAA, seed 002). ``clustering``: how
    the groups are formed.
    """

    aligned: bool
    clustering: Literal["tcaa", "heuristic", "kmeans", "iterative_kmeans"]


@dataclass(frozen=True)
class TcaaParams(MethodParams):
    interval: int = param(300, "Seconds between synchronized time points (from the window "
                          "start)", minimum=1)
    slice_seconds: int = param(3600, "Length of the time slices trajectories are synchronized "
                               "and clustered in (a multiple of interval)", minimum=1)
    lam: float = param(0.6, "Weight of direction similarity SimO against distance similarity "
                       "SimD (eq. 6; the paper's experiments use 0.6)", minimum=0, maximum=1)
    alpha: float = param(0.8, "Density-distance weight of the initial seed selection (the "
                         "paper's 0.8)", minimum=0, maximum=1)
    snap: float = lattice(50.0, "Lattice (m) the group rectangles are snapped outward to "
                          "(privacy rule 2)")
    max_gap_seconds: int = param(1800, "Longest gap (s) between two fixes of a trajectory "
                                 "that is interpolated across; a longer one splits it (a "
                                 "person seen on two days did not move in a straight line "
                                 "between)", minimum=1)


@dataclass(frozen=True)
class MlaParams(MethodParams):
    epsilon: float = lattice(50.0, "Side (m) of the grid cells, the leaves of the x and y "
                             "hierarchies (seed 001's ε; its experiments' 10 m is below the "
                             "precision floor and needs accept_precision_risk)")
    time_bin: int = param(3600, "Seconds of a time bin, the leaves of the time hierarchy (from "
                          "the window start; the paper's hours)", minimum=1)
    coverage: float = param(0.99, "Share of the fixes, central on each axis, the grid must "
                            "hold (a block of the fixed lattice); fixes outside it, such as "
                            "GPS outliers, are suppressed (1 = every fix)", minimum=0,
                            maximum=1, exclusive_minimum=True)


_TCAA_STEPS = ("prepare_fixes", "cluster_pieces", "build_groups")
_MLA_STEPS = ("prepare_fixes", "align_clusters", "build_aligned_groups")

FAMILY = FamilyEntry(
    name="clustering",
    title=("Clustering-based anonymization (seed 002: TCAA, Jiang & Hu 2021; seed 001: MLA, "
           "Shaham et al.)"),
    privacy_model=(
        "group k-anonymity over distinct persons: every published group trajectory is "
        "matched by at least k distinct persons of the window (TCAA: their interpolated "
        "positions lie in the group's lattice rectangle at every one of its synchronized time "
        "points; MLA: their fixes lie in every one of the group's lattice regions and time "
        "intervals, in order); no group, region or count of fewer than k persons is "
        "published"),
    steps=("prepare_fixes", "cluster_pieces", "build_groups", "align_clusters",
           "build_aligned_groups"),
    published_unit="groups",
    tags=("seed-002",),
    differencing=DifferencingRules(not_monotone={
        "group_persons": "TCAA and MLA re-cluster every window: the members of two groups with "
                         "the same regions need not nest"}),
)

METHODS = (
    MethodEntry("tcaa", "clustering",
                "TCAA (Algorithms 1-4): synchronized pieces clustered by distance and "
                "direction similarity, each group generalized to per-time rectangles",
                TcaaParams, _TCAA_STEPS, ClusteringTraits(aligned=False, clustering="tcaa")),
    MethodEntry("mla_heuristic", "clustering",
                "MLA with heuristic clustering (seed 001 Algorithms 2-3): clusters grown by "
                "least alignment loss, aligned, each column generalized on the grid's "
                "hierarchies", MlaParams, _MLA_STEPS,
                ClusteringTraits(aligned=True, clustering="heuristic")),
    MethodEntry("mla_kmeans", "clustering",
                "MLA with k'-means on the <d_x, d_y, d_t> vectors (seed 001 §4.3.2); clusters "
                "below k persons merged or suppressed", MlaParams, _MLA_STEPS,
                ClusteringTraits(aligned=True, clustering="kmeans")),
    MethodEntry("mla_iterative_kmeans", "clustering",
                "MLA with iterative k'-means (seed 001 Algorithm 4): clusters of k persons "
                "kept, the rest re-clustered", MlaParams, _MLA_STEPS,
                ClusteringTraits(aligned=True, clustering="iterative_kmeans")),
)
