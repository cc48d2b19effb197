"""The embedded default database: a private PostgreSQL + PostGIS cluster owned by the project.

The cluster lives under ``ANONYMIZERS_HOME`` (default ``<repo>/.anonymizers``): its own
data directory, its own socket directory and a non-default port, so it never collides
with a system PostgreSQL. It listens on its Unix socket only: nothing outside this
machine can reach raw data through it.

initdb refuses to run as root, so when we are root the server runs as the unprivileged
``postgres`` system user that Debian's postgresql package creates.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from anonymizers.errors import DatabaseSetupError

__all__ = ["EmbeddedCluster", "default_home"]

PG_MAJOR = "15"
DEFAULT_PORT = 54329
SUPERUSER = "anonymizers"
DATABASE = "anonymizers"
SERVER_USER_WHEN_ROOT = "postgres"
APT_PACKAGES = (f"postgresql-{PG_MAJOR}", f"postgresql-{PG_MAJOR}-postgis-3")

# Settings for a single-machine analytical workload (24 GB, 2 cores here); why each:
SERVER_SETTINGS = {
    "listen_addresses": "''",  # socket only: raw data is not reachable over the network
    "shared_buffers": "'1GB'",
    "work_mem": "'64MB'",  # sorts of window functions over trajectories stay in memory
    "maintenance_work_mem": "'1GB'",  # GiST/btree builds after bulk loads
    "max_wal_size": "'8GB'",  # no checkpoint storms during COPY
    "wal_level": "'minimal'",  # lets COPY into a table created in the same transaction skip WAL
    "max_wal_senders": "0",
    "jit": "off",  # JIT compile time dominates our short analytical queries
    "random_page_cost": "1.1",  # data sits on SSD / page cache
}


def default_home() -> Path:
    """``ANONYMIZERS_HOME`` if set, else ``.anonymizers`` next to the project's pyproject.toml."""
    if env := os.environ.get("ANONYMIZERS_HOME"):
        return Path(env).resolve()
    repo = Path(__file__).resolve().parents[2]
    if (repo / "pyproject.toml").exists():
        return repo / ".anonymizers"
    return Path.home() / ".anonymizers"


@dataclass
class EmbeddedCluster:
    """A PostgreSQL cluster in ``home``: ``up()`` creates and starts it, ``down()`` stops it."""

    home: Path
    port: int = DEFAULT_PORT

    @classmethod
    def default(cls) -> EmbeddedCluster:
        return cls(_reachable_home(default_home()),
                   int(os.environ.get("ANONYMIZERS_PG_PORT", DEFAULT_PORT)))

    @property
    def data_dir(self) -> Path:
        return self.home / "pgdata"

    @property
    def socket_dir(self) -> Path:
        return self.home / "run"

    @property
    def log_file(self) -> Path:
        return self.home / "postgres.log"

    def url(self, user: str = SUPERUSER, database: str = DATABASE) -> str:
        """libpq URI of the cluster, through its Unix socket."""
        return f"postgresql://{user}@/{database}?host={self.socket_dir}&port={self.port}"

    # -- lifecycle -------------------------------------------------------------------------
    def up(self, log=print) -> str:
        """Install (if needed), initialise (first time), start, and create the database."""
        bindir = find_or_install_binaries(log)
        self._prepare_dirs()
        if not (self.data_dir / "PG_VERSION").exists():
            log(f"initialising a new PostgreSQL cluster in {self.data_dir}")
            self._initdb(bindir)
        if not self.is_running():
            log(f"starting PostgreSQL on socket {self.socket_dir} port {self.port}")
            self._pg_ctl(bindir, "start", "-w", "-t", "60", "-l", str(self.log_file))
        self._create_database(bindir)
        return self.url()

    def down(self) -> bool:
        """Stop the server if it runs; returns whether it was running."""
        if not self.is_running():
            return False
        self._pg_ctl(find_binaries_or_fail(), "stop", "-m", "fast", "-w")
        return True

    def is_running(self) -> bool:
        pid_file = self.data_dir / "postmaster.pid"
        if not pid_file.exists():
            return False
        bindir = find_binaries()
        if bindir is None:
            return False
        status = [str(bindir / "pg_ctl"), "-D", str(self.data_dir), "status"]
        result = self._run(status, check=False)
        return result.returncode == 0

    def status(self) -> str:
        if not (self.data_dir / "PG_VERSION").exists():
            return f"not initialised (would live in {self.data_dir})"
        state = "running" if self.is_running() else "stopped"
        return f"{state}: data {self.data_dir}, socket {self.socket_dir}, port {self.port}"

    # -- internals -------------------------------------------------------------------------
    def _prepare_dirs(self) -> None:
        for path in (self.home, self.data_dir, self.socket_dir):
            path.mkdir(parents=True, exist_ok=True)
        self.data_dir.chmod(0o700)
        if _is_root():
            user = SERVER_USER_WHEN_ROOT
            for path in (self.data_dir, self.socket_dir):
                shutil.chown(path, user, user)
            self.log_file.touch()
            shutil.chown(self.log_file, user, user)
            probe = self._run(["test", "-w", str(self.socket_dir)], check=False)
            if probe.returncode != 0:
                raise DatabaseSetupError(
                    f"the server runs as user {user!r} (initdb refuses root) but {user!r} cannot "
                    f"reach {self.home}. Set ANONYMIZERS_HOME to a directory it can reach, "
                    "e.g. ANONYMIZERS_HOME=/var/tmp/anonymizers."
                )

    def _initdb(self, bindir: Path) -> None:
        self._run([
            str(bindir / "initdb"), "-D", str(self.data_dir), "-U", SUPERUSER,
            "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8",
        ])
        settings = {
            **SERVER_SETTINGS,
            "port": str(self.port),
            "unix_socket_directories": f"'{self.socket_dir}'",
        }
        lines = [f"{key} = {value}" for key, value in settings.items()]
        conf = self.data_dir / "postgresql.auto.conf"
        text = conf.read_text() + "\n# anonymizers embedded cluster\n" + "\n".join(lines) + "\n"
        self._write_as_server_user(conf, text)

    def _create_database(self, bindir: Path) -> None:
        psql = [str(bindir / "psql"), "-X", "-q", "-h", str(self.socket_dir), "-p", str(self.port),
                "-U", SUPERUSER, "-d", "postgres", "-tA"]
        exists = self._run([*psql, "-c", f"SELECT 1 FROM pg_database WHERE datname='{DATABASE}'"])
        if exists.stdout.strip() != "1":
            self._run([*psql, "-c", f"CREATE DATABASE {DATABASE}"])

    def _pg_ctl(self, bindir: Path, *args: str) -> None:
        result = self._run([str(bindir / "pg_ctl"), "-D", str(self.data_dir), *args], check=False)
        if result.returncode != 0:
            tail = self.log_file.read_text()[-2000:] if self.log_file.exists() else ""
            raise DatabaseSetupError(
                f"pg_ctl {args[0]} failed: {result.stderr.strip() or result.stdout.strip()}\n"
                f"last lines of {self.log_file}:\n{tail}"
            )

    def _write_as_server_user(self, path: Path, text: str) -> None:
        path.write_text(text)
        if _is_root():
            shutil.chown(path, SERVER_USER_WHEN_ROOT, SERVER_USER_WHEN_ROOT)

    def _run(self, cmd: list[str], check: bool = True) -> subprocess.CompletedProcess[str]:
        if _is_root():
            cmd = ["runuser", "-u", SERVER_USER_WHEN_ROOT, "--", *cmd]
        result = subprocess.run(cmd, capture_output=True, text=True, cwd="/", check=False)
        if check and result.returncode != 0:
            raise DatabaseSetupError(f"{' '.join(cmd)} failed:\n{result.stderr.strip()}")
        return result


