"""The MOB preparation in PostGIS (sql/mob/): time points, objects, carried-forward cells, QIDs."""

from __future__ import annotations

import csv
import io
import math
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import psycopg
import pytest
from pyproj import Transformer

from anonymizers.errors import InputError
from anonymizers.families.mob.preparation import prepare_mob_tables, prepare_positions
from anonymizers.loading import load_dataset
from anonymizers.loading.qids import load_qids
from anonymizers.release.spec import area_of_use, utm_srid

SRID = 32632  # UTM 32N: the hand-made fixes are near Florence
WORK = "work_mob_test"
CELL = 100.0
INTERVAL = 300
START = datetime(2020, 1, 1, 8, 0, tzinfo=UTC)
END = START + timedelta(minutes=30)  # time points 08:00, 08:05, ..., 08:25 (t_index 0..5)

# (traj_id, user_id, "HH:MM:SS" on 2020-01-01, lon, lat)
FIXES = [
    # u1: trajectory a, then a gap, then b (no carrying across the gap)
    ("a", "u1", "08:01:00", 11.2500, 43.7700), ("a", "u1", "08:04:00", 11.2510, 43.7710),
    ("a", "u1", "08:12:00", 11.2600, 43.7800),
    ("b", "u1", "08:20:00", 11.2700, 43.7900), ("b", "u1", "08:26:00", 11.2800, 43.8000),
    # u2: two overlapping trajectories: the later fix of either wins
    ("c", "u2", "08:00:00", 11.3000, 43.7000), ("c", "u2", "08:14:00", 11.3100, 43.7100),
    ("d", "u2", "08:06:00", 11.3200, 43.7200), ("d", "u2", "08:11:00", 11.3300, 43.7300),
    # u3: two trajectories with a fix at the same instant: the larger traj_id wins
    ("e", "u3", "08:05:00", 11.2000, 43.6000), ("e", "u3", "08:09:00", 11.2010, 43.6010),
    ("f", "u3", "08:05:00", 11.2100, 43.6100), ("f", "u3", "08:07:00", 11.2110, 43.6110),
    # u4: fixes before and after the window are not used (not even to carry forward)
    ("g", "u4", "07:50:00", 11.1000, 43.5000), ("g", "u4", "08:02:00", 11.1010, 43.5010),
    ("g", "u4", "08:07:00", 11.1020, 43.5020), ("g", "u4", "08:31:00", 11.1030, 43.5030),
    # u5: a fix outside the CRS's area of use is left out; the previous one carries on
    ("h", "u5", "08:00:00", 11.4000, 43.4000), ("h", "u5", "08:05:00", 30.0000, 43.4000),
    ("h", "u5", "08:10:00", 11.4010, 43.4010),
    # u6: before the window only: no object
    ("i", "u6", "07:00:00", 11.5000, 43.3000), ("i", "u6", "07:10:00", 11.5010, 43.3010),
    # u7: two fixes between two time points: no position at any time point, no object
    ("j", "u7", "08:16:00", 11.6000, 43.2000), ("j", "u7", "08:19:00", 11.6010, 43.2010),
]


def fix(traj: str, clock: str) -> tuple[float, float]:
    """(lon, lat) of the hand-made fix of ``traj`` at ``clock``."""
    [(lon, lat)] = [(lon, lat) for (t, _, c, lon, lat) in FIXES if (t, c) == (traj, clock)]
    return lon, lat


# The expected position of each person at each time point: the fix that is carried there.
EXPECTED = {
    ("u1", 1): fix("a", "08:04:00"), ("u1", 2): fix("a", "08:04:00"),  # t3: in the gap
    ("u1", 4): fix("b", "08:20:00"), ("u1", 5): fix("b", "08:20:00"),
    ("u2", 0): fix("c", "08:00:00"), ("u2", 1): fix("c", "08:00:00"),
    ("u2", 2): fix("d", "08:06:00"),  # d's 08:06 is later than c's 08:00
    ("u3", 1): fix("f", "08:05:00"),  # tie at 08:05: f > e
    ("u4", 1): fix("g", "08:02:00"),  # 07:50 is outside the window, 08:31 too
    ("u5", 0): fix("h", "08:00:00"), ("u5", 1): fix("h", "08:00:00"),
    ("u5", 2): fix("h", "08:10:00"),
}

