"""Trajectory groups (seed 004) on real data, every release verified and published.

* T-Drive (../shared/data/tdrive_600), one day, GPS fixes mapped onto the cells of a fixed
  grid (``places=grid``);
* Gowalla NYC check-ins as place sequences: each venue snapped to a cell of a fixed grid
  (UTM 18N) whose centre is the place, written as a visits CSV and a places CSV and loaded
  with ``anonymizers load --places``; one trajectory per user over the whole period.

Both anonymizers at one k, origin-destination groups on, no demographics (neither dataset
has any). Writes tests/benchmarks/results/groups_realdata.json and prints a Markdown table.

Run: .venv/bin/python tests/benchmarks/groups_realdata.py [k] [tdrive cell m] [gowalla cell m]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from _common import peak_rss_mib, print_markdown_table, scratch_database, write_results
from _release_runs import run_release
from bench_kam_rec_tdrive import TDRIVE
from pyproj import Transformer

GOWALLA = TDRIVE.parents[1] / "gowalla_nyc" / "points.csv.gz"
METHODS = ("tg_overlapping", "tg_nonoverlapping")
TABLES = ("groups", "od_groups", "places")
COLUMNS = ("data", "method", "groups", "od groups", "places", "mean length", "R",
           "visits kept", "persons kept", "group step (s)", "verify (s)", "total (s)")


def gowalla_place_sequences(folder: Path, cell_m: float) -> tuple[Path, Path]:
    """Gowalla NYC as visits (traj_id,user_id,t,place) and places (cell centres)."""
    points = pd.read_csv(GOWALLA)
    to_utm = Transformer.from_crs(4326, 32618, always_xy=True)
    x, y = to_utm.transform(points["lon"].to_numpy(), points["lat"].to_numpy())
    column, row = np.floor(x / cell_m).astype(np.int64), np.floor(y / cell_m).astype(np.int64)
    points["place"] = [f"{c}:{r}" for c, r in zip(column, row, strict=True)]
    cells = pd.DataFrame({"place": points["place"], "column": column, "row": row})
    cells = cells.drop_duplicates("place")
    lon, lat = Transformer.from_crs(32618, 4326, always_xy=True).transform(
        (cells["column"].to_numpy() + 0.5) * cell_m, (cells["row"].to_numpy() + 0.5) * cell_m)
    visits, places = folder / "gowalla_visits.csv", folder / "gowalla_places.csv"
    points[["traj_id", "user_id", "t", "place"]].to_csv(visits, index=False)
    pd.DataFrame({"place": cells["place"], "lon": lon, "lat": lat}).to_csv(places, index=False)
    return visits, places


def _row(data: str, method: str, run: dict[str, Any]) -> dict[str, Any]:
    m = run["metrics"]
    return {"data": data, "method": method, "groups": run["groups"],
            "od groups": run["od_groups"], "places": run["places"],
            "mean length": round(m["tg_group_length_mean"], 2),
            "R": round(m["tg_preserved_ratio"], 3),
            "visits kept": round(m["visits_published_share"], 3),
            "persons kept": round(m["persons_published_share"], 3),
            "group step (s)": run["steps_s"]["group_trajectories"],
            "verify (s)": run["steps_s"]["verify"], "total (s)": run["total_s"]}


def main(k: int, tdrive_cell: float, gowalla_cell: float) -> None:
    from anonymizers.loading import load_dataset

    rows, runs = [], []
    with scratch_database() as url, tempfile.TemporaryDirectory() as tmp:
        load_dataset(TDRIVE, "tdrive", url=url)
        visits, places = gowalla_place_sequences(Path(tmp), gowalla_cell)
        load_dataset(visits, "gowalla", places=places, url=url, sort=True)
        cases = [(f"T-Drive 2008-02-03, cells of {tdrive_cell:g} m",
                  {"dataset": "tdrive", "start": "2008-02-03T00:00:00+00:00",
                   "end": "2008-02-04T00:00:00+00:00", "places": "grid",
                   "cell_size": tdrive_cell}),
                 (f"Gowalla NYC, venues on cells of {gowalla_cell:g} m",
                  {"dataset": "gowalla", "places": "dataset"})]
        for data, base in cases:
            for method in METHODS:
                params = {**base, "method": method, "k": k, "demographics": "none",
                          "accept_composition_risk": "benchmark: methods side by side"}
                run = run_release(url, params, f"{base['dataset']}-{method}", TABLES)
                runs.append(run)
                rows.append(_row(data, method, run))
                print(rows[-1], flush=True)
    write_results("groups_realdata", {"k": k, "tdrive_cell_m": tdrive_cell,
                                      "gowalla_cell_m": gowalla_cell, "rows": rows,
                                      "runs": runs, "peak_rss_mib": round(peak_rss_mib(), 1)})
    print_markdown_table(COLUMNS, [tuple(row[c] for c in COLUMNS) for row in rows])


if __name__ == "__main__":
    arguments = [float(a) for a in sys.argv[1:]]
    main(int(arguments[0]) if arguments else 5,
         arguments[1] if len(arguments) > 1 else 1000.0,
         arguments[2] if len(arguments) > 2 else 500.0)
