"""The MOB verifier (seed 003) on hand-built releases: a correct one passes, plants are caught."""

from __future__ import annotations

import csv
import io
import json
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from anonymizers.db.sqlfiles import copy_out, run_sql_file
from anonymizers.errors import InputError
from anonymizers.families.mob.verifier import verify_mob_release
from anonymizers.loading import load_dataset
from anonymizers.release.fingerprint import (
    input_fingerprint,
    installation_secret,
    source_fingerprint,
)
from anonymizers.release.spec import area_of_use

SRID = 32633  # UTM 33N
CELL = 100.0
INTERVAL = 1800.0
START = datetime(2026, 3, 2, 8, tzinfo=UTC)
END = START + timedelta(hours=2)  # time points 08:00, 08:30, 09:00, 09:30
BASE = (5000, 50000)  # cell offsets of the scenario (x = 500 km, y = 5000 km)

Cell = tuple[int, int]
Box = tuple[int, int, int, int]  # x0, y0, x1, y1 (inclusive cells, relative to BASE)

# Each person's cell at time points 0..3 (None: no position); fred starts at 08:30.
CELLS: dict[str, list[Cell | None]] = {
    "alice": [(0, 0), (1, 0), (2, 0), (3, 0)],
    "bob": [(0, 1), (1, 1), (2, 1), (3, 1)],
    "chloe": [(10, 0), (10, 1), (10, 2), (10, 3)],
    "dave": [(11, 0), (11, 1), (11, 2), (11, 3)],
    "erika": [(20, 0), (20, 0), (21, 0), (21, 0)],
    "fred": [None, (30, 5), (30, 6), (30, 7)],
}
QIDS = {"alice": [0], "bob": [0], "chloe": [1, 2], "dave": [1], "erika": [3], "fred": [2]}
# A symmetric 2-anonymization: each pair shares its bounding box at the QID times of both.
GROUPS: list[tuple[tuple[str, ...], tuple[int, ...]]] = [
    (("alice", "bob"), (0,)), (("chloe", "dave"), (1, 2)), (("erika", "fred"), (2, 3))]

# Example 1 (Figure 1): cells at t1, t2 and QID(O1) = {t1}, QID(O2) = QID(O3) = {t2}.
EXAMPLE_1_CELLS: dict[str, list[Cell | None]] = {
    "i1": [(1, 2), (5, 3)], "i2": [(2, 3), (2, 7)], "i3": [(6, 6), (3, 6)]}
EXAMPLE_1_QIDS = {"i1": [0], "i2": [1], "i3": [1]}
EXAMPLE_1_GROUPS = [(("i1", "i2"), (0,)), (("i2", "i3"), (1,))]  # Figure 1(b)


# --------------------------------------------------------------------------- helpers


def lonlat(conn: psycopg.Connection, cells: set[Cell]) -> dict[Cell, tuple[float, float]]:
    """Longitude/latitude of each cell's centre (PostGIS inverts the projection)."""
    ordered = sorted(cells)
    xs = [(BASE[0] + x + 0.5) * CELL for x, _ in ordered]
    ys = [(BASE[1] + y + 0.5) * CELL for _, y in ordered]
    rows = conn.execute(
        "SELECT ST_X(g), ST_Y(g) FROM unnest(%s::float8[], %s::float8[]) WITH ORDINALITY "
        "AS u(x, y, n), ST_Transform(ST_SetSRID(ST_MakePoint(x, y), %s), 4326) AS g "
        "ORDER BY n", (xs, ys, SRID)).fetchall()
    return dict(zip(ordered, rows, strict=True))


def at(i: int, seconds: float = 0.0) -> datetime:
    return START + timedelta(seconds=i * INTERVAL + seconds)


def load(conn, tmp_path: Path, name: str, cells: dict[str, list[Cell | None]],
         qids: dict[str, list[int]]) -> int:
    """A dataset with one trajectory per person, one fix at each grid time, and QIDs
    17 minutes into their time points (they map down onto them)."""
    where = lonlat(conn, {c for track in cells.values() for c in track if c is not None})
    lines = ["traj_id,user_id,t,lon,lat"]
    for person, track in cells.items():
        for i, cell in enumerate(track):
            if cell is not None:
                lon, lat = where[cell]
                lines.append(f"{person}-trip,{person},{at(i).isoformat()},{lon!r},{lat!r}")
    path = tmp_path / f"{name}.csv"
    path.write_text("\n".join(lines) + "\n")
    dataset_id = load_dataset(path, name, url=_url(conn)).dataset_id
    with conn.cursor() as cur:
        cur.executemany("INSERT INTO raw.qids (dataset_id, user_id, t) VALUES (%s, %s, %s)",
                        [(dataset_id, p, at(i, 17 * 60)) for p, times in qids.items()
                         for i in times])
    return dataset_id