def cell(lon: float, lat: float, srid: int = SRID) -> tuple[int, int]:
    """The grid cell of a fix, projected independently of PostGIS (pyproj)."""
    x, y = Transformer.from_crs(4326, srid, always_xy=True).transform(lon, lat)
    return math.floor(x / CELL), math.floor(y / CELL)


def write_points(tmp_path: Path, fixes: list[tuple[str, str, str, float, float]]) -> Path:
    path = tmp_path / "points.csv"
    lines = ["traj_id,user_id,t,lon,lat"] + [
        f"{traj},{user},2020-01-01T{clock}Z,{lon},{lat}" for traj, user, clock, lon, lat in fixes]
    path.write_text("\n".join(lines) + "\n")
    return path


def window(dataset_id: int, start: datetime = START, end: datetime = END,
           srid: int = SRID) -> dict[str, Any]:
    return {"dataset_id": dataset_id, "window_start": start.isoformat(),
            "window_end": end.isoformat(), "srid": srid, **area_of_use(srid)}


@pytest.fixture
def hand_made(db_url: str, tmp_path: Path) -> int:
    """FIXES loaded as dataset 'hand'; returns its id."""
    return load_dataset(write_points(tmp_path, FIXES), "hand", url=db_url).dataset_id


@pytest.fixture
def work(conn: psycopg.Connection) -> str:
    conn.execute(f"CREATE SCHEMA {WORK}")
    return WORK


def positions(conn: psycopg.Connection) -> dict[tuple[str, int], tuple[int, int]]:
    rows = conn.execute(f"SELECT o.user_id, c.t_index, c.cx, c.cy FROM {WORK}.mob_cells AS c "
                        f"JOIN {WORK}.mob_objects AS o USING (object_index)").fetchall()
    return {(user, t_index): (cx, cy) for user, t_index, cx, cy in rows}


def test_time_points_start_at_the_window_and_stop_before_its_end(
        conn: psycopg.Connection, hand_made: int, work: str) -> None:
    for end, expected in [(END, 6), (END - timedelta(minutes=3), 6),
                          (END - timedelta(minutes=5), 5)]:
        counts = prepare_positions(conn, work, window(hand_made, end=end), CELL, INTERVAL)
        rows = conn.execute(f"SELECT t_index, t FROM {WORK}.mob_time_points "
                            "ORDER BY t_index").fetchall()
        assert counts["time_points"] == expected
        assert rows == [(i, START + timedelta(seconds=INTERVAL * i)) for i in range(expected)]


def test_positions_are_carried_forward_within_running_trajectories(
        conn: psycopg.Connection, hand_made: int, work: str) -> None:
    counts = prepare_positions(conn, work, window(hand_made), CELL, INTERVAL)
    expected = {key: cell(*where) for key, where in EXPECTED.items()}
    assert positions(conn) == expected
    assert counts == {"time_points": 6, "objects": 5, "cells": len(EXPECTED)}


def test_objects_are_the_persons_with_a_position_numbered_from_zero(
        conn: psycopg.Connection, hand_made: int, work: str) -> None:
    prepare_positions(conn, work, window(hand_made), CELL, INTERVAL)
    objects = conn.execute(f"SELECT object_index, user_id FROM {WORK}.mob_objects "
                           "ORDER BY 1").fetchall()
    # u6 (before the window) and u7 (no fix carried to a time point) are no objects.
    assert sorted(user for _, user in objects) == ["u1", "u2", "u3", "u4", "u5"]
    assert [index for index, _ in objects] == list(range(5))
    # Re-running gives the same tables (the numbering depends on the window only).
    prepare_positions(conn, work, window(hand_made), CELL, INTERVAL)
    assert conn.execute(f"SELECT object_index, user_id FROM {WORK}.mob_objects "
                        "ORDER BY 1").fetchall() == objects


def write_qids(tmp_path: Path, rows: list[tuple[str, str]]) -> Path:
    path = tmp_path / "qids.csv"
    path.write_text("user_id,t\n" + "".join(f"{user},{t}\n" for user, t in rows))
    return path


