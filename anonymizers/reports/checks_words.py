"""The independent verifier's checks in words: one sentence per check id of any family.

The manifest records the verifier's result as ``{check id: figure}``; a reader of the
report sees the sentence, the figure and how it was counted. A check id without a sentence
here fails ``tests/test_report.py``, so a new check cannot reach a report as a bare
identifier. Every sentence says what the figure counts and what a passing release shows.
"""

from __future__ import annotations

from typing import Any

from anonymizers.verifiers.base import STRUCTURAL_CHECKS

__all__ = ["CHECK_SENTENCES", "check_rows", "counted_how", "is_filtered_check"]

_ZERO = " Must be 0."

CHECK_SENTENCES: dict[str, str] = {
    # Shared rules (every family)
    "fingerprint_keyed": "The input fingerprint is a keyed HMAC, not a plain hash of the "
                         "source file (a plain hash would let anyone confirm a guessed file).",
    "time_columns": "Columns holding time that were checked to publish no time finer than "
                    "the method's own time grid.",
    "identifier_columns_scanned": "Columns that could carry an identifier, scanned for any "
                                  "raw person or trajectory id of the input.",
    "raw_identifiers_found": "Raw person or trajectory ids of the input found in the "
                             "release." + _ZERO,
    "count_columns": "Columns counting persons or trajectories, checked to hold only counts "
                     "of at least k on the interval filter's steps.",
    "lattice_m": "The lattice (metres) every clip box and rectangle edge must lie on, so "
                 "that no edge is one person's coordinate.",
    "clipped_sides": "Sides of the release's clip boxes checked to lie on that lattice.",
    "metric_values": "Published metric values checked to be aggregates (no minimum, maximum "
                     "or quantile of individual values; no count below k).",
    "window_hours": "Length of the published window in hours (at least the minimum window).",
    "composition_risk_accepted": "Whether the operator accepted publishing a window that "
                                 "overlaps or nests a published one of the same data.",
    "overlapping_releases": "Published releases of the same data whose window overlaps "
                            "this one (allowed only with accepted composition risk).",
    "precision_parameters": "Parameters that set a published precision (lattice, cell size), "
                            "checked against the shared floor.",
    "precision_risk_accepted": "Whether the operator accepted a precision below the shared "
                               "floor.",
    "attack_maxima": "Largest re-identification probabilities of the attack suite checked "
                     "to be at most 1/k.",
    "attack_risk_accepted": "Whether the operator accepted a measured attack risk above 1/k.",
    "declared_ratios": "Published ratios declared with the counts they divide, checked to be "
                       "computed from published (filtered) counts.",
    "figures_attacked": "Other published figures checked not to reveal a count below k or a "
                        "suppressed count when combined with the published counts.",
    # Generalization (cells, flows, sequences)
    "input_trajectories": "Trajectories of the window the verifier read from the raw data.",
    "distinct_published_sequences": "Distinct published cell sequences, each checked against "
                                    "the raw data.",
    "sequences_below_k": "Published sequences found in the generalized trajectories of fewer "
                         "than k distinct persons." + _ZERO,
    "flows": "Published flows between cells, each checked to be made by at least k distinct "
             "persons.",
    "cells": "Published cells, each checked to be supported by at least k distinct persons.",
    "cells_below_k": "Published cells supported by fewer than k distinct persons." + _ZERO,
    "data_derived_generators": "Cell centres computed from the data (not from a fixed "
                               "lattice), checked to come from at least k persons.",
    "generators_off_lattice": "Cell centres of a grid release that are off the grid." + _ZERO,
    "generators_below_k": "Cell centres computed from fewer than k distinct persons." + _ZERO,
    "prefixes_with_few_continuations": "Published sequence prefixes with fewer continuations "
                                       "than min_continuations." + _ZERO,
    # MOB (moving objects with quasi-identifiers)
    "objects": "Published anonymized objects (one per published person, identity hidden).",
    "objects_matching_nobody": "Published objects that match no person of the raw data."
                               + _ZERO,
    "suppressed_persons": "Persons of the window whose objects were not published.",
    "persons_matching_several_objects": "Persons whose data fit several published objects "
                                        "(the ambiguity that hides who is who).",
    "persons_passing_for_published_objects": "Unpublished persons whose data fit a published "
                                             "object as well, so who was published cannot be "
                                             "told.",
    "persons_without_qid": "Persons of the window without a quasi-identifier.",
    "positions_unknown_object": "Published positions of an object that is not published."
                                + _ZERO,
    "positions_empty_region": "Published positions without a region." + _ZERO,
    "positions_off_time_grid": "Published positions at a time off the release's time grid or "
                               "outside its window." + _ZERO,
    "positions_wrong_srid": "Published positions in another coordinate system than the "
                            "manifest's." + _ZERO,
    "positions_not_rectangle": "Published regions that are not axis-parallel rectangles."
                               + _ZERO,
    "positions_off_cell_lattice": "Published regions with an edge off the cell lattice (such "
                                  "an edge may be one person's coordinate)." + _ZERO,
    "positions_repeated_object_time": "Objects published twice at the same time." + _ZERO,
    "positions_missing_object_time": "Objects without a position at a time where one is due."
                                     + _ZERO,
    "definition_3_degree_below_k": "Persons or objects with fewer than k candidates in the "
                                   "attack graph (k-anonymity of moving objects)." + _ZERO,
    "definition_3_counterparts_swapped": "Persons whose own object is not their counterpart "
                                         "in the graph's matching.",
    "definition_3_asymmetric_edges": "Edges of the attack graph that hold in one direction "
                                     "only.",
    "definition_3_symmetric_degree_below_k": "Persons with fewer than k candidates once only "
                                             "symmetric edges count." + _ZERO,
    "attacker_pruned_edges": "Edges an attacker can rule out (in no perfect matching of "
                             "persons to objects).",
    "attacker_persons_below_k": "Persons left with fewer than k candidate objects after the "
                                "attacker's pruning." + _ZERO,
    "attacker_objects_below_k": "Objects left with fewer than k candidate persons after the "
                                "attacker's pruning." + _ZERO,
    # Clustering (TCAA, MLA)
    "groups": "Published groups, each checked to be supported by at least k distinct persons.",
    "groups_below_k": "Published groups whose region holds the raw data of fewer than k "
                      "distinct persons." + _ZERO,
    "groups_larger_than_support": "Groups claiming more persons than the raw data "
                                  "supports." + _ZERO,
    "regions_below_k": "Published regions of fewer than k distinct persons." + _ZERO,
    "regions_not_rectangles": "Published regions that are not rectangles of positive area."
                              + _ZERO,
    "regions_edges_off_lattice": "Published regions with an edge off the lattice (such an "
                                 "edge may be one person's coordinate)." + _ZERO,
    "regions_not_instants": "Regions of an instant-based method that span time." + _ZERO,
    "regions_repeated_times": "Groups with two regions at the same instant." + _ZERO,
    "regions_empty_intervals": "Regions whose time interval is empty." + _ZERO,
    "regions_groups_without_regions": "Published groups without any region." + _ZERO,
    # Trajectory groups
    "places_mode": "What a place is in this release (dataset places, grid cells or the cells "
                   "of a published release).",
    "places_moved": "Published places that are not where the place source puts them." + _ZERO,
    "places_unused": "Published places used by no published group." + _ZERO,
    "places_not_a_place": "Published places that are not places of the source." + _ZERO,
    "places_unpublished": "Places used by a group but not published." + _ZERO,
    "group_places": "Groups whose places are not a JSON list of place names." + _ZERO,
    "group_geometry": "Groups whose line is not drawn through their places' published points, "
                      "in order." + _ZERO,
    "od_places": "Origin-destination groups whose places are not a JSON list of place names."
                 + _ZERO,
    "od_geometry": "Origin-destination groups whose points are not their places' published "
                   "points." + _ZERO,
    "groups_bad_interval": "Group counts off the interval filter." + _ZERO,
    "groups_wrong_length": "Groups whose place sequence has the wrong length." + _ZERO,
    "groups_assigned_below_k": "Groups with fewer than k assigned persons." + _ZERO,
    "interval_size": "Width of the interval filter applied to the groups' and classes' counts.",
    "private_tables": "The owner's private tables the verifier could read to recheck members.",
    "assignment": "Whether the assignment of trajectories to groups could be rechecked.",
    "assignment_misspelt": "Assignment rows whose group or trajectory cannot be read."
                           + _ZERO,
    "assignment_repeated": "Trajectories assigned twice." + _ZERO,
    "assignment_overlapping": "Trajectory parts counted in two groups of a non-overlapping "
                              "method." + _ZERO,
    "assignment_unknown_group": "Assignments to a group that is not published." + _ZERO,
    "assignment_unknown_trajectory": "Assignments of a trajectory not in the input." + _ZERO,
    "od_groups": "Published origin-destination groups, each checked to hold at least k "
                 "persons.",
    "od_groups_below_k": "Origin-destination groups of fewer than k persons." + _ZERO,
    "od_groups_bad_interval": "Origin-destination counts off the interval filter." + _ZERO,
    "od_groups_not_closed": "Origin-destination groups whose places are not one place and "
                            "all its neighbours." + _ZERO,
    "od_groups_unknown_group": "Origin-destination groups of an unpublished group." + _ZERO,
    "od_members": "Whether the members of the origin-destination groups could be rechecked.",
    "od_members_twice": "Persons counted twice in one origin-destination group." + _ZERO,
    "od_members_unknown": "Origin-destination members not in the input." + _ZERO,
    "od_members_wrong_end": "Members whose trip does not start or end at the group's places."
                            + _ZERO,
    "od_members_unassigned": "Origin-destination members not assigned to the group's "
                             "trajectory group." + _ZERO,
    "od_members_of_unpublished": "Members of an origin-destination group that is not "
                                 "published." + _ZERO,
    "demographic_classes": "Published demographic classes (age bands and the like) of the "
                           "groups.",
    "class_members": "Whether the members of the demographic classes could be rechecked.",
    "classes_empty": "Published classes without members." + _ZERO,
    "classes_off_grid": "Class bounds off the declared demographic grid." + _ZERO,
    "classes_overlapping": "Classes of one group that overlap." + _ZERO,
    "classes_missing_bound": "Classes without a bound of an attribute." + _ZERO,
    "classes_unknown_group": "Classes of an unpublished group." + _ZERO,
    "classes_bad_interval": "Class counts off the interval filter." + _ZERO,
    "classes_members_below_k": "Classes of fewer than k members." + _ZERO,
    "classes_inside_box_below_k": "Classes with fewer than k of the group's persons inside "
                                  "their bounds." + _ZERO,
    "classes_counts_exceed_group": "Groups whose class counts add up to more than the group."
                                   + _ZERO,
    "classes_bounds_not_hidden": "Class bounds that are an individual's own value instead of "
                                 "the grid's." + _ZERO,
    "classes_members_outside_interval": "Class members whose value lies outside the class."
                                        + _ZERO,
    "class_members_unpublished": "Class members of an unpublished class." + _ZERO,
    "class_members_missing_value": "Class members without a value of an attribute." + _ZERO,
    "class_members_outside_group": "Class members who are not in the class's group." + _ZERO,
    "class_members_in_two_classes": "Persons in two classes of one group." + _ZERO,
    # Aggregates (presence, origin-destination counts)
    "zones": "Zones the counts are published for.",
    "bin_totals": "Published totals per time bin, checked against the raw data.",
    "remainders_checked": "Totals checked so that subtracting the published cells from them "
                          "reveals no count below k.",
}


