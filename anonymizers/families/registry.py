"""The registry of method families: which methods exist, their family, parameters and steps.

Plain data, cheap to import (the DAG files, the CLI's help and validation read it at
parse time): a family's code (algorithms, SQL steps, metrics) and its verifier are named
by module path and imported only when a task runs. A new family is one entry here, one
package under ``anonymizers/families/``, one folder under ``sql/``, one verifier and one
DAG file of a few lines; nothing else in the shared machinery changes.
"""

from __future__ import annotations

from dataclasses import dataclass

from anonymizers.errors import InputError
from anonymizers.release.params import ParamSpec
from anonymizers.release.risks import RISKS

__all__ = [
    "FAMILIES",
    "MACHINERY_PARAMS",
    "METHODS",
    "RUN_PARAMS",
    "SHARED_STEPS_AFTER",
    "WINDOWS_PARAMS",
    "FamilyEntry",
    "MethodEntry",
    "family_params",
    "method_entry",
]


@dataclass(frozen=True)
class MethodEntry:
    """One method: its family, what variant of the family it is, its parameters and steps."""

    name: str
    family: str
    variant: str
    params: tuple[ParamSpec, ...]
    steps: tuple[str, ...]  # the family's steps this method runs, in order


@dataclass(frozen=True)
class FamilyEntry:
    """One family: its paper, privacy model, step order, code and verifier (module paths)."""

    name: str
    title: str
    privacy_model: str  # may use {k}
    steps: tuple[str, ...]  # every step of the family, in DAG order
    module: str  # the family's plug-in (anonymizers.families.base.Family subclass)
    verifier: str  # module with verify_release(conn, schema); never imports the family
    # Module with attack_input(conn, schema): the release as the attack suite sees it
    # (anonymizers.attacks.adapters); None while the family has none.
    attack: str | None = None
    published_unit: str = "trajectories"  # what manifest.trajectories_out counts
    tags: tuple[str, ...] = ()
    # Inputs besides the window's fixes that decide the release (e.g. the QID set): a
    # parameter name and the SQL file (params: dataset_id) whose one value digests them;
    # the gate records the keyed fingerprint of that digest as the parameter, so the
    # release's identity changes with them and the manifest says which were used.
    keyed_inputs: tuple[tuple[str, str], ...] = ()


# --------------------------------------------------------------------------- shared


# What every release run is given (the DAG's own params): not part of a method.
RUN_PARAMS: tuple[ParamSpec, ...] = (
    ParamSpec("dataset", str, "demo", "Dataset name (raw.datasets)"),
    ParamSpec("k", int, 5, "Anonymity threshold: distinct persons behind every published item",
              minimum=2),
    ParamSpec("start", str, None, "Window start, ISO-8601 (default: the data interval of a "
              "scheduled run, else the start of the data)", nullable=True),
    ParamSpec("end", str, None, "Window end, exclusive", nullable=True),
    ParamSpec("srid", int, None, "Metric CRS of the release (default: the UTM zone of the "
              "data)", nullable=True, minimum=1),
    *(ParamSpec(risk.param, str, None, f"Reason to publish although {risk.accepts} "
                "(recorded in the manifest and the catalog)", nullable=True)
      for risk in RISKS),
)

# Parameters of the shared machinery, recorded with the method's (privacy rules 3-4).
MACHINERY_PARAMS: tuple[ParamSpec, ...] = (
    ParamSpec("count_interval", int, None,
              "Interval filter size I_s of published counts (seed 004 §4.2; default k; "
              "1 = exact counts)", minimum=1, nullable=True),
    ParamSpec("min_window_hours", float, 1.0,
              "Shortest window; below 1 h needs accept_composition_risk",
              minimum=0, exclusive_minimum=True),
    ParamSpec("comparison", str, None,
              "Id of the `anonymizers compare` run this release belongs to: published for "
              "the data owner's comparison only, analyst cannot read it", nullable=True),
)

# Parameters of a windows run (DAG ``<family>_windows``) on top of the family's: start and
# end are required there, and [start, end) is cut into windows of ``window_hours``.
WINDOWS_PARAMS: tuple[ParamSpec, ...] = (
    ParamSpec("window_hours", float, 24.0,
              "Length of each window of a windows run, hours (at least min_window_hours; "
              "one release per window)", minimum=0, exclusive_minimum=True),
)

# Steps of the shared machinery after the family's steps (prepare comes first).
SHARED_STEPS_AFTER: tuple[str, ...] = ("manifest", "metrics", "verify", "publish", "cleanup")


# --------------------------------------------------------------------------- generalization


