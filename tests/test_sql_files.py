"""Every SQL file the code names exists, and a missing one is a clear error, not a bare
FileNotFoundError from deep inside a step."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from anonymizers.db.sqlfiles import read_sql, sql_dir
from anonymizers.errors import ReleaseError

PACKAGE = Path(__file__).resolve().parents[1] / "anonymizers"
# A plain string literal naming a file under sql/ ("family/010_step.sql").
NAMED = re.compile(r"""["']([a-z_]+(?:/[a-z0-9_]+)+\.sql)["']""")


def _named_files() -> set[str]:
    return {name for path in PACKAGE.rglob("*.py") for name in NAMED.findall(path.read_text())}


def test_every_sql_file_the_code_names_exists():
    named = _named_files()
    assert len(named) > 100, len(named)
    missing = sorted(name for name in named if not (sql_dir() / name).is_file())
    assert missing == []


def test_a_missing_sql_file_says_which_and_where():
    with pytest.raises(ReleaseError, match=r"sql/aggregates/none\.sql is missing .*sql/aggregates/"):
        read_sql("aggregates/none.sql")
