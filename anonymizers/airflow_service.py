"""A real Airflow on the embedded cluster: ``anonymizers airflow up|down|status|logs|env``.

``up`` starts Airflow 3's own components (scheduler, dag-processor, api-server) as
background processes owned by the project: each in a session (process group) of its own,
its pid (and start time, against pid reuse) in ``<home>/airflow-service/<component>.pid``,
its output in ``<component>.log`` there. ``down`` stops exactly those process groups and
every process they started (task processes move to process groups of their own, so the
descendants are collected before anything is signalled). What the service uses:

* DAG files parsed again every 120 s (Airflow's default: 30 s), so that an idle service
  leaves the cores to the tasks and the ``airflow`` commands;
* the LocalExecutor, with parallelism = the machine's cores (2 here: one task per core;
  the api-server runs one worker);
* Airflow's metadata in its own database on the pipeline's server (``airflow_meta``,
  ``ANONYMIZERS_AIRFLOW_DB``; created if missing, migrated by every ``up``), never sqlite;
  ``AIRFLOW__DATABASE__SQL_ALCHEMY_CONN``, if set, is used as it is;
* task retries (``ANONYMIZERS_TASK_RETRIES``, default 2 here): a task lost with its worker
  or its database connection runs again; a user mistake or privacy violation does not;
* the project's ``dags/``, the schedules file (``ANONYMIZERS_SCHEDULES``, else
  ``schedules.toml`` in the project's home: anonymizers.schedules) and the data
  connection the tasks already read (``DATABASE_URL``, ``AIRFLOW_CONN_ANONYMIZERS_DB`` or
  the embedded cluster: anonymizers.db.connection);
* ``AIRFLOW_HOME``, if set, else ``<home>/airflow-service/home`` (not the sqlite home of
  ``dag.test()`` runs, ``<home>/airflow``); task logs go there;
* no log server: the scheduler's (0.0.0.0:8793 by default) is skipped, the api-server
  reads task logs from the files the tasks write on this machine;
* the api-server on 127.0.0.1 (``ANONYMIZERS_AIRFLOW_PORT``, default 8080), with Airflow 3's
  simple auth manager and one user, ``admin``, whose password the api-server generates
  into ``simple_auth_manager_passwords.json.generated`` in the Airflow home;
* secrets every component must share (JWT, API and Fernet keys), generated once into
  ``secrets.json`` (mode 0600) and handed over in the environment, not on command lines;
* files for the user's eyes only: both homes are made 0700 and tightened on every ``up``
  (an older install's too), and every component (and ``airflow db migrate``) runs under
  the umask 0077 with Airflow's task log modes 0600/0700 (:mod:`anonymizers.private_files`),
  so the password file, logs and pid files Airflow or ``up`` writes are 0600.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from anonymizers.db.cluster import default_home, secure_home
from anonymizers.db.sqlfiles import fetch_row, run_sql_file
from anonymizers.errors import AnonymizerError
from anonymizers.private_files import (
    AIRFLOW_FILE_SETTINGS,
    PRIVATE_UMASK,
    make_private,
    private_umask,
)

__all__ = ["COMPONENTS", "AirflowService", "ServiceError", "export_lines", "sqlalchemy_url"]

COMPONENTS = ("scheduler", "dag-processor", "api-server")
DEFAULT_PORT = 8080
DEFAULT_METADATA_DB = "airflow_meta"
ADMIN_USER = "admin"
PASSWORDS_FILE = "simple_auth_manager_passwords.json.generated"
STOP_GRACE_SECONDS = 15.0
HEALTH_TIMEOUT_SECONDS = 180.0

Log = Callable[[str], None]


class ServiceError(AnonymizerError):
    """The Airflow service could not be started, stopped or configured."""


def sqlalchemy_url(libpq_url: str) -> str:
    """A libpq URI (also one through a Unix socket: ``host=`` in the query) as the URL
    SQLAlchemy's psycopg2 dialect takes; Airflow derives its asyncpg URL from it."""
    info = {key: str(value) for key, value in conninfo_to_dict(libpq_url).items()
            if value is not None}
    user = info.pop("user", "")
    password = info.pop("password", "")
    database = info.pop("dbname", "")
    credentials = user + (f":{password}" if password else "")
    query = "&".join(f"{key}={value}" for key, value in sorted(info.items()))
    return (f"postgresql+psycopg2://{credentials}@/{database}" + (f"?{query}" if query else ""))


def _with_database(url: str, dbname: str) -> str:
    info = conninfo_to_dict(url)
    info["dbname"] = dbname
    return make_conninfo("", **info)


