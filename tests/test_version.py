"""Every release records the code that built it: the package version and its commit or build."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import psycopg
from psycopg import sql

from anonymizers import __version__
from anonymizers.version import BUILD_ENV, code_version

CHECKOUT = Path(__file__).resolve().parents[1]


def test_a_checkout_runs_as_its_commit():
    commit = subprocess.run(["git", "-C", str(CHECKOUT), "rev-parse", "HEAD"],
                            capture_output=True, text=True, check=True).stdout.strip()
    assert re.fullmatch(rf"{re.escape(__version__)}\+g{commit[:12]}(\.dirty)?", code_version())


def test_a_deployment_names_its_build():
    found = subprocess.run(
        [sys.executable, "-c", "from anonymizers.version import code_version; "
         "print(code_version())"], capture_output=True, text=True, check=True,
        env={"PATH": "/usr/bin:/bin", BUILD_ENV: "0123456789abcdef0123"})
    assert found.stdout.strip() == f"{__version__}+g0123456789ab"


def test_every_published_release_records_the_code_version(published_city_db, published_city):
    with psycopg.connect(published_city_db) as conn:
        for schema in published_city.values():
            manifest = conn.execute(sql.SQL("SELECT code_version FROM {}.manifest").format(
                sql.Identifier(schema))).fetchone()
            catalog = conn.execute("SELECT code_version FROM catalog.releases "
                                   "WHERE release_name = %s", (schema,)).fetchone()
            assert manifest is not None and catalog is not None
            assert manifest[0] == catalog[0] == code_version(), schema


def test_the_cli_says_its_version():
    found = subprocess.run([sys.executable, "-m", "anonymizers", "--version"],
                           capture_output=True, text=True, check=True)
    assert found.stdout.strip() == f"anonymizers {code_version()}"
