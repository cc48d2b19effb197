"""One step of a release run: one transaction, its lock on the run, timing, the fault hook.

Every step, shared or a family's, runs inside :func:`step`; families import it from here
(the release layer), not from the pipeline that wires the steps into DAGs.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg

from anonymizers.db.connection import connect
from anonymizers.db.sqlfiles import run_sql_file
from anonymizers.memory import give_back
from anonymizers.release import gate
from anonymizers.release.spec import ReleaseSpec

__all__ = ["FAULT_ENV", "InjectedFault", "injected_fault", "step"]

log = logging.getLogger(__name__)

# Test hook: "step" raises in that step, "step:hang" blocks it (to kill the process).
FAULT_ENV = "ANONYMIZERS_INJECT_FAULT"


class InjectedFault(RuntimeError):
    """The failure a test asked for with ANONYMIZERS_INJECT_FAULT: it stands for a crash
    (a bug or a lost machine), so it is not one of the package's own errors."""


def injected_fault(step_name: str) -> None:
    target, _, mode = os.environ.get(FAULT_ENV, "").partition(":")
    if target != step_name:
        return
    if mode == "hang":
        time.sleep(3600)
    raise InjectedFault(f"fault injected into step {step_name!r} ({FAULT_ENV})")


def _mark_failed(release: ReleaseSpec) -> None:
    """Record that this run failed (so a later cleanup may drop its schemas); best effort."""
    try:
        with connect() as conn:
            run_sql_file(conn, "release/step_failed.sql", {"work_schema": release.work_schema})
    except psycopg.Error as error:  # the database may be what failed
        log.warning("could not record the failure of %s: %s", release.work_schema, error)


@contextmanager
def step(name: str, spec: dict[str, Any]) -> Iterator[tuple[ReleaseSpec, psycopg.Connection]]:
    """One transaction for one step, with timing in the task log.

    The step holds a shared lock on its run for as long as it runs, and records when it
    ended: the cleanup of a concurrent run of the same release never drops the schemas
    of a run that is working or only between two steps.
    """
    started = time.monotonic()
    release = ReleaseSpec.from_dict(spec)
    try:
        with connect() as conn:
            run_sql_file(conn, "release/lock_run_shared.sql",
                         {"lock_key": gate.run_lock_key(release)})
            yield release, conn
            injected_fault(name)
            run_sql_file(conn, "release/step_done.sql", {"work_schema": release.work_schema})
    except BaseException:
        _mark_failed(release)
        raise
    finally:  # a process running several steps (a test, the CLI) starts each one afresh
        give_back(f"step {name}")
    log.info("step %s of %s took %.2f s", name, release.release_name, time.monotonic() - started)
