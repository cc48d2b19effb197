"""A side environment with scikit-mobility 1.3.1, for comparing the attack suite with it.

skmob's pins (pandas < 2, geopandas 0.10, shapely 1.8) conflict with ours, so it is never a
dependency: this makes a separate virtual environment once per checkout (about 50 s here,
then reused), under a file lock so that parallel test workers do not race.
"""

from __future__ import annotations

import fcntl
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REQUIREMENTS = HERE / "skmob_side" / "requirements.txt"
RUNNER = HERE / "skmob_side" / "run_skmob.py"
ENV_DIR = HERE.parent / ".anonymizers" / "skmob-1.3.1"


def ensure_skmob() -> Path:
    """The side environment's python, made if missing or stale."""
    ENV_DIR.parent.mkdir(parents=True, exist_ok=True)
    python = ENV_DIR / "bin" / "python"
    stamp = ENV_DIR / "requirements.txt"
    with open(ENV_DIR.parent / "skmob-1.3.1.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if python.exists() and stamp.exists() and stamp.read_text() == REQUIREMENTS.read_text():
            return python
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(ENV_DIR)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "-r",
                        str(REQUIREMENTS)], check=True, capture_output=True)
        stamp.write_text(REQUIREMENTS.read_text())
    return python


def run_skmob(python: Path, data_csv: Path, spec: list[dict[str, Any]],
              workdir: Path) -> dict[str, Any]:
    """skmob's per-user risks for each attack of ``spec`` (see skmob_side/run_skmob.py)."""
    spec_path = workdir / "spec.json"
    spec_path.write_text(json.dumps(spec))
    done = subprocess.run([str(python), str(RUNNER), str(data_csv), str(spec_path)],
                          check=True, capture_output=True, text=True, cwd=workdir)
    result: dict[str, Any] = json.loads(done.stdout)
    return result


# skmob class and our model name of each compared attack.
SKMOB_CLASSES = {
    "location": "LocationAttack", "location_sequence": "LocationSequenceAttack",
    "location_time": "LocationTimeAttack", "unique_location": "UniqueLocationAttack",
    "location_frequency": "LocationFrequencyAttack",
    "location_probability": "LocationProbabilityAttack",
    "location_proportion": "LocationProportionAttack", "home_work": "HomeWorkAttack",
}


def make_frame(seed: int, users: int, points: int, locations: int,
               max_places_per_user: int | None = None):
    """A tabular trajectory set (uid, lat, lng, datetime) within one month, no ties in time."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    sites = np.round(rng.uniform([43.5, 10.2], [43.9, 11.3], size=(locations, 2)), 6)
    rows = []
    for uid in range(1, users + 1):
        allowed = (rng.choice(locations, max_places_per_user, replace=False)
                   if max_places_per_user else np.arange(locations))
        n = int(rng.integers(max(1, points // 2), points + 1))
        minutes = np.sort(rng.choice(28 * 24 * 60, n, replace=False))
        for minute in minutes.tolist():
            lat, lng = sites[int(rng.choice(allowed))]
            rows.append((uid, float(lat), float(lng),
                         pd.Timestamp("2011-02-01") + pd.Timedelta(minutes=minute)))
    return pd.DataFrame(rows, columns=["uid", "lat", "lng", "datetime"])


def our_risks(frame, model: str, j: int, **options: Any) -> dict[str, float]:
    """Our engine's per-user risks on ``frame``, the raw data as a release of itself."""
    import numpy as np
    import pandas as pd

    from anonymizers.attacks.knowledge import Observations, Records, time_keys
    from anonymizers.attacks.suite import run_attacks

    frame = frame.sort_values(["uid", "datetime"], kind="stable")
    uid = frame["uid"].to_numpy(dtype=np.int64)
    location = pd.MultiIndex.from_arrays([frame["lat"], frame["lng"]]).factorize()[0]
    seconds = frame["datetime"].to_numpy(dtype="datetime64[s]").astype(np.int64)
    precision = str(options.pop("time_precision", "day")).lower()
    observed = Observations(uid, uid.copy(), location.astype(np.int64),
                            time_keys(seconds, precision))
    result = run_attacks(observed, Records.of_persons(observed), models=[model], lengths=[j],
                         threshold=0.5, max_instances=None, options={model: options})
    run = result.runs[0]
    return {str(u): r for u, r in zip(run.persons.tolist(), run.risk.tolist(), strict=True)}
