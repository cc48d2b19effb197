"""Verify a trajectory-groups release (tg_overlapping, tg_nonoverlapping; seed 004) from raw data.

It reads only the release (or build) schema under test, the run's private work tables when
they still exist, the ledger and ``raw``; it never imports the groups anonymizer nor runs
its SQL (``sql/groups/*.sql``): places, visits, sequences, neighbours and hidden bounds are
derived again by its own ``sql/groups/verify/*.sql``. It reads the family's declaration
(plain data: the method's traits and typed parameters), as the anonymizer does. First the
machinery's shared rules (:mod:`anonymizers.verifiers.base`), then Nordström's model:

1. **places**: every published place is the dataset's place of that name, at its position
   (place-sequence datasets), or exactly its cell of the fixed grid (GPS datasets); every
   place is named by a group or od group, and every named place is published; the
   geometry of a group (the line through its places' points, in order) and of an od group
   (their points) is exactly what its published places give (privacy rule 2);
2. **groups** (§4.3): each sequence is a contiguous part of the window's place sequences of
   at least k distinct persons; ``length`` is its number of places; the count interval is
   one of the interval filter's (§4.2: size I, starting at k) and holds the true count
   (tg_overlapping: trajectories containing the sequence; tg_nonoverlapping: trajectories
   assigned to the group, or, without the assignment, not more than contain it);
   tg_overlapping needs I >= ceil(k/2) (§4.5.1);
3. **assignment** (before publication, from the work schema): every row's visits spell its
   group's sequence; under tg_nonoverlapping no two rows of one trajectory overlap, a
   trajectory is counted once per group, and every group has k distinct assigned persons;
4. **origin / destination groups** (§4.3.3): of a published group; their places are a place
   and all its neighbours (Delaunay edges of the dataset's places, or the 8 cells around a
   cell, visited or not); with the private members: assigned to the group, starting
   (origin) / ending (destination) their whole window sequence there, at most one origin
   and one destination group per trajectory, k distinct persons, count in the interval;
   without them: k distinct persons could be members;
5. **demographic classes** (§4.4): bounds on the public atomic grid, non-empty boxes inside
   the domain, disjoint within a group; at least k persons of the group inside every box
   (privacy rule 1: boundary hiding, §4.4.5, can leave fewer than k of a class's members in
   its published box, even none; the thesis publishes such a box with the class's count,
   the pipeline does not); with the private members: k distinct persons of the group, each
   in one class, count in the interval, and the bounds exactly those §4.4.5 hides to.

Checks that need the private work tables are reported as not available in ``checks`` for a
published release (its work schema is gone), never as violations.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import psycopg

from anonymizers.db.sqlfiles import fetch_columns, run_sql_file
from anonymizers.errors import InputError
from anonymizers.families.groups.declaration import (
    GroupsParams,
    GroupsTraits,
    NonoverlappingParams,
)
from anonymizers.families.registry import METHODS
from anonymizers.release.spec import area_of_use
from anonymizers.verifiers.base import (
    ReleaseUnderTest,
    VerifierResult,
    check_shared_rules,
    read_release,
)

__all__ = ["Attribute", "ItemCounts", "derive_place_sequences", "parse_demographic_grid",
           "recount_items", "verify_groups_release", "verify_release"]

RELEASE_TABLES = ("places", "groups", "od_groups", "demographic_classes", "manifest")
PRIVATE_TABLES = ("tg_published_assignment", "tg_published_od_members",
                  "tg_published_class_members")
SHOWN_GROUPS = 5  # items named per kind of violation
NOT_AVAILABLE = "not available (no work schema: a published release keeps no members)"
Table = tuple[str, str]


# --------------------------------------------------------------------------- settings


@dataclass(frozen=True)
class Attribute:
    """One attribute of the public atomic grid: ``bins`` intervals over [lower, upper)."""

    name: str
    lower: float
    upper: float
    bins: int


@dataclass(frozen=True)
class Settings:
    """What the manifest declares, resolved (places 'auto' -> 'dataset' or 'grid'), and
    what the method's declaration says it publishes (its traits)."""

    traits: GroupsTraits
    places: str
    cell_size: float | None
    interval: int
    od_groups: bool
    demographics: str
    grid: tuple[Attribute, ...]
    places_release: str | None = None  # places=voronoi: the release whose cells are places

    @property
    def nonoverlapping(self) -> bool:
        """No part of a trajectory is counted in two groups (Algorithms 4-5)."""
        return not self.traits.overlapping

    @property
    def lattice_m(self) -> float:
        """The shared rules' clip lattice: the grid's cells; a place-sequence release
        clips nothing (its places are public points, checked exactly here), so 1e-6 m, on
        which every coordinate lies."""
        return self.cell_size if self.places == "grid" and self.cell_size else 1e-6


