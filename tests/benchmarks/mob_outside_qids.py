"""What MOB publishes outside every QID, measured: information loss against the attack suite.

One 6-hour T-Drive window (2008-02-03 00:00-06:00 UTC, 600-taxi subset), QIDs ``graph`` of
at most 20 time points (seed 1), mob_symmetric for k in {2, 4, 8, 16}, every value of
``outside_qids`` (``cell`` is the paper's) and of ``presence`` (``published`` is the
paper's). Per release: the family's metrics (avg IL, class coverage, range-query
distortions, blank objects), the share of rows published with a location (not the
withheld area of use) and their mean area, the verifier's verdict, whether the shared
gate would refuse it (an attack above 1/k: every release here is run with
accept_attack_risk, so that it is measured), and every attack of the suite (prosecutor
max and mean at each model's riskiest knowledge length, with the settings below: lighter
than ``anonymizers attack``'s defaults, to fit 32 releases in about 40 minutes).

Writes tests/benchmarks/results/mob_outside_qids.json and prints a Markdown table.
Run: .venv/bin/python tests/benchmarks/mob_outside_qids.py [k,k,...] [rule,...] [presence,...]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import psycopg
from _common import print_markdown_table, scratch_database, write_results
from _release_runs import run_release
from psycopg import sql

WINDOW = {"start": "2008-02-03T00:00:00Z", "end": "2008-02-03T06:00:00Z"}
TDRIVE = next(p for p in (Path(__file__).resolve().parents[2].parent / "shared",
                          Path("/work/shared")) if (p / "data").is_dir()) \
    / "data" / "tdrive_600" / "points.csv.gz"
KS = (2, 4, 8, 16)
RULES = ("cell", "coarse", "hiding_set", "withheld")
PRESENCE = ("hidden", "published")
METRICS = ("mob_information_loss_avg", "mob_class_coverage",
           "mob_possibly_inside_distortion", "mob_definitely_inside_distortion")
COLUMNS = ("k", "outside_qids", "presence", "avg IL", "coverage", "possibly-in dist.",
           "definitely-in dist.", "blank objects", "located share", "located mean area (km²)",
           "verified", "gate", "worst attack (max)", "location max / mean",
           "location_frequency max / mean", "yarovoy_matching max")


def _settings() -> Any:
    from anonymizers.attacks.release import AttackSettings

    return AttackSettings(lengths=(1, 2, 4), max_targets=100, max_instances=100)


def _located(conn: psycopg.Connection, release: str) -> dict[str, float]:
    """Share of positions with a location (not the withheld region) and their mean area."""
    box = conn.execute(sql.SQL("SELECT max(ST_Area(geom)) FROM {}.positions").format(
        sql.Identifier(release))).fetchone()[0]
    row = conn.execute(sql.SQL(
        "SELECT count(*), count(*) FILTER (WHERE ST_Area(geom) < %s OR %s < 1e10), "
        "avg(ST_Area(geom)) FILTER (WHERE ST_Area(geom) < %s OR %s < 1e10) "
        "FROM {}.positions").format(sql.Identifier(release)), (box, box, box, box)).fetchone()
    return {"positions": int(row[0]), "located": int(row[1]),
            "located_share": row[1] / row[0] if row[0] else 0.0,
            "located_mean_area_km2": float(row[2] or 0.0) / 1e6}


def _attack(conn: psycopg.Connection, release: str) -> dict[str, dict[str, float]]:
    from anonymizers.attacks.release import attack_release

    attack = attack_release(conn, release, _settings())
    worst: dict[str, dict[str, float]] = {}
    for name in dict.fromkeys(run.model for run in attack.result.runs):
        summary = attack.result.worst(name)
        worst[name] = {"prosecutor_max": summary["prosecutor_max"],
                       "prosecutor_mean": summary["marketer"],
                       "knowledge_length": summary["knowledge_length"]}
    return worst


def _one(url: str, k: int, rule: str, presence: str) -> dict[str, Any]:
    from anonymizers.verifiers import verify_release

    params = {"dataset": "tdrive", "method": "mob_symmetric", "k": k, **WINDOW,
              "outside_qids": rule, "presence": presence,
              "accept_composition_risk": "benchmark: one window, every outside_qids rule, "
              "presence rule and k",
              "accept_attack_risk": "benchmark: the paper's options are measured, not "
              "published"}
    figures = run_release(url, params, f"outside-{rule}-{presence}-{k}", tables=())
    with psycopg.connect(url) as conn:
        figures["located"] = _located(conn, figures["release"])
        figures["verified"] = verify_release(conn, figures["release"]).passed
        started = time.perf_counter()
        figures["attacks"] = _attack(conn, figures["release"])
        figures["attack_s"] = round(time.perf_counter() - started, 1)
    # What the gate saw: the suite the metrics step ran (AT_RELEASE settings).
    figures["refused_by_gate"] = max(
        value for name, value in figures["metrics"].items()
        if name.startswith("attack_") and name.endswith("_prosecutor_max")) > 1 / k + 1e-12
    return {"k": k, "outside_qids": rule, "presence": presence, **figures}


def _row(run: dict[str, Any]) -> tuple:
    m, attacks = run["metrics"], run["attacks"]
    worst = max(attacks.items(), key=lambda item: item[1]["prosecutor_max"])

    def pair(name: str) -> str:
        a = attacks.get(name)
        return "-" if a is None else f"{a['prosecutor_max']:.3f} / {a['prosecutor_mean']:.3f}"
    shown = (f"{m.get(name, float('nan')):.4f}" for name in METRICS)
    return (run["k"], run["outside_qids"], run["presence"], *shown,
            int(m.get("mob_objects_blank", 0)),
            f"{run['located']['located_share']:.3f}",
            f"{run['located']['located_mean_area_km2']:.2f}",
            "yes" if run["verified"] else "no",
            "refused" if run["refused_by_gate"] else "passes",
            f"{worst[0]} {worst[1]['prosecutor_max']:.3f}",
            pair("location"), pair("location_frequency"),
            f"{attacks.get('yarovoy_matching', {}).get('prosecutor_max', float('nan')):.3f}")


def main(ks: tuple[int, ...] = KS, rules: tuple[str, ...] = RULES,
         presences: tuple[str, ...] = PRESENCE) -> None:
    from anonymizers.families.mob.qids import generate_and_store_qids
    from anonymizers.loading import load_dataset

    runs, rows = [], []
    with scratch_database() as url:
        load_dataset(TDRIVE, "tdrive", url=url)
        generate_and_store_qids("tdrive", "graph", 20, seed=1, url=url)
        for k in ks:
            for rule in rules:
                for presence in presences:
                    runs.append(_one(url, k, rule, presence))
                    rows.append(_row(runs[-1]))
                    print(" | ".join(map(str, rows[-1])), flush=True)
                    write_results("mob_outside_qids", {
                        "window": WINDOW, "qids": "graph, max 20, seed 1",
                        "attack_settings": vars(_settings()), "runs": runs})
    print_markdown_table(COLUMNS, rows)


if __name__ == "__main__":
    main(tuple(int(k) for k in sys.argv[1].split(",")) if len(sys.argv) > 1 else KS,
         tuple(sys.argv[2].split(",")) if len(sys.argv) > 2 else RULES,
         tuple(sys.argv[3].split(",")) if len(sys.argv) > 3 else PRESENCE)
