"""The matching attacker of seed 003 (Definition 2), brute force, from the published tables
and the raw fixes only: an outside recount of a MOB release's attack graph.

It imports neither the MOB anonymizer nor the verifier's attack graph
(``anonymizers.families.mob.verifier_attack_graph``), and derives every person's cell at every time
point in Python, from the fixes, by the position rule the manifest publishes
(``position_scope``, ``position_lookback``, ``interval``, ``cell_size``): a second
implementation of the rule that sql/mob/020_positions.sql and the verifier's SQL follow.
Small data only (a few thousand persons): every (person, object) pair is tested in Python.

1. Each object's person: one inside its region every time it has a position and, where
   the manifest's ``presence`` is ``published``, present exactly when the object is (a
   distorted version never lies, §3); a maximum matching of those pairs.
2. Definition 1: person I -- object O iff O's region holds I's cell at every time point
   of QID(I) (O present then); a person without a QID point matches every object.
3. Definition 2: drop every edge in no perfect matching (one pass: dropping such edges
   changes no perfect matching); the person's candidates are the objects left.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import psycopg
from psycopg import sql
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components, maximum_bipartite_matching

__all__ = ["MatchingAttack", "matching_attack"]


@dataclass(frozen=True)
class MatchingAttack:
    """Candidates of each published person after Definition 2's attacker, by user id."""

    candidates: dict[str, int]
    objects: int
    unmatched_objects: int

    def below(self, k: int) -> dict[str, int]:
        return {user: n for user, n in self.candidates.items() if n < k}


def matching_attack(conn: psycopg.Connection, schema: str) -> MatchingAttack:
    """Run the attacker of Definition 2 on release ``schema`` against the raw data."""
    manifest = _manifest(conn, schema)
    persons = _person_cells(conn, manifest)
    objects = _object_regions(conn, schema, manifest)
    owner = _counterparts(persons, objects, manifest["presence"] == "hidden")
    published = {p: o for o, p in owner.items()}
    qids = _qid_points(conn, manifest, persons)
    users = sorted(published)
    keys = sorted(objects)
    column = {o: j for j, o in enumerate(keys)}
    edges = [(i, column[o]) for i, user in enumerate(users) for o in keys
             if _links(persons[user], qids.get(user, []), objects[o])]
    kept = _in_some_perfect_matching(len(users), edges, [column[published[u]] for u in users])
    counts = dict.fromkeys(users, 0)
    for (i, _), keep in zip(edges, kept, strict=True):
        counts[users[i]] += int(keep)
    return MatchingAttack(counts, len(objects), len(objects) - len(owner))


# --------------------------------------------------------------------------- reading


def _manifest(conn: psycopg.Connection, schema: str) -> dict[str, Any]:
    row = conn.execute(sql.SQL(
        "SELECT d.dataset_id, m.window_start, m.window_end, m.srid, m.parameters "
        "FROM {}.manifest AS m JOIN raw.datasets AS d ON d.name = m.dataset").format(
        sql.Identifier(schema))).fetchone()
    assert row is not None
    dataset_id, start, end, srid, params = row
    return {"dataset_id": dataset_id, "start": start, "end": end, "srid": srid,
            "cell": float(params["cell_size"]), "interval": float(params["interval"]),
            "scope": params.get("position_scope") or "trajectory",
            "lookback": params.get("position_lookback"),
            "presence": params.get("presence") or "published"}


def _n_times(m: dict[str, Any]) -> int:
    return int(np.ceil((m["end"] - m["start"]).total_seconds() / m["interval"]))


def _person_cells(conn: psycopg.Connection,
                  m: dict[str, Any]) -> dict[str, dict[int, tuple[int, int]]]:
    """user -> {time point: cell}, by the manifest's position rule (carried forward)."""
    from anonymizers.release.spec import area_of_use

    bounds = area_of_use(m["srid"])
    rows = conn.execute(
        "SELECT user_id, traj_id, t, ST_X(ST_Transform(geom, %(srid)s)), "
        "ST_Y(ST_Transform(geom, %(srid)s)) FROM raw.points WHERE dataset_id = %(d)s "
        "AND t >= %(s)s AND t < %(e)s AND lon BETWEEN %(lon_min)s AND %(lon_max)s "
        "AND lat BETWEEN %(lat_min)s AND %(lat_max)s",
        {"srid": m["srid"], "d": m["dataset_id"], "s": m["start"], "e": m["end"],
         **bounds}).fetchall()
    groups: dict[Any, list[tuple[float, str, tuple[int, int]]]] = {}
    for user, traj, t, x, y in rows:
        key = user if m["scope"] == "person" else (user, traj)
        cell = (int(np.floor(x / m["cell"])), int(np.floor(y / m["cell"])))
        groups.setdefault(key, []).append(((t - m["start"]).total_seconds(), traj, cell))
    best: dict[str, dict[int, tuple[float, str, tuple[int, int]]]] = {}
    for key, fixes in groups.items():
        user = key if m["scope"] == "person" else key[0]
        mine = best.setdefault(user, {})
        for t_index, fix in _owned(sorted(fixes, key=lambda f: (f[0], f[1].encode())), m):
            old = mine.get(t_index)  # several running trajectories: the latest fix wins
            if old is None or (fix[0], fix[1].encode()) > (old[0], old[1].encode()):
                mine[t_index] = fix
    return {user: {t: fix[2] for t, fix in cells.items()} for user, cells in best.items()}


