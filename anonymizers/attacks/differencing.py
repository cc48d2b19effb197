"""The differencing attack: two releases of one dataset, their counts subtracted.

An attacker with analyst access reads the ledger (``catalog.releases``) and every release
schema. Where two releases of a dataset publish the *same item* (a flow between the same two
squares of the fixed grid, a trajectory group over the same places, a region at the same
time point) and one window nests in the other, the persons counted by the item in the inner
window are, for a count that is *monotone* under window nesting, a subset of those counted in
the outer one. The difference of the two counts is then a group of persons the attacker has
isolated: those of the item who were there only outside the inner window. Published counts
are lower ends of intervals (the interval filter of seed 004 §4.2: the true count of an item
published as ``a`` with width ``w`` lies in ``[a, a + w - 1]``), so the difference lies in
``[max(0, a2 - a1 - (w1 - 1)), a2 + (w2 - 1) - a1]``; when that interval lies inside
``[1, k - 1]``, fewer than k persons are certainly isolated, whatever the true counts were,
and a member is picked out of them with probability at least 1 / its upper end and at most 1
/ its lower end, the risk figure reported (worst case; a count of trajectories isolates at
least one person, so its risk is 1).

Which counts are monotone, and why (the release tables' ``COMMENT ON`` text):

* ``flow_persons``, ``flow_trajectories`` (generalization ``flows``): persons (trajectories)
  with a move from one cell to the next. Monotone between two ``grid_kam_cut`` releases:
  membership in a square of the fixed grid is the fix's own, and the fixes of a trajectory
  in the inner window are a contiguous run of those in the outer, so a move in the inner is a
  move in the outer. Not between Voronoi releases (``kam_cut``, ``kam_rec``): the cells in
  between, and the crossings through them, come from each window's data.
* ``group_trajectories`` (groups ``groups``): trajectories travelling the sequence of places
  as a contiguous part. Monotone between two ``tg_overlapping`` releases over the same places
  (Algorithms 1-3 count every trajectory that travels it). Not under ``tg_nonoverlapping``,
  whose greedy assigns each part of a trajectory to one group, again in every window; nor
  its common origin/destination groups (``od_group_trajectories``).
* ``group_persons`` (clustering ``groups``): TCAA and MLA re-cluster every window, so the
  members of a group with the same published regions need not nest: not monotone.
* ``region_objects`` (MOB ``positions``, the objects sharing a rectangle at a time point):
  the equivalence classes are re-optimised every window, and a position is carried forward
  from the last fix inside the window: not monotone.
* ``window_persons``, ``window_trajectories`` (the manifest's interval-filtered input
  counts): persons (trajectories) with a fix in the window, monotone whenever both releases
  read the window the same way (the ``scope`` below: the fixes inside the CRS's area of use
  for the generalization, MOB and clustering families, the mapping onto the same places for
  the groups family).

A non-monotone count still leaks if two releases publish the same geometry with counts that
differ by fewer than k; such items are reported as *possible differencing*, never as a risk
figure. Windows that merely overlap, touch or are disjoint have no subset relation: the
counts of two such releases alone isolate nobody for certain (a third release over their
union does, against each of them, and the ledger pairs it with both).

References
----------
Nordström, M. (2012). *Anonymization of trajectory data*, §4.2 (the interval filter) and
§4.5.2 (overlapping releases).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import dict_row

from anonymizers.db.sqlfiles import compose_sql, fetch_row, fetch_rows, read_sql
from anonymizers.errors import InputError
from anonymizers.families.registry import FAMILIES, METHODS

__all__ = ["DifferencingResult", "ItemDifference", "KindSummary", "ReleaseWindow",
           "certainly_isolated", "difference_bounds", "difference_releases",
           "differencing_against_ledger", "format_differencing", "possibly_differs",
           "read_window", "results_json", "window_relation"]

# Relations of two half-open windows [start, end).
EQUAL, A_IN_B, B_IN_A = "equal", "a inside b", "b inside a"
OVERLAPPING, ADJACENT, DISJOINT = "overlapping", "adjacent", "disjoint"
NESTED = (EQUAL, A_IN_B, B_IN_A)

_TRAJECTORY_COUNTS = ("flow_trajectories", "group_trajectories", "od_group_trajectories",
                      "window_trajectories")
_WINDOW = ("window_persons", "window_trajectories")


@dataclass(frozen=True)
class ReleaseWindow:
    """What the differencing attack needs of a release: its manifest's window and method."""

    name: str
    dataset: str
    method: str
    k: int
    start: datetime
    end: datetime
    srid: int
    parameters: dict[str, Any]
    composition_risk: str | None
    source_fingerprint: str

    @property
    def family(self) -> str:
        return METHODS[self.method].family

    @property
    def scope(self) -> str:
        """What the manifest's input counts count: equal scopes, the same count."""
        scope_params = FAMILIES[self.family].differencing.scope_params
        if scope_params:
            return ", ".join(f"{name}={self.parameters.get(name)}" for name in scope_params)
        return f"fixes in the window and the area of use of SRID {self.srid}"


