"""Tests for the deterministic synthetic city generator (no database needed)."""

from __future__ import annotations

import collections
import dataclasses
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonymizers.errors import InputError
from anonymizers.synthetic import CityConfig, SyntheticCity, generate_city, write_city

FLORENCE = CityConfig()
NOISE_SIGMAS = 6.0  # P(|N(0,1)| > 6) ~ 2e-9 per coordinate: safe margin for a radius check
CELL_M = 250.0


def make_config(**overrides: object) -> CityConfig:
    """A small, fast city: the defaults of CityConfig with 5000 points unless overridden."""
    return dataclasses.replace(CityConfig(target_points=5_000), **overrides)


def to_metres(points: pd.DataFrame, cfg: CityConfig) -> tuple[np.ndarray, np.ndarray]:
    """Inverse of the module's equirectangular projection (longitude wrap included)."""
    dlon = (points["lon"].to_numpy() - cfg.origin_lon + 180.0) % 360.0 - 180.0
    x = dlon * 111_320.0 * math.cos(math.radians(cfg.origin_lat))
    y = (points["lat"].to_numpy() - cfg.origin_lat) * 110_540.0
    return x, y


def nanoseconds(points: pd.DataFrame) -> np.ndarray:
    return points["t"].dt.tz_convert(None).to_numpy().astype(np.int64)


def read_points_csv(path: Path) -> pd.DataFrame:
    frame = pd.read_csv(path, dtype={"traj_id": "str", "user_id": "str"})
    frame["t"] = pd.to_datetime(frame["t"], utc=True, format="ISO8601").astype(
        "datetime64[ns, UTC]"
    )
    return frame


def cell_sequences(city: SyntheticCity, cfg: CityConfig) -> dict[str, tuple[str, list]]:
    """traj_id -> (user_id, 250 m cells visited, consecutive repeats collapsed).

    Cells are centred on street intersections so GPS noise around a street does not flip
    a fix between the two cells on either side of it.
    """
    x, y = to_metres(city.points, cfg)
    cx = np.floor((x + CELL_M / 2) / CELL_M).astype(int)
    cy = np.floor((y + CELL_M / 2) / CELL_M).astype(int)
    groups = city.points.groupby(["traj_id", "user_id"], sort=False).indices
    sequences = {}
    for (traj, user), rows in groups.items():
        cells = list(zip(cx[rows], cy[rows], strict=True))
        collapsed = [c for i, c in enumerate(cells) if i == 0 or c != cells[i - 1]]
        sequences[traj] = (user, collapsed)
    return sequences


@pytest.fixture(scope="module")
def city_50k() -> SyntheticCity:
    return generate_city(make_config(target_points=50_000))


@pytest.fixture(scope="module")
def city_200k() -> SyntheticCity:
    return generate_city(make_config(target_points=200_000))


# --------------------------------------------------------------------------- determinism


def test_same_seed_gives_identical_city() -> None:
    first, second = generate_city(make_config(seed=7)), generate_city(make_config(seed=7))
    pd.testing.assert_frame_equal(first.points, second.points)
    pd.testing.assert_frame_equal(first.persons, second.persons)


def test_different_seed_gives_different_city() -> None:
    first, second = generate_city(make_config(seed=1)), generate_city(make_config(seed=2))
    assert not first.points[["lon", "lat"]].equals(second.points[["lon", "lat"]])
    assert not first.persons.equals(second.persons)


def test_smaller_city_is_a_prefix_of_a_larger_one() -> None:
    small = generate_city(make_config(target_points=2_000)).points
    large = generate_city(make_config(target_points=6_000)).points
    # the last trajectory of the small city may have been cut short at the budget
    complete = small[small["traj_id"] != small["traj_id"].iloc[-1]]
    pd.testing.assert_frame_equal(complete, large.iloc[: len(complete)])


# --------------------------------------------------------------------------- size and shape


@pytest.mark.parametrize("target", [100, 101, 500, 20_000, 200_000])
def test_point_count_meets_target(target: int) -> None:
    n_points = len(generate_city(make_config(target_points=target)).points)
    assert abs(n_points - target) <= 0.1 * target
    assert target - 1 <= n_points <= target  # the generator is in fact exact up to one fix


@pytest.mark.parametrize("days", [1, 3, 40])
def test_point_count_meets_target_with_several_days(days: int) -> None:
    assert len(generate_city(make_config(target_points=3_000, days=days)).points) >= 2_999