def _owned(fixes: list[tuple[float, str, tuple[int, int]]],
           m: dict[str, Any]) -> Iterator[tuple[int, tuple[float, str, tuple[int, int]]]]:
    """(time point, fix) of every time point a fix of one partition owns: from
    its time to before the next fix; the last one only at its own time (trajectory) or to
    the window's end (person); never more than the lookback after it."""
    interval, n = m["interval"], _n_times(m)
    for i, fix in enumerate(fixes):
        s = fix[0]
        first = int(np.ceil(s / interval))
        if i + 1 < len(fixes):
            last = int(np.ceil(fixes[i + 1][0] / interval)) - 1
        else:
            last = n - 1 if m["scope"] == "person" else int(np.floor(s / interval))
        if m["lookback"] is not None:
            last = min(last, int(np.floor((s + float(m["lookback"])) / interval)))
        for t_index in range(first, min(last, n - 1) + 1):
            yield t_index, fix


def _object_regions(conn: psycopg.Connection, schema: str,
                    m: dict[str, Any]) -> dict[str, dict[int, tuple[int, int, int, int]]]:
    """object -> {time point: inclusive cell ranges of its region}."""
    rows = conn.execute(sql.SQL(
        "SELECT object_id::text, t, ST_XMin(geom), ST_YMin(geom), ST_XMax(geom), "
        "ST_YMax(geom) FROM {}.positions").format(sql.Identifier(schema))).fetchall()
    regions: dict[str, dict[int, tuple[int, int, int, int]]] = {}
    c = m["cell"]
    for obj, t, x0, y0, x1, y1 in rows:
        t_index = round((t - m["start"]).total_seconds() / m["interval"])
        regions.setdefault(obj, {})[t_index] = (round(x0 / c), round(y0 / c),
                                                round(x1 / c) - 1, round(y1 / c) - 1)
    return regions


def _qid_points(conn: psycopg.Connection, m: dict[str, Any],
                persons: dict[str, dict[int, tuple[int, int]]]) -> dict[str, list[int]]:
    """user -> the time points of its QID at which it has a position (others cannot link)."""
    found: dict[str, set[int]] = {}
    for user, t in conn.execute("SELECT user_id, t FROM raw.qids WHERE dataset_id = %s "
                                "AND t >= %s AND t < %s",
                                (m["dataset_id"], m["start"], m["end"])).fetchall():
        t_index = int(np.floor((t - m["start"]).total_seconds() / m["interval"]))
        if t_index in persons.get(user, {}):
            found.setdefault(user, set()).add(t_index)
    return {user: sorted(points) for user, points in found.items()}


# --------------------------------------------------------------------------- the attack


def _inside(cell: tuple[int, int], box: tuple[int, int, int, int]) -> bool:
    return box[0] <= cell[0] <= box[2] and box[1] <= cell[1] <= box[3]


def _counterparts(persons: dict[str, dict[int, tuple[int, int]]],
                  objects: dict[str, dict[int, tuple[int, int, int, int]]],
                  presence_hidden: bool) -> dict[str, str]:
    """object -> its person: a maximum matching of the full matches (inside the region
    every time the person has a position; same presence unless presence is hidden)."""
    users, keys = sorted(persons), sorted(objects)
    edges = [(i, j) for j, o in enumerate(keys) for i, user in enumerate(users)
             if (presence_hidden or set(persons[user]) == set(objects[o]))
             and all(t in objects[o] and _inside(cell, objects[o][t])
                     for t, cell in persons[user].items())]
    match = _matching(len(users), len(keys), edges)
    return {keys[j]: users[i] for i, j in enumerate(match) if j >= 0}


def _links(cells: dict[int, tuple[int, int]], qid: list[int],
           region: dict[int, tuple[int, int, int, int]]) -> bool:
    """Definition 1's edge: the region holds the person's cell at every QID time point."""
    return all(t in region and _inside(cells[t], region[t]) for t in qid)


def _matching(n_rows: int, n_cols: int, edges: list[tuple[int, int]]) -> np.ndarray:
    if not edges:
        return np.full(n_rows, -1)
    rows, cols = zip(*edges, strict=True)
    graph = csr_matrix((np.ones(len(edges)), (rows, cols)), shape=(n_rows, n_cols))
    return maximum_bipartite_matching(graph, perm_type="column")


def _in_some_perfect_matching(n: int, edges: list[tuple[int, int]],
                              identity: list[int]) -> list[bool]:
    """For every edge: does some perfect matching use it?

    With the perfect matching ``identity`` (person i -- object identity[i]), giving person
    i the object of person q displaces q, who must take another object, and so on back
    to i's own object: the edge is in a perfect matching iff it lies on a cycle of the
    graph "p -> q when p is adjacent to q's object" (same strongly connected component).
    """
    person_of = {obj: person for person, obj in enumerate(identity)}
    heads = [person_of[j] for _, j in edges]
    tails = [i for i, _ in edges]
    graph = csr_matrix((np.ones(len(edges)), (tails, heads)), shape=(n, n))
    _, component = connected_components(graph, directed=True, connection="strong")
    return [bool(component[i] == component[q]) for i, q in zip(tails, heads, strict=True)]
