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
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
from conftest import TEMPLATE, with_database
from file_access import (
    assert_another_user_can_read_a_planted_file,
    assert_owner_only_modes,
    assert_unreadable_by_another_user,
    carriers,
    every_path,
    needles_of,
    readable_by_another_user,
    require_another_user,
    scratch_folder,
    with_random_ids,
)

REPO = Path(__file__).resolve().parents[1]


def _cli_env(home: Path, db_url: str) -> dict[str, str]:
    """The environment of ``anonymizers ...`` as a user runs it: no AIRFLOW_HOME (the
    project's default), the project's home ``home``."""
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("AIRFLOW", "ANONYMIZERS_TEST"))}
    env.update(ANONYMIZERS_HOME=str(home), DATABASE_URL=db_url,
               PYTHONPATH=os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]))
    return env


@dataclass
class CliRelease:
    project_home: Path  # ANONYMIZERS_HOME
    source_sha256: str
    raw_ids: set[str]
    said: str  # the CLI's output, both streams

    @property
    def airflow_home(self) -> Path:
        return self.project_home / "airflow"


@pytest.fixture(scope="module")
def cli_release(server_url: str, template_db: str, small_city: tuple[Path, Path],
                tmp_path_factory: pytest.TempPathFactory) -> Iterator[CliRelease]:
    """The small city with random ids, loaded into a database of its own and released by
    ``anonymizers release`` in a child process (grid_kam_cut, k=3)."""
    from anonymizers.loading import load_dataset

    require_another_user()
    folder = scratch_folder("anonymizers-files-")
    name = f"test_files_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE}")
    url = with_database(server_url, name)
    try:
        points, persons, raw_ids = with_random_ids(*small_city, tmp_path_factory.mktemp("ids"))
        load_dataset(points, "city", persons=persons, url=url)
        with psycopg.connect(url) as conn:
            row = conn.execute("SELECT source_sha256 FROM raw.datasets").fetchone()
        assert row is not None
        home = folder / "home"
        released = subprocess.run(
            [sys.executable, "-m", "anonymizers", "release", "--dataset", "city", "--method",
             "grid_kam_cut", "--k", "3", "--param", "cell_size=500"],
            env=_cli_env(home, url), capture_output=True, text=True, check=False, cwd=folder)
        assert released.returncode == 0, released.stderr[-3000:]
        yield CliRelease(home, row[0], raw_ids, released.stdout + released.stderr)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def test_another_user_can_read_nothing_of_the_cli_s_airflow_home(
        cli_release: CliRelease) -> None:
    home = cli_release.airflow_home
    assert (home / "airflow.db").is_file() and (home / "airflow.cfg").is_file()
    assert list(home.glob("logs/*-test-runs.log"))
    assert_another_user_can_read_a_planted_file(cli_release.project_home)
    assert_unreadable_by_another_user(every_path(cli_release.project_home))
    assert_owner_only_modes(every_path(home))


def test_airflow_s_database_and_logs_carry_no_plain_digest_and_no_raw_id(
        cli_release: CliRelease) -> None:
    """Every row of every table of airflow.db (XCom, rendered fields, run conf, ...;
    compressed values decompressed) and every file of the home, as the owner reads them."""
    needles = needles_of(cli_release.source_sha256, cli_release.raw_ids)
    assert carriers(cli_release.airflow_home, needles) == []


def test_the_cli_s_output_carries_no_plain_digest_and_no_raw_id(
        cli_release: CliRelease) -> None:
    needles = needles_of(cli_release.source_sha256, cli_release.raw_ids)
    assert [label for label, needle in needles.items() if needle in cli_release.said] == []


# -- an older install: what it left readable is tightened before Airflow runs ---------------------

def _old_style(root: Path, files: list[str]) -> list[Path]:
    """``files`` (relative to ``root``) as an older version left them: folders 0755, files
    0644, readable by every user."""
    made = []
    for relative in files:
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("left by an older version\n")
        made.append(path)
    for path in every_path(root):
        path.chmod(0o755 if path.is_dir() else 0o644)
    return made


