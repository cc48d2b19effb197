"""Aggregates on tiny hand-made datasets, exactly: the dominant zone (ties), presence cells,
od moves (stayers included), and the suppression as an analyst attacks it: a published
total minus its published members recovers fewer than k persons when the secondary
suppression is switched off (planted), nothing when it is on; the verifier catches the
plant."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import psycopg
from pipeline_helpers import run_steps
from psycopg import sql

from anonymizers.families.aggregates import suppression
from anonymizers.loading import load_dataset
from anonymizers.release.spec import ReleaseSpec
from anonymizers.verifiers import verify_release

START = "2024-03-04T00:00:00Z"
LAT = 48.0
# Zones 500 m squares: X is west of Y, which is west of Z (a tie between X and Y goes to X,
# the smaller column); each point lies well inside its square.
LON = {"X": 9.0031, "Y": 9.0231, "Z": 9.0431}


def _write(folder: Path, fixes: list[tuple[str, str, int, str]]) -> Path:
    """(traj_id, user_id, minute from START, zone) as a loader CSV."""
    path = folder / "fixes.csv"
    lines = ["traj_id,user_id,t,lon,lat"]
    for i, (traj, user, minute, zone) in enumerate(fixes):
        t = f"2024-03-04T{minute // 60:02d}:{minute % 60:02d}:{i % 60:02d}Z"
        lines.append(f"{traj},{user},{t},{LON[zone]},{LAT}")
    path.write_text("\n".join(lines) + "\n")
    return path


def _load(db_url: str, folder: Path, fixes: list[tuple[str, str, int, str]]) -> str:
    load_dataset(_write(folder, fixes), "tiny", url=db_url)
    return "tiny"


def _release(method: str, k: int, end: str, **extra: object) -> ReleaseSpec:
    return ReleaseSpec.from_dict(run_steps({
        "dataset": "tiny", "method": method, "k": k, "start": START, "end": end,
        "count_interval": 1, **extra}, until="metrics"))


def _zone_of(conn: psycopg.Connection, spec: ReleaseSpec) -> Callable[[str], str]:
    """The work schema's zone key of each named point."""
    def key(zone: str) -> str:
        row = conn.execute(sql.SQL(
            "SELECT zone_key FROM {} WHERE ST_Intersects(geom, ST_Transform(ST_SetSRID("
            "ST_MakePoint(%s, %s), 4326), %s))").format(
            sql.Identifier(spec.work_schema, "ag_zones")), (LON[zone], LAT, spec.srid)).fetchone()
        assert row is not None, zone
        return str(row[0])
    return key


def _true_cells(conn: psycopg.Connection, spec: ReleaseSpec) -> dict[tuple, int]:
    rows = conn.execute(sql.SQL("SELECT bin, origin_key, zone_key, n FROM {}").format(
        sql.Identifier(spec.work_schema, "ag_cells"))).fetchall()
    return {(b, o, z): n for b, o, z, n in rows}


# Three hours. A: bin 0 two fixes in X and one in Y (dominant X); bin 1 one in X, one in Y
# (a tie: X). B: Y in bins 0 and 1 (a stayer). C: X in bin 1, Y then Z then Z in bin 2.
COUNTING = [("a1", "A", 5, "X"), ("a1", "A", 10, "X"), ("a1", "A", 20, "Y"),
            ("a2", "A", 70, "Y"), ("a2", "A", 80, "X"),
            ("b1", "B", 15, "Y"), ("b1", "B", 75, "Y"),
            ("c1", "C", 90, "X"), ("c1", "C", 150, "Y"), ("c1", "C", 160, "Z"),
            ("c1", "C", 170, "Z")]


def test_presence_counts_each_person_once_per_bin_in_its_dominant_zone(db_url, conn,
                                                                       tmp_path):
    _load(db_url, tmp_path, COUNTING)
    spec = _release("presence", 2, "2024-03-04T03:00:00Z")
    zone = _zone_of(conn, spec)
    x, y, z = zone("X"), zone("Y"), zone("Z")
    assert _true_cells(conn, spec) == {(0, None, x): 1, (0, None, y): 1,
                                       (1, None, x): 2, (1, None, y): 1,
                                       (2, None, z): 1}
    bins = dict(conn.execute(sql.SQL("SELECT bin, n FROM {}").format(
        sql.Identifier(spec.work_schema, "ag_bins"))).fetchall())
    assert bins == {0: 2, 1: 3, 2: 1}
    # Published at k = 2, exact counts: the one cell of 2; its bin total of 3 leaves 1 in
    # the bin's other cells, so the cell goes too (secondary); the window total 6 minus the
    # bin totals 2 and 3 leaves bin 2's person, so the smaller bin total goes too.
    assert _published(conn, spec) == ([], [(3, "bin 1")], [6])