def test_columns_and_dtypes(city_50k: SyntheticCity) -> None:
    points, persons = city_50k.points, city_50k.persons
    assert list(points.columns) == ["traj_id", "user_id", "t", "lon", "lat"]
    assert list(persons.columns) == ["user_id", "age", "sex", "education", "income"]
    assert points["t"].dtype == "datetime64[ns, UTC]"
    assert points["lon"].dtype == np.float64 and points["lat"].dtype == np.float64
    for column in (points["traj_id"], points["user_id"], persons["user_id"], persons["sex"]):
        assert pd.api.types.is_string_dtype(column)
    assert pd.api.types.is_integer_dtype(persons["age"])
    assert pd.api.types.is_integer_dtype(persons["income"])
    assert not points.isna().any().any() and not persons.isna().any().any()


def test_identifiers_have_the_documented_format(city_50k: SyntheticCity) -> None:
    points = city_50k.points
    assert points["user_id"].str.fullmatch(r"p\d{6}").all()
    assert points["traj_id"].str.fullmatch(r"p\d{6}_\d_[012]").all()
    assert (points["traj_id"].str.split("_").str[0] == points["user_id"]).all()


def test_persons_are_exactly_the_users_with_trajectories(city_50k: SyntheticCity) -> None:
    persons = city_50k.persons["user_id"]
    assert persons.is_unique
    assert set(persons) == set(city_50k.points["user_id"])


@pytest.mark.parametrize("days", [1, 12])
def test_sorted_by_traj_id_and_time_strictly_increasing(days: int) -> None:
    points = generate_city(make_config(target_points=20_000, days=days)).points
    assert points["traj_id"].is_monotonic_increasing  # lexicographic, as the days are padded
    same_traj = points["traj_id"].to_numpy()[1:] == points["traj_id"].to_numpy()[:-1]
    steps = np.diff(nanoseconds(points))
    assert (steps[same_traj] > 0).all()
    assert (points.groupby("traj_id").size() >= 2).all()


def test_trips_of_a_person_do_not_overlap() -> None:
    points = generate_city(make_config(target_points=20_000, days=3)).points
    same_user = points["user_id"].to_numpy()[1:] == points["user_id"].to_numpy()[:-1]
    steps = np.diff(nanoseconds(points))
    assert (steps[same_user] > 0).all()


def test_days_are_consecutive_and_start_on_the_given_date() -> None:
    points = generate_city(make_config(target_points=20_000, days=3, start="2026-06-01")).points
    dates = set(points["t"].dt.strftime("%Y-%m-%d"))
    assert {"2026-06-01", "2026-06-02", "2026-06-03"} <= dates
    assert min(dates) == "2026-06-01" and max(dates) <= "2026-06-04"  # late trips may pass midnight


# --------------------------------------------------------------------------- geography


@pytest.mark.parametrize(
    "overrides",
    [
        {},
        {"radius_m": 1_000.0, "block_m": 100.0, "ring_radius_m": 1_000.0},
        {"radius_m": 3_000.0, "block_m": 137.5, "arterial_every": 1, "ring_radius_m": 400.0},
        {"radius_m": 20_000.0, "block_m": 400.0, "arterial_every": 7, "ring_radius_m": 12_000.0},
    ],
)
def test_points_lie_inside_the_city(overrides: dict[str, float]) -> None:
    cfg = make_config(target_points=20_000, **overrides)
    x, y = to_metres(generate_city(cfg).points, cfg)
    assert np.hypot(x, y).max() <= cfg.radius_m + NOISE_SIGMAS * cfg.gps_noise_m + 1.0


def test_noise_free_fixes_lie_on_streets_or_the_ring() -> None:
    cfg = make_config(target_points=20_000, gps_noise_m=0.0)
    x, y = to_metres(generate_city(cfg).points, cfg)
    on_x = np.abs(x / cfg.block_m - np.rint(x / cfg.block_m)) * cfg.block_m < 0.05
    on_y = np.abs(y / cfg.block_m - np.rint(y / cfg.block_m)) * cfg.block_m < 0.05
    on_ring = np.abs(np.hypot(x, y) - cfg.ring_radius_m) < 0.05
    assert (on_x | on_y | on_ring).all()
    assert on_ring.any()  # long trips do use the ring