@pytest.fixture
def reachable_folder() -> Iterator[Path]:
    require_another_user()
    folder = scratch_folder("anonymizers-old-")
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_an_old_cli_airflow_home_is_made_private_before_airflow_runs(
        reachable_folder: Path) -> None:
    home = reachable_folder / "home"
    _old_style(home, ["airflow/airflow.db", "airflow/airflow.cfg", "airflow/.migrated",
                      "airflow/logs/generalization-test-runs.log",
                      "airflow/logs/dag_processor/latest/generalization.py.log"])
    assert len(readable_by_another_user(every_path(home))) == len(every_path(home))
    configured = subprocess.run(
        [sys.executable, "-c", "from anonymizers.airflow_runner import configure_airflow; "
         "print(configure_airflow())"], env=_cli_env(home, "postgresql:///unused"),
        capture_output=True, text=True, check=False)
    assert configured.stdout.strip() == str(home / "airflow"), configured.stderr[-2000:]
    assert_unreadable_by_another_user(every_path(home))
    assert_owner_only_modes(every_path(home / "airflow"))


def test_an_old_service_home_is_made_private_by_up(reachable_folder: Path) -> None:
    """What ``up`` does before it starts anything (AirflowService.make_private)."""
    from anonymizers.airflow_service import PASSWORDS_FILE, AirflowService

    project = reachable_folder / "home"
    service = AirflowService(home=project / "airflow-service",
                             airflow_home=project / "airflow-service" / "home",
                             data_url="postgresql:///unused", project_home=project)
    _old_style(project, [
        "airflow-service/secrets.json", "airflow-service/api-server.log",
        "airflow-service/scheduler.pid", "airflow-service/up.lock",
        f"airflow-service/home/{PASSWORDS_FILE}", "airflow-service/home/airflow.cfg",
        "airflow-service/home/logs/dag_id=generalization/run_id=r/task_id=prepare/attempt=1.log",
    ])
    assert str(service.passwords_file) in readable_by_another_user([service.passwords_file])
    service.make_private()
    assert_unreadable_by_another_user(every_path(project))
    assert_owner_only_modes(every_path(service.home))


def test_the_project_home_lets_the_server_user_through_and_nobody_else(
        reachable_folder: Path) -> None:
    """0710 (the embedded cluster's socket lies under it): the server's OS user may pass,
    another user may not even list it."""
    from anonymizers.db.cluster import SERVER_USER_WHEN_ROOT, secure_home

    home = reachable_folder / "home"
    home.mkdir(mode=0o755)
    (home / "run").mkdir(mode=0o755)
    secure_home(home)
    assert_unreadable_by_another_user([home, home / "run"])
    passes = subprocess.run(["runuser", "-u", SERVER_USER_WHEN_ROOT, "--", "test", "-x",
                             str(home / "run")], check=False)
    assert passes.returncode == 0


def test_the_search_finds_a_digest_in_a_compressed_database_value_and_in_a_log(
        tmp_path: Path) -> None:
    """The carriers' search can fail: a planted digest and raw id are found where Airflow
    would keep them (a zlib-compressed column, a JSON text column, a log line)."""
    import json
    import sqlite3
    import zlib

    digest, raw = "ab" * 32, f"trj{uuid.uuid4().hex}"
    with sqlite3.connect(tmp_path / "airflow.db") as db:
        db.execute("CREATE TABLE serialized_dag (data_compressed BLOB)")
        db.execute("CREATE TABLE xcom (value TEXT)")
        db.execute("INSERT INTO serialized_dag VALUES (?)",
                   (zlib.compress(json.dumps({"spec": digest}).encode()),))
        db.execute("INSERT INTO xcom VALUES (?)", (json.dumps({"id": raw}),))
    db.close()
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "run.log").write_text(f"Returned value was: {digest[:16]}\n")
    assert carriers(tmp_path, needles_of(digest, [raw])) == [
        f"{tmp_path}/airflow.db: serialized_dag: plain sha256",
        f"{tmp_path}/airflow.db: serialized_dag: plain sha256 (prefix)",
        f"{tmp_path}/airflow.db: xcom: raw id {raw}",
        f"{tmp_path}/logs/run.log: plain sha256 (prefix)",
    ]


def test_analyst_cannot_connect_to_airflow_s_metadata_database(db_url, server_url, analyst_url,
                                                               dropper, tmp_path):
    """XComs, run confs and logs' index live there: the owner's, like raw (rule 6)."""
    from anonymizers.airflow_service import AirflowService

    name = f"test_meta_{uuid.uuid4().hex[:8]}"
    service = AirflowService(home=tmp_path, airflow_home=tmp_path / "home", data_url=db_url,
                             metadata_db=name)
    service._create_metadata_database(lambda line: None)
    try:
        with pytest.raises(psycopg.OperationalError, match="permission denied"):
            psycopg.connect(with_database(analyst_url, name)).close()
    finally:
        dropper.drop(name)
