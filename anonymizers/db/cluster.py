"""The embedded default database: a private PostgreSQL + PostGIS cluster owned by the project.

The cluster lives under ``ANONYMIZERS_HOME`` (default ``<repo>/.anonymizers``): its own
data directory, its own socket directory and a non-default port, so it never collides
with a system PostgreSQL. It listens on its Unix socket only: nothing outside this
machine can reach raw data through it.

Who may connect (DESIGN, privacy rule 6). The socket directory is 0770 (the socket too):
other OS users do not reach the socket at all. pg_hba.conf has no ``trust`` line:

* ``postgres``, the bootstrap superuser, by peer authentication of the server's OS user
  only. ``up()`` uses it for what needs a superuser: sql/admin/bootstrap.sql (roles,
  PostGIS, revoking the statistics side doors) and the analyst's password;
* ``anonymizers``, the pipeline's role, by peer authentication of the OS user who runs
  ``db up`` (and of the server's). It owns the database and everything the pipeline
  makes, and is not a superuser (LOGIN CREATEDB, no CREATEROLE);
* ``analyst`` by password (scram-sha-256): ``up()`` generates it into ``analyst.pgpass``
  (libpq's passfile format, mode 0600) under the cluster's home.

A cluster made before these rules (trust, socket 0777, the pipeline role as bootstrap
superuser) is converted by ``up()``: sql/admin/convert_superuser.sql and
transfer_ownership.sql say how.

initdb refuses to run as root, so when we are root the server runs as the unprivileged
``postgres`` system user that Debian's postgresql package creates.

The home itself is 0710 (:func:`secure_home`): its group (the server's OS user's when we
are root) may pass through to the socket directory, nobody else may list or enter it. What
lies in it is private (pgdata 0700, the passfile, logs and lock 0600; Airflow's homes
0700: anonymizers.private_files).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import pwd
import secrets
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg

from anonymizers.db.sqlfiles import sql_dir
from anonymizers.errors import DatabaseSetupError
from anonymizers.system_packages import apt_install

__all__ = ["ADMIN", "ANALYST", "DATABASE", "OWNER", "EmbeddedCluster", "default_home",
           "passfile_beside", "secure_home"]

PG_MAJOR = "15"
DEFAULT_PORT = 54329
ADMIN = "postgres"  # bootstrap superuser (initdb -U): peer, for the server's OS user only
OWNER = "anonymizers"  # the pipeline's role: owns the database, raw, catalog and releases
ANALYST = "analyst"  # reads releases and the catalog; password in the passfile
DATABASE = "anonymizers"
SERVER_USER_WHEN_ROOT = "postgres"
SOCKET_DIR_MODE = 0o770
HOME_MODE = 0o710  # the socket directory's group passes through; nobody lists it
PASSFILE = "analyst.pgpass"  # in the cluster's home, beside the socket directory "run"
APT_PACKAGES = (f"postgresql-{PG_MAJOR}", f"postgresql-{PG_MAJOR}-postgis-3")

# Settings for a single-machine analytical workload (24 GB, 2 cores here); why each:
SERVER_SETTINGS = {
    "listen_addresses": "''",  # socket only: raw data is not reachable over the network
    "unix_socket_permissions": "0770",  # the server's OS user and group only
    "password_encryption": "'scram-sha-256'",
    "shared_buffers": "'1GB'",
    "work_mem": "'64MB'",  # sorts of window functions over trajectories stay in memory
    "maintenance_work_mem": "'1GB'",  # GiST/btree builds after bulk loads
    "max_wal_size": "'8GB'",  # no checkpoint storms during COPY
    "wal_level": "'minimal'",  # lets COPY into a table created in the same transaction skip WAL
    "max_wal_senders": "0",
    "jit": "off",  # JIT compile time dominates our short analytical queries
    "random_page_cost": "1.1",  # data sits on SSD / page cache
}
# Checked on every `db up`, also on clusters initialised by earlier versions.
SECURITY_SETTINGS = {"listen_addresses": "", "unix_socket_permissions": "0770"}

# Is the cluster's bootstrap done: the mark on template1 names the bootstrap file it
# applied, the roles are as bootstrap.sql makes them, the pipeline owns its database.
# Then the databases still owned by the bootstrap superuser (a converted cluster's).
BOOTSTRAP_STATE_SQL = """
SELECT (SELECT shobj_description(oid, 'pg_database') FROM pg_database
        WHERE datname = 'template1') IS NOT DISTINCT FROM :'mark'
   AND EXISTS (SELECT FROM pg_roles WHERE rolname = :'owner' AND rolcanlogin AND rolcreatedb
               AND NOT rolsuper AND NOT rolcreaterole
               AND pg_has_role(oid, 'pg_signal_backend', 'MEMBER'))
   AND EXISTS (SELECT FROM pg_roles WHERE rolname = 'analyst' AND rolcanlogin AND NOT rolsuper)
   AND EXISTS (SELECT FROM pg_database AS d JOIN pg_roles AS r ON r.oid = d.datdba
               WHERE d.datname = :'database' AND r.rolname = :'owner');
