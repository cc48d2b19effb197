"""The machinery's privacy rules (DESIGN, "Privacy rules of the machinery"), attack by attack.

Each test replays a finding of the outside review (issue 7) and shows that it now learns
nothing or is refused with a clear message; the last ones plant a violation of each
shared rule in a built release and show the verifier refuses it.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable

import psycopg
import pytest
from pipeline_helpers import release_params, run_steps

from anonymizers import cli
from anonymizers.errors import InputError, PrivacyViolation
from anonymizers.families.generalization.verifier import verify_generalization_release
from anonymizers.pipeline import steps
from anonymizers.release.spec import ReleaseSpec

DAY = "2026-03-02"
K = 3


def window(start: str, end: str, **extra) -> dict:
    return release_params(k=K, start=f"{DAY}T{start}:00Z", end=f"{DAY}T{end}:00Z", **extra)


def publish(params: dict, run_id: str = "run") -> ReleaseSpec:
    spec = run_steps(params, run_id=run_id)
    assert spec is not None
    return ReleaseSpec.from_dict(spec)


# --------------------------------------------------------------- finding 6: composition


@pytest.mark.parametrize(("start", "end"), [
    ("06:00", "09:05"),  # the review's pair: one more person at 07:02 differenced out
    ("07:00", "08:00"),  # nested
    ("06:00", "09:00"),  # the same window, another method or parameters
    ("05:00", "06:30"),  # overlapping the start
])
def test_a_window_overlapping_a_published_one_is_refused(loaded_city, conn, start, end):
    publish(window("06:00", "09:00"))
    with pytest.raises(InputError, match=r"overlaps 1 published release.*accept_composition_risk"):
        steps.prepare(window(start, end, cell_size=400.0), None, "second")
    assert conn.execute("SELECT count(*) FROM catalog.releases").fetchone()[0] == 1


def test_adjacent_windows_compose_without_override(loaded_city, conn):
    publish(window("06:00", "09:00"))
    assert steps.prepare(window("09:00", "12:00"), None, "next") is not None


def test_two_halves_of_a_day_and_the_whole_day_are_not_all_published(loaded_city, conn):
    """The review's attack: 00-12 and 12-24 next to 00-24 gave the suppressed half-day
    counts exactly (whole minus half). Both halves publish; the whole day is refused."""
    publish(window("00:00", "12:00"))
    publish(window("12:00", "23:59"), run_id="afternoon")
    with pytest.raises(InputError, match="overlaps 2 published release"):
        steps.prepare(window("00:00", "23:59"), None, "whole")


@pytest.mark.parametrize(("params", "message"), [
    (window("08:00", "08:01"), "lasts 1 min, shorter than min_window_hours=1"),
    (window("08:00", "09:00", min_window_hours=0.01), "below the default of 1 h"),
    (window("08:00", "10:00", min_window_hours=3), "lasts 120 min, shorter than"),
])
def test_short_windows_are_refused(loaded_city, conn, params, message):
    with pytest.raises(InputError, match=message):
        steps.prepare(params, None, "short")


def test_accepted_composition_risk_is_recorded_and_shown(loaded_city, conn, capsys):
    publish(window("06:00", "09:00"))
    reason = "internal comparison of two cell sizes"
    second = publish(window("06:00", "09:05", cell_size=400.0,
                            accept_composition_risk=reason), run_id="risky")
    manifest = conn.execute(f"SELECT composition_risk FROM {second.release_name}.manifest")
    assert manifest.fetchone()[0] == reason
    catalog = conn.execute("SELECT composition_risk FROM catalog.releases WHERE "
                           "release_name = %s", (second.release_name,)).fetchone()[0]
    assert catalog == reason
    assert cli.main(["releases"]) == 0
    listed = capsys.readouterr().out
    assert f"composition risk accepted: {reason}" in listed
    assert " trajectories published from " in listed  # the family's unit (grid_kam_cut)


def test_publish_rechecks_the_ledger_so_two_overlapping_runs_cannot_both_publish(
        loaded_city, conn):
    first = run_steps(window("06:00", "09:00"), run_id="a", until="verify")
    second = run_steps(window("07:00", "10:00"), run_id="b", until="verify")
    assert first and second  # both passed prepare: neither was published yet
    steps.publish(first)
    with pytest.raises(InputError, match="overlaps"):
        steps.publish(second)
    names = [row[0] for row in conn.execute("SELECT release_name FROM catalog.releases")]
    assert names == [ReleaseSpec.from_dict(first).release_name]


def _flow_counts(conn, release: str) -> dict[str, tuple[int, int]]:
    rows = conn.execute(f"SELECT ST_AsText(geom), n_persons, n_trajectories FROM {release}.flows")
    return {geom: (persons, trajectories) for geom, persons, trajectories in rows}


def test_nested_releases_do_not_difference_into_below_k_counts(loaded_city, conn):
    """The review's attack: 06:00-09:00 next to 06:00-09:05 gave 243 flows differing by 1."""
    reason = "replaying the differencing attack"
    one = publish(window("06:00", "09:00"))
    two = publish(window("06:00", "09:05", accept_composition_risk=reason), run_id="two")
    first, second = _flow_counts(conn, one.release_name), _flow_counts(conn, two.release_name)
    shared = first.keys() & second.keys()
    assert shared
    for geom in shared:
        for a, b in zip(first[geom], second[geom], strict=True):
            assert (b - a) % K == 0, f"flow {geom} differs by {b - a}: below k"
    for counts in (first, second):
        for persons, trajectories in counts.values():
            assert persons >= K and (persons - K) % K == 0
            assert trajectories >= K and (trajectories - K) % K == 0