def test_qids_fall_on_the_time_point_of_their_interval_and_absent_ones_are_dropped(
        conn: psycopg.Connection, hand_made: int, work: str, db_url: str,
        tmp_path: Path) -> None:
    load_qids(write_qids(tmp_path, [
        ("u1", "2020-01-01T08:05:30Z"), ("u1", "2020-01-01T08:05:59Z"),  # both t1: merged
        ("u1", "2020-01-01T08:14:59.999999Z"),  # t2 (floored, not rounded)
        ("u1", "2020-01-01T08:15:00Z"),  # t3: u1 is between trajectories: dropped
        ("u4", "2020-01-01T08:05:00"),  # t1 (naive = UTC)
        ("u3", "2020-01-01T08:29:59Z"),  # t5: u3 has no position then: dropped
        ("u6", "2020-01-01T07:00:00Z"),  # before the window: not read
        ("u4", "2020-01-01T08:31:00Z"),  # at or after the window's end: not read
    ]), "hand", url=db_url)
    counts = prepare_mob_tables(conn, work, window(hand_made), CELL, INTERVAL)
    qids = conn.execute(f"SELECT o.user_id, q.t_index FROM {WORK}.mob_qids AS q JOIN "
                        f"{WORK}.mob_objects AS o USING (object_index) ORDER BY 1, 2").fetchall()
    assert qids == [("u1", 1), ("u1", 2), ("u4", 1)]
    stats = {key: counts[key] for key in ("qids_in_window", "qid_time_points", "qids_merged",
                                          "qids_dropped", "qids", "objects_with_qid")}
    assert stats == {"qids_in_window": 6, "qid_time_points": 5, "qids_merged": 1,
                     "qids_dropped": 2, "qids": 3, "objects_with_qid": 2}
    (row,) = conn.execute(f"SELECT in_window, time_points, merged, dropped, kept, "
                          f"objects_with_qid FROM {WORK}.mob_qid_stats").fetchall()
    assert row == (6, 5, 1, 2, 3, 2)


def test_a_window_without_qids_has_an_empty_qid_table(
        conn: psycopg.Connection, hand_made: int, work: str) -> None:
    counts = prepare_mob_tables(conn, work, window(hand_made), CELL, INTERVAL)
    assert counts["qids"] == counts["qids_in_window"] == counts["qids_dropped"] == 0
    assert conn.execute(f"SELECT count(*) FROM {WORK}.mob_qids").fetchone() == (0,)


def test_cell_size_and_interval_must_be_positive(
        conn: psycopg.Connection, hand_made: int, work: str) -> None:
    with pytest.raises(InputError, match="must be positive"):
        prepare_mob_tables(conn, work, window(hand_made), 0.0, INTERVAL)
    with pytest.raises(InputError, match="must be positive"):
        prepare_mob_tables(conn, work, window(hand_made), CELL, 0)


# ----------------------------------------------------------------- the city against an oracle


def oracle_positions(points: pd.DataFrame, start: datetime, n_points: int, interval: int,
                     srid: int) -> dict[tuple[str, int], tuple[int, int]]:
    """The carried-forward positions by brute force: every trajectory at every time point."""
    grid = pd.DataFrame({"t_index": np.arange(n_points),
                         "at": pd.Timestamp(start) + pd.to_timedelta(
                             np.arange(n_points) * interval, unit="s")})
    found = []
    for _, fixes in points.sort_values("t").groupby("traj_id"):
        running = grid[(grid["at"] >= fixes["t"].iloc[0]) & (grid["at"] <= fixes["t"].iloc[-1])]
        found.append(pd.merge_asof(running, fixes, left_on="at", right_on="t"))
    every = pd.concat(found)
    every["traj_bytes"] = every["traj_id"].map(str.encode)  # ties: larger traj_id, byte order
    last = every.sort_values(["t", "traj_bytes"]).groupby(["user_id", "t_index"]).tail(1)
    transform = Transformer.from_crs(4326, srid, always_xy=True).transform
    x, y = transform(last["lon"].to_numpy(), last["lat"].to_numpy())
    cells = zip(np.floor(x / CELL).astype(int).tolist(), np.floor(y / CELL).astype(int).tolist(),
                strict=True)
    return dict(zip(zip(last["user_id"], last["t_index"].astype(int).tolist(), strict=True),
                    cells, strict=True))


