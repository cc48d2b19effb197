"""Shared fixtures: a real PostGIS (embedded cluster or DATABASE_URL), one fresh database
per test cloned from a migrated template, and an Airflow home for dag.test() runs.

A database test never skips quietly: under CI (CI=true) any skipped test fails the run.

The suite runs in parallel (pytest-xdist, `addopts` in pyproject.toml): every worker is its
own process with its own template database and its own Airflow home, both named by its pid,
so workers (and concurrent sessions) share only the database server.
"""

from __future__ import annotations

import fcntl
import importlib.metadata
import os
import queue
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo

REPO = Path(__file__).resolve().parents[1]
# ../shared/data beside the checkout (or beside a folder of git worktrees holding it).
SHARED_DATA = next((folder / "shared" / "data" for folder in REPO.parents
                    if (folder / "shared" / "data").is_dir()), REPO.parent / "shared" / "data")
# One template per process (session or xdist worker): concurrent ones never collide.
TEMPLATE = f"anonymizers_test_template_{os.getpid()}"

# Airflow reads AIRFLOW_HOME when first imported: set it before any test imports it; never
# the user's own ~/airflow. Its metadata DB (sqlite) is migrated once, kept between sessions,
# in AIRFLOW_TEMPLATE_HOME (per Airflow version); each process runs dag.test() in a home of
# its own holding a copy of it: two processes never write one sqlite file or migrate it at
# once. (xdist workers inherit the controller's environment, so each sets its own here.)
AIRFLOW_TEST_HOME = Path(tempfile.gettempdir()) / "anonymizers-airflow-tests"
AIRFLOW_TEMPLATE_HOME = AIRFLOW_TEST_HOME / (
    "template-" + importlib.metadata.version("apache-airflow-core"))
AIRFLOW_PROCESS_HOME = AIRFLOW_TEST_HOME / f"process-{os.getpid()}"
if "AIRFLOW_HOME" not in os.environ or os.environ.get("ANONYMIZERS_TEST_AIRFLOW_HOME"):
    os.environ["AIRFLOW_HOME"] = os.environ["ANONYMIZERS_TEST_AIRFLOW_HOME"] = str(
        AIRFLOW_PROCESS_HOME)
os.environ.setdefault("AIRFLOW__CORE__LOAD_EXAMPLES", "False")


