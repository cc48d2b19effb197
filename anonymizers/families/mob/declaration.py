"""The MOB family's declaration: its methods, typed parameters and traits.

Plain data, cheap to import (the registry reads it at DAG parse time).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from anonymizers.families.declaration import DifferencingRules, FamilyEntry, MethodEntry
from anonymizers.parameters import MethodParams, lattice, param

__all__ = ["FAMILY", "METHODS", "MobParams", "MobTraits"]


@dataclass(frozen=True)
class MobTraits:
    """What tells the family's methods apart: how an equivalence group's quasi-identifiers
    are generalized, over the union of its members' QIDs (Extreme Union, Algorithm 2) or
    by hiding sets made symmetric (Symmetric Anonymization, Algorithm 3)."""

    generalization: Literal["extreme_union", "symmetric"]


@dataclass(frozen=True)
class MobParams(MethodParams):
    cell_size: float = lattice(100.0, "Grid cell size, metres (positions are cells; regions "
                               "are rectangles of cells)")
    interval: int = param(300, "Seconds between time points (from the window start); a "
                          "position is the last fix at or before a time point (seed 003 "
                          "§6.1)", minimum=1)
    position_scope: Literal["trajectory", "person"] = param(
        "trajectory", "Whose last fix is a person's position at a time point: of a trajectory "
        "running then (trajectory) or of the person, up to the window's end (person)")
    position_lookback: int | None = param(
        None, "Oldest fix, seconds before a time point, that may still be the position there "
        "(empty: no limit)", minimum=1)
    outside_qids: Literal["hiding_set", "coarse", "withheld", "cell"] = param(
        "hiding_set", "What an object's position is at a time point outside every "
        "quasi-identifier: the smallest cell rectangle of its cover group (hiding set and "
        "class mates) there, at least k persons (hiding_set), a cell of the coarse lattice "
        "(coarse), no location (withheld: the CRS's area of use), or its own cell, as in the "
        "paper (cell: re-identifiable from a few positions, the release needs "
        "accept_attack_risk)")
    coarse_cell_size: float = lattice(1000.0, "Side (m) of the coarse lattice of outside_qids="
                                      "coarse, a multiple of cell_size")
    presence: Literal["hidden", "published"] = param(
        "hidden", "Which time points an object has a region at: every one, the area of use "
        "where its person has no position (hidden), or only those where its person has one, "
        "as in the paper (published: when a person was observed identifies them, the release "
        "needs accept_attack_risk)")


_STEPS = ("prepare_objects", "anonymize_objects", "build_objects")

FAMILY = FamilyEntry(
    name="mob",
    title="Moving objects with personal quasi-identifiers (seed 003: Yarovoy et al., 2009)",
    privacy_model=(
        "k-anonymous moving objects (seed 003 Definition 3): in the attack graph built from "
        "the published regions, the stored quasi-identifiers (the times an attacker may know "
        "of each person) and the persons' true cells, every person has at least k candidate "
        "objects and the graph is symmetric, so the matching attacker of Definition 2 "
        "re-identifies nobody (Theorem 1); at other times an object's region follows "
        "outside_qids, and with presence hidden every object has one at every time point"),
    steps=_STEPS,
    published_unit="objects",
    tags=("seed-003",),
    keyed_inputs=(("qid_fingerprint", "mob/005_qid_digest.sql"),),
    # the median size of equivalence classes, each of at least k objects, published as an
    # interval-filtered count: no individual's value
    allowed_order_statistics=frozenset({"mob_class_size_median"}),
    differencing=DifferencingRules(not_monotone={
        "region_objects": "MOB re-optimises its equivalence classes every window and carries "
                          "positions forward from the window's own fixes"}),
)

METHODS = (
    MethodEntry("mob_extreme_union", "mob",
                "Extreme Union (Algorithm 2): each group generalized over the union of its QIDs",
                MobParams, _STEPS, MobTraits(generalization="extreme_union")),
    MethodEntry("mob_symmetric", "mob",
                "Symmetric Anonymization (Algorithm 3): hiding sets made symmetric",
                MobParams, _STEPS, MobTraits(generalization="symmetric")),
)
