"""Verify a generalization release (grid_kam_cut, kam_cut, kam_rec) from its tables and raw data.

It reads only the release schema under test, the ledger and ``raw``: never the work
schema or the anonymizer's bookkeeping. First the machinery's shared rules
(:mod:`anonymizers.verifiers.base`: persons, lattice, metrics, ledger, identifiers,
keyed fingerprint), then the family's model:

1. every published trajectory's cell sequence is contained in the re-derived sequences of
   at least k distinct persons;
2. every published flow A->B is the pattern <A, B> of at least k persons; with fixes-only
   membership (the grid) its interval-filtered counts also hold the verifier's own exact
   recount;
3. every published cell is visited by at least k persons, so no cell can point at fewer
   than k people;
4. every data-derived generator (a centroid other than its polygon's own) lies on the
   ``snap`` lattice and has fixes of at least k persons within the tessellation radius r
   of it: it marks no place where fewer than k people were (rule 2). The anonymizer also
   makes it the mean of per-person means, which only it can know;
5. with ``min_continuations`` > 1, no published prefix has between 1 and
   min_continuations - 1 distinct continuations (homogeneity).

The re-derivation is anonymizers/verifiers/rederive.py (GEOS via shapely, not the
anonymizer's SQL). The lattice of the grid is its cell size (cells are anchored at the
CRS origin); that of the Voronoi methods is ``snap``.

What a method claims comes from its declaration (the registry's traits, and its typed
parameters read from the values the manifest recorded), never from the anonymizer's code:
whether a trajectory's visits include the cells crossed between its fixes (``crossings``),
and whether the cells are data-driven (``cells``: the Voronoi methods' generators).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping
from contextlib import closing
from dataclasses import dataclass
from typing import Any

import numpy as np
import psycopg
import shapely

from anonymizers.counting import distinct_per_group
from anonymizers.db.sqlfiles import fetch_columns
from anonymizers.errors import InputError
from anonymizers.families.generalization.declaration import (
    GeneralizationTraits,
    GridKamCutParams,
    PrefixTreeParams,
    TessellationParams,
)
from anonymizers.families.registry import METHODS
from anonymizers.processes import available_processes, imap_forked
from anonymizers.release.spec import area_of_use
from anonymizers.verifiers.base import (
    ReleaseUnderTest,
    VerifierResult,
    check_shared_rules,
    interval_count,
    on_lattice,
    read_release,
)
from anonymizers.verifiers.containment import SupportIndex
from anonymizers.verifiers.fixes import CHUNK_FIXES, Fixes, PersonsNear, window_fixes
from anonymizers.verifiers.rederive import OUTSIDE, CellLocator, Derived, derive_visits

__all__ = ["VerifierResult", "derive_release_visits", "verify_generalization_release",
           "verify_release"]

VERIFY = "generalization/verify/"


def _traits(method: str) -> GeneralizationTraits:
    """The declared traits of ``method``; InputError unless it is of this family."""
    entry = METHODS.get(method)
    if entry is None or entry.family != "generalization":
        raise InputError(f"a {method} release is not of the generalization family: check it "
                         "with its own family's verifier")
    traits: GeneralizationTraits = entry.traits
    return traits


@dataclass(frozen=True)
class _Settings:
    """What the release's method declares, and the typed parameters its manifest recorded."""

    traits: GeneralizationTraits
    lattice_m: float  # the grid's cell size, or the Voronoi methods' snap
    radius_m: float  # the Voronoi methods' r (NaN for the grid: no data-driven generator)
    min_continuations: int


def _settings(traits: GeneralizationTraits, recorded: Mapping[str, Any]) -> _Settings:
    """The settings of a method with ``traits`` whose manifest recorded the parameters
    ``recorded``; InputError when they cannot be read (the release cannot be checked)."""
    if traits.cells == "voronoi":
        voronoi = TessellationParams.of(recorded)
        lattice, radius = voronoi.snap, voronoi.radius
    else:
        lattice, radius = GridKamCutParams.of(recorded).cell_size, math.nan
    return _Settings(traits, lattice, radius, PrefixTreeParams.of(recorded).min_continuations)


def derive_release_visits(conn: psycopg.Connection, schema: str, dataset_id: int,
                          manifest: dict[str, Any], near: PersonsNear | None = None,
                          chunk_fixes: int = CHUNK_FIXES
                          ) -> tuple[Derived, PersonsNear | None]:
    """The verifier's visits of the window's fixes over the published cells of ``schema``.

    The fixes are read and derived in chunks of whole trajectories (about ``chunk_fixes``
    fixes each, :mod:`anonymizers.verifiers.fixes`), so memory follows the chunk and the
    visits, not the window; the visits are those of one derivation over the whole window.

    Parameters
    ----------
    near
        Fed every chunk of fixes on the way (the generators' check), so that the fixes are
        read once; returned as the second item (None when not given).
    chunk_fixes
        Fixes per chunk, about: a chunk never splits a trajectory.
    """
    crossings = _traits(manifest["method"]).crossings
    params = {"dataset_id": dataset_id, "window_start": manifest["window_start"],
              "window_end": manifest["window_end"], "srid": manifest["srid"],
              **area_of_use(manifest["srid"])}
    found = fetch_columns(conn, VERIFY + "published_cells.sql", release=schema)
    cells = CellLocator(np.array(found["cell_id"], dtype=np.int64),
                        shapely.from_wkb([bytes(wkb) for wkb in found["wkb"]]))
    parts = []
    # The chunks are derived on forked workers while this process reads the next ones;
    # an error in one ends the read at once (closing), not when its traceback is freed.
    with closing(window_fixes(conn, params, chunk_fixes)) as chunks:
        # Each chunk goes with the generators still short of k persons when a worker
        # takes it: once all have k, the chunks need no search near them.
        items = ((fixes, near.wanted() if near is not None else None) for fixes in chunks)
        for derived, pairs in imap_forked(_derive_chunk, (cells, crossings, near), items,
                                          available_processes()):
            parts.append(derived)
            if near is not None:
                near.add_pairs(pairs)
    return Derived.concat(parts), near


