"""Who can connect to the embedded cluster (DESIGN, privacy rule 6; issue 7, finding 1).

The attack: the cluster used to be initialised with ``trust`` on a socket of mode 0777,
and the pipeline's role was its superuser, so any OS user who wrote ``user=anonymizers``
in the printed psql line read raw data (and could do anything else). These tests replay
it as another OS user (``nobody``, through runuser: the suite runs as root here) against
a cluster made by ``up()`` in a scratch home, and against a cluster made the old way and
converted by ``up()``.
"""

from __future__ import annotations

import os
import pwd
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from anonymizers.db.cluster import EmbeddedCluster, find_binaries_or_fail
from anonymizers.db.connection import analyst_url
from anonymizers.db.migrate import migrate
from anonymizers.errors import DatabaseSetupError
from anonymizers.loading import load_dataset

INTRUDER = "nobody"
POINTS = ("traj_id,user_id,t,lon,lat\n"
          "a,u1,2020-01-01T08:00:00Z,11.25,43.77\na,u1,2020-01-01T08:01:00Z,11.26,43.78\n")


def _scratch_home(prefix: str) -> Path:
    """A home the server's OS user can reach (not under /tmp/pytest-of-root, mode 0700)."""
    home = Path(tempfile.mkdtemp(prefix=prefix, dir="/var/tmp"))
    home.chmod(0o755)
    return home


def _port() -> int:
    return 55000 + os.getpid() % 1000  # socket-only: the port only names the socket file


@pytest.fixture(scope="module")
def cluster() -> Iterator[EmbeddedCluster]:
    """A cluster made by ``up()`` in a scratch home, migrated, with one dataset loaded."""
    home = _scratch_home("anonymizers-security-")
    made = EmbeddedCluster(home, _port())
    try:
        made.up(log=lambda _: None)
        migrate(made.url())
        path = home / "points.csv"
        path.write_text(POINTS)
        load_dataset(path, "city", url=made.url())
        yield made
    finally:
        made.down()
        shutil.rmtree(home, ignore_errors=True)


def psql_as(cluster: EmbeddedCluster, user: str, sql: str = "SELECT 1", *,
            group: str | None = None, password: str | None = None,
            database: str = "anonymizers") -> subprocess.CompletedProcess[str]:
    """psql run by the OS user INTRUDER (in ``group`` if given), connecting as ``user``."""
    psql = str(find_binaries_or_fail() / "psql")
    conninfo = (f"host={cluster.socket_dir} port={cluster.port} user={user} dbname={database}")
    env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}
    if password is not None:
        env["PGPASSWORD"] = password
    switch = ["runuser", "-u", INTRUDER, *(["-g", group] if group else []), "--"]
    return subprocess.run([*switch, "env", "-i", *[f"{k}={v}" for k, v in env.items()],
                           psql, "-X", "-w", "-tA", conninfo, "-c", sql],
                          capture_output=True, text=True, cwd="/", check=False)


def socket_group(cluster: EmbeddedCluster) -> str:
    import grp

    return grp.getgrgid(cluster.socket_dir.stat().st_gid).gr_name


def analyst_password(cluster: EmbeddedCluster) -> str:
    line = cluster.passfile.read_text().strip()
    return line.rsplit(":", 1)[1]  # token_urlsafe: no ':' or '\' to unescape


# -- another OS user --------------------------------------------------------------------------

def test_another_os_user_cannot_even_reach_the_socket(cluster: EmbeddedCluster) -> None:
    for user in ("anonymizers", "analyst", "postgres"):
        result = psql_as(cluster, user, "SELECT count(*) FROM raw.points")
        assert result.returncode != 0
        assert "Permission denied" in result.stderr, result.stderr


@pytest.mark.parametrize(("user", "refusal"), [
    ("anonymizers", "Peer authentication failed"),
    ("postgres", "Peer authentication failed"),
    ("analyst", "no password supplied"),
])
def test_in_the_socket_s_group_it_still_cannot_log_in_without_the_password(
        cluster: EmbeddedCluster, user: str, refusal: str) -> None:
    result = psql_as(cluster, user, "SELECT count(*) FROM raw.points",
                     group=socket_group(cluster))
    assert result.returncode != 0
    assert refusal in result.stderr, result.stderr