def _published(conn: psycopg.Connection, spec: ReleaseSpec
               ) -> tuple[list[int], list[tuple[int, str]], list[int]]:
    schema = sql.Identifier(spec.build_schema)
    cells = [row[0] for row in conn.execute(sql.SQL(
        "SELECT n_lo FROM {}.presence_counts UNION ALL SELECT n_lo FROM {}.od_counts "
        "ORDER BY 1").format(schema, schema)).fetchall()]
    bins = [(n, f"bin {int(offset // 3600)}") for n, offset in conn.execute(sql.SQL(
        "SELECT n_lo, extract(epoch FROM bin_start - %s::timestamptz) FROM {}.bin_totals "
        "ORDER BY bin_start").format(schema), (START,)).fetchall()]
    totals = [row[0] for row in conn.execute(sql.SQL("SELECT n_lo FROM {}.totals").format(
        schema)).fetchall()]
    return cells, bins, totals


def test_od_counts_one_move_per_person_in_consecutive_bins_stayers_included(
        db_url, conn, tmp_path):
    _load(db_url, tmp_path, COUNTING)
    spec = _release("od", 2, "2024-03-04T03:00:00Z")
    zone = _zone_of(conn, spec)
    x, y, z = zone("X"), zone("Y"), zone("Z")
    # Bin 1: A stays in X, B stays in Y; bin 2: C moves X -> Z (its dominant zone there).
    assert _true_cells(conn, spec) == {(1, x, x): 1, (1, y, y): 1, (2, x, z): 1}


# --------------------------------------------------------------------------- suppression

# One hour, k = 3, exact counts: 4 persons in X, 3 in Y, 1 in Z. The bin total 8 minus the
# published cells X and Y leaves 1: Z's person. The second hour holds 2 persons (a bin
# total below k), so the window total minus the first bin's total leaves them.
SUPPRESSION = ([(f"x{i}", f"X{i}", 10, "X") for i in range(4)]
               + [(f"y{i}", f"Y{i}", 10, "Y") for i in range(3)]
               + [("z0", "Z0", 10, "Z")]
               + [(f"w{i}", f"W{i}", 70, "X") for i in range(2)])


def _analyst_attack(cells: list[int], bins: list[tuple[int, str]], totals: list[int],
                    k: int) -> list[int]:
    """What an analyst subtracts: every published bin total minus the published cells
    (here all cells are of the first bin), and the window total minus the published bin
    totals; the differences that isolate 1 to k - 1 persons."""
    found = [total - sum(cells) for total, _ in bins[:1]]
    found += [window - sum(n for n, _ in bins) for window in totals]
    return [d for d in found if 0 < d < k]


def test_without_secondary_suppression_a_total_minus_its_members_isolates_fewer_than_k(
        db_url, conn, tmp_path, monkeypatch):
    _load(db_url, tmp_path, SUPPRESSION)
    monkeypatch.setattr(suppression, "secondary",
                        lambda cell_bin, cell_n, bin_n, k, published: published)
    spec = _release("presence", 3, "2024-03-04T02:00:00Z")
    cells, bins, totals = _published(conn, spec)
    assert (cells, bins, totals) == ([3, 4], [(8, "bin 0")], [10])
    assert _analyst_attack(cells, bins, totals, 3) == [1, 2]
    result = verify_release(conn, spec.build_schema)
    assert not result.passed
    assert sum("secondary suppression" in v for v in result.violations) == 2, result.violations


def test_secondary_suppression_leaves_every_remainder_0_or_at_least_k(db_url, conn,
                                                                      tmp_path):
    _load(db_url, tmp_path, SUPPRESSION)
    spec = _release("presence", 3, "2024-03-04T02:00:00Z")
    cells, bins, totals = _published(conn, spec)
    # Y (the smallest published cell) goes for the bin; the first bin's total goes for the
    # window (its remainder, 4, joins the window's: 10 - 4 published in X leaves 6).
    assert (cells, bins, totals) == ([4], [], [10])
    assert _analyst_attack(cells, bins, totals, 3) == []
    assert 10 - sum(cells) >= 3
    result = verify_release(conn, spec.build_schema)
    assert result.passed, result.violations


def test_the_differencing_attack_finds_what_nested_windows_leave_between_them(
        db_url, conn, tmp_path):
    """An operator who accepts the composition risk of a first hour inside two hours:
    the window totals (8 and 10 person-bins) differ by the 2 persons of the second hour,
    fewer than k; the shared differencing attack reports them isolated (the family's
    differencing.sql keys the window total by its bins' length and alignment)."""
    from anonymizers.attacks.differencing import A_IN_B, differencing_against_ledger

    _load(db_url, tmp_path, SUPPRESSION)
    base = {"dataset": "tiny", "method": "presence", "k": 3, "count_interval": 1,
            "start": START}
    inner = ReleaseSpec.from_dict(run_steps({**base, "end": "2024-03-04T01:00:00Z"}))
    outer = ReleaseSpec.from_dict(run_steps({
        **base, "end": "2024-03-04T02:00:00Z", "accept_composition_risk": "test: nested"}))
    (result,) = differencing_against_ledger(conn, inner.release_name)
    assert result.release_b == outer.release_name and result.relation == A_IN_B
    assert result.risk >= 1 / 2
    # (the manifest's exact window counts isolate them too: count_interval=1 here)
    found = {f.kind: f.difference for f in result.findings if f.certain}
    assert found["window_person_bins"] == (2, 2)
    # The cell X of the first hour (4 persons in both) differences into nothing.
    assert {s.kind for s in result.kinds} >= {"presence_persons", "window_person_bins"}
