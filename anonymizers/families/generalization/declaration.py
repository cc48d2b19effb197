"""The generalization family's declaration: its methods, typed parameters and traits.

Plain data, cheap to import (the registry reads it at DAG parse time).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from anonymizers.families.declaration import DifferencingRules, FamilyEntry, MethodEntry
from anonymizers.parameters import MethodParams, lattice, param

__all__ = ["FAMILY", "METHODS", "GeneralizationTraits", "GridKamCutParams", "KamCutParams",
           "KamRecParams", "PrefixTreeParams", "TessellationParams"]


@dataclass(frozen=True)
class GeneralizationTraits:
    """What tells the family's methods apart.

    ``cells``: a fixed square grid, or data-driven Voronoi cells (characteristic points,
    clustering, progressive generalization). ``crossings``: a trajectory's visits are the
    cells whose boundary its segments cross (Voronoi cells: a move between two cells is a
    crossing of their common edge) rather than only the cells of its fixes (the grid).
    ``recovery``: trajectories the prefix tree cuts are recovered by ClosestLCS (KAM_REC).
    """

    cells: Literal["grid", "voronoi"]
    crossings: bool
    recovery: bool


@dataclass(frozen=True)
class PrefixTreeParams(MethodParams):
    """The prefix tree's parameters, shared by every method of the family."""

    min_continuations: int = param(
        1, "Cut published prefixes with fewer distinct continuations, which tell where their "
        "travellers went next (1 = off)", minimum=1)


@dataclass(frozen=True)
class GridKamCutParams(PrefixTreeParams):
    cell_size: float = lattice(1000.0, "Grid cell size, metres")


@dataclass(frozen=True)
class TessellationParams(PrefixTreeParams):
    """The data-driven tessellation's parameters (seed 000 §6.1, Algorithms 1-3)."""

    radius: float = param(500.0, "Desired cluster radius r, metres (seed 000 §6.1)",
                          minimum=0, exclusive_minimum=True)
    min_angle: float = param(45.0, "Significant turn, degrees", minimum=0,
                             exclusive_minimum=True, maximum=180)
    min_stop_duration: float = param(300.0, "Significant stop, seconds", minimum=0,
                                     exclusive_minimum=True)
    stop_radius: float = param(100.0, "Moves below this many metres count as staying",
                               minimum=0, exclusive_minimum=True)
    max_distance: float = param(1000.0, "Characteristic points at most this far apart, "
                                "metres", minimum=0, exclusive_minimum=True)
    max_displacement: float = param(1000.0, "MaxDisplacement of a merged area, metres (0: no "
                                    "limit)", minimum=0)
    max_iterations: int = param(50, "Steps of progressive generalization (Algorithm 3)",
                                minimum=1)
    snap: float = lattice(50.0, "Lattice (m) of generators and the clip box (privacy rule 2)")


@dataclass(frozen=True)
class KamCutParams(TessellationParams):
    """kam_cut: the tessellation and the prefix tree."""


@dataclass(frozen=True)
class KamRecParams(TessellationParams):
    """kam_rec: kam_cut's, and how cut trajectories are recovered (Algorithms 5-6)."""

    p: float = param(0.4, "Share of a trajectory a recovery must keep", minimum=0,
                     exclusive_minimum=True, maximum=1)
    lcs_candidates: int = param(32, "Sequences ClosestLCS compares a cut trajectory with "
                                "(more: longer recoveries, more time)", minimum=1)


_GRID_STEPS = ("project", "grid_membership", "visits_and_flows", "anonymize", "build_release")
_VORONOI_STEPS = ("project", "characteristic_points", "cluster", "voronoi",
                  "progressive_generalization", "anonymize", "build_release")
_FLOWS = frozenset({"flow_persons", "flow_trajectories"})

FAMILY = FamilyEntry(
    name="generalization",
    title="Generalization releases (seed 000: Monreale et al., 2010)",
    privacy_model=(
        "k-anonymous cell sequences: every published cell sequence (trajectory or flow) is "
        "contained, as a subsequence, in the generalized trajectories of at least k distinct "
        "persons of the window (implies seed 000 Definition 9); every published cell and "
        "generator is supported by at least k of them"),
    steps=("project", "grid_membership", "characteristic_points", "cluster", "voronoi",
           "progressive_generalization", "visits_and_flows", "anonymize",
           "build_release"),
    tags=("seed-000",),
    differencing=DifferencingRules(not_monotone={
        "flow_persons": "flows between data-driven Voronoi cells (kam_cut, kam_rec): the cells "
                        "and crossings between two cells come from each window's data, so a "
                        "flow's persons in the inner window need not take it in the outer",
        "flow_trajectories": "flows between data-driven Voronoi cells (kam_cut, kam_rec): the "
                             "cells and crossings between two cells come from each window's "
                             "data, so a flow's trajectories in the inner window need not take "
                             "it in the outer"}),
)

METHODS = (
    MethodEntry("grid_kam_cut", "generalization", "fixed square grid + KAM_CUT (baseline)",
                GridKamCutParams, _GRID_STEPS,
                GeneralizationTraits(cells="grid", crossings=False, recovery=False),
                # a fixed grid: the same cells, the same moves between them, in every window
                monotone_counts=_FLOWS),
    MethodEntry("kam_cut", "generalization",
                "data-driven Voronoi cells + progressive generalization + KAM_CUT (Alg. 4)",
                KamCutParams, _VORONOI_STEPS,
                GeneralizationTraits(cells="voronoi", crossings=True, recovery=False)),
    MethodEntry("kam_rec", "generalization",
                "data-driven Voronoi cells + progressive generalization + KAM_REC (Alg. 5-6)",
                KamRecParams, _VORONOI_STEPS,
                GeneralizationTraits(cells="voronoi", crossings=True, recovery=True)),
)