@dataclass
class ItemCounts:
    """Per published item, the distinct persons this verifier counts for it: the numbers
    its checks hold to k, by kind of count.

    ``group``: persons whose window sequence contains the group's (tgv_occurrences);
    ``group_assigned``: persons the private assignment counts in the group on sequences
    that spell it (tg_nonoverlapping, before publication); ``od_group``: the od group's
    valid private members, or without them the persons that could be members;
    ``class_inside``: persons of the class's group inside its published box;
    ``class_members``: the class's distinct private members (before publication).
    Groups and od groups are keyed by their release ids, classes by (group_id, class_id).
    """

    counts: dict[str, dict[Any, int]] = field(default_factory=lambda: defaultdict(dict))

    def record(self, kind: str, key: Any, persons: int) -> int:
        self.counts[kind][key] = int(persons)
        return int(persons)

    def below(self, kind: str, k: int) -> list[Any]:
        """The items of ``kind`` counted fewer than k persons, in key order."""
        return sorted(key for key, persons in self.counts[kind].items() if persons < k)


def parse_demographic_grid(text: str) -> tuple[Attribute, ...]:
    """The atomic grid ``'attribute:lower:upper:bins,...'`` of the manifest.

    Raises
    ------
    InputError
        When an entry is not four fields, a bound not a finite number with lower < upper,
        bins not a positive integer, or an attribute named twice.

    Examples
    --------
    >>> parse_demographic_grid("age:0:120:24")[0]
    Attribute(name='age', lower=0.0, upper=120.0, bins=24)
    """
    attributes: list[Attribute] = []
    for entry in (part.strip() for part in str(text).split(",") if part.strip()):
        fields = entry.split(":")
        try:
            name, lower, upper, bins = fields[0], float(fields[1]), float(fields[2]), \
                int(fields[3])
        except (IndexError, ValueError):
            raise InputError(f"demographic_grid entry {entry!r} is not "
                             "attribute:lower:upper:bins") from None
        if len(fields) != 4 or not name or not (math.isfinite(lower) and math.isfinite(upper)
                                                and lower < upper and bins >= 1):
            raise InputError(f"demographic_grid entry {entry!r} needs a name, finite "
                             "lower < upper and at least one bin")
        attributes.append(Attribute(name, lower, upper, bins))
    if len({a.name for a in attributes}) != len(attributes):
        raise InputError(f"demographic_grid {text!r} names an attribute twice")
    return tuple(attributes)


def _settings(conn: psycopg.Connection, release: ReleaseUnderTest,
              result: VerifierResult) -> Settings | None:
    """The manifest's parameters (typed by the method's declared dataclass), or None with a
    violation when they cannot be checked."""
    entry = METHODS[release.manifest["method"]]
    try:
        params = entry.parameters.of(release.parameters)
        if not isinstance(params, GroupsParams):
            raise InputError(f"{entry.name} declares {type(params).__name__}, not the "
                             "trajectory-groups family's GroupsParams")
        places = _place_mode(conn, release, params.places)
        cell_size = _cell_size(params.cell_size, places)
        interval = release.k if params.interval_size is None else params.interval_size
        demographics: str = params.demographics
        if demographics == "auto":
            raise InputError("demographics 'auto' was not resolved: the manifest must record "
                             "ga, mondrian or none")
        grid = (() if demographics == "none"
                else parse_demographic_grid(params.demographic_grid))
        if demographics != "none" and not grid:
            raise InputError("demographics without a demographic_grid")
    except InputError as error:
        result.violations.append(f"the manifest's parameters cannot be checked: {error}")
        return None
    # only the nonoverlapping anonymizer's parameters hold the flag (§4.3.3)
    od = isinstance(params, NonoverlappingParams) and params.od_groups
    cells_release = None
    if places == "voronoi":
        cells_release = _cells_release(conn, params.places_release, result)
        if cells_release is None:
            return None
    traits: GroupsTraits = entry.traits
    return Settings(traits, places, cell_size, interval, od, demographics, grid, cells_release)


def _cells_release(conn: psycopg.Connection, name: str | None,
                   result: VerifierResult) -> str | None:
    """The published generalization release whose cells are the places, or None with a
    violation."""
    methods = [] if name is None else fetch_columns(
        conn, "groups/verify/cells_release.sql", {"release_name": name})["method"]
    if name is None or not methods or methods[0] not in METHODS \
            or METHODS[methods[0]].family != "generalization":
        result.violations.append(f"places_release {name!r} is no published generalization "
                                 "release: the places cannot be checked")
        return None
    return name


