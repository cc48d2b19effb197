"""Time and compare the tessellation's first steps with movingpandas on 100,000 GPS fixes.

Our characteristic points + point clustering (steps 1-2 of Algorithm 2 in Monreale et al.
2010, after Andrienko & Andrienko 2011) against movingpandas 0.23's
``TrajectoryCollectionAggregator``, which implements the same published method, on the
same projected synthetic city and with equivalent parameters (45°, 5 min, stop radius /
``min_distance`` 100 m, maximum distance = cluster radius = 500 m, the radius of the
paper's experiments).  movingpandas is not a dependency of this project: it runs in its
own virtual environment (``MOVINGPANDAS_PYTHON``, default ``/tmp/mpvenv/bin/python``)
as a subprocess; without it only our figures are written.  Set it up with::

    python3.11 -m venv /tmp/mpvenv
    /tmp/mpvenv/bin/pip install "movingpandas==0.23.*" numpy pandas geopandas shapely scipy

Not collected by pytest (``tests/benchmarks`` is in ``norecursedirs``).  Run it from the
repository root with ``python tests/benchmarks/bench_tessellation_vs_movingpandas.py
[points] [seed]``; figures go to ``tests/benchmarks/results/tessellation_vs_movingpandas.json``.

Besides the times, the grouping quality is compared on the same data: number of
clusters, empty clusters, member-to-centroid distances, and the distance from every raw
fix to its nearest centroid (the displacement a Voronoi generalization applies).  Each
clusterer is also run on the other's characteristic points, so extraction and clustering
are compared separately.

References
----------
.. [1] N. Andrienko and G. Andrienko, "Spatial generalization and aggregation of massive
   movement data", IEEE TVCG 17(2) (2011), 205-219.
.. [2] A. Monreale et al., "Movement Data Anonymity through Generalization",
   Transactions on Data Privacy 3 (2010), 91-121, Section 6.1 (r = 500 m).
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from _common import write_results
from scipy.spatial import cKDTree

from anonymizers.families.generalization.characteristic_points import (
    CharacteristicPointParams,
    characteristic_points,
)
from anonymizers.families.generalization.point_clustering import (
    cluster_points,
    cluster_radius_stats,
)

__all__ = ["movingpandas", "ours", "projected_city"]

RADIUS_M = 500.0
PARAMS = CharacteristicPointParams(
    min_angle_deg=45.0, min_stop_duration_s=300.0, stop_radius_m=100.0, max_distance_m=RADIUS_M
)
_OUR_RUNS = 3
MP_PYTHON = Path(os.environ.get("MOVINGPANDAS_PYTHON", "/tmp/mpvenv/bin/python"))

# Runs inside the movingpandas venv: argv = points.csv, ours.csv, params.json, out.json.
# Phases are timed by wrapping the aggregator's own methods, so it runs exactly once.
_MP_SCRIPT = r"""
import contextlib, io, json, sys, time
from datetime import timedelta
import geopandas as gpd, numpy as np, pandas as pd
import movingpandas as mpd
from movingpandas import trajectory_aggregator as ta
from shapely.geometry import Point

points_csv, ours_csv, params_json, out_json = sys.argv[1:5]
p = json.load(open(params_json))
times = {}

def timed(name, fn):
    def wrapper(*args, **kwargs):
        started = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            times[name] = times.get(name, 0.0) + time.perf_counter() - started
    return wrapper

Agg = ta.TrajectoryCollectionAggregator
Agg._extract_significant_points = timed("extract_s", Agg._extract_significant_points)
Agg._compute_flows_between_clusters = timed("flows_s", Agg._compute_flows_between_clusters)
ta.PointClusterer = type("TimedClusterer", (ta.PointClusterer,), {
    "__init__": timed("cluster_s", ta.PointClusterer.__init__)})

def clusters_summary(clusters):
    centroids = np.array([[c.centroid.x, c.centroid.y] for c in clusters])
    sizes = np.array([len(c.points) for c in clusters])
    members = [(pt.x, pt.y, i) for i, c in enumerate(clusters) for pt in c.points]
    m = np.array(members) if members else np.zeros((0, 3))
    own = centroids[m[:, 2].astype(int)] if len(m) else np.zeros((0, 2))
    d = np.hypot(m[:, 0] - own[:, 0], m[:, 1] - own[:, 1]) if len(m) else np.zeros(0)
    return {"n_clusters": int(len(clusters)), "empty_clusters": int((sizes == 0).sum()),
            "clustered_points": int(sizes.sum()),
            "member_to_centroid_mean_m": float(d.mean()),
            "member_to_centroid_max_m": float(d.max()),
            "_centroids": centroids.tolist()}

