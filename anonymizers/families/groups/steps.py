"""The steps of a trajectory-groups release (seed 004): the window's fixes mapped onto places
in PostGIS, the trajectory and demographic anonymizers in Python, the release in PostGIS.

Each step runs in one transaction (:func:`anonymizers.pipeline.steps.step`), reads and
writes only its run's work/build schema (plus raw, read-only) and gives the same outcome
when re-run. Data moves between steps through tables of the work schema.
"""

from __future__ import annotations

import hashlib
import io
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import psycopg

from anonymizers.db.sqlfiles import copy_frame, copy_out, fetch_columns, run_sql_file
from anonymizers.errors import InputError
from anonymizers.families.groups.declaration import (
    GroupsParams,
    GroupsTraits,
    NonoverlappingParams,
)
from anonymizers.families.registry import method_entry
from anonymizers.processes import available_processes, map_forked
from anonymizers.release.spec import area_of_use
from anonymizers.release.step import step

if TYPE_CHECKING:
    from anonymizers.families.groups.trajectory_groups import (
        NonoverlappingGroups,
        OriginDestinationGroups,
    )

__all__ = [
    "DemographicGrid",
    "build_places_release",
    "demographic_classes",
    "group_trajectories",
    "interval_size",
    "map_places",
    "parse_demographic_grid",
    "places_mode",
    "release_cells",
    "resolve_demographics",
    "resolve_places",
]

log = logging.getLogger(__name__)


# --------------------------------------------------------------------------- parameters


def typed_params(release: Any) -> GroupsParams:
    """The release's parameters as its method's typed dataclass (tg_nonoverlapping's
    adds od_groups)."""
    params = method_entry(release.method).parameters.of(release.params)
    if not isinstance(params, GroupsParams):
        raise TypeError(f"{release.method} declares {type(params).__name__}, not the "
                        "trajectory-groups family's GroupsParams")
    return params


def _traits(release: Any) -> GroupsTraits:
    traits: GroupsTraits = method_entry(release.method).traits
    return traits


def interval_size(release: Any) -> int:
    """I_s of the release (default k). The overlapping anonymizer needs at least ceil(k/2),
    and k when it publishes demographic classes (§4.5.1: with k/2, nested groups' classes
    tell what the fewer than k persons between them are, Figure 13)."""
    params = typed_params(release)
    size = release.k if params.interval_size is None else params.interval_size
    if not _traits(release).overlapping:
        return size
    if 2 * size < release.k:
        raise InputError(f"interval_size={size} is below k/2 = {release.k / 2:g}: the "
                         "overlapping anonymizer's nested groups would let their counts be "
                         "subtracted (seed 004 §4.5.1); use at least "
                         f"{-(-release.k // 2)} (the thesis recommends k)")
    if size < release.k and params.demographics != "none":
        raise InputError(f"interval_size={size} is below k = {release.k} with demographic "
                         "classes: two nested groups' classes would tell what the persons "
                         "between them are (seed 004 §4.5.1, Figure 13); use interval_size="
                         f"{release.k}, or demographics=none")
    return size


def resolve_demographics(conn: psycopg.Connection, dataset: str, dataset_id: int, k: int,
                         params: dict[str, Any], say: Callable[[str], None],
                         window: tuple[str, str]) -> str:
    """'ga', 'mondrian' or 'none': the ``demographics`` parameter, 'auto' resolved by
    whether at least k persons of the dataset, and of the window [start, end), carry every
    attribute of the grid (fewer could fill no class). InputError for ga or mondrian
    without them: before the grouping's work, not after it."""
    typed = GroupsParams.of(params)
    chosen: str = typed.demographics
    if chosen == "none":
        return chosen
    grid = parse_demographic_grid(typed.demographic_grid)
    found = fetch_columns(conn, "groups/005_persons_with_attributes.sql",
                          {"dataset_id": dataset_id, "attributes": list(grid.names),
                           "window_start": window[0], "window_end": window[1]})
    (carriers,), (in_window,) = found["persons"], found["window_persons"]
    names = ", ".join(grid.names)
    held = (f"{carriers} persons of dataset {dataset!r} carry {names} (demographic_grid)"
            if carriers < k else
            f"{in_window} of the {carriers} persons of dataset {dataset!r} that carry {names} "
            f"(demographic_grid) travel in the window {window[0]} .. {window[1]}")
    enough = min(carriers, in_window) >= k
    if chosen == "auto":
        chosen = "ga" if enough else "none"
        meaning = ("classes by the genetic algorithm" if enough
                   else f"no classes: fewer than k={k} could fill none")
        say(f"demographics=auto: {held}, so demographics={chosen} ({meaning}); set "
            "demographics to choose")
        return chosen
    if not enough:
        raise InputError(
            f"demographics={chosen} needs persons with {names} in the window (at least k={k}), "
            f"but {held}: load them with `anonymizers load FILE --dataset {dataset} --persons "
            "PERSONS.csv --replace`, choose a window where they travel, set demographic_grid "
            "to attributes the persons carry, or use demographics=none")
    return chosen