@dataclass(frozen=True)
class ItemDifference:
    """One item published by both releases whose difference isolates, or may isolate."""

    kind: str
    label: str
    a: tuple[int, int]  # the true count in release a lies in [lo, hi]
    b: tuple[int, int]
    difference: tuple[int, int]  # bounds of (outer - inner), or of b - a when not nested
    certain: bool  # the difference certainly lies in [1, k - 1]

    @property
    def persons(self) -> tuple[int, int]:
        """Bounds of the persons behind a certain difference: a count of trajectories may
        be one person's (at least 1 person, at most as many as trajectories)."""
        low, high = self.difference
        return (min(low, 1) if self.kind in _TRAJECTORY_COUNTS else low), high


@dataclass(frozen=True)
class KindSummary:
    """The matched items of one kind of count."""

    kind: str
    matched: int
    monotone: bool
    reason: str | None  # why not monotone
    isolated: int
    possible: int


@dataclass(frozen=True)
class DifferencingResult:
    """The differencing attack on one pair of releases.

    ``isolated`` counts matched items whose difference certainly holds 1 to k - 1 persons
    (or trajectories, hence persons); ``smallest_group`` is the least upper bound among them
    (the smallest group certainly isolated holds at most that many persons) and ``risk`` is
    1 / the least lower bound in persons (a count of trajectories may be one person's: 1),
    the probability of picking a member at worst; 0 when nothing is isolated. ``possible``
    counts matched items whose counts may differ by 1 to k - 1.
    k is the larger of the two releases' (a group below it breaks that release's promise).
    """

    release_a: str
    release_b: str
    relation: str
    k: int
    items_a: int
    items_b: int
    matched: int
    isolated: int
    smallest_group: int | None
    risk: float
    possible: int
    kinds: tuple[KindSummary, ...]
    findings: tuple[ItemDifference, ...] = field(repr=False)
    note: str

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["findings"] = data["findings"][:50]  # the strongest first; the rest are counted
        return data


def window_relation(a: ReleaseWindow, b: ReleaseWindow) -> str:
    """How the half-open windows of ``a`` and ``b`` relate (one of the constants above)."""
    if (a.start, a.end) == (b.start, b.end):
        return EQUAL
    if b.start <= a.start and a.end <= b.end:
        return A_IN_B
    if a.start <= b.start and b.end <= a.end:
        return B_IN_A
    if a.start < b.end and b.start < a.end:
        return OVERLAPPING
    return ADJACENT if a.end == b.start or b.end == a.start else DISJOINT


def difference_bounds(inner: tuple[int, int], outer: tuple[int, int]) -> tuple[int, int]:
    """Bounds of outer - inner for a monotone count (outer >= inner): the counts' intervals.

    >>> difference_bounds((10, 10), (12, 12))  # exact counts
    (2, 2)
    >>> difference_bounds((3, 5), (6, 8))  # width 3, published 3 and 6
    (1, 5)
    """
    return max(0, outer[0] - inner[1]), outer[1] - inner[0]


def certainly_isolated(bounds: tuple[int, int], k: int) -> bool:
    """Whether a difference within ``bounds`` is certainly a group of 1 to k - 1 persons."""
    return bounds[0] >= 1 and bounds[1] <= k - 1


