"""The trajectory-groups verifier (seed 004) on hand-built releases: a correct one passes,
every planted violation is caught.

The releases are built here from the scenario below by plain Python (sequences matched by
brute force, boundary hiding by hand): never by the anonymizer, whose code and SQL the
verifier must not share.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import psycopg
import pytest
from psycopg import sql
from psycopg.types.json import Jsonb
from scipy.spatial import Delaunay

from anonymizers.db.sqlfiles import run_sql_file
from anonymizers.errors import InputError
from anonymizers.families.groups.verifier import _derive_visits, _settings, verify_groups_release
from anonymizers.loading import load_dataset
from anonymizers.release.fingerprint import (
    input_fingerprint,
    installation_secret,
    source_fingerprint,
)
from anonymizers.verifiers.base import VerifierResult, read_release

SRID = 32633  # UTM 33N
CELL = 100.0
K = 3
START = datetime(2026, 3, 2, 8, tzinfo=UTC)
END = START + timedelta(hours=2)
BASE = (5000, 50000)  # cell offsets of the scenario (x = 500 km, y = 5000 km)
GRID = "age:0:120:24,income:0:200000:20"
ATTRIBUTES = (("age", 0.0, 120.0, 24), ("income", 0.0, 200000.0, 20))

# The places: grid cells (column, row relative to BASE) and, for the place-sequence
# dataset, stations at these offsets in metres (jittered: no four on a circle).
CELLS = {"A": (0, 0), "B": (1, 0), "C": (2, 0), "D": (3, 0), "E": (4, 0), "F": (2, 1),
         "G": (0, 1)}
STATIONS = {"A": (0, 0), "B": (100, 8), "C": (205, -5), "D": (310, 12), "E": (400, 3),
            "F": (190, 130), "G": (-15, 110), "H": (620, 340), "I": (230, 900),
            "J": (160, 1500)}  # nobody visits H, I, J
# Trajectories: id, person, places in order; t11, t12 lie after the window.
TRAJECTORIES = [("t1", 1, "ABCDE"), ("t2", 2, "ABCDE"), ("t3", 3, "ABCFDE"), ("t4", 4, "GABC"),
                ("t5", 5, "DEG"), ("t6", 1, "AB"), ("t7", 6, "EDCBA"), ("t8", 7, "ABC"),
                ("t9", 8, "GABCD"), ("t10", 9, "ABC"), ("t11", 6, "ABC"), ("t12", 5, "ABC")]
OUTSIDE = {"t11", "t12"}
# Ages and incomes close together, as classes whose hidden boxes keep k of them must be.
PERSONS = {1: (31, 41000), 2: (32, 42000), 3: (33, 43000), 4: (61, 71000), 5: (44, 20000),
           6: (62, 72000), 7: (63, 73000), 8: (64, 74000), 9: (34, 44000)}

OVERLAPPING_GROUPS = {1: "ABC", 2: "AB", 3: "DE", 4: "BC", 5: "CD"}
NONOVERLAPPING_GROUPS = {1: "ABC", 2: "DE"}
ASSIGNMENT = {1: [("t1", 0, 3), ("t2", 0, 3), ("t3", 0, 3), ("t4", 1, 4), ("t8", 0, 3),
                  ("t9", 1, 4), ("t10", 0, 3)],
              2: [("t1", 3, 5), ("t2", 3, 5), ("t3", 4, 6), ("t5", 0, 2)]}
# Origin / destination groups of the nonoverlapping release: id, group, kind, centre.
OD = [(1, 1, "origin", "A"), (2, 2, "destination", "E")]


# --------------------------------------------------------------------------- the oracle


def interval(n: int, k: int = K, size: int = K) -> tuple[int, int]:
    lo = k + size * ((n - k) // size)
    return lo, lo + size - 1


def occurrences(sequence: str, places: str) -> list[int]:
    return [i for i in range(len(places) - len(sequence) + 1)
            if places[i:i + len(sequence)] == sequence]


def inside() -> list[tuple[str, int, str]]:
    return [t for t in TRAJECTORIES if t[0] not in OUTSIDE]


def containing(sequence: str) -> list[tuple[str, int, str]]:
    return [t for t in inside() if occurrences(sequence, t[2])]


def hidden(values: list[float], lower: float, upper: float, bins: int) -> tuple[float, float]:
    """§4.4.5 by hand: the atomic interval around the mean of the ceil(k/2) lowest values
    and the one around the mean of the ceil(k/2) highest."""
    m = math.ceil(K / 2)
    ordered = sorted(values)
    a_low, a_high = sum(ordered[:m]) / m, sum(ordered[-m:]) / m
    edges = [lower + (upper - lower) * i / bins for i in range(bins)] + [upper]
    low = max(i for i in range(bins) if edges[i] <= a_low)
    high = max(i for i in range(bins) if edges[i] <= a_high)
    return edges[low], edges[high + 1]


def held(people: list[int], bounds: list[tuple[float, float]]) -> int:
    """How many of ``people`` lie inside the box ``bounds`` (one [lo, hi) per attribute)."""
    return sum(all(lo <= PERSONS[p][j] < hi for j, (lo, hi) in enumerate(bounds))
               for p in people)


def split_classes(persons: list[int]) -> list[list[int]]:
    """Persons under 45 and the others, when both have k; else one class."""
    young = sorted(p for p in persons if PERSONS[p][0] < 45)
    old = sorted(p for p in persons if PERSONS[p][0] >= 45)
    return [young, old] if len(young) >= K and len(old) >= K else [sorted(persons)]


# --------------------------------------------------------------------------- the scenario


@dataclass
class Scenario:
    """A loaded dataset and how its places are named and where they are."""

    conn: psycopg.Connection
    name: str
    dataset_id: int
    mode: str  # 'grid' or 'dataset'
    place_names: dict[str, str]
    user_ids: dict[int, str]
    neighbours: dict[str, set[str]] = field(default_factory=dict)

    def places(self, letters: str) -> list[str]:
        return [self.place_names[c] for c in letters]

    def hood(self, centre: str) -> list[str]:
        if self.mode == "grid":  # the 8 lattice cells around, visited or not
            col, row = map(int, self.place_names[centre].split(":"))
            return sorted(f"{col + dc}:{row + dr}" for dc in (-1, 0, 1) for dr in (-1, 0, 1))
        return sorted(self.places(centre + "".join(sorted(self.neighbours[centre]))))


def _url(conn: psycopg.Connection) -> str:
    return conn.info.dsn


def to_lonlat(conn: psycopg.Connection, xy: dict[str, tuple[float, float]]
              ) -> dict[str, tuple[float, float]]:
    names = sorted(xy)
    rows = conn.execute(
        "SELECT ST_X(g), ST_Y(g) FROM unnest(%s::float8[], %s::float8[]) WITH ORDINALITY "
        "AS u(x, y, n), ST_Transform(ST_SetSRID(ST_MakePoint(x, y), %s), 4326) AS g "
        "ORDER BY n", ([xy[n][0] for n in names], [xy[n][1] for n in names], SRID)).fetchall()
    return dict(zip(names, rows, strict=True))


def visit_times(index: int, traj: str) -> Iterator[tuple[int, datetime]]:
    """Two fixes per visit (20 s apart), a minute between visits; late ids after END."""
    start = (END + timedelta(minutes=5)) if traj in OUTSIDE else START + timedelta(minutes=10)
    for i in range(10):
        yield i, start + timedelta(minutes=3 * index + i)


def write_persons(path: Path, user_ids: dict[int, str]) -> Path:
    lines = ["user_id,age,income"] + [f"{user_ids[p]},{age},{income}"
                                      for p, (age, income) in PERSONS.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def load_grid(conn: psycopg.Connection, tmp_path: Path, name: str = "tgrid") -> Scenario:
    """The scenario as GPS fixes: two fixes per visit inside its cell (centre, 10 m east)."""
    centres = {c: ((BASE[0] + x + 0.5) * CELL, (BASE[1] + y + 0.5) * CELL)
               for c, (x, y) in CELLS.items()}
    shifted = {c + "'": (x + 10, y) for c, (x, y) in centres.items()}
    where = to_lonlat(conn, centres | shifted)
    user_ids = {p: f"u{p}" for p in PERSONS}
    lines = ["traj_id,user_id,t,lon,lat"]
    for index, (traj, person, places) in enumerate(TRAJECTORIES):
        for (_, t), place in zip(visit_times(index, traj), places, strict=False):
            for offset, key in ((0, place), (20, place + "'")):
                lon, lat = where[key]
                moment = (t + timedelta(seconds=offset)).isoformat()
                lines.append(f"{traj},{user_ids[person]},{moment},{lon!r},{lat!r}")
    points = tmp_path / f"{name}.csv"
    points.write_text("\n".join(lines) + "\n")
    persons = write_persons(tmp_path / f"{name}_persons.csv", user_ids)
    dataset_id = load_dataset(points, name, persons=persons, url=_url(conn)).dataset_id
    names = {c: f"{BASE[0] + x}:{BASE[1] + y}" for c, (x, y) in CELLS.items()}
    scenario = Scenario(conn, name, dataset_id, "grid", names, user_ids)
    visited = set(CELLS)
    scenario.neighbours = {c: {d for d in visited if d != c and
                               abs(CELLS[c][0] - CELLS[d][0]) <= 1 and
                               abs(CELLS[c][1] - CELLS[d][1]) <= 1} for c in visited}
    return scenario


def load_stations(conn: psycopg.Connection, tmp_path: Path, name: str = "tstations") -> Scenario:
    """The scenario as visits to stations (the places loader), places and persons named by
    numbers, so that most user ids are also place names."""
    origin = ((BASE[0] + 0.5) * CELL, (BASE[1] + 0.5) * CELL)
    xy = {c: (origin[0] + dx, origin[1] + dy) for c, (dx, dy) in STATIONS.items()}
    where = to_lonlat(conn, xy)
    names = {c: str(i + 3) for i, c in enumerate(sorted(STATIONS))}  # A -> '3', ...
    places = tmp_path / f"{name}_places.csv"
    places.write_text("place,lon,lat\n" + "".join(
        f"{names[c]},{where[c][0]!r},{where[c][1]!r}\n" for c in sorted(STATIONS)))
    user_ids = {p: str(p) for p in PERSONS}
    lines = ["traj_id,user_id,t,place"]
    for index, (traj, person, visits) in enumerate(TRAJECTORIES):
        for (_, t), place in zip(visit_times(index, traj), visits, strict=False):
            for offset in (0, 20):
                moment = (t + timedelta(seconds=offset)).isoformat()
                lines.append(f"{traj},{user_ids[person]},{moment},{names[place]}")
    visits_file = tmp_path / f"{name}.csv"
    visits_file.write_text("\n".join(lines) + "\n")
    persons = write_persons(tmp_path / f"{name}_persons.csv", user_ids)
    dataset_id = load_dataset(visits_file, name, persons=persons, places=places,
                              url=_url(conn)).dataset_id
    scenario = Scenario(conn, name, dataset_id, "dataset", names, user_ids)
    scenario.neighbours = delaunay_neighbours(conn, dataset_id, names)
    return scenario


def delaunay_neighbours(conn: psycopg.Connection, dataset_id: int,
                        names: dict[str, str]) -> dict[str, set[str]]:
    """The stations' Delaunay edges in the release's CRS, by scipy (not by PostGIS)."""
    rows = conn.execute("SELECT place, ST_X(g), ST_Y(g) FROM raw.places, "
                        "ST_Transform(geom, %s) AS g WHERE dataset_id = %s ORDER BY place",
                        (SRID, dataset_id)).fetchall()
    letter = {v: k for k, v in names.items()}
    points = np.array([[x, y] for _, x, y in rows])
    found: dict[str, set[str]] = {letter[p]: set() for p, _, _ in rows}
    for simplex in Delaunay(points).simplices:
        for a in simplex:
            for b in simplex:
                if a != b:
                    found[letter[rows[a][0]]].add(letter[rows[b][0]])
    return found


# --------------------------------------------------------------------------- releases


@dataclass
class Built:
    schema: str
    work: str | None
    od_places: dict[int, list[str]]


def _execute(conn: psycopg.Connection, text: str, **names: str) -> None:
    conn.execute(sql.SQL(text).format(**{k: sql.Identifier(v) for k, v in names.items()},
                                      srid=sql.Literal(SRID)))


def create_release_tables(conn: psycopg.Connection, schema: str) -> None:
    _execute(conn, """
        CREATE TABLE {s}.places (place_id text PRIMARY KEY, geom geometry(Geometry, {srid}));
        CREATE TABLE {s}.groups (group_id integer PRIMARY KEY, places jsonb, length integer,
                                 n_lo integer, n_hi integer, geom geometry(LineString, {srid}));
        CREATE TABLE {s}.od_groups (od_group_id integer PRIMARY KEY, group_id integer,
                                    kind text, places jsonb, n_lo integer, n_hi integer,
                                    geom geometry(MultiPoint, {srid}));
        CREATE TABLE {s}.demographic_classes (
            group_id integer, class_id integer, n_lo integer, n_hi integer,
            age_lo float8, age_hi float8, income_lo float8, income_hi float8,
            PRIMARY KEY (group_id, class_id))""", s=schema)


def create_private_tables(conn: psycopg.Connection, work: str) -> None:
    _execute(conn, """
        CREATE SCHEMA {w};
        CREATE TABLE {w}.tg_published_assignment (group_id integer, traj_id text,
                                                  user_id text, seq_start integer,
                                                  seq_stop integer);
        CREATE TABLE {w}.tg_published_od_members (od_group_id integer, traj_id text,
                                                  user_id text);
        CREATE TABLE {w}.tg_published_class_members (group_id integer, class_id integer,
                                                     user_id text)""", w=work)


def write_manifest(sc: Scenario, schema: str, method: str, params: dict) -> None:
    conn = sc.conn
    sha = conn.execute("SELECT source_sha256 FROM raw.datasets WHERE dataset_id = %s",
                       (sc.dataset_id,)).fetchone()[0]
    conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    run_sql_file(conn, "release/create_manifest.sql", {
        "release_name": schema, "dataset": sc.name, "method": method,
        "parameters": json.dumps(params), "k": K, "k_counts": "persons",
        "privacy_model": "Nordström", "window_start": START, "window_end": END,
        "srid": SRID, "count_interval": K, "composition_risk": None,
        "precision_risk": None, "attack_risk": None,
        "source_fingerprint": source_fingerprint(installation_secret(conn), sha),
        "input_fingerprint": input_fingerprint(installation_secret(conn), sha, sc.dataset_id,
                                               START.isoformat(), END.isoformat()),
        "trajectories_in": 10, "persons_in": 9, "points_in": 0, "published": 2,
        "published_unit": "groups", "suppressed": 0, "code_version": "test"}, build=schema)
    run_sql_file(conn, "metrics/000_tables.sql", build=schema)


def insert_places(sc: Scenario, schema: str, names: set[str]) -> None:
    if sc.mode == "grid":
        cells = [(n, *map(int, n.split(":"))) for n in sorted(names)]
        with sc.conn.cursor() as cur:
            cur.executemany(sql.SQL(
                "INSERT INTO {}.places VALUES (%s, ST_MakeEnvelope(%s * {c}, %s * {c}, "
                "(%s + 1) * {c}, (%s + 1) * {c}, {srid}))").format(
                    sql.Identifier(schema), c=sql.Literal(CELL), srid=sql.Literal(SRID)),
                [(n, x, y, x, y) for n, x, y in cells])
    else:
        sc.conn.execute(sql.SQL(
            "INSERT INTO {}.places SELECT place, ST_Transform(geom, {}) FROM raw.places "
            "WHERE dataset_id = %s AND place = ANY(%s)").format(
                sql.Identifier(schema), sql.Literal(SRID)), (sc.dataset_id, sorted(names)))


def insert_groups(sc: Scenario, schema: str, groups: dict[int, str],
                  counts: dict[int, int]) -> None:
    with sc.conn.cursor() as cur:
        cur.executemany(sql.SQL("INSERT INTO {}.groups VALUES (%s, %s, %s, %s, %s)").format(
            sql.Identifier(schema)),
            [(g, Jsonb(sc.places(seq)), len(seq), *interval(counts[g]))
             for g, seq in groups.items()])


def insert_classes(sc: Scenario, schema: str, work: str | None,
                   persons: dict[int, list[int]]) -> None:
    rows, members = [], []
    for group, people in persons.items():
        for class_id, cls in enumerate(split_classes(people), start=1):
            bounds = [hidden([PERSONS[p][j] for p in cls], lo, hi, bins)
                      for j, (_, lo, hi, bins) in enumerate(ATTRIBUTES)]
            if held(people, bounds) < K:
                continue  # as the anonymizer: a hidden box of fewer than k is not published
            rows.append((group, class_id, *interval(len(cls)), *bounds[0], *bounds[1]))
            members += [(group, class_id, sc.user_ids[p]) for p in cls]
    with sc.conn.cursor() as cur:
        cur.executemany(sql.SQL("INSERT INTO {}.demographic_classes VALUES "
                                "(%s, %s, %s, %s, %s, %s, %s, %s)").format(
                                    sql.Identifier(schema)), rows)
        if work is not None:
            cur.executemany(sql.SQL("INSERT INTO {}.tg_published_class_members VALUES "
                                    "(%s, %s, %s)").format(sql.Identifier(work)), members)


def insert_assignment(sc: Scenario, work: str,
                      rows: list[tuple[int, str, int, int]]) -> None:
    person = {traj: p for traj, p, _ in TRAJECTORIES}
    with sc.conn.cursor() as cur:
        cur.executemany(sql.SQL("INSERT INTO {}.tg_published_assignment VALUES "
                                "(%s, %s, %s, %s, %s)").format(sql.Identifier(work)),
                        [(g, t, sc.user_ids[person[t]], a, b) for g, t, a, b in rows])


def schema_names(sc: Scenario, method: str, published: bool) -> tuple[str, str | None]:
    suffix = f"{sc.name}_{method}_test"
    return (f"release_{suffix}", None) if published else (f"build_{suffix}",
                                                          f"work_{suffix}")


def build_overlapping(sc: Scenario, published: bool = False) -> Built:
    """Every group of OVERLAPPING_GROUPS, counted by the trajectories containing it, with
    its persons' classes; the private assignment lists every occurrence."""
    method = "tg_overlapping"
    schema, work = schema_names(sc, method, published)
    write_manifest(sc, schema, method, {"places": sc.mode, "cell_size": CELL,
                                        "interval_size": None, "demographics": "mondrian",
                                        "demographic_grid": GRID, "seed": 0})
    create_release_tables(sc.conn, schema)
    counts = {g: len(containing(seq)) for g, seq in OVERLAPPING_GROUPS.items()}
    insert_groups(sc, schema, OVERLAPPING_GROUPS, counts)
    insert_places(sc, schema, {p for seq in OVERLAPPING_GROUPS.values() for p in sc.places(seq)})
    run_sql_file(sc.conn, "groups/061_group_geometry.sql", build=schema)
    persons = {g: sorted({p for _, p, _ in containing(seq)})
               for g, seq in OVERLAPPING_GROUPS.items()}
    if work is not None:
        create_private_tables(sc.conn, work)
        insert_assignment(sc, work, [(g, t, i, i + len(seq))
                                     for g, seq in OVERLAPPING_GROUPS.items()
                                     for t, _, places in containing(seq)
                                     for i in occurrences(seq, places)])
    insert_classes(sc, schema, work, persons)
    return Built(schema, work, {})