def test_centre_is_much_denser_than_periphery(city_200k: SyntheticCity) -> None:
    x, y = to_metres(city_200k.points, FLORENCE)
    r, radius = np.hypot(x, y), FLORENCE.radius_m
    centre = (r < radius / 3).sum() / (math.pi * (radius / 3) ** 2)
    periphery = (r > 2 * radius / 3).sum() / (math.pi * (radius**2 - (2 * radius / 3) ** 2))
    assert periphery > 0  # sparse, not empty
    assert centre > 5 * periphery


def test_centre_routes_are_shared_and_some_peripheral_routes_are_unique(
    city_50k: SyntheticCity,
) -> None:
    sequences = cell_sequences(city_50k, FLORENCE)
    owners: dict[tuple, set[str]] = collections.defaultdict(set)
    grams_of: dict[str, set[tuple]] = {}
    for traj, (user, cells) in sequences.items():
        grams_of[traj] = {tuple(cells[i : i + 3]) for i in range(len(cells) - 2)}
        for gram in grams_of[traj]:
            owners[gram].add(user)
    assert max(len(users) for users in owners.values()) >= 5
    unique = [g for g in grams_of.values() if g and all(len(owners[x]) == 1 for x in g)]
    assert unique  # some persons drive a route nobody else drives


@pytest.mark.parametrize(
    ("lon", "lat"),
    [(-58.3816, -34.6037), (151.2093, -33.8688), (-122.4194, 37.7749), (0.0, 0.0)],
)
def test_any_hemisphere_works(lon: float, lat: float) -> None:
    cfg = make_config(origin_lon=lon, origin_lat=lat)
    points = generate_city(cfg).points
    x, y = to_metres(points, cfg)
    assert np.hypot(x, y).max() <= cfg.radius_m + NOISE_SIGMAS * cfg.gps_noise_m + 1.0
    assert abs(np.median(x)) < 1_000 and abs(np.median(y)) < 1_000
    # the morning rush is in local solar time: 07:45 local is about 07:45 - lon/15 h UTC
    first = points.groupby("traj_id")["t"].first()
    morning = first[first.index.str.endswith("_0")]
    local_hour = (morning.dt.hour + morning.dt.minute / 60 + round(lon / 15)) % 24
    assert 6.5 < local_hour.median() < 9.0


def test_antimeridian_longitudes_are_wrapped() -> None:
    cfg = make_config(origin_lon=179.99, origin_lat=-16.5)
    lon = generate_city(cfg).points["lon"]
    assert lon.between(-180.0, 180.0).all()
    assert (lon < 0).any() and (lon > 0).any()


# --------------------------------------------------------------------------- demographics


def test_demographic_marginals_are_plausible(city_200k: SyntheticCity) -> None:
    persons = city_200k.persons
    assert len(persons) > 3_000
    assert persons["age"].between(18, 85).all()
    assert 38 <= persons["age"].mean() <= 52
    assert 0.45 <= (persons["sex"] == "F").mean() <= 0.57
    assert set(persons["sex"]) == {"F", "M"}
    shares = persons["education"].value_counts(normalize=True)
    assert set(shares.index) == {"primary", "secondary", "bachelor", "master", "doctorate"}
    assert shares["secondary"] == shares.max()
    assert 0.01 <= shares["doctorate"] <= 0.08
    assert 15_000 <= persons["income"].median() <= 40_000
    assert (persons["income"] > 0).all()


def test_income_rises_with_education_and_degrees_need_age(city_200k: SyntheticCity) -> None:
    persons = city_200k.persons
    median = persons.groupby("education")["income"].median()
    assert median["primary"] < median["secondary"] < median["bachelor"] < median["master"]
    assert median["master"] < median["doctorate"]
    assert persons.loc[persons["education"] == "doctorate", "age"].min() >= 27


# --------------------------------------------------------------------------- writing


@pytest.mark.parametrize("chunk_persons", [1, 1_500, 20_000])
def test_write_city_matches_generate_city(tmp_path: Path, chunk_persons: int) -> None:
    cfg = make_config(target_points=60_000, seed=3)
    points_csv, persons_csv = tmp_path / "points.csv", tmp_path / "persons.csv"
    n_points, n_persons = write_city(cfg, points_csv, persons_csv, chunk_persons=chunk_persons)
    city = generate_city(cfg)
    assert (n_points, n_persons) == (len(city.points), len(city.persons))
    pd.testing.assert_frame_equal(read_points_csv(points_csv), city.points, check_dtype=False)
    persons = pd.read_csv(persons_csv, dtype={"user_id": "str", "sex": "str", "education": "str"})
    pd.testing.assert_frame_equal(persons, city.persons, check_dtype=False)
    assert not list(tmp_path.glob("*.partial"))