def _url(conn: psycopg.Connection) -> str:
    return conn.info.dsn


def hide(cells: dict[str, list[Cell | None]], groups) -> dict[str, list[Box | None]]:
    """The regions of a grouping: each group shares its bounding box at its time points."""
    boxes: dict[str, list[Box | None]] = {
        p: [(c[0], c[1], c[0], c[1]) if c else None for c in track]
        for p, track in cells.items()}
    for members, times in groups:
        for i in times:
            present = [cells[p][i] for p in members if cells[p][i] is not None]
            box = (min(c[0] for c in present), min(c[1] for c in present),
                   max(c[0] for c in present), max(c[1] for c in present))
            for p in members:
                boxes[p][i] = box if cells[p][i] is not None else None
    return boxes


def build_release(conn, dataset: str, dataset_id: int, boxes: dict[str, list[Box | None]],
                  k: int = 2, method: str = "mob_symmetric",
                  parameters: dict | None = None) -> str:
    """A release schema by the contract: manifest (``parameters`` added to its own),
    metrics, objects, positions."""
    schema = f"release_{dataset}_{method}_test"
    sha = conn.execute("SELECT source_sha256 FROM raw.datasets WHERE dataset_id = %s",
                       (dataset_id,)).fetchone()[0]
    conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    # Presence published: these regions are absent where their person has no position.
    params = {"cell_size": CELL, "coarse_cell_size": 4 * CELL, "interval": INTERVAL,
              "presence": "published", "qid_fingerprint": "test",
              **(parameters or {})}
    run_sql_file(conn, "release/create_manifest.sql", {
        "release_name": schema, "dataset": dataset, "method": method,
        "parameters": json.dumps(params), "k": k, "k_counts": "persons",
        "privacy_model": "Yarovoy Definition 3", "window_start": START, "window_end": END,
        "srid": SRID, "count_interval": k, "composition_risk": None,
        "precision_risk": None, "attack_risk": None,
        "source_fingerprint": source_fingerprint(installation_secret(conn), sha),
        "input_fingerprint": input_fingerprint(installation_secret(conn), sha, dataset_id,
                                               START.isoformat(), END.isoformat()),
        "trajectories_in": len(boxes), "persons_in": len(boxes), "points_in": 0,
        "published": len(boxes), "published_unit": "objects", "suppressed": 0,
        "code_version": "test"}, build=schema)
    run_sql_file(conn, "metrics/000_tables.sql", build=schema)
    conn.execute(sql.SQL("CREATE TABLE {}.objects (object_id uuid PRIMARY KEY)").format(
        sql.Identifier(schema)))
    conn.execute(sql.SQL("CREATE TABLE {}.positions (object_id uuid, t timestamptz, "
                         "geom geometry(Polygon, {}))").format(sql.Identifier(schema),
                                                               sql.Literal(SRID)))
    for track in boxes.values():
        add_object(conn, schema, track)
    return schema


def add_object(conn, schema: str, track: list[Box | None], shift_m: float = 0.0) -> None:
    object_id = uuid.uuid4()
    conn.execute(sql.SQL("INSERT INTO {}.objects VALUES (%s)").format(sql.Identifier(schema)),
                 (object_id,))
    rows = [(object_id, at(i), *envelope(box, shift_m)) for i, box in enumerate(track)
            if box is not None]
    with conn.cursor() as cur:
        cur.executemany(sql.SQL(
            "INSERT INTO {}.positions VALUES (%s, %s, ST_MakeEnvelope(%s, %s, %s, %s, {}))"
        ).format(sql.Identifier(schema), sql.Literal(SRID)), rows)


def envelope(box: Box, shift_m: float = 0.0) -> tuple[float, ...]:
    x0, y0, x1, y1 = box
    return ((BASE[0] + x0) * CELL + shift_m, (BASE[1] + y0) * CELL,
            (BASE[0] + x1 + 1) * CELL + shift_m, (BASE[1] + y1 + 1) * CELL)