def test_exact_counts_only_when_asked_and_recorded(loaded_city, conn):
    spec = publish(window("06:00", "09:00", count_interval=1))
    interval, parameters = conn.execute(
        f"SELECT count_interval, parameters FROM {spec.release_name}.manifest").fetchone()
    assert interval == 1 and parameters["count_interval"] == 1
    counts = _flow_counts(conn, spec.release_name).values()
    assert any((persons - K) % K for persons, _ in counts)  # exact: not all on the lattice


def test_input_counts_in_the_manifest_are_interval_filtered(loaded_city, conn):
    spec = publish(window("06:00", "09:00"))
    row = conn.execute(f"SELECT trajectories_in, persons_in, points_in, suppressed "
                       f"FROM {spec.release_name}.manifest").fetchone()
    for value in row:
        assert value is None or value == 0 or (value >= K and (value - K) % K == 0)


# --------------------------------------------------------------- finding 7: k over persons


def test_k_over_trajectories_is_refused_with_a_clear_message(loaded_city, conn):
    with pytest.raises(InputError, match="k counts distinct persons in every release"):
        steps.prepare(window("06:00", "09:00", k_counts="trajectories"), None, "traj")


def test_the_cli_refuses_k_over_trajectories_without_a_traceback(loaded_city, capsys):
    code = cli.main(["release", "--dataset", "city", "--method", "grid_kam_cut", "--k", "3",
                     "--k-counts", "trajectories"])
    assert code == 2
    assert "k counts distinct persons" in capsys.readouterr().err


# --------------------------------------------------------------- finding 9: fingerprint


def test_the_fingerprint_is_keyed_by_the_installation_secret(loaded_city, conn):
    spec = ReleaseSpec.from_dict(steps.prepare(window("06:00", "09:00"), None, "fp"))
    sha = conn.execute("SELECT source_sha256 FROM raw.datasets WHERE name = 'city'"
                       ).fetchone()[0]
    plain = hashlib.sha256(f"{sha}|{spec.dataset_id}|{spec.window_start}|"
                           f"{spec.window_end}".encode()).hexdigest()
    assert spec.input_fingerprint != plain
    secret = bytes(conn.execute("SELECT secret FROM private.installation_secret").fetchone()[0])
    keyed = hmac.new(secret, f"{sha}|{spec.dataset_id}|{spec.window_start}|"
                     f"{spec.window_end}".encode(), hashlib.sha256).hexdigest()
    assert spec.input_fingerprint == keyed
    assert len(secret) >= 32


def test_the_installation_secret_is_not_readable_by_analyst(loaded_city, analyst_url):
    with psycopg.connect(analyst_url) as analyst, \
            pytest.raises(psycopg.errors.InsufficientPrivilege):
        analyst.execute("SELECT secret FROM private.installation_secret")


