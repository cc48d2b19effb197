"""Prepare's checks refuse, in seconds and with what to do, what would otherwise stop a run
mid-way: a window without data, trajectory groups' demographics on persons without the
grid's attributes, MOB without quasi-identifiers. The groups' default demographics follow
the data, and the release's parameters (its manifest) record which was used."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pandas as pd
import psycopg
import pytest
from pipeline_helpers import release_params, run_steps, schemas
from psycopg import sql

from anonymizers import cli
from anonymizers.errors import InputError
from anonymizers.pipeline import steps
from anonymizers.release.spec import ReleaseSpec


@pytest.fixture
def bare_city(db_url, small_city) -> str:
    """The small city's fixes without its persons file: no demographics at all."""
    from anonymizers.loading import load_dataset

    load_dataset(small_city[0], "bare", url=db_url)
    return "bare"


@pytest.fixture
def evening_city(db_url: str, small_city: tuple[Path, Path], tmp_path: Path
                 ) -> tuple[str, str, str]:
    """The small city whose persons carry their attributes only when they travel only
    before 19:00: a dataset with demographics whose evening window holds none. The
    dataset, and the evening window's start and end."""
    from anonymizers.loading import load_dataset

    points, persons = small_city
    fixes = pd.read_csv(points, usecols=["user_id", "t"])
    day = str(fixes["t"].min())[:10]
    start, end = f"{day}T19:00:00Z", f"{day}T23:59:59Z"
    late = set(fixes.loc[fixes["t"] >= start, "user_id"])  # one ISO format: text order
    assert late, "the city has no evening fixes"
    table = pd.read_csv(persons, dtype=str, keep_default_na=False)
    table.loc[table["user_id"].isin(late), ["age", "sex", "education", "income"]] = ""
    path = tmp_path / "persons.csv"
    table.to_csv(path, index=False)
    load_dataset(points, "evening", persons=path, url=db_url)
    return "evening", start, end


def _groups(dataset: str, **extra: object) -> dict[str, object]:
    return release_params(dataset, method="tg_nonoverlapping", **extra)


def test_a_window_beyond_the_data_is_refused_naming_the_datas_first_and_last_fix(
        loaded_city, conn):
    with pytest.raises(InputError, match=r"holds no fix of dataset 'city', whose fixes run "
                       r"from \d{4}-\d\d-\d\d \d\d:\d\d:\d\d to .* UTC"):
        steps.prepare(release_params(start="2030-01-01", end="2030-01-02"), None, "empty")
    assert schemas(conn, "work_") == []


def test_the_release_command_refuses_a_window_without_data_before_airflow(
        loaded_city, db_url, monkeypatch, capsys):
    monkeypatch.setenv("DATABASE_URL", db_url)
    monkeypatch.setattr("anonymizers.airflow_runner.run_dag", _no_airflow)
    started = time.monotonic()
    code = cli.main(["release", "--dataset", "city", "--method", "grid_kam_cut", "--k", "3",
                     "--start", "2030-01-01", "--end", "2030-01-02"])
    err = capsys.readouterr().err
    assert code == 2 and "holds no fix" in err, err
    assert time.monotonic() - started < 30


def _no_airflow(*_: object) -> None:
    raise AssertionError("the release reached Airflow with a window it should have refused")


def test_groups_default_demographics_is_none_without_the_grids_attributes(bare_city, conn):
    spec = run_steps(_groups(bare_city), until="demographic_classes")
    assert spec is not None and spec["params"]["demographics"] == "none"


def test_groups_default_demographics_is_the_ga_when_persons_carry_them(loaded_city):
    spec = steps.prepare(_groups(loaded_city), None, "with-persons")
    assert spec is not None and spec["params"]["demographics"] == "ga"


def test_groups_default_demographics_is_none_for_an_attribute_the_persons_lack(loaded_city):
    spec = steps.prepare(_groups(loaded_city, demographic_grid="height:0:250:25"), None,
                         "no-height")
    assert spec is not None and spec["params"]["demographics"] == "none"