def is_filtered_check(name: str, value: Any) -> bool:
    """Whether the manifest's figure of check ``name`` went through the interval filter:
    every integer count of persons, trajectories or published items does (rule 4)."""
    if value is None:
        return True  # the filter's "fewer than k"
    if name in STRUCTURAL_CHECKS or isinstance(value, bool):
        return False
    return isinstance(value, int)


def counted_how(name: str, value: Any, width: int) -> str:
    """How the figure of check ``name`` was counted, in words."""
    if is_filtered_check(name, value):
        return f"interval-filtered: the lower end of an interval of {width}"
    return "exact" if isinstance(value, int | float) and not isinstance(value, bool) else ""


def _figure(name: str, value: Any) -> Any:
    if value is None:
        return "fewer than k"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) or "none"
    return value


def check_rows(result: dict[str, Any] | None, k: int) -> list[tuple[str, Any, str]]:
    """The verifier's checks as (sentence, figure, how counted) rows, then its violations.
    A check without a sentence shows its id (the tests forbid that)."""
    if not result:
        return []
    width = int(result.get("count_interval") or k)
    checks = result.get("checks") or {}
    rows: list[tuple[str, Any, str]] = [
        (CHECK_SENTENCES.get(name, name), _figure(name, value), counted_how(name, value, width))
        for name, value in checks.items()]
    rows += [("VIOLATION: " + str(text), "", "") for text in result.get("violations") or []]
    return rows
