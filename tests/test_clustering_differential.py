"""TCAA and MLA on two hours of real T-Drive taxis: the anonymizer never counts a published
group or region above the verifier's recount (tests/differential/clustering.py), and the
comparison notices when the two disagree (a member planted in the anonymizer's
bookkeeping, a rectangle moved away from its members in the release)."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from differential.clustering import compare_release, explain
from pipeline_helpers import run_steps
from psycopg import sql
from realdata_helpers import tdrive_window

from anonymizers.release.spec import ReleaseSpec

# Two hours of every taxi of a Sunday morning in Beijing (8,100 fixes, 460 persons), as
# the release's explicit window: the default one ends at the last fix, one second short of
# TCAA's second whole slice.
START, END = "2008-02-03T00:00:00Z", "2008-02-03T02:00:00Z"
K = 5




@pytest.fixture
def built(db_url: str, tmp_path: Path, request: pytest.FixtureRequest) -> ReleaseSpec:
    """A release of the window by ``request.param``, built up to its manifest (not
    verified): its work schema still holds the anonymizer's bookkeeping."""
    from anonymizers.loading import load_dataset

    load_dataset(tdrive_window(tmp_path, START, END), "tdrive", url=db_url)
    spec = run_steps({"dataset": "tdrive", "method": request.param, "k": K, "start": START,
                      "end": END}, until="manifest")
    assert spec is not None
    return ReleaseSpec.from_dict(spec)


def _execute(conn: psycopg.Connection, statement: str, group: int, *schemas: str) -> None:
    conn.execute(sql.SQL(statement).format(*(sql.Identifier(s) for s in schemas)),
                 {"group": group})


@pytest.mark.realdata
@pytest.mark.parametrize("built", ["tcaa", "mla_iterative_kmeans"], indirect=True)
def test_no_group_or_region_of_a_tdrive_window_counts_more_for_the_anonymizer(
        built: ReleaseSpec, conn: psycopg.Connection) -> None:
    comparison = compare_release(conn, built.work_schema, built.build_schema)
    kinds = [item.kind for item in comparison.items]
    assert kinds.count("group") >= 5 and kinds.count("region") > kinds.count("group")
    assert [explain(comparison, item) for item in comparison.overcounted()] == []
    assert comparison.below(K) == []
    assert comparison.members_not_found() == []


@pytest.mark.realdata
@pytest.mark.parametrize("built", ["tcaa"], indirect=True)
def test_the_comparison_notices_a_planted_member_and_a_rectangle_moved_off_its_members(
        built: ReleaseSpec, conn: psycopg.Connection) -> None:
    work, build = built.work_schema, built.build_schema
    first, second = (row[0] for row in conn.execute(sql.SQL(
        "SELECT group_id FROM {} ORDER BY group_id LIMIT 2").format(
        sql.Identifier(work, "cl_group_sizes"))))
    # The anonymizer's bookkeeping: the first group counts one person more than the window
    # holds (whatever outsiders the verifier finds inside its rectangles, fewer).
    _execute(conn, "UPDATE {}.cl_group_sizes SET n_persons = 1 + (SELECT count(DISTINCT "
             "person_index) FROM {}.cl_fixes) WHERE group_id = %(group)s", first, work, work)
    # The release: the second group's rectangle at seq 0 moved a lattice cell beyond every
    # published rectangle, where none of its members is.
    _execute(conn, "UPDATE {}.group_regions AS r SET geom = ST_Translate(r.geom, "
             "e.x1 - ST_XMin(r.geom) + 50, 0) FROM (SELECT max(ST_XMax(geom)) AS x1 FROM "
             "{}.group_regions) AS e WHERE r.group_id = %(group)s AND r.seq = 0",
             second, build, build)
    comparison = compare_release(conn, work, build)
    over = {(item.kind, item.key) for item in comparison.overcounted()}
    assert ("group", first) in over
    assert {("group", second), ("region", (second, 0))} <= over
    assert {group for group, _ in comparison.members_not_found()} == {second}
    assert {item.key for item in comparison.below(K)} >= {second, (second, 0)}