# --------------------------------------------------------------- the verifier's shared rules


def _rekeyed(conn, build: str) -> str:
    """SQL that re-keys the manifest's fingerprint after its window was changed."""
    secret = bytes(conn.execute("SELECT secret FROM private.installation_secret").fetchone()[0])
    sha, dataset_id, start, end = conn.execute(
        f"SELECT d.source_sha256, d.dataset_id, m.window_start, m.window_end FROM {build}.manifest "
        "m JOIN raw.datasets d ON d.name = m.dataset").fetchone()
    from datetime import UTC
    message = (f"{sha}|{dataset_id}|{start.astimezone(UTC).isoformat()}|"
               f"{end.astimezone(UTC).isoformat()}")
    digest = hmac.new(secret, message.encode(), hashlib.sha256).hexdigest()
    return f"UPDATE {build}.manifest SET input_fingerprint = '{digest}'"


Statement = str | Callable[[], str]
PLANTS: dict[str, tuple[Callable[[psycopg.Connection, str], list[Statement]], str]] = {
    "rule 1: a flow of fewer than k persons": (
        lambda conn, b: [f"UPDATE {b}.flows SET n_persons = {K - 1} "
                         f"WHERE ctid = (SELECT min(ctid) FROM {b}.flows)"],
        "publishes counts below k"),
    "rule 1: k over trajectories": (
        lambda conn, b: [f"UPDATE {b}.manifest SET k_counts = 'trajectories'"],
        "must count distinct persons"),
    "rule 4: a count off the interval filter": (
        lambda conn, b: [f"UPDATE {b}.flows SET n_persons = n_persons + 1 "
                         f"WHERE ctid = (SELECT min(ctid) FROM {b}.flows)"],
        "not on the interval filter"),
    # On the filter and at least k, but not the count the verifier makes from the raw fixes.
    "rule 4: a count that is not the verifier's own recount": (
        lambda conn, b: [f"UPDATE {b}.flows SET n_persons = n_persons + "
                         f"(SELECT count_interval FROM {b}.manifest) "
                         f"WHERE ctid = (SELECT min(ctid) FROM {b}.flows)"],
        "the verifier counts"),
    "rule 2: an extent off the lattice": (
        lambda conn, b: [f"UPDATE {b}.cells SET geom = ST_Translate(geom, 0.5, 0)"],
        "not on the 500 m lattice"),
    "rule 3: a maximum in the metrics": (
        lambda conn, b: [f"INSERT INTO {b}.metrics VALUES ('speed_max_kmh', 88, 'km/h', 'x')"],
        "speed_max_kmh is an order statistic"),
    "rule 3: a quantile series": (
        lambda conn, b: [f"INSERT INTO {b}.metric_series VALUES ('length.quantile', 0.9, 5, "
                         "'m', 'x')"],
        "length.quantile is an order statistic"),
    "rule 3: a count below k": (
        lambda conn, b: [f"INSERT INTO {b}.metrics VALUES ('stragglers', {K - 1}, 'count', 'x')"],
        "stragglers"),
    "rule 4: a short window": (
        lambda conn, b: [f"UPDATE {b}.manifest SET window_end = window_start + "
                         "interval '10 minutes'", lambda: _rekeyed(conn, b)],
        "shorter than 1 h"),
    "rule 4: an overlap the ledger does not allow": (
        lambda conn, b: ["INSERT INTO catalog.releases (release_name, dataset, method, k, "
                         "k_counts, privacy_model, window_start, window_end, parameters, "
                         "trajectories_in, trajectories_out, code_version) SELECT 'release_x', "
                         "dataset, method, k, k_counts, privacy_model, window_start, "
                         f"window_end, parameters, 0, 0, 'x' FROM {b}.manifest"],
        "overlaps published release release_x"),
    "rule 5: a raw user id": (
        lambda conn, b: [f"ALTER TABLE {b}.cells ADD COLUMN note text",
                         f"UPDATE {b}.cells SET note = (SELECT user_id FROM raw.points LIMIT 1)"],
        "raw traj_id/user_id"),
    "rule 5: a raw trajectory id in a text array": (
        lambda conn, b: [f"ALTER TABLE {b}.flows ADD COLUMN tags text[]",
                         f"UPDATE {b}.flows SET tags = ARRAY['x', "
                         "(SELECT traj_id FROM raw.points LIMIT 1)]"],
        "flows.tags holds 1 raw traj_id/user_id"),
    "rule 5: the plain source digest in a JSON column": (
        lambda conn, b: [f"ALTER TABLE {b}.cells ADD COLUMN extra jsonb",
                         f"UPDATE {b}.cells SET extra = jsonb_build_object('src', "
                         "(SELECT source_sha256 FROM raw.datasets LIMIT 1))"],
        "cells.extra publishes the source file's plain digest"),
    "rule 5: the plain source digest in an XML column": (
        lambda conn, b: [f"ALTER TABLE {b}.flows ADD COLUMN doc xml",
                         f"UPDATE {b}.flows SET doc = ('<a>' || "
                         "(SELECT source_sha256 FROM raw.datasets LIMIT 1) || '</a>')::xml"],
        "flows.doc publishes the source file's plain digest"),
    "rule 5: a timestamp": (
        lambda conn, b: [f"ALTER TABLE {b}.flows ADD COLUMN seen timestamptz"],
        "flows.seen publishes time"),
    "rule 5: the plain source digest": (
        lambda conn, b: [f"UPDATE {b}.metrics SET description = description || "
                         "(SELECT source_sha256 FROM raw.datasets LIMIT 1) "
                         f"WHERE name = (SELECT min(name) FROM {b}.metrics)"],
        "plain digest"),
    "rule 5: an unkeyed fingerprint": (
        lambda conn, b: [f"UPDATE {b}.manifest SET input_fingerprint = 'abc'"],
        "not this installation's keyed fingerprint"),
}