def build_nonoverlapping(sc: Scenario, published: bool = False) -> Built:
    """NONOVERLAPPING_GROUPS with ASSIGNMENT, the OD groups, and classes of the assigned."""
    method = "tg_nonoverlapping"
    schema, work = schema_names(sc, method, published)
    write_manifest(sc, schema, method, {"places": "auto", "cell_size": CELL,
                                        "interval_size": K, "od_groups": "true",
                                        "demographics": "ga", "demographic_grid": GRID,
                                        "seed": 0})
    create_release_tables(sc.conn, schema)
    insert_groups(sc, schema, NONOVERLAPPING_GROUPS,
                  {g: len(rows) for g, rows in ASSIGNMENT.items()})
    sequence = {t: places for t, _, places in TRAJECTORIES}
    person = {t: p for t, p, _ in TRAJECTORIES}
    od_places, od_rows, members = {}, [], []
    for od_id, group, kind, centre in OD:
        hood = sc.hood(centre)
        ends = [t for t, _, _ in ASSIGNMENT[group]
                if sc.place_names[sequence[t][0 if kind == "origin" else -1]] in hood]
        od_places[od_id] = hood
        od_rows.append((od_id, group, kind, Jsonb(hood), *interval(len(ends))))
        members += [(od_id, t, sc.user_ids[person[t]]) for t in ends]
    with sc.conn.cursor() as cur:
        cur.executemany(sql.SQL("INSERT INTO {}.od_groups VALUES (%s, %s, %s, %s, %s, %s)"
                                ).format(sql.Identifier(schema)), od_rows)
    named = {p for seq in NONOVERLAPPING_GROUPS.values() for p in sc.places(seq)}
    insert_places(sc, schema, named | {p for hood in od_places.values() for p in hood})
    run_sql_file(sc.conn, "groups/061_group_geometry.sql", build=schema)
    if work is not None:
        create_private_tables(sc.conn, work)
        insert_assignment(sc, work, [(g, t, a, b) for g, rows in ASSIGNMENT.items()
                                     for t, a, b in rows])
        with sc.conn.cursor() as cur:
            cur.executemany(sql.SQL("INSERT INTO {}.tg_published_od_members VALUES "
                                    "(%s, %s, %s)").format(sql.Identifier(work)), members)
    insert_classes(sc, schema, work, {g: sorted({person[t] for t, _, _ in rows})
                                      for g, rows in ASSIGNMENT.items()})
    return Built(schema, work, od_places)


