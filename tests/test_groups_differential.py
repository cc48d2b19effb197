"""Trajectory groups on real T-Drive taxis: the anonymizer never counts a published group or
origin-destination group above the verifier's recount, and none falls below k there; and
the comparison itself notices a person too many in the anonymizer's bookkeeping or one
missing from what the release's members say (on the generated city, for the demographic
classes too, which T-Drive's persons cannot have)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest
from differential import Item
from differential.groups import GroupsComparison, compare_release
from pipeline_helpers import run_steps
from psycopg import sql
from realdata_helpers import tdrive_window

from anonymizers.release.spec import ReleaseSpec

# Three hours of every taxi of a working morning (UTC+8: 08:00 to 11:00 in Beijing).
START, END = "2008-02-05T00:00:00Z", "2008-02-05T03:00:00Z"
K = 5




def _built(params: dict[str, object]) -> ReleaseSpec:
    spec = run_steps(params, until="manifest")
    assert spec is not None
    return ReleaseSpec.from_dict(spec)


@contextmanager
def _planted(conn: psycopg.Connection, statement: str, release: ReleaseSpec,
             **ids: int) -> Iterator[None]:
    """``statement`` ({work}, {build} and the named ids filled in), rolled back after."""
    with conn.transaction(force_rollback=True):
        conn.execute(sql.SQL(statement).format(work=sql.Identifier(release.work_schema),
                                               build=sql.Identifier(release.build_schema),
                                               **{k: sql.Literal(v) for k, v in ids.items()}))
        yield


def _overcounted(conn: psycopg.Connection, release: ReleaseSpec) -> list[tuple[str, object]]:
    found = compare_release(conn, release.work_schema, release.build_schema).overcounted()
    return sorted((item.kind, item.key) for item in found)


def _first(comparison: GroupsComparison, kind: str) -> Item:
    return next(item for item in comparison.items if item.kind == kind)


@pytest.mark.realdata
def test_tg_nonoverlapping_counts_no_item_of_a_tdrive_window_above_the_verifier(
        db_url: str, conn: psycopg.Connection, tmp_path: Path) -> None:
    from anonymizers.loading import load_dataset

    load_dataset(tdrive_window(tmp_path, START, END), "tdrive", url=db_url)
    release = _built({"dataset": "tdrive", "method": "tg_nonoverlapping", "k": K})
    comparison = compare_release(conn, release.work_schema, release.build_schema)
    kinds = [item.kind for item in comparison.items]
    assert kinds.count("group") > 100 and kinds.count("od_group") > 3
    assert kinds.count("group_assigned") == kinds.count("group")
    assert comparison.overcounted() == [] and comparison.below(K) == []
    assert comparison.violations == []
    # The comparison notices a person too many in the anonymizer's count of a group ...
    group, od = _first(comparison, "group"), _first(comparison, "od_group")
    with _planted(conn, "UPDATE {work}.tg_groups SET n_persons = n_persons + 1 WHERE "
                  "group_index = (SELECT group_index FROM {work}.tg_group_ids WHERE "
                  "group_id = {g})", release, g=group.key):
        assert _overcounted(conn, release) == [("group", group.key),
                                               ("group_assigned", group.key)]
    # ... and a person missing from the release's private assignment and od members.
    with _planted(conn, "DELETE FROM {work}.tg_published_assignment WHERE group_id = {g} "
                  "AND user_id = (SELECT min(user_id) FROM {work}.tg_published_assignment "
                  "WHERE group_id = {g})", release, g=group.key):
        assert _overcounted(conn, release) == [("group_assigned", group.key)]
    with _planted(conn, "DELETE FROM {work}.tg_published_od_members WHERE od_group_id = {o} "
                  "AND user_id = (SELECT min(user_id) FROM {work}.tg_published_od_members "
                  "WHERE od_group_id = {o})", release, o=od.key):
        assert _overcounted(conn, release) == [("od_group", od.key)]


@pytest.mark.slow  # a release of the generated city with classes: minutes on a busy machine
def test_the_comparison_counts_demographic_classes_both_ways(
        loaded_city: str, conn: psycopg.Connection) -> None:
    release = _built({"dataset": loaded_city, "method": "tg_overlapping", "k": 3,
                      "demographics": "mondrian"})
    comparison = compare_release(conn, release.work_schema, release.build_schema)
    kinds = [item.kind for item in comparison.items]
    assert kinds.count("class") > 3 and kinds.count("class_box") == kinds.count("class")
    assert comparison.overcounted() == [] and comparison.below(3) == []
    key = _first(comparison, "class").key
    group, class_id = key
    with _planted(conn, "UPDATE {work}.tg_classes SET n_persons = n_persons + 1 WHERE "
                  "(group_index, class_index) = (SELECT group_index, class_index FROM "
                  "{work}.tg_class_ids WHERE group_id = {g} AND class_id = {c})",
                  release, g=group, c=class_id):
        assert _overcounted(conn, release) == [("class", key)]
    with _planted(conn, "DELETE FROM {work}.tg_published_class_members WHERE group_id = {g} "
                  "AND class_id = {c} AND user_id = (SELECT min(user_id) FROM "
                  "{work}.tg_published_class_members WHERE group_id = {g} AND class_id = {c})",
                  release, g=group, c=class_id):
        assert _overcounted(conn, release) == [("class", key)]
    # A published box narrower than the one the anonymizer counted its persons in (a box
    # wider than one five-year bin: narrowing one bin wide changes nothing).
    wide = conn.execute(sql.SQL(
        "SELECT group_id, class_id FROM {} WHERE age_hi - age_lo > 5 "
        "ORDER BY group_id, class_id LIMIT 1").format(
            sql.Identifier(release.build_schema, "demographic_classes"))).fetchone()
    assert wide is not None
    with _planted(conn, "UPDATE {build}.demographic_classes SET age_lo = age_hi - 5 WHERE "
                  "group_id = {g} AND class_id = {c}", release, g=wide[0], c=wide[1]):
        assert ("class_box", (wide[0], wide[1])) in _overcounted(conn, release)
