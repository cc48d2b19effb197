"""The attack suite gives scikit-mobility 1.3.1's numbers on the same input.

skmob runs in its own environment (tests/skmob_env.py); each attack is compared user by
user on a small trajectory set. Where skmob's model differs from the one we implement
(README, "Attack suite"), the input is one where both coincide: LocationTimeAttack at
"Day" precision within one month (skmob's Hour/Minute/Second keys take the month for the
hour), HomeWorkAttack on persons with at most two places (skmob takes the two *least*
frequent locations).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.skmob_env import SKMOB_CLASSES, ensure_skmob, make_frame, our_risks, run_skmob

LENGTHS = (1, 2, 3)
CASES: list[tuple[str, str, int, dict[str, Any]]] = [
    # skmob's LocationAttack never stops early on this input: 12 s at j = 3, so j <= 2.
    *[(f"location_{j}", "location", j, {}) for j in (1, 2)],
    *[(f"{m}_{j}", m, j, {}) for m in ("location_sequence", "unique_location")
      for j in LENGTHS],
    *[(f"location_time_{j}", "location_time", j, {"time_precision": "Day"}) for j in LENGTHS],
    *[(f"{m}_{j}_{t}", m, j, {"tolerance": t})
      for m in ("location_frequency", "location_probability", "location_proportion")
      for j in (1, 2) for t in (0.0, 0.3)],
]


@pytest.fixture(scope="module")
def skmob_python() -> Path:
    return ensure_skmob()


def _compare(frame, cases, python: Path, tmp_path: Path) -> None:
    data = tmp_path / "data.csv"
    frame.to_csv(data, index=False)
    spec = [{"name": name, "class": SKMOB_CLASSES[model], "knowledge_length": j,
             "kwargs": kwargs} for name, model, j, kwargs in cases]
    theirs = run_skmob(python, data, spec, tmp_path)
    for name, model, j, kwargs in cases:
        ours = our_risks(frame, model, j, **kwargs)
        assert ours == pytest.approx(theirs[name]), name


def test_every_attack_gives_skmobs_risks(skmob_python: Path, tmp_path: Path) -> None:
    frame = make_frame(seed=3, users=8, points=6, locations=4)
    _compare(frame, CASES, skmob_python, tmp_path)


def test_home_work_gives_skmobs_risks_where_the_models_coincide(skmob_python: Path,
                                                                tmp_path: Path) -> None:
    frame = make_frame(seed=4, users=12, points=6, locations=4, max_places_per_user=2)
    _compare(frame, [("home_work", "home_work", 2, {})], skmob_python, tmp_path)