@pytest.fixture
def grid(conn, tmp_path) -> Scenario:
    return load_grid(conn, tmp_path)


def planted(conn: psycopg.Connection, built: Built, statements: list[str]):
    """Run the verifier with ``statements`` applied, then roll them back."""
    with conn.transaction(force_rollback=True):
        for statement in statements:
            conn.execute(sql.SQL(statement).format(s=sql.Identifier(built.schema),
                                                   w=sql.Identifier(built.work or "none")))
        return verify_groups_release(conn, built.schema)


def assert_caught(result, expected: str, name: str = "") -> None:
    assert any(expected in v for v in result.violations), (name, expected, result.violations)


# --------------------------------------------------------------------------- correct releases


def test_a_correct_overlapping_release_passes(conn, grid):
    built = build_overlapping(grid)
    result = verify_groups_release(conn, built.schema)
    assert result.passed, result.violations
    assert result.checks["groups"] == len(OVERLAPPING_GROUPS)
    assert result.checks["places_mode"] == "grid"
    assert result.checks["class_members"] == "checked"
    assert result.checks["assignment_misspelt"] == 0


def test_a_correct_nonoverlapping_release_passes(conn, grid):
    built = build_nonoverlapping(grid)
    result = verify_groups_release(conn, built.schema)
    assert result.passed, result.violations
    assert result.checks["od_groups"] == len(OD)
    assert result.checks["od_members"] == "checked"
    assert result.checks["assignment_overlapping"] == 0