def _positive(name: str, default: float, help_text: str) -> ParamSpec:
    return ParamSpec(name, float, default, help_text, minimum=0, exclusive_minimum=True)


def _lattice(name: str, default: float, help_text: str) -> ParamSpec:
    """A length in metres that sets a published precision (privacy rule 7: its floor)."""
    return ParamSpec(name, float, default, help_text, minimum=0, exclusive_minimum=True,
                     precision=True)


_PREFIX_TREE = (
    ParamSpec("min_continuations", int, 1,
              "Cut published prefixes with fewer distinct continuations, which tell where "
              "their travellers went next (1 = off)", minimum=1),
)
_TESSELLATION = (
    _positive("radius", 500.0, "Desired cluster radius r, metres (seed 000 §6.1)"),
    ParamSpec("min_angle", float, 45.0, "Significant turn, degrees", minimum=0,
              exclusive_minimum=True, maximum=180),
    _positive("min_stop_duration", 300.0, "Significant stop, seconds"),
    _positive("stop_radius", 100.0, "Moves below this many metres count as staying"),
    _positive("max_distance", 1000.0, "Characteristic points at most this far apart, metres"),
    ParamSpec("max_displacement", float, 1000.0,
              "MaxDisplacement of a merged area, metres (0: no limit)", minimum=0),
    ParamSpec("max_iterations", int, 50, "Steps of progressive generalization (Algorithm 3)",
              minimum=1),
    _lattice("snap", 50.0, "Lattice (m) of generators and the clip box (privacy rule 2)"),
)
_GRID_STEPS = ("project", "grid_membership", "visits_and_flows", "anonymize", "build_release")
_VORONOI_STEPS = ("project", "characteristic_points", "cluster", "voronoi",
                  "progressive_generalization", "anonymize", "build_release")

_GENERALIZATION_METHODS = (
    MethodEntry("grid_kam_cut", "generalization", "fixed square grid + KAM_CUT (baseline)",
                (_lattice("cell_size", 1000.0, "Grid cell size, metres"), *_PREFIX_TREE),
                _GRID_STEPS),
    MethodEntry("kam_cut", "generalization",
                "data-driven Voronoi cells + progressive generalization + KAM_CUT (Alg. 4)",
                (*_TESSELLATION, *_PREFIX_TREE), _VORONOI_STEPS),
    MethodEntry("kam_rec", "generalization",
                "data-driven Voronoi cells + progressive generalization + KAM_REC (Alg. 5-6)",
                (*_TESSELLATION, *_PREFIX_TREE,
                 ParamSpec("p", float, 0.4, "Share of a trajectory a recovery must keep",
                           minimum=0, exclusive_minimum=True, maximum=1),
                 ParamSpec("lcs_candidates", int, 32,
                           "Sequences ClosestLCS compares a cut trajectory with (more: longer "
                           "recoveries, more time)", minimum=1)),
                _VORONOI_STEPS),
)

_GENERALIZATION = FamilyEntry(
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
    module="anonymizers.families.generalization.family",
    verifier="anonymizers.verifiers.generalization",
    attack="anonymizers.attacks.adapters.generalization",
    tags=("seed-000",),
)


# --------------------------------------------------------------------------- mob

_MOB_PARAMS = (
    _lattice("cell_size", 100.0, "Grid cell size, metres (positions are cells; regions are "
              "rectangles of cells)"),
    ParamSpec("interval", int, 300, "Seconds between time points (from the window start); a "
              "position is the last fix at or before a time point (seed 003 §6.1)", minimum=1),
    ParamSpec("position_scope", str, "trajectory", "Whose last fix is a person's position at a "
              "time point: of a trajectory running then (trajectory) or of the person, up to "
              "the window's end (person)", choices=("trajectory", "person")),
    ParamSpec("position_lookback", int, None, "Oldest fix, seconds before a time point, that "
              "may still be the position there (empty: no limit)", minimum=1, nullable=True),
    ParamSpec("outside_qids", str, "hiding_set", "What an object's position is at a time point "
              "outside every quasi-identifier: the smallest cell rectangle of its cover group "
              "(hiding set and class mates) there, at least k persons (hiding_set), a cell "
              "of the coarse lattice "
              "(coarse), no location (withheld: the CRS's area of use), or its own cell, as "
              "in the paper (cell: re-identifiable from a few positions, the release needs "
              "accept_attack_risk)", choices=("hiding_set", "coarse", "withheld", "cell")),
    _lattice("coarse_cell_size", 1000.0, "Side (m) of the coarse lattice of outside_qids="
             "coarse, a multiple of cell_size"),
    ParamSpec("presence", str, "hidden", "Which time points an object has a region at: every "
              "one, the area of use where its person has no position (hidden), or only those "
              "where its person has one, as in the paper (published: when a person was "
              "observed identifies them, the release needs accept_attack_risk)",
              choices=("hidden", "published")),
)
_MOB_STEPS = ("prepare_objects", "anonymize_objects", "build_objects")

