"""Real data for the tests marked ``realdata``: windows of T-Drive as loader CSVs."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from conftest import SHARED_DATA

TDRIVE = SHARED_DATA / "tdrive_600" / "points.csv.gz"


def tdrive_window(folder: Path, start: str, end: str) -> Path:
    """The T-Drive fixes of [start, end) (ISO-8601 UTC, as the file writes them) as a CSV
    of the loader's columns in ``folder``; times of one format compare as text."""
    if not TDRIVE.is_file():
        pytest.skip(f"{TDRIVE} is absent")
    path = folder / "tdrive_window.csv"
    with gzip.open(TDRIVE, "rt") as source, path.open("w") as out:
        out.write(next(source))
        out.writelines(line for line in source if start <= line.split(",", 3)[2] < end)
    return path