def test_a_hidden_box_holding_fewer_than_k_is_refused(conn, grid):
    """§4.4.5 moves each bound to the mean of ceil(k/2) values, per attribute: members at
    the extremes fall outside. Group 5's class (ages 31, 32, 64) hides to ages [30, 50),
    which holds two of them: the thesis would publish it with the class's count, rule 1
    does not (the scenario leaves it out, as the anonymizer does); published, it is refused."""
    built = build_overlapping(grid)
    people = sorted({p for _, p, _ in containing(OVERLAPPING_GROUPS[5])})
    bounds = [hidden([PERSONS[p][j] for p in people], lo, hi, bins)
              for j, (_, lo, hi, bins) in enumerate(ATTRIBUTES)]
    assert held(people, bounds) < K <= len(people)
    conn.execute(sql.SQL("INSERT INTO {}.demographic_classes VALUES (5, 1, %s, %s, %s, %s, "
                         "%s, %s)").format(sql.Identifier(built.schema)),
                 (*interval(len(people)), *bounds[0], *bounds[1]))
    result = verify_groups_release(conn, built.schema)
    assert any(f"fewer than k={K} persons of the group inside its box" in v
               for v in result.violations), result.violations


def test_a_published_release_has_no_private_checks_and_passes(conn, grid):
    for build in (build_overlapping, build_nonoverlapping):
        built = build(grid, published=True)
        result = verify_groups_release(conn, built.schema)
        assert result.passed, (build.__name__, result.violations)
        assert result.checks["assignment"].startswith("not available")
        assert result.checks["class_members"].startswith("not available")
        assert result.checks["od_members"].startswith("not available")


