"""The MOB family (mob_symmetric, mob_extreme_union): the groups the anonymizer formed
against what the verifier's attack graph leaves every person and object.

The anonymizer makes each published object O indistinguishable from the members of its MOB
set S(O) (seed 003 §5.1: Extreme Union's anonymization group AG(O), Symmetric
Anonymization's hiding set HS(O)), which the anonymize step keeps in ``work.mob_sets``. It
keeps no count per object: the count here is derived from those sets the way the
anonymizer's own outside-QIDs rule reads them (``hiding_groups`` in
``anonymizers.families.mob.outside_qids``): O's *group* is O, the members of S(O) and the
objects whose set holds O, and, where O is published blank (presence hidden: the withheld
region at every time point), every blank object. The relation is symmetric, and every
pair (O, O') of it is an edge of the attack graph both ways, (I_O, O') and (I_O', O), at
the QID times of I_O and I_O' (Generalize puts both in one class there, or the withheld
region holds everything), so swapping the two in the true pairing gives a perfect
matching that uses it: the attacker of Definition 2 can prune none of them. Hence, if the
verifier derives what the anonymizer did, it counts at least |group(O)|

* ``person`` items (every published person with a QID, keyed by the object id the
  anonymizer published for them): the candidate objects the attacker leaves the person;
* ``person_core`` items (the same persons): the person's degree in the symmetric core of
  the verifier's attack graph w.r.t. the anonymizer's own pairing of persons and objects
  (Definition 3(ii) with the true counterparts);
* ``object`` items (every published object, keyed by its object id): the candidate
  persons the attacker leaves the object;

and an item the anonymizer counts more for is a place where the two derive cells, QIDs or
regions differently. The totals rarely show a small difference: where a person has no
position, every object is published at the withheld region (presence hidden), which
gives every person many more candidates than its group. So every (object, member) pair of
the groups whose edge the verifier does not keep is listed as well
(:meth:`MobComparison.not_counted`; ``group_members_not_counted`` in the details).

The gate cannot know the true pairing: it checks the core under a pairing of its own,
which can be smaller (presence hidden makes nearly every object a full match of several
persons); ``gate_core_below_k`` in the details counts the persons it would refuse for
that. The verifier's counts are those of its gate
(:func:`anonymizers.families.mob.verifier.count_mob_release`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import psycopg
from psycopg import sql

from anonymizers.families.mob.verifier import MobCounts, count_mob_release
from differential import Comparison, Item

__all__ = ["AnonymizerGroups", "MobComparison", "anonymizer_groups", "compare_release",
           "explain"]


@dataclass
class AnonymizerGroups:
    """The anonymizer's published objects (by object id) and the group of each.

    ``person`` maps each published object to the raw user id of its person (never
    published; it pairs the anonymizer's objects with the verifier's persons),
    ``with_qid`` holds the objects whose person has a QID in the window, ``group`` each
    object's group (object ids, itself included)."""

    person: dict[str, str] = field(default_factory=dict)
    blank: set[str] = field(default_factory=set)
    with_qid: set[str] = field(default_factory=set)
    group: dict[str, set[str]] = field(default_factory=dict)

    def size(self, obj: str) -> int:
        return len(self.group[obj])