def mob_violations(result) -> list[str]:
    """The violations of the MOB model (the shared rules' are asserted absent separately)."""
    return [v for v in result.violations if "publishes time finer" not in v]


@pytest.fixture
def scenario(conn, tmp_path) -> tuple[int, Callable[..., str]]:
    dataset_id = load(conn, tmp_path, "mob", CELLS, QIDS)

    def release(boxes=None, **kwargs) -> str:
        return build_release(conn, "mob", dataset_id, boxes or hide(CELLS, GROUPS), **kwargs)
    return dataset_id, release


# --------------------------------------------------------------------------- re-derivation


def test_the_verifier_derives_positions_on_the_grid_without_interpolation(conn, tmp_path):
    """Last fix at or before each time point of a running trajectory; of two running
    trajectories the later fix, ties to the larger traj_id; nothing once it has ended."""
    where = lonlat(conn, {(0, 0), (1, 0), (2, 0), (3, 0), (4, 0)})
    fixes = [("p-1", 0, (0, 0)), ("p-1", 0.5, (1, 0)), ("p-1", 2.2, (2, 0)),  # ends 09:06
             ("p-2", 0.5, (3, 0)), ("p-2", 0.9, (4, 0)), ("p-2", 1.0 + 1e-9, (4, 0)),
             ("q-1", 1.0, (0, 0)), ("q-2", 1.0, (1, 0)), ("q-1", 3.0, (0, 0)),
             ("q-2", 3.0, (1, 0))]
    lines = ["traj_id,user_id,t,lon,lat"] + [
        f"{traj},{traj[0]},{at(0, i * INTERVAL).isoformat()},{where[c][0]!r},{where[c][1]!r}"
        for traj, i, c in sorted(fixes)]
    path = tmp_path / "grid.csv"
    path.write_text("\n".join(lines) + "\n")
    dataset_id = load_dataset(path, "grid", url=_url(conn)).dataset_id
    params = {"dataset_id": dataset_id, "window_start": START, "window_end": END,
              "srid": SRID, "cell_size": CELL, "interval_s": INTERVAL, **area_of_use(SRID),
              "position_scope": "trajectory", "position_lookback_s": None}
    rows = csv.DictReader(io.StringIO(copy_out(conn, "mob/verify/person_cells.sql",
                                               params).decode()))
    got = {(r["user_id"], int(r["i"])): int(r["cx"]) - BASE[0] for r in rows}
    assert got == {("p", 0): 0,  # p-1 at 08:00
                   ("p", 1): 4,  # p-2's fix at 08:27 is later than p-1's at 08:15
                   ("p", 2): 1,  # p-2 ended 2 µs after 08:30; p-1's next fix is at 09:06
                   ("q", 1): 1, ("q", 2): 1, ("q", 3): 1}  # tie at 08:30: q-2 > q-1


# --------------------------------------------------------------------------- the model


def test_a_correct_k_anonymous_release_passes(conn, scenario):
    _, release = scenario
    result = verify_mob_release(conn, release())
    assert result.passed, result.violations
    assert result.checks["objects"] == 6
    assert result.checks["definition_3_asymmetric_edges"] == 0
    assert result.checks["attacker_persons_below_k"] == 0
    assert result.checks["suppressed_persons"] == 0


def test_a_suppressed_pair_is_allowed_and_reported_through_the_interval_filter(conn, scenario):
    _, release = scenario
    boxes = hide(CELLS, GROUPS)
    del boxes["erika"], boxes["fred"]
    result = verify_mob_release(conn, release(boxes))
    assert result.passed, result.violations
    assert result.checks["suppressed_persons"] == 2


WITHHELD: Box = (-1000, -1000, 1000, 1000)  # "no location": far wider than the scenario


def test_with_presence_hidden_every_object_has_a_region_at_every_time_point(conn, scenario):
    """fred has no position at 08:00: with presence hidden his object has the withheld
    region then and still pairs with him; a missing row is caught; the same rows under a
    manifest that says presence is published pair fred with nobody."""
    _, release = scenario
    boxes = hide(CELLS, GROUPS)
    boxes["fred"][0] = WITHHELD
    hidden = release(boxes, parameters={"presence": "hidden"})
    result = verify_mob_release(conn, hidden)
    assert result.passed, result.violations
    assert result.checks["positions_missing_object_time"] == 0
    with conn.transaction(force_rollback=True):
        conn.execute(sql.SQL("DELETE FROM {}.positions WHERE t = %s AND object_id = "
                             "(SELECT min(object_id::text)::uuid FROM {}.objects)").format(
            sql.Identifier(hidden), sql.Identifier(hidden)), (at(1),))
        result = verify_mob_release(conn, hidden)
    assert any("lacks 1 (object, time point)" in v for v in result.violations)
    conn.execute(sql.SQL("UPDATE {}.manifest SET parameters = parameters || "
                         "'{{\"presence\": \"published\"}}'").format(sql.Identifier(hidden)))
    result = verify_mob_release(conn, hidden)
    assert any("no person's distorted version" in v for v in mob_violations(result))