def test_the_occurrences_of_sequences_of_every_length_are_the_brute_force_ones(conn, grid):
    """groups_occurrences.sql matches one place, two places, and longer sequences by three
    different joins: each must find exactly the occurrences a scan of the trajectories finds,
    also of sequences nobody travelled (reversed, or with a place repeated)."""
    built = build_overlapping(grid)
    release = read_release(conn, built.schema)
    settings = _settings(conn, release, VerifierResult(built.schema, K))
    travelled = {places[i:j] for _, _, places in inside()
                 for i in range(len(places)) for j in range(i + 1, min(i + 5, len(places) + 1))}
    probes = sorted(travelled | {"BA", "CBA", "ED", "DEB", "AA", "ABCDEG", "F"})
    with conn.transaction():
        _derive_visits(conn, release, settings)
        conn.execute("CREATE TEMP TABLE probe_groups (group_id integer, places text[])")
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO probe_groups VALUES (%s, %s)",
                            [(g, grid.places(seq)) for g, seq in enumerate(probes)])
        run_sql_file(conn, "groups/verify/occurrences.sql", groups=("pg_temp", "probe_groups"))
        found = conn.execute("SELECT group_id, traj, seq_start FROM tgv_occurrences").fetchall()
    expected = sorted((g, traj, i) for g, seq in enumerate(probes)
                      for traj, _, places in inside() for i in occurrences(seq, places))
    assert sorted(found) == expected
    assert {len(probes[g]) for g, _, _ in expected} >= {1, 2, 3, 4}


# --------------------------------------------------------------------------- plants


def _reverse(group: int) -> str:
    return ("UPDATE {s}.groups SET places = (SELECT jsonb_agg(e ORDER BY i DESC) FROM "
            "jsonb_array_elements(places) WITH ORDINALITY AS u(e, i)), geom = ST_Reverse(geom) "
            f"WHERE group_id = {group}")


def _class(column: str, value: str, group: int = 1, class_id: int = 1) -> str:
    return (f"UPDATE {{s}}.demographic_classes SET {column} = {value} "
            f"WHERE group_id = {group} AND class_id = {class_id}")


