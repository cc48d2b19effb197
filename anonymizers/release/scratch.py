"""Scratch schemas of runs that failed or were abandoned: dropped once older than the retention.

Every run makes a work schema and a build schema (``private.release_runs``). A publish drops
those of its own release's failed runs (:func:`~anonymizers.release.gate.drop_stale_schemas`),
but a release that is never published (refused by the gate, or failing every time) would
keep them for ever. Here the scratch of every run whose last step ended or failed longer
ago than the retention (7 days by default: time to inspect a failed run) is dropped,
whatever its release, and the run leaves the ledger: from ``anonymizers cleanup``, the
maintenance DAG ``anonymizers_cleanup`` and the start of every run.

Never a run that is working: a running step (and a prepare registering its run) holds the
run's lock shared; each run is locked here without waiting, and read again under the lock,
before anything of it is dropped. Scratch schemas that no run of the ledger knows (orphans,
left by a version before it) have no known age: they go only when asked (``orphans``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import psycopg
from psycopg import errors

from anonymizers.db.connection import connect
from anonymizers.db.sqlfiles import fetch_columns, fetch_row, run_sql_file
from anonymizers.release.gate import work_lock_key
from anonymizers.release.retention import (
    default_retention,
    duration_seconds,
    retention_seconds,
)

__all__ = ["ORPHAN_PATTERN", "Cleanup", "DroppedSchema", "cleanup_scratch",
           "drop_expired_scratch", "retention_checked"]

log = logging.getLogger(__name__)

# The name of a run's scratch schema (ReleaseSpec.work_schema, build_schema): a digest of
# 10 and a run token of 8 hex digits. An orphan is dropped only if named so: a schema of
# the owner's own called work_something is not the pipeline's.
ORPHAN_PATTERN = r"^(work|build)_[0-9a-f]{10}_[0-9a-f]{8}$"

# A table of the run in use (an operator inspecting it), or two cleanups meeting: the run
# is kept this time, the next cleanup takes it.
_BUSY = (errors.LockNotAvailable, errors.DeadlockDetected)


@dataclass(frozen=True)
class DroppedSchema:
    """A scratch schema dropped (or, in a dry run, that would be)."""

    schema: str
    bytes: int
    state: str  # failed, idle (abandoned) or orphan
    last_activity: datetime | None  # None for an orphan

    def line(self, dry_run: bool) -> str:
        why = ("orphan: no run of the ledger knows it" if self.last_activity is None else
               f"{self.state} run, last active "
               f"{self.last_activity.astimezone(UTC):%Y-%m-%d %H:%M} UTC")
        return f"{'would drop' if dry_run else 'dropped'} {self.schema}  {size_text(self.bytes)}" \
               f"  ({why})"

    def to_json(self) -> dict[str, Any]:
        return {"schema": self.schema, "bytes": self.bytes, "state": self.state,
                "last_activity": self.last_activity and self.last_activity.isoformat()}


@dataclass
class Cleanup:
    """What one cleanup dropped, and the runs it kept because they were busy."""

    older_than: str
    dry_run: bool = False
    dropped: list[DroppedSchema] = field(default_factory=list)
    kept: list[tuple[str, str]] = field(default_factory=list)  # (work schema, why)

    @property
    def freed_bytes(self) -> int:
        return sum(schema.bytes for schema in self.dropped)

    def lines(self) -> list[str]:
        """One line per schema dropped, then the total; none when nothing was."""
        if not self.dropped:
            return []
        total = (f"{'would free' if self.dry_run else 'freed'} {size_text(self.freed_bytes)} "
                 f"in {len(self.dropped)} schema(s)")
        return [schema.line(self.dry_run) for schema in self.dropped] + [total]

    def to_json(self) -> dict[str, Any]:
        return {"older_than": self.older_than, "dry_run": self.dry_run,
                "dropped": [schema.to_json() for schema in self.dropped],
                "freed_bytes": self.freed_bytes,
                "kept": [{"work_schema": work, "why": why} for work, why in self.kept]}


def size_text(n_bytes: float) -> str:
    """Bytes as pg_size_pretty counts them (1 kB = 1024 bytes), with one decimal.

    >>> size_text(29_884_416)
    '28.5 MB'
    """
    for unit in ("kB", "MB", "GB", "TB"):
        n_bytes /= 1024
        if n_bytes < 1024 or unit == "TB":
            return f"{n_bytes:.1f} {unit}"
    raise AssertionError("unreachable")


def cleanup_scratch(older_than: str | None = None, orphans: bool = False,
                    dry_run: bool = False, url: str | None = None,
                    option: str = "--older-than") -> Cleanup:
    """``anonymizers cleanup`` and the maintenance DAG: drop the scratch of runs idle or
    failed for longer than ``older_than`` (a duration like 7d; default the installation's
    retention, ``ANONYMIZERS_SCRATCH_RETENTION``), and with ``orphans`` the scratch
    schemas no run knows. InputError (naming ``option``, or the variable) for a bad
    duration, before touching the database."""
    seconds = retention_checked(older_than, option)
    older_than = older_than or default_retention()
    with connect(url, autocommit=True) as conn:
        return drop_expired_scratch(conn, seconds, older_than, orphans=orphans,
                                    dry_run=dry_run)


def retention_checked(older_than: str | None, option: str = "--older-than") -> int:
    """``older_than`` in seconds, else the installation's retention; InputError if bad."""
    return duration_seconds(older_than, option) if older_than else retention_seconds()