def _reachable_home(home: Path) -> Path:
    """``home``, or (as root, when the server user cannot reach it) a folder under /var/tmp.

    A checkout under /root is not traversable by the ``postgres`` user that runs the
    server; rather than fail, the cluster then lives in /var/tmp, named after ``home``.
    """
    if not _is_root() or "ANONYMIZERS_HOME" in os.environ:
        return home
    probe = home if home.exists() else home.parent
    reachable = subprocess.run(["runuser", "-u", SERVER_USER_WHEN_ROOT, "--", "test", "-x",
                                str(probe)], capture_output=True, check=False).returncode == 0
    if reachable:
        return home
    digest = hashlib.sha1(str(home).encode()).hexdigest()[:8]
    return Path(f"/var/tmp/anonymizers-{digest}")


def _is_root() -> bool:
    return os.geteuid() == 0


def find_binaries() -> Path | None:
    """The PostgreSQL server binaries with PostGIS installed for them, or None."""
    bindir = Path(f"/usr/lib/postgresql/{PG_MAJOR}/bin")
    postgis = Path(f"/usr/share/postgresql/{PG_MAJOR}/extension/postgis.control")
    if (bindir / "initdb").exists() and postgis.exists():
        return bindir
    return None


def find_binaries_or_fail() -> Path:
    bindir = find_binaries()
    if bindir is None:
        raise DatabaseSetupError(
            f"PostgreSQL {PG_MAJOR} with PostGIS is not installed; run `anonymizers db up`, "
            f"or install {' '.join(APT_PACKAGES)}"
        )
    return bindir


def find_or_install_binaries(log=print) -> Path:
    """Find the server binaries; on Debian/Ubuntu install them with apt when missing."""
    if (bindir := find_binaries()) is not None:
        return bindir
    if shutil.which("apt-get") is None:
        raise DatabaseSetupError(
            f"PostgreSQL {PG_MAJOR} + PostGIS 3 not found in /usr/lib/postgresql/{PG_MAJOR}/bin "
            "and this is not a Debian/Ubuntu machine: install them with your package manager, "
            "or set DATABASE_URL to a PostGIS database you already have."
        )
    log(f"PostgreSQL {PG_MAJOR} + PostGIS not found: installing {' '.join(APT_PACKAGES)} with apt")
    _apt_install(APT_PACKAGES)
    return find_binaries_or_fail()


def _apt_install(packages: tuple[str, ...]) -> None:
    prefix = [] if _is_root() else ["sudo", "-n"]
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    started = time.monotonic()
    for cmd in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", *packages]):
        result = subprocess.run([*prefix, *cmd], capture_output=True, text=True, env=env,
                                check=False)
        if result.returncode != 0:
            raise DatabaseSetupError(
                f"`{' '.join(cmd)}` failed (exit {result.returncode}); install "
                f"{' '.join(packages)} yourself or set DATABASE_URL.\n{result.stderr[-1500:]}"
            )
    print(f"installed {' '.join(packages)} in {time.monotonic() - started:.0f} s", file=sys.stderr)
