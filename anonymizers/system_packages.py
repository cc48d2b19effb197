"""Install the Debian packages the project needs (PostgreSQL + PostGIS, chromium) with apt."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from anonymizers.errors import AnonymizerError

__all__ = ["apt_install"]

# Two processes of ours (parallel test workers) installing at once would meet apt's own
# lock and fail: they take turns here instead.
_LOCK = Path(tempfile.gettempdir()) / "anonymizers-apt.lock"


def apt_install(packages: tuple[str, ...], error: type[AnonymizerError], advice: str,
                recommends: bool = True) -> float:
    """``apt-get update`` then ``apt-get install`` of ``packages``, as root or through
    ``sudo -n`` (never a password prompt); returns the seconds it took.

    Parameters
    ----------
    packages
        Debian package names.
    error
        The error raised when apt fails, with ``advice`` (what the user can do instead)
        and the end of apt's stderr.
    advice
        One sentence appended to the error message.
    recommends
        Also install the packages' recommendations (apt's default); chromium's pull in a
        printing system and a notification daemon that a headless browser never uses.
    """
    prefix = [] if os.geteuid() == 0 else ["sudo", "-n"]
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    started = time.monotonic()
    options = [] if recommends else ["--no-install-recommends"]
    with _LOCK.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for cmd in (["apt-get", "update", "-qq"],
                    ["apt-get", "install", "-y", "-qq", *options, *packages]):
            result = subprocess.run([*prefix, *cmd], capture_output=True, text=True, env=env,
                                    check=False)
            if result.returncode != 0:
                raise error(f"`{' '.join(cmd)}` failed (exit {result.returncode}); {advice}\n"
                            f"{result.stderr[-1500:]}")
    took = time.monotonic() - started
    print(f"installed {' '.join(packages)} in {took:.0f} s", file=sys.stderr)
    return took
