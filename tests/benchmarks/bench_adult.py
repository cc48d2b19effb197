"""Seed 004 §5.2 on the UCI Adults data: the GA's Kullback penalty against Mondrian's.

Not collected by pytest. Run from the repository root::

    python -m tests.benchmarks.bench_adult [k ...] [--generations 40] [--population 40]

Figures go to ``tests/benchmarks/results/adult.json``. The data as §5.2 prepares them: the
30,162 records of adult.data without a missing value in the eight attributes of Mondrian's
paper (LeFevre et al. 2006: age, workclass, education, marital-status, occupation, race, sex,
native-country), every value in a continuous ordering (education by education-num, the
order of Iyengar 2002; the other categorical attributes by their codes in alphabetical
order), one atomic interval per value (ages 17-90 a year each). For every k: the Kullback
penalty (eq. 30) and the discernability metric (eq. 32) of the GA (population 40, 40
generations, crossover and mutation rates 0.8: the thesis' parameters) and of strict
Mondrian with the thesis' modification, their times, and Mondrian's normalised certainty
penalty (NCP: per record and attribute, the extent of its class's values over the
attribute's range, averaged), to set beside the 12.19 % a public Mondrian
(qiyuangong/Mondrian) reports for strict Mondrian at k = 10 on the same records (it has no
generalization hierarchies either, but numbers categorical values in order of first
appearance in the file where we sort them alphabetically, so its ranges of codes are not
ours).

References
----------
.. [1] Nordström, M. Methods for Anonymizing Patterns of Human Mobility. MSc thesis, Chalmers
   2012, §5.2, Figures 18-19.
.. [2] LeFevre, DeWitt, Ramakrishnan. Mondrian multidimensional k-anonymity. ICDE 2006.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

from anonymizers.families.groups.demographics import (
    DemographicClasses,
    atomic_grid,
    classes_kullback_penalty,
    discernability_metric,
    genetic_demographic_classes,
    mondrian_demographic_classes,
)
from tests.benchmarks._common import peak_rss_mib, write_results

ADULT = Path(__file__).resolve().parents[3] / "shared" / "data" / "uci_adult" / "adult.data"
COLUMNS = ("age", "workclass", "fnlwgt", "education", "education_num", "marital_status",
           "occupation", "relationship", "race", "sex", "capital_gain", "capital_loss",
           "hours_per_week", "native_country", "income")
CATEGORICAL = ("workclass", "marital_status", "occupation", "race", "sex", "native_country")


def adult_points() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(n, 8) values, (8, 2) domain and (8,) bins of the complete Adults records."""
    frame = pd.read_csv(ADULT, names=COLUMNS, skipinitialspace=True)
    frame = frame.replace("?", np.nan).dropna(subset=["age", "education", *CATEGORICAL])
    columns = [frame["age"].to_numpy(float), frame["education_num"].to_numpy(float)]
    domain, bins = [(17.0, 91.0), (1.0, 17.0)], [74, 16]
    for name in CATEGORICAL:
        codes = pd.Categorical(frame[name], categories=sorted(frame[name].unique())).codes
        columns.append(codes.astype(float))
        domain.append((0.0, float(codes.max() + 1)))
        bins.append(int(codes.max() + 1))
    return np.stack(columns, axis=1), np.array(domain), np.array(bins, np.int64)


def ncp(points: np.ndarray, classes: DemographicClasses) -> float:
    """Normalised certainty penalty of the classes: per record and attribute, its class's
    extent (max - min of the members' values) over the attribute's range, averaged."""
    span = points.max(axis=0) - points.min(axis=0)
    member = classes.assignment >= 0
    frame = pd.DataFrame(points[member]).assign(c=classes.assignment[member])
    extent = (frame.groupby("c").max() - frame.groupby("c").min()).to_numpy()
    per_record = extent[classes.assignment[member]] / np.where(span > 0, span, 1)
    return float(per_record.mean())


def run(k: int, points: np.ndarray, grid, population: int, generations: int) -> dict:
    started = time.perf_counter()
    mondrian = mondrian_demographic_classes(points, grid, k)
    mondrian_s = time.perf_counter() - started
    started = time.perf_counter()
    ga = genetic_demographic_classes(points, grid, k, population=population,
                                     generations=generations, seed=0)
    ga_s = time.perf_counter() - started
    figures = {
        "k": k,
        "ga_kullback": classes_kullback_penalty(ga.classes),
        "mondrian_kullback": classes_kullback_penalty(mondrian),
        "ga_discernability": discernability_metric(ga.classes),
        "mondrian_discernability": discernability_metric(mondrian),
        "ga_classes": ga.classes.n_classes, "ga_suppressed": ga.classes.n_suppressed,
        "mondrian_classes": mondrian.n_classes,
        "mondrian_ncp": ncp(points, mondrian),
        "ga_initial_best_kullback": float(ga.best_penalty[0]),
        "ga_s": round(ga_s, 1), "mondrian_s": round(mondrian_s, 2),
        "peak_rss_mib": round(peak_rss_mib(), 1)}
    print(figures, flush=True)
    return figures


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ks", nargs="*", type=int, default=[100, 50, 25, 10, 5, 2])
    parser.add_argument("--population", type=int, default=40)
    parser.add_argument("--generations", type=int, default=40)
    args = parser.parse_args()
    values, domain, bins = adult_points()
    grid = atomic_grid(domain, bins)
    print(f"{values.shape[0]} records, {grid.n_cells:.3g} atomic intervals", flush=True)
    runs = [run(k, values, grid, args.population, args.generations) for k in args.ks]
    write_results("adult", {
        "command": "bench_adult", "records": int(values.shape[0]),
        "atomic_intervals": grid.n_cells, "population": args.population,
        "generations": args.generations, "public_mondrian_ncp_k10_strict": 0.1219,
        "machine": {"cpus": os.cpu_count(), "load_average_at_end": os.getloadavg()},
        "runs": runs})
