"""Static checks of the Docker deployment in docker/ (no Docker engine, no database).

The deployment files were written on a machine without a Docker engine, so nothing in
docker/ has ever been built or started there. These tests are the only check: they parse
docker/compose.yaml, docker/example.env and docker/Dockerfile and verify the wiring an
operator relies on (services, healthchecks, start-up order, variables and their
defaults, connection URIs, what the image copies and installs). They cannot prove that
the image builds or that the containers start.
"""

from __future__ import annotations

import fnmatch
import json
import posixpath
import re
import shlex
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

REPO_ROOT = Path(__file__).resolve().parents[1]
DOCKER_DIR = REPO_ROOT / "docker"
COMPOSE_FILE = DOCKER_DIR / "compose.yaml"
EXAMPLE_ENV = DOCKER_DIR / "example.env"
DOCKERFILE = DOCKER_DIR / "Dockerfile"
DOCKERIGNORE = DOCKER_DIR / "Dockerfile.dockerignore"

# Long-running Airflow services and the Airflow CLI command each one must run.
AIRFLOW_COMMANDS = {
    "airflow-apiserver": ["api-server"],
    "airflow-scheduler": ["scheduler"],
    "airflow-dag-processor": ["dag-processor"],
}
AIRFLOW_SERVICES = tuple(AIRFLOW_COMMANDS)
# Every service built from docker/Dockerfile, including the one-shot migration.
IMAGE_SERVICES = ("airflow-init", *AIRFLOW_SERVICES)
EXPECTED_SERVICES = {"postgis", "airflow-metadata", *IMAGE_SERVICES}

# What the image must contain: the package, its pins, its SQL and its DAGs.
REQUIRED_COPY_SOURCES = {"pyproject.toml", ".ci/constraints.txt", "anonymizers", "sql", "dags"}
# Files the lead engineer adds in the same commit as these deployment files (README.md
# because pyproject.toml names it as the readme): until that commit lands, their
# COPY-source check is expected to fail, with a message saying so.
CREATED_BY_LEAD = {*REQUIRED_COPY_SOURCES, "README.md"}

# Compose interpolation: ${VAR}, ${VAR:-default}, ${VAR-default}, ${VAR:?err}, ${VAR?err},
# ${VAR:+alt}, ${VAR+alt}, and bare $VAR. "$$" is an escaped literal "$" and is removed
# before matching so that $${POSTGRES_USER} (expanded by the container's shell) is skipped.
_INTERPOLATION = re.compile(
    r"\$(?:\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:?[-?+])(?P<arg>[^}]*))?\}"
    r"|(?P<bare>[A-Za-z_][A-Za-z0-9_]*))"
)


# --- Loading ----------------------------------------------------------------------------


def _load_compose() -> dict[str, Any]:
    # safe_load resolves the anchors, aliases and "<<" merge keys the file uses, so every
    # service below is seen exactly as Compose sees it (before interpolation).
    with COMPOSE_FILE.open(encoding="utf-8") as f:
        data = yaml.safe_load(f)
    assert isinstance(data, dict) and isinstance(data.get("services"), dict), (
        f"{COMPOSE_FILE} has no services mapping"
    )
    return data


def _load_example_env() -> dict[str, str]:
    values: dict[str, str] = {}
    for line in EXAMPLE_ENV.read_text(encoding="utf-8").splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        name, sep, value = stripped.partition("=")
        assert sep, f"example.env: not a NAME=value line: {line!r}"
        values[name.strip()] = value.strip()
    return values


COMPOSE = _load_compose()
SERVICES: dict[str, Any] = COMPOSE["services"]
EXAMPLE_VALUES = _load_example_env()
# The secrets an operator must set (no defaults): values used wherever a test interpolates.
SECRETS = {
    "POSTGRES_PASSWORD": "pg-secret-1",
    "AIRFLOW_DB_PASSWORD": "af-secret-2",
    "AIRFLOW_JWT_SECRET": "jwt-secret-3",
}