def _place_mode(conn: psycopg.Connection, release: ReleaseUnderTest, declared: str) -> str:
    if declared != "auto":
        return declared
    (has_places,) = fetch_columns(conn, "groups/verify/dataset_has_places.sql",
                                  {"dataset_id": release.dataset_id})["has_places"]
    return "dataset" if has_places else "grid"


def _cell_size(size: float, places: str) -> float | None:
    if places != "grid":
        return None
    if not math.isfinite(size):
        raise InputError(f"cell_size {size:g} must be a finite number of metres")
    return size


# --------------------------------------------------------------------------- reporting


def _report(result: VerifierResult, key: str, items: list[str], text: str) -> None:
    """``checks[key]`` = how many items are faulty; the first few named as violations."""
    result.checks[key] = len(items)
    for item in items[:SHOWN_GROUPS]:
        result.violations.append(f"{item}: {text}")
    if len(items) > SHOWN_GROUPS:
        result.violations.append(f"... and {len(items) - SHOWN_GROUPS} more: {text}")


def interval_faults(n_lo: int | None, n_hi: int | None, k: int, interval: int,
                    true_count: int | None = None) -> list[str]:
    """What is wrong with the published interval [n_lo, n_hi] of the filter (§4.2)."""
    if n_lo is None or n_hi is None:
        return ["no count interval"]
    faults = []
    if n_hi - n_lo + 1 != interval:
        faults.append(f"interval [{n_lo}, {n_hi}] is not of size {interval}")
    if n_lo < k or (n_lo - k) % interval:
        faults.append(f"n_lo {n_lo} is not k + {interval} i (k={k})")
    if true_count is not None and not n_lo <= true_count <= n_hi:
        faults.append(f"interval [{n_lo}, {n_hi}] does not hold the true count")
    return faults


# --------------------------------------------------------------------------- tables


def _release_tables(conn: psycopg.Connection, schema: str) -> dict[str, Table]:
    found = set(fetch_columns(conn, "groups/verify/tables.sql",
                              {"schema": schema, "tables": list(RELEASE_TABLES)})["table_name"])
    missing = [name for name in RELEASE_TABLES if name not in found]
    if missing:
        raise InputError(f"{schema} has no {', '.join(missing)} table: not a trajectory-groups "
                         "release")
    return {name: (schema, name) for name in RELEASE_TABLES}


def work_schema(schema: str) -> str | None:
    """The run's work schema of a build schema (``build_x`` -> ``work_x``); None for a
    published release (``release_x``), whose work schema was dropped."""
    return "work_" + schema[len("build_"):] if schema.startswith("build_") else None


def _private_tables(conn: psycopg.Connection, schema: str,
                    result: VerifierResult) -> dict[str, Table]:
    """The run's private member tables that exist (none after publication)."""
    work = work_schema(schema)
    found: set[str] = set()
    if work is not None:
        found = set(fetch_columns(conn, "groups/verify/tables.sql",
                                  {"schema": work, "tables": list(PRIVATE_TABLES)})["table_name"])
    result.checks["private_tables"] = sorted(found) if found else NOT_AVAILABLE
    return {name: (str(work), name) for name in found}


# --------------------------------------------------------------------------- derivation


def derive_place_sequences(conn: psycopg.Connection, schema: str
                           ) -> tuple[list[str], list[str], list[list[str]]]:
    """Trajectory, person and place sequence of every trajectory of the window of release
    ``schema``, as this verifier derives them (the attack suite reads them too)."""
    release = _groups_release(conn, schema)
    result = VerifierResult(schema, release.k)
    settings = _settings(conn, release, result)
    if settings is None:
        raise InputError(f"{schema}: {'; '.join(result.violations)}")
    with conn.transaction():
        _derive_visits(conn, release, settings)
        rows = fetch_columns(conn, "groups/verify/sequences.sql")
    return rows["traj"], rows["person"], [list(places) for places in rows["places"]]


def _derive_visits(conn: psycopg.Connection, release: ReleaseUnderTest,
                   settings: Settings) -> None:
    """The window's place sequences and the places' neighbours, in temporary tables."""
    manifest = release.manifest
    srid = int(manifest["srid"])
    params: dict[str, Any] = {"dataset_id": release.dataset_id, "srid": srid,
                              "window_start": manifest["window_start"],
                              "window_end": manifest["window_end"]}
    identifiers: dict[str, tuple[str, str]] = {}
    if settings.places == "grid":
        params |= {"cell_size": settings.cell_size, **area_of_use(srid)}
    if settings.places_release is not None:
        identifiers["cells"] = (settings.places_release, "cells")
        srids = fetch_columns(conn, "groups/verify/cells_srid.sql",
                              {"release_name": settings.places_release})["srid"]
        params["cells_srid"] = int(srids[0]) if srids and srids[0] is not None else 0
    run_sql_file(conn, f"groups/verify/fixes_{settings.places}.sql", params, **identifiers)
    run_sql_file(conn, "groups/verify/visits.sql")
    run_sql_file(conn, f"groups/verify/neighbours_{settings.places}.sql")