def resolve_places(conn: psycopg.Connection, dataset: str, dataset_id: int,
                   params: dict[str, Any], say: Callable[[str], None]) -> str:
    """'dataset', 'grid' or 'voronoi': the ``places`` parameter, 'auto' resolved by whether
    the dataset was loaded with a places file; InputError for a choice the dataset (or the
    catalog) cannot serve."""
    typed = GroupsParams.of(params)
    mode: str = typed.places
    if mode == "voronoi" or typed.places_release is not None:
        if mode != "voronoi" or not typed.places_release:
            raise InputError("places=voronoi and places_release=RELEASE go together: name "
                             "the published generalization release whose cells are the "
                             "places (`anonymizers releases` lists them)")
        release_cells(conn, typed.places_release)
        return mode
    has_places = _dataset_has_places(conn, dataset_id)
    if mode == "auto":
        mode = "dataset" if has_places else "grid"
        meaning = ("its places file" if has_places else
                   f"no places file, so cells of a fixed grid of cell_size="
                   f"{typed.cell_size:g} m")
        say(f"places=auto: dataset {dataset!r} has {meaning}, so places={mode}; set places "
            "to choose")
        return mode
    if mode == "dataset" and not has_places:
        raise InputError(f"dataset {dataset!r} has no places: load it with "
                         "`anonymizers load FILE --dataset NAME --places PLACES`, or release "
                         "it with --param places=grid")
    return mode


def places_mode(conn: psycopg.Connection, release: Any) -> str:
    """'dataset', 'grid' or 'voronoi': the release's ``places`` (resolved when it was
    prepared; a spec of older code may still say 'auto')."""
    return resolve_places(conn, release.dataset, release.dataset_id, release.params,
                          log.info)


def _dataset_has_places(conn: psycopg.Connection, dataset_id: int) -> bool:
    (found,) = fetch_columns(conn, "groups/006_dataset_has_places.sql",
                             {"dataset_id": dataset_id})["has_places"]
    return bool(found)


def release_cells(conn: psycopg.Connection, name: str | None
                  ) -> tuple[tuple[str, str], int]:
    """The cells table of the published generalization release ``name`` and its SRID;
    InputError if it is none."""
    methods = [] if name is None else fetch_columns(
        conn, "groups/007_places_release_method.sql", {"release_name": name})["method"]
    if name is None or not methods or method_entry(methods[0]).family != "generalization":
        raise InputError(f"places_release={name!r} is no published generalization release "
                         "(kam_cut, kam_rec, grid_kam_cut); `anonymizers releases` lists them")
    srids = fetch_columns(conn, "groups/008_places_release_srid.sql",
                          {"release_name": name})["srid"]
    return (name, "cells"), int(srids[0]) if srids and srids[0] is not None else 0


@dataclass(frozen=True, eq=False)
class DemographicGrid:
    """The public atomic grid of ``demographic_grid`` (attribute:lower:upper:bins, ...)."""

    names: tuple[str, ...]
    domain: np.ndarray  # (d, 2): [lower, upper) per attribute
    bins: np.ndarray  # (d,)


