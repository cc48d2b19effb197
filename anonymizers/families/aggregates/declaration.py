"""The aggregates family's declaration: its methods, typed parameters and traits.

Plain data, cheap to import (the registry reads it at DAG parse time).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from anonymizers.families.declaration import DifferencingRules, FamilyEntry, MethodEntry
from anonymizers.parameters import MethodParams, lattice, param

__all__ = ["FAMILY", "KINDS", "METHODS", "AggregatesParams", "AggregatesTraits"]


@dataclass(frozen=True)
class AggregatesTraits:
    """What tells the family's methods apart: what a cell counts. ``presence``: persons
    whose dominant zone in a bin is the cell's zone; ``od``: persons whose dominant zone
    was the origin in the bin before and is the destination in the cell's bin (a move,
    stayers included)."""

    counts: Literal["presence", "od"]


@dataclass(frozen=True)
class AggregatesParams(MethodParams):
    zones: Literal["grid", "dataset", "voronoi"] = param(
        "grid", "What a zone is: 'grid' (square cells of cell_size metres, a lattice of the "
        "release's CRS), 'dataset' (the places file the dataset was loaded with), 'voronoi' "
        "(the cells of the published generalization release zones_release)")
    zones_release: str | None = param(
        None, "With zones=voronoi: the published generalization release (kam_cut, kam_rec, "
        "grid_kam_cut) whose cells are the zones")
    cell_size: float = lattice(500.0, "Side (m) of the grid's zones when zones=grid")
    bin_seconds: int = param(
        3600, "Length of a time bin, seconds; bins are counted from the window start and "
        "only whole bins are published", minimum=60)


# The item kinds of the differencing attack (sql/aggregates/attacks/differencing.sql) by
# what they count; a cell or bin is keyed by its exact zones and bin times, so two
# releases match one only when it is the same zones over the same fixes.
KINDS = {"presence": ("presence_persons", "bin_persons", "window_person_bins"),
         "od": ("od_persons", "bin_moves", "window_moves")}

_STEPS = ("map_zones", "count_cells", "suppress_cells", "build_aggregates")

FAMILY = FamilyEntry(
    name="aggregates",
    title="k-anonymous aggregates: presence counts and origin-destination matrices with "
          "primary and secondary cell suppression (FlowKit; Hundepool et al. 2012, ch. 5)",
    privacy_model=(
        "k-anonymous frequency tables: each person counts once per time bin, in its dominant "
        "zone (the zone holding most of its fixes in the bin); every published cell, bin "
        "total and window total counts at least {k} distinct persons (primary suppression) "
        "and is published as an interval (the interval filter); for every published total, "
        "its true value minus its highest published parts (a published bin total, else the "
        "bin's published cells) is 0 or at least {k} (secondary suppression), so no "
        "unpublished count can be solved to between 1 and {k} - 1; no zone margins"),
    steps=_STEPS,
    published_unit="cells",
    tags=("flowkit", "sdc-frequency-tables"),
    # the manifest's input counts read the window as the other GPS families do (its fixes
    # in the CRS's area of use), whatever the zones cover: no scope parameters
    differencing=DifferencingRules(),
)

METHODS = (
    MethodEntry("presence", "aggregates",
                "Presence counts: persons per zone and time bin (each person in its dominant "
                "zone), primary and secondary suppression below k",
                AggregatesParams, _STEPS, AggregatesTraits(counts="presence"),
                # a cell or bin total is keyed by its bin's times: the same bin of two
                # releases holds the same fixes, so the same count; the window total of
                # aligned bins only grows with the window (the key holds the alignment)
                monotone_counts=frozenset(KINDS["presence"])),
    MethodEntry("od", "aggregates",
                "Origin-destination matrix: moves of persons between their dominant zones of "
                "consecutive time bins (stayers included), primary and secondary suppression "
                "below k",
                AggregatesParams, _STEPS, AggregatesTraits(counts="od"),
                monotone_counts=frozenset(KINDS["od"])),
)