def group_plants(sc: Scenario) -> dict[str, tuple[list[str], str]]:
    """Plants every method must catch: (statements, expected violation)."""
    fde = "to_jsonb(ARRAY[" + ", ".join(f"'{p}'" for p in sc.places("FDE")) + "])"
    a, f = sc.place_names["A"], sc.place_names["F"]
    cell = "ST_MakeEnvelope({0} * 100, {1} * 100, ({0} + 1) * 100, ({1} + 1) * 100, 32633)"
    return {
        "a reversed sequence": ([_reverse(1)], "sequences of fewer than k=3 distinct persons"),
        "a group of one person": (
            [f"INSERT INTO {{s}}.groups VALUES (9, {fde}, 3, 3, 5)"],
            "sequences of fewer than k=3 distinct persons"),
        "an interval without the true count": (
            ["UPDATE {s}.groups SET n_lo = n_lo + 3, n_hi = n_hi + 3 WHERE group_id = 1"],
            "does not hold the true count"),
        "an interval of the wrong size": (
            ["UPDATE {s}.groups SET n_hi = n_hi + 1 WHERE group_id = 1"], "is not of size 3"),
        "a wrong length": (["UPDATE {s}.groups SET length = 7 WHERE group_id = 1"],
                           "length is not its number of places"),
        "a moved place": (
            [f"UPDATE {{s}}.places SET geom = ST_Translate(geom, 10, 0) WHERE place_id = '{a}'"],
            "its geometry is not the place's"),
        "an unused place": (
            [f"INSERT INTO {{s}}.places VALUES ('{f}', "
             + cell.format(BASE[0] + CELLS["F"][0], BASE[1] + CELLS["F"][1]) + ")"],
            "published but named by no group"),
        "an unpublished place": (
            [f"DELETE FROM {{s}}.places WHERE place_id = '{a}'"], "but not published"),
        "a class with nobody of the group inside its box": (
            [_class("age_lo", "100"), _class("age_hi", "120")],
            "persons of the group inside its box"),
        "a class bound off the atomic grid": ([_class("age_lo", "age_lo + 1")],
                                              "not on the public atomic grid"),
        "a bound not hidden": ([_class("age_lo", "20")], "bounds are not hidden"),
        "a class below k members": (
            ["DELETE FROM {w}.tg_published_class_members WHERE (group_id, class_id, user_id) "
             f"= (1, 2, '{sc.user_ids[4]}')"], "fewer than k=3 distinct members"),
        "a class count outside its interval": (
            [_class("n_lo", "6"), _class("n_hi", "8")], "outside [n_lo, n_hi]"),
        "two overlapping classes": (
            [_class(column, value, class_id=2) for column, value in (
                ("age_lo", "0"), ("age_hi", "120"), ("income_lo", "0"),
                ("income_hi", "200000"))],
            "boxes of two classes of the group intersect"),
        "a leaked raw user id": (
            ["ALTER TABLE {s}.groups ADD COLUMN note text",
             f"UPDATE {{s}}.groups SET note = '{sc.user_ids[1]}'"], "raw traj_id/user_id"),
    }


def nonoverlapping_plants(sc: Scenario, built: Built) -> dict[str, tuple[list[str], str]]:
    a_hood = "to_jsonb(ARRAY[" + ", ".join(f"'{p}'" for p in built.od_places[1]) + "])"
    g = sc.place_names["G"]
    u = sc.user_ids
    return {
        "overlapping ranges of one trajectory": (
            ["INSERT INTO {s}.groups VALUES (3, to_jsonb(ARRAY["
             + ", ".join(f"'{p}'" for p in sc.places("CD")) + "]), 2, 3, 5)",
             "INSERT INTO {w}.tg_published_assignment VALUES "
             f"(3, 't1', '{u[1]}', 2, 4), (3, 't2', '{u[2]}', 2, 4), (3, 't9', '{u[8]}', 3, 5)"],
            "overlaps another of its ranges"),
        "a trajectory twice in a group": (
            ["INSERT INTO {w}.tg_published_assignment VALUES "
             f"(1, 't1', '{u[1]}', 0, 3)"], "a trajectory counted more than once"),
        "a misspelt assignment": (
            ["UPDATE {w}.tg_published_assignment SET seq_start = 1, seq_stop = 4 "
             "WHERE group_id = 1 AND traj_id = 't1'"], "do not spell the group's sequence"),
        "an assigned count outside the interval": (
            ["DELETE FROM {w}.tg_published_assignment WHERE group_id = 1 "
             "AND traj_id IN ('t8', 't10')"],
            "does not hold the true count"),
        "an od group that is not a closed neighbourhood": (
            [f"UPDATE {{s}}.od_groups SET places = places - '{g}' "
             "WHERE od_group_id = 1"], "not one place and all its neighbours"),
        "an od member in two origin groups": (
            [f"INSERT INTO {{s}}.od_groups VALUES (3, 2, 'origin', {a_hood}, 3, 5)",
             "INSERT INTO {w}.tg_published_od_members VALUES "
             f"(3, 't1', '{u[1]}'), (3, 't2', '{u[2]}'), (3, 't3', '{u[3]}')"],
            "trajectories in more than one origin (or destination) group"),
        "an od member that started elsewhere": (
            ["INSERT INTO {w}.tg_published_od_members VALUES "
             f"(2, 't5', '{u[5]}')"], "does not start (origin) / end (destination)"),
        "an od member not in the group": (
            ["INSERT INTO {w}.tg_published_od_members VALUES "
             f"(1, 't6', '{u[1]}')"], "not assigned to the od group's trajectory group"),
        "an od group below k": (
            ["DELETE FROM {w}.tg_published_od_members WHERE od_group_id = 2 "
             "AND traj_id = 't1'"], "fewer than k=3 distinct members"),
        "od groups the manifest does not publish": (
            ["UPDATE {s}.manifest SET parameters = parameters || '{{\"od_groups\": \"false\"}}'"],
            "publishes no origin-destination groups"),
    }


def _check_plants(conn, built: Built, plants: dict[str, tuple[list[str], str]]) -> None:
    for name, (statements, expected) in plants.items():
        assert_caught(planted(conn, built, statements), expected, name)
    assert verify_groups_release(conn, built.schema).passed


def test_plants_in_an_overlapping_release_are_caught(conn, grid):
    built = build_overlapping(grid)
    plants = group_plants(grid)
    del plants["a reversed sequence"]  # below: the assignment then misspells it too
    _check_plants(conn, built, plants)
    result = planted(conn, built, [_reverse(1)])
    assert_caught(result, "sequences of fewer than k=3 distinct persons")
    assert_caught(result, "do not spell the group's sequence")


def test_plants_in_a_nonoverlapping_release_are_caught(conn, grid):
    built = build_nonoverlapping(grid)
    _check_plants(conn, built, group_plants(grid) | nonoverlapping_plants(grid, built))