df = pd.read_csv(points_csv)
df["t"] = pd.to_datetime(df["t"], unit="s")
started = time.perf_counter()
gdf = gpd.GeoDataFrame(df, geometry=gpd.points_from_xy(df.x, df.y), crs=p["crs"])
tc = mpd.TrajectoryCollection(gdf, traj_id_col="traj", t="t")
times["build_collection_s"] = time.perf_counter() - started
log = io.StringIO()
with contextlib.redirect_stdout(log):
    started = time.perf_counter()
    agg = Agg(tc, max_distance=p["max_distance"], min_distance=p["min_distance"],
              min_stop_duration=timedelta(seconds=p["min_stop_duration_s"]),
              min_angle=p["min_angle"])
    times["aggregator_total_s"] = time.perf_counter() - started
sig = np.array([[pt.x, pt.y] for pt in agg.significant_points])
result = {"times": times, "n_points": int(len(df)), "n_trajectories": int(len(tc)),
          "significant_points": int(len(sig)),
          "distinct_significant_points": int(len(np.unique(sig, axis=0))),
          "discarded_in_redistribution": log.getvalue().count("Discarding"),
          "clusters": clusters_summary(agg.clusters),
          "_significant_xy": sig.tolist()}
ours_xy = pd.read_csv(ours_csv)[["x", "y"]].to_numpy()
pts = [Point(x, y) for x, y in ours_xy]
log = io.StringIO()
with contextlib.redirect_stdout(log):
    started = time.perf_counter()
    clusters = ta.PointClusterer(pts, p["max_distance"], False).get_clusters()
    elapsed = time.perf_counter() - started
result["on_our_points"] = {"cluster_s": elapsed, **clusters_summary(clusters),
                           "discarded_in_redistribution": log.getvalue().count("Discarding")}
json.dump(result, open(out_json, "w"))
"""


def projected_city(n_points: int = 100_000, seed: int = 3) -> tuple[pd.DataFrame, str]:
    """The synthetic city's fixes in a local UTM zone, sorted by ``(traj, t)``.

    Returns
    -------
    points : pandas.DataFrame
        ``traj`` (int codes), ``t`` (epoch seconds), ``x``, ``y`` (metres).
    crs : str
        The UTM CRS used, e.g. ``"EPSG:32632"``.
    """
    from pyproj import Transformer

    from anonymizers.synthetic import CityConfig, generate_city

    raw = generate_city(CityConfig(seed=seed, target_points=n_points)).points
    zone = int((raw["lon"].mean() + 180.0) // 6.0) + 1
    crs = f"EPSG:{(32600 if raw['lat'].mean() >= 0 else 32700) + zone}"
    x, y = Transformer.from_crs("EPSG:4326", crs, always_xy=True).transform(
        raw["lon"].to_numpy(), raw["lat"].to_numpy()
    )
    epoch = (raw["t"] - pd.Timestamp(0, tz="UTC")) / pd.Timedelta(seconds=1)
    codes = pd.factorize(raw["traj_id"], sort=True)[0]  # rows are sorted by traj_id, t
    points = pd.DataFrame({"traj": codes, "t": epoch.to_numpy(), "x": x, "y": y})
    return points, crs


def ours(points: pd.DataFrame, artefacts: dict | None = None) -> dict:
    """Time our steps on ``points`` (``traj``, ``t``, ``x``, ``y``); returns the figures.

    The nearest-centroid assignment of every fix stands in for the Voronoi cell
    membership (it is the same partition) until the SQL step is timed here too.
    ``artefacts``, when given, receives the mask, the clusters and the centroid tree.
    """
    traj, t = points["traj"].to_numpy(), points["t"].to_numpy()
    x, y = points["x"].to_numpy(), points["y"].to_numpy()
    figures: dict = {}
    started = time.perf_counter()
    mask = characteristic_points(traj, t, x, y, PARAMS)
    figures["characteristic_points_s"] = time.perf_counter() - started
    started = time.perf_counter()
    clusters = cluster_points(x[mask], y[mask], RADIUS_M)
    figures["cluster_points_s"] = time.perf_counter() - started
    started = time.perf_counter()
    tree = cKDTree(clusters.centroids)
    _, cell = tree.query(np.column_stack((x, y)))
    figures["assign_points_s"] = time.perf_counter() - started
    figures["steps_1_2_s"] = figures["characteristic_points_s"] + figures["cluster_points_s"]
    figures["total_s"] = figures["steps_1_2_s"] + figures["assign_points_s"]
    figures["characteristic_points"] = int(mask.sum())
    figures["clusters"] = len(clusters)
    figures["empty_clusters"] = int(
        (np.bincount(clusters.labels, minlength=len(clusters)) == 0).sum()
    )
    figures["used_cells"] = int(np.unique(cell).size)
    if artefacts is not None:
        artefacts.update(mask=mask, clusters=clusters, tree=tree)
    return figures


def movingpandas(points: pd.DataFrame, crs: str, our_xy: np.ndarray) -> dict:
    """Run movingpandas' aggregator (and its clusterer on ``our_xy``) in its own venv."""
    if not MP_PYTHON.exists():
        return {"skipped": f"{MP_PYTHON} not found (see this module's docstring)"}
    params = {
        "crs": crs,
        "max_distance": PARAMS.max_distance_m,
        "min_distance": PARAMS.stop_radius_m,
        "min_stop_duration_s": PARAMS.min_stop_duration_s,
        "min_angle": PARAMS.min_angle_deg,
    }
    with tempfile.TemporaryDirectory() as folder:
        paths = [Path(folder) / name for name in ("p.csv", "o.csv", "params.json", "out.json")]
        points[["traj", "t", "x", "y"]].to_csv(paths[0], index=False)
        pd.DataFrame(our_xy, columns=["x", "y"]).to_csv(paths[1], index=False)
        paths[2].write_text(json.dumps(params))
        subprocess.run([str(MP_PYTHON), "-c", _MP_SCRIPT, *map(str, paths)], check=True)
        return json.loads(paths[3].read_text())


