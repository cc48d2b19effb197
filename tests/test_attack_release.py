"""The attack suite on published releases: `anonymizers attack`, the metrics every release
records, and a planted record that a covered attack catches (exit 3)."""

from __future__ import annotations

import json

import numpy as np
import psycopg
import pytest
from conftest import PUBLISHED_CITY, PUBLISHED_K
from pipeline_helpers import release_params, run_steps
from psycopg import sql
from psycopg.types.json import Jsonb
from voronoi_helpers import voronoi_params

from anonymizers.attacks import release as attack_settings
from anonymizers.attacks.adapters import attack_input
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

# Every family's showcase methods (its contract's SHOWCASE), published on the city.
ATTACKED = tuple(PUBLISHED_CITY)
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
        assert rows[f"attack_{model}_prosecutor_max"] <= 1 / PUBLISHED_K + 1e-12
        assert rows[f"attack_{model}_prosecutor_share_above"] == 0
    # The attacks ran and linked somebody to something. A model may find nobody: a
    # presence release publishes single (zone, bin) cells, which no knowledge of two
    # positions matches, and that is a risk of 0, not a broken adapter.
    assert max(rows[f"attack_{model}_prosecutor_max"] for model in covered) > 0
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
                     .format(sql.Identifier(copy)), (Jsonb(cells), len(cells)))
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
    for table in ("manifest", "cells", "cell_centroids", "trajectories"):
        conn.execute(sql.SQL("CREATE TABLE {} (LIKE {} INCLUDING ALL)").format(
            sql.Identifier(copy, table), sql.Identifier(source, table)))
        conn.execute(sql.SQL("INSERT INTO {} OVERRIDING SYSTEM VALUE SELECT * FROM {}").format(
            sql.Identifier(copy, table), sql.Identifier(source, table)))
        # The copy's row numbers (fid) go on from the source's.
        conn.execute(sql.SQL("SELECT setval(pg_get_serial_sequence(%s, 'fid'), "
                             "(SELECT max(fid) FROM {}))").format(sql.Identifier(copy, table)),
                     (f'"{copy}"."{table}"',))


@pytest.mark.parametrize("method", ["grid_kam_cut", "kam_cut", "kam_rec"])
def test_the_attack_reads_in_the_run_what_it_derives_from_raw_fixes(loaded_city, conn,
                                                                    method):
    """Inside the run, the generalization attack reads its targets from the visits the run
    made (work.visits): the same targets, persons and records, in the same order, as the
    verifier's derivation from raw fixes gives, so the release's attack metrics are those
    `anonymizers attack` measures on it later. The persons are renamed first, so that
    their order by name is not that of their first trajectory (which numbers them); the
    most visited published cell is taken out of the release's cells, so that trajectories
    leave the published cells and come back (the grid also leaves cells of its own)."""
    conn.execute("UPDATE raw.points SET user_id = md5(user_id)")
    params = (release_params(k=5) if method == "grid_kam_cut"
              else voronoi_params(method=method, k=5))
    spec = run_steps(params, until="manifest")
    release = ReleaseSpec.from_dict(spec)
    work, build = sql.Identifier(release.work_schema), sql.Identifier(release.build_schema)
    conn.execute(sql.SQL("""
        WITH busiest AS (
            SELECT m.cell_id, m.release_cell_id FROM {work}.visits AS v
            JOIN {work}.cell_map AS m USING (cell_id)
            GROUP BY 1, 2 ORDER BY count(*) DESC LIMIT 1
        ), flows AS (
            DELETE FROM {build}.flows WHERE (SELECT release_cell_id FROM busiest)
                                            IN (from_cell, to_cell)
        ), points AS (
            DELETE FROM {build}.cell_centroids
            WHERE cell_id = (SELECT release_cell_id FROM busiest)
        )
        DELETE FROM {work}.cell_map WHERE cell_id = (SELECT cell_id FROM busiest)
        """).format(work=work, build=build))
    conn.execute(sql.SQL("DELETE FROM {build}.cells WHERE cell_id NOT IN "
                         "(SELECT release_cell_id FROM {work}.cell_map)").format(
        work=work, build=build))
    assert conn.execute(sql.SQL(
        "SELECT count(*) FROM {}.visits WHERE cell_id NOT IN (SELECT cell_id FROM {}.cell_map)"
    ).format(work, work)).fetchone()[0] > 0
    derived = attack_input(conn, release.build_schema, method)
    read = attack_input(conn, release.build_schema, method, work=release.work_schema)
    for name in ("unit", "person", "location"):
        assert np.array_equal(getattr(read.observations, name),
                              getattr(derived.observations, name)), name
    read_records = read.records_for(read.observations)
    derived_records = derived.records_for(derived.observations)
    for name in ("record", "location", "set_offsets", "set_persons", "set_of"):
        assert np.array_equal(getattr(read_records, name), getattr(derived_records, name)), name
    assert read.observations.bounds.size > 100


