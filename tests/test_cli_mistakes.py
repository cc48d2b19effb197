"""A user's mistake on any subcommand is one line on stderr and exit 2, never a traceback:
impossible dates, folders that cannot be written, files that are not there, a database
URL that leads nowhere, names that do not exist."""

from __future__ import annotations

import pytest

from anonymizers import cli

BAD_URL = "postgresql://nobody@/x?host=/nonexistent"

# (arguments, what the database is: "bad" URL, "empty" database, or "city" loaded)
MISTAKES: list[tuple[list[str], str]] = [
    (["db", "up"], "bad"),
    (["generate", "--out", "/proc/x/city.csv", "--points", "100"], "bad"),
    (["load", "/nope.csv", "--dataset", "x"], "bad"),
    (["load", "/nope.csv", "--dataset", "x"], "empty"),
    (["qids", "load", "/nope.csv", "--dataset", "x"], "empty"),
    (["qids", "generate", "--dataset", "nope"], "empty"),
    (["qids", "generate", "--dataset", "x"], "bad"),
    (["release", "--dataset", "city", "--method", "grid_kam_cut", "--k", "3",
      "--start", "2008-02-31"], "city"),
    (["release", "--dataset", "city", "--method", "grid_kam_cut", "--k", "3",
      "--end", "tomorrow"], "city"),
    (["release", "--dataset", "city", "--method", "grid_kam_cut", "--k", "3"], "bad"),
    (["verify", "release_nope"], "empty"),
    (["verify", "release_nope"], "bad"),
    (["report", "release_nope", "--out", "/proc/x"], "empty"),
    (["report", "release_nope", "--out", "OUT"], "empty"),
    (["attack", "release_nope"], "empty"),
    (["attack", "release_nope", "--differencing"], "bad"),
    (["compare", "--dataset", "city", "--k", "3", "--start", "2008-02-31", "--out", "OUT"],
     "city"),
    (["compare", "--dataset", "city", "--k", "3", "--out", "/proc/x"], "city"),
    (["releases"], "bad"),
    (["cleanup", "--older-than", "a week"], "bad"),
    (["cleanup", "--older-than", "7"], "bad"),
    (["cleanup", "--older-than", "30m"], "empty"),
    (["cleanup"], "bad"),
    (["airflow", "up"], "bad"),
    (["demo", "--points", "100"], "bad"),
]


@pytest.mark.parametrize(("argv", "database"), MISTAKES,
                         ids=[f"{' '.join(a)} [{d}]" for a, d in MISTAKES])
def test_a_users_mistake_is_one_line_and_exit_2(argv, database, request, monkeypatch, capsys,
                                                 tmp_path):
    if database == "bad":
        monkeypatch.setenv("DATABASE_URL", BAD_URL)
    else:
        if database == "city":
            request.getfixturevalue("loaded_city")
        monkeypatch.setenv("DATABASE_URL", request.getfixturevalue("db_url"))
    monkeypatch.setattr("anonymizers.airflow_runner.run_dag", _no_airflow)
    argv = [str(tmp_path / "out") if arg == "OUT" else arg for arg in argv]
    code = cli.main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("error: "), err


def _no_airflow(*_: object) -> None:
    raise AssertionError("the mistake reached Airflow: it should have been refused before")
