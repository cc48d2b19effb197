"""Tests for the characteristic point extraction (Andrienko & Andrienko 2011).

Hand-made paths check each rule (start/end, representative points, turns, stops); random
walks check the spacing guarantee and the per-trajectory independence.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonymizers.errors import InputError
from anonymizers.families.generalization.characteristic_points import (
    CharacteristicPointParams,
    characteristic_points,
)

DEFAULT = CharacteristicPointParams()


def extracted(
    x: np.ndarray,
    y: np.ndarray,
    t: np.ndarray,
    params: CharacteristicPointParams = DEFAULT,
    traj: np.ndarray | None = None,
) -> list[int]:
    """Indices of the characteristic points of the given path(s)."""
    codes = np.zeros(len(x), dtype=np.int64) if traj is None else traj
    mask = characteristic_points(codes, np.asarray(t, float), np.asarray(x), np.asarray(y), params)
    assert mask.dtype == bool and mask.shape == (len(x),)
    return np.flatnonzero(mask).tolist()


def east_then_north(leg: float, step: float) -> tuple[np.ndarray, np.ndarray]:
    """An L: ``leg`` metres east, then ``leg`` metres north, a fix every ``step`` metres."""
    along = np.arange(0.0, leg, step)
    up = np.arange(0.0, leg + step / 2, step)
    x = np.concatenate((along, np.full(up.size, leg)))
    y = np.concatenate((np.zeros(along.size), up))
    return x, y


def path_with_pause(pause_s: float, jitter_m: float, seed: int = 0) -> tuple[np.ndarray, ...]:
    """1 km east at 10 m/s, a pause at x = 1000 (a fix every 10 s, jittered), 1 km east."""
    rng = np.random.default_rng(seed)
    before = np.arange(0.0, 1000.0, 50.0)
    n_pause = int(pause_s // 10) + 1
    after = np.arange(1050.0, 2000.1, 50.0)
    x = np.concatenate((before, 1000.0 + rng.uniform(-jitter_m, jitter_m, n_pause), after))
    y = np.concatenate(
        (np.zeros(before.size), rng.uniform(-jitter_m, jitter_m, n_pause), np.zeros(after.size))
    )
    t_pause = before.size * 5.0 + np.arange(n_pause) * 10.0
    t_after = t_pause[-1] + 5.0 * np.arange(1, after.size + 1)
    t = np.concatenate((np.arange(before.size) * 5.0, t_pause, t_after))
    return x, y, t


# --------------------------------------------------------------------------- rules


def test_straight_line_gives_start_end_and_representative_points() -> None:
    x = np.arange(0.0, 10_000.1, 50.0)
    assert extracted(x, np.zeros_like(x), np.arange(x.size) * 5.0) == [0, 70, 140, 200]


def test_representative_points_respect_max_distance() -> None:
    x = np.arange(0.0, 10_000.1, 30.0)
    params = CharacteristicPointParams(max_distance_m=1000.0)
    chosen = extracted(x, np.zeros_like(x), np.arange(x.size) * 3.0, params)
    gaps = np.diff(x[chosen])
    assert chosen[0] == 0 and chosen[-1] == x.size - 1
    assert gaps.max() <= 1000.0
    assert gaps[:-1].min() > 1000.0 - 30.0  # each one is the last point within the limit


def test_long_steps_are_all_extracted() -> None:
    x = np.arange(0.0, 50_000.1, 5000.0)  # every step longer than max_distance_m
    assert extracted(x, np.zeros_like(x), np.arange(x.size) * 300.0) == list(range(x.size))


@pytest.mark.parametrize("step", [50.0, 150.0])
def test_l_shaped_path_has_its_corner_as_turn(step: float) -> None:
    x, y = east_then_north(2000.0, step)
    corner = int(np.flatnonzero((x == 2000.0) & (y == 0.0))[0])
    assert extracted(x, y, np.arange(x.size) * 5.0) == [0, corner, x.size - 1]


def test_gentle_bend_is_not_a_turn_but_a_right_angle_over_a_curve_is() -> None:
    # A quarter circle of radius 3 km in fixes every 50 m: the chord from the start
    # turns away from the heading by half the arc, reaching 45 degrees at the end only.
    angle = np.linspace(0.0, math.pi / 4, 60)  # 1/8 circle: at most 22.5 degrees
    x, y = 3000.0 * np.sin(angle), 3000.0 * (1 - np.cos(angle))
    params = CharacteristicPointParams(max_distance_m=1e6)
    assert extracted(x, y, np.arange(x.size) * 5.0, params) == [0, x.size - 1]
    angle = np.linspace(0.0, math.pi, 120)  # a U-turn along a half circle
    x, y = 1500.0 * np.sin(angle), 1500.0 * (1 - np.cos(angle))
    assert len(extracted(x, y, np.arange(x.size) * 5.0, params)) > 2


def test_jitter_on_a_straight_path_creates_no_turn() -> None:
    rng = np.random.default_rng(1)
    x = np.arange(0.0, 5000.1, 50.0) + rng.uniform(-15, 15, 101)
    y = rng.uniform(-15, 15, 101)  # |lateral error| <= 15 m << stop_radius_m = 100 m
    params = CharacteristicPointParams(max_distance_m=1e6)
    assert extracted(x, y, np.arange(x.size) * 5.0, params) == [0, x.size - 1]


def test_jitter_while_standing_briefly_creates_no_turn() -> None:
    x, y, t = path_with_pause(pause_s=120.0, jitter_m=15.0)
    params = CharacteristicPointParams(max_distance_m=1e6)
    assert extracted(x, y, t, params) == [0, x.size - 1]


def test_ten_minute_stop_is_extracted_once() -> None:
    x, y, t = path_with_pause(pause_s=600.0, jitter_m=10.0)
    chosen = extracted(x, y, t, CharacteristicPointParams(max_distance_m=1e6))
    assert chosen[0] == 0 and chosen[-1] == x.size - 1
    (stop,) = chosen[1:-1]
    assert math.hypot(x[stop] - 1000.0, y[stop]) < DEFAULT.stop_radius_m


def test_two_minute_stop_is_not_extracted() -> None:
    x, y, t = path_with_pause(pause_s=120.0, jitter_m=10.0)
    assert extracted(x, y, t, CharacteristicPointParams(max_distance_m=1e6)) == [0, x.size - 1]


def test_stops_at_the_start_and_the_end() -> None:
    # Parked 10 min, 1 km east, parked 10 min: the start stands for the first stop; the
    # last stop keeps its first point (x = 950, the first fix within r of the rest).
    x = np.concatenate((np.zeros(60), np.arange(50.0, 1000.0, 50.0), np.full(60, 1000.0)))
    t = np.arange(x.size) * 10.0
    params = CharacteristicPointParams(max_distance_m=1e6)
    chosen = extracted(x, np.zeros_like(x), t, params)
    assert chosen == [0, int(np.flatnonzero(x == 950.0)[0]), x.size - 1]


def test_short_trajectories_keep_their_points() -> None:
    assert extracted(np.array([5.0]), np.array([1.0]), np.array([0.0])) == [0]
    assert extracted(np.array([0.0, 1.0]), np.zeros(2), np.array([0.0, 1.0])) == [0, 1]
    assert extracted(np.array([]), np.array([]), np.array([])) == []


def test_trajectories_are_independent() -> None:
    line = np.arange(0.0, 10_000.1, 50.0)
    l_x, l_y = east_then_north(2000.0, 50.0)
    x = np.concatenate((line, l_x + 10_000.0, line[::-1]))
    y = np.concatenate((np.zeros(line.size), l_y, np.zeros(line.size)))
    sizes = [line.size, l_x.size, line.size]
    traj = np.repeat(np.array([7, 3, 9]), sizes)  # contiguous codes need not be sorted
    t = np.concatenate([np.arange(n) * 5.0 for n in sizes])  # each trip starts at t = 0
    together = extracted(x, y, t, traj=traj)
    alone, offset = [], 0
    for n in sizes:
        part = slice(offset, offset + n)
        alone += [offset + i for i in extracted(x[part], y[part], t[part])]
        offset += n
    assert together == alone
    for end in np.cumsum(sizes):
        assert end - 1 in together  # the last point of each trajectory
        assert end in together or end == x.size  # the first point of the next one


# --------------------------------------------------------------------------- properties


@st.composite
def random_trajectories(draw: st.DrawFn) -> tuple[np.ndarray, ...]:
    """Random walks with pauses, several trajectories, sorted by (traj, t)."""
    n_traj = draw(st.integers(1, 4))
    codes, ts, xs, ys = [], [], [], []
    for code in range(n_traj):
        n = draw(st.integers(1, 60))
        steps = draw(st.lists(st.floats(0.0, 800.0), min_size=n, max_size=n))
        heading = draw(st.lists(st.floats(-math.pi, math.pi), min_size=n, max_size=n))
        paused = draw(st.lists(st.booleans(), min_size=n, max_size=n))
        dt = draw(st.lists(st.sampled_from([0.0, 1.0, 10.0, 60.0, 400.0]), min_size=n, max_size=n))
        length = np.where(paused, np.minimum(steps, 30.0), steps)
        length[0] = 0.0
        xs.append(np.cumsum(length * np.cos(heading)))
        ys.append(np.cumsum(length * np.sin(heading)))
        ts.append(1.7e9 + np.cumsum(dt))
        codes.append(np.full(n, code))
    return tuple(np.concatenate(part) for part in (codes, ts, xs, ys))


@st.composite
def valid_params(draw: st.DrawFn) -> CharacteristicPointParams:
    stop_radius = draw(st.floats(1.0, 300.0))
    return CharacteristicPointParams(
        min_angle_deg=draw(st.floats(1.0, 180.0)),
        min_stop_duration_s=draw(st.floats(1.0, 1200.0)),
        stop_radius_m=stop_radius,
        max_distance_m=stop_radius * draw(st.floats(1.0, 20.0)),
    )


@settings(max_examples=300, deadline=None)
@given(data=random_trajectories(), params=valid_params())
def test_extracted_points_are_never_too_far_apart(
    data: tuple[np.ndarray, ...], params: CharacteristicPointParams
) -> None:
    traj, t, x, y = data
    mask = characteristic_points(traj, t, x, y, params)
    for code in np.unique(traj):
        rows = np.flatnonzero(traj == code)
        chosen = rows[mask[rows]]
        assert chosen[0] == rows[0] and chosen[-1] == rows[-1]
        steps = np.hypot(np.diff(x[rows]), np.diff(y[rows]))
        for a, b in itertools.pairwise(chosen):
            gap = math.hypot(x[b] - x[a], y[b] - y[a])
            longest_step = steps[a - rows[0] : b - rows[0]].max()
            assert gap <= params.max_distance_m + longest_step + 1e-6


@settings(max_examples=100, deadline=None)
@given(data=random_trajectories(), params=valid_params())
def test_result_is_deterministic_and_per_trajectory(
    data: tuple[np.ndarray, ...], params: CharacteristicPointParams
) -> None:
    traj, t, x, y = data
    mask = characteristic_points(traj, t, x, y, params)
    assert np.array_equal(mask, characteristic_points(traj, t, x, y, params))
    for code in np.unique(traj):
        rows = traj == code
        alone = characteristic_points(traj[rows], t[rows], x[rows], y[rows], params)
        assert np.array_equal(mask[rows], alone)


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "kwargs",
    [
        {"min_angle_deg": 0.0},
        {"min_angle_deg": 190.0},
        {"min_angle_deg": float("nan")},
        {"min_stop_duration_s": 0.0},
        {"min_stop_duration_s": -5.0},
        {"stop_radius_m": 0.0},
        {"stop_radius_m": float("inf")},
        {"max_distance_m": -1.0},
        {"max_distance_m": 50.0},  # below stop_radius_m
        {"stop_radius_m": True},
        {"max_distance_m": "3500"},
    ],
)
def test_bad_params_raise(kwargs: dict) -> None:
    with pytest.raises(InputError):
        CharacteristicPointParams(**kwargs)


def test_disabled_rules_are_accepted() -> None:
    params = CharacteristicPointParams(min_stop_duration_s=math.inf, max_distance_m=math.inf)
    x, y, t = path_with_pause(pause_s=600.0, jitter_m=10.0)
    assert extracted(x, y, t, params) == [0, x.size - 1]


def _good() -> dict[str, np.ndarray]:
    return {
        "traj": np.array([0, 0, 1, 1]),
        "t": np.array([0.0, 10.0, 5.0, 6.0]),
        "x": np.array([0.0, 1.0, 2.0, 3.0]),
        "y": np.array([0.0, 1.0, 2.0, 3.0]),
    }


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("x", np.array([0.0, 1.0, 2.0]), "same length"),
        ("t", np.array([0.0, 10.0, 6.0, 5.0]), "decreases"),
        ("traj", np.array([0, 1, 0, 1]), "contiguous"),
        ("traj", np.array([0.0, 0.0, 1.0, 1.0]), "integer"),
        ("y", np.array([0.0, np.nan, 2.0, 3.0]), "NaN"),
        ("t", np.array([0.0, np.inf, 5.0, 6.0]), "NaN"),
        ("x", np.zeros((2, 2)), "one-dimensional"),
        ("t", np.array(["a", "b", "c", "d"]), "numeric"),
    ],
)
def test_bad_arrays_raise(field: str, value: np.ndarray, message: str) -> None:
    arrays = _good()
    characteristic_points(**arrays)  # the good input is accepted
    arrays[field] = value
    with pytest.raises(InputError, match=message):
        characteristic_points(**arrays)
