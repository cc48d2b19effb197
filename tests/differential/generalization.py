"""The generalization family (kam_cut, kam_rec, grid_kam_cut): the anonymizer's own counts
of a release against the verifier's recount.

A built (not yet published) Voronoi release keeps its run's work schema: the visits
progressive generalization wrote (``work.visits``, what the prefix tree counted) and the
flows with their exact person counts (``work.flows``). The verifier re-derives the visits
from raw fixes over the published cells. Where the two derivations agree, every
trajectory's sequence of published cells as the anonymizer saw it is a subsequence of
the verifier's (the verifier may see more: it does not join the visits on both sides of a
gap), so no published item can count fewer persons for the verifier than for the
anonymizer. :func:`compare_release` checks both, item by item.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import psycopg
from psycopg import sql

from anonymizers.families.generalization.verifier import derive_release_visits
from anonymizers.release.spec import area_of_use
from anonymizers.verifiers.base import read_release
from anonymizers.verifiers.containment import SupportIndex, is_subsequence
from anonymizers.verifiers.rederive import OUTSIDE
from differential import Comparison, Item

__all__ = ["GeneralizationComparison", "Sequences", "anonymizer_sequences", "compare_release",
           "explain", "verifier_sequences"]

Cells = tuple[int, ...]


@dataclass
class Sequences:
    """Per trajectory (by raw traj_id): its person and its published cells, in order."""

    owner: dict[str, str] = field(default_factory=dict)
    cells: dict[str, list[int]] = field(default_factory=dict)

    def append(self, traj: str, owner: str, cell: int) -> None:
        self.owner[traj] = owner
        seq = self.cells.setdefault(traj, [])
        if not seq or seq[-1] != cell:
            seq.append(cell)

    def index(self) -> tuple[SupportIndex, list[str]]:
        """A support index over the trajectories (persons numbered), and the persons."""
        trajs = sorted(self.owner)
        persons = sorted(set(self.owner.values()))
        number = {person: i for i, person in enumerate(persons)}
        return (SupportIndex.of_sequences([self.cells.get(t, []) for t in trajs],
                                          [number[self.owner[t]] for t in trajs]), persons)

    def persons_containing(self, pattern: Cells) -> set[str]:
        return {self.owner[t] for t, seq in self.cells.items() if is_subsequence(pattern, seq)}


@dataclass
class GeneralizationComparison(Comparison):
    """Items keyed by their release cell ids, with both sides' sequences per trajectory."""

    anonymizer: Sequences = field(default_factory=Sequences)
    verifier: Sequences = field(default_factory=Sequences)

    def not_contained(self) -> list[str]:
        """Trajectories whose anonymizer sequence is not a subsequence of the verifier's."""
        return [t for t, seq in self.anonymizer.cells.items()
                if not is_subsequence(seq, self.verifier.cells.get(t, []))]


def anonymizer_sequences(conn: psycopg.Connection, work: str) -> Sequences:
    """The run's visits (work.visits) in release cell ids; unpublished cells left out."""
    found = Sequences()
    rows = conn.execute(sql.SQL(
        "SELECT v.traj_id, v.user_id, m.release_cell_id FROM {} AS v JOIN {} AS m "
        "USING (cell_id) ORDER BY v.traj_id, v.visit_no").format(
        sql.Identifier(work, "visits"), sql.Identifier(work, "cell_map")))
    for traj, owner, cell in rows:
        found.append(traj, owner, cell)
    return found


def verifier_sequences(conn: psycopg.Connection, build: str) -> Sequences:
    """The verifier's derivation over the build schema's cells, by raw traj_id."""
    release = read_release(conn, build)
    manifest = release.manifest
    derived, _ = derive_release_visits(conn, build, release.dataset_id, manifest)
    # The verifier numbers trajectories in the order its query reads them (traj_id), over
    # the fixes it can project: the same filter names them here.
    box = area_of_use(manifest["srid"])
    names = conn.execute(
        "SELECT traj_id, min(user_id) FROM raw.points WHERE dataset_id = %s AND t >= %s "
        "AND t < %s AND lon BETWEEN %s AND %s AND lat BETWEEN %s AND %s "
        "GROUP BY traj_id ORDER BY traj_id",
        (release.dataset_id, manifest["window_start"], manifest["window_end"],
         box["lon_min"], box["lon_max"], box["lat_min"], box["lat_max"])).fetchall()
    assert len(names) == derived.n_trajectories, (len(names), derived.n_trajectories)
    found = Sequences()
    for traj, owner in names:
        found.owner[traj], found.cells[traj] = owner, []
    for number, cell in zip(derived.traj.tolist(), derived.cell.tolist(), strict=True):
        if cell != OUTSIDE:
            found.append(names[number][0], names[number][1], cell)
    return found


def compare_release(conn: psycopg.Connection, work: str, build: str
                    ) -> GeneralizationComparison:
    """Every published sequence and flow of ``build``, counted by both sides.

    The anonymizer's count of a sequence is the persons whose work sequence contains it
    (what KAM_CUT/KAM_REC count); of a flow, the persons work.flows says make the move.
    The verifier's is the persons whose re-derived sequence contains it."""
    anonymizer, verifier = anonymizer_sequences(conn, work), verifier_sequences(conn, build)
    patterns = sorted({tuple(row[0]) for row in conn.execute(sql.SQL(
        "SELECT DISTINCT cells FROM {}").format(sql.Identifier(build, "trajectories")))})
    flows = conn.execute(sql.SQL(
        "SELECT mf.release_cell_id, mt.release_cell_id, f.n_persons FROM {} AS f "
        "JOIN {} AS mf ON mf.cell_id = f.from_cell JOIN {} AS mt ON mt.cell_id = f.to_cell "
        "ORDER BY 1, 2").format(sql.Identifier(work, "flows"),
                                sql.Identifier(work, "cell_map"),
                                sql.Identifier(work, "cell_map"))).fetchall()
    ours, _ = anonymizer.index()
    theirs, _ = verifier.index()
    counted = dict(ours.supports(patterns))
    recounted = dict(theirs.supports(sorted({*patterns, *((a, b) for a, b, _ in flows)})))
    items = [Item("sequence", p, counted[p], recounted[p]) for p in patterns]
    items += [Item("flow", (a, b), int(n), recounted[(a, b)]) for a, b, n in flows]
    comparison = GeneralizationComparison(items, anonymizer=anonymizer, verifier=verifier)
    comparison.details["not_contained"] = len(comparison.not_contained())
    return comparison


def explain(comparison: GeneralizationComparison, item: Item) -> dict[str, object]:
    """The persons each side counts for ``item``, and the trajectories of those only the
    anonymizer counts, with both sides' sequences."""
    ours = comparison.anonymizer.persons_containing(item.key)
    theirs = comparison.verifier.persons_containing(item.key)
    only = sorted(ours - theirs)
    trajectories = {t: (comparison.anonymizer.cells[t], comparison.verifier.cells.get(t, []))
                    for t, owner in comparison.anonymizer.owner.items()
                    if owner in only and is_subsequence(item.key,
                                                        comparison.anonymizer.cells[t])}
    return {"item": (item.kind, list(item.key)), "anonymizer": sorted(ours),
            "verifier": sorted(theirs), "only_anonymizer": only,
            "their_trajectories": trajectories}