def _check_places(conn: psycopg.Connection, release: ReleaseUnderTest, tables: dict[str, Table],
                  result: VerifierResult) -> None:
    rows = fetch_columns(conn, "groups/verify/places.sql",
                         {"srid": int(release.manifest["srid"])}, places=tables["places"],
                         groups=tables["groups"], od_groups=tables["od_groups"])
    faults: dict[str, list[str]] = defaultdict(list)
    for fault, place in zip(rows["fault"], rows["place_id"], strict=True):
        faults[fault].append(f"place {place}")
    texts = {"not_a_place": "is no place of the dataset (nor a grid cell near a visited one)",
             "moved": "its geometry is not the place's (moved, or another type or SRID)",
             "unused": "published but named by no group or od group",
             "unpublished": "named by a group or od group but not published"}
    for fault, text in texts.items():
        _report(result, f"places_{fault}", faults[fault], text)


def _place_sequences(conn: psycopg.Connection, tables: dict[str, Table],
                     result: VerifierResult) -> dict[str, Table]:
    """The tables the checks read: groups and od groups with their places as text arrays
    (temporary tables; the release holds JSON arrays), once their geometry is checked to be
    exactly the line (groups) or the points (od groups) of their published places."""
    run_sql_file(conn, "groups/verify/published_places.sql", groups=tables["groups"],
                 od_groups=tables["od_groups"])
    rows = fetch_columns(conn, "groups/verify/geometry.sql", groups=tables["groups"],
                         od_groups=tables["od_groups"], places=tables["places"])
    faults: dict[str, list[str]] = defaultdict(list)
    for fault, item in zip(rows["fault"], rows["item"], strict=True):
        faults[fault].append(item)
    texts = {"group_places": "places is not a JSON array of place names",
             "group_geometry": "its geometry is not the line through its places' points, "
                               "in order",
             "od_places": "places is not a JSON array of place names",
             "od_geometry": "its geometry is not the points of its places"}
    for fault, text in texts.items():
        _report(result, fault, faults[fault], text)
    return {**tables, "groups": ("pg_temp", "tgv_groups"),
            "od_groups": ("pg_temp", "tgv_od_groups")}


# --------------------------------------------------------------------------- groups


def _check_groups(conn: psycopg.Connection, release: ReleaseUnderTest, settings: Settings,
                  tables: dict[str, Table], assigned: dict[int, tuple[int, int]] | None,
                  counts: ItemCounts, result: VerifierResult) -> None:
    """Support, length and count interval of every group (from tgv_occurrences)."""
    support = fetch_columns(conn, "groups/verify/support.sql", groups=tables["groups"])
    k = release.k
    thin, wrong_length, bad_interval = [], [], []
    for i, group in enumerate(support["group_id"]):
        if counts.record("group", group, support["persons"][i]) < k:
            thin.append(f"group {group}")
        if support["length"][i] != support["n_places"][i]:
            wrong_length.append(f"group {group}")
        true, at_most = _true_count(settings, support["trajectories"][i], group, assigned)
        faults = interval_faults(support["n_lo"][i], support["n_hi"][i], k, settings.interval,
                                 true)
        if at_most is not None and support["n_lo"][i] > at_most:
            faults.append(f"n_lo {support['n_lo'][i]} exceeds the trajectories containing it")
        bad_interval += [f"group {group}: {fault}" for fault in faults]
    result.checks["groups"] = len(support["group_id"])
    _report(result, "groups_below_k", thin, f"its sequence is a contiguous part of the place "
            f"sequences of fewer than k={k} distinct persons in the window")
    _report(result, "groups_wrong_length", wrong_length, "length is not its number of places")
    _report(result, "groups_bad_interval", bad_interval, "interval filter (§4.2)")


def _true_count(settings: Settings, containing: int, group: int,
                assigned: dict[int, tuple[int, int]] | None) -> tuple[int | None, int | None]:
    """(the count the interval must hold, or None; an upper bound of it, or None)."""
    if not settings.nonoverlapping:
        return containing, None
    if assigned is None:
        return None, containing
    return assigned.get(group, (0, 0))[0], None