def possibly_differs(bounds: tuple[int, int], k: int) -> bool:
    """Whether some difference within ``bounds`` (signed) is 1 to k - 1 in absolute value."""
    low, high = bounds
    return (low <= k - 1 and high >= 1) or (low <= -1 and high >= 1 - k)


def read_window(conn: psycopg.Connection, schema: str) -> ReleaseWindow:
    """The window of release (or build) schema ``schema``, from its own manifest."""
    exists = fetch_row(conn, "db/relation_exists.sql", {"relation": f"{schema}.manifest"})
    if exists is None or not exists["present"]:
        raise InputError(f"{schema} is not a release (no manifest table); list them with "
                         "`anonymizers releases`")
    found = fetch_row(conn, "attacks/differencing_manifest.sql", release=schema)
    if found is None:
        raise InputError(f"{schema} has no manifest row: not a release")
    if found["method"] not in METHODS:
        raise InputError(f"{schema} was made by {found['method']!r}, a method this version "
                         "does not know")
    return ReleaseWindow(schema, found["dataset"], found["method"], int(found["k"]),
                         found["window_start"], found["window_end"], int(found["srid"]),
                         dict(found["parameters"]), found["composition_risk"],
                         found["source_fingerprint"])


def _items(window: ReleaseWindow) -> sql.Composable:
    """The release's matchable items as one subquery (its family's and its manifest's)."""
    family = compose_sql(f"{window.family}/attacks/differencing.sql", release=window.name)
    manifest = sql.SQL(read_sql("attacks/differencing_window.sql")).format(
        release=sql.Identifier(window.name), scope=sql.Literal(window.scope))
    return sql.SQL("SELECT * FROM (\n{}\n) AS family_items\nUNION ALL\n"
                   "SELECT * FROM (\n{}\n) AS window_items").format(family, manifest)


def _matched_rows(conn: psycopg.Connection, a: ReleaseWindow,
                  b: ReleaseWindow) -> list[dict[str, Any]]:
    query = sql.SQL(read_sql("attacks/differencing_match.sql")).format(
        items_a=_items(a), items_b=_items(b))
    # Composed of subqueries, not one file: a dict_row cursor reads it by name all the same.
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(query).fetchall()


def _not_monotone(kind: str, a: ReleaseWindow, b: ReleaseWindow) -> str | None:
    """Why ``kind`` is not monotone under nesting between ``a`` and ``b`` (None: it is)."""
    if kind in _WINDOW:
        return None  # matched on the scope: the same reading of the window
    if a.method == b.method and kind in METHODS[a.method].monotone_counts:
        return None  # the method declares these counts nest (its declaration says why)
    return FAMILIES[a.family].differencing.not_monotone.get(
        kind, "monotony under nesting not established")


def _classify(kind: str, label: str, a: tuple[int, int], b: tuple[int, int], relation: str,
              monotone: bool, k: int) -> ItemDifference | None:
    """The finding of one matched item, or None when it cannot isolate anybody."""
    if relation not in NESTED or (monotone and relation == EQUAL):
        return None  # no subset relation; or both count the same persons
    if monotone:
        inner, outer = (a, b) if relation == A_IN_B else (b, a)
        bounds = difference_bounds(inner, outer)
        certain = certainly_isolated(bounds, k)
        if not certain and not possibly_differs(bounds, k):
            return None
        return ItemDifference(kind, label, a, b, bounds, certain)
    signed = (b[0] - a[1], b[1] - a[0])
    if not possibly_differs(signed, k):
        return None
    return ItemDifference(kind, label, a, b, signed, False)


