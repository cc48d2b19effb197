"""Run scikit-mobility 1.3.1's privacy attacks on a CSV and print per-user risks as JSON.

Runs in the side environment made by ``tests/skmob_env.py`` (skmob's pins conflict with
ours, so it is never a dependency of the package): it imports nothing of ``anonymizers``.
Usage: ``python run_skmob.py DATA.csv SPEC.json``; the spec lists the attacks to run as
``{"name": ..., "class": ..., "knowledge_length": j, "kwargs": {...}}``.  Prints
``{"name": {"uid": risk, ...}, ..., "seconds": {"name": s}}``.
"""

import json
import sys
import time

import pandas as pd
from skmob import TrajDataFrame
from skmob.privacy import attacks


def main(data_path: str, spec_path: str) -> None:
    frame = pd.read_csv(data_path, parse_dates=["datetime"])
    tdf = TrajDataFrame(frame, latitude="lat", longitude="lng", datetime="datetime",
                        user_id="uid")
    out: dict = {"seconds": {}}
    with open(spec_path) as spec_file:
        spec = json.load(spec_file)
    for attack in spec:
        model = getattr(attacks, attack["class"])(attack["knowledge_length"],
                                                 **attack.get("kwargs", {}))
        started = time.perf_counter()
        risks = model.assess_risk(tdf.copy())
        out["seconds"][attack["name"]] = time.perf_counter() - started
        out[attack["name"]] = {str(uid): float(risk)
                               for uid, risk in zip(risks["uid"], risks["risk"], strict=True)}
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