def _check_interval_size(release: ReleaseUnderTest, settings: Settings,
                         result: VerifierResult) -> None:
    result.checks["interval_size"] = settings.interval
    if not settings.nonoverlapping and settings.interval < math.ceil(release.k / 2):
        result.violations.append(f"interval_size {settings.interval} is below ceil(k/2) = "
                                 f"{math.ceil(release.k / 2)}: the overlapping anonymizer's "
                                 "counts then differ by fewer than k - 1 persons (§4.5.1)")
    elif (not settings.nonoverlapping and settings.demographics != "none"
          and settings.interval < release.k):
        result.violations.append(f"interval_size {settings.interval} is below k = {release.k} "
                                 "with demographic classes: two nested groups' classes tell "
                                 "what the fewer than k persons between them are (§4.5.1, "
                                 "Figure 13)")


def _check_assignment(conn: psycopg.Connection, release: ReleaseUnderTest, settings: Settings,
                      tables: dict[str, Table], private: dict[str, Table], counts: ItemCounts,
                      result: VerifierResult) -> dict[int, tuple[int, int]] | None:
    """The private assignment's faults; per group (trajectories, persons) assigned, or None
    when it is not available."""
    if "tg_published_assignment" not in private:
        result.checks["assignment"] = NOT_AVAILABLE
        return None
    run_sql_file(conn, "groups/verify/assignment.sql",
                 assignment=private["tg_published_assignment"], groups=tables["groups"])
    rows = fetch_columns(conn, "groups/verify/assignment_faults.sql",
                         {"nonoverlapping": settings.nonoverlapping})
    faults: dict[str, list[str]] = defaultdict(list)
    for fault, group, n in zip(rows["fault"], rows["group_id"], rows["n"], strict=True):
        faults[fault].append(f"group {group} ({n} assignment rows)")
    texts = {"unknown_group": "assigned to a group that is not published",
             "unknown_trajectory": "of a trajectory not in the window or of another person",
             "misspelt": "the assigned visits do not spell the group's sequence",
             "repeated": "a trajectory counted more than once in the group",
             "overlapping": "a trajectory's assigned range overlaps another of its ranges "
                            "(§4.3.3: nonoverlapping)"}
    for fault, text in texts.items():
        _report(result, f"assignment_{fault}", faults[fault], text)
    counted = fetch_columns(conn, "groups/verify/assigned.sql", groups=tables["groups"])
    assigned = {g: (t, p) for g, t, p in zip(counted["group_id"], counted["trajectories"],
                                             counted["persons"], strict=True)}
    if settings.nonoverlapping:
        for group, (_, persons) in assigned.items():
            counts.record("group_assigned", group, persons)
        thin = [f"group {g}" for g in counts.below("group_assigned", release.k)]
        _report(result, "groups_assigned_below_k", thin,
                f"fewer than k={release.k} distinct persons assigned")
    return assigned


# --------------------------------------------------------------------------- od groups


def _check_od_groups(conn: psycopg.Connection, release: ReleaseUnderTest, settings: Settings,
                     tables: dict[str, Table], private: dict[str, Table], counts: ItemCounts,
                     result: VerifierResult) -> None:
    od = fetch_columns(conn, "groups/verify/od_closed.sql", od_groups=tables["od_groups"],
                       groups=tables["groups"])
    result.checks["od_groups"] = len(od["od_group_id"])
    if od["od_group_id"] and not (settings.nonoverlapping and settings.od_groups):
        result.violations.append("od_groups has rows although the manifest publishes no "
                                 "origin-destination groups (§4.3.3: tg_nonoverlapping with "
                                 "od_groups=true only)")
    names = [f"od group {i}" for i in od["od_group_id"]]
    _report(result, "od_groups_unknown_group",
            [n for n, known in zip(names, od["group_known"], strict=True) if not known],
            "its trajectory group is not published")
    _report(result, "od_groups_not_closed",
            [n for n, closed in zip(names, od["closed"], strict=True) if not closed],
            "its places are not one place and all its neighbours (§4.3.3)")
    with_members = "tg_published_od_members" in private and "tg_published_assignment" in private
    if with_members:
        members = _od_member_counts(conn, tables, private, result)
    else:
        result.checks["od_members"] = NOT_AVAILABLE
        members = fetch_columns(conn, "groups/verify/od_support.sql",
                                od_groups=tables["od_groups"])
    _check_od_counts(release, settings, od, members, with_members, counts, result)


