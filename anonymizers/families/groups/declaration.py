"""The trajectory-groups family's declaration: its methods, typed parameters and traits.

Plain data, cheap to import (the registry reads it at DAG parse time).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from anonymizers.families.declaration import DifferencingRules, FamilyEntry, MethodEntry
from anonymizers.parameters import MethodParams, lattice, param

__all__ = ["FAMILY", "METHODS", "GroupsParams", "GroupsTraits", "NonoverlappingParams"]


@dataclass(frozen=True)
class GroupsTraits:
    """What tells the family's methods apart: ``overlapping`` counts every trajectory that
    travels a published sequence (Algorithms 1-3); otherwise no part of a trajectory is
    counted in two groups (Algorithms 4-5), and common origin and destination groups may
    be published (§4.3.3)."""

    overlapping: bool


@dataclass(frozen=True)
class GroupsParams(MethodParams):
    places: Literal["auto", "dataset", "grid", "voronoi"] = param(
        "auto", "What a place is: 'dataset' (the places file the dataset was loaded with), "
        "'grid' (cells of a fixed grid of cell_size metres), 'voronoi' (the cells of the "
        "published generalization release places_release), 'auto' (dataset if it has "
        "places, else grid)")
    places_release: str | None = param(
        None, "With places=voronoi: the published generalization release (kam_cut, kam_rec, "
        "grid_kam_cut) whose cells are the places")
    cell_size: float = lattice(500.0, "Side (m) of the grid cells when places=grid")
    interval_size: int | None = param(
        None, "Interval filter size I_s of the groups' and classes' counts (seed 004 §4.2; "
        "default k; tg_overlapping needs at least ceil(k/2), and k with demographic classes, "
        "§4.5.1)", minimum=1)
    demographics: Literal["auto", "ga", "mondrian", "none"] = param(
        "auto", "Demographic classes per group: 'ga' (the thesis' genetic algorithm, §4.4.4), "
        "'mondrian' (strict Mondrian, the baseline of §5.2), 'none', or 'auto' (ga when at "
        "least k persons of the dataset carry every attribute of demographic_grid, else none; "
        "the manifest records which)")
    demographic_grid: str = param(
        "age:0:120:24", "The public atomic grid of the demographic attributes, attribute:lower:"
        "upper:bins, comma-separated (§4.4.3; default: ages in five-year intervals). "
        "Attributes are raw.persons columns (age, income) or keys of its attributes")
    seed: int = param(0, "Seed of the random choices (moved trajectories, GA)", minimum=0)


@dataclass(frozen=True)
class NonoverlappingParams(GroupsParams):
    od_groups: bool = param(True, "Publish common origin and destination groups (§4.3.3)")


_STEPS = ("map_places", "group_trajectories", "demographic_classes", "build_places_release")

FAMILY = FamilyEntry(
    name="groups",
    title="Trajectory groups over places with demographic classes (seed 004: Nordström, 2012)",
    privacy_model=(
        "k distinct individuals per trajectory group and per demographic class (seed 004 "
        "§3.2, §4.1): every published sequence of places was travelled, as a contiguous part "
        "of a trajectory of the window, by at least k distinct persons; every common origin or "
        "destination group holds at least k of a group's persons; every demographic class "
        "box holds at least k persons of its group and its bounds are hidden (§4.4.5); "
        "counts are published as intervals (§4.2); under tg_nonoverlapping no part of a "
        "trajectory is counted in two groups"),
    steps=_STEPS,
    published_unit="groups",
    tags=("seed-004",),
    differencing=DifferencingRules(
        not_monotone={
            "group_trajectories": "tg_nonoverlapping assigns each part of a trajectory to one "
                                  "group, again in every window (only tg_overlapping over the "
                                  "same places counts every trajectory travelling a sequence)",
            "od_group_trajectories": "common origin/destination groups are a greedy "
                                     "assignment, redone in every window"},
        # what the input counts count: the visits of the same places
        scope_params=("places", "places_release", "cell_size")),
)

METHODS = (
    MethodEntry("tg_overlapping", "groups",
                "Overlapping trajectory anonymizer (Algorithms 1-3): every contiguous "
                "subsequence travelled by at least k persons, counts through the interval "
                "filter", GroupsParams, _STEPS, GroupsTraits(overlapping=True),
                # matched on the places' exact geometry: the same places, every trajectory
                # that travels a sequence counted
                monotone_counts=frozenset({"group_trajectories"})),
    MethodEntry("tg_nonoverlapping", "groups",
                "Nonoverlapping trajectory anonymizer (Algorithms 4-5, score n l^2): no part "
                "of a trajectory counted twice; optional origin-destination groups (§4.3.3)",
                NonoverlappingParams, _STEPS, GroupsTraits(overlapping=False)),
)