def anonymizer_groups(conn: psycopg.Connection, work: str) -> AnonymizerGroups:
    """Every published object's group, from the run's work tables (see the module
    docstring): mob_published, mob_sets, mob_object_ids, mob_objects and mob_qids."""
    found = AnonymizerGroups()
    rows = conn.execute(sql.SQL(
        "SELECT p.object_index, p.blank, i.object_id::text, o.user_id, "
        "EXISTS (SELECT 1 FROM {q} AS q WHERE q.object_index = p.object_index) "
        "FROM {p} AS p JOIN {i} AS i USING (object_index) JOIN {o} AS o USING (object_index) "
        "ORDER BY p.object_index").format(
        q=sql.Identifier(work, "mob_qids"), p=sql.Identifier(work, "mob_published"),
        i=sql.Identifier(work, "mob_object_ids"), o=sql.Identifier(work, "mob_objects")))
    name: dict[int, str] = {}
    for index, blank, object_id, user, has_qid in rows:
        name[index] = object_id
        found.person[object_id] = user
        found.group[object_id] = {object_id}
        if blank:
            found.blank.add(object_id)
        if has_qid:
            found.with_qid.add(object_id)
    for index, member in conn.execute(sql.SQL(
            "SELECT object_index, member_index FROM {}").format(
            sql.Identifier(work, "mob_sets"))):
        # a set's members are published (the step refuses a suppressed one)
        found.group[name[index]].add(name[member])
        found.group[name[member]].add(name[index])
    for obj in found.blank:
        found.group[obj] |= found.blank
    return found


@dataclass
class MobComparison(Comparison):
    """Items keyed by object id, with both sides' derivations for :meth:`not_counted`
    and :func:`explain`."""

    anonymizer: AnonymizerGroups = field(default_factory=AnonymizerGroups)
    verifier: MobCounts | None = None

    @cached_property
    def edges(self) -> Edges:
        assert self.verifier is not None
        return Edges(self.anonymizer, self.verifier)

    def not_counted(self) -> list[tuple[str, str, str]]:
        """(object, member, why) for every member of an object's group whose edge from
        the object's person the verifier does not keep."""
        return [(obj, member, state) for obj in sorted(self.anonymizer.group)
                for member in sorted(self.anonymizer.group[obj])
                if (state := self.edges.state(obj, member)) != "kept"]


class Edges:
    """The verifier's attack graph, looked up by the anonymizer's object ids (a person by
    the object the anonymizer published for them), and the anonymizer's pairing in it."""

    def __init__(self, ours: AnonymizerGroups, theirs: MobCounts) -> None:
        self.graph = graph = theirs.counts.graph
        self.kept = dict(zip(zip(graph.person.tolist(), graph.obj.tolist(), strict=True),
                             theirs.counts.pruning.kept.tolist(), strict=True))
        object_at, person_at = _index(theirs.objects), _index(theirs.persons)
        self.object_at = object_at
        self.person_at = {obj: person_at[user] for obj, user in ours.person.items()
                          if user in person_at}
        # the anonymizer's pairing: the O-node of each I-node's own object, and back
        self.own = np.full(graph.n_persons, -1, dtype=np.int64)
        self.holder = np.full(graph.n_objects, -1, dtype=np.int64)
        for obj, p in self.person_at.items():
            if obj in object_at:
                self.own[p], self.holder[object_at[obj]] = object_at[obj], p

    def state(self, person_of: str, obj: str, core: bool = False) -> str:
        """What the verifier makes of the edge from the person the anonymizer published
        as object ``person_of`` to object ``obj``: "kept" when the attacker of Definition
        2 keeps it (with ``core``: when its mirror under the anonymizer's pairing is an
        edge too), else why not."""
        p, o = self.person_at.get(person_of), self.object_at.get(obj)
        if p is None or o is None:
            return "not published for the verifier"
        kept = True if self.graph.universal[p] else self.kept.get((p, o))
        if kept is None:
            return "no edge"
        if core:
            return "kept" if self._has_edge(int(self.holder[o]), int(self.own[p])) else \
                "no mirror"
        return "kept" if kept else "pruned"

    def _has_edge(self, p: int, o: int) -> bool:
        return p >= 0 and o >= 0 and (bool(self.graph.universal[p]) or (p, o) in self.kept)

    def core(self, person_of: str) -> int:
        """The person's degree in the symmetric core w.r.t. the anonymizer's pairing."""
        p = self.person_at.get(person_of)
        if p is None:
            return 0
        graph = self.graph
        objects = (range(graph.n_objects) if graph.universal[p]
                   else graph.obj[graph.person == p].tolist())
        return sum(1 for o in objects if self._has_edge(int(self.holder[o]), int(self.own[p])))