def _od_member_counts(conn: psycopg.Connection, tables: dict[str, Table],
                      private: dict[str, Table],
                      result: VerifierResult) -> dict[str, list[Any]]:
    """The members' faults; per od group the distinct valid member trajectories and
    persons."""
    members = private["tg_published_od_members"]
    rows = fetch_columns(conn, "groups/verify/od_members.sql", od_groups=tables["od_groups"],
                         members=members)
    result.checks["od_members"] = "checked"
    ids = rows["od_group_id"]
    _report(result, "od_members_of_unpublished",
            [f"od group {o}" for o, p in zip(ids, rows["published"], strict=True) if not p],
            "members of an od group that is not published")
    for column, text in (("unknown", "members whose trajectory is not in the window or "
                                     "another person's"),
                         ("unassigned", "members not assigned to the od group's trajectory "
                                        "group"),
                         ("wrong_end", "members whose window sequence does not start (origin) "
                                       "/ end (destination) at its places")):
        _report(result, f"od_members_{column}",
                [f"od group {o} ({n})" for o, n in zip(ids, rows[column], strict=True) if n],
                text)
    twice: dict[tuple[int, ...], int] = defaultdict(int)
    for ids in fetch_columns(conn, "groups/verify/od_twice.sql", od_groups=tables["od_groups"],
                             members=members)["od_group_ids"]:
        twice[tuple(ids)] += 1
    _report(result, "od_members_twice",
            [f"od groups {', '.join(map(str, ids))} ({n} trajectories)"
             for ids, n in twice.items()],
            "trajectories in more than one origin (or destination) group (§4.3.3)")
    return rows


def _check_od_counts(release: ReleaseUnderTest, settings: Settings, od: dict[str, list[Any]],
                     members: dict[str, list[Any]], with_members: bool, counts: ItemCounts,
                     result: VerifierResult) -> None:
    """k distinct persons per od group and its count interval: the members' (exact), or
    the possible members' (an upper bound) when the members are not available."""
    k = release.k
    by_id = {o: (t, p) for o, t, p in zip(members["od_group_id"], members["trajectories"],
                                          members["persons"], strict=True)}
    thin, bad = [], []
    for i, od_id in enumerate(od["od_group_id"]):
        trajectories, persons = by_id.get(od_id, (0, 0))
        if counts.record("od_group", od_id, persons) < k:
            thin.append(f"od group {od_id}")
        faults = interval_faults(od["n_lo"][i], od["n_hi"][i], k, settings.interval,
                                 trajectories if with_members else None)
        if not with_members and od["n_lo"][i] is not None and od["n_lo"][i] > trajectories:
            faults.append(f"n_lo {od['n_lo'][i]} exceeds the trajectories that could be members")
        bad += [f"od group {od_id}: {fault}" for fault in faults]
    who = "members" if with_members else "persons that could be members"
    _report(result, "od_groups_below_k", thin, f"fewer than k={k} distinct {who}")
    _report(result, "od_groups_bad_interval", bad, "interval filter (§4.2)")


# --------------------------------------------------------------------------- classes


def _check_classes(conn: psycopg.Connection, release: ReleaseUnderTest, settings: Settings,
                   tables: dict[str, Table], private: dict[str, Table],
                   assignment_available: bool, counts: ItemCounts,
                   result: VerifierResult) -> None:
    classes = tables["demographic_classes"]
    (result.checks["demographic_classes"],) = fetch_columns(
        conn, "groups/verify/class_count.sql", classes=classes)["classes"]
    if settings.demographics == "none":
        if result.checks["demographic_classes"]:
            result.violations.append("demographic_classes has rows although the manifest's "
                                     "demographics is 'none'")
        return
    if not _class_columns(conn, release.schema, settings.grid, result):
        return
    _derive_class_inputs(conn, release, settings, classes, assignment_available)
    n_attributes = len(settings.grid)
    rows = fetch_columns(conn, "groups/verify/class_faults.sql",
                         {"n_attributes": n_attributes}, classes=classes, groups=tables["groups"])
    faults: dict[str, list[str]] = defaultdict(list)
    for fault, group, class_id in zip(rows["fault"], rows["group_id"], rows["class_id"],
                                      strict=True):
        faults[fault].append(f"group {group} class {class_id}")
    texts = {"unknown_group": "the class's group is not published",
             "missing_bound": "a bound is missing",
             "off_grid": "a bound is not on the public atomic grid (§4.4.3)",
             "empty": "a box with lo not below hi",
             "overlapping": "boxes of two classes of the group intersect"}
    for fault, text in texts.items():
        _report(result, f"classes_{fault}", faults[fault], text)
    _check_class_support(conn, release, settings, classes, counts, result)
    if "tg_published_class_members" in private:
        _check_class_members(conn, release, settings, classes,
                             private["tg_published_class_members"], counts, result)
    else:
        result.checks["class_members"] = NOT_AVAILABLE


