"""Files only their owner may read: the Airflow homes, logs and secrets the project writes.

DESIGN, privacy rule 10: an Airflow home holds the admin password, the metadata database
(run conf, XCom), the task logs; any of them readable by another OS user is a way around
the database's roles. So every folder the project makes for Airflow is 0700 and every file
in it 0600, three ways at once:

* the folder is made 0700, and what an older version left in it is tightened on start
  (:func:`make_private`);
* every process the project starts for Airflow, and the CLI's own while Airflow writes,
  runs under the umask 0077 (:data:`PRIVATE_UMASK`, :func:`private_umask`), so what
  Airflow writes later (the generated password file, airflow.db, logs) is born private;
* Airflow's task log handler sets the mode of its files and folders itself (0664 and 0775
  by default, whatever the umask): :data:`AIRFLOW_FILE_SETTINGS` tells it 0600 and 0700.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["AIRFLOW_FILE_SETTINGS", "PRIVATE_UMASK", "make_private", "private_umask",
           "tighten"]

PRIVATE_UMASK = 0o077
# Airflow's own modes for the task logs it creates (its [logging] section).
AIRFLOW_FILE_SETTINGS = {
    "AIRFLOW__LOGGING__FILE_TASK_HANDLER_NEW_FILE_PERMISSIONS": "0o600",
    "AIRFLOW__LOGGING__FILE_TASK_HANDLER_NEW_FOLDER_PERMISSIONS": "0o700",
}


@contextmanager
def private_umask() -> Iterator[None]:
    """Files and folders this process creates meanwhile are its owner's only. The umask
    is the process's: the one before is restored on leaving."""
    before = os.umask(PRIVATE_UMASK)
    try:
        yield
    finally:
        os.umask(before)


def make_private(folder: Path) -> Path:
    """``folder`` made if missing (its missing parents as the umask says) and, with all it
    holds, readable by its owner only (:func:`tighten`)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    folder.mkdir(mode=0o700, exist_ok=True)
    tighten(folder)
    return folder


def tighten(root: Path) -> int:
    """Take every permission of group and others from ``root`` and everything under it
    that this OS user owns (what an older version, or Airflow under another umask, left
    readable); symbolic links are not followed. Returns how many modes changed."""
    changed = 0
    for path in _walk(root):
        try:
            info = path.lstat()
            mode = stat.S_IMODE(info.st_mode)
            if stat.S_ISLNK(info.st_mode) or info.st_uid != os.geteuid() or not mode & 0o077:
                continue
            path.chmod(mode & ~PRIVATE_UMASK)
        except FileNotFoundError:  # removed meanwhile (a log rotated, a run cleaned up)
            continue
        changed += 1
    return changed


def _walk(root: Path) -> Iterator[Path]:
    if not root.exists():
        return
    yield root
    for folder, folders, files in os.walk(root):
        for name in (*folders, *files):
            yield Path(folder, name)