def test_csv_headers_and_formats_are_exact(tmp_path: Path) -> None:
    points_csv, persons_csv = tmp_path / "points.csv", tmp_path / "persons.csv"
    write_city(make_config(target_points=500), points_csv, persons_csv)
    lines = points_csv.read_text().splitlines()
    assert lines[0] == "traj_id,user_id,t,lon,lat"
    assert len(lines) == 1 + 500
    traj, user, t, lon, lat = lines[1].split(",")
    assert traj.startswith(user + "_")
    assert pd.Timestamp(t).tzname() == "UTC" and len(t) == 20 and t.endswith("Z")
    assert len(lon.split(".")[1]) == 7 and len(lat.split(".")[1]) == 7
    assert persons_csv.read_text().splitlines()[0] == "user_id,age,sex,education,income"


def test_negative_coordinates_keep_seven_decimals(tmp_path: Path) -> None:
    points_csv, persons_csv = tmp_path / "points.csv", tmp_path / "persons.csv"
    write_city(make_config(target_points=500, origin_lon=-0.01), points_csv, persons_csv)
    rows = [line.split(",") for line in points_csv.read_text().splitlines()[1:]]
    assert any(row[3].startswith("-0.") for row in rows)
    assert all(len(row[3].split(".")[1]) == 7 for row in rows)


def test_write_city_rejects_bad_arguments(tmp_path: Path) -> None:
    cfg = make_config(target_points=100)
    with pytest.raises(InputError, match="chunk_persons"):
        write_city(cfg, tmp_path / "p.csv", tmp_path / "q.csv", chunk_persons=0)
    with pytest.raises(InputError, match="does not exist"):
        write_city(cfg, tmp_path / "missing" / "p.csv", tmp_path / "q.csv")


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("target_points", 99),
        ("target_points", 100_000_001),
        ("target_points", 1000.0),
        ("seed", -1),
        ("seed", True),
        ("origin_lat", 80.0),
        ("origin_lat", -85.0),
        ("origin_lon", 181.0),
        ("origin_lon", math.nan),
        ("radius_m", 0.0),
        ("radius_m", -5.0),
        ("radius_m", 100_000.0),
        ("block_m", 0.0),
        ("block_m", 5_000.0),
        ("arterial_every", 0),
        ("ring_radius_m", 0.0),
        ("ring_radius_m", 9_000.0),
        ("sample_interval_s", 0.5),
        ("gps_noise_m", -1.0),
        ("gps_noise_m", math.inf),
        ("start", "not a date"),
        ("start", 20260302),
        ("days", 0),
        ("days", 2.0),
    ],
)
def test_bad_config_raises_input_error(field: str, value: object) -> None:
    with pytest.raises(InputError, match=field):
        make_config(**{field: value})


# --------------------------------------------------------------------------- properties


@settings(
    max_examples=20, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    seed=st.integers(0, 2**32),
    target=st.integers(100, 3_000),
    radius=st.floats(300.0, 20_000.0),
    block_fraction=st.floats(0.01, 0.5),
    ring_fraction=st.floats(0.01, 1.0),
    arterial_every=st.integers(1, 9),
    interval=st.floats(1.0, 120.0),
    days=st.integers(1, 4),
)
def test_invariants_hold_for_random_configs(
    seed: int,
    target: int,
    radius: float,
    block_fraction: float,
    ring_fraction: float,
    arterial_every: int,
    interval: float,
    days: int,
) -> None:
    cfg = make_config(
        seed=seed,
        target_points=target,
        radius_m=radius,
        block_m=radius * block_fraction,
        ring_radius_m=radius * ring_fraction,
        arterial_every=arterial_every,
        sample_interval_s=interval,
        days=days,
    )
    points = generate_city(cfg).points
    assert target - 1 <= len(points) <= target
    x, y = to_metres(points, cfg)
    assert np.hypot(x, y).max() <= cfg.radius_m + NOISE_SIGMAS * cfg.gps_noise_m + 1.0
    same_traj = points["traj_id"].to_numpy()[1:] == points["traj_id"].to_numpy()[:-1]
    assert (np.diff(nanoseconds(points))[same_traj] > 0).all()
    assert points["traj_id"].is_monotonic_increasing