def parse_demographic_grid(text: str) -> DemographicGrid:
    """Parse ``age:0:120:24,income:0:200000:20``; InputError saying what is wrong."""
    names, domain, bins = [], [], []
    for item in (part.strip() for part in text.split(",") if part.strip()):
        fields = item.split(":")
        if len(fields) != 4:
            raise InputError(f"demographic_grid item {item!r}: write attribute:lower:upper:bins, "
                             "e.g. age:0:120:24")
        name, lower, upper, count = fields
        try:
            lo, hi, n = float(lower), float(upper), int(count)
        except ValueError:
            raise InputError(f"demographic_grid item {item!r}: lower and upper must be numbers "
                             "and bins an integer") from None
        if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi and n >= 1):
            raise InputError(f"demographic_grid item {item!r}: need lower < upper and bins >= 1")
        if not name.isidentifier() or name in names:
            raise InputError(f"demographic_grid attribute {name!r}: a name (letters, digits, "
                             "_), once")
        names.append(name)
        domain.append((lo, hi))
        bins.append(n)
    if not names:
        raise InputError("demographic_grid is empty: name at least one attribute, or set "
                         "demographics=none")
    return DemographicGrid(tuple(names), np.array(domain, float), np.array(bins, np.int64))


# --------------------------------------------------------------------------- map_places


def map_places(spec: dict[str, Any]) -> dict[str, Any]:
    """The window's trajectories as sequences of places (PostGIS)."""
    with step("map_places", spec) as (release, conn):
        mode = places_mode(conn, release)
        typed = typed_params(release)
        params = {**release.window_params(), "srid": release.srid}
        if mode == "dataset":
            run_sql_file(conn, "groups/010_dataset_places.sql", params, work=release.work_schema)
        elif mode == "voronoi":
            cells, cells_srid = release_cells(conn, typed.places_release)
            run_sql_file(conn, "groups/012_release_cell_places.sql",
                         {**params, "cells_srid": cells_srid},
                         work=release.work_schema, cells=cells)
        else:
            run_sql_file(conn, "groups/011_grid_places.sql",
                         {**params, **area_of_use(release.srid),
                          "cell_size": typed.cell_size},
                         work=release.work_schema)
        run_sql_file(conn, "groups/020_visits.sql", {"window_start": release.window_start},
                     work=release.work_schema)
    return {"places": mode}


# --------------------------------------------------------------------------- group_trajectories


def _read_visits(conn: psycopg.Connection, work: str
                 ) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], pd.Index]:
    """Every visit's (trajectory, person, place code) as int64 arrays in trajectory and
    visit order, and the visited places, the n-th being the place of code n."""
    import pyarrow as pa

    from anonymizers.db.arrow_reads import read_columns
    from anonymizers.memory import give_back

    # The places first: the step's transaction then holds tg_visits until it ends, so the
    # codes the second read gives them cannot come from another version of the table.
    visited = fetch_columns(conn, "groups/031_read_visited_places.sql", work=work)["place_id"]
    columns = read_columns(conn, "groups/030_read_visits.sql",
                           {"traj_index": pa.int64(), "person_index": pa.int64(),
                            "place_code": pa.int64()}, work=work)
    give_back("the visits")  # the Arrow pool keeps the read's pages for reuse
    return ((columns["traj_index"], columns["person_index"], columns["place_code"]),
            pd.Index(visited, dtype=object))


def group_trajectories(spec: dict[str, Any]) -> dict[str, int]:
    """The overlapping (Algorithms 1-3) or nonoverlapping (Algorithms 4-5) anonymizer, and
    the origin-destination groups (§4.3.3); writes the groups and the private assignment."""
    from anonymizers.families.groups import trajectory_groups as tg

    with step("group_trajectories", spec) as (release, conn):
        work = release.work_schema
        interval_size(release)  # refuse a bad I_s before the work
        run_sql_file(conn, "groups/040_work_tables.sql", work=work)
        arrays, visited = _read_visits(conn, work)
        if arrays[0].size == 0:
            raise InputError("the window has no visits of any place; widen the window, or "
                             "check that places cover the data (places=grid for GPS data)")
        neighbours, names = _neighbours(conn, work, visited)
        od = None
        params = typed_params(release)
        if _traits(release).overlapping:
            result = tg.overlapping_group_windows(*arrays, k=release.k)
        else:
            result = tg.nonoverlapping_trajectory_groups(*arrays, k=release.k,
                                                         seed=_seed(release))
            if isinstance(params, NonoverlappingParams) and params.od_groups:
                od = tg.origin_destination_groups(*arrays, result, release.k, neighbours,
                                                  seed=_seed(release))
                _write_od(conn, work, od, names)
        _write_groups(conn, work, result, names)
    return {"visits": int(arrays[0].size), "groups": result.groups.n_groups,
            "od_groups": 0 if od is None else int(od.group.size)}