def test_an_unknown_presence_rule_is_refused(conn, scenario):
    _, release = scenario
    result = verify_mob_release(conn, release(parameters={"presence": "sometimes"}))
    assert any("cannot be checked" in v and "presence='sometimes'" in v
               for v in result.violations)


@pytest.mark.parametrize(("parameters", "expected"), [
    ({"position_lookback": -5}, "position_lookback must be >= 1"),
    ({"position_scope": "anyone"}, "position_scope='anyone'"),
    ({"cell_size": "wide"}, "cell_size='wide'"),
])
def test_parameters_the_declaration_refuses_are_a_violation(conn, scenario, parameters,
                                                            expected):
    """The verifier reads the manifest's parameters by the family's declaration: a value
    it refuses makes the release uncheckable, never a default."""
    _, release = scenario
    result = verify_mob_release(conn, release(parameters=parameters))
    assert not result.passed
    assert any("cannot be checked" in v and expected in v for v in result.violations), \
        result.violations


def test_a_manifest_without_a_grid_is_a_violation(conn, scenario):
    _, release = scenario
    schema = release()
    conn.execute(sql.SQL("UPDATE {}.manifest SET parameters = parameters - 'interval'").format(
        sql.Identifier(schema)))
    result = verify_mob_release(conn, schema)
    assert any("do not declare the release's interval" in v for v in result.violations)


def test_a_release_of_another_family_is_refused(conn, scenario):
    """Which releases this verifier judges follows from the declaration (the method's
    family), not from a list of names."""
    _, release = scenario
    with pytest.raises(InputError, match="not a MOB one"):
        verify_mob_release(conn, release(method="kam_cut"))


def test_a_region_without_its_persons_cell_is_caught(conn, scenario):
    _, release = scenario
    boxes = hide(CELLS, GROUPS)
    boxes["alice"][2] = (5, 5, 5, 5)  # alice was at (2, 0)
    result = verify_mob_release(conn, release(boxes))
    assert any("is no person's distorted version" in v for v in result.violations), \
        result.violations


def test_an_accidental_asymmetric_edge_is_counted_not_refused(conn, scenario):
    """alice's object also covers dave at his QID time t1, but dave's does not cover alice
    at hers (t0): an edge without its mirror, as the paper's algorithms make on real data.
    It only adds a candidate: the symmetric core still hides everybody among 2, and the
    attacker of Definition 2 narrows nobody below 2."""
    _, release = scenario
    boxes = hide(CELLS, GROUPS)
    boxes["alice"][1] = (1, 0, 11, 1)
    result = verify_mob_release(conn, release(boxes))
    assert result.passed, result.violations
    assert result.checks["definition_3_asymmetric_edges"] is None  # 1 < k: filtered
    assert result.checks["definition_3_symmetric_degree_below_k"] == 0
    assert result.checks["attacker_persons_below_k"] == 0


def test_a_one_sided_hiding_set_is_caught(conn, scenario):
    """bob's object covers alice at t0, but alice's no longer covers bob: alice is hidden
    by 2 objects, only 1 of which she hides in turn (Definition 3(ii) on the core)."""
    _, release = scenario
    boxes = hide(CELLS, GROUPS)
    boxes["alice"][0] = (0, 0, 0, 0)  # her own cell: bob's cell (0, 1) is outside it
    result = verify_mob_release(conn, release(boxes))
    violations = mob_violations(result)
    assert result.checks["definition_3_symmetric_degree_below_k"] == 1
    assert any("(Definition 3(ii) on the symmetric core, k=2)" in v for v in violations), \
        violations
    assert not result.passed