def _strings(node: Any) -> Iterator[str]:
    """Every string (keys and values) in a parsed YAML tree."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, Mapping):
        for key, value in node.items():
            yield from _strings(key)
            yield from _strings(value)
    elif isinstance(node, list):
        for item in node:
            yield from _strings(item)


def _references(text: str) -> Iterator[re.Match[str]]:
    yield from _INTERPOLATION.finditer(text.replace("$$", ""))


def _interpolate(text: str, env: Mapping[str, str]) -> str:
    """Apply Compose's interpolation rules to text, with env as the .env contents."""

    def substitute(match: re.Match[str]) -> str:
        name = match["name"] or match["bare"]
        op, arg = match["op"], match["arg"]
        value = env.get(name)
        if op in (":-", "-"):
            unset = value is None or (op == ":-" and value == "")
            return arg if unset else value
        if op in (":?", "?"):
            unset = value is None or (op == ":?" and value == "")
            if unset:
                raise AssertionError(f"${{{name}}} is required but unset: {arg}")
            return value
        if op in (":+", "+"):
            set_ = value is not None and (op == "+" or value != "")
            return arg if set_ else ""
        return value or ""

    # "$$" stays a literal "$" after interpolation.
    return "\x00".join(_INTERPOLATION.sub(substitute, part) for part in text.split("$$")).replace(
        "\x00", "$"
    )


def _environment(service: str) -> dict[str, str]:
    env = SERVICES[service].get("environment") or {}
    if isinstance(env, list):  # list form: ["KEY=value", ...]
        env = dict(item.split("=", 1) for item in env)
    return {str(k): str(v) for k, v in env.items()}


def _depends_on(service: str) -> dict[str, Any]:
    deps = SERVICES[service].get("depends_on") or {}
    # The short (list) form carries no condition: normalise so the check fails clearly.
    return {d: {} for d in deps} if isinstance(deps, list) else dict(deps)


def _command(service: str) -> list[str]:
    command = SERVICES[service].get("command")
    if command is None:
        return []
    return shlex.split(command) if isinstance(command, str) else [str(c) for c in command]


def _healthcheck_test(service: str) -> str:
    test = (SERVICES[service].get("healthcheck") or {}).get("test")
    return " ".join(test) if isinstance(test, list) else str(test or "")


# --- Dockerfile parsing -------------------------------------------------------------------