def test_the_city_matches_a_brute_force_oracle(
        conn: psycopg.Connection, loaded_city: str, work: str) -> None:
    dataset_id, t_min, lon, lat = conn.execute(
        "SELECT dataset_id, t_min, lon_median, lat_median FROM raw.datasets WHERE name = %s",
        (loaded_city,)).fetchone()
    srid = utm_srid(lon, lat)
    start = t_min.astimezone(UTC).replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
    end = start + timedelta(hours=3)
    interval = 120
    bounds = area_of_use(srid)
    points = pd.DataFrame(conn.execute(
        "SELECT traj_id, user_id, t, lon, lat FROM raw.points WHERE dataset_id = %s "
        "AND t >= %s AND t < %s AND lon BETWEEN %s AND %s AND lat BETWEEN %s AND %s",
        (dataset_id, start, end, bounds["lon_min"], bounds["lon_max"], bounds["lat_min"],
         bounds["lat_max"])).fetchall(), columns=["traj_id", "user_id", "t", "lon", "lat"])
    points["t"] = pd.to_datetime(points["t"], utc=True)
    counts = prepare_positions(conn, work, window(dataset_id, start, end, srid), CELL, interval)
    expected = oracle_positions(points, start, counts["time_points"], interval, srid)
    assert len(expected) > 1000  # a real test: many persons and time points
    assert positions(conn) == expected


# --------------------------------------------------------------------------- position rule

# Scope "person": a fix lasts until the person's next fix, of any trajectory, the last one
# to the window's end; u7's 08:19 fix now reaches 08:20 and 08:25.
EXPECTED_PERSON_SCOPE = {
    **EXPECTED,
    ("u1", 3): fix("a", "08:12:00"),  # across the gap between a and b
    ("u2", 3): fix("c", "08:14:00"), ("u2", 4): fix("c", "08:14:00"),
    ("u2", 5): fix("c", "08:14:00"),
    **{("u3", i): fix("e", "08:09:00") for i in (2, 3, 4, 5)},
    **{("u4", i): fix("g", "08:07:00") for i in (2, 3, 4, 5)},
    **{("u5", i): fix("h", "08:10:00") for i in (3, 4, 5)},
    ("u7", 4): fix("j", "08:19:00"), ("u7", 5): fix("j", "08:19:00"),
}
# A lookback of 300 s: u1's 08:04 fix is too old at 08:10.
EXPECTED_LOOKBACK_300 = {key: where for key, where in EXPECTED.items() if key != ("u1", 2)}
RULES = [({"position_scope": "trajectory", "position_lookback": None}, EXPECTED),
         ({"position_scope": "person", "position_lookback": None}, EXPECTED_PERSON_SCOPE),
         ({"position_scope": "trajectory", "position_lookback": 300}, EXPECTED_LOOKBACK_300)]


@pytest.mark.parametrize(("params", "expected"), RULES)
def test_the_position_rule_is_a_parameter(conn: psycopg.Connection, hand_made: int, work: str,
                                          params: dict[str, Any],
                                          expected: dict[tuple[str, int], tuple[float, float]]
                                          ) -> None:
    from anonymizers.families.mob.declaration import MobParams
    from anonymizers.families.mob.preparation import PositionRule

    prepare_positions(conn, work, window(hand_made), CELL, INTERVAL,
                      PositionRule.of(MobParams.of(params)))
    assert positions(conn) == {key: cell(*where) for key, where in expected.items()}


@pytest.mark.parametrize(("params", "expected"), RULES)
def test_the_verifier_and_an_outside_recount_follow_the_same_rule(
        conn: psycopg.Connection, hand_made: int, params: dict[str, Any],
        expected: dict[tuple[str, int], tuple[float, float]]) -> None:
    """The verifier's SQL and the brute-force attacker's Python derive the anonymizer's
    positions from the rule's parameters alone (what a manifest publishes)."""
    from mob_matching_attack import _person_cells

    from anonymizers.db.sqlfiles import copy_out

    cells = {key: cell(*where) for key, where in expected.items()}
    grid = {**window(hand_made), "cell_size": CELL, "interval_s": INTERVAL,
            "position_scope": params["position_scope"],
            "position_lookback_s": params["position_lookback"]}
    rows = csv.DictReader(io.StringIO(copy_out(conn, "mob/verify/person_cells.sql",
                                               grid).decode()))
    assert {(r["user_id"], int(r["i"])): (int(r["cx"]), int(r["cy"])) for r in rows} == cells
    manifest = {"dataset_id": hand_made, "start": START, "end": END, "srid": SRID,
                "cell": CELL, "interval": float(INTERVAL), "scope": params["position_scope"],
                "lookback": params["position_lookback"]}
    recount = _person_cells(conn, manifest)
    assert {(u, i): c for u, by_t in recount.items() for i, c in by_t.items()} == cells