def test_the_verifier_refuses_a_planted_violation_of_each_shared_rule(loaded_city, conn):
    spec = ReleaseSpec.from_dict(run_steps(window("06:00", "09:00"), until="metrics"))
    clean = verify_generalization_release(conn, spec.build_schema)
    assert clean.passed, clean.violations
    for name, (plant, expected) in PLANTS.items():
        with conn.transaction(force_rollback=True):
            for statement in plant(conn, spec.build_schema):
                # A callable statement is built after the ones before it ran.
                conn.execute(statement() if callable(statement) else statement)
            result = verify_generalization_release(conn, spec.build_schema)
        assert not result.passed, name
        assert any(expected in violation for violation in result.violations), \
            (name, result.violations)


def test_a_planted_violation_is_never_published(loaded_city, conn):
    spec = run_steps(window("06:00", "09:00"), until="metrics")
    build = ReleaseSpec.from_dict(spec).build_schema
    conn.execute(f"INSERT INTO {build}.metrics VALUES ('displacement_max_m', 1, 'm', 'x')")
    with pytest.raises(PrivacyViolation, match="order statistic"):
        steps.verify(spec)
    with pytest.raises(Exception, match="no passing verifier result"):
        steps.publish(spec)
    assert conn.execute("SELECT count(*) FROM catalog.releases").fetchone()[0] == 0


@pytest.mark.parametrize("method", ["grid_kam_cut", "mob_symmetric", "tcaa",
                                    "tg_nonoverlapping"])
def test_the_published_verifier_result_holds_no_exact_count(method, published_city,
                                                            published_city_db):
    """The verifier's checks count raw inputs (the window's trajectories, suppressed
    persons): exact, next to the manifest's interval-filtered counts, they would undo the
    filter (rule 4). Published, every count is 0, NULL or an interval's lower end; only
    the checks that count parts of the schema or the ledger (columns, parameters, metric
    rows, releases: anyone can count them) stay exact."""
    from anonymizers.verifiers.base import STRUCTURAL_CHECKS, interval_count

    with psycopg.connect(published_city_db) as conn:
        verdict, k, width = conn.execute(
            f"SELECT verifier_result, k, count_interval FROM {published_city[method]}.manifest"
        ).fetchone()
    counts = {name: value for name, value in verdict["checks"].items()
              if isinstance(value, int) and not isinstance(value, bool)
              and name not in STRUCTURAL_CHECKS}
    assert counts, "the verifier reported no count to check"
    assert verdict["count_interval"] == width
    for name, value in counts.items():
        assert interval_count(value, k, width) == value, (name, value)
