"""Reproduce MLA's experiments (seed 001, §5.1, Table 1, Fig. 4-5) on Gowalla and T-Drive:
the heuristic, k'-means and iterative k'-means for k in {2, 5, 10, 15}, with our k-persons
repair.

Not collected by pytest (``tests/benchmarks`` is in ``norecursedirs``). From the repository
root::

    .venv/bin/python -m tests.benchmarks.bench_mla                          # Gowalla, all NYC
    .venv/bin/python -m tests.benchmarks.bench_mla --scope crop             # 1 km x 1 km
    .venv/bin/python -m tests.benchmarks.bench_mla --data tdrive --scope crop
    .venv/bin/python -m tests.benchmarks.bench_mla --methods kmeans --ks 2,15

Gowalla: ``../shared/data/gowalla_nyc/points.csv.gz`` (7,115 users, one check-in sequence
each, 138,957 check-ins). Which part of the map: §5 takes "a 1km x 1km central part of the
Beijing map" for Geolife and T-Drive, but for Gowalla "the users over the map of New York
City with the same resolution", and Table 1's Gowalla row (138,957 samples, 7,115
trajectories, 19.53 per trajectory) is this whole file. So ``--scope all`` (the default) is
the paper's setting: every point, 10 m cells, hourly bins ("the time of queries in hours",
§3.1.1). ``--scope crop`` keeps the 1 km x 1 km square centred on the median check-in
(midtown Manhattan), the Beijing recipe applied to New York.

T-Drive: ``../shared/data/tdrive_600/points.csv.gz`` (598 taxis over a week, 7,344
trajectories). The paper's T-Drive set is "a 1km x 1km central part of the Beijing map"
(27,916 samples; the 474,572-bit bound is 17 bits a point); ``--data tdrive --scope crop``
keeps the 1 km square centred on the median fix. A trajectory is a raw traj_id (a taxi's
trip), its person the taxi.

lon/lat are projected to the UTM zone of their mean longitude (pyproj). Each (method, k)
runs in a fresh process so that its run time and peak RSS are its own. Figures go to
``tests/benchmarks/results/mla_<data>_<scope>.json``.

References
----------
.. [1] Shaham, Ding, Liu, Dang, Lin, Li. Privacy Preserving Location Data Publishing: A
   Machine Learning Approach (MLA), §5, Table 1, Fig. 4 and Fig. 5.
.. [2] Cho, Myers, Leskovec. Friendship and mobility: user movement in location-based social
   networks. KDD 2011 (Gowalla).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from tests.benchmarks._common import RESULTS, peak_rss_mib, write_results

__all__ = ["load_points", "run_one"]

DATA = {name: Path(__file__).resolve().parents[3] / "shared" / "data" / folder / "points.csv.gz"
        for name, folder in (("gowalla", "gowalla_nyc"), ("tdrive", "tdrive_600"))}
EPSILON = 10.0  # metres: 0.01 km x 0.01 km (§5)
TIME_BIN = 3600.0  # seconds: hours (§3.1.1)
CROP_SIDE = 1000.0  # metres
METHODS = {"heuristic": "mla_heuristic", "kmeans": "mla_kmeans",
           "iterative": "mla_iterative_kmeans"}
COLUMNS = ["method", "k", "loss_bits", "loss_share", "mean_cluster_loss_bits",
           "length_increase", "area_per_location_m2", "clusters", "merged_clusters",
           "suppressed_points", "below_k_share", "run_s", "peak_rss_mib"]


def load_points(data: str, scope: str) -> dict[str, np.ndarray]:
    """traj, person, t (epoch s), x, y (UTM metres) sorted by traj then t; cached as .npz."""
    cache = RESULTS / "data" / f"{'gowalla_nyc' if data == 'gowalla' else data}_{scope}.npz"
    if cache.exists():
        with np.load(cache) as saved:
            return dict(saved)
    points = _project(_read(DATA[data]))
    if scope == "crop":
        points = _central_square(points, CROP_SIDE)
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.savez(cache, traj=points["traj"], person=points["person"], t=points["t"],
             x=points["x"], y=points["y"])
    return points


def _read(path: Path) -> Any:
    import pandas as pd

    frame = pd.read_csv(path, dtype={"traj_id": str, "user_id": str})
    stamps = pd.to_datetime(frame["t"], utc=True)
    frame["t"] = (stamps - pd.Timestamp(0, tz="UTC")) // pd.Timedelta(seconds=1)
    frame = frame[frame["lon"].between(-180, 180) & frame["lat"].between(-80, 84)]
    frame = frame.drop_duplicates(["traj_id", "t"])  # a trajectory is a function of time
    frame["traj_id"] = pd.factorize(frame["traj_id"])[0]
    frame["user_id"] = pd.factorize(frame["user_id"])[0]
    return frame.sort_values(["traj_id", "t"], kind="stable")


def _project(frame: Any) -> dict[str, np.ndarray]:
    import pyproj

    zone = int((frame["lon"].median() + 180) // 6) + 1
    to_utm = pyproj.Transformer.from_crs(4326, 32600 + zone, always_xy=True)
    x, y = to_utm.transform(frame["lon"].to_numpy(), frame["lat"].to_numpy())
    return {"traj": frame["traj_id"].to_numpy(np.int64),
            "person": frame["user_id"].to_numpy(np.int64),
            "t": frame["t"].to_numpy(np.float64), "x": np.asarray(x), "y": np.asarray(y)}


def _central_square(points: dict[str, np.ndarray], side: float) -> dict[str, np.ndarray]:
    """The points within the ``side`` x ``side`` square centred on the median point."""
    cx, cy = np.median(points["x"]), np.median(points["y"])
    inside = ((np.abs(points["x"] - cx) < side / 2) & (np.abs(points["y"] - cy) < side / 2))
    return {name: values[inside] for name, values in points.items()}


def run_one(method: str, k: int, data: str, scope: str, seed: int = 0) -> dict[str, Any]:
    """Run one method at one k and return its figures (call in a fresh process)."""
    import sklearn.cluster  # noqa: F401  (imported before the clock starts)

    from anonymizers.families.clustering import mla

    points = load_points(data, scope)
    entry = getattr(mla, METHODS[method])
    started = time.perf_counter()
    release = entry(points["traj"], points["person"], points["t"], points["x"], points["y"],
                    k=k, epsilon=EPSILON, time_bin=TIME_BIN, seed=seed)
    figures = release.summary()
    figures.update(
        method=method, run_s=round(time.perf_counter() - started, 2),
        peak_rss_mib=round(peak_rss_mib(), 1), points=len(points["t"]),
        trajectories=len(np.unique(points["traj"])), persons=len(np.unique(points["person"])),
        bits_per_point=release.grid.bits_per_point,
        loss_share=release.loss_bits / max(release.full_suppression_bits, 1),
        grid=[release.grid.nx, release.grid.ny, release.grid.nt],
    )
    return figures


def _in_subprocess(method: str, k: int, data: str, scope: str) -> dict[str, Any]:
    command = [sys.executable, "-m", "tests.benchmarks.bench_mla", "--one",
               f"{method}:{k}", "--data", data, "--scope", scope]
    print(f"  {method} k={k} ...", file=sys.stderr, flush=True)
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def table(rows: list[dict[str, Any]]) -> str:
    """The rows as a fixed-width text table of :data:`COLUMNS`."""
    def cell(value: Any) -> str:
        if isinstance(value, float):
            return f"{value:.4g}" if abs(value) < 1e4 else f"{value:.3e}"
        return str(value)
    cells = [COLUMNS] + [[cell(row[c]) for c in COLUMNS] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(COLUMNS))]
    return "\n".join("  ".join(v.rjust(w) for v, w in zip(r, widths, strict=True))
                     for r in cells)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", choices=sorted(DATA), default="gowalla")
    parser.add_argument("--scope", choices=["all", "crop"], default="all",
                        help="all: every point of the file; crop: the central 1 km square")
    parser.add_argument("--methods", default="heuristic,kmeans,iterative")
    parser.add_argument("--ks", default="2,5,10,15")
    parser.add_argument("--one", help="method:k, run in this process (internal)")
    args = parser.parse_args()
    if args.one:
        method, k = args.one.split(":")
        print(json.dumps(run_one(method, int(k), args.data, args.scope), default=str))
        return
    load_points(args.data, args.scope)  # build the cache once, outside the timed runs
    rows = [_in_subprocess(m, int(k), args.data, args.scope) for m in args.methods.split(",")
            for k in args.ks.split(",")]
    write_results(f"mla_{args.data}_{args.scope}", {"data": args.data, "scope": args.scope,
                                                    "epsilon_m": EPSILON,
                                                "time_bin_s": TIME_BIN, "runs": rows})
    print(table(rows))


if __name__ == "__main__":
    main()