def _seed(release: Any) -> int:
    """The ``seed`` parameter mixed with the release's keyed seed: fixed for a source file,
    window, installation secret and seed (reruns, and runs after a reload of the file, give
    the same release), unguessable from the seed alone."""
    return (int(release.seed) & 0xFFFFFFFF) ^ typed_params(release).seed


def _neighbours(conn: psycopg.Connection, work: str,
                visited: pd.Index) -> tuple[np.ndarray, np.ndarray]:
    """Neighbour pairs as place codes, and the names of all codes: the visited places'
    codes first, then places only a neighbour pair names (unvisited stations)."""
    pairs = pd.read_csv(io.BytesIO(copy_out(conn, "groups/035_read_neighbours.sql", work=work)),
                        names=["a", "b"], dtype=str, keep_default_na=False)
    named = pd.Index(pd.unique(pairs[["a", "b"]].to_numpy().ravel()), dtype=object)
    universe = visited.append(named.difference(visited))
    codes = np.stack([universe.get_indexer(pairs["a"]), universe.get_indexer(pairs["b"])],
                     axis=1).astype(np.int64).reshape(-1, 2)
    return codes, np.asarray(universe, dtype=object)


def _write_groups(conn: psycopg.Connection, work: str, result: NonoverlappingGroups,
                  names: np.ndarray) -> None:
    groups, a = result.groups, result.assignment
    index = np.arange(groups.n_groups)
    copy_frame(conn, work, "tg_groups", pd.DataFrame({
        "group_index": index, "n_persons": groups.n_persons,
        "n_trajectories": groups.n_trajectories}))
    length = groups.length
    copy_frame(conn, work, "tg_group_places", pd.DataFrame({
        "group_index": np.repeat(index, length),
        "pos": np.arange(groups.places.size) - np.repeat(groups.offsets[:-1], length),
        "place_id": names[groups.places]}))
    copy_frame(conn, work, "tg_assignment", pd.DataFrame({
        "group_index": a.group, "traj_index": a.traj, "person_index": a.person,
        "seq_start": a.start, "seq_stop": a.stop}))


def _write_od(conn: psycopg.Connection, work: str, od: OriginDestinationGroups,
              names: np.ndarray) -> None:
    index = np.arange(od.group.size)
    copy_frame(conn, work, "tg_od", pd.DataFrame({
        "od_index": index, "group_index": od.group, "is_origin": od.is_origin,
        "n_persons": od.n_persons, "n_trajectories": od.n_trajectories}))
    copy_frame(conn, work, "tg_od_places", pd.DataFrame({
        "od_index": np.repeat(index, np.diff(od.node_offsets)),
        "place_id": names[od.nodes]}))
    copy_frame(conn, work, "tg_od_members", pd.DataFrame({
        "od_index": od.member_group, "traj_index": od.member_traj,
        "person_index": od.member_person}))


# --------------------------------------------------------------------------- demographic_classes


def demographic_classes(spec: dict[str, Any]) -> dict[str, int]:
    """Demographic classes of every group (§4.4): the GA or Mondrian on the group's persons,
    then boundary hiding (§4.4.5); a hidden box holding fewer than k of the group's persons
    is not published (the thesis would; DESIGN rule 1 does not)."""
    with step("demographic_classes", spec) as (release, conn):
        work = release.work_schema
        run_sql_file(conn, "groups/045_class_tables.sql", work=work)
        params = typed_params(release)
        method: str = params.demographics
        if method == "none":
            return {"classes": 0}
        grid = parse_demographic_grid(params.demographic_grid)
        members = _group_persons(conn, work)
        values = _person_values(conn, work, release.dataset_id, grid)
        classes, class_members, suppressed = _all_classes(
            members, values, grid, release.k, method, _seed(release))
        copy_frame(conn, work, "tg_classes", classes)
        copy_frame(conn, work, "tg_class_members", class_members)
        copy_frame(conn, work, "tg_class_summary",
                   pd.DataFrame({"suppressed_by_hiding": [suppressed]}))
    return {"classes": len(classes), "suppressed_by_hiding": suppressed}


def _group_persons(conn: psycopg.Connection, work: str) -> pd.DataFrame:
    """Distinct (group_index, person_index) of the assignment (who is in which group)."""
    return pd.read_csv(io.BytesIO(copy_out(conn, "groups/046_read_group_persons.sql",
                                           work=work)),
                       names=["group_index", "person_index"])


