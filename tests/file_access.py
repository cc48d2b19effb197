"""What another OS user can read of the files the project writes, and which files carry a
source file's plain digest or a raw id (DESIGN, privacy rule 10).

The other user is ``nobody``, reached through ``runuser`` (the suite runs as root here, as
tests/test_cluster_security.py does); its reads are plain ``ls`` and ``head``, so what it
is refused is what the file system refuses.
"""

from __future__ import annotations

import csv
import gzip
import os
import sqlite3
import stat
import subprocess
import tempfile
import uuid
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

INTRUDER = "nobody"

# Each path given: a directory is listed, a file's first byte read; the ones that worked
# are printed, one a line.
_TRY_READING = ('for p; do if [ -d "$p" ]; then ls -a -- "$p" >/dev/null 2>&1 && echo "$p"; '
                'else head -c 1 -- "$p" >/dev/null 2>&1 && echo "$p"; fi; done; true')


def require_another_user() -> None:
    """Skip (a failure under CI) where no other OS user can be switched to."""
    if os.geteuid() != 0:
        pytest.skip(f"reading as {INTRUDER} needs root (runuser)")


def scratch_folder(prefix: str) -> Path:
    """A folder any OS user can reach (mode 0755, under /var/tmp: pytest's own tmp_path is
    under a 0700 folder, where every file would look private whatever its mode)."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir="/var/tmp"))
    folder.chmod(0o755)
    return folder


def every_path(root: Path) -> list[Path]:
    """``root`` and every directory and regular file under it."""
    found = [root]
    for path in sorted(root.rglob("*")):
        if path.is_dir() or path.is_file():
            found.append(path)
    return found


def readable_by_another_user(paths: Iterable[Path]) -> list[str]:
    """The paths the OS user INTRUDER can list (directories) or read (files)."""
    names = [str(path) for path in paths]
    result = subprocess.run(["runuser", "-u", INTRUDER, "--", "sh", "-c", _TRY_READING, "sh",
                             *names], capture_output=True, text=True, cwd="/", check=True)
    return result.stdout.splitlines()


def assert_unreadable_by_another_user(paths: Iterable[Path]) -> None:
    readable = readable_by_another_user(paths)
    assert not readable, f"{INTRUDER} reads {len(readable)} path(s):\n" + "\n".join(readable)


def assert_owner_only_modes(paths: Iterable[Path]) -> None:
    """No path grants anything to group or others (a file in a 0700 folder is out of
    another user's reach whatever its mode; its own mode must not rely on that)."""
    loose = [f"{path} {stat.S_IMODE(path.stat().st_mode):o}" for path in paths
             if path.stat().st_mode & 0o077]
    assert not loose, f"{len(loose)} path(s) open to group or others:\n" + "\n".join(loose)


def assert_another_user_can_read_a_planted_file(folder: Path) -> None:
    """The check can fail: a 0644 file planted in ``folder``'s parent is read by INTRUDER."""
    planted = folder.parent / f"planted-{uuid.uuid4().hex}"
    planted.write_text("readable")
    planted.chmod(0o644)
    try:
        assert readable_by_another_user([planted]) == [str(planted)]
    finally:
        planted.unlink()


# -- what a file carries -------------------------------------------------------------------------

def decoded(value: object) -> str:
    """A database value as text: bytes decompressed (zlib, gzip) where they are, then UTF-8."""
    if not isinstance(value, bytes | bytearray | memoryview):
        return "" if value is None else str(value)
    data = bytes(value)
    for unpack in (zlib.decompress, gzip.decompress):
        try:
            data = unpack(data)
            break
        except (zlib.error, OSError, EOFError):
            continue
    return data.decode("utf-8", errors="replace")


def sqlite_text(path: Path) -> Iterator[tuple[str, str]]:
    """(table, text of one row) for every row of every table of a sqlite database."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        tables = [name for (name,) in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            for row in db.execute(f'SELECT * FROM "{table}"'):
                yield table, " ".join(decoded(value) for value in row)


def carriers(root: Path, needles: dict[str, str]) -> list[str]:
    """Where under ``root`` a needle (label -> text) occurs: "file[: table]: label"."""
    found = []
    for path in every_path(root):
        if not path.is_file():
            continue
        if path.suffix == ".db":
            texts: Iterable[tuple[str, str]] = sqlite_text(path)
        else:
            texts = [("", decoded(path.read_bytes()))]
        for where, text in texts:
            found += [f"{path}{': ' + where if where else ''}: {label}"
                      for label, needle in needles.items() if needle in text]
    return sorted(set(found))


def needles_of(source_sha256: str, raw_ids: Iterable[str]) -> dict[str, str]:
    """The plain digest (whole, and its first 16 hex digits: enough to confirm a file) and
    every raw id, labelled."""
    needles = {"plain sha256": source_sha256, "plain sha256 (prefix)": source_sha256[:16]}
    needles.update((f"raw id {raw}", raw) for raw in raw_ids)
    return needles


def with_random_ids(points: Path, persons: Path, folder: Path) -> tuple[Path, Path, set[str]]:
    """Copies of a city's points and persons files whose traj_id and user_id are long random
    strings (no chance of meeting them anywhere else); the ids."""
    names: dict[str, str] = {}

    def renamed(value: str, kind: str) -> str:
        return names.setdefault(value, f"{kind}{uuid.uuid4().hex}")

    copies = folder / "points.csv", folder / "persons.csv"
    for source, copy in zip((points, persons), copies, strict=True):
        with source.open(newline="") as inp, copy.open("w", newline="") as out:
            reader = csv.DictReader(inp)
            writer = csv.DictWriter(out, fieldnames=list(reader.fieldnames or []))
            writer.writeheader()
            for row in reader:
                if "traj_id" in row:
                    row["traj_id"] = renamed("traj:" + row["traj_id"], "trj")
                row["user_id"] = renamed("user:" + row["user_id"], "usr")
                writer.writerow(row)
    return copies[0], copies[1], set(names.values())

