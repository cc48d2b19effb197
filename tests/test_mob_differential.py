"""MOB on three hours of real T-Drive taxis: the groups the anonymizer formed against what
the verifier's attack graph leaves every person and object (tests/differential/mob.py),
and that comparison noticing a group the release does not hold.

The taxis get QIDs as the real-data sweeps give them (graph strategy, at most 100 time
points, seed 1). No published person or object may count more persons for the anonymizer
than for the verifier, and none fewer than k for the verifier.
"""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from differential import Item
from differential.mob import MobComparison, compare_release, explain
from pipeline_helpers import run_steps
from psycopg import sql
from realdata_helpers import tdrive_window

from anonymizers.release.spec import ReleaseSpec

START, END = "2008-02-05T00:00:00Z", "2008-02-05T03:00:00Z"
K = 5




def tightest(comparison: MobComparison, kind: str) -> Item:
    """The item of ``kind`` whose verifier count exceeds the anonymizer's by the least."""
    return min((item for item in comparison.items if item.kind == kind),
               key=lambda item: (item.verifier - item.anonymizer, str(item.key)))


def plant_every_object(conn: psycopg.Connection, work: str, obj: str) -> None:
    """Write every published object into the MOB set of ``obj`` in the work schema."""
    conn.execute(sql.SQL(
        "INSERT INTO {s} (object_index, member_index) SELECT a.object_index, b.object_index "
        "FROM {i} AS a, {p} AS b WHERE a.object_id = %s::uuid ON CONFLICT DO NOTHING").format(
        s=sql.Identifier(work, "mob_sets"), i=sql.Identifier(work, "mob_object_ids"),
        p=sql.Identifier(work, "mob_published")), (obj,))


def publish_alone(conn: psycopg.Connection, work: str, build: str, obj: str,
                  cell_size: float) -> None:
    """Publish object ``obj`` at its person's own cell where it has one, at the cell of
    the CRS's origin elsewhere: a region that hides nobody else."""
    conn.execute(sql.SQL(
        "UPDATE {p} AS p SET geom = ST_MakeEnvelope(x * %(s)s, y * %(s)s, (x + 1) * %(s)s, "
        "(y + 1) * %(s)s, ST_SRID(p.geom)) "
        "FROM (SELECT tp.t, coalesce(c.cx, 0) AS x, coalesce(c.cy, 0) AS y "
        "      FROM {i} AS i CROSS JOIN {tp} AS tp LEFT JOIN {c} AS c "
        "        ON c.object_index = i.object_index AND c.t_index = tp.t_index "
        "      WHERE i.object_id = %(o)s::uuid) AS own "
        "WHERE p.object_id = %(o)s::uuid AND p.t = own.t").format(
        p=sql.Identifier(build, "positions"), c=sql.Identifier(work, "mob_cells"),
        i=sql.Identifier(work, "mob_object_ids"), tp=sql.Identifier(work, "mob_time_points")),
        {"s": cell_size, "o": obj})


@pytest.mark.realdata
def test_mob_symmetric_counts_no_group_of_a_tdrive_window_above_the_verifier(
        db_url: str, conn: psycopg.Connection, tmp_path: Path) -> None:
    from anonymizers.families.mob.qids import generate_and_store_qids
    from anonymizers.loading import load_dataset

    load_dataset(tdrive_window(tmp_path, START, END), "tdrive", url=db_url)
    generate_and_store_qids("tdrive", "graph", 100, 1, interval_s=300, url=db_url)
    spec = run_steps({"dataset": "tdrive", "method": "mob_symmetric", "k": K,
                      "start": START, "end": END}, until="manifest")
    assert spec is not None
    release = ReleaseSpec.from_dict(spec)
    work, build = release.work_schema, release.build_schema
    comparison = compare_release(conn, work, build)
    kinds = [item.kind for item in comparison.items]
    assert kinds.count("object") > 300 and kinds.count("person") > 200
    # No published person or object counts more for the anonymizer than for the verifier
    # (the group members the verifier does not count, if one does), none below k there.
    assert [explain(comparison, item) for item in comparison.overcounted()] == []
    assert comparison.below(K) == []
    assert min(item.anonymizer for item in comparison.items if item.kind == "person") >= K
    # ... and the verifier keeps the edge from every person to every object of its group.
    assert comparison.not_counted() == []
    assert comparison.details["gate_core_below_k"] == 0

    # The comparison itself: a group the release does not hold, in the anonymizer's
    # bookkeeping ...
    person = tightest(comparison, "person")
    with conn.transaction(force_rollback=True):
        plant_every_object(conn, work, str(person.key))
        again = compare_release(conn, work, build)
        assert ("person", person.key) in {(item.kind, item.key) for item in again.overcounted()}
        missing = {member for obj, member, why in again.not_counted()
                   if obj == person.key and why == "no edge"}
        assert len(missing) >= again.anonymizer.size(str(person.key)) - person.verifier
    # ... or in the release: an object that hides nobody but its own person. The regions
    # withheld elsewhere give every object many more candidates than its group, so only
    # the group members the verifier does not count show it.
    obj = str(tightest(comparison, "object").key)
    with conn.transaction(force_rollback=True):
        publish_alone(conn, work, build, obj, float(release.params["cell_size"]))
        again = compare_release(conn, work, build)
        lost = {(member, at) for member, at, why in again.not_counted() if why == "no edge"}
        assert lost and all(obj in pair for pair in lost)
        assert again.details["group_members_not_counted"] == len(again.not_counted()) > 0