def _person_values(conn: psycopg.Connection, work: str, dataset_id: int,
                   grid: DemographicGrid) -> pd.DataFrame:
    """Every window person's attribute values (NaN where unknown), by person_index: one
    column per attribute of the grid, in its order."""
    data = copy_out(conn, "groups/047_read_person_values.sql",
                    {"dataset_id": dataset_id, "attributes": list(grid.names)}, work=work)
    values = pd.read_csv(io.BytesIO(data), names=["person_index", "attribute", "value"],
                         dtype={"value": float})
    wide = values.pivot(index="person_index", columns="attribute", values="value").reindex(
        columns=range(1, len(grid.names) + 1))
    wide.columns = pd.Index(grid.names)
    return wide.reset_index()


def _all_classes(members: pd.DataFrame, values: pd.DataFrame, grid: DemographicGrid, k: int,
                 method: str, seed: int) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    """Classes of every group with at least k persons of known attributes.

    Groups with the same persons get the same classes, computed once: the overlapping
    anonymizer's nested groups often share their persons, and two different partitions of
    one set of persons published side by side could be intersected (§4.5.2).
    """
    from anonymizers.families.groups import demographics as dm

    atomic = dm.atomic_grid(grid.domain, grid.bins)
    _check_domain(values, grid)
    known = values.dropna().set_index("person_index")
    groups: list[tuple[int, np.ndarray]] = []
    unique: dict[bytes, np.ndarray] = {}
    for group_index, persons in members.groupby("group_index")["person_index"]:
        people = np.sort(known.index.intersection(persons.to_numpy()).to_numpy())
        if people.size >= k:
            groups.append((int(group_index), people))
            unique.setdefault(people.tobytes(), people)
    # Each set of persons on a process of its own (the GA took 335 s of the 1M-fix city's
    # 412 s release on one); each is seeded by its persons, so the classes do not depend
    # on the process that made them.
    work = [(known.loc[people, list(grid.names)].to_numpy(float), _set_seed(seed, key))
            for key, people in unique.items()]
    computed = dict(zip(unique, map_forked(_classes_of, (atomic, k, method), work,
                                           available_processes()), strict=True))
    rows: list[pd.DataFrame] = []
    member_rows: list[pd.DataFrame] = []
    suppressed = 0
    for group_index, people in groups:
        found = computed[people.tobytes()]
        suppressed += found.suppressed
        rows.append(found.classes.assign(group_index=group_index))
        member_rows.append(pd.DataFrame({"group_index": group_index,
                                         "class_index": found.member_class,
                                         "person_index": people[found.member_row]}))
    columns = ["group_index", "class_index", "lower", "upper", "hidden_lower",
               "hidden_upper", "n_persons"]
    classes = pd.concat(rows)[columns] if rows else pd.DataFrame(columns=columns)
    members_out = (pd.concat(member_rows) if member_rows else
                   pd.DataFrame(columns=["group_index", "class_index", "person_index"]))
    return classes, members_out, suppressed


def _classes_of(context: tuple[Any, int, str], work: tuple[np.ndarray, int]
                ) -> _GroupClasses:
    """:func:`_group_classes` of one set of persons (a worker's item)."""
    atomic, k, method = context
    points, seed = work
    return _group_classes(points, atomic, k, method, seed)


@dataclass(frozen=True, eq=False)
class _GroupClasses:
    classes: pd.DataFrame  # class_index, lower, upper, hidden_lower, hidden_upper, n_persons
    member_row: np.ndarray  # rows of the group's points that are in a published class
    member_class: np.ndarray  # and their class
    suppressed: int  # classes whose hidden box held fewer than k of the group's persons


def _set_seed(seed: int, key: bytes) -> int:
    """A seed for one set of persons: equal sets, equal classes, whatever the group order."""
    digest = hashlib.blake2b(key, digest_size=8, key=seed.to_bytes(8, "little")).digest()
    return int.from_bytes(digest, "little")