def test_with_the_password_it_is_analyst_and_raw_stays_closed(cluster: EmbeddedCluster) -> None:
    password = analyst_password(cluster)
    group = socket_group(cluster)
    ok = psql_as(cluster, "analyst", "SELECT current_user", group=group, password=password)
    assert ok.stdout.strip() == "analyst", ok.stderr
    raw = psql_as(cluster, "analyst", "SELECT count(*) FROM raw.points", group=group,
                  password=password)
    assert "permission denied" in raw.stderr, raw.stderr
    wrong = psql_as(cluster, "analyst", group=group, password=password[::-1])
    assert "password authentication failed" in wrong.stderr, wrong.stderr


# -- the printed line, the roles, the files ---------------------------------------------------

def test_the_printed_analyst_line_logs_in_with_the_passfile(cluster: EmbeddedCluster) -> None:
    line = analyst_url(cluster.url())
    assert f"passfile={cluster.passfile}" in line and "password" not in line.replace(
        "passfile", "")
    with psycopg.connect(line, autocommit=True) as analyst:
        assert analyst.execute("SELECT current_user").fetchone() == ("analyst",)
        assert analyst.execute("SELECT count(*) FROM catalog.releases").fetchone() == (0,)
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            analyst.execute("SELECT count(*) FROM raw.points")


def roles(url: str) -> dict[str, tuple[bool, bool, bool, bool]]:
    """rolname -> (superuser, createrole, createdb, login) of the roles we know of."""
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT rolname, rolsuper, rolcreaterole, rolcreatedb, rolcanlogin "
                            "FROM pg_roles WHERE rolname !~ '^pg_'").fetchall()
    return {name: tuple(flags) for name, *flags in rows}


def test_the_pipeline_role_is_not_a_superuser(cluster: EmbeddedCluster) -> None:
    assert roles(cluster.url()) == {
        "postgres": (True, True, True, True),  # bootstrap superuser: peer, server's OS user
        "anonymizers": (False, False, True, True),
        "analyst": (False, False, False, True),
    }
    with psycopg.connect(cluster.url()) as conn:
        assert conn.execute("SELECT rolname FROM pg_roles WHERE oid = 10").fetchone() == (
            "postgres",)
        # analyst: to SET ROLE analyst; pg_signal_backend: to drop its own databases WITH
        # (FORCE) while autovacuum works there (sql/admin/bootstrap.sql says why).
        memberships = conn.execute(
            "SELECT array_agg(b.rolname::text ORDER BY b.rolname) FROM pg_auth_members AS m "
            "JOIN pg_roles AS b ON b.oid = m.roleid WHERE m.member = 'anonymizers'::regrole"
        ).fetchone()
        assert memberships == (["analyst", "pg_signal_backend"],)
        assert conn.execute("SELECT pg_get_userbyid(datdba) FROM pg_database "
                            "WHERE datname = 'anonymizers'").fetchone() == ("anonymizers",)


def hba_rules(cluster: EmbeddedCluster) -> list[list[str]]:
    lines = (cluster.data_dir / "pg_hba.conf").read_text().splitlines()
    return [line.split() for line in lines if line.strip() and not line.startswith("#")]


def assert_no_trust_socket_only(cluster: EmbeddedCluster) -> None:
    rules = hba_rules(cluster)
    assert rules == [["local", "all", "postgres", "peer", "map=admin"],
                     ["local", "all", "anonymizers", "peer", "map=owner"],
                     ["local", "all", "analyst", "scram-sha-256"]]
    with psycopg.connect(cluster.url()) as conn:
        assert conn.execute("SHOW listen_addresses").fetchone() == ("",)
    ident = (cluster.data_dir / "pg_ident.conf").read_text().split("\n", 1)[1].split()
    me = pwd.getpwuid(os.geteuid()).pw_name
    server = "postgres" if os.geteuid() == 0 else me
    assert ident == ["admin", server, "postgres",
                     *[word for user in dict.fromkeys([me, server])
                       for word in ("owner", user, "anonymizers")]]


def test_pg_hba_has_no_trust_line_and_no_network_line(cluster: EmbeddedCluster) -> None:
    assert_no_trust_socket_only(cluster)
    with psycopg.connect(cluster.url()) as conn:
        assert conn.execute("SHOW unix_socket_permissions").fetchone() == ("0770",)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def assert_private_files(cluster: EmbeddedCluster) -> None:
    assert mode(cluster.passfile) == 0o600
    assert cluster.passfile.stat().st_uid == os.geteuid()
    assert mode(cluster.socket_dir) & 0o007 == 0
    assert mode(cluster.socket_dir / f".s.PGSQL.{cluster.port}") & 0o007 == 0
    assert mode(cluster.log_file) & 0o077 == 0  # failed statements are logged with values
    assert mode(cluster.data_dir) == 0o700


