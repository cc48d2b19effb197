"""The SQL and prefix-tree steps of a generalization release (the tessellation's are in
:mod:`anonymizers.families.generalization.tessellation`).

Each step reads and writes only its run's work/build schema (plus raw, read-only), runs in
one transaction (:func:`anonymizers.pipeline.steps.step`) and gives the same outcome when
re-run. Steps take the ReleaseSpec as a plain dict (the only thing that travels by XCom);
data moves between steps through tables in the work schema.
"""

from __future__ import annotations

from typing import Any

import psycopg

from anonymizers.db.sqlfiles import run_sql_file
from anonymizers.pipeline.steps import step

__all__ = ["anonymize", "build_release", "grid_membership", "project", "visits_and_flows"]


def project(spec: dict[str, Any]) -> None:
    """The window's fixes in the metric CRS (``work.points``)."""
    with step("project", spec) as (release, conn):
        run_sql_file(conn, "generalization/010_project_window.sql", release.window_params(),
                     work=release.work_schema)


def grid_membership(spec: dict[str, Any]) -> None:
    """grid_kam_cut: each fix's square of the fixed grid (cells anchored at the CRS origin)."""
    with step("grid_membership", spec) as (release, conn):
        run_sql_file(conn, "generalization/020_grid_membership.sql",
                     {"cell_size": float(release.params["cell_size"]), "srid": release.srid},
                     work=release.work_schema)


def visits_and_flows(spec: dict[str, Any]) -> None:
    """Cell sequences, and flows between cells of at least k persons."""
    with step("visits_and_flows", spec) as (release, conn):
        run_sql_file(conn, "generalization/050_visits.sql", work=release.work_schema)
        run_sql_file(conn, "generalization/060_flows.sql", {"k": release.k},
                     work=release.work_schema)


def _owners(user_ids: list[str]) -> list[int]:
    """Owner per sequence: its person, numbered (k counts distinct persons)."""
    ids: dict[str, int] = {}
    return [ids.setdefault(user, len(ids)) for user in user_ids]


def anonymize(spec: dict[str, Any]) -> dict[str, int]:
    """The prefix-tree step in Python: KAM_CUT (grid_kam_cut, kam_cut) or KAM_REC, then
    the homogeneity cut: with ``min_continuations`` m > 1, every published sequence through
    a prefix of 1..m-1 distinct continuations is truncated to it (issue 7, finding 11)."""
    from anonymizers.families.generalization.homogeneity import limit_continuations
    from anonymizers.families.generalization.prefix_tree import (
        AnonymizedSequence,
        kam_cut,
        kam_rec,
    )

    with step("anonymize", spec) as (release, conn):
        rows = run_sql_file(conn, "generalization/070_sequences.sql", work=release.work_schema)
        sequences = [list(cells) for _traj, _user, cells in rows]
        owners = _owners([user for _traj, user, _cells in rows])
        if release.method == "kam_rec":
            published = kam_rec(sequences, owners, release.k, float(release.params["p"]),
                                int(release.params["lcs_candidates"]))
        else:
            published = kam_cut(sequences, owners, release.k)
        cut = limit_continuations([item.cells for item in published],
                                  int(release.params["min_continuations"]))
        truncated = sum(len(c) < len(item.cells) for c, item in zip(cut, published, strict=True))
        published = [AnonymizedSequence(item.source, c)
                     for item, c in zip(published, cut, strict=True)]
        run_sql_file(conn, "generalization/075_anonymized.sql", work=release.work_schema)
        table = psycopg.sql.Identifier(release.work_schema, "anonymized")
        copy_sql = psycopg.sql.SQL("COPY {} (source_traj_id, cells) FROM STDIN").format(table)
        with conn.cursor().copy(copy_sql) as copy:
            for item in published:
                copy.write_row((rows[item.source][0], list(item.cells)))
    return {"sequences_in": len(rows), "sequences_out": len(published),
            "sequences_truncated": truncated}


def build_release(spec: dict[str, Any]) -> None:
    """The release tables (cells, trajectories, flows) under the build schema."""
    with step("build_release", spec) as (release, conn):
        run_sql_file(conn, "generalization/080_build_release.sql",
                     {"srid": release.srid, "k": release.k,
                      "count_interval": release.count_interval},
                     work=release.work_schema, build=release.build_schema)