def test_a_published_release_is_still_checked_against_raw_data(conn, grid):
    """Without the private tables: support, intervals (as bounds), od support, classes."""
    built = build_nonoverlapping(grid, published=True)
    plants = {name: plant for name, plant in group_plants(grid).items()
              if "{w}" not in " ".join(plant[0])
              and name not in ("an interval without the true count", "a bound not hidden",
                               "a class count outside its interval")}
    plants["an interval above the possible count"] = (
        ["UPDATE {s}.groups SET n_lo = n_lo + 3, n_hi = n_hi + 3 WHERE group_id = 1"],
        "exceeds the trajectories containing it")
    plants["an od group nobody could be in"] = (
        ["UPDATE {s}.od_groups SET kind = 'destination' WHERE od_group_id = 1"],
        "fewer than k=3 distinct persons that could be members")
    _check_plants(conn, built, plants)


def test_the_overlapping_interval_must_be_at_least_half_k(conn, grid):
    built = build_overlapping(grid)
    result = planted(conn, built, [
        "UPDATE {s}.manifest SET parameters = parameters || '{{\"interval_size\": 1}}'"])
    assert_caught(result, "below ceil(k/2)")


def test_overlapping_groups_with_classes_need_an_interval_of_k(conn, grid):
    """§4.5.1, Figure 13: with I_s = k/2 two nested groups' classes tell what the persons
    between them are (the scenario's k = 3: ceil(k/2) = 2 passes the first rule only)."""
    built = build_overlapping(grid)
    result = planted(conn, built, [
        "UPDATE {s}.manifest SET parameters = parameters || '{{\"interval_size\": 2}}'"])
    assert_caught(result, "with demographic classes")


def test_nothing_raw_identifies_a_person_in_the_violations(conn, grid):
    built = build_nonoverlapping(grid)
    plants = nonoverlapping_plants(grid, built)
    statements = [s for name in ("overlapping ranges of one trajectory",
                                 "an od member in two origin groups",
                                 "a misspelt assignment") for s in plants[name][0]]
    result = planted(conn, built, [*statements, _class("age_lo", "20")])
    assert len(result.violations) >= 3
    for violation in result.violations:
        assert not re.search(r"\b[tu]\d+\b", violation), violation


# --------------------------------------------------------------------------- places dataset


def test_a_place_sequence_release_passes_and_place_names_are_no_leak(conn, tmp_path):
    """Stations named '3'..'12', persons '1'..'9': publishing the stations' names is no leak
    of user ids (a user id that is no station's name still is);
    neighbours are the Delaunay edges of all stations (scipy agrees)."""
    sc = load_stations(conn, tmp_path)
    built = build_nonoverlapping(sc)
    result = verify_groups_release(conn, built.schema)
    assert result.passed, result.violations
    assert result.checks["places_mode"] == "dataset"
    assert result.checks["raw_identifiers_found"] == 0
    named = {p for seq in NONOVERLAPPING_GROUPS.values() for p in sc.places(seq)}
    unused = sorted(set(sc.place_names.values()) - named
                    - {p for hood in built.od_places.values() for p in hood})
    assert unused  # J, far from the stations the groups use
    plants = group_plants(sc)
    plants["an unused place"] = (
        [f"INSERT INTO {{s}}.places SELECT place, ST_Transform(geom, 32633) FROM raw.places "
         f"WHERE dataset_id = {sc.dataset_id} AND place = '{unused[0]}'"],
        "published but named by no group")
    plants["a place of another name"] = (
        [f"UPDATE {{s}}.places SET place_id = 'X' WHERE place_id = '{sc.place_names['A']}'"],
        "is no place of the dataset")
    plants["a leaked raw trajectory id"] = (
        ["ALTER TABLE {s}.od_groups ADD COLUMN note text",
         "UPDATE {s}.od_groups SET note = 't3'"], "raw traj_id/user_id")
    _check_plants(conn, built, plants)


def test_an_overlapping_place_sequence_release_passes(conn, tmp_path):
    sc = load_stations(conn, tmp_path)
    result = verify_groups_release(conn, build_overlapping(sc).schema)
    assert result.passed, result.violations


# --------------------------------------------------------------------------- cost