def _class_columns(conn: psycopg.Connection, schema: str, grid: tuple[Attribute, ...],
                   result: VerifierResult) -> bool:
    columns = set(fetch_columns(conn, "groups/verify/class_columns.sql",
                                {"schema": schema})["column_name"])
    missing = [f"{a.name}_{side}" for a in grid for side in ("lo", "hi")
               if f"{a.name}_{side}" not in columns]
    if missing:
        result.violations.append(f"demographic_classes lacks the bound columns "
                                 f"{', '.join(missing)} of the manifest's demographic_grid")
    return not missing


def _derive_class_inputs(conn: psycopg.Connection, release: ReleaseUnderTest,
                         settings: Settings, classes: Table, assignment_available: bool) -> None:
    """Temporary tables: values, atomic edges, boxes, and the persons of every group."""
    grid = settings.grid
    names = [a.name for a in grid]
    run_sql_file(conn, "groups/verify/person_values.sql",
                 {"dataset_id": release.dataset_id, "attributes": names})
    run_sql_file(conn, "groups/verify/edges.sql", {
        "attributes": names, "lowers": [a.lower for a in grid],
        "uppers": [a.upper for a in grid], "bins": [a.bins for a in grid]})
    run_sql_file(conn, "groups/verify/class_boxes.sql", {"attributes": names}, classes=classes)
    assigned = settings.nonoverlapping and assignment_available
    run_sql_file(conn, "groups/verify/persons_assigned.sql" if assigned
                 else "groups/verify/persons_occurring.sql")


def _check_class_support(conn: psycopg.Connection, release: ReleaseUnderTest,
                         settings: Settings, classes: Table, counts: ItemCounts,
                         result: VerifierResult) -> None:
    """At least k persons of the group inside every box, and the classes' intervals."""
    k, d = release.k, len(settings.grid)
    rows = fetch_columns(conn, "groups/verify/class_support.sql", {"n_attributes": d},
                         classes=classes)
    thin: list[str] = []
    bad: list[str] = []
    total: dict[int, int] = defaultdict(int)
    for i, group in enumerate(rows["group_id"]):
        name = f"group {group} class {rows['class_id'][i]}"
        if counts.record("class_inside", (group, rows["class_id"][i]), rows["inside"][i]) < k:
            thin.append(name)
        bad += [f"{name}: {f}" for f in interval_faults(rows["n_lo"][i], rows["n_hi"][i], k,
                                                         settings.interval)]
        total[group] += rows["n_lo"][i] or 0
    persons = dict(zip(rows["group_id"], rows["group_persons"], strict=True))
    _report(result, "classes_inside_box_below_k", thin,
            f"fewer than k={k} persons of the group inside its box")
    _report(result, "classes_bad_interval", bad, "interval filter (§4.2)")
    _report(result, "classes_counts_exceed_group",
            [f"group {g}" for g, n in total.items() if n > persons[g]],
            "its classes' n_lo add up to more persons than the group has")


def _check_class_members(conn: psycopg.Connection, release: ReleaseUnderTest,
                         settings: Settings, classes: Table, members: Table, counts: ItemCounts,
                         result: VerifierResult) -> None:
    k = release.k
    rows = fetch_columns(conn, "groups/verify/class_members.sql",
                         {"n_attributes": len(settings.grid)}, classes=classes, members=members)
    result.checks["class_members"] = "checked"
    names = [f"group {g} class {c}" for g, c in zip(rows["group_id"], rows["class_id"],
                                                    strict=True)]
    published = rows["published"]
    _report(result, "class_members_unpublished",
            [n for n, p in zip(names, published, strict=True) if not p],
            "members of a class that is not published")
    for group, class_id, shown, members_n in zip(rows["group_id"], rows["class_id"], published,
                                                 rows["members"], strict=True):
        if shown:
            counts.record("class_members", (group, class_id), members_n)
    _report(result, "classes_members_below_k",
            [f"group {g} class {c}" for g, c in counts.below("class_members", k)],
            f"fewer than k={k} distinct members")
    for column, text in (("outside_group", "members that are not persons of the group"),
                         ("in_two_classes", "members of two classes of the group"),
                         ("missing_value", "members without a value of some attribute")):
        _report(result, f"class_members_{column}",
                [f"{n} ({v})" for n, v in zip(names, rows[column], strict=True) if v], text)
    _report(result, "classes_members_outside_interval",
            [n for n, p, m, lo, hi in zip(names, published, rows["members"], rows["n_lo"],
                                          rows["n_hi"], strict=True)
             if p and not lo <= m <= hi], "its number of members is outside [n_lo, n_hi]")
    _check_hiding(conn, release, members, result)


