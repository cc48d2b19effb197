"""Verify a MOB release (mob_symmetric, mob_extreme_union; seed 003) from its tables and raw data.

It reads only the release (or build) schema under test, the ledger, ``raw.points``,
``raw.qids`` and ``raw.datasets``; it never imports the MOB anonymizer nor runs its SQL.
First the machinery's shared rules (:mod:`anonymizers.verifiers.base`), then the model of
Yarovoy et al. (EDBT 2009):

1. every published region is a rectangle of whole grid cells at a time point of the
   release's grid (no coordinate off the lattice: privacy rule 2);
2. every object is the distorted version of one person that "never lies" (§3): the
   verifier re-derives each person's cell at each time point itself, by the position rule
   the manifest records (position_scope, position_lookback;
   sql/mob/verify/person_cells.sql), and pairs persons with the objects that contain
   their cell every time they have one (a maximum matching of that "full match" graph).
   By the manifest's ``presence`` rule, an object is also present exactly when its person
   is (``published``, the paper's), or has a region at every time point of the grid
   (``hidden``: a missing row is a violation, it would tell when a person was observed;
   releases without the parameter published presence). An object nobody matches is a
   violation; the persons nobody matches are the suppressed ones;
3. the attack graph of Definition 1 over the published persons (the attacker is assumed
   to know exactly who was published: the worst case) and the objects;
4. Definition 3: every person adjacent to at least k objects (k distinct persons, as the
   objects are one per person), and to at least k in the symmetric core of the graph
   w.r.t. the counterparts of 2 (the edges whose mirror is an edge: Definition 3(ii) holds
   on the core; edges outside it only add candidates, see ``_check_definition_3``);
5. the attacker of Definition 2: after removing every edge in no perfect matching, every
   person keeps at least k candidate objects and every object at least k candidate
   persons (Theorem 1 on the core says 4 implies 5; both are checked, 5 on the whole graph).

Counts of persons in the result's checks go through the interval filter (they end up in
the published manifest: privacy rule 5).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import numpy as np
import psycopg
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
from psycopg import sql

from anonymizers.db.sqlfiles import compose_sql, fetch_columns
from anonymizers.errors import InputError, ReleaseError
from anonymizers.families.mob.declaration import MobParams
from anonymizers.families.mob.verifier_attack_graph import (
    AttackGraph,
    Cells,
    Pruning,
    RegionIndex,
    Regions,
    asymmetric_edges,
    attack_edges,
    certifying_matching,
    covering_edges,
    degree_shortfalls,
    full_match_edges,
    maximum_matching,
    prune_unmatchable,
    symmetric_degree,
)
from anonymizers.families.registry import METHODS
from anonymizers.release.spec import area_of_use
from anonymizers.verifiers.base import (
    ReleaseUnderTest,
    VerifierResult,
    check_shared_rules,
    interval_count,
    read_release,
)

__all__ = ["AttackCounts", "MobCounts", "MobView", "attack_counts", "count_mob_release",
           "derive_mob_view", "verify_mob_release", "verify_release"]

# The parameters without which a manifest declares no grid to check (the others have the
# declaration's defaults when a manifest lacks them).
GRID_PARAMETERS = ("cell_size", "interval")
# Fault bits of sql/mob/verify/regions.sql, and what a row with each one is.
REGION_FAULTS = {
    1: ("unknown_object", "rows of objects that are not in objects"),
    2: ("empty_region", "rows without a region"),
    4: ("off_time_grid", "times off the release's time grid or outside its window"),
    8: ("wrong_srid", "regions in another SRID than the manifest's"),
    16: ("not_rectangle", "regions that are not axis-parallel rectangles"),
    32: ("off_cell_lattice", "regions whose edges are not on the cell lattice (an edge there "
                             "may be one person's coordinate, privacy rule 2)"),
}


@dataclass(frozen=True)
class TimeGrid:
    """The release's cells and time points, from its manifest."""

    cell_size: float
    interval_s: float
    window_start: datetime
    window_end: datetime
    srid: int
    position_scope: str = "trajectory"
    position_lookback_s: int | None = None
    presence_hidden: bool = False

    @property
    def n_times(self) -> int:
        span = (self.window_end - self.window_start) // timedelta(microseconds=1)
        step = round(self.interval_s * 1e6)
        return -(-span // step)

    def params(self) -> dict[str, Any]:
        return {"cell_size": self.cell_size, "interval_s": self.interval_s,
                "window_start": self.window_start, "window_end": self.window_end,
                "srid": self.srid, "position_scope": self.position_scope,
                "position_lookback_s": self.position_lookback_s}


def _time_grid(release: ReleaseUnderTest, result: VerifierResult) -> TimeGrid | None:
    """The grid the manifest declares, or None (a violation) when it declares none or its
    parameters are not the family's (:class:`~anonymizers.families.mob.declaration.MobParams`,
    read from the declaration, never from the anonymizer)."""
    missing = [name for name in GRID_PARAMETERS if name not in release.parameters]
    if missing:
        result.violations.append(f"the manifest's parameters do not declare the release's "
                                 f"{' and '.join(missing)}: its grid cannot be checked")
        return None
    try:
        params = MobParams.of(release.parameters)
    except InputError as error:
        result.violations.append(f"the manifest's parameters cannot be checked: {error}")
        return None
    manifest = release.manifest
    return TimeGrid(params.cell_size, params.interval, manifest["window_start"],
                    manifest["window_end"], int(manifest["srid"]), params.position_scope,
                    params.position_lookback, presence_hidden=params.presence == "hidden")


# --------------------------------------------------------------------------- reading


def _read_csv(conn: psycopg.Connection, name: str, params: dict[str, Any],
              columns: dict[str, pa.DataType], **identifiers: str | tuple[str, ...]
              ) -> pa.Table:
    """The CSV with a header that ``COPY ... TO STDOUT`` of ``sql/<name>`` writes, as an
    Arrow table of ``columns`` (name: type), read by name, never by position.

    The rows go straight into one buffer (sqlfiles.copy_out keeps each of them as its own
    bytes object first: 0.9 GB more at 13 million rows).
    """
    buffer = bytearray()
    with conn.cursor().copy(compose_sql(name, **identifiers), params) as copy:
        for data in copy:
            buffer += data
    header = bytes(buffer[:buffer.find(b"\n")]).decode().split(",")
    if sorted(header) != sorted(columns):
        raise ReleaseError(f"sql/{name} writes the columns {header}, not {list(columns)}: "
                           "the file and the verifier disagree")
    if buffer.count(b"\n") <= 1:  # no rows (e.g. a dataset without QIDs)
        return pa.table({column: pa.array([], type=kind) for column, kind in columns.items()})
    return pacsv.read_csv(pa.py_buffer(buffer),
                          convert_options=pacsv.ConvertOptions(column_types=columns))


def _exists(conn: psycopg.Connection, schema: str, table: str) -> bool:
    found = fetch_columns(conn, "mob/verify/table_exists.sql",
                          {"relation": sql.Identifier(schema, table).as_string(conn)})
    return bool(found["found"][0])


def _object_ids(conn: psycopg.Connection, schema: str) -> list[str]:
    for table in ("objects", "positions"):
        if not _exists(conn, schema, table):
            raise InputError(f"{schema} has no {table} table: not a MOB release")
    return fetch_columns(conn, "mob/verify/objects.sql",
                         objects=(schema, "objects"))["object_id"]


def _read_regions(conn: psycopg.Connection, release: ReleaseUnderTest, grid: TimeGrid,
                  n_objects: int, result: VerifierResult) -> Regions:
    """Published regions as cell rectangles, each fault reported: every row of positions
    must be a whole-cell rectangle of a known object at a grid time, once per (object,
    time). Faulty rows stand for what they cover: the outward lattice rectangle of an
    off-lattice region; repeats, unknown objects and times outside the window go."""
    names = ["n", "i", "x0", "y0", "x1", "y1", "faults"]
    table = _read_csv(conn, "mob/verify/regions.sql", grid.params(),
                      dict.fromkeys(names, pa.int64()),
                      objects=(release.schema, "objects"), positions=(release.schema, "positions"))
    columns = {name: table[name].to_numpy() for name in names}
    del table
    obj, t = columns["n"], columns["i"]
    for bit, (name, what) in REGION_FAULTS.items():
        count = int(np.count_nonzero(columns["faults"] & bit))
        result.checks[f"positions_{name}"] = count
        if count:
            result.violations.append(f"positions holds {count} {what}")
    usable = (t >= 0) & (t < grid.n_times) & (obj >= 0) & (columns["faults"] & 2 == 0)
    key = obj[usable] * grid.n_times + t[usable]
    order = np.argsort(key, kind="stable")
    first = order[np.r_[True, key[order][1:] != key[order][:-1]]] if len(key) else order
    repeated = len(key) - len(first)
    result.checks["positions_repeated_object_time"] = repeated
    if repeated:
        result.violations.append(f"positions holds {repeated} more regions of an object at a "
                                 "time point than one")
    keep = np.flatnonzero(usable)[first]
    if grid.presence_hidden:
        _check_every_time_point(n_objects * grid.n_times - len(keep), result)
    return Regions.build(n_objects, grid.n_times, obj[keep], t[keep], columns["x0"][keep],
                         columns["y0"][keep], columns["x1"][keep], columns["y1"][keep])


def _check_every_time_point(missing: int, result: VerifierResult) -> None:
    """With presence hidden, every object has a region at every time point of the grid."""
    result.checks["positions_missing_object_time"] = missing
    if missing:
        result.violations.append(
            f"positions lacks {missing} (object, time point) regions, but the manifest's "
            "presence is hidden: every object must have one at every time point of the "
            "grid (a missing one tells when its person was observed)")


def _read_persons(conn: psycopg.Connection, release: ReleaseUnderTest,
                  grid: TimeGrid) -> tuple[Cells, np.ndarray, np.ndarray, list[str]]:
    """The verifier's cells of every person at every time point, the QID points (person,
    time point) of the persons that have a position in the window, and each person's raw
    user id (never published: :func:`count_mob_release` names persons by it)."""
    if not _exists(conn, "raw", "qids"):
        raise InputError("raw.qids does not exist: apply sql/schema/030_qids.sql "
                         "(`anonymizers db up`) and load the QIDs of the dataset")
    params = {**grid.params(), "dataset_id": release.dataset_id, **area_of_use(grid.srid)}
    cells = _read_csv(conn, "mob/verify/person_cells.sql", params,
                      {"user_id": pa.string(), "i": pa.int64(), "cx": pa.int64(),
                       "cy": pa.int64()})
    users = cells["user_id"].combine_chunks().dictionary_encode()
    person = users.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    qids = _read_csv(conn, "mob/verify/qids.sql", params,
                     {"user_id": pa.string(), "i": pa.int64()})
    qid_person = pc.index_in(qids["user_id"], value_set=users.dictionary)
    known = pc.is_valid(qid_person).to_numpy(zero_copy_only=False)
    return (Cells.build(len(users.dictionary), grid.n_times, person, cells["i"].to_numpy(),
                        cells["cx"].to_numpy(), cells["cy"].to_numpy()),
            qid_person.to_numpy(zero_copy_only=False)[known].astype(np.int64),
            qids["i"].to_numpy()[known], users.dictionary.to_pylist())


# --------------------------------------------------------------------------- the model


@dataclass(frozen=True)
class Published:
    """The published persons (I-nodes) and their counterparts: I-node i is the person
    ``persons[i]``, O-node i the object ``objects[i]`` it was matched with; ``full`` is
    the graph of every (person, object) full match they were chosen from."""

    persons: np.ndarray
    objects: np.ndarray
    object_ids: list[str]
    full: AttackGraph

    def name(self, node: int) -> str:
        return self.object_ids[int(self.objects[node])]


def _match_counterparts(cells: Cells, regions: Regions, index: RegionIndex,
                        object_ids: list[str], release: ReleaseUnderTest,
                        result: VerifierResult, presence_hidden: bool) -> Published:
    """Pair persons with objects containing their cell every time they have one (seed 003
    §3: a distorted version never lies) and, with presence published, present exactly
    when they are, by a maximum matching."""
    edges = covering_edges if presence_hidden else full_match_edges
    person, obj = edges(cells, regions, index)
    full = AttackGraph.from_edges(cells.n_persons, regions.n_objects, person, obj)
    match = maximum_matching(full)
    unmatched = np.setdiff1d(np.arange(regions.n_objects), match[match >= 0])
    for o in unmatched.tolist():
        result.violations.append(f"object {object_ids[o]} is no person's distorted version: "
                                 "nobody in the window is inside its region every time "
                                 "they have a position (and, with presence published, "
                                 "present exactly when it is): the release lies")
    published = np.flatnonzero(match >= 0)
    _check_unambiguous(full, match, object_ids, release, result)
    k, width = release.k, release.count_interval
    result.checks["objects"] = regions.n_objects
    result.checks["objects_matching_nobody"] = len(unmatched)
    result.checks["suppressed_persons"] = interval_count(cells.n_persons - len(published),
                                                         k, width)
    ambiguous = int(np.sum(full.person_degree() > 1))
    result.checks["persons_matching_several_objects"] = interval_count(ambiguous, k, width)
    return Published(published, match[published], object_ids, full)


def _check_unambiguous(full: AttackGraph, match: np.ndarray, object_ids: list[str],
                       release: ReleaseUnderTest, result: VerifierResult) -> None:
    """Who was published must follow from the release and the raw data. Once every object
    is matched, a person left out of the matching who is a distorted version of some
    object could replace that object's person in another maximum matching: the release
    reads as well with either published, and Definition 3 cannot be checked for a set of
    persons that is not known (the anonymizer suppresses the objects such a person could
    pass for, ``anonymizers.families.mob.stand_ins``)."""
    left_out = match < 0
    stand_in = left_out[full.person]
    objects = np.unique(full.obj[stand_in])
    for o in objects.tolist():
        result.violations.append(
            f"object {object_ids[o]}: a person who is not published is a distorted version "
            "of it as well (inside its region every time they have a position, present "
            "exactly when it is if presence is published), so who was published cannot be "
            "told from the release")
    result.checks["persons_passing_for_published_objects"] = interval_count(
        int(np.unique(full.person[stand_in]).size), release.k, release.count_interval)


def _attack_graph(cells: Cells, qid_person: np.ndarray, qid_t: np.ndarray, regions: Regions,
                  index: RegionIndex, published: Published) -> AttackGraph:
    """Definition 1 over the published persons and their objects (O-node i is I-node i's
    counterpart, so the identity is a perfect matching). A person without a linkable QID
    point is universal: adjacent to every object, never n edges."""
    rank = np.full(cells.n_persons, -1, dtype=np.int64)
    rank[published.persons] = np.arange(len(published.persons))
    object_rank = np.full(regions.n_objects, -1, dtype=np.int64)
    object_rank[published.objects] = np.arange(len(published.objects))
    mine = rank[qid_person] >= 0
    person, obj, observed = attack_edges(cells, qid_person[mine], qid_t[mine], regions, index)
    keep = (rank[person] >= 0) & (object_rank[obj] >= 0)  # objects matching nobody: reported
    n = len(published.persons)
    return AttackGraph.from_edges(n, n, rank[person[keep]], object_rank[obj[keep]],
                                  ~observed[published.persons])


@dataclass(frozen=True)
class AttackCounts:
    """What the gate counts in an attack graph: I-node i is a published person, O-node i
    the object matched with it.

    Attributes
    ----------
    graph
        The attack graph (Definition 1).
    degree
        Objects adjacent to each person (Definition 3(i)).
    counterparts
        The perfect matching standing for the counterparts (:func:`certifying_matching`
        from the identity, where persons are short in the core under it).
    core
        Each person's degree in the symmetric core w.r.t. ``counterparts`` (Definition
        3(ii) on the core).
    pruning
        What the attacker of Definition 2 leaves: each person's candidate objects, each
        object's candidate persons.
    """

    graph: AttackGraph
    degree: np.ndarray
    counterparts: np.ndarray
    core: np.ndarray
    pruning: Pruning


def attack_counts(graph: AttackGraph, k: int) -> AttackCounts:
    """Degree, symmetric-core degree and the attacker's candidates of every person and
    object of ``graph`` (O-node i matched with I-node i), as the gate checks them with k.

    Definition 3(ii) asks all of G to be symmetric. The paper's own algorithms do not give
    that on real data: a region generalized for one group can hold another person's cell
    at every time of that person's QID, an edge whose mirror nobody made (Theorem 2's
    proof overlooks such edges). They only add candidates, never a perfect matching, so
    the guarantee of Theorem 1 rests on the symmetric core (the edges whose mirror is an
    edge): if it gives every person k objects, nobody can be narrowed below k. Where
    persons fully match several objects, the pairing found first may leave persons short
    in the core while another does not: swaps look for one (:func:`certifying_matching`),
    and the gate fails closed when they find none.
    """
    degree = graph.person_degree()
    counterparts = np.arange(graph.n_persons)
    core = symmetric_degree(graph, counterparts)
    if np.any((core < k) & (degree >= k)):  # another pairing may certify it
        counterparts = certifying_matching(graph, counterparts, k, core=core)
        core = symmetric_degree(graph, counterparts)
    return AttackCounts(graph, degree, counterparts, core,
                        prune_unmatchable(graph, np.arange(graph.n_persons)))


def _check_definition_3(counts: AttackCounts, published: Published,
                        release: ReleaseUnderTest, result: VerifierResult) -> None:
    """Degree >= k in G, and degree >= k in G's symmetric core w.r.t. the counterparts
    (Theorem 1 holds for any perfect matching of G standing for them; see
    :func:`attack_counts`). The asymmetric edges are counted, and the attacker of
    Definition 2 still runs on all of G."""
    k, graph, degree, core = release.k, counts.graph, counts.degree, counts.core
    short = degree_shortfalls(graph, k)
    result.checks["definition_3_degree_below_k"] = len(short)
    for i in short.tolist():
        result.violations.append(f"object {published.name(i)}: its person's QID is satisfied "
                                 f"by only {degree[i]} objects (Definition 3(i), k={k})")
    counterparts = counts.counterparts
    result.checks["definition_3_counterparts_swapped"] = interval_count(
        int(np.count_nonzero(counterparts != np.arange(graph.n_persons))), k,
        release.count_interval)
    result.checks["definition_3_asymmetric_edges"] = interval_count(
        asymmetric_edges(graph, counterparts).size, k, release.count_interval)
    thin = np.flatnonzero((core < k) & (degree >= k))  # the others are reported above
    result.checks["definition_3_symmetric_degree_below_k"] = len(thin)
    for i in thin.tolist():
        result.violations.append(
            f"object {published.name(i)}: its person is hidden by {degree[i]} objects, but "
            f"only {core[i]} of them are hidden by it in turn (Definition 3(ii) on the "
            f"symmetric core, k={k})")


def _first_per_person(person: np.ndarray, obj: np.ndarray) -> list[tuple[int, int]]:
    """One (person, object) example per person (edges come sorted by person)."""
    first = np.r_[True, person[1:] != person[:-1]] if len(person) else np.zeros(0, dtype=bool)
    return list(zip(person[first].tolist(), obj[first].tolist(), strict=True))


def _check_attacker(counts: AttackCounts, published: Published, release: ReleaseUnderTest,
                    result: VerifierResult) -> None:
    """Definition 2's attacker prunes every edge in no perfect matching; nobody may be
    left with fewer than k candidates, on either side."""
    k, pruning = release.k, counts.pruning
    result.checks["attacker_pruned_edges"] = interval_count(
        int((~pruning.kept).sum()), k, release.count_interval)
    few_objects = np.flatnonzero(pruning.person_candidates < k)
    few_persons = np.flatnonzero(pruning.object_candidates < k)
    result.checks["attacker_persons_below_k"] = len(few_objects)
    result.checks["attacker_objects_below_k"] = len(few_persons)
    for i in few_objects.tolist():
        result.violations.append(
            f"object {published.name(i)}: after the attacker of Definition 2 prunes the edges "
            f"in no perfect matching, its person has {pruning.person_candidates[i]} candidate "
            f"objects (k={k})")
    for o in few_persons.tolist():
        result.violations.append(
            f"object {published.name(o)}: after the attacker of Definition 2, it can belong "
            f"to only {pruning.object_candidates[o]} persons (k={k})")


# --------------------------------------------------------------------------- derivation


@dataclass(frozen=True)
class _Derivation:
    """The verifier's derivation of a release: persons' cells (and raw user ids), the
    published regions and their index, the counterparts and the attack graph."""

    cells: Cells
    users: list[str]
    regions: Regions
    index: RegionIndex
    published: Published
    graph: AttackGraph


def _derive(conn: psycopg.Connection, release: ReleaseUnderTest, grid: TimeGrid,
            result: VerifierResult) -> _Derivation:
    """Regions, persons, counterparts and the attack graph; what is wrong on the way goes
    into ``result``."""
    object_ids = _object_ids(conn, release.schema)
    regions = _read_regions(conn, release, grid, len(object_ids), result)
    index = RegionIndex(regions)
    cells, qid_person, qid_t, users = _read_persons(conn, release, grid)
    published = _match_counterparts(cells, regions, index, object_ids, release, result,
                                    grid.presence_hidden)
    graph = _attack_graph(cells, qid_person, qid_t, regions, index, published)
    return _Derivation(cells, users, regions, index, published, graph)


def _derive_schema(conn: psycopg.Connection, schema: str) -> tuple[ReleaseUnderTest,
                                                                      _Derivation]:
    """:func:`_derive` of release ``schema`` (raises InputError if it has no grid)."""
    release = read_release(conn, schema)
    result = VerifierResult(schema, release.k)
    grid = _time_grid(release, result)
    if grid is None:
        raise InputError(f"{schema}: {'; '.join(result.violations)}")
    return release, _derive(conn, release, grid, result)


# --------------------------------------------------------------------------- attack view


@dataclass(frozen=True)
class MobView:
    """What the verifier derives of a MOB release, for the attack suite: every person's
    cells on the time grid, the published regions and their index, which objects are each
    person's full matches (containing their cell every time they have one and, with
    presence published, present exactly when they are), and each published person's
    candidate objects left by the attacker of Definition 2."""

    cells: Cells
    regions: Regions
    index: RegionIndex
    full_person: np.ndarray
    full_object: np.ndarray
    published_persons: np.ndarray
    candidates: np.ndarray


def derive_mob_view(conn: psycopg.Connection, schema: str) -> MobView:
    """The verifier's derivation of release ``schema`` (raises InputError if it has none)."""
    _, derived = _derive_schema(conn, schema)
    graph, published = derived.graph, derived.published
    pruning = prune_unmatchable(graph, np.arange(graph.n_persons))
    return MobView(derived.cells, derived.regions, derived.index, published.full.person,
                   published.full.obj, published.persons, pruning.person_candidates)


@dataclass(frozen=True)
class MobCounts:
    """Per published person and object of a MOB release, what the gate counts with its
    ``k`` (:class:`AttackCounts`): I-node i is the person ``persons[i]`` (a raw user id:
    for tests and the differential comparison, never published), O-node i the object
    ``objects[i]`` (its published object id), matched with it."""

    k: int
    persons: list[str]
    objects: list[str]
    counts: AttackCounts


def count_mob_release(conn: psycopg.Connection, schema: str) -> MobCounts:
    """What the gate counts for every published person and object of release (or build)
    ``schema``: the attack graph's degrees, symmetric-core degrees and the candidates the
    attacker of Definition 2 leaves (raises InputError if the release has no grid)."""
    release, derived = _derive_schema(conn, schema)
    published = derived.published
    return MobCounts(release.k, [derived.users[p] for p in published.persons.tolist()],
                     [published.name(i) for i in range(len(published.objects))],
                     attack_counts(derived.graph, release.k))


# --------------------------------------------------------------------------- entry point


def verify_mob_release(conn: psycopg.Connection, schema: str) -> VerifierResult:
    """Check the privacy model of the MOB release (or build) schema ``schema``.

    Parameters
    ----------
    conn : psycopg.Connection
    schema : str
        A release or build schema with manifest, metrics, objects and positions.

    Returns
    -------
    VerifierResult
        Passed when the shared rules hold, every region is a whole-cell rectangle at a grid
        time, every object is one person's distorted version, and the attack graph
        satisfies Definition 3 and withstands the attacker of Definition 2 with k.

    References
    ----------
    Yarovoy, Bonchi, Lakshmanan, Wang. Anonymizing Moving Objects: How to Hide a MOB in a
    Crowd? EDBT 2009: §3 (distorted versions), Definitions 1-3, Theorem 1, Example 1.
    """
    release = read_release(conn, schema)
    method = METHODS.get(release.manifest["method"])
    if method is None or method.family != "mob":
        raise InputError(f"{schema} is a {release.manifest['method']} release, not a MOB one")
    result = VerifierResult(schema, release.k)
    grid = _time_grid(release, result)
    if grid is None or not check_shared_rules(conn, release, grid.cell_size, result,
                                              time_lattice_s=grid.interval_s):
        return result
    derived = _derive(conn, release, grid, result)
    graph = derived.graph
    result.checks["persons_without_qid"] = interval_count(
        int(graph.universal.sum()), release.k, release.count_interval)
    counts = attack_counts(graph, release.k)
    _check_definition_3(counts, derived.published, release, result)
    _check_attacker(counts, derived.published, release, result)
    return result


# The name every family verifier exports (anonymizers.verifiers.verify_release dispatches).
verify_release = verify_mob_release