SELECT datname FROM pg_database
WHERE datdba = 10 AND datallowconn AND datname NOT IN ('postgres', 'template1') ORDER BY 1;
"""
CREATE_DATABASE_SQL = """
SELECT format('CREATE DATABASE %I OWNER %I', :'database', :'owner')
WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = :'database') \\gexec
"""


def default_home() -> Path:
    """``ANONYMIZERS_HOME`` if set, else ``.anonymizers`` next to the project's pyproject.toml."""
    if env := os.environ.get("ANONYMIZERS_HOME"):
        return Path(env).resolve()
    repo = Path(__file__).resolve().parents[2]
    if (repo / "pyproject.toml").exists():
        return repo / ".anonymizers"
    return Path.home() / ".anonymizers"


def secure_home(home: Path) -> Path:
    """``home`` (made if missing) with mode 0710; when we are root, its group is the server's
    OS user's, which must pass through it to the data and socket directories."""
    home.mkdir(parents=True, exist_ok=True)
    if home.stat().st_uid != os.geteuid():
        return home  # another user's folder: theirs to set
    home.chmod(HOME_MODE)
    if _is_root():
        try:
            shutil.chown(home, group=pwd.getpwnam(SERVER_USER_WHEN_ROOT).pw_gid)
        except KeyError:  # no server user on this machine: no embedded cluster either
            home.chmod(0o700)
    return home


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

    @property
    def passfile(self) -> Path:
        """The analyst's password, in libpq's passfile format; readable by its owner only."""
        return self.home / PASSFILE

    def url(self, user: str = OWNER, database: str = DATABASE) -> str:
        """libpq URI of the cluster, through its Unix socket (the owner's: peer, no password)."""
        return f"postgresql://{user}@/{database}?host={self.socket_dir}&port={self.port}"

    def analyst_url(self, database: str = DATABASE) -> str:
        """How ``analyst`` connects: its password comes from the passfile."""
        return f"{self.url(ANALYST, database)}&passfile={self.passfile}"

    # -- lifecycle -------------------------------------------------------------------------
    def up(self, log=print) -> str:
        """Install (if needed), initialise (first time), start, secure and bootstrap."""
        bindir = find_or_install_binaries(log)
        self.home.mkdir(parents=True, exist_ok=True)
        with _exclusive(self.home / "up.lock"):  # concurrent test sessions call up() too
            self._up(bindir, log)
        return self.url()

    def _up(self, bindir: Path, log) -> None:
        self._prepare_dirs()
        if not (self.data_dir / "PG_VERSION").exists():
            log(f"initialising a new PostgreSQL cluster in {self.data_dir}")
            self._initdb(bindir)
        access_changed = self._write_access_rules()
        if not self.is_running():
            log(f"starting PostgreSQL on socket {self.socket_dir} port {self.port}")
            self._pg_ctl(bindir, "start", "-w", "-t", "60", "-l", str(self.log_file))
        elif access_changed:
            self._reload(bindir)
        if self._bootstrap_superuser(bindir) == OWNER:
            log(f"converting the cluster in {self.home}: {OWNER} stops being its superuser")
            self._psql(bindir, read_admin_sql("convert_superuser.sql"), user=OWNER,
                       variables={"owner": OWNER, "admin": ADMIN})
        self._secure_socket(bindir, log)
        self._bootstrap(bindir, log)
        self._ensure_analyst_password(bindir, log)

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

    # -- internals: files and processes ---------------------------------------------------
    def _prepare_dirs(self) -> None:
        secure_home(self.home)
        for path in (self.data_dir, self.socket_dir):
            path.mkdir(parents=True, exist_ok=True)
        self.data_dir.chmod(0o700)
        self.socket_dir.chmod(SOCKET_DIR_MODE)
        self.log_file.touch()
        self.log_file.chmod(0o600)  # failed statements are logged with their values
        if _is_root():
            user = SERVER_USER_WHEN_ROOT
            for path in (self.data_dir, self.socket_dir, self.log_file):
                shutil.chown(path, user, user)
            probe = self._run(["test", "-w", str(self.socket_dir)], check=False)
            if probe.returncode != 0:
                raise DatabaseSetupError(
                    f"the server runs as user {user!r} (initdb refuses root) but {user!r} cannot "
                    f"reach {self.home}. Set ANONYMIZERS_HOME to a directory it can reach, "
                    "e.g. ANONYMIZERS_HOME=/var/tmp/anonymizers."
                )

    def _initdb(self, bindir: Path) -> None:
        # pg_hba.conf is replaced by _write_access_rules before the first start.
        # Collation C: PostgreSQL sorts text by memcmp with abbreviated keys only under C;
        # any other locale (C.UTF-8 too) goes through strcoll, and the pipeline sorts
        # millions of text ids (trajectories, persons) in every release. For UTF-8, C
        # orders as C.UTF-8 does (by code point), so no output changes.
        self._run([
            str(bindir / "initdb"), "-D", str(self.data_dir), "-U", ADMIN,
            "--auth-local=peer", "--auth-host=reject", "-E", "UTF8", "--locale=C.UTF-8",
            "--lc-collate=C",
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

    def _write_access_rules(self) -> bool:
        """pg_hba.conf and pg_ident.conf as the module docstring says; True if they changed."""
        server, invoker = _server_os_user(), _invoker_os_user()
        hba = (
            "# Written by `anonymizers db up` (anonymizers/db/cluster.py): edits are overwritten.\n"
            "# Unix socket only (listen_addresses = ''); no trust. TYPE DATABASE USER METHOD\n"
            f"local all {ADMIN} peer map=admin\n"
            f"local all {OWNER} peer map=owner\n"
            f"local all {ANALYST} scram-sha-256\n"
        )
        owners = dict.fromkeys([invoker, server])  # ordered, without duplicates
        ident = (
            "# Written by `anonymizers db up`. MAPNAME SYSTEM-USERNAME PG-USERNAME\n"
            f"admin {server} {ADMIN}\n"
            + "".join(f"owner {user} {OWNER}\n" for user in owners)
        )
        changed = False
        for name, text in (("pg_hba.conf", hba), ("pg_ident.conf", ident)):
            path = self.data_dir / name
            if not path.exists() or path.read_text() != text:
                self._write_as_server_user(path, text)
                changed = True
        return changed

    def _reload(self, bindir: Path) -> None:
        """Reload the configuration; return once new sessions get it."""
        superuser = self._bootstrap_superuser(bindir)
        loaded = self._psql(bindir, "SELECT pg_conf_load_time()", user=superuser)
        self._pg_ctl(bindir, "reload")
        for _ in range(100):
            now = self._psql(bindir, "SELECT pg_conf_load_time()", user=superuser)
            if now != loaded:
                return
            time.sleep(0.05)
        raise DatabaseSetupError(f"PostgreSQL in {self.data_dir} did not reload its settings")

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
        path.chmod(0o600)
        if _is_root():
            shutil.chown(path, SERVER_USER_WHEN_ROOT, SERVER_USER_WHEN_ROOT)

    def _run(self, cmd: list[str], check: bool = True,
             stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        """Run ``cmd`` as the server's OS user."""
        if _is_root():
            cmd = ["runuser", "-u", SERVER_USER_WHEN_ROOT, "--", *cmd]
        result = subprocess.run(cmd, capture_output=True, text=True, cwd="/", check=False,
                                input=stdin)
        if check and result.returncode != 0:
            raise DatabaseSetupError(f"{' '.join(cmd)} failed:\n{result.stderr.strip()}")
        return result

    def _psql(self, bindir: Path, script: str, *, user: str = ADMIN,
              database: str = "postgres", check: bool = True,
              variables: dict[str, str] | None = None) -> str:
        """Run a psql script as the server's OS user (peer) and ``user``; its output.

        The script goes through stdin and the variables through ``\\set`` lines in it, so
        neither shows up in the process list.
        """
        variables = variables or {}
        for value in variables.values():
            if "'" in value or "\\" in value or "\n" in value:
                raise ValueError(f"psql variable value {value!r} needs quoting")
        header = "".join(f"\\set {name} '{value}'\n" for name, value in variables.items())
        result = self._run([
            str(bindir / "psql"), "-X", "-q", "-tA", "-v", "ON_ERROR_STOP=1",
            "-h", str(self.socket_dir), "-p", str(self.port), "-U", user, "-d", database,
            "-f", "-",
        ], check=check, stdin=header + script)
        return result.stdout.strip() if result.returncode == 0 else ""

    # -- internals: roles, bootstrap, password -----------------------------------------------
    def _bootstrap_superuser(self, bindir: Path) -> str:
        """The name of the cluster's bootstrap superuser: ADMIN, or OWNER on an old cluster."""
        errors = []
        for user in (ADMIN, OWNER):
            result = self._run([
                str(bindir / "psql"), "-X", "-tA", "-h", str(self.socket_dir),
                "-p", str(self.port), "-U", user, "-d", "postgres",
                "-c", "SELECT rolname FROM pg_roles WHERE oid = 10"], check=False)
            if result.returncode == 0:
                return result.stdout.strip()
            errors.append(result.stderr.strip())
        raise DatabaseSetupError(
            f"cannot connect to the cluster in {self.home} as {ADMIN} or {OWNER}:\n"
            + "\n".join(errors))

    def _secure_socket(self, bindir: Path, log) -> None:
        """Socket-only and 0770 also on a cluster initialised by an earlier version."""
        for name, wanted in SECURITY_SETTINGS.items():
            state = self._psql(bindir, "SELECT setting, pending_restart FROM pg_settings "
                                       "WHERE name = :'name'", variables={"name": name})
            setting, pending = state.split("|")
            if setting == wanted:
                continue
            self._psql(bindir, f"ALTER SYSTEM SET {name} = :'value'",
                       variables={"value": wanted})
            if pending != "t":
                self._reload(bindir)  # marks it pending a restart: said once
                log(f"{name} set to {wanted!r}: takes effect at the next start "
                    "(`anonymizers db down && anonymizers db up`)")
        socket = self.socket_dir / f".s.PGSQL.{self.port}"
        if socket.exists():  # the running server's socket, made under the old setting
            socket.chmod(0o770)

    def _bootstrap(self, bindir: Path, log) -> None:
        """Apply sql/admin/bootstrap.sql where needed (see BOOTSTRAP_STATE_SQL)."""
        script = read_admin_sql("bootstrap.sql")
        names = {"owner": OWNER, "database": DATABASE,
                 "mark": "anonymizers bootstrap " + hashlib.sha256(script.encode()).hexdigest()}
        state = self._psql(bindir, BOOTSTRAP_STATE_SQL, variables=names).splitlines()
        done, converted = state[0] == "t", state[1:]
        if done and not converted:
            return
        log("applying sql/admin/bootstrap.sql (roles, PostGIS, statistics functions revoked)")
        owner = {"owner": OWNER}
        self._psql(bindir, script, database="template1", variables=owner)
        self._psql(bindir, CREATE_DATABASE_SQL, variables=names)
        self._psql(bindir, script, database=DATABASE, variables=owner)
        for database in converted:  # a converted cluster's databases
            log(f"database {database}: ownership moves to {OWNER}")
            # Only the pipeline's own database must succeed: another (a test's) may be
            # dropped meanwhile; one that fails is tried again at the next `db up`.
            required = database == DATABASE
            if not required:
                self._psql(bindir, script, database=database, check=False, variables=owner)
            self._psql(bindir, read_admin_sql("transfer_ownership.sql"), database=database,
                       check=required, variables=owner)
        self._psql(bindir, "COMMENT ON DATABASE template1 IS :'mark'", variables=names)

    def _ensure_analyst_password(self, bindir: Path, log) -> None:
        """A working passfile for analyst: kept if it logs in, else a new password."""
        if self.passfile.exists() and _logs_in(self.analyst_url("postgres")):
            self.passfile.chmod(0o600)
            return
        password = secrets.token_urlsafe(32)
        with psycopg.connect(self.url(OWNER, "postgres")) as conn:
            verifier = conn.pgconn.encrypt_password(
                password.encode(), ANALYST.encode(), b"scram-sha-256").decode()
        self._psql(bindir, "ALTER ROLE analyst PASSWORD :'verifier'",
                   variables={"verifier": verifier})
        self._write_passfile(password)
        log(f"a new password for {ANALYST}: in {self.passfile} (mode 0600)")

    def _write_passfile(self, password: str) -> None:
        def escaped(field: str) -> str:
            return field.replace("\\", "\\\\").replace(":", "\\:")

        line = ":".join([escaped(str(self.socket_dir)), str(self.port), "*", ANALYST,
                         escaped(password)])
        temporary = self.passfile.with_suffix(".tmp")
        temporary.unlink(missing_ok=True)
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as stream:
            stream.write(line + "\n")
        os.replace(temporary, self.passfile)


@contextmanager
def _exclusive(lock: Path) -> Iterator[None]:
    """Hold an exclusive lock on the file ``lock`` (made if missing, mode 0600)."""
    with os.fdopen(os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "a") as stream:
        if os.fstat(stream.fileno()).st_uid == os.geteuid():
            os.fchmod(stream.fileno(), 0o600)  # an older version's 0644
        fcntl.flock(stream, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(stream, fcntl.LOCK_UN)


def passfile_beside(host: str) -> Path | None:
    """The analyst's passfile of the embedded cluster whose socket directory is ``host``."""
    if not host.startswith("/"):
        return None
    passfile = Path(host).parent / PASSFILE
    return passfile if passfile.is_file() else None


def read_admin_sql(name: str) -> str:
    """A file of sql/admin/: what the cluster's bootstrap superuser runs."""
    return (sql_dir() / "admin" / name).read_text()


def _logs_in(conninfo: str) -> bool:
    try:
        with psycopg.connect(conninfo, connect_timeout=10):
            return True
    except psycopg.OperationalError:
        return False


def _server_os_user() -> str:
    return SERVER_USER_WHEN_ROOT if _is_root() else _invoker_os_user()


def _invoker_os_user() -> str:
    return pwd.getpwuid(os.geteuid()).pw_name


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
    apt_install(packages, DatabaseSetupError,
                f"install {' '.join(packages)} yourself or set DATABASE_URL.")
