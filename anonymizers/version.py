"""Which code built a release: the package version and the commit or build it came from.

Every manifest, catalog row and report records :func:`code_version`, so a release can be
traced to the exact code that made it. The build is found, in this order:

1. ``ANONYMIZERS_BUILD`` in the environment (a deployment sets it when it builds an image:
   ``docker build --build-arg ANONYMIZERS_BUILD=$(git rev-parse HEAD)``, or a CI job id);
2. the git commit of the checkout the package runs from (an editable install), with
   ``.dirty`` when tracked files differ from it: such a release was built by code no
   commit holds;
3. otherwise ``unknown``: an installed copy whose origin nobody recorded.

The result is a PEP 440 version with a local part, e.g. ``0.1.0+g1a2b3c4d5e6f`` or
``0.1.0+g1a2b3c4d5e6f.dirty``.

>>> local_version("0.1.0", "1a2b3c4d5e6f7a8b9c0d", dirty=False)
'0.1.0+g1a2b3c4d5e6f'
>>> local_version("0.1.0", "ci-run 42", dirty=False)
'0.1.0+ci.run.42'
>>> local_version("0.1.0", None, dirty=False)
'0.1.0+unknown'
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
from pathlib import Path

from anonymizers import __version__

__all__ = ["BUILD_ENV", "code_version", "local_version"]

BUILD_ENV = "ANONYMIZERS_BUILD"
_HEX = re.compile(r"^[0-9a-f]{7,40}$")


def local_version(version: str, build: str | None, dirty: bool) -> str:
    """``version`` with ``build`` (a commit: its first 12 hex digits, after ``g``; anything
    else: its words joined by dots) as the PEP 440 local part."""
    if build is None:
        label = "unknown"
    elif _HEX.match(build.lower()):
        label = "g" + build.lower()[:12]
    else:
        label = ".".join(re.findall(r"[A-Za-z0-9]+", build)) or "unknown"
    return f"{version}+{label}{'.dirty' if dirty else ''}"


def _git(*args: str) -> str | None:
    checkout = Path(__file__).resolve().parent.parent
    if not (checkout / ".git").exists():
        return None
    try:
        found = subprocess.run(["git", "-C", str(checkout), *args], capture_output=True,
                               text=True, timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return None  # no git on this machine, or not a repository after all
    return found.stdout.strip()


@functools.cache
def code_version() -> str:
    """The version of the code running now (computed once per process)."""
    build = os.environ.get(BUILD_ENV, "").strip()
    if build:
        return local_version(__version__, build, dirty=False)
    commit = _git("rev-parse", "HEAD")
    if not commit:
        return local_version(__version__, None, dirty=False)
    changes = _git("status", "--porcelain", "--untracked-files=no")
    return local_version(__version__, commit, dirty=bool(changes))