def test_a_target_leaving_the_published_cells_and_coming_back_has_moved_nowhere():
    """Targets drop what lies outside every published cell, then collapse the repeats
    that leaves next to each other, as Definition 3's visits do; they come ordered by
    owner, then trajectory."""
    from anonymizers.families.generalization.attack import OUTSIDE, _targets

    traj = np.array([0, 0, 0, 0, 1, 1, 2])
    cell = np.array([5, OUTSIDE, 5, 6, OUTSIDE, 7, 5])
    targets, owners = _targets(traj, cell, owners=np.array([1, 0, 1]))
    assert [t.tolist() for t in targets] == [[7], [5, 6], [5]] and owners.tolist() == [0, 1, 1]


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
                 .format(build), (Jsonb(cells), len(cells)))
    with pytest.raises(PrivacyViolation, match=r"attack with \d known points re-identifies"):
        steps.metrics(spec)
    assert conn.execute(sql.SQL("SELECT count(*) FROM {}.metrics").format(build)
                        ).fetchone() == (0,)


def _one_persons_cells(conn: psycopg.Connection, release: str) -> list[int]:
    """Two consecutive cells of a trajectory that no other person's trajectory holds
    together and no published record holds: published alone, they name one person."""
    from collections import defaultdict
    from itertools import pairwise

    from anonymizers.families.generalization.verifier import derive_release_visits
    from anonymizers.verifiers.base import read_release

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
                return [int(a), int(b)]  # a JSON list of cell ids, as the release has
    raise AssertionError("every pair of consecutive cells is shared or published")


def test_a_covered_attack_beating_1_over_k_stops_the_release(loaded_city, conn, monkeypatch):
    """The metrics step is a gate too: a breach it measures is never published."""
    from pipeline_helpers import catalog_rows, release_params, run_steps

    from anonymizers.attacks.release import ReleaseAttack
    from anonymizers.errors import PrivacyViolation

    breach = {"model": "location", "knowledge_length": 2, "prosecutor_max": 1.0,
              "covered": True}
    monkeypatch.setattr(ReleaseAttack, "breaches", lambda self: [breach])
    with pytest.raises(PrivacyViolation, match="location attack with 2 known points"):
        run_steps(release_params(loaded_city), until="publish")
    assert catalog_rows(conn) == []


def test_mob_records_for_a_few_targets_are_the_whole_objects_at_their_cells(
        published_city, published_city_db):
    """The MOB adapter never expands every object into the occupied cells its regions hold;
    what it builds for sampled targets equals that expansion (done here the plain way,
    every region against every occupied cell of its time point) cut down to the targets'
    cells, with the same whole-record sizes and top two, and attacks them the same."""
    from anonymizers.attacks.suite import run_attacks, sample_units
    from anonymizers.families.mob.attack import attack_input as mob_input
    from anonymizers.families.mob.verifier import derive_mob_view

    with psycopg.connect(published_city_db) as conn:
        given = mob_input(conn, published_city["mob_symmetric"])
        view = derive_mob_view(conn, published_city["mob_symmetric"])
    observed = given.observations
    targets = observed.of_units(sample_units(observed, 12, 3))
    built = given.records_for(targets)
    whole = _every_object_at_every_occupied_cell(view, observed)
    expected = whole.restricted_to(np.unique(targets.location))
    assert 0 < built.record.size < whole.record.size
    for name in ("record", "location", "time", "set_offsets", "set_persons"):
        assert np.array_equal(getattr(built, name), getattr(expected, name)), name
    every = np.arange(whole.n_records)
    assert np.array_equal(built.whole.totals, expected.whole.totals)
    assert np.array_equal(built.whole.top_two(every), expected.whole.top_two(every))
    settings = {"models": list(MODELS), "lengths": [1, 2], "threshold": 1 / PUBLISHED_K,
                "max_instances": 100}
    assert (run_attacks(targets, built, **settings).summaries()
            == run_attacks(targets, whole, **settings).summaries())