_MOB = FamilyEntry(
    name="mob",
    title="Moving objects with personal quasi-identifiers (seed 003: Yarovoy et al., 2009)",
    privacy_model=(
        "k-anonymous moving objects (seed 003 Definition 3): in the attack graph built from "
        "the published regions, the stored quasi-identifiers (the times an attacker may know "
        "of each person) and the persons' true cells, every person has at least k candidate "
        "objects and the graph is symmetric, so the matching attacker of Definition 2 "
        "re-identifies nobody (Theorem 1); at other times an object's region follows "
        "outside_qids, and with presence hidden every object has one at every time point"),
    steps=_MOB_STEPS,
    module="anonymizers.families.mob.family",
    verifier="anonymizers.verifiers.mob",
    attack="anonymizers.attacks.adapters.mob",
    published_unit="objects",
    tags=("seed-003",),
    keyed_inputs=(("qid_fingerprint", "mob/005_qid_digest.sql"),),
)
_MOB_METHODS = (
    MethodEntry("mob_extreme_union", "mob",
                "Extreme Union (Algorithm 2): each group generalized over the union of its QIDs",
                _MOB_PARAMS, _MOB_STEPS),
    MethodEntry("mob_symmetric", "mob",
                "Symmetric Anonymization (Algorithm 3): hiding sets made symmetric",
                _MOB_PARAMS, _MOB_STEPS),
)


# --------------------------------------------------------------------------- clustering

_CLUSTERING_STEPS = ("prepare_fixes", "cluster_pieces", "build_groups", "align_clusters",
                     "build_aligned_groups")
_TCAA_STEPS = ("prepare_fixes", "cluster_pieces", "build_groups")
_MLA_STEPS = ("prepare_fixes", "align_clusters", "build_aligned_groups")

_CLUSTERING = FamilyEntry(
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
    steps=_CLUSTERING_STEPS,
    module="anonymizers.families.clustering.family",
    verifier="anonymizers.verifiers.clustering",
    attack="anonymizers.attacks.adapters.clustering",
    published_unit="groups",
    tags=("seed-002",),
)
_MLA_PARAMS = (
    _lattice("epsilon", 50.0, "Side (m) of the grid cells, the leaves of the x and y "
             "hierarchies (seed 001's ε; its experiments' 10 m is below the precision floor "
             "and needs accept_precision_risk)"),
    ParamSpec("time_bin", int, 3600, "Seconds of a time bin, the leaves of the time hierarchy "
              "(from the window start; the paper's hours)", minimum=1),
    ParamSpec("coverage", float, 0.99, "Share of the fixes, central on each axis, the grid "
              "must hold (a block of the fixed lattice); fixes outside it, such as GPS "
              "outliers, are suppressed (1 = every fix)", minimum=0, maximum=1,
              exclusive_minimum=True),
)
_CLUSTERING_METHODS = (
    MethodEntry("tcaa", "clustering",
                "TCAA (Algorithms 1-4): synchronized pieces clustered by distance and "
                "direction similarity, each group generalized to per-time rectangles",
                (ParamSpec("interval", int, 300, "Seconds between synchronized time points "
                           "(from the window start)", minimum=1),
                 ParamSpec("slice_seconds", int, 3600, "Length of the time slices trajectories "
                           "are synchronized and clustered in (a multiple of interval)",
                           minimum=1),
                 ParamSpec("lam", float, 0.6, "Weight of direction similarity SimO against "
                           "distance similarity SimD (eq. 6; the paper's experiments use 0.6)",
                           minimum=0, maximum=1),
                 ParamSpec("alpha", float, 0.8, "Density-distance weight of the initial seed "
                           "selection (the paper's 0.8)", minimum=0, maximum=1),
                 _lattice("snap", 50.0, "Lattice (m) the group rectangles are snapped "
                          "outward to (privacy rule 2)")),
                _TCAA_STEPS),
    *(MethodEntry(name, "clustering", description, _MLA_PARAMS, _MLA_STEPS)
      for name, description in (
          ("mla_heuristic",
           "MLA with heuristic clustering (seed 001 Algorithms 2-3): clusters grown by least "
           "alignment loss, aligned, each column generalized on the grid's hierarchies"),
          ("mla_kmeans",
           "MLA with k'-means on the <d_x, d_y, d_t> vectors (seed 001 §4.3.2); clusters "
           "below k persons merged or suppressed"),
          ("mla_iterative_kmeans",
           "MLA with iterative k'-means (seed 001 Algorithm 4): clusters of k persons kept, "
           "the rest re-clustered"))),
)