def _index(names: list[str]) -> dict[str, int]:
    return {name: i for i, name in enumerate(names)}


def compare_release(conn: psycopg.Connection, work: str, build: str) -> MobComparison:
    """Every published object and every published person with a QID of ``build``: the
    size of the group the anonymizer formed for it against the verifier's counts."""
    ours = anonymizer_groups(conn, work)
    theirs = count_mob_release(conn, build)
    comparison = MobComparison([], anonymizer=ours, verifier=theirs)
    edges, pruning = comparison.edges, theirs.counts.pruning
    for obj in sorted(ours.group):
        node = edges.object_at.get(obj)
        comparison.items.append(Item("object", obj, ours.size(obj), 0 if node is None else
                                     int(pruning.object_candidates[node])))
    for obj in sorted(ours.with_qid):
        node = edges.person_at.get(obj)
        comparison.items.append(Item("person", obj, ours.size(obj), 0 if node is None else
                                     int(pruning.person_candidates[node])))
        comparison.items.append(Item("person_core", obj, ours.size(obj), edges.core(obj)))
    comparison.details.update(_details(ours, theirs, theirs.counts.graph.universal))
    comparison.details["group_members_not_counted"] = len(comparison.not_counted())
    return comparison


def _details(ours: AnonymizerGroups, theirs: MobCounts, universal: np.ndarray
             ) -> dict[str, Any]:
    """The smallest group and counts of each side, the gate's own core, and where the two
    sides' persons, QIDs and pairings differ (counts)."""
    counts, k = theirs.counts, min((ours.size(obj) for obj in ours.with_qid), default=0)
    observed = ~universal
    their_qid = {user for user, seen in zip(theirs.persons, observed.tolist(), strict=True)
                 if seen}
    our_qid = {ours.person[obj] for obj in ours.with_qid}
    object_of = {user: obj for obj, user in ours.person.items()}
    paired = dict(zip(theirs.persons, theirs.objects, strict=True))
    n_objects = counts.graph.n_objects
    return {
        "min_group": k,
        "min_person_candidates": int(counts.pruning.person_candidates[observed].min(
            initial=n_objects)),
        "min_object_candidates": int(counts.pruning.object_candidates.min(
            initial=counts.graph.n_persons)),
        "min_gate_core": int(counts.core[observed].min(initial=n_objects)),
        "gate_core_below_k": int(np.count_nonzero(observed & (counts.core < theirs.k))),
        "persons_without_qid": int(universal.sum()),
        "persons_only_anonymizer": len(set(object_of) - set(paired)),
        "persons_only_verifier": len(set(paired) - set(object_of)),
        "qid_only_anonymizer": len(our_qid - their_qid),
        "qid_only_verifier": len(their_qid - our_qid),
        "objects_paired_otherwise": sum(1 for user, obj in paired.items()
                                        if object_of.get(user) != obj),
        "gate_counterparts_swapped": int(np.count_nonzero(
            counts.counterparts != np.arange(counts.counterparts.size))),
    }


def explain(comparison: MobComparison, item: Item) -> dict[str, object]:
    """The members of ``item``'s group the verifier does not count for it, each with why:
    no edge in its attack graph (a derivation differs), pruned by the attacker, or (for
    ``person_core``) no mirror under the anonymizer's pairing."""
    key, edges = str(item.key), comparison.edges
    group = sorted(comparison.anonymizer.group[key])
    if item.kind == "object":  # the persons of the group, at this object
        states = {member: edges.state(member, key) for member in group}
    else:  # this person, at the objects of the group
        states = {member: edges.state(key, member, item.kind == "person_core")
                  for member in group}
    return {"item": (item.kind, key, item.anonymizer, item.verifier),
            "not_counted": {m: state for m, state in states.items() if state != "kept"}}