@dataclass
class AirflowService:
    """The project's Airflow: where its files are and what its components are told."""

    home: Path  # pid files, component logs, secrets
    airflow_home: Path
    data_url: str  # the pipeline's database: what the tasks connect to
    metadata_db: str = DEFAULT_METADATA_DB
    port: int = DEFAULT_PORT
    host: str = "127.0.0.1"
    metadata_sqlalchemy: str | None = None  # the user's own, used as it is
    extra_env: dict[str, str] = field(default_factory=dict)
    project_home: Path | None = None  # the project's .anonymizers, where ``home`` lies

    @classmethod
    def from_environment(cls, data_url: str) -> AirflowService:
        home = default_home() / "airflow-service"
        airflow_home = Path(os.environ.get("AIRFLOW_HOME") or home / "home")
        return cls(home=home, airflow_home=airflow_home, data_url=data_url,
                   project_home=default_home(),
                   metadata_db=os.environ.get("ANONYMIZERS_AIRFLOW_DB", DEFAULT_METADATA_DB),
                   port=int(os.environ.get("ANONYMIZERS_AIRFLOW_PORT", DEFAULT_PORT)),
                   metadata_sqlalchemy=os.environ.get("AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"))

    # -- what the components are told --------------------------------------------------------
    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def metadata_url(self) -> str:
        """The metadata database as SQLAlchemy connects to it."""
        return self.metadata_sqlalchemy or sqlalchemy_url(
            _with_database(self.data_url, self.metadata_db))

    @property
    def passwords_file(self) -> Path:
        return self.airflow_home / PASSWORDS_FILE

    def environment(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """The environment of every component (and of ``airflow`` commands run against it)."""
        from anonymizers.airflow_runner import dags_folder
        from anonymizers.schedules import SCHEDULES_ENV, schedules_path

        env = dict(os.environ if base is None else base)
        env.pop("AIRFLOW__CORE__UNIT_TEST_MODE", None)
        cores = str(max(2, os.cpu_count() or 2))
        repo = str(Path(__file__).resolve().parents[1])
        env.update({
            "AIRFLOW_HOME": str(self.airflow_home),
            "AIRFLOW__CORE__DAGS_FOLDER": str(dags_folder()),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
            "AIRFLOW__CORE__PARALLELISM": cores,
            "AIRFLOW__CORE__MAX_ACTIVE_TASKS_PER_DAG": cores,
            "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"{self.url}/execution/",
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": f"{ADMIN_USER}:admin",
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(self.passwords_file),
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": self.metadata_url,
            # Three components and the CLI share the server with the pipeline's own work.
            "AIRFLOW__DATABASE__SQL_ALCHEMY_POOL_SIZE": "3",
            "AIRFLOW__DATABASE__SQL_ALCHEMY_MAX_OVERFLOW": "5",
            "AIRFLOW__API__HOST": self.host,
            "AIRFLOW__API__PORT": str(self.port),
            "AIRFLOW__API__BASE_URL": self.url,
            "AIRFLOW__API__WORKERS": "1",
            # The dag-processor parses every DAG file again every 30 s by default: 7.7 s of
            # CPU a minute here with nothing running, taken from the tasks and every
            # `airflow` command on a 2-core machine. DAG files change with the code; a
            # changed schedules file is read within this interval.
            "AIRFLOW__DAG_PROCESSOR__MIN_FILE_PROCESS_INTERVAL":
                env.get("AIRFLOW__DAG_PROCESSOR__MIN_FILE_PROCESS_INTERVAL") or "120",
            "DATABASE_URL": self.data_url,
            # Resolved here, so that every component reads the file `up` checked.
            SCHEDULES_ENV: str(schedules_path()),
            # A task killed with its worker, or cut off from the database, runs again.
            "ANONYMIZERS_TASK_RETRIES": env.get("ANONYMIZERS_TASK_RETRIES") or "2",
            "PYTHONPATH": os.pathsep.join(p for p in (repo, env.get("PYTHONPATH", "")) if p),
            **AIRFLOW_FILE_SETTINGS,
        })
        env.update(self._secrets())
        env.update(self.extra_env)
        return env

    def _secrets(self) -> dict[str, str]:
        """The secrets all components must share, made once (mode 0600)."""
        path = self.home / "secrets.json"
        if not path.exists():
            from cryptography.fernet import Fernet

            make_private(self.home)
            values = {"AIRFLOW__API_AUTH__JWT_SECRET": secrets.token_urlsafe(32),
                      "AIRFLOW__API__SECRET_KEY": secrets.token_urlsafe(32),
                      "AIRFLOW__CORE__FERNET_KEY": Fernet.generate_key().decode()}
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(descriptor, "w") as stream:
                json.dump(values, stream)
        return dict(json.loads(path.read_text()))

    # -- lifecycle ---------------------------------------------------------------------------
    def up(self, log: Log = print) -> dict[str, int]:
        """Start what is not running; return every component's pid once the UI answers.
        Two ``up`` at once start each component once (a lock in the service's home).
        Both homes are the user's only, also what an older version left in them."""
        self.make_private()
        with private_umask(), (self.home / "up.lock").open("a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            return self._up(log)

    def _up(self, log: Log) -> dict[str, int]:
        if self.metadata_sqlalchemy is None:
            self._create_metadata_database(log)
        if self.pid("api-server") is None and not _port_free(self.host, self.port):
            raise ServiceError(f"port {self.port} on {self.host} is taken by another program: "
                               "choose another with ANONYMIZERS_AIRFLOW_PORT")
        env = self.environment()
        self._migrate(env, log)
        started = {}
        for component in COMPONENTS:
            pid = self.pid(component)
            if pid is None:
                pid = self._start(component, env)
                log(f"started {component} (pid {pid}; log {self.log_file(component)})")
            started[component] = pid
        self._wait_until_healthy(log)
        return started

    def make_private(self) -> None:
        """Both homes made if missing, 0700, and everything in them the user's only (what
        an older version or Airflow under another umask left readable is tightened)."""
        if self.project_home is not None:
            secure_home(self.project_home)
        make_private(self.home)
        make_private(self.airflow_home)

    def down(self, log: Log = print) -> list[int]:
        """Stop the components ``up`` started (their process groups and descendants)."""
        victims: dict[int, psutil.Process] = {}
        for component in COMPONENTS:
            process = self._process(component)
            if process is None:
                self.pid_file(component).unlink(missing_ok=True)
                continue
            victims.update((p.pid, p) for p in _tree(process))
            _signal_group(process.pid, signal.SIGTERM)
            log(f"stopping {component} (pid {process.pid})")
        for process in victims.values():  # task processes lead process groups of their own
            _terminate(process)
        _, alive = psutil.wait_procs(list(victims.values()), timeout=STOP_GRACE_SECONDS)
        for process in alive:  # a task or component that ignored SIGTERM
            _signal_group(process.pid, signal.SIGKILL)
            _kill(process)
        psutil.wait_procs(alive, timeout=5)
        for component in COMPONENTS:
            self.pid_file(component).unlink(missing_ok=True)
        return sorted(victims)

    def status(self) -> str:
        lines = []
        for component in COMPONENTS:
            process = self._process(component)
            if process is not None:
                children = len(_tree(process)) - 1
                lines.append(f"{component}: running, pid {process.pid} "
                             f"({children} child process(es))")
            elif self.pid_file(component).exists():
                lines.append(f"{component}: not running (stale pid file)")
            else:
                lines.append(f"{component}: not running")
        lines += [
            f"UI and API: {self.url}  (user {ADMIN_USER}; its password is in "
            f"{self.passwords_file}, written by the api-server at its first start)",
            f"metadata database: {_without_password(self.metadata_url)}",
            f"data database (DAG tasks): {_without_password(self.data_url)}",
            f"AIRFLOW_HOME: {self.airflow_home}; component logs and pid files: {self.home}",
        ]
        return "\n".join(lines)

    def logs(self, lines: int = 20) -> str:
        parts = []
        for component in COMPONENTS:
            path = self.log_file(component)
            text = path.read_text(errors="replace").splitlines()[-lines:] if path.exists() \
                else ["(no log yet)"]
            parts.append(f"==> {path} <==\n" + "\n".join(text))
        return "\n\n".join(parts)

    def airflow(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        """Run an ``airflow`` command against this service's metadata database."""
        return subprocess.run([sys.executable, "-m", "airflow", *args], env=self.environment(),
                              capture_output=True, text=True, timeout=timeout, check=False,
                              umask=PRIVATE_UMASK)

    # -- files and processes -------------------------------------------------------------------
    def pid_file(self, component: str) -> Path:
        return self.home / f"{component}.pid"

    def log_file(self, component: str) -> Path:
        return self.home / f"{component}.log"

    def pid(self, component: str) -> int | None:
        process = self._process(component)
        return None if process is None else process.pid

    def processes(self) -> list[psutil.Process]:
        """Every live process of the service: the components and their descendants."""
        found: list[psutil.Process] = []
        for component in COMPONENTS:
            if (process := self._process(component)) is not None:
                found += _tree(process)
        return found

    def _process(self, component: str) -> psutil.Process | None:
        """The component's process if its pid file names a live process started then."""
        path = self.pid_file(component)
        if not path.exists():
            return None
        record = json.loads(path.read_text())
        try:
            process = psutil.Process(record["pid"])
            if abs(process.create_time() - record["create_time"]) > 1:
                return None  # the pid was reused
            if process.status() == psutil.STATUS_ZOMBIE:
                return None
        except psutil.Error:
            return None
        return process

    def _start(self, component: str, env: dict[str, str]) -> int:
        command = [sys.executable, "-m", "airflow", component]
        if component == "scheduler":  # the api-server reads task logs from local files
            command += ["--skip-serve-logs"]
        if component == "api-server":
            command += ["--host", self.host, "--port", str(self.port), "--workers", "1"]
        with self.log_file(component).open("a") as sink:
            sink.write(f"\n--- {time.strftime('%Y-%m-%d %H:%M:%S')} {' '.join(command[1:])}\n")
            sink.flush()
            child = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=sink,
                                     stderr=subprocess.STDOUT, start_new_session=True,
                                     cwd=self.home, umask=PRIVATE_UMASK)
        record = {"pid": child.pid, "create_time": psutil.Process(child.pid).create_time(),
                  "command": command[1:]}
        self.pid_file(component).write_text(json.dumps(record) + "\n")
        return child.pid

    def _create_metadata_database(self, log: Log) -> None:
        with psycopg.connect(_with_database(self.data_url, "postgres"), autocommit=True) as conn:
            found = fetch_row(conn, "admin/database_exists.sql", {"name": self.metadata_db})
            if not (found and found["present"]):
                conn.execute(sql.SQL("CREATE DATABASE {}").format(
                    sql.Identifier(self.metadata_db)))
                log(f"created Airflow's metadata database {self.metadata_db}")
            run_sql_file(conn, "admin/private_database.sql", database=self.metadata_db)

    def _migrate(self, env: dict[str, str], log: Log) -> None:
        started = time.monotonic()
        result = subprocess.run([sys.executable, "-m", "airflow", "db", "migrate"], env=env,
                                capture_output=True, text=True, check=False,
                                umask=PRIVATE_UMASK)
        if result.returncode != 0:
            raise ServiceError(f"`airflow db migrate` failed:\n{result.stderr[-2000:]}")
        log(f"metadata database migrated ({time.monotonic() - started:.0f} s)")

    def _wait_until_healthy(self, log: Log) -> None:
        """Until the api-server answers its health check (the others must stay alive)."""
        deadline = time.monotonic() + HEALTH_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            dead = [c for c in COMPONENTS if self._process(c) is None]
            if dead:
                raise ServiceError(f"{', '.join(dead)} stopped while starting; see "
                                   f"`anonymizers airflow logs`:\n{self.logs(15)}")
            if _answers(f"{self.url}/api/v2/monitor/health"):
                log(f"Airflow is up: {self.url}")
                return
            time.sleep(1)
        raise ServiceError(f"the api-server did not answer on {self.url} within "
                           f"{HEALTH_TIMEOUT_SECONDS:.0f} s; see `anonymizers airflow logs`")


def _port_free(host: str, port: int) -> bool:
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn: not TIME_WAIT
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def _tree(process: psutil.Process) -> list[psutil.Process]:
    try:
        return [process, *process.children(recursive=True)]
    except psutil.Error:
        return [process]


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


def _terminate(process: psutil.Process) -> None:
    with contextlib.suppress(psutil.Error):
        process.terminate()


def _kill(process: psutil.Process) -> None:
    with contextlib.suppress(psutil.Error):
        process.kill()


def _without_password(url: str) -> str:
    if "://" not in url or "@" not in url:
        return url
    scheme, rest = url.split("://", 1)
    credentials, host = rest.split("@", 1)
    return f"{scheme}://{credentials.split(':', 1)[0]}@{host}"


def export_lines(service: AirflowService) -> Iterator[str]:
    """``export`` lines for running ``airflow`` commands against the service (no secrets)."""
    env = service.environment({})
    for name in ("AIRFLOW_HOME", "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN",
                 "AIRFLOW__CORE__DAGS_FOLDER", "AIRFLOW__CORE__LOAD_EXAMPLES",
                 "AIRFLOW__CORE__EXECUTOR", "DATABASE_URL", "ANONYMIZERS_SCHEDULES",
                 "PYTHONPATH"):
        yield f"export {name}='{env[name]}'"
