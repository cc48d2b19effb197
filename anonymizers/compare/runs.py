"""One method of a comparison: a release through the normal gate, in its own process.

Each method runs as ``python -m anonymizers release ...``, the command a user runs, so its
wall time and peak memory (``ru_maxrss`` from :func:`os.wait4`) are the release's own and
not the comparison's. The release is marked with the comparison's id (the machinery
parameter ``comparison``: analyst cannot read it) and its composition risk is accepted for
this comparison only. A method the gate refuses (e.g. a window too small for k) is a
result too: the reason is kept, nothing is published for it.

The process's database connections carry an application_name of this method run only
(:func:`backend_name`); when the process has ended, stopped at the timeout, killed or
crashed, the backends it left are ended: PostgreSQL would run a dead client's query on.
"""

from __future__ import annotations

import hashlib
import os
import resource
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from anonymizers.db.connection import APPLICATION_NAME_VARIABLE, connect
from anonymizers.db.sqlfiles import fetch_columns

__all__ = ["MethodRun", "backend_name", "end_backends", "release_command", "run_method"]

# PostgreSQL keeps the first 63 bytes of an application_name (NAMEDATALEN - 1).
_NAME_BYTES = 63
# How long to keep ending a dead method's backends; each is asked to exit within _WAIT_MS.
_END_BACKENDS_S = 10.0
_WAIT_MS = 1000


@dataclass(frozen=True)
class MethodRun:
    """What running one method's release gave: its release, or why there is none."""

    method: str
    release: str | None
    error: str | None
    wall_s: float
    peak_rss_mib: float
    log: str  # the child's stdout and stderr

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def release_command(dataset: str, method: str, k: int, start: str, end: str,
                    comparison: str, params: dict[str, str]) -> list[str]:
    """The ``anonymizers release`` command line of one method of the comparison."""
    reason = (f"comparison {comparison}: every method on one window, side by side, for "
              "this comparison only (analyst cannot read its releases)")
    command = [sys.executable, "-m", "anonymizers", "release", "--dataset", dataset,
               "--method", method, "--k", str(k), "--start", start, "--end", end,
               "--accept-composition-risk", reason, "--param", f"comparison={comparison}"]
    for key, value in sorted(params.items()):
        command += ["--param", f"{key}={value}"]
    return command


def backend_name(comparison: str, method: str) -> str:
    """The application_name of the connections of one method run of ``comparison``:
    ``anonymizers compare <comparison> <method>``, unique to it. A longer name than the
    server keeps would not match what pg_stat_activity shows: it is cut, and a digest of
    the whole name keeps it unique."""
    name = f"anonymizers compare {comparison} {method}"
    if len(name.encode()) <= _NAME_BYTES:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{name.encode()[:_NAME_BYTES - 9].decode(errors='ignore')} {digest}"


def run_method(command: list[str], method: str, url: str, log_path: Path,
               timeout: float | None = None, *, application_name: str) -> MethodRun:
    """Run ``command`` (from :func:`release_command`) with ``url`` as DATABASE_URL; its
    output goes to ``log_path``; the release is the last line it prints on success. Past
    ``timeout`` seconds its process group is killed (SIGKILL: Airflow ignores SIGTERM) and
    the method has no release; the gate publishes nothing half-made. Its connections are
    named ``application_name`` (from :func:`backend_name`); those left when it has ended
    are ended too."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    out_path = log_path.with_suffix(".out")
    started = time.monotonic()
    # PGAPPNAME: any other libpq client in the process (e.g. Airflow's metadata database,
    # when that is PostgreSQL) carries the name too; our connect() reads the other one.
    env = {**os.environ, "DATABASE_URL": url, APPLICATION_NAME_VARIABLE: application_name,
           "PGAPPNAME": application_name}
    with log_path.open("w") as log, out_path.open("w") as out:
        child = subprocess.Popen(command, stdout=out, stderr=log, start_new_session=True,
                                 env=env)
        status, usage = _wait(child.pid, started, timeout)
    remaining = end_backends(url, application_name)
    child.returncode = os.waitstatus_to_exitcode(status) if status is not None else -9
    wall = time.monotonic() - started
    lines = [line.strip() for line in out_path.read_text().splitlines() if line.strip()]
    ok = child.returncode == 0 and bool(lines)
    error = None if ok else (f"not finished in {timeout:g} s: stopped" if status is None
                             else _error_line(log_path.read_text(), child.returncode))
    if remaining:
        error = (f"{error or 'finished'}; {remaining} database backend(s) named "
                 f"{application_name!r} did not end")
    return MethodRun(method=method, release=lines[-1] if ok else None, error=error,
                     wall_s=round(wall, 2), peak_rss_mib=round(usage.ru_maxrss / 1024, 1),
                     log=str(log_path))


def _wait(pid: int, started: float, timeout: float | None
          ) -> tuple[int | None, resource.struct_rusage]:
    """The child's wait status (None: killed at the timeout) and resource usage."""
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG if timeout else 0)
        if done:
            return status, usage
        if timeout is not None and time.monotonic() - started > timeout:
            os.killpg(pid, signal.SIGKILL)
            return None, os.wait4(pid, 0)[2]
        time.sleep(0.5)


def end_backends(url: str, application_name: str) -> int:
    """End the database backends named ``application_name`` (a method run's, whose process
    has ended); returns how many could not be ended within a few seconds (0: none remain)."""
    deadline = time.monotonic() + _END_BACKENDS_S
    with connect(url, autocommit=True) as conn:
        while True:
            remaining = fetch_columns(conn, "compare/end_method_backends.sql", {
                "application_name": application_name, "wait_ms": _WAIT_MS})["remaining"][0]
            if not remaining or time.monotonic() > deadline:
                return int(remaining)
            time.sleep(0.2)


def _error_line(text: str, code: int) -> str:
    """The CLI's one-line error (``error: ...`` / ``privacy violation: ...``), else the
    last line of the output."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in reversed(lines):
        if line.startswith(("error:", "privacy violation:")):
            return line
    return f"exit code {code}: {lines[-1] if lines else 'no output'}"