# --------------------------------------------------------------------------- groups

_GROUPS_STEPS = ("map_places", "group_trajectories", "demographic_classes", "build_places_release")
_GROUPS = FamilyEntry(
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
    steps=_GROUPS_STEPS,
    module="anonymizers.families.groups.family",
    verifier="anonymizers.verifiers.groups",
    attack="anonymizers.attacks.adapters.groups",
    published_unit="groups",
    tags=("seed-004",),
)
_GROUPS_COMMON = (
    ParamSpec("places", str, "auto", "What a place is: 'dataset' (the places file the "
              "dataset was loaded with), 'grid' (cells of a fixed grid of cell_size metres), "
              "'voronoi' (the cells of the published generalization release places_release), "
              "'auto' (dataset if it has places, else grid)",
              choices=("auto", "dataset", "grid", "voronoi")),
    ParamSpec("places_release", str, None, "With places=voronoi: the published "
              "generalization release (kam_cut, kam_rec, grid_kam_cut) whose cells are the "
              "places", nullable=True),
    _lattice("cell_size", 500.0, "Side (m) of the grid cells when places=grid"),
    ParamSpec("interval_size", int, None, "Interval filter size I_s of the groups' and "
              "classes' counts (seed 004 §4.2; default k; tg_overlapping needs at least "
              "ceil(k/2), and k with demographic classes, §4.5.1)", minimum=1, nullable=True),
    ParamSpec("demographics", str, "auto", "Demographic classes per group: 'ga' (the "
              "thesis' genetic algorithm, §4.4.4), 'mondrian' (strict Mondrian, the baseline "
              "of §5.2), 'none', or 'auto' (ga when at least k persons of the dataset carry "
              "every attribute of demographic_grid, else none; the manifest records which)",
              choices=("auto", "ga", "mondrian", "none")),
    ParamSpec("demographic_grid", str, "age:0:120:24",
              "The public atomic grid of the demographic attributes, attribute:lower:upper:"
              "bins, comma-separated (§4.4.3; default: ages in five-year intervals). "
              "Attributes are raw.persons columns (age, income) or keys of its attributes"),
    ParamSpec("seed", int, 0, "Seed of the random choices (moved trajectories, GA)",
              minimum=0),
)
_GROUPS_METHODS = (
    MethodEntry("tg_overlapping", "groups",
                "Overlapping trajectory anonymizer (Algorithms 1-3): every contiguous "
                "subsequence travelled by at least k persons, counts through the interval "
                "filter", _GROUPS_COMMON, _GROUPS_STEPS),
    MethodEntry("tg_nonoverlapping", "groups",
                "Nonoverlapping trajectory anonymizer (Algorithms 4-5, score n l^2): no part "
                "of a trajectory counted twice; optional origin-destination groups (§4.3.3)",
                (*_GROUPS_COMMON,
                 ParamSpec("od_groups", str, "true", "Publish common origin and destination "
                           "groups (§4.3.3)", choices=("true", "false"))),
                _GROUPS_STEPS),
)


# --------------------------------------------------------------------------- the registry


FAMILIES: dict[str, FamilyEntry] = {
    entry.name: entry for entry in (_GENERALIZATION, _MOB, _CLUSTERING, _GROUPS)}
METHODS: dict[str, MethodEntry] = {
    method.name: method
    for method in (*_GENERALIZATION_METHODS, *_MOB_METHODS, *_CLUSTERING_METHODS,
                   *_GROUPS_METHODS)}


def method_entry(method: str) -> MethodEntry:
    """The registry entry of ``method``; InputError naming the choices if there is none."""
    try:
        return METHODS[method]
    except KeyError:
        raise InputError(f"unknown method {method!r}; choose one of "
                         f"{', '.join(sorted(METHODS))}") from None


def family_params(family: str) -> tuple[ParamSpec, ...]:
    """Every method parameter of ``family`` once (a name means the same in all its methods)."""
    seen: dict[str, ParamSpec] = {}
    for method in METHODS.values():
        if method.family != family:
            continue
        for spec in method.params:
            if seen.setdefault(spec.name, spec) != spec:
                raise InputError(f"family {family}: parameter {spec.name} is declared twice "
                                 "with different meanings")  # a registry bug, caught by tests
    return tuple(seen.values())