def test_example_1s_unsafe_grouping_is_caught(conn, tmp_path):
    """Figure 1(b): every person is hidden among 2 objects, yet O1 is I1 (Example 1)."""
    dataset_id = load(conn, tmp_path, "example", EXAMPLE_1_CELLS, EXAMPLE_1_QIDS)
    schema = build_release(conn, "example", dataset_id,
                           hide(EXAMPLE_1_CELLS, EXAMPLE_1_GROUPS))
    result = verify_mob_release(conn, schema)
    violations = mob_violations(result)
    assert result.checks["definition_3_degree_below_k"] == 0  # the naive check passes
    assert result.checks["attacker_persons_below_k"] == 1
    assert any("has 1 candidate objects (k=2)" in v for v in violations), violations
    assert any("it can belong to only 1 persons" in v for v in violations), violations


def test_a_suppressed_person_who_could_pass_for_a_published_object_is_caught(conn, tmp_path):
    """gina is not published, yet she is a distorted version of alice's object: present
    at the same time points, in alice's own cells at t1-t3 and inside the box alice shares
    with bob at t0. The release reads as well with gina published instead of alice, and
    gina, hidden by alice's object alone at her QID time, would have 1 candidate: who was
    published, hence Definition 3, cannot be told (seen on the 1M-fix synthetic city)."""
    cells = {**CELLS, "gina": [(0, 1), (1, 0), (2, 0), (3, 0)]}
    dataset_id = load(conn, tmp_path, "lookalike", cells, {**QIDS, "gina": [3]})
    result = verify_mob_release(conn, build_release(conn, "lookalike", dataset_id,
                                                    hide(CELLS, GROUPS)))
    violations = mob_violations(result)
    assert any("who was published cannot be told" in v for v in violations), violations
    assert not result.passed


def test_an_extra_object_is_caught(conn, scenario):
    _, release = scenario
    boxes = hide(CELLS, GROUPS)
    schema = release(boxes)
    add_object(conn, schema, boxes["chloe"])  # a second copy of chloe's
    result = verify_mob_release(conn, schema)
    assert result.checks["objects_matching_nobody"] == 1
    assert any("is no person's distorted version" in v for v in result.violations)


def _sql(text: str, schema: str) -> sql.Composed:
    return sql.SQL(text).format(s=sql.Identifier(schema))


# Malformed rows of positions, planted one at a time: (statement, expected violation).
ROW_PLANTS = {
    "off the cell lattice": (
        "UPDATE {s}.positions SET geom = ST_Translate(geom, 30, 0) WHERE ctid = "
        "(SELECT min(ctid) FROM {s}.positions)", "not on the cell lattice"),
    "not a rectangle": (
        "UPDATE {s}.positions SET geom = ST_Buffer(ST_Centroid(geom), 40, 2) WHERE ctid = "
        "(SELECT min(ctid) FROM {s}.positions)", "not axis-parallel rectangles"),
    "another srid": (
        "ALTER TABLE {s}.positions ALTER COLUMN geom TYPE geometry(Polygon, 32632) "
        "USING ST_SetSRID(geom, 32632)", "in another SRID"),
    "a time off the grid": (
        "UPDATE {s}.positions SET t = t + interval '1 minute' WHERE ctid = "
        "(SELECT min(ctid) FROM {s}.positions)", "off the release's time grid"),
    "an unknown object": (
        "INSERT INTO {s}.positions SELECT gen_random_uuid(), t, geom FROM {s}.positions "
        "LIMIT 1", "objects that are not in objects"),
    "a repeated region": (
        "INSERT INTO {s}.positions SELECT * FROM {s}.positions LIMIT 1",
        "more regions of an object at a time point than one"),
}


def test_malformed_positions_are_caught(conn, scenario):
    _, release = scenario
    schema = release()
    for name, (statement, expected) in ROW_PLANTS.items():
        with conn.transaction(force_rollback=True):
            conn.execute(_sql(statement, schema))
            result = verify_mob_release(conn, schema)
        assert any(expected in v for v in result.violations), (name, result.violations)
    assert verify_mob_release(conn, schema).passed


def test_nothing_raw_identifies_a_person_in_the_violations(conn, scenario):
    _, release = scenario
    boxes = hide(CELLS, GROUPS)
    boxes["alice"][1] = (1, 0, 11, 1)
    boxes["bob"][3] = (9, 9, 9, 9)
    result = verify_mob_release(conn, release(boxes))
    assert result.violations
    for violation in result.violations:  # uuids are hex: no person's name fits in one
        assert not any(person in violation for person in CELLS)
