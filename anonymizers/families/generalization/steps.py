"""The SQL and prefix-tree steps of a generalization release (the tessellation's are in
:mod:`anonymizers.families.generalization.tessellation`).

Each step reads and writes only its run's work/build schema (plus raw, read-only), runs in
one transaction (:func:`anonymizers.pipeline.steps.step`) and gives the same outcome when
re-run. Steps take the ReleaseSpec as a plain dict (the only thing that travels by XCom);
data moves between steps through tables in the work schema.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import psycopg
import pyarrow as pa

from anonymizers.db.arrow_reads import read_columns
from anonymizers.db.groups import copy_columns
from anonymizers.db.sqlfiles import compose_sql, copy_frame, run_sql_file
from anonymizers.families.generalization.declaration import (
    GeneralizationTraits,
    GridKamCutParams,
    KamRecParams,
    PrefixTreeParams,
)
from anonymizers.families.registry import method_entry
from anonymizers.processes import available_processes
from anonymizers.release.step import step
from anonymizers.sequences import ConcatenatedSequences

if TYPE_CHECKING:
    from anonymizers.families.generalization.prefix_tree import Publication
    from anonymizers.release.spec import ReleaseSpec

__all__ = ["anonymize", "build_release", "grid_membership", "project",
           "visits_and_flows"]


def project(spec: dict[str, Any]) -> None:
    """The window's fixes in the metric CRS (``work.points``)."""
    with step("project", spec) as (release, conn):
        run_sql_file(conn, "generalization/010_project_window.sql", release.window_params(),
                     work=release.work_schema)


def grid_membership(spec: dict[str, Any]) -> None:
    """grid_kam_cut: each fix's square of the fixed grid (cells anchored at the CRS origin)."""
    with step("grid_membership", spec) as (release, conn):
        run_sql_file(conn, "generalization/020_grid_membership.sql",
                     {"cell_size": GridKamCutParams.of(release.params).cell_size,
                      "srid": release.srid},
                     work=release.work_schema)


def visits_and_flows(spec: dict[str, Any]) -> None:
    """Cell sequences (the grid's memberships), flows between cells of at least k persons
    and the input trajectories' lengths (the Voronoi methods make all three in progressive
    generalization)."""
    with step("visits_and_flows", spec) as (release, conn):
        run_sql_file(conn, "generalization/050_visits.sql", work=release.work_schema)
        run_sql_file(conn, "generalization/060_flows.sql", {"k": release.k},
                     work=release.work_schema)
        run_sql_file(conn, "generalization/057_input_trajectories.sql", work=release.work_schema)


def anonymize(spec: dict[str, Any]) -> dict[str, int]:
    """The prefix-tree step in Python: KAM_CUT (grid_kam_cut, kam_cut) or KAM_REC, then
    the homogeneity cut: with ``min_continuations`` m > 1, every published sequence through
    a prefix of 1..m-1 distinct continuations is truncated to it."""
    from anonymizers.families.generalization.homogeneity import limit_continuations
    from anonymizers.families.generalization.prefix_tree import (
        kam_cut_publication,
        kam_rec_publication,
    )

    with step("anonymize", spec) as (release, conn):
        sequences, owners = _read_sequences(conn, release)
        traits: GeneralizationTraits = method_entry(release.method).traits
        if traits.recovery:
            recovery = KamRecParams.of(release.params)
            published = kam_rec_publication(sequences, owners, release.k, recovery.p,
                                            recovery.lcs_candidates,
                                            processes=available_processes())
        else:
            published = kam_cut_publication(sequences, owners, release.k)
        # Whether a published sequence goes on in 1..m-1 ways depends only on which
        # sequences are published, not on how often: the distinct ones are enough.
        cut = published.replaced(limit_continuations(
            published.patterns, PrefixTreeParams.of(release.params).min_continuations))
        _write_published(conn, release, cut)
    return {"sequences_in": len(sequences), "sequences_out": _published_count(cut),
            "sequences_truncated": _truncated_count(published, cut)}


def _read_sequences(conn: psycopg.Connection,
                    release: ReleaseSpec) -> tuple[ConcatenatedSequences, np.ndarray]:
    """The generalized trajectories' cells, end to end, and their owners, in trajectory
    number order (a temporary numbering, 068_sequence_numbers.sql)."""
    run_sql_file(conn, "generalization/068_sequence_numbers.sql", work=release.work_schema)
    numbers = copy_columns(conn, "generalization/069_sequence_owners.sql",
                           {"owner": pa.int32(), "n_visits": pa.int64()})
    cells = read_columns(conn, "generalization/070_sequences.sql", {"cell_id": pa.int32()},
                         work=release.work_schema)["cell_id"]
    starts = np.concatenate(([0], np.cumsum(numbers["n_visits"])))
    if starts[-1] != cells.size:  # nothing writes the visits after their step: a bug
        raise RuntimeError(f"read {cells.size} cells for {starts[-1]} visits")
    return ConcatenatedSequences(cells, starts), numbers["owner"]


def _write_published(conn: psycopg.Connection, release: ReleaseSpec,
                     published: Publication) -> None:
    """work.anonymized: one row per trajectory that publishes a sequence."""
    run_sql_file(conn, "generalization/075_anonymized.sql", work=release.work_schema)
    with conn.cursor().copy(compose_sql("generalization/076_copy_published_patterns.sql")) as copy:
        for number, cells in enumerate(published.patterns):
            copy.write_row((number, list(cells)))
    sources = np.flatnonzero(published.pattern_of >= 0)
    copy_frame(conn, "pg_temp", "published_sources",
               pd.DataFrame({"traj_no": sources, "pattern_no": published.pattern_of[sources]}))
    run_sql_file(conn, "generalization/077_fill_anonymized.sql", work=release.work_schema)


def _published_count(published: Publication) -> int:
    """Trajectories that publish a sequence."""
    return int(np.count_nonzero(published.pattern_of >= 0))


def _truncated_count(before: Publication, after: Publication) -> int:
    """Trajectories whose published sequence ``after`` is shorter than ``before``."""
    shorter = np.array([len(cut) < len(whole) for cut, whole
                        in zip(after.patterns, before.patterns, strict=True)], dtype=bool)
    return int(np.count_nonzero(shorter[before.pattern_of[before.pattern_of >= 0]]))


def build_release(spec: dict[str, Any]) -> None:
    """The release tables (cells, trajectories, flows) under the build schema."""
    with step("build_release", spec) as (release, conn):
        run_sql_file(conn, "generalization/080_build_release.sql",
                     {"srid": release.srid, "k": release.k,
                      "count_interval": release.count_interval},
                     work=release.work_schema, build=release.build_schema)
