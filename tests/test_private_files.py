"""Files are side doors too (DESIGN, privacy rule 10): the Airflow homes the project makes
are readable by their owner only, also an old install's, and nothing in them (Airflow's
metadata database, XCom included, its logs, the CLI's own log) carries the plain digest of
a loaded file or a raw id.

The attacker is another OS user (``nobody``); the victim a release through the CLI, as a
user runs it (``anonymizers release`` in a process of its own, the project's home in a
folder every user can reach), of a city whose ids are long random strings.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from file_access import (
    assert_another_user_can_read_a_planted_file,
    carriers,
    every_path,
    needles_of,
    readable_by_another_user,
    require_another_user,
    scratch_folder,
    with_random_ids,
)

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def project_home() -> Iterator[Path]:
    """ANONYMIZERS_HOME of a CLI run: in a folder every OS user can reach."""
    require_another_user()
    folder = scratch_folder("anonymizers-files-")
    try:
        yield folder / "home"
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _cli(home: Path, db_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``anonymizers ...`` as a user runs it: its Airflow home is the project's default."""
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("AIRFLOW", "ANONYMIZERS_TEST"))}
    env.update(ANONYMIZERS_HOME=str(home), DATABASE_URL=db_url,
               PYTHONPATH=os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "anonymizers", *args], env=env,
                          capture_output=True, text=True, check=False, cwd=home.parent)


def test_a_cli_release_leaves_its_airflow_home_private_and_free_of_digest_and_raw_ids(
        db_url: str, conn: psycopg.Connection, small_city: tuple[Path, Path],
        project_home: Path, tmp_path: Path) -> None:
    from anonymizers.loading import load_dataset

    points, persons, raw_ids = with_random_ids(*small_city, tmp_path)
    load_dataset(points, "city", persons=persons, url=db_url)
    row = conn.execute("SELECT source_sha256 FROM raw.datasets WHERE name = 'city'").fetchone()
    assert row is not None
    released = _cli(project_home, db_url, "release", "--dataset", "city", "--method",
                    "grid_kam_cut", "--k", "3", "--param", "cell_size=500")
    assert released.returncode == 0, released.stderr[-3000:]

    airflow_home = project_home / "airflow"
    assert (airflow_home / "airflow.db").is_file()
    assert list(airflow_home.glob("logs/*-test-runs.log"))
    assert_another_user_can_read_a_planted_file(project_home)
    needles = needles_of(row[0], raw_ids)
    said = released.stdout + released.stderr
    found = {"readable by another user": readable_by_another_user(every_path(project_home)),
             "carriers": carriers(airflow_home, needles),
             "CLI output": [label for label, needle in needles.items() if needle in said]}
    assert found == {"readable by another user": [], "carriers": [], "CLI output": []}, \
        "\n".join(f"{kind}: {path}" for kind, paths in found.items() for path in paths)
