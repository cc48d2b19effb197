"""The attack suite on published releases: `anonymizers attack`, the metrics every release
records, and a planted record that a covered attack catches (exit 3)."""

from __future__ import annotations

import json

import psycopg
import pytest
from conftest import PUBLISHED_K
from pipeline_helpers import release_params, run_steps
from psycopg import sql

from anonymizers.attacks import release as attack_settings
from anonymizers.attacks.models import MODELS
from anonymizers.attacks.release import AttackSettings, attack_release
from anonymizers.cli import main
from anonymizers.errors import PrivacyViolation
from anonymizers.families.base import Metrics
from anonymizers.families.generalization.family import GeneralizationFamily
from anonymizers.families.registry import FAMILIES, METHODS
from anonymizers.pipeline import steps
from anonymizers.processes import PROCESSES_ENV
from anonymizers.release.spec import ReleaseSpec

ATTACKED = ("grid_kam_cut", "mob_symmetric", "tcaa", "mla_iterative_kmeans",
            "tg_nonoverlapping")
QUICK = ["--lengths", "1,2", "--targets", "40", "--instances", "200"]


def test_every_family_has_an_adapter_and_is_attacked_here():
    assert all(entry.attack for entry in FAMILIES.values())
    assert {METHODS[m].family for m in ATTACKED} == set(FAMILIES)


@pytest.mark.parametrize("method", ATTACKED)
def test_every_release_records_its_attacks_within_1_over_k(method, published_city,
                                                           published_city_db):
    with psycopg.connect(published_city_db) as conn:
        rows = dict(conn.execute(sql.SQL(
            "SELECT name, value FROM {}.metrics WHERE name LIKE 'attack%%'").format(
            sql.Identifier(published_city[method]))).fetchall())
        curves = conn.execute(sql.SQL(
            "SELECT DISTINCT series FROM {}.metric_series WHERE series LIKE 'attack.%%'"
        ).format(sql.Identifier(published_city[method]))).fetchall()
    covered = _covered(method)
    for model in _applied(method):
        assert 0 <= rows[f"attack_{model}_prosecutor_max"] <= 1
    for model in covered:
        assert 0 < rows[f"attack_{model}_prosecutor_max"] <= 1 / PUBLISHED_K + 1e-12
        assert rows[f"attack_{model}_prosecutor_share_above"] == 0
    assert rows["attack_persons"] >= PUBLISHED_K
    assert {f"attack.{m}.max" for m in (*_applied(method), *covered)} <= {
        row[0] for row in curves}


@pytest.mark.parametrize("method", ATTACKED)
def test_the_attack_command_measures_a_published_release(method, published_city,
                                                         published_city_db, monkeypatch,
                                                         capsys):
    monkeypatch.setenv("DATABASE_URL", published_city_db)
    assert main(["attack", published_city[method], *QUICK, "--json"]) == 0
    summaries = json.loads(capsys.readouterr().out)
    assert {s["model"] for s in summaries} == set(_applied(method)) | set(_covered(method))
    assert all(s["prosecutor_max"] <= 1 / PUBLISHED_K + 1e-12
               for s in summaries if s["covered"])
    assert any(s["covered"] for s in summaries)
    assert main(["attack", published_city[method], *QUICK, "--models", "location"]) == 0
    table = capsys.readouterr().out
    assert "prosecutor max" in table and "location " in table


def test_a_record_of_one_person_is_caught_by_the_attacks(published_city, published_city_db,
                                                         monkeypatch, capsys):
    """Republish one person's whole trajectory as a record of its own: the attacker who
    knows two of its cells finds one person behind it (a copy, so the shared release
    stays intact for the other tests)."""
    source = published_city["grid_kam_cut"]
    copy = "release_attack_plant"
    with psycopg.connect(published_city_db, autocommit=True) as conn:
        _copy_release(conn, source, copy)
        cells = _one_persons_cells(conn, source)
        conn.execute(sql.SQL("INSERT INTO {}.trajectories (cells, n_cells) VALUES (%s, %s)")
                     .format(sql.Identifier(copy)), (cells, len(cells)))
        attack = attack_release(conn, copy, AttackSettings((1, 2), None, 200), ["location"])
    assert attack.breaches()
    monkeypatch.setenv("DATABASE_URL", published_city_db)
    assert main(["attack", copy, "--models", "location", "--lengths", "2", "--targets", "0"]
                ) == 3
    assert "beat 1/k" in capsys.readouterr().err