def _every_object_at_every_occupied_cell(view, observed):
    """Object o holds cell c at t when its region at t contains c and someone is in c at
    t: every region against every occupied cell of its time point, in (object, time,
    cell) order."""
    from anonymizers.attacks.knowledge import Records

    regions, cells = view.regions, view.cells
    occupied = np.unique(np.column_stack([observed.time, observed.location, cells.x,
                                          cells.y]), axis=0)
    parts = []
    for t in np.unique(regions.t).tolist():
        here, rows = occupied[occupied[:, 0] == t], np.flatnonzero(regions.t == t)
        x, y = here[:, 2], here[:, 3]
        inside = ((regions.x0[rows, None] <= x) & (x <= regions.x1[rows, None])
                  & (regions.y0[rows, None] <= y) & (y <= regions.y1[rows, None]))
        row, cell = np.nonzero(inside)
        parts.append(np.column_stack([regions.obj[rows[row]], here[cell, 0], here[cell, 1]]))
    items = np.concatenate(parts)
    items = items[np.lexsort((items[:, 2], items[:, 1], items[:, 0]))]
    order = np.lexsort((view.full_person, view.full_object))
    offsets = np.searchsorted(view.full_object[order], np.arange(regions.n_objects + 1))
    return Records(items[:, 0], items[:, 2], items[:, 1], offsets.astype(np.int64),
                   view.full_person[order].astype(np.int64))


@pytest.mark.parametrize("method", ATTACKED)
def test_records_built_for_sampled_targets_attack_them_as_records_built_for_all(
        method, published_city, published_city_db):
    """Adapters build the records for the targets an attack samples; the sampled targets'
    outcomes are those of records built for every target of the window."""
    from anonymizers.attacks.suite import run_attacks, sample_units

    with psycopg.connect(published_city_db) as conn:
        given = attack_input(conn, published_city[method], method)
    observed = given.observations
    targets = observed.of_units(sample_units(observed, 10, 1))
    settings = {"models": list(given.models), "lengths": [1, 2],
                "threshold": 1 / PUBLISHED_K, "max_instances": 100}
    alone = run_attacks(targets, given.records_for(targets), **settings)
    every = run_attacks(targets, given.records_for(observed), **settings)
    assert alone.summaries() == every.summaries()


def test_tcaa_members_and_records_are_what_the_sql_join_of_positions_and_rectangles_finds(
        published_city, published_city_db):
    """The verifier's members of each TCAA group (numpy) are the persons SQL's join of the
    verifier's positions and the rectangles finds inside all of a group's rectangles; the
    attack's records for every target hold exactly the (position, group) pairs it finds."""
    from anonymizers.db.sqlfiles import run_sql_file
    from anonymizers.families.clustering.verifier import support_window
    from anonymizers.families.clustering.verifier_support import derive_support
    from anonymizers.verifiers.base import read_release

    schema = published_city["tcaa"]
    join = sql.SQL("""
        FROM (SELECT DISTINCT user_id, t, x, y FROM cl_verify_positions) AS p
        JOIN {}.group_regions AS g
          ON g.t_start = p.t AND p.x BETWEEN ST_XMin(g.geom) AND ST_XMax(g.geom)
         AND p.y BETWEEN ST_YMin(g.geom) AND ST_YMax(g.geom)""").format(sql.Identifier(schema))
    with psycopg.connect(published_city_db) as conn:
        window = support_window(read_release(conn, schema))
        given = attack_input(conn, schema, "tcaa")
        support = derive_support(conn, schema, window)
        with conn.transaction():
            run_sql_file(conn, "clustering/verify/positions.sql", window, release=schema)
            conn.execute("""
                CREATE TEMP TABLE ranks ON COMMIT DROP AS
                SELECT user_id, (row_number() OVER (ORDER BY user_id COLLATE "C") - 1)::int8
                       AS person
                FROM (SELECT DISTINCT user_id FROM cl_verify_positions) AS u""")
            pairs = conn.execute(sql.SQL(
                "SELECT r.person, extract(epoch FROM p.t)::float8, p.x, p.y, g.group_id {} "
                "JOIN ranks AS r USING (user_id)").format(join)).fetchall()
            members = conn.execute(sql.SQL("""
                SELECT g.group_id, r.person {} JOIN ranks AS r USING (user_id)
                GROUP BY g.group_id, r.person
                HAVING count(DISTINCT g.seq) = (SELECT count(*) FROM {}.group_regions AS c
                                                WHERE c.group_id = g.group_id)
                """).format(join, sql.Identifier(schema))).fetchall()
    assert set(zip(support.member_group.tolist(), support.member_person.tolist(),
                   strict=True)) == {(g, int(p)) for g, p in members}
    assert len(members) >= 2 * PUBLISHED_K
    records = given.records_for(given.observations)
    observed = given.observations
    positions = support.positions
    distinct = np.unique(np.column_stack([positions.person, positions.t, positions.x,
                                          positions.y]), axis=0)
    groups = np.union1d(support.groups, support.member_group)
    found = {(*distinct[key].tolist(), int(groups[record])) for key, record in zip(
        records.location.tolist(), records.record.tolist(), strict=True)}
    assert found == {(float(p), t, x, y, g) for p, t, x, y, g in pairs}
    assert observed.location.size == distinct.shape[0]