def random_walks(n_traj: int, steps: int, side: int, seed: int = 1) -> list[tuple[str, int, str]]:
    """Random walks on a side x side grid of cells (moves to one of 4 neighbours or stays),
    a few persons making several trajectories."""
    rng = np.random.default_rng(seed)
    walks = []
    for i in range(n_traj):
        x, y = (int(v) for v in rng.integers(0, side, 2))
        cells = [(x, y)]
        for _ in range(steps - 1):
            dx, dy = ((1, 0), (-1, 0), (0, 1), (0, -1), (0, 0))[int(rng.integers(0, 5))]
            x, y = min(max(x + dx, 0), side - 1), min(max(y + dy, 0), side - 1)
            cells.append((x, y))
        walks.append((f"w{i}", i % (n_traj * 4 // 5), cells))
    return walks


def collapsed(cells: list[tuple[int, int]]) -> list[tuple[int, int]]:
    return [c for i, c in enumerate(cells) if i == 0 or c != cells[i - 1]]


def all_groups(walks, k: int, longest: int = 4) -> dict[tuple, tuple[set, set]]:
    """Brute force: every contiguous subsequence (up to ``longest`` places) travelled by
    at least k persons, with its trajectories and persons."""
    found: dict[tuple, tuple[set, set]] = {}
    for traj, person, cells in walks:
        seq = collapsed(cells)
        for i in range(len(seq)):
            for j in range(i + 1, min(i + longest, len(seq)) + 1):
                trajs, persons = found.setdefault(tuple(seq[i:j]), (set(), set()))
                trajs.add(traj)
                persons.add(person)
    return {s: v for s, v in found.items() if len(v[1]) >= k}


def test_the_verifier_checks_thousands_of_trajectories_quickly(conn, tmp_path, capsys):
    """3,000 random walks of 20 fixes, every group of up to 4 cells with k persons
    (overlapping, counted by brute force): the release passes; the time is reported."""
    k, side = 5, 25
    walks = random_walks(3000, 20, side)
    centres = {(x, y): ((BASE[0] + x + 0.5) * CELL, (BASE[1] + y + 0.5) * CELL)
               for x in range(side) for y in range(side)}
    keys = {c: f"{c[0]}_{c[1]}" for c in centres}
    where = to_lonlat(conn, {keys[c]: xy for c, xy in centres.items()})
    lines = ["traj_id,user_id,t,lon,lat"]
    for index, (traj, person, cells) in enumerate(walks):
        for i, c in enumerate(cells):
            t = START + timedelta(seconds=index % 600 + 60 * i)
            lines.append(f"{traj},p{person},{t.isoformat()},{where[keys[c]][0]!r},"
                         f"{where[keys[c]][1]!r}")
    path = tmp_path / "walks.csv"
    path.write_text("\n".join(lines) + "\n")
    dataset_id = load_dataset(path, "walks", url=_url(conn)).dataset_id
    sc = Scenario(conn, "walks", dataset_id, "grid", {}, {})
    groups = all_groups(walks, k)
    schema = "build_walks_test"
    write_manifest(sc, schema, "tg_overlapping", {
        "places": "grid", "cell_size": CELL, "interval_size": None, "demographics": "none",
        "demographic_grid": GRID})
    conn.execute(sql.SQL("UPDATE {}.manifest SET k = %s, count_interval = %s").format(
        sql.Identifier(schema)), (k, k))
    create_release_tables(conn, schema)
    name = {c: f"{BASE[0] + c[0]}:{BASE[1] + c[1]}" for c in centres}
    rows = [(g, Jsonb([name[c] for c in seq]), len(seq), *interval(len(trajs), k, k))
            for g, (seq, (trajs, _)) in enumerate(groups.items(), start=1)]
    with conn.cursor() as cur:
        cur.executemany(sql.SQL("INSERT INTO {}.groups VALUES (%s, %s, %s, %s, %s)").format(
            sql.Identifier(schema)), rows)
        used = sorted({c for seq in groups for c in seq})
        cur.executemany(sql.SQL(
            "INSERT INTO {}.places VALUES (%s, ST_MakeEnvelope(%s * 100.0, %s * 100.0, "
            "(%s + 1) * 100.0, (%s + 1) * 100.0, 32633))").format(sql.Identifier(schema)),
            [(name[c], BASE[0] + c[0], BASE[1] + c[1], BASE[0] + c[0], BASE[1] + c[1])
             for c in used])
    run_sql_file(conn, "groups/061_group_geometry.sql", build=schema)
    began = time.perf_counter()
    result = verify_groups_release(conn, schema)
    seconds = time.perf_counter() - began
    assert result.passed, result.violations[:5]
    assert result.checks["groups"] == len(groups) > 1000
    with capsys.disabled():
        print(f"\ngroups verifier: {len(walks)} trajectories, {len(groups)} groups, "
              f"{seconds:.2f} s")


# --------------------------------------------------------------------------- the declaration


def test_the_verifier_tells_methods_apart_by_their_declared_traits(conn, grid, monkeypatch):
    """A method is judged by what its declaration says (traits, parameter class, family),
    never by its name: the nonoverlapping method declared under another name is verified as
    nonoverlapping (its assignment and od groups checked), and an overlapping one under
    another name still needs I >= ceil(k/2) (§4.5.1)."""
    from dataclasses import replace

    from anonymizers.families.registry import METHODS

    for method in ("tg_nonoverlapping", "tg_overlapping"):
        monkeypatch.setitem(METHODS, f"{method}_renamed",
                            replace(METHODS[method], name=f"{method}_renamed"))
    built = build_nonoverlapping(grid)
    renamed = "UPDATE {s}.manifest SET method = 'tg_nonoverlapping_renamed'"
    result = planted(conn, built, [renamed])
    assert result.passed, result.violations
    assert result.checks["od_members"] == "checked"
    assert_caught(planted(conn, built, [
        renamed, "UPDATE {w}.tg_published_assignment SET seq_start = 1, seq_stop = 4 "
        "WHERE group_id = 1 AND traj_id = 't1'"]), "do not spell the group's sequence")
    built = build_overlapping(grid)
    assert_caught(planted(conn, built, [
        "UPDATE {s}.manifest SET method = 'tg_overlapping_renamed'",
        "UPDATE {s}.manifest SET parameters = parameters || '{{\"interval_size\": 1}}'"]),
        "below ceil(k/2)")


def test_a_release_of_another_family_is_refused(conn, grid):
    built = build_overlapping(grid)
    with conn.transaction(force_rollback=True):
        conn.execute(sql.SQL("UPDATE {}.manifest SET method = 'kam_cut'").format(
            sql.Identifier(built.schema)))
        with pytest.raises(InputError, match="not a trajectory-groups one"):
            verify_groups_release(conn, built.schema)


def test_the_manifest_parameters_are_read_with_the_declared_defaults_and_types(conn, grid):
    """od_groups is a declared bool, true by default: a nonoverlapping manifest without it
    publishes od groups (the verifier's own fallback said false and refused them), the text
    of an older manifest ("false") is read as false, and a value that is no bool cannot be
    checked."""
    built = build_nonoverlapping(grid)
    result = planted(conn, built, ["UPDATE {s}.manifest SET parameters = parameters - "
                                   "'od_groups'"])
    assert result.passed, result.violations
    assert_caught(planted(conn, built, [
        "UPDATE {s}.manifest SET parameters = parameters || '{{\"od_groups\": \"false\"}}'"]),
        "publishes no origin-destination groups")
    for value in ('"maybe"', '"auto"'):
        key = "od_groups" if value == '"maybe"' else "demographics"
        assert_caught(planted(conn, built, [
            f"UPDATE {{s}}.manifest SET parameters = parameters || "
            f"'{{{{\"{key}\": {value}}}}}'"]), "the manifest's parameters cannot be checked")