def _dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, with comments dropped and continuations joined."""
    instructions: list[tuple[str, str]] = []
    pending = ""
    for raw in DOCKERFILE.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):  # comment inside a continued instruction
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line = pending + line
        pending = ""
        keyword, _, rest = line.partition(" ")
        instructions.append((keyword.upper(), rest.strip()))
    assert not pending, "Dockerfile ends with a line continuation"
    return instructions


def _copy_args(rest: str) -> tuple[list[str], str]:
    """Sources and destination of a COPY/ADD (shell or JSON form, flags dropped)."""
    parts = json.loads(rest) if rest.startswith("[") else shlex.split(rest)
    parts = [p for p in parts if not p.startswith("--")]
    assert len(parts) >= 2, f"COPY needs a source and a destination: {rest!r}"
    return parts[:-1], parts[-1]


def _normalise_source(src: str) -> str:
    return posixpath.normpath(src.removeprefix("./"))


class _Dockerfile:
    """The facts the tests need, read once from docker/Dockerfile."""

    def __init__(self) -> None:
        self.instructions = _dockerfile_instructions()
        self.from_images: list[str] = []
        self.arg_defaults: dict[str, str] = {}
        self.env: dict[str, str] = {}
        # COPY source (normalised, relative to the build context) -> absolute destination.
        self.copies: dict[str, str] = {}
        # RUN commands with the USER that runs them.
        self.runs: list[tuple[str, str]] = []
        workdir, user = "/", "root"
        for keyword, rest in self.instructions:
            if keyword == "FROM":
                self.from_images.append(rest.split()[0])
                # apache/airflow images run as "airflow" unless told otherwise.
                user = "airflow" if rest.startswith("apache/airflow") else "root"
            elif keyword == "ARG":
                name, _, default = rest.partition("=")
                if default:
                    self.arg_defaults.setdefault(name.strip(), default.strip().strip('"'))
            elif keyword == "USER":
                user = rest.split(":")[0]
            elif keyword == "WORKDIR":
                workdir = posixpath.normpath(posixpath.join(workdir, rest))
            elif keyword == "ENV":
                tokens = shlex.split(rest)
                if "=" in tokens[0]:
                    self.env.update(t.split("=", 1) for t in tokens)
                else:
                    self.env[tokens[0]] = " ".join(tokens[1:])
            elif keyword in ("COPY", "ADD"):
                sources, dest = _copy_args(rest)
                dest = posixpath.join(workdir, dest)
                into_dir = dest.endswith("/") or len(sources) > 1
                for src in sources:
                    # A directory's contents are copied into dest; a file copied to a
                    # directory destination keeps its name. (A trailing "/" marks a
                    # directory even if it is not in the checkout yet.)
                    is_dir = src.endswith("/") or (REPO_ROOT / src).is_dir()
                    src = _normalise_source(src)
                    target = (
                        posixpath.join(dest, posixpath.basename(src))
                        if into_dir and not is_dir
                        else dest
                    )
                    self.copies[src] = posixpath.normpath(target)
            elif keyword == "RUN":
                self.runs.append((user, rest))


DOCKERFILE_FACTS = _Dockerfile()


# --- Services -----------------------------------------------------------------------------


def test_all_services_are_defined() -> None:
    missing = EXPECTED_SERVICES - set(SERVICES)
    assert not missing, f"compose.yaml lacks services: {sorted(missing)}"


def test_postgis_runs_a_postgis_image_with_a_pg_isready_healthcheck() -> None:
    postgis = SERVICES["postgis"]
    image = _interpolate(postgis["image"], {})
    assert image.startswith("postgis/postgis:"), f"postgis image is {image!r}"
    assert "POSTGIS_IMAGE" in postgis["image"], "the PostGIS image should be overridable"
    assert "pg_isready" in _healthcheck_test("postgis")
    for key in ("interval", "timeout", "retries"):
        assert key in postgis["healthcheck"], f"postgis healthcheck has no {key}"


def test_postgis_healthcheck_uses_the_container_variables() -> None:
    # "$${VAR}" reaches the container as "${VAR}": the check follows the actual settings
    # instead of values frozen when the file was interpolated.
    test = _healthcheck_test("postgis")
    assert "$${POSTGRES_USER}" in test and "$${POSTGRES_DB}" in test, test


def test_postgis_keeps_its_data_in_a_named_volume_and_is_published() -> None:
    postgis = SERVICES["postgis"]
    data_mounts = [v for v in postgis.get("volumes", []) if v.endswith(":/var/lib/postgresql/data")]
    assert data_mounts, "postgis data directory is not on a volume"
    volume = data_mounts[0].split(":")[0]
    assert volume in (COMPOSE.get("volumes") or {}), f"{volume!r} is not a named volume"
    ports = [str(p) for p in postgis.get("ports", [])]
    assert any("POSTGIS_PORT" in p and p.endswith(":5432") for p in ports), ports


def test_postgis_environment_has_user_password_and_db() -> None:
    env = _environment("postgis")
    for key, default in {"POSTGRES_USER": "anonymizers", "POSTGRES_DB": "anonymizers"}.items():
        assert key in env, f"postgis environment lacks {key}"
        assert _interpolate(env[key], {}) == default, f"default {key} is not {default!r}"
    assert _interpolate(env["POSTGRES_PASSWORD"], SECRETS) == SECRETS["POSTGRES_PASSWORD"]


# --- Deployment defaults (issue 7, finding 10) --------------------------------------------------
# The superuser password used to default to "anonymizers" and the port was published on
# every interface: anyone who could reach the host logged in as the owner of the raw data.


def _required(name: str) -> bool:
    """Every reference to ``name`` in compose.yaml is ${name:?...} (no default, not empty)."""
    ops = {m["op"] for m in _compose_references() if (m["name"] or m["bare"]) == name}
    return ops == {":?"}


@pytest.mark.parametrize("secret", sorted(SECRETS))
def test_no_secret_has_a_default_and_compose_refuses_to_start_without_it(secret: str) -> None:
    assert _required(secret), f"{secret} must be written ${{{secret}:?...}} everywhere"
    assert EXAMPLE_VALUES.get(secret) == "", f"example.env must leave {secret} empty"
    # What Compose does with a copied example.env whose secret was not filled in.
    unfilled = {**EXAMPLE_VALUES, **SECRETS, secret: ""}
    with pytest.raises(AssertionError, match=f"{secret}.*required"):
        for text in _strings(COMPOSE):
            _interpolate(text, unfilled)


def test_every_password_or_secret_variable_is_a_required_secret() -> None:
    names = {m["name"] or m["bare"] for m in _compose_references()}
    assert {n for n in names if re.search("PASSWORD|SECRET", n)} == set(SECRETS)


def _published(service: str, env: Mapping[str, str]) -> list[tuple[str, str, str]]:
    """(host address, host port, container port) of each published port, interpolated."""
    published = []
    for port in SERVICES[service].get("ports", []):
        parts = _interpolate(str(port), env).split(":")
        assert len(parts) == 3, f"{service} publishes {port!r} without a host address"
        published.append((parts[0], parts[1], parts[2]))
    return published


def test_published_ports_bind_to_the_loopback_interface_unless_configured() -> None:
    published = {service: _published(service, SECRETS) for service in SERVICES
                 if SERVICES[service].get("ports")}
    assert published == {"postgis": [("127.0.0.1", "5432", "5432")],
                         "airflow-apiserver": [("127.0.0.1", "8080", "8080")]}
    operator = {**SECRETS, "POSTGIS_BIND": "10.0.0.5", "AIRFLOW_API_BIND": "10.0.0.6",
                "POSTGIS_PORT": "15432"}
    assert _published("postgis", operator) == [("10.0.0.5", "15432", "5432")]
    assert _published("airflow-apiserver", operator) == [("10.0.0.6", "8080", "8080")]


def test_airflow_metadata_is_a_separate_healthchecked_postgres() -> None:
    metadata = SERVICES["airflow-metadata"]
    assert _interpolate(metadata["image"], {}).startswith("postgres:15")
    assert "pg_isready" in _healthcheck_test("airflow-metadata")
    # Only Airflow talks to its metadata DB: nothing to publish.
    assert not metadata.get("ports"), "the Airflow metadata DB should not be published"
    mounts = [v for v in metadata.get("volumes", []) if v.endswith(":/var/lib/postgresql/data")]
    assert mounts, "airflow-metadata data directory is not on a volume"


def test_airflow_init_only_migrates_the_metadata_db() -> None:
    command = _command("airflow-init")
    assert command in (["db", "migrate"], ["airflow", "db", "migrate"]), command
    deps = _depends_on("airflow-init")
    assert deps.get("airflow-metadata", {}).get("condition") == "service_healthy", deps
    # A one-shot job must not be restarted once it has exited.
    assert str(SERVICES["airflow-init"].get("restart", "no")) == "no"


@pytest.mark.parametrize("service", AIRFLOW_SERVICES)
def test_airflow_service_runs_its_component(service: str) -> None:
    assert _command(service) == AIRFLOW_COMMANDS[service]


@pytest.mark.parametrize("service", AIRFLOW_SERVICES)
def test_airflow_service_waits_for_postgis_and_the_migration(service: str) -> None:
    deps = _depends_on(service)
    assert deps.get("postgis", {}).get("condition") == "service_healthy", (
        f"{service} must wait for postgis to be healthy: {deps}"
    )
    assert deps.get("airflow-init", {}).get("condition") == "service_completed_successfully", (
        f"{service} must wait for airflow-init to complete: {deps}"
    )


@pytest.mark.parametrize("service", AIRFLOW_SERVICES)
def test_airflow_service_has_a_healthcheck(service: str) -> None:
    assert _healthcheck_test(service), f"{service} has no healthcheck"


@pytest.mark.parametrize("service", IMAGE_SERVICES)
def test_airflow_service_is_built_from_the_repo_root(service: str) -> None:
    build = SERVICES[service].get("build")
    assert isinstance(build, dict), f"{service} is not built from docker/Dockerfile"
    context = (COMPOSE_FILE.parent / build["context"]).resolve()
    assert context == REPO_ROOT, f"{service} build context is {context}, not the repo root"
    assert (context / build["dockerfile"]).resolve() == DOCKERFILE.resolve()
    assert "AIRFLOW_VERSION" in (build.get("args") or {}), (
        f"{service} does not pass AIRFLOW_VERSION"
    )


@pytest.mark.parametrize("service", IMAGE_SERVICES)
def test_airflow_service_uses_postgres_metadata_and_local_executor(service: str) -> None:
    env = _environment(service)
    assert env.get("AIRFLOW__CORE__EXECUTOR") == "LocalExecutor"
    assert env.get("AIRFLOW__CORE__LOAD_EXAMPLES", "").lower() == "false"
    assert "ANONYMIZERS_SCHEDULE" not in env  # retired: the schedules file replaced it
    uri = urlsplit(_interpolate(env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"], SECRETS))
    assert uri.scheme.startswith("postgresql"), "Airflow metadata must not be sqlite"
    assert uri.hostname == "airflow-metadata"
    metadata = {k: _interpolate(v, SECRETS) for k, v in _environment("airflow-metadata").items()}
    assert uri.username == metadata["POSTGRES_USER"]
    assert uri.password == metadata["POSTGRES_PASSWORD"]
    assert uri.path.lstrip("/") == metadata["POSTGRES_DB"]


# The pipeline URIs must follow the postgis service's settings both with the defaults and
# with an operator's .env (proves they use the same variables, not merely equal defaults).
_ENV_SCENARIOS = {
    "defaults": SECRETS,
    "operator-env": {
        **SECRETS,
        "POSTGRES_USER": "ops",
        "POSTGRES_PASSWORD": "s3cret-x",
        "POSTGRES_DB": "mobility",
    },
}


@pytest.mark.parametrize("scenario", _ENV_SCENARIOS)
@pytest.mark.parametrize("variable", ["DATABASE_URL", "AIRFLOW_CONN_ANONYMIZERS_DB"])
@pytest.mark.parametrize("service", IMAGE_SERVICES)
def test_pipeline_connection_points_at_postgis(service: str, variable: str, scenario: str) -> None:
    dotenv = _ENV_SCENARIOS[scenario]
    env = _environment(service)
    assert variable in env, f"{service} environment lacks {variable}"
    uri = urlsplit(_interpolate(env[variable], dotenv))
    postgis = {k: _interpolate(v, dotenv) for k, v in _environment("postgis").items()}
    assert uri.scheme in ("postgresql", "postgres"), uri.scheme
    assert uri.hostname == "postgis", f"{variable} host is {uri.hostname!r}"
    # Container-to-container traffic uses the container port, not the published one.
    assert uri.port == 5432
    assert uri.username == postgis["POSTGRES_USER"]
    assert uri.password == postgis["POSTGRES_PASSWORD"]
    assert uri.path.lstrip("/") == postgis["POSTGRES_DB"]


@pytest.mark.parametrize("service", IMAGE_SERVICES)
def test_database_url_and_airflow_connection_are_the_same_uri(service: str) -> None:
    env = _environment(service)
    assert env["DATABASE_URL"] == env["AIRFLOW_CONN_ANONYMIZERS_DB"]


def test_airflow_components_share_the_api_token_secret_and_api_url() -> None:
    # Without a shared secret each container signs tokens with its own random key and
    # every task fails authentication against the API server.
    for service in IMAGE_SERVICES:
        env = _environment(service)
        assert "AIRFLOW__API_AUTH__JWT_SECRET" in env, f"{service} lacks the JWT secret"
        assert "airflow-apiserver" in env.get("AIRFLOW__CORE__EXECUTION_API_SERVER_URL", ""), (
            service
        )


# --- Variables ----------------------------------------------------------------------------


def _compose_references() -> list[re.Match[str]]:
    # Walk parsed values (not the raw text) so comments, which Compose does not
    # interpolate, are not counted.
    return [m for s in _strings(COMPOSE) for m in _references(s)]


def test_every_compose_variable_has_a_default_or_is_in_example_env() -> None:
    undocumented = {
        m["name"] or m["bare"]
        for m in _compose_references()
        if m["op"] not in (":-", "-") and (m["name"] or m["bare"]) not in EXAMPLE_VALUES
    }
    assert not undocumented, f"no default and not in example.env: {sorted(undocumented)}"


def test_every_example_env_variable_is_used_by_compose() -> None:
    used = {m["name"] or m["bare"] for m in _compose_references()}
    unused = set(EXAMPLE_VALUES) - used
    assert not unused, f"example.env variables not used by compose.yaml: {sorted(unused)}"


def test_every_compose_variable_is_documented_in_example_env() -> None:
    used = {m["name"] or m["bare"] for m in _compose_references()}
    missing = used - set(EXAMPLE_VALUES)
    assert not missing, f"compose.yaml variables missing from example.env: {sorted(missing)}"


def test_defaults_agree_between_compose_and_example_env() -> None:
    defaults: dict[str, set[str]] = {}
    for m in _compose_references():
        if m["op"] in (":-", "-"):
            defaults.setdefault(m["name"], set()).add(m["arg"])
    for name, values in defaults.items():
        assert len(values) == 1, f"{name} has different defaults in compose.yaml: {values}"
        (default,) = values
        if name in EXAMPLE_VALUES:
            assert EXAMPLE_VALUES[name] == default, (
                f"example.env says {name}={EXAMPLE_VALUES[name]!r}, "
                f"compose.yaml defaults to {default!r}"
            )


def test_example_env_comments_every_variable_and_says_where_to_copy_it() -> None:
    lines = EXAMPLE_ENV.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        if line.strip() and not line.lstrip().startswith("#"):
            assert i > 0 and lines[i - 1].lstrip().startswith("#"), (
                f"example.env line {i + 1} ({line!r}) has no comment line above it"
            )
    text = "\n".join(lines)
    assert "docker/.env" in text and "password" in text.lower()


# --- Dockerfile ---------------------------------------------------------------------------


def test_dockerfile_builds_on_the_official_airflow_image() -> None:
    assert DOCKERFILE_FACTS.from_images, "Dockerfile has no FROM"
    base = DOCKERFILE_FACTS.from_images[-1]
    assert base.startswith("apache/airflow:"), f"FROM {base}"
    assert "${AIRFLOW_VERSION}" in base and base.endswith("-python3.11"), base


def test_dockerfile_and_compose_default_to_the_same_airflow_version() -> None:
    compose_default = _interpolate(
        SERVICES["airflow-scheduler"]["build"]["args"]["AIRFLOW_VERSION"], {}
    )
    assert DOCKERFILE_FACTS.arg_defaults.get("AIRFLOW_VERSION") == compose_default


def test_dockerfile_installs_the_package_with_the_constraints_as_airflow() -> None:
    installs = [
        (user, cmd) for user, cmd in DOCKERFILE_FACTS.runs if re.search(r"\bpip install\b", cmd)
    ]
    assert installs, "Dockerfile never runs pip install"
    user, cmd = installs[-1]
    tokens = shlex.split(cmd)
    assert "." in tokens, f"pip install does not install the package (.): {cmd}"
    assert any(
        (t in ("-c", "--constraint") and tokens[i + 1] == ".ci/constraints.txt")
        or t == "--constraint=.ci/constraints.txt"
        for i, t in enumerate(tokens[:-1])
    ), f"pip install does not use .ci/constraints.txt: {cmd}"
    assert "--no-cache-dir" in tokens
    # The official image documents installing as "airflow" (its user site), never root.
    assert user == "airflow", f"pip install runs as {user!r}"


def test_dockerfile_copies_what_the_image_needs() -> None:
    missing = REQUIRED_COPY_SOURCES - set(DOCKERFILE_FACTS.copies)
    assert not missing, f"Dockerfile does not COPY {sorted(missing)}"


def test_dags_folder_is_the_copied_dags_directory() -> None:
    dags_folder = DOCKERFILE_FACTS.env.get("AIRFLOW__CORE__DAGS_FOLDER")
    assert dags_folder, "Dockerfile does not set AIRFLOW__CORE__DAGS_FOLDER"
    assert posixpath.normpath(dags_folder) == DOCKERFILE_FACTS.copies["dags"]


def test_sql_dir_is_the_copied_sql_directory() -> None:
    # Installed into site-packages, the package cannot find sql/ beside its source;
    # anonymizers.db.sqlfiles.sql_dir() reads ANONYMIZERS_SQL_DIR instead.
    sql_dir = DOCKERFILE_FACTS.env.get("ANONYMIZERS_SQL_DIR")
    assert sql_dir, "Dockerfile does not set ANONYMIZERS_SQL_DIR"
    assert posixpath.normpath(sql_dir) == DOCKERFILE_FACTS.copies["sql"]


@pytest.mark.parametrize("source", sorted(DOCKERFILE_FACTS.copies))
def test_copy_source_exists_in_the_build_context(source: str) -> None:
    path = REPO_ROOT / source
    note = (
        " (expected: the lead engineer creates it in the same commit; this test fails until then)"
        if source in CREATED_BY_LEAD
        else ""
    )
    assert path.exists(), (
        f"Dockerfile COPYs {source!r}, which does not exist in the repo root{note}"
    )
    if path.is_dir():
        # Git does not store empty directories: in a fresh clone the COPY would fail.
        assert any(p.is_file() for p in path.rglob("*")), (
            f"Dockerfile COPYs {source!r}, an empty directory that a clone will not have{note}"
        )


@pytest.mark.parametrize("source", sorted(DOCKERFILE_FACTS.copies))
def test_copy_source_is_not_excluded_from_the_build_context(source: str) -> None:
    patterns = [
        line.strip()
        for line in DOCKERIGNORE.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#") and not line.startswith("!")
    ]
    excluded = [p for p in patterns if fnmatch.fnmatch(source, p.removeprefix("**/"))]
    assert not excluded, f"{source!r} is excluded by {DOCKERIGNORE.name}: {excluded}"


def test_files_referenced_by_pyproject_are_copied() -> None:
    # "pip install ." fails if pyproject.toml names a readme/license the image lacks.
    pyproject = REPO_ROOT / "pyproject.toml"
    if not pyproject.exists():
        pytest.skip("pyproject.toml not there yet (see test_copy_source_exists_...)")
    project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
    referenced = []
    readme = project.get("readme")
    referenced.append(readme if isinstance(readme, str) else (readme or {}).get("file"))
    license_ = project.get("license")
    referenced.append(license_.get("file") if isinstance(license_, dict) else None)
    referenced.extend(project.get("license-files") or [])
    copied = set(DOCKERFILE_FACTS.copies)
    for ref in filter(None, referenced):
        ref = _normalise_source(ref)
        assert any(ref == c or ref.startswith(c + "/") for c in copied), (
            f"pyproject.toml references {ref!r}, which docker/Dockerfile does not COPY"
        )


def test_constraints_pin_the_airflow_version_of_the_image() -> None:
    # The Dockerfile installs "apache-airflow==$AIRFLOW_VERSION" with the constraints:
    # a different pin in the constraints file makes the image build fail.
    constraints = REPO_ROOT / ".ci" / "constraints.txt"
    if not constraints.exists():
        pytest.skip(".ci/constraints.txt not there yet (see test_copy_source_exists_...)")
    pins = re.findall(
        r"^apache-airflow==(\S+)",
        constraints.read_text(encoding="utf-8"),
        flags=re.MULTILINE | re.IGNORECASE,
    )
    if not pins:
        pytest.skip(".ci/constraints.txt does not pin apache-airflow")
    assert pins[0] == DOCKERFILE_FACTS.arg_defaults.get("AIRFLOW_VERSION"), (
        f".ci/constraints.txt pins apache-airflow=={pins[0]}, the image defaults to "
        f"{DOCKERFILE_FACTS.arg_defaults.get('AIRFLOW_VERSION')}"
    )


# --- Scheduled releases: one declaration file, mounted into every Airflow service -----------


def _schedules_mount(service: str) -> dict[str, Any]:
    target = _environment(service).get("ANONYMIZERS_SCHEDULES")
    assert target, f"{service} does not say where the schedules file is (ANONYMIZERS_SCHEDULES)"
    mounts = [v for v in SERVICES[service].get("volumes", [])
              if isinstance(v, dict) and v.get("target") == target]
    assert len(mounts) == 1, f"{service} does not mount a file at {target}"
    return dict(mounts[0])


@pytest.mark.parametrize("service", IMAGE_SERVICES)
def test_every_airflow_service_reads_the_same_declared_schedules_read_only(service: str) -> None:
    mount = _schedules_mount(service)
    assert mount == _schedules_mount("airflow-dag-processor")
    assert mount["type"] == "bind" and mount["read_only"] is True
    # A missing host file must fail the start, not become an empty folder at the target.
    assert mount["bind"]["create_host_path"] is False
    assert _interpolate(mount["source"], {}) == "./schedules.toml"
    assert "ANONYMIZERS_SCHEDULES_FILE" in _load_example_env()


def test_the_schedules_file_of_the_deployment_is_valid_and_declares_nothing(
        tmp_path: Path) -> None:
    """docker/schedules.toml (the mount's default source) parses as the DAG file parses it;
    its example, uncommented, is a valid declaration."""
    from anonymizers.schedules import load_schedules

    path = DOCKER_DIR / _interpolate(_schedules_mount("airflow-scheduler")["source"], {})
    assert load_schedules(path) == []
    example = "\n".join(line.removeprefix("# ") for line in path.read_text().splitlines()
                        if line.startswith("# [") or (line.startswith("# ") and " = " in line))
    uncommented = tmp_path / "schedules.toml"
    uncommented.write_text(example)
    declared = load_schedules(uncommented)
    assert [schedule.dag_id for schedule in declared] == ["scheduled_city_daily"]
