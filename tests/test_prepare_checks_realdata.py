"""Prepare's checks on a day of real T-Drive taxis (no persons file, no QIDs): each refusal
comes from the release command in seconds, before Airflow starts, and the groups' default
demographics resolve to none."""

from __future__ import annotations

import gzip
import time
from pathlib import Path

import pytest
from conftest import SHARED_DATA

from anonymizers import cli

TDRIVE = SHARED_DATA / "tdrive_600" / "points.csv.gz"
DAY = "2008-02-05"


def _tdrive_day(folder: Path) -> Path:
    """The T-Drive fixes of one day, without the file's (0,0) and out-of-range fixes."""
    if not TDRIVE.is_file():
        pytest.skip(f"{TDRIVE} is absent")
    path = folder / "tdrive_day.csv"
    with gzip.open(TDRIVE, "rt") as source, path.open("w") as out:
        out.write(next(source))
        for line in source:
            fields = line.rstrip("\n").split(",")
            lon, lat = float(fields[3]), float(fields[4])
            if fields[2].startswith(DAY) and 100 < lon < 130 and 20 < lat < 50:
                out.write(line)
    return path


class _ReachedAirflow(Exception):
    pass


def _stop_at_airflow(*_: object) -> None:
    raise _ReachedAirflow


@pytest.mark.realdata
def test_each_check_answers_in_seconds_before_airflow(db_url, tmp_path, monkeypatch, capsys):
    from anonymizers.loading import load_dataset

    load_dataset(_tdrive_day(tmp_path), "tdrive", url=db_url)
    monkeypatch.setenv("DATABASE_URL", db_url)
    monkeypatch.setattr("anonymizers.airflow_runner.run_dag", _stop_at_airflow)
    release = ["release", "--dataset", "tdrive", "--k", "5"]
    refusals = {
        "window without data": (["--method", "grid_kam_cut", "--start", "2008-03-01",
                                 "--end", "2008-03-02"], "holds no fix"),
        "ga without persons": (["--method", "tg_nonoverlapping", "--param",
                                "demographics=ga"], "needs persons with age"),
        "MOB without QIDs": (["--method", "mob_symmetric"], "anonymizers qids generate"),
    }
    for name, (argv, message) in refusals.items():
        started = time.monotonic()
        code = cli.main([*release, *argv])
        seconds = time.monotonic() - started
        err = capsys.readouterr().err
        with capsys.disabled():
            print(f"{name}: exit {code} in {seconds:.2f} s: {err.strip()}")
        assert code == 2 and message in err and seconds < 10, err
    started = time.monotonic()
    with pytest.raises(_ReachedAirflow):
        cli.main([*release, "--method", "tg_nonoverlapping"])
    err = capsys.readouterr().err
    with capsys.disabled():
        print(f"default demographics: {time.monotonic() - started:.2f} s to Airflow: {err}")
    assert "demographics=none" in err
