"""PersonsNear: the persons within a radius of a point, up to a cap, against brute force."""

from __future__ import annotations

import numpy as np
import pytest

from anonymizers.families.generalization import persons_near
from anonymizers.families.generalization.persons_near import PersonsNear


def brute_force(x: np.ndarray, y: np.ndarray, person: np.ndarray, px: float, py: float,
                reach: float, enough: int) -> int:
    near = np.hypot(x - px, y - py) <= reach
    return min(enough, len(set(person[near].tolist())))


@pytest.mark.parametrize("seed", range(4))
def test_counts_equal_brute_force_inside_outside_and_on_square_edges(
        seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(persons_near, "BATCH", 7)  # many batches per square
    rng = np.random.default_rng(seed)
    x, y = rng.uniform(-1000, 3000, 5000), rng.uniform(500, 2500, 5000)
    person = rng.integers(0, 40, 5000).astype(np.int32)
    reach = 250.0
    near = PersonsNear(x, y, person, reach)
    # Random points, points far outside the fixes, and points on the squares' edges.
    px = np.r_[rng.uniform(-1500, 3500, 200), -9e5, 4e4, x.min() + reach * np.arange(16)]
    py = np.r_[rng.uniform(0, 3000, 200), 0.0, 1500.0, y.min() + reach * np.arange(16) / 2]
    for enough in (1, 5, 41):
        expected = [brute_force(x, y, person, a, b, reach, enough)
                    for a, b in zip(px, py, strict=True)]
        assert near.counts(px, py, enough).tolist() == expected
    assert 0 < near.count(1000.0, 1500.0, 41) < 41


def test_a_fix_at_exactly_the_radius_counts_and_one_just_beyond_does_not() -> None:
    near = PersonsNear(np.array([0.0, 30.0, 0.0]), np.array([40.0, 40.0, -50.0000001]),
                       np.array([1, 2, 3]), reach=50.0)
    assert near.count(0.0, 0.0, enough=5) == 2  # (30, 40) is 50 m away; (0, -50.0000001) not


def test_no_fixes_no_persons_and_the_radius_must_be_positive() -> None:
    empty = np.zeros(0)
    assert PersonsNear(empty, empty, np.zeros(0, np.int32), 10.0).count(0.0, 0.0, 3) == 0
    with pytest.raises(ValueError, match="reach must be positive"):
        PersonsNear(empty, empty, np.zeros(0, np.int32), 0.0)