def test_the_passfile_socket_and_log_are_private(cluster: EmbeddedCluster) -> None:
    assert_private_files(cluster)


def test_db_up_again_keeps_the_password_and_a_lost_passfile_gets_a_new_one(
        cluster: EmbeddedCluster) -> None:
    before = cluster.passfile.read_text()
    said: list[str] = []
    cluster.up(log=said.append)
    assert said == [] and cluster.passfile.read_text() == before
    cluster.passfile.unlink()
    cluster.up(log=said.append)
    assert [line for line in said if "new password" in line]
    assert cluster.passfile.read_text() != before
    with psycopg.connect(analyst_url(cluster.url())) as analyst:
        assert analyst.execute("SELECT current_user").fetchone() == ("analyst",)


def test_migrating_without_the_bootstrap_fails_naming_it(cluster: EmbeddedCluster) -> None:
    # A database the owner makes from template0 has no PostGIS: what a DATABASE_URL whose
    # DBA has not run the bootstrap looks like to a non-superuser owner.
    with psycopg.connect(cluster.url(database="postgres"), autocommit=True) as conn:
        conn.execute("CREATE DATABASE without_bootstrap TEMPLATE template0")
    try:
        with pytest.raises(DatabaseSetupError, match=r"PostGIS is not installed.*"
                                                     r"sql/admin/bootstrap\.sql"):
            migrate(cluster.url(database="without_bootstrap"))
    finally:
        with psycopg.connect(cluster.url(database="postgres"), autocommit=True) as conn:
            conn.execute("DROP DATABASE without_bootstrap")


def as_superuser(cluster: EmbeddedCluster, database: str, sql: str) -> None:
    """psql as the cluster's superuser: the server's OS user, by peer (what a DBA does)."""
    server = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    subprocess.run([*server, str(find_binaries_or_fail() / "psql"), "-X", "-q",
                    "-v", "ON_ERROR_STOP=1", f"host={cluster.socket_dir} port={cluster.port} "
                    f"user=postgres dbname={database}", "-f", "-"],
                   input=sql, text=True, capture_output=True, check=True, cwd="/")


def test_a_reopened_statistics_door_stops_the_migration_until_the_bootstrap_runs(
        cluster: EmbeddedCluster) -> None:
    # A DATABASE_URL server where PostGIS grants its functions to PUBLIC again (an
    # ALTER EXTENSION postgis UPDATE that recreates them, or no bootstrap at all): the
    # non-superuser owner may not revoke them; 014 refuses and names the file.
    admin = cluster.url(database="postgres")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute("CREATE DATABASE reopened")
    url = cluster.url(database="reopened")
    try:
        migrate(url)
        as_superuser(cluster, "reopened", "GRANT EXECUTE ON FUNCTION "
                     "_postgis_selectivity(regclass, text, geometry, text) TO PUBLIC")
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("DELETE FROM catalog.schema_migrations "
                         "WHERE version = '014_statistics_functions'")
        with pytest.raises(DatabaseSetupError, match=r"_postgis_selectivity.*"
                                                     r"sql/admin/bootstrap\.sql"):
            migrate(url)
        bootstrap = (Path(__file__).parents[1] / "sql" / "admin" / "bootstrap.sql").read_text()
        as_superuser(cluster, "reopened", bootstrap)
        assert migrate(url) == ["014_statistics_functions"]
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute("DROP DATABASE reopened WITH (FORCE)")


# -- a cluster made the old way -----------------------------------------------------------------

def make_old_style_cluster(home: Path, port: int) -> str:
    """What `db up` made before issue 7: initdb --auth=trust with the pipeline role as its
    superuser, socket 0777 in a 0755 directory. Returns its (superuser) URL."""
    bindir = find_binaries_or_fail()
    data, run, log = home / "pgdata", home / "run", home / "postgres.log"
    for path in (data, run):
        path.mkdir()
    log.touch()
    for path in (data, run, log):
        shutil.chown(path, "postgres", "postgres")
    data.chmod(0o700)
    as_server = ["runuser", "-u", "postgres", "--"]
    subprocess.run([*as_server, str(bindir / "initdb"), "-D", str(data), "-U", "anonymizers",
                    "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8"],
                   check=True, capture_output=True, cwd="/")
    with (data / "postgresql.auto.conf").open("a") as conf:
        conf.write(f"listen_addresses = ''\nport = {port}\nunix_socket_directories = '{run}'\n"
                   "shared_buffers = '128MB'\nwal_level = 'minimal'\nmax_wal_senders = 0\n")
    subprocess.run([*as_server, str(bindir / "pg_ctl"), "-D", str(data), "-l", str(log),
                    "-w", "start"],
                   check=True, capture_output=True, cwd="/")
    url = f"postgresql://anonymizers@/anonymizers?host={run}&port={port}"
    with psycopg.connect(url.replace("/anonymizers?", "/postgres?"), autocommit=True) as conn:
        conn.execute("CREATE DATABASE anonymizers")
    return url


