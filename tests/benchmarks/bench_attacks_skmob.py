"""The attack suite against scikit-mobility 1.3.1: same risks, and how much faster.

Not collected by pytest. Run from the repository root::

    python -m tests.benchmarks.bench_attacks_skmob [--users 40] [--points 12] [--locations 6]

Both sides attack the same tabular trajectory set (tests/skmob_env.py's generator: one
month, ``locations`` sites, no ties in time) with every model at knowledge lengths 1-3;
skmob runs in its side environment (made on first use), ours in this process with every
instance evaluated (no sampling), so the two compute the same maximum. For each attack:
both times, their ratio, and whether every user's risk is equal. LocationTime runs at
"Day" precision and HomeWork on persons with at most two places (where skmob's models and
ours coincide; README). Figures go to ``tests/benchmarks/results/attacks_skmob.json``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.benchmarks._common import write_results
from tests.skmob_env import SKMOB_CLASSES, ensure_skmob, make_frame, our_risks, run_skmob


def _cases(lengths: tuple[int, ...]) -> list[tuple[str, str, int, dict[str, Any]]]:
    cases = []
    for model in SKMOB_CLASSES:
        if model == "home_work":
            continue
        options: dict[str, Any] = {"time_precision": "Day"} if model == "location_time" else {}
        cases += [(f"{model}_{j}", model, j, options) for j in lengths]
    return cases


def _measure(frame, cases, python: Path) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "data.csv"
        frame.to_csv(data, index=False)
        spec = [{"name": n, "class": SKMOB_CLASSES[m], "knowledge_length": j, "kwargs": o}
                for n, m, j, o in cases]
        theirs = run_skmob(python, data, spec, Path(folder))
    rows = []
    for name, model, j, options in cases:
        started = time.perf_counter()
        ours = our_risks(frame, model, j, **dict(options))
        seconds = time.perf_counter() - started
        equal = ours.keys() == theirs[name].keys() and all(
            abs(ours[u] - theirs[name][u]) <= 1e-12 for u in ours)
        rows.append({"attack": name, "skmob_s": round(theirs["seconds"][name], 4),
                     "ours_s": round(seconds, 5),
                     "ratio": round(theirs["seconds"][name] / seconds, 1),
                     "equal": equal})
        print(f"{name:26s} skmob {theirs['seconds'][name]:8.3f} s  ours {seconds:8.5f} s  "
              f"x{rows[-1]['ratio']:8.1f}  equal={equal}", flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=40)
    parser.add_argument("--points", type=int, default=12)
    parser.add_argument("--locations", type=int, default=6)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    python = ensure_skmob()
    frame = make_frame(args.seed, args.users, args.points, args.locations)
    rows = _measure(frame, _cases((1, 2, 3)), python)
    home = make_frame(args.seed + 1, args.users, args.points, args.locations,
                      max_places_per_user=2)
    rows += _measure(home, [("home_work", "home_work", 2, {})], python)
    total_skmob = sum(r["skmob_s"] for r in rows)
    total_ours = sum(r["ours_s"] for r in rows)
    figures = {"users": args.users, "fixes": len(frame), "locations": args.locations,
               "seed": args.seed, "attacks": rows, "all_equal": all(r["equal"] for r in rows),
               "skmob_s": round(total_skmob, 2), "ours_s": round(total_ours, 4),
               "ratio_total": round(total_skmob / total_ours, 1),
               "ratio_min": min(r["ratio"] for r in rows)}
    print(f"total: skmob {total_skmob:.1f} s, ours {total_ours:.3f} s, "
          f"x{figures['ratio_total']}; slowest ratio x{figures['ratio_min']}; "
          f"all equal: {figures['all_equal']}")
    print(write_results("attacks_skmob", figures))


if __name__ == "__main__":
    main()