def _derive_chunk(state: tuple[CellLocator, bool, PersonsNear | None],
                  item: tuple[Fixes, np.ndarray | None]) -> tuple[Derived, np.ndarray]:
    """One chunk's visits, and its (generator, person) pairs near each other for the
    generators wanted."""
    (cells, crossings, near), (fixes, wanted) = state, item
    derived = derive_visits(fixes.traj, fixes.owner, fixes.x, fixes.y, cells,
                            crossings=crossings)
    return derived, (near.pairs_of(fixes, wanted) if near is not None
                     else np.zeros(0, np.int64))


def _check_trajectories(conn, schema: str, derived: Derived, k: int,
                        result: VerifierResult) -> SupportIndex:
    index = derived.support_index()
    published = fetch_columns(conn, VERIFY + "published_sequences.sql", release=schema)["cells"]
    shortfalls = index.shortfalls([tuple(cells) for cells in published], k,
                                  available_processes())
    result.checks["distinct_published_sequences"] = len(published)
    result.checks["sequences_below_k"] = len(shortfalls)
    for short in shortfalls:
        result.violations.append(f"trajectory cells {list(short.pattern)} are contained in only "
                                 f"{short.support} persons' sequences (k={k})")
    return index


def _recount_flows(derived: Derived) -> dict[tuple[int, int], tuple[int, int]]:
    """Distinct owners and trajectories per consecutive move between published cells.

    Sorted integer keys (:func:`~anonymizers.counting.distinct_per_group`), not a pandas
    groupby: at 25M fixes the moves are tens of millions, and ``nunique`` over them set the
    verifier's peak memory (5M grid release: the step's peak was in it)."""
    move = (derived.traj[1:] == derived.traj[:-1]) & (derived.cell[1:] != OUTSIDE) & (
        derived.cell[:-1] != OUTSIDE)
    from_cell, to_cell = derived.cell[:-1][move], derived.cell[1:][move]
    if not len(from_cell):
        return {}
    low = min(int(from_cell.min()), int(to_cell.min()))
    width = max(int(from_cell.max()), int(to_cell.max())) - low + 1
    pairs, pair_of_move = np.unique((from_cell.astype(np.int64) - low) * width
                                    + (to_cell - low), return_inverse=True)
    del from_cell, to_cell
    owners = distinct_per_group(pair_of_move, derived.owner[1:][move], len(pairs))
    trajectories = distinct_per_group(pair_of_move, derived.traj[1:][move], len(pairs))
    return {(int(pair // width + low), int(pair % width + low)): (int(o), int(t))
            for pair, o, t in zip(pairs, owners, trajectories, strict=True)}


def _check_flows(conn, release: ReleaseUnderTest, derived: Derived, index: SupportIndex,
                 exact: bool, result: VerifierResult) -> None:
    """Each flow A->B is the pattern <A, B>: it needs k persons (the shared rules check that
    its published counts are interval-filtered and at least k). With fixes-only membership
    (the grid) the verifier's exact recount must also lie in each published interval."""
    k, width = release.k, release.count_interval
    recount = _recount_flows(derived) if exact else None
    flows = fetch_columns(conn, VERIFY + "flows.sql", release=release.schema)
    moves = list(zip(flows["from_cell"], flows["to_cell"], strict=True))
    result.checks["flows"] = len(moves)
    supports = dict(index.supports(sorted(set(moves))))
    for (from_cell, to_cell), n_persons, n_trajectories in zip(
            moves, flows["n_persons"], flows["n_trajectories"], strict=True):
        support = supports[(from_cell, to_cell)]
        if support < k:
            result.violations.append(f"flow {from_cell}->{to_cell}: the move is made by only "
                                     f"{support} persons (k={k})")
        if recount is None:
            continue
        persons, trajectories = recount.get((from_cell, to_cell), (0, 0))
        for what, published, counted in (("persons", n_persons, persons),
                                          ("trajectories", n_trajectories, trajectories)):
            if published != interval_count(counted, k, width):
                result.violations.append(
                    f"flow {from_cell}->{to_cell} says {published} {what}; the verifier "
                    f"counts {counted}, whose interval (k={k}, size {width}) starts at "
                    f"{interval_count(counted, k, width)}")


def _persons_near_generators(settings: _Settings, generators: dict[str, list[Any]],
                             k: int) -> PersonsNear | None:
    """The counter of persons near the data-derived ``generators`` (cell_id, x, y), for
    the methods that have them (None otherwise: nothing to count)."""
    if not generators["cell_id"] or settings.traits.cells != "voronoi":
        return None
    return PersonsNear(np.array(generators["x"], dtype=float),
                       np.array(generators["y"], dtype=float), settings.radius_m, enough=k)


def _check_generators(settings: _Settings, generators: dict[str, list[Any]], k: int,
                      near: PersonsNear | None, result: VerifierResult) -> None:
    """A data-derived generator (centroid other than its polygon's own, ``generators``)
    must lie on the snap lattice and have fixes of at least k persons within the radius r
    of it (counted by ``near`` over the window's fixes): it may not point at fewer than k
    people (rule 2)."""
    cells = generators["cell_id"]
    result.checks["data_derived_generators"] = len(cells)
    if not cells:
        return
    if settings.traits.cells != "voronoi":  # the grid: no data-driven centre
        for cell in cells:
            result.violations.append(f"the centroid of grid cell {cell} is not its square's "
                                     "centre: it was computed from data")
        return
    snap = settings.lattice_m
    off = [cell for cell, x, y in zip(cells, generators["x"], generators["y"], strict=True)
           if not (on_lattice(x, snap) and on_lattice(y, snap))]
    result.checks["generators_off_lattice"] = len(off)
    for cell in off:
        result.violations.append(f"the generator of cell {cell} is not on the {snap:g} m "
                                 "lattice: it may be one person's place")
    # Counted while deriving; without a count every generator fails (never passes).
    owners = near.counts() if near is not None else np.zeros(len(cells), dtype=np.int64)
    thin = [cell for cell, persons in zip(cells, owners, strict=True) if persons < k]
    result.checks["generators_below_k"] = len(thin)
    for cell in thin:
        result.violations.append(f"the generator of cell {cell} has fixes of fewer than k={k} "
                                 f"persons within {settings.radius_m:.0f} m: it points at them")


def _check_cells(conn, schema: str, index: SupportIndex, k: int,
                 result: VerifierResult) -> None:
    cells = fetch_columns(conn, VERIFY + "cell_ids.sql", release=schema)["cell_id"]
    thin = [cell for (cell,), support in index.supports(sorted((cell,) for cell in cells))
            if support < k]
    result.checks["cells"] = len(cells)
    result.checks["cells_below_k"] = len(thin)
    for cell in thin:
        result.violations.append(f"cell {cell} is visited by fewer than k={k} "
                                 "persons: its geometry would point at them")


def _check_continuations(conn, schema: str, wanted: int, result: VerifierResult) -> None:
    """With min_continuations = ``wanted`` > 1, no published prefix has 1..wanted-1
    continuations (the distinct published sequences have the same prefixes as all)."""
    if wanted <= 1:
        return
    published = fetch_columns(conn, VERIFY + "published_sequences.sql", release=schema)["cells"]
    continuations: dict[tuple[int, ...], set[int]] = defaultdict(set)
    for cells in published:
        for end in range(1, len(cells)):
            continuations[tuple(cells[:end])].add(cells[end])
    few = [prefix for prefix, nexts in continuations.items() if len(nexts) < wanted]
    result.checks["prefixes_with_few_continuations"] = len(few)
    for prefix in few[:SHOWN_PREFIXES]:
        result.violations.append(f"published prefix {list(prefix)} has only "
                                 f"{len(continuations[prefix])} continuation(s), fewer than "
                                 f"min_continuations={wanted}")


SHOWN_PREFIXES = 10


def verify_generalization_release(conn: psycopg.Connection, schema: str) -> VerifierResult:
    """Check the privacy model of the release (or build) schema ``schema``."""
    release = read_release(conn, schema)
    traits = _traits(release.manifest["method"])
    result = VerifierResult(schema, release.k)
    try:
        settings = _settings(traits, release.parameters)
    except InputError as error:
        result.violations.append(f"the manifest's parameters cannot be checked: {error}")
        return result
    if not check_shared_rules(conn, release, settings.lattice_m, result):
        return result
    generators = fetch_columns(conn, VERIFY + "data_derived_generators.sql", release=schema)
    derived, near = derive_release_visits(
        conn, schema, release.dataset_id, release.manifest,
        near=_persons_near_generators(settings, generators, release.k))
    result.checks["input_trajectories"] = derived.n_trajectories
    index = _check_trajectories(conn, schema, derived, release.k, result)
    # With fixes-only membership (no crossings) the verifier can recount the flows exactly.
    _check_flows(conn, release, derived, index, not traits.crossings, result)
    _check_cells(conn, schema, index, release.k, result)
    _check_generators(settings, generators, release.k, near, result)
    _check_continuations(conn, schema, settings.min_continuations, result)
    return result


# The name every family verifier exports (anonymizers.verifiers.verify_release dispatches).
verify_release = verify_generalization_release
