"""Rules an operator may override only on the record: published precision (privacy rule 7),
the ledger keyed by the data (rule 4) and measured attack risk (rule 9).

Each test replays an attack of the outside review: a parameter that switched a rule off
(a lattice of 1 mm), the same file loaded under a second name to publish an overlapping
window, an attack the privacy model does not cover; each is now refused with a message
that says what to do, by the gate before the run and by the verifier on the tables.
"""

from __future__ import annotations

import pytest
from pipeline_helpers import release_params, run_steps

from anonymizers import cli
from anonymizers.errors import InputError, PrivacyViolation
from anonymizers.families.registry import METHODS
from anonymizers.loading import load_dataset
from anonymizers.pipeline import steps
from anonymizers.release.spec import ReleaseSpec
from anonymizers.risks import PRECISION_FLOOR_M
from anonymizers.verifiers import verify_release

DAY = "2026-03-02"
K = 3


def window(start: str, end: str, **extra) -> dict:
    return release_params(k=K, start=f"{DAY}T{start}:00Z", end=f"{DAY}T{end}:00Z", **extra)


def _precision_params() -> list[tuple[str, str]]:
    return [(method.name, spec.name) for method in METHODS.values()
            for spec in method.params if spec.precision]


def test_every_lattice_parameter_is_declared_a_precision():
    """The review's list: snap (kam_*, tcaa), epsilon (MLA), cell_size (grid, MOB, groups)."""
    declared = {(method, name) for method, name in _precision_params()}
    assert {("kam_rec", "snap"), ("kam_cut", "snap"), ("tcaa", "snap"),
            ("mla_iterative_kmeans", "epsilon"), ("grid_kam_cut", "cell_size"),
            ("mob_symmetric", "cell_size"), ("tg_nonoverlapping", "cell_size")} <= declared
    for method in METHODS.values():  # every default publishes without an accepted risk
        for spec in method.params:
            if spec.precision:
                assert spec.default >= PRECISION_FLOOR_M, (method.name, spec.name)


@pytest.mark.parametrize(("method", "name"), _precision_params())
def test_a_lattice_below_the_floor_is_refused_before_the_run(loaded_city, db_url, conn, method,
                                                             name):
    """``snap=0.001`` put 2,880 TCAA rectangle edges on single persons, to 2 mm."""
    if METHODS[method].family == "mob":  # MOB refuses a dataset without QIDs first
        from anonymizers.families.mob.qids import generate_and_store_qids

        generate_and_store_qids(loaded_city, "graph", 6, seed=1, url=db_url)
    params = window("06:00", "09:00", method=method, **{name: 0.001})
    with pytest.raises(InputError, match=rf"{name}=0.001 m is finer than the 50 m floor.*"
                                         "accept_precision_risk"):
        steps.prepare(params, None, "fine")
    assert conn.execute("SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'work%'"
                        ).fetchone()[0] == 0


def test_the_cli_refuses_a_fine_lattice_in_one_line(loaded_city, db_url, monkeypatch, capsys):
    monkeypatch.setenv("DATABASE_URL", db_url)
    code = cli.main(["release", "--dataset", "city", "--method", "tcaa", "--k", "3",
                     "--param", "snap=0.001"])
    assert code == 2
    err = capsys.readouterr().err
    assert "snap=0.001 m is finer than the 50 m floor" in err and "Traceback" not in err


def test_an_accepted_precision_risk_is_recorded_and_shown(loaded_city, conn, capsys):
    reason = "street-level study inside the owner's lab"
    spec = run_steps(window("06:00", "09:00", cell_size=40.0, accept_precision_risk=reason))
    assert spec is not None
    name = ReleaseSpec.from_dict(spec).release_name
    assert conn.execute(f"SELECT precision_risk FROM {name}.manifest").fetchone()[0] == reason
    assert conn.execute("SELECT precision_risk FROM catalog.releases WHERE release_name = %s",
                        (name,)).fetchone()[0] == reason
    assert cli.main(["releases"]) == 0
    assert f"precision risk accepted: {reason}" in capsys.readouterr().out


def test_the_verifier_checks_the_floor_from_the_manifest(loaded_city, conn):
    """Independently of the gate: a manifest recording a fine lattice without an accepted
    risk fails verification; the same manifest with a reason passes."""
    spec = ReleaseSpec.from_dict(run_steps(window("06:00", "09:00"), until="verify"))
    build = spec.build_schema
    assert verify_release(conn, build).passed
    with conn.transaction(force_rollback=True):
        conn.execute(f"UPDATE {build}.manifest SET parameters = "
                     "jsonb_set(parameters, '{cell_size}', '10')")
        result = verify_release(conn, build)
        assert any("cell_size=10 m is below the 50 m floor" in v for v in result.violations)
        conn.execute(f"UPDATE {build}.manifest SET precision_risk = 'a test'")
        result = verify_release(conn, build)
        assert not any("floor" in v for v in result.violations), result.violations


# --------------------------------------------------------------- the ledger keyed by the data


