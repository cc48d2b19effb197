"""The linters CI holds the code to: ruff (including Airflow 3's AIR3 rules) and mypy."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("command", [
    ["ruff", "check", "."],
    ["mypy"],  # files and settings from pyproject.toml
], ids=["ruff", "mypy"])
def test_linter_passes(command: list[str]) -> None:
    result = subprocess.run([sys.executable, "-m", *command], cwd=ROOT, capture_output=True,
                            text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
