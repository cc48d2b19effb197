"""One method of a comparison: a release through the normal gate, in its own process.

Each method runs as ``python -m anonymizers release ...``, the command a user runs, so its
wall time and peak memory (``ru_maxrss`` from :func:`os.wait4`) are the release's own and
not the comparison's. The release is marked with the comparison's id (the machinery
parameter ``comparison``: analyst cannot read it) and its composition risk is accepted for
this comparison only. A method the gate refuses (e.g. a window too small for k) is a
result too: the reason is kept, nothing is published for it.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

__all__ = ["MethodRun", "run_method"]


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


def run_method(command: list[str], method: str, url: str, log_path: Path,
               timeout: float | None = None) -> MethodRun:
    """Run ``command`` (from :func:`release_command`) with ``url`` as DATABASE_URL; its
    output goes to ``log_path``; the release is the last line it prints on success. Past
    ``timeout`` seconds its process group is killed (SIGKILL: Airflow ignores SIGTERM) and
    the method has no release; the gate publishes nothing half-made."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    out_path = log_path.with_suffix(".out")
    started = time.monotonic()
    with log_path.open("w") as log, out_path.open("w") as out:
        child = subprocess.Popen(command, stdout=out, stderr=log, start_new_session=True,
                                 env={**os.environ, "DATABASE_URL": url})
        status, usage = _wait(child.pid, started, timeout)
    child.returncode = os.waitstatus_to_exitcode(status) if status is not None else -9
    wall = time.monotonic() - started
    lines = [line.strip() for line in out_path.read_text().splitlines() if line.strip()]
    ok = child.returncode == 0 and bool(lines)
    error = None if ok else (f"not finished in {timeout:g} s: stopped" if status is None
                             else _error_line(log_path.read_text(), child.returncode))
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


def _error_line(text: str, code: int) -> str:
    """The CLI's one-line error (``error: ...`` / ``privacy violation: ...``), else the
    last line of the output."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in reversed(lines):
        if line.startswith(("error:", "privacy violation:")):
            return line
    return f"exit code {code}: {lines[-1] if lines else 'no output'}"