def _nearest_stats(tree: cKDTree, xy: np.ndarray) -> dict:
    distance, _ = tree.query(xy)
    return {"mean_m": float(distance.mean()), "max_m": float(distance.max())}


def _quality(points: pd.DataFrame, mp: dict, artefacts: dict) -> dict:
    """Grouping quality of both methods on the same data, and each clusterer on both inputs."""
    xy = points[["x", "y"]].to_numpy()
    mask, clusters = artefacts["mask"], artefacts["clusters"]
    ours_stats = cluster_radius_stats(xy[mask, 0], xy[mask, 1], clusters)
    quality: dict = {
        "ours": {
            **ours_stats,
            "empty_clusters": 0,
            "raw_fix_to_nearest_centroid": _nearest_stats(artefacts["tree"], xy),
        }
    }
    if "skipped" in mp:
        return quality
    mp_clusters = mp["clusters"]
    mp_tree = cKDTree(np.asarray(mp_clusters.pop("_centroids")))
    quality["movingpandas"] = {
        **mp_clusters,
        "raw_fix_to_nearest_centroid": _nearest_stats(mp_tree, xy),
    }
    # The same point sets through the other clusterer: clustering compared alone.
    mp_xy = np.asarray(mp.pop("_significant_xy"))
    started = time.perf_counter()
    ours_on_mp = cluster_points(mp_xy[:, 0], mp_xy[:, 1], RADIUS_M)
    elapsed = time.perf_counter() - started
    quality["ours_clustering_mp_points"] = {
        "cluster_s": elapsed,
        **cluster_radius_stats(mp_xy[:, 0], mp_xy[:, 1], ours_on_mp),
        "empty_clusters": 0,
    }
    on_ours = mp.pop("on_our_points")
    on_ours.pop("_centroids")
    quality["mp_clustering_our_points"] = on_ours
    return quality


def _ratios(figures: dict) -> dict:
    mp_times, our_times = figures["movingpandas"]["times"], figures["ours"]
    mp_steps = mp_times["extract_s"] + mp_times["cluster_s"]
    return {
        "characteristic_points": mp_times["extract_s"] / our_times["characteristic_points_s"],
        "clustering": mp_times["cluster_s"] / our_times["cluster_points_s"],
        "steps_1_2": mp_steps / our_times["steps_1_2_s"],
        "end_to_end_incl_assignment": mp_times["aggregator_total_s"] / our_times["total_s"],
        "clustering_same_points": (
            figures["quality"]["mp_clustering_our_points"]["cluster_s"]
            / our_times["cluster_points_s"]
        ),
    }


def main(n_points: int = 100_000, seed: int = 3) -> dict:
    """Run both sides, compare, and write the results file."""
    points, crs = projected_city(n_points, seed)
    print(f"{len(points)} fixes, {points['traj'].nunique()} trajectories, {crs}", file=sys.stderr)
    ours(points)  # warm-up: imports, caches
    artefacts: dict = {}
    # Best of a few runs: ours takes about a second, so load on the machine would
    # otherwise dominate; movingpandas (minutes) runs once.
    runs = [ours(points, artefacts) for _ in range(_OUR_RUNS)]
    figures: dict = {
        "input": {"points": len(points), "seed": seed, "crs": crs, "radius_m": RADIUS_M},
        "params": {**dataclasses.asdict(PARAMS), "cluster_radius_m": RADIUS_M},
        "ours": {**min(runs, key=lambda run: run["total_s"]), "runs": _OUR_RUNS},
    }
    print(f"ours: {json.dumps(figures['ours'])}", file=sys.stderr)
    our_xy = points.loc[artefacts["mask"], ["x", "y"]].to_numpy()
    mp = movingpandas(points, crs, our_xy)
    figures["quality"] = _quality(points, mp, artefacts)
    figures["movingpandas"] = mp
    if "skipped" not in mp:
        figures["speedup_movingpandas_over_ours"] = _ratios(figures)
    write_results("tessellation_vs_movingpandas", _rounded(figures))
    return figures


def _rounded(value: object) -> object:
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, dict):
        return {key: _rounded(item) for key, item in value.items()}
    return value


if __name__ == "__main__":
    main(*(int(arg) for arg in sys.argv[1:3]))