def owned_by_the_superuser(url: str) -> list[str]:
    """Objects of the database not owned by the pipeline role, besides the system's and
    PostGIS's (which should stay the superuser's)."""
    with psycopg.connect(url) as conn:
        rows = conn.execute("""
            SELECT 'schema ' || nspname FROM pg_namespace
            WHERE nspowner <> 'anonymizers'::regrole AND nspname !~ '^(pg_|information_schema$)'
              AND nspname <> 'public'
            UNION ALL
            SELECT 'relation ' || c.oid::regclass FROM pg_class AS c
            JOIN pg_namespace AS n ON n.oid = c.relnamespace
            WHERE c.relowner <> 'anonymizers'::regrole AND n.nspname !~ '^(pg_|information_schema$)'
              AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')  -- indexes follow their table
              AND NOT EXISTS (SELECT FROM pg_depend AS d WHERE d.objid = c.oid
                              AND d.classid = 'pg_class'::regclass AND d.deptype = 'e')
            UNION ALL
            SELECT 'function ' || p.oid::regprocedure FROM pg_proc AS p
            JOIN pg_namespace AS n ON n.oid = p.pronamespace
            WHERE p.proowner <> 'anonymizers'::regrole AND n.nspname !~ '^(pg_|information_schema$)'
              AND NOT EXISTS (SELECT FROM pg_depend AS d WHERE d.objid = p.oid
                              AND d.classid = 'pg_proc'::regclass AND d.deptype = 'e')
            UNION ALL
            SELECT 'database ' || datname FROM pg_database
            WHERE datname = current_database() AND datdba <> 'anonymizers'::regrole
            ORDER BY 1""").fetchall()
    return [name for (name,) in rows]


def test_an_old_trust_cluster_is_converted_by_db_up(tmp_path: Path) -> None:
    home = _scratch_home("anonymizers-old-")
    old = EmbeddedCluster(home, _port() + 1)
    try:
        url = make_old_style_cluster(home, old.port)
        migrate(url)
        source = tmp_path / "points.csv"
        source.write_text(POINTS)
        load_dataset(source, "before", url=url)
        assert roles(url)["anonymizers"][0] is True  # the old superuser owner
        assert psql_as(old, "anonymizers", "SELECT count(*) FROM raw.points",
                       ).stdout.strip() == "2"  # the attack works on the old cluster

        said: list[str] = []
        assert old.up(log=said.append) == url
        assert any("converting" in line for line in said), said

        assert roles(url) == {"postgres": (True, True, True, True),
                              "anonymizers": (False, False, True, True),
                              "analyst": (False, False, False, True)}
        assert owned_by_the_superuser(url) == []
        assert_no_trust_socket_only(old)
        assert_private_files(old)
        for user in ("anonymizers", "postgres", "analyst"):
            assert psql_as(old, user, group=socket_group(old)).returncode != 0
        # The data survived, and the non-superuser owner migrates, loads and replaces.
        assert migrate(url) == []  # all applied before; none needs the superuser again
        load_dataset(source, "after", url=url)
        load_dataset(source, "before", url=url, replace=True)
        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT count(*) FROM raw.points").fetchone() == (4,)
        with psycopg.connect(analyst_url(url)) as analyst:
            assert analyst.execute("SELECT current_user").fetchone() == ("analyst",)
            (leaf,) = analyst.execute(
                "SELECT c.oid FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = "
                "c.relnamespace WHERE n.nspname = 'raw' AND c.relname ~ '^points_.*_0$'"
            ).fetchone()
            with pytest.raises(psycopg.errors.InsufficientPrivilege,
                               match="function _postgis_stats"):
                analyst.execute("SELECT _postgis_stats(%s::oid::regclass, 'geom')", (leaf,))

        said.clear()
        old.up(log=said.append)  # converted once: nothing more to do
        assert said == []
    finally:
        old.down()
        shutil.rmtree(home, ignore_errors=True)