def _group_classes(points: np.ndarray, atomic: Any, k: int, method: str,
                   seed: int) -> _GroupClasses:
    """The GA's or Mondrian's classes of one group, hidden (§4.4.5); a hidden box holding
    fewer than k of the group's persons is not published (the thesis would, DESIGN rule 1
    does not)."""
    from anonymizers.families.groups import demographics as dm

    classes = (dm.genetic_demographic_classes(points, atomic, k, seed=seed).classes
               if method == "ga" else dm.mondrian_demographic_classes(points, atomic, k))
    hidden = dm.hide_boundaries(points, classes)
    kept = np.flatnonzero(_inside_counts(points, hidden.lower, hidden.upper) >= k)
    table = pd.DataFrame({
        "class_index": kept,
        "lower": [_array(classes.bounds.lower[c]) for c in kept],
        "upper": [_array(classes.bounds.upper[c]) for c in kept],
        "hidden_lower": [_array(hidden.lower[c]) for c in kept],
        "hidden_upper": [_array(hidden.upper[c]) for c in kept],
        "n_persons": classes.n[kept].astype(np.int64)})
    member_row = np.flatnonzero(np.isin(classes.assignment, kept))
    return _GroupClasses(table, member_row, classes.assignment[member_row],
                         classes.n_classes - kept.size)


def _check_domain(values: pd.DataFrame, grid: DemographicGrid) -> None:
    """Every attribute known for someone, every known value inside its public domain."""
    for j, name in enumerate(grid.names):
        column = values[name].dropna().to_numpy(float)
        if values.shape[0] and column.size == 0:
            raise InputError(f"no person of the window has a numeric {name!r}: "
                             "demographic_grid names raw.persons columns (age, income) or "
                             "numeric keys of its attributes; or set demographics=none")
        lo, hi = grid.domain[j]
        outside = int(((column < lo) | (column >= hi)).sum())
        if outside:
            raise InputError(f"{outside} persons have {name} outside demographic_grid's "
                             f"[{lo:g}, {hi:g}); widen it (e.g. --param demographic_grid="
                             f"{name}:{min(lo, column.min()):g}:{max(hi, column.max() + 1):g}:"
                             f"{int(grid.bins[j])})")


def _inside_counts(points: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Points inside every box [lower, upper) (all classes at once)."""
    inside = ((points[None, :, :] >= lower[:, None, :])
              & (points[None, :, :] < upper[:, None, :])).all(axis=2)
    return inside.sum(axis=1)


def _array(values: np.ndarray) -> str:
    """A float8[] literal (repr round-trips every float exactly)."""
    return "{" + ",".join(repr(float(v)) for v in values) + "}"


# --------------------------------------------------------------------------- build


def build_places_release(spec: dict[str, Any]) -> None:
    """The release tables places, groups, od_groups and demographic_classes (PostGIS)."""
    with step("build_places_release", spec) as (release, conn):
        work, build = release.work_schema, release.build_schema
        run_sql_file(conn, "groups/050_release_tables.sql", {"srid": release.srid},
                     build=build)
        run_sql_file(conn, "groups/060_build_release.sql",
                     {"k": release.k, "interval_size": interval_size(release)},
                     work=work, build=build)
        run_sql_file(conn, "groups/061_group_geometry.sql", build=build)
        params = typed_params(release)
        names = (parse_demographic_grid(params.demographic_grid).names
                 if params.demographics != "none" else ())
        _build_classes(conn, work, build, names, release.k, interval_size(release))


def _build_classes(conn: psycopg.Connection, work: str, build: str, names: tuple[str, ...],
                   k: int, size: int) -> None:
    """demographic_classes: ids and the private members (sql/groups/070_class_ids.sql),
    the rows (071_class_rows.sql), then one lo/hi column pair per attribute holding the
    hidden bounds (072_class_bounds.sql, one attribute at a time: the columns are the
    grid's)."""
    run_sql_file(conn, "groups/070_class_ids.sql", {"k": k}, work=work)
    if not names:
        return
    run_sql_file(conn, "groups/071_class_rows.sql", {"k": k, "size": size},
                 work=work, build=build)
    for position, name in enumerate(names, start=1):
        comments = {f"{end}_comment": f"Hidden {what} of the class's {name} (seed 004 §4.4.5), "
                    "an atomic boundary of manifest.parameters.demographic_grid."
                    for end, what in (("lo", "lower bound (inclusive)"),
                                      ("hi", "upper bound (exclusive)"))}
        run_sql_file(conn, "groups/072_class_bounds.sql", {"position": position, **comments},
                     work=work, build=build, lo=f"{name}_lo", hi=f"{name}_hi")
