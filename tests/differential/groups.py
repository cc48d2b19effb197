"""The trajectory-groups family (tg_overlapping, tg_nonoverlapping): the anonymizer's own
counts of a release against the verifier's recount.

A built (not yet published) groups release keeps its run's work schema: what the
anonymizer counted when it decided to publish each item, and the maps from the release's
fresh ids to its own indexes (``tg_group_ids``, ``tg_od_ids``, ``tg_class_ids``). The
verifier recounts every published item from the raw data over the release's tables
(:func:`anonymizers.families.groups.verifier.recount_items`, the counts its checks hold to k). Kinds
of items, keyed by the release's ids, and how each side counts them:

``group`` (key: ``group_id``)
    anonymizer: ``tg_groups.n_persons``, the distinct persons it found travelling the
    sequence (tg_overlapping: every occurrence; tg_nonoverlapping: the trajectories the
    greedy assigned to the group) and published on (``n_persons >= k``); verifier: the
    distinct persons whose re-derived window sequence contains the group's sequence.
``group_assigned`` (tg_nonoverlapping; key: ``group_id``)
    anonymizer: ``tg_groups.n_persons`` again; verifier: the distinct persons of the private
    assignment whose assigned visits spell the group's sequence on the verifier's own
    sequences.
``od_group`` (key: ``od_group_id``)
    anonymizer: ``tg_od.n_persons``; verifier: the distinct private members that are
    assigned to the od group's trajectory group and whose re-derived window sequence starts
    (origin) / ends (destination) at one of its places.
``class`` (key: ``(group_id, class_id)``)
    anonymizer: ``tg_classes.n_persons`` (the class's persons before boundary hiding, what
    its count interval is published on); verifier: the class's distinct private members.
``class_box`` (key: ``(group_id, class_id)``)
    anonymizer: it keeps no count of the persons inside a class's hidden box (it drops a
    class whose hidden box holds fewer than k of the group's persons, and forgets the
    count), so it is derived here the way the demographic step does: the group's persons
    of its assignment (``tg_assignment``) with every attribute known (``raw.persons``)
    inside the box [hidden_lower, hidden_upper); verifier: the persons of the group (its
    occurrences, or under tg_nonoverlapping its valid assignment) inside the published box.

Places are not counted items: they are the public network (dataset places or the fixed
grid), published when a group or od group names them; the verifier checks that apart.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import psycopg
from psycopg import sql

from anonymizers.families.groups.steps import (
    _group_persons,
    _person_values,
    parse_demographic_grid,
)
from anonymizers.families.groups.verifier import ItemCounts, recount_items
from anonymizers.verifiers.base import read_release
from differential import Comparison, Item

__all__ = ["GroupsComparison", "anonymizer_counts", "compare_release"]

# Kinds of items and the verifier's count each is compared with.
VERIFIER_KIND = {"group": "group", "group_assigned": "group_assigned", "od_group": "od_group",
                 "class": "class_members", "class_box": "class_inside"}


@dataclass
class GroupsComparison(Comparison):
    """Items of every kind, and the verifier's own result and counts."""

    recount: ItemCounts = field(default_factory=ItemCounts)
    violations: list[str] = field(default_factory=list)


def _rows(conn: psycopg.Connection, query: str, *tables: tuple[str, str]
          ) -> list[tuple[Any, ...]]:
    return conn.execute(sql.SQL(query).format(
        *(sql.Identifier(*table) for table in tables))).fetchall()


def anonymizer_counts(conn: psycopg.Connection, work: str, build: str
                      ) -> dict[str, dict[Hashable, int]]:
    """Per kind, the persons the anonymizer's work tables count for each published item."""
    found: dict[str, dict[Hashable, int]] = {}
    found["group"] = dict(_rows(
        conn, "SELECT i.group_id, g.n_persons FROM {} AS g JOIN {} AS i USING (group_index)",
        (work, "tg_groups"), (work, "tg_group_ids")))
    found["od_group"] = dict(_rows(
        conn, "SELECT o.od_group_id, od.n_persons FROM {} AS od JOIN {} AS o USING (od_index)",
        (work, "tg_od"), (work, "tg_od_ids")))
    found["class"] = {(g, c): int(n) for g, c, n in _rows(
        conn, "SELECT d.group_id, d.class_id, c.n_persons FROM {} AS c "
        "JOIN {} AS d USING (group_index, class_index)",
        (work, "tg_classes"), (work, "tg_class_ids"))}
    found["class_box"] = _class_box_counts(conn, work, build)
    return found


def _class_box_counts(conn: psycopg.Connection, work: str, build: str
                      ) -> dict[Hashable, int]:
    """Per published class, the persons of its group (the anonymizer's assignment) with
    every attribute known inside its hidden box, as the demographic step counts them."""
    boxes = _rows(conn, "SELECT d.group_id, d.class_id, c.group_index, c.hidden_lower, "
                  "c.hidden_upper FROM {} AS c JOIN {} AS d USING (group_index, class_index)",
                  (work, "tg_classes"), (work, "tg_class_ids"))
    if not boxes:
        return {}
    release = read_release(conn, build)
    grid = parse_demographic_grid(str(release.parameters["demographic_grid"]))
    members = _group_persons(conn, work)
    known = _person_values(conn, work, release.dataset_id, grid).dropna().set_index(
        "person_index")
    persons = members.groupby("group_index")["person_index"].apply(np.asarray)
    counted: dict[Hashable, int] = {}
    for group_id, class_id, group_index, lower, upper in boxes:
        people = known.index.intersection(persons.get(group_index, np.empty(0, np.int64)))
        points = known.loc[people, list(grid.names)].to_numpy(float)
        inside = ((points >= np.asarray(lower)) & (points < np.asarray(upper))).all(axis=1)
        counted[(group_id, class_id)] = int(inside.sum())
    return counted


def compare_release(conn: psycopg.Connection, work: str, build: str) -> GroupsComparison:
    """Every published group, od group and demographic class of ``build``, counted by both
    sides (module docstring); ``details`` counts the verifier's violations."""
    ours = anonymizer_counts(conn, work, build)
    result, theirs = recount_items(conn, build)
    items: list[Item] = []
    for kind, verifier_kind in VERIFIER_KIND.items():
        source = ours["group"] if kind == "group_assigned" else ours[kind]
        if kind == "group_assigned" and verifier_kind not in theirs.counts:
            continue  # tg_overlapping: every occurrence counts, no assignment to check
        recounted = theirs.counts.get(verifier_kind, {})
        items += [Item(kind, key, int(n), recounted.get(key, 0))
                  for key, n in sorted(source.items(), key=lambda pair: repr(pair[0]))]
    comparison = GroupsComparison(items, recount=theirs, violations=list(result.violations))
    comparison.details["verifier_violations"] = len(result.violations)
    # Where the verifier counts more (tg_nonoverlapping's groups: it counts every person
    # travelling the sequence, the anonymizer those it assigned), per kind: not a fault.
    for kind in VERIFIER_KIND:
        fewer = sum(1 for item in items if item.kind == kind and item.anonymizer < item.verifier)
        if fewer:
            comparison.details[f"{kind}_counted_fewer"] = fewer
    return comparison