@pytest.fixture
def city_twice(loaded_city: str, db_url: str, small_city) -> str:
    """The small city's file loaded again, as dataset 'city_copy'."""
    points, persons = small_city
    load_dataset(points, "city_copy", persons=persons, url=db_url)
    return "city_copy"


def test_the_same_file_under_another_name_shares_the_ledger(city_twice, conn):
    run_steps(window("06:00", "09:00"))
    with pytest.raises(InputError, match=r"overlaps 1 published release\(s\) of the data of "
                                         r"dataset 'city_copy' \(under this or another "
                                         r"dataset name\).*accept_composition_risk"):
        steps.prepare(window("07:00", "10:00", dataset=city_twice), None, "copy")
    assert steps.prepare(window("09:00", "12:00", dataset=city_twice), None, "next")


def test_the_verifier_finds_an_overlap_under_another_name(city_twice, conn):
    run_steps(window("06:00", "09:00"))
    spec = ReleaseSpec.from_dict(run_steps(
        window("06:00", "09:00", dataset=city_twice, accept_composition_risk="a test"),
        run_id="copy", until="verify"))
    build = spec.build_schema
    assert verify_release(conn, build).passed
    with conn.transaction(force_rollback=True):
        conn.execute(f"UPDATE {build}.manifest SET composition_risk = NULL")
        result = verify_release(conn, build)
        assert any("overlaps published release" in v for v in result.violations)
    with conn.transaction(force_rollback=True):  # the ledger's key must be the real one
        conn.execute(f"UPDATE {build}.manifest SET source_fingerprint = 'elsewhere'")
        result = verify_release(conn, build)
        assert any("source fingerprint" in v for v in result.violations)


def test_the_spec_that_travels_by_xcom_holds_no_plain_digest(loaded_city, conn):
    spec = steps.prepare(window("06:00", "09:00"), None, "xcom")
    sha = conn.execute("SELECT source_sha256 FROM raw.datasets WHERE name = 'city'"
                       ).fetchone()[0]
    assert sha not in repr(spec)


# --------------------------------------------------------------- measured attack risk


def test_the_verifier_refuses_an_attack_above_one_over_k_unless_accepted(loaded_city, conn):
    spec = ReleaseSpec.from_dict(run_steps(window("06:00", "09:00"), until="verify"))
    build = spec.build_schema
    maxima = conn.execute(f"SELECT count(*) FROM {build}.metrics "
                          "WHERE name LIKE 'attack\\_%\\_prosecutor\\_max'").fetchone()[0]
    assert maxima > 0
    with conn.transaction(force_rollback=True):
        conn.execute(f"UPDATE {build}.metrics SET value = 1.0 "
                     "WHERE name = 'attack_location_prosecutor_max'")
        result = verify_release(conn, build)
        assert any("attack_location_prosecutor_max = 1.000 > 1/k" in v
                   for v in result.violations), result.violations
        conn.execute(f"UPDATE {build}.manifest SET attack_risk = 'a test'")
        assert verify_release(conn, build).passed


@pytest.fixture
def city_with_qids(loaded_city: str, db_url: str) -> str:
    from anonymizers.families.mob.qids import generate_and_store_qids

    generate_and_store_qids(loaded_city, "graph", 6, seed=1, url=db_url)
    return loaded_city


def _mob_paper(**extra) -> dict:
    """MOB as the paper publishes it: every object its own cell outside its QIDs and a row
    only where its person was observed, so one known position outside them finds it (the
    review: 544 of 560 T-Drive persons)."""
    return {"dataset": "city", "method": "mob_symmetric", "k": K, "outside_qids": "cell",
            "presence": "published", **extra}


def test_an_uncovered_attack_above_one_over_k_stops_the_release(city_with_qids, db_url,
                                                                 monkeypatch, conn):
    monkeypatch.setenv("DATABASE_URL", db_url)
    with pytest.raises(PrivacyViolation, match=r"location.* > 1/k = 0.333; not published\. "
                                               r"The method's privacy model does not cover"
                                               r".*accept_attack_risk"):
        run_steps(_mob_paper())
    assert conn.execute("SELECT count(*) FROM catalog.releases").fetchone()[0] == 0


def test_an_accepted_attack_risk_is_recorded_and_shown(city_with_qids, db_url, monkeypatch,
                                                        conn, capsys):
    monkeypatch.setenv("DATABASE_URL", db_url)
    reason = "the paper's behaviour, for a comparison with its figures"
    name = ReleaseSpec.from_dict(run_steps(_mob_paper(accept_attack_risk=reason))).release_name
    assert conn.execute(f"SELECT attack_risk FROM {name}.manifest").fetchone()[0] == reason
    location = conn.execute(f"SELECT value FROM {name}.metrics WHERE name = "
                            "'attack_location_prosecutor_max'").fetchone()[0]
    assert location > 1 / K  # published although above 1/k: the operator's decision
    assert conn.execute("SELECT attack_risk FROM catalog.releases WHERE release_name = %s",
                        (name,)).fetchone()[0] == reason
    assert cli.main(["releases"]) == 0
    assert f"attack risk accepted: {reason}" in capsys.readouterr().out