def difference_releases(conn: psycopg.Connection, release_a: str,
                        release_b: str) -> DifferencingResult:
    """The differencing attack on two releases (or build schemas) of one dataset.

    Parameters
    ----------
    conn : a connection that can read both schemas (the analyst's will do).
    release_a, release_b : the schemas.

    Returns
    -------
    DifferencingResult
        Items of each, matched items, and what their differences isolate.
    """
    a, b = read_window(conn, release_a), read_window(conn, release_b)
    if a.dataset != b.dataset:
        raise InputError(f"{release_a} is of dataset {a.dataset!r}, {release_b} of "
                         f"{b.dataset!r}: differencing compares releases of one dataset")
    relation, k = window_relation(a, b), max(a.k, b.k)
    per_kind: dict[str, list[Any]] = {}  # kind -> [matched, isolated, possible]
    findings: list[ItemDifference] = []
    items_a = items_b = 0
    for row in _matched_rows(conn, a, b):
        kind, label = row["kind"], row["label"]
        a_lo, a_hi, b_lo, b_hi = row["a_lo"], row["a_hi"], row["b_lo"], row["b_hi"]
        items_a += a_lo is not None
        items_b += b_lo is not None
        if a_lo is None or b_lo is None:
            continue
        counts = per_kind.setdefault(kind, [0, 0, 0])
        counts[0] += 1
        finding = _classify(kind, label, (a_lo, a_hi), (b_lo, b_hi), relation,
                            _not_monotone(kind, a, b) is None, k)
        if finding is not None:
            findings.append(finding)
            counts[1 if finding.certain else 2] += 1
    kinds = tuple(KindSummary(kind, m, (reason := _not_monotone(kind, a, b)) is None, reason,
                              iso, pos) for kind, (m, iso, pos) in sorted(per_kind.items()))
    certain = [f for f in findings if f.certain]
    findings.sort(key=lambda f: (not f.certain, f.difference[1], f.kind, f.label))
    return DifferencingResult(
        release_a, release_b, relation, k, items_a, items_b, sum(s.matched for s in kinds),
        len(certain), min((f.persons[1] for f in certain), default=None),
        max((1.0 / f.persons[0] for f in certain), default=0.0),
        sum(s.possible for s in kinds), kinds, tuple(findings), _note(relation, a, b))


def _note(relation: str, a: ReleaseWindow, b: ReleaseWindow) -> str:
    if relation not in NESTED:
        return (f"windows {relation}: no subset relation, counts of two such releases do "
                "not difference")
    accepted = [r.name for r in (a, b) if r.composition_risk]
    return ("composition risk accepted by " + ", ".join(accepted) if accepted
            else "no composition risk recorded")


def differencing_against_ledger(conn: psycopg.Connection,
                                release: str) -> list[DifferencingResult]:
    """The differencing attack on ``release`` and every release of the ledger of its dataset
    whose window overlaps, nests in or holds its own (the only pairs that difference).

    ``release`` may be a build schema not yet in the ledger.
    """
    window = read_window(conn, release)
    others = fetch_rows(conn, "release/overlapping_releases.sql", {
        "dataset": window.dataset, "source_fingerprint": window.source_fingerprint,
        "window_start": window.start, "window_end": window.end, "release_name": window.name})
    return [difference_releases(conn, release, str(row["release_name"])) for row in others]


def format_differencing(results: Iterable[DifferencingResult]) -> str:
    """The results as text: one block per pair, one row per kind of count."""
    blocks = []
    header = ("count", "matched", "monotone", "isolated (<k)", "possible")
    for r in results:
        rows = [(s.kind, str(s.matched), "yes" if s.monotone else "no", str(s.isolated),
                 str(s.possible)) for s in r.kinds]
        widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
        lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True))
                 for row in [header, *rows]]
        smallest = "-" if r.smallest_group is None else f"at most {r.smallest_group}"
        lines = [f"{r.release_a} vs {r.release_b}: windows {r.relation}, k = {r.k}; "
                 f"{r.items_a} and {r.items_b} items, {r.matched} matched; {r.isolated} "
                 f"certainly isolate fewer than k persons (smallest group: {smallest}; risk "
                 f"{r.risk:.4f}); {r.possible} possible; {r.note}", *lines]
        lines += [f"  not monotone, {s.kind}: {s.reason}" for s in r.kinds if not s.monotone]
        lines += [f"  isolated: {f.kind} {f.label}: difference {f.difference[0]}.."
                  f"{f.difference[1]}, {f.persons[0]}..{f.persons[1]} persons"
                  for f in r.findings[:5] if f.certain]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) if blocks else "no release of the ledger overlaps this one"


def results_json(results: Iterable[DifferencingResult]) -> str:
    """The results as a JSON list (``anonymizers attack --differencing --json``)."""
    return json.dumps([r.to_json() for r in results], indent=2, default=str)