@pytest.fixture(scope="session", autouse=True)
def airflow_home() -> Iterator[Path]:
    """This process's Airflow home, with a copy of the template's migrated metadata DB (the
    template is migrated on first use, under a lock); removed at the end of the session."""
    from anonymizers.private_files import PRIVATE_UMASK, make_private, private_umask

    home = Path(os.environ["AIRFLOW_HOME"])
    if home != AIRFLOW_PROCESS_HOME:  # the user's own AIRFLOW_HOME: used as it is
        yield home
        return
    # The test runs' logs and metadata are the runner's only, as the CLI's are.
    # (Of the folder shared with other sessions, its own mode only.)
    AIRFLOW_TEST_HOME.mkdir(mode=0o700, parents=True, exist_ok=True)
    AIRFLOW_TEST_HOME.chmod(0o700)
    for folder in (AIRFLOW_TEMPLATE_HOME, home):
        make_private(folder)
    with private_umask(), (AIRFLOW_TEMPLATE_HOME / "lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (AIRFLOW_TEMPLATE_HOME / ".migrated").exists():
            env = {**os.environ, "AIRFLOW_HOME": str(AIRFLOW_TEMPLATE_HOME)}
            subprocess.run([sys.executable, "-m", "airflow", "db", "migrate"], env=env,
                           capture_output=True, check=True, umask=PRIVATE_UMASK)
            (AIRFLOW_TEMPLATE_HOME / ".migrated").touch()
        source, copy = (sqlite3.connect(AIRFLOW_TEMPLATE_HOME / "airflow.db"),
                        sqlite3.connect(home / "airflow.db"))
        source.backup(copy)
        source.close()
        copy.close()
        (home / ".migrated").touch()  # configure_airflow() migrates no further
        fcntl.flock(lock, fcntl.LOCK_UN)
    yield home
    shutil.rmtree(home, ignore_errors=True)


def with_database(url: str, dbname: str) -> str:
    info = conninfo_to_dict(url)
    info["dbname"] = dbname
    return make_conninfo(**info)


@pytest.fixture(scope="session")
def server_url() -> str:
    """A maintenance URL of the server: DATABASE_URL's server, or the embedded cluster's."""
    from anonymizers.db.cluster import EmbeddedCluster

    url = os.environ.get("DATABASE_URL") or EmbeddedCluster.default().up()
    return with_database(url, "postgres")


class _Dropper:
    """Drops test databases in a thread of its own, in order. DROP DATABASE waits for a
    checkpoint of the whole server (0.5-5 s here); the next test need not wait for it."""

    def __init__(self, server_url: str) -> None:
        self.server_url = server_url
        self.queue: queue.Queue[str | None] = queue.Queue()
        self.errors: list[str] = []
        self.thread = threading.Thread(target=self._run, name="drop-test-databases",
                                       daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while (name := self.queue.get()) is not None:
            try:
                with psycopg.connect(self.server_url, autocommit=True) as conn:
                    conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            except psycopg.Error as error:
                self.errors.append(f"{name}: {error}")

    def drop(self, name: str) -> None:
        self.queue.put(name)

    def close(self) -> None:
        self.queue.put(None)
        self.thread.join()


@pytest.fixture(scope="session")
def dropper(server_url: str) -> Iterator[_Dropper]:
    """Every test database is dropped by the end of the session (or the session errs)."""
    dropping = _Dropper(server_url)
    yield dropping
    dropping.close()
    assert not dropping.errors, f"test databases not dropped: {dropping.errors}"


@pytest.fixture(scope="session")
def template_db(server_url: str, dropper: _Dropper) -> Iterator[str]:
    """A database migrated once per session; each test clones it (cheap, pgstac-style)."""
    from anonymizers.db.migrate import migrate

    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {TEMPLATE} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {TEMPLATE}")
    url = with_database(server_url, TEMPLATE)
    migrate(url)
    yield url
    dropper.drop(TEMPLATE)


@pytest.fixture
def db_url(server_url: str, template_db: str, dropper: _Dropper,
           monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A fresh database for this test; DATABASE_URL points at it (the pipeline reads that)."""
    name = f"test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE}")
    url = with_database(server_url, name)
    monkeypatch.setenv("DATABASE_URL", url)
    yield url
    dropper.drop(name)


@pytest.fixture
def conn(db_url: str) -> Iterator[psycopg.Connection]:
    with psycopg.connect(db_url, autocommit=True) as connection:
        yield connection


@pytest.fixture
def analyst_url(db_url: str) -> str:
    """How an analyst connects to this test's database (the role that reads releases only):
    by password, from the embedded cluster's passfile (or libpq's usual sources)."""
    from anonymizers.db.connection import analyst_url

    return analyst_url(db_url)


@pytest.fixture(scope="session")
def small_city(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A synthetic city of ~20k fixes (points CSV, persons CSV), generated once."""
    from anonymizers.synthetic import CityConfig, write_city

    folder = tmp_path_factory.mktemp("city")
    points, persons = folder / "points.csv", folder / "persons.csv"
    write_city(CityConfig(seed=7, target_points=20_000), points, persons)
    return points, persons


@pytest.fixture
def loaded_city(db_url: str, small_city: tuple[Path, Path]) -> str:
    """The small city loaded as dataset 'city' into this test's database."""
    from anonymizers.loading import load_dataset

    points, persons = small_city
    load_dataset(points, "city", persons=persons, url=db_url)
    return "city"


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if hasattr(session.config, "workerinput"):
        return  # an xdist worker: the controller receives every worker's reports and decides
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = len(reporter.stats.get("skipped", [])) if reporter else 0
    if os.environ.get("CI") and skipped:
        reporter.write_line(f"CI: {skipped} test(s) skipped; a skipped test is a failure here",
                            red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# --------------------------------------------------------------------------- published city

PUBLISHED_K = 3
# One method per family (and MLA, the clustering family's aligned variant: its regions
# span intervals where TCAA's are instants), with parameters that suit the small city.
def _showcases() -> dict[str, dict[str, object]]:
    """The methods of each family's contract's SHOWCASE, with the city's parameters."""
    import importlib

    from anonymizers.families.registry import FAMILIES

    found: dict[str, dict[str, object]] = {}
    for family in FAMILIES.values():
        contract = importlib.import_module(family.contract)
        for method in contract.SHOWCASE:
            found[method] = dict(contract.CITY_PARAMS.get(method, {}))
    return found


PUBLISHED_CITY: dict[str, dict[str, object]] = _showcases()
PUBLISHED_FIRST = next(iter(PUBLISHED_CITY))  # published without accepting composition risk


@pytest.fixture(scope="session")
def published_city_db(server_url: str, template_db: str, small_city: tuple[Path, Path]
                      ) -> Iterator[str]:
    """One database for the session: the small city with QIDs (MOB), shared by the tests
    that read published releases (report, attack) without changing them."""
    from anonymizers.families.mob.qids import generate_and_store_qids
    from anonymizers.loading import load_dataset

    name = f"test_published_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE}")
    url = with_database(server_url, name)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DATABASE_URL", url)
        load_dataset(small_city[0], "city", persons=small_city[1], url=url)
        generate_and_store_qids("city", "graph", 6, seed=1, url=url)
        yield url
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture(scope="session")
def published_city(published_city_db: str) -> dict[str, str]:
    """A published release of each method of PUBLISHED_CITY, by method."""
    from pipeline_helpers import run_steps

    from anonymizers.families.generalization import metrics
    from anonymizers.release.spec import ReleaseSpec

    names = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DATABASE_URL", published_city_db)
        # Cluster preservation of 1,500 routes (OPTICS) took 19 s of the city's 20 s of
        # grid_kam_cut metrics here; these tests only read its figure (test_release_metrics
        # tests it at full size).
        patch.setattr(metrics, "CLUSTER_SAMPLE", 100)
        for method, extra in PUBLISHED_CITY.items():
            risk = {} if method == PUBLISHED_FIRST else {
                "accept_composition_risk": "test: <every family> on one window & more"}
            params = {"dataset": "city", "method": method, "k": PUBLISHED_K, **extra, **risk}
            names[method] = ReleaseSpec.from_dict(run_steps(params, run_id=method)).release_name
    return names