def test_bad_attack_arguments_are_one_clear_line(published_city, published_city_db,
                                                 monkeypatch, capsys):
    monkeypatch.setenv("DATABASE_URL", published_city_db)
    assert main(["attack", published_city["grid_kam_cut"], "--models", "telepathy"]) == 2
    assert "unknown attack model(s) telepathy" in capsys.readouterr().err
    assert main(["attack", published_city["grid_kam_cut"], "--lengths", "0,x"]) == 2
    assert "--lengths takes" in capsys.readouterr().err
    assert main(["attack", "release_nothing_here"]) == 2
    assert "is not a release" in capsys.readouterr().err


def _covered(method: str) -> tuple[str, ...]:
    """The attacks the family's privacy model bounds by 1/k."""
    if METHODS[method].family == "mob":
        return ("yarovoy_matching",)
    return _applied(method)


def _applied(method: str) -> tuple[str, ...]:
    """The knowledge models run on the family's releases."""
    if METHODS[method].family == "clustering":
        return tuple(m for m in MODELS if m not in ("location_probability", "home_work"))
    return tuple(MODELS)


def _copy_release(conn: psycopg.Connection, source: str, copy: str) -> None:
    conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(copy)))
    conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(copy)))
    for table in ("manifest", "cells", "trajectories"):
        conn.execute(sql.SQL("CREATE TABLE {} (LIKE {} INCLUDING ALL)").format(
            sql.Identifier(copy, table), sql.Identifier(source, table)))
        conn.execute(sql.SQL("INSERT INTO {} SELECT * FROM {}").format(
            sql.Identifier(copy, table), sql.Identifier(source, table)))


def test_a_covered_attack_beating_1_over_k_stops_the_metrics_step(loaded_city, conn,
                                                                    monkeypatch):
    """The metrics step runs the attack suite on a forked process beside the family's own
    measures: a record of one person planted in the build schema makes it raise there, and
    the step fails with that error and writes no metric. (The family's measures are left
    out, so that only the attack can catch it; every target is attacked.)"""
    monkeypatch.setenv(PROCESSES_ENV, "2")
    monkeypatch.setattr(GeneralizationFamily, "measure", lambda self, conn, release: Metrics())
    monkeypatch.setattr(attack_settings, "AT_RELEASE", AttackSettings((1, 2), None, 200))
    spec = run_steps(release_params(k=3), until="manifest")
    schema = ReleaseSpec.from_dict(spec).build_schema
    build = sql.Identifier(schema)
    cells = _one_persons_cells(conn, schema)
    conn.execute(sql.SQL("INSERT INTO {}.trajectories (cells, n_cells) VALUES (%s, %s)")
                 .format(build), (cells, len(cells)))
    with pytest.raises(PrivacyViolation, match=r"attack with \d known points re-identifies"):
        steps.metrics(spec)
    assert conn.execute(sql.SQL("SELECT count(*) FROM {}.metrics").format(build)
                        ).fetchone() == (0,)


def _one_persons_cells(conn: psycopg.Connection, release: str) -> list[int]:
    """Two consecutive cells of a trajectory that no other person's trajectory holds
    together and no published record holds: published alone, they name one person."""
    from collections import defaultdict
    from itertools import pairwise

    from anonymizers.verifiers.base import read_release
    from anonymizers.verifiers.generalization import derive_release_visits

    found = read_release(conn, release)
    derived, _ = derive_release_visits(conn, release, found.dataset_id, found.manifest)
    sequences, owners = derived.sequences(drop_outside=True)
    holders: dict[int, set[int]] = defaultdict(set)
    for i, sequence in enumerate(sequences):
        for cell in sequence:
            holders[cell].add(i)
    published = [set(row[0]) for row in conn.execute(sql.SQL(
        "SELECT cells FROM {}.trajectories").format(sql.Identifier(release))).fetchall()]
    for sequence in sequences:
        for a, b in pairwise(sequence):
            persons = {owners[i] for i in holders[a] & holders[b]}
            if len(persons) == 1 and not any(a in r and b in r for r in published):
                return [a, b]
    raise AssertionError("every pair of consecutive cells is shared or published")


def test_a_covered_attack_beating_1_over_k_stops_the_release(loaded_city, conn, monkeypatch):
    """The metrics step is a gate too: a breach it measures is never published."""
    from pipeline_helpers import catalog_rows, release_params, run_steps

    from anonymizers.attacks.release import ReleaseAttack
    from anonymizers.errors import PrivacyViolation

    breach = {"model": "location", "knowledge_length": 2, "prosecutor_max": 1.0}
    monkeypatch.setattr(ReleaseAttack, "breaches", lambda self: [breach])
    with pytest.raises(PrivacyViolation, match="location attack with 2 known points"):
        run_steps(release_params(loaded_city), until="publish")
    assert catalog_rows(conn) == []
