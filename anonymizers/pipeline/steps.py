"""The steps of a generalization release, one function per Airflow task.

Each step reads and writes only its run's work/build schema (plus raw, read-only), runs
in one transaction, and gives the same outcome when re-run. Steps take and return the
ReleaseSpec as a plain dict (the only thing that travels by XCom); data moves between
steps through tables in the work schema.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import psycopg

from anonymizers.db.connection import connect
from anonymizers.db.sqlfiles import run_sql_file
from anonymizers.errors import PrivacyViolation
from anonymizers.release import gate
from anonymizers.release.spec import ReleaseSpec

__all__ = [
    "FAULT_ENV",
    "anonymize",
    "build_release",
    "cleanup",
    "grid_membership",
    "metrics",
    "prepare",
    "project",
    "publish",
    "verify",
    "visits_and_flows",
]

log = logging.getLogger(__name__)

# Test hook: "step" raises in that step, "step:hang" blocks it (to kill the process).
FAULT_ENV = "ANONYMIZERS_INJECT_FAULT"


def _injected_fault(step: str) -> None:
    target, _, mode = os.environ.get(FAULT_ENV, "").partition(":")
    if target != step:
        return
    if mode == "hang":
        time.sleep(3600)
    raise RuntimeError(f"fault injected into step {step!r} ({FAULT_ENV})")


@contextmanager
def step(name: str, spec: dict[str, Any]) -> Iterator[tuple[ReleaseSpec, psycopg.Connection]]:
    """One transaction for one step, with timing in the task log."""
    started = time.monotonic()
    release = ReleaseSpec.from_dict(spec)
    with connect() as conn:
        yield release, conn
        _injected_fault(name)
    log.info("step %s of %s took %.2f s", name, release.release_name, time.monotonic() - started)


def prepare(params: dict[str, Any], interval: tuple[datetime, datetime] | None,
            run_id: str) -> dict[str, Any] | None:
    """Resolve the release; None when it is already published (the run then does nothing)."""
    with connect() as conn:
        release = gate.resolve_spec(conn, params, interval, gate.run_token(run_id))
        if gate.is_published(conn, release):
            log.info("%s is already published: nothing to do", release.release_name)
            return None
        gate.check_composition(conn, release)
        gate.check_enough_owners(conn, release)
        gate.prepare_work_schema(conn, release)
        _injected_fault("prepare")
    log.info("release %s, window %s .. %s, SRID %s", release.release_name,
             release.window_start, release.window_end, release.srid)
    return release.to_dict()


def project(spec: dict[str, Any]) -> None:
    with step("project", spec) as (release, conn):
        run_sql_file(conn, "generalization/010_project_window.sql", release.window_params(),
                     work=release.work_schema)


def grid_membership(spec: dict[str, Any]) -> None:
    with step("grid_membership", spec) as (release, conn):
        cell_size = float(release.params.get("cell_size", 1000.0))
        run_sql_file(conn, "generalization/020_grid_membership.sql",
                     {"cell_size": cell_size, "srid": release.srid}, work=release.work_schema)


def visits_and_flows(spec: dict[str, Any]) -> None:
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
    from anonymizers.generalization.homogeneity import limit_continuations
    from anonymizers.generalization.prefix_tree import AnonymizedSequence, kam_cut, kam_rec

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
    with step("build_release", spec) as (release, conn):
        schemas = {"work": release.work_schema, "build": release.build_schema}
        run_sql_file(conn, "generalization/080_build_release.sql",
                     {"srid": release.srid, "k": release.k,
                      "count_interval": release.count_interval}, **schemas)
        run_sql_file(conn, "release/create_manifest.sql", release.manifest_params(), **schemas)


def verify(spec: dict[str, Any]) -> dict[str, Any]:
    """The gate: the independent verifier on the build schema; raises if it fails."""
    from anonymizers.verifiers.generalization import verify_generalization_release

    with step("verify", spec) as (release, conn):
        result = verify_generalization_release(conn, release.build_schema)
        conn.execute(psycopg.sql.SQL("UPDATE {}.manifest SET verifier_result = %s").format(
            psycopg.sql.Identifier(release.build_schema)), (json.dumps(result.to_json()),))
    if not result.passed:
        raise PrivacyViolation(f"{release.build_schema} fails its privacy model; not "
                               f"published: {'; '.join(result.violations[:5])}")
    return result.to_json()


def metrics(spec: dict[str, Any]) -> None:
    """Utility and risk measures of the release (raises if the measured risk exceeds 1/k)."""
    from anonymizers.pipeline.release_metrics import compute_release_metrics  # sklearn: heavy

    with step("metrics", spec) as (release, conn):
        compute_release_metrics(conn, release)
        run_sql_file(conn, "metrics/095_interval_filter_counts.sql",
                     {"k": release.k, "count_interval": release.count_interval},
                     build=release.build_schema)


def publish(spec: dict[str, Any]) -> str:
    with step("publish", spec) as (release, conn):
        published = gate.publish(conn, release)
    log.info("%s %s", release.release_name, "published" if published else "already published")
    return release.release_name


def cleanup(spec: dict[str, Any]) -> list[str]:
    """After a publish, drop the work and build leftovers of every run of this release."""
    with step("cleanup", spec) as (release, conn):
        return gate.drop_run_schemas(conn, release, all_runs=True)