def drop_expired_scratch(conn: psycopg.Connection, older_than_seconds: int,
                         older_than: str = "", orphans: bool = False,
                         dry_run: bool = False) -> Cleanup:
    """Drop (on an autocommit connection) the scratch schemas of the runs whose last step
    ended or failed more than ``older_than_seconds`` ago, one transaction per run; one
    query when there are none (every run's start calls this)."""
    params = {"older_than_seconds": older_than_seconds, "orphans": orphans,
              "orphan_pattern": ORPHAN_PATTERN}
    result = Cleanup(older_than or f"{older_than_seconds}s", dry_run)
    listed = fetch_columns(conn, "release/expired_runs.sql", params)
    for work_schema, orphan in zip(listed["work_schema"], listed["orphan"], strict=True):
        try:
            result.dropped += _drop_run(conn, work_schema, orphan, params, result)
        except _BUSY as error:
            result.kept.append((work_schema, f"its tables are in use ({error.sqlstate})"))
    for work_schema, why in result.kept:
        log.info("kept the scratch of run %s: %s", work_schema, why)
    return result


def _drop_run(conn: psycopg.Connection, work_schema: str, orphan: bool,
              params: dict[str, Any], result: Cleanup) -> list[DroppedSchema]:
    """One run's scratch, under its lock; nothing if a step of it runs or it started over."""
    with conn.transaction(force_rollback=result.dry_run):
        locked = fetch_row(conn, "release/try_lock_run.sql",
                           {"lock_key": work_lock_key(work_schema)})
        if not (locked and locked["locked"]):
            result.kept.append((work_schema, "a step of the run is running"))
            return []
        claimed = fetch_columns(conn, "release/claim_expired_run.sql",
                                {**params, "work_schema": work_schema, "orphan": orphan})
        found = [DroppedSchema(name, int(size), state, last)
                 for name, present, size, state, last in zip(
                     claimed["schema_name"], claimed["present"], claimed["bytes"],
                     claimed["state"], claimed["last_activity"], strict=True) if present]
        if not result.dry_run:
            for schema in found:
                run_sql_file(conn, "release/drop_scratch_schema.sql", schema=schema.schema)
            if claimed["schema_name"] and not orphan:  # still expired: it leaves the ledger
                run_sql_file(conn, "release/forget_runs.sql", {"work_schemas": [work_schema]})
    return found