@pytest.mark.parametrize("demographics", ["ga", "mondrian"])
def test_explicit_demographics_without_the_attributes_is_refused_in_prepare(
        bare_city, conn, demographics):
    with pytest.raises(InputError, match=r"needs persons with age .* --persons .* "
                       r"demographics=none"):
        steps.prepare(_groups(bare_city, demographics=demographics), None, "refused")
    assert schemas(conn, "work_") == []


def test_groups_default_demographics_is_none_in_a_window_whose_persons_carry_none(
        evening_city, caplog):
    dataset, start, end = evening_city
    with caplog.at_level(logging.INFO):
        spec = steps.prepare(_groups(dataset, start=start, end=end), None, "evening")
    assert spec is not None and spec["params"]["demographics"] == "none"
    said = [r.getMessage() for r in caplog.records if "demographics=auto" in r.getMessage()]
    assert len(said) == 1 and "0 of the" in said[0] and "travel in the window" in said[0] \
        and "so demographics=none" in said[0], said
    # The whole day holds them: the dataset's demographics are used there.
    whole_day = steps.prepare(_groups(dataset, end=end), None, "whole-day")
    assert whole_day is not None and whole_day["params"]["demographics"] == "ga"


@pytest.mark.parametrize("demographics", ["ga", "mondrian"])
def test_explicit_demographics_in_a_window_whose_persons_carry_none_is_refused_in_prepare(
        evening_city, conn, demographics):
    dataset, start, end = evening_city
    with pytest.raises(InputError, match=r"needs persons with age in the window .* 0 of the "
                       r"\d+ persons .* travel in the window .* demographics=none"):
        steps.prepare(_groups(dataset, start=start, end=end, demographics=demographics),
                      None, "refused")
    assert schemas(conn, "work_") == []


def test_groups_default_places_is_resolved_in_prepare_and_recorded(loaded_city, caplog,
                                                                   conn: psycopg.Connection):
    with caplog.at_level(logging.INFO):
        spec = run_steps(_groups(loaded_city, demographics="none"), until="manifest")
    assert spec is not None and spec["params"]["places"] == "grid"
    assert any("places=auto: dataset 'city' has no places file" in r.getMessage()
               and "so places=grid" in r.getMessage() for r in caplog.records)
    build = ReleaseSpec.from_dict(spec).build_schema
    manifest = conn.execute(sql.SQL("SELECT parameters FROM {}.manifest").format(
        sql.Identifier(build))).fetchone()
    assert manifest is not None and manifest[0]["places"] == "grid"


def test_places_dataset_without_places_is_refused_in_prepare(loaded_city, conn):
    with pytest.raises(InputError, match=r"has no places: load it with .* places=grid"):
        steps.prepare(_groups(loaded_city, places="dataset"), None, "no-places")
    assert schemas(conn, "work_") == []


def test_the_release_command_says_which_demographics_it_chose(bare_city, db_url, monkeypatch,
                                                              capsys):
    monkeypatch.setenv("DATABASE_URL", db_url)
    monkeypatch.setattr("anonymizers.airflow_runner.run_dag", _stop_at_airflow)
    with pytest.raises(_ReachedAirflow):
        cli.main(["release", "--dataset", bare_city, "--method", "tg_overlapping", "--k", "3"])
    assert "demographics=none" in capsys.readouterr().err


class _ReachedAirflow(Exception):
    pass


def _stop_at_airflow(*_: object) -> None:
    raise _ReachedAirflow


def test_mob_without_quasi_identifiers_is_refused_in_prepare_with_the_command(loaded_city,
                                                                             conn):
    with pytest.raises(InputError, match="anonymizers qids generate --dataset city"):
        steps.prepare(release_params(method="mob_symmetric", cell_size=100.0), None, "no-qids")
    assert schemas(conn, "work_") == []