def _check_hiding(conn: psycopg.Connection, release: ReleaseUnderTest, members: Table,
                  result: VerifierResult) -> None:
    rows = fetch_columns(conn, "groups/verify/class_hiding.sql",
                         {"m": math.ceil(release.k / 2)}, members=members)
    _report(result, "classes_bounds_not_hidden",
            [f"group {g} class {c} {attr} [{lo:g}, {hi:g}) instead of [{elo:g}, {ehi:g})"
             for g, c, attr, lo, hi, elo, ehi in zip(
                 rows["group_id"], rows["class_id"], rows["attr"], rows["lo"], rows["hi"],
                 rows["expected_lo"], rows["expected_hi"], strict=True)],
            "bounds are not hidden as §4.4.5 says (means of the ceil(k/2) lowest and highest "
            "member values, moved out to the atomic grid)")


# --------------------------------------------------------------------------- entry point


def verify_groups_release(conn: psycopg.Connection, schema: str) -> VerifierResult:
    """Check the privacy model of the trajectory-groups release (or build) schema ``schema``.

    Parameters
    ----------
    conn : psycopg.Connection
    schema : str
        A release or build schema with manifest, metrics, places, groups, od_groups and
        demographic_classes. A build schema's work schema (``build_`` -> ``work_``) is read
        for the private assignment and members when it still exists.

    Returns
    -------
    VerifierResult
        Passed when the shared rules hold and places, groups, the assignment, origin /
        destination groups and demographic classes satisfy the model (module docstring).

    References
    ----------
    Nordström, M. Methods for Anonymizing Patterns of Human Mobility. MSc thesis, Chalmers,
    2012: §3.2 (trajectory groups), §4.1 (k distinct individuals), §4.2 (interval filter),
    §4.3 (overlapping and nonoverlapping anonymizers, origin-destination groups), §4.4.5
    (boundary hiding), §4.5.1 (interval size).
    """
    release = _groups_release(conn, schema)
    result = VerifierResult(schema, release.k)
    settings = _settings(conn, release, result)
    if settings is None or not check_shared_rules(conn, release, settings.lattice_m, result):
        return result
    _check_model(conn, release, settings, ItemCounts(), result)
    return result


def recount_items(conn: psycopg.Connection, schema: str) -> tuple[VerifierResult, ItemCounts]:
    """The persons this verifier counts for every published item of ``schema``
    (:class:`ItemCounts`, what :func:`verify_groups_release` holds to k), for a comparison
    with the anonymizer's own counts, and the result of the model's checks. The machinery's
    shared rules are not checked (they read the metrics, which a release built up to its
    manifest does not have yet); no counts when the manifest's parameters cannot be read."""
    release = _groups_release(conn, schema)
    result = VerifierResult(schema, release.k)
    counts = ItemCounts()
    settings = _settings(conn, release, result)
    if settings is not None:
        _check_model(conn, release, settings, counts, result)
    return result, counts


def _groups_release(conn: psycopg.Connection, schema: str) -> ReleaseUnderTest:
    release = read_release(conn, schema)
    method = release.manifest["method"]
    if method not in METHODS or METHODS[method].family != "groups":
        raise InputError(f"{schema} is a {release.manifest['method']} release, not a "
                         "trajectory-groups one")
    return release


def _check_model(conn: psycopg.Connection, release: ReleaseUnderTest, settings: Settings,
                 counts: ItemCounts, result: VerifierResult) -> None:
    """Nordström's model (module docstring), every item's persons recorded in ``counts``."""
    schema = release.schema
    tables = _release_tables(conn, schema)
    private = _private_tables(conn, schema, result)
    result.checks["places_mode"] = settings.places
    _check_interval_size(release, settings, result)
    with conn.transaction():  # the temporary tables live until its commit
        _derive_visits(conn, release, settings)
        tables = _place_sequences(conn, tables, result)
        _check_places(conn, release, tables, result)
        run_sql_file(conn, "groups/verify/occurrences.sql", groups=tables["groups"])
        assigned = _check_assignment(conn, release, settings, tables, private, counts, result)
        _check_groups(conn, release, settings, tables, assigned, counts, result)
        _check_od_groups(conn, release, settings, tables, private, counts, result)
        _check_classes(conn, release, settings, tables, private, assigned is not None, counts,
                       result)


# The name every family verifier exports (anonymizers.verifiers.verify_release dispatches).
verify_release = verify_groups_release
