"""Declared scheduled releases: the schedules file, checked against the registry's
ParamSpecs; one DAG per entry, wired as its family's; the family DAGs manual; `airflow up`
refusing a wrong file before starting anything; refusals of a DAG run naming its params.

The scheduler itself runs a declared schedule in tests/test_airflow_service.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from anonymizers import cli
from anonymizers.schedules import (
    SCHEDULES_ENV,
    ScheduleError,
    check_retired_settings,
    load_schedules,
)

GOOD = """
# What runs when: one table per scheduled release.
[schedules.city_grid]
dataset = "city"
method = "grid_kam_cut"
k = 3
schedule = "0 6 * * *"
start_date = 2026-03-02
end_date = 2026-03-04T06:00:00Z
catchup = true
accept_precision_risk = "a coarse city, reviewed"
[schedules.city_grid.params]
cell_size = 40
count_interval = 2

[schedules.mob_six_hours]
dataset = "city"
method = "mob_symmetric"
k = 4
schedule = "@daily"
window = 6
start_date = 2026-03-02T00:00:00
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "schedules.toml"
    path.write_text(text)
    return path


def test_a_declaration_is_read_with_typed_values_and_defaults(tmp_path):
    grid, mob = load_schedules(_write(tmp_path, GOOD))
    assert grid.dag_id == "scheduled_city_grid" and grid.family == "generalization"
    assert grid.params == {"cell_size": 40.0, "count_interval": 2}
    assert grid.conf() == {"dataset": "city", "method": "grid_kam_cut", "k": 3,
                           "cell_size": 40.0, "count_interval": 2,
                           "accept_precision_risk": "a coarse city, reviewed"}
    assert grid.start_date.isoformat() == "2026-03-02T00:00:00+00:00"
    assert grid.end_date is not None and grid.end_date.hour == 6 and grid.catchup
    assert grid.window_hours is None  # the data interval
    assert mob.window_hours == 6.0 and not mob.catchup and mob.end_date is None
    assert mob.start_date.tzinfo is not None  # naive: UTC
    assert load_schedules(tmp_path / "absent.toml") == []
    assert load_schedules(_write(tmp_path, "# nothing declared yet\n")) == []


def _entry(**changes: object) -> str:
    entry = {"dataset": '"city"', "method": '"grid_kam_cut"', "k": "3",
             "schedule": '"@daily"', "start_date": "2026-03-02"}
    entry.update({key: str(value) for key, value in changes.items()})
    lines = [f"{key} = {value}" for key, value in entry.items() if value != "DROP"]
    return "[schedules.daily]\n" + "\n".join(lines) + "\n"


@pytest.mark.parametrize(("text", "says"), [
    (_entry() + "[schedules.daily.params]\ncellsize = 500\n",
     r"schedule 'daily': params \['cellsize'\] are not parameters of grid_kam_cut; its "
     r"parameters: cell_size"),
    (_entry() + "[schedules.daily.params]\ncell_size = -1\n",
     "schedule 'daily': parameter cell_size must be positive"),
    (_entry(k=1), "schedule 'daily': parameter k must be >= 2"),
    (_entry(k='"3"'), r"schedule 'daily': k = '3' must be an int"),
    (_entry(method='"kam_cutt"'), "schedule 'daily': unknown method 'kam_cutt'; choose one of"),
    (_entry(schedule='"every day"'), "schedule 'daily': schedule = 'every day' is neither a "
                                     "cron expression"),
    (_entry(schedule='"@once"'), "is neither a cron expression"),
    (_entry(window='"day"'), r"schedule 'daily': window = 'day' must be \"interval\""),
    (_entry(window=0), "window = 0 must be"),
    (_entry(start_date='"2026-03-02"'), "start_date = '2026-03-02' must be a TOML date"),
    (_entry(end_date="2026-03-01"), "end_date 2026-03-01 00:00 is not after start_date"),
    (_entry(start_date="DROP"), "schedule 'daily': missing start_date"),
    (_entry(accept_composition_risk='" "'), "accept_composition_risk must be the reason"),
    (_entry(cell_size=500), r"unknown key\(s\) \['cell_size'\].*\[schedules.daily.params\]"),
    (_entry(catchup='"yes"'), "catchup = 'yes' must be true or false"),
    (_entry().replace("schedules.daily", "schedules.Daily-Grid"),
     "schedule 'Daily-Grid': a name is lower-case letters"),
    ("[schedule.daily]\n", r"unknown top-level key\(s\) \['schedule'\]"),
    ("[schedules.daily\n", "not valid TOML"),
])
def test_a_wrong_declaration_is_refused_naming_the_entry_and_the_key(tmp_path, text, says):
    path = _write(tmp_path, text)
    with pytest.raises(ScheduleError, match=says) as refused:
        load_schedules(path)
    assert str(refused.value).startswith(str(path))


def test_the_retired_variables_are_refused_with_what_replaces_them():
    check_retired_settings({"ANONYMIZERS_SCHEDULES": "/x.toml", "ANONYMIZERS_POOL": "p"})
    with pytest.raises(ScheduleError, match=r"ANONYMIZERS_GROUPS_PARAMS, ANONYMIZERS_SCHEDULE "
                                            r"no longer schedule\(s\) anything: declare"):
        check_retired_settings({"ANONYMIZERS_SCHEDULE": "@daily",
                                "ANONYMIZERS_GROUPS_PARAMS": "{}"})


def test_airflow_up_refuses_a_wrong_file_in_one_line_before_starting_anything(
        tmp_path, monkeypatch, capsys):
    from anonymizers.airflow_service import AirflowService

    def started(*_: object, **__: object) -> None:
        raise AssertionError("airflow up started something")

    monkeypatch.setattr(AirflowService, "up", started)
    monkeypatch.setattr(cli, "_ensure_database", started)
    monkeypatch.setenv(SCHEDULES_ENV, str(_write(tmp_path, _entry(k=1))))
    assert cli.main(["airflow", "up"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "parameter k" in err[0], err


def test_airflow_schedules_lists_what_is_declared(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(SCHEDULES_ENV, str(_write(tmp_path, GOOD)))
    assert cli.main(["airflow", "schedules"]) == 0
    out = capsys.readouterr().out
    assert "scheduled_city_grid: city by grid_kam_cut (k=3, cell_size=40.0" in out
    assert "accepts accept_precision_risk" in out
    assert "scheduled_mob_six_hours" in out and "the 6 h before its end" in out
    monkeypatch.setenv(SCHEDULES_ENV, str(tmp_path / "absent.toml"))
    assert cli.main(["airflow", "schedules"]) == 0
    assert "(none)" in capsys.readouterr().out


_DAGS = """
import json, runpy, sys
from anonymizers.airflow_runner import configure_airflow, dags_folder
configure_airflow()
found = {}
for name in ("generalization.py", "mob.py", "scheduled.py"):
    for dag in runpy.run_path(str(dags_folder() / name)).values():
        if hasattr(dag, "timetable") and not dag.dag_id.endswith("_windows"):
            found[dag.dag_id] = {
                "timetable": type(dag.timetable).__name__,
                "expression": getattr(dag.timetable, "expression", None),
                "start_date": str(dag.start_date), "end_date": str(dag.end_date),
                "catchup": dag.catchup, "params": {n: dag.params[n] for n in dag.params},
                "edges": sorted([t, d] for t in dag.task_ids
                                for d in dag.get_task(t).downstream_task_ids)}
print(json.dumps(found, default=str))
"""


def _dags(**env: str) -> dict:
    """The DAGs the files build under ``env``, read in a child process (a DAG built here with
    other settings breaks later dag.test() runs of the same dag_id in this process)."""
    result = subprocess.run([sys.executable, "-c", _DAGS], env={**os.environ, **env},
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


def test_each_declared_schedule_is_a_dag_wired_as_its_family_and_families_are_manual(
        tmp_path):
    dags = _dags(**{SCHEDULES_ENV: str(_write(tmp_path, GOOD)),
                    # retired: ignored by the DAG files (and refused by `airflow up`)
                    "ANONYMIZERS_SCHEDULE": "@hourly"})
    for family in ("generalization", "mob"):
        assert dags[family]["timetable"] == "NullTimetable", family
    grid, mob = dags["scheduled_city_grid"], dags["scheduled_mob_six_hours"]
    assert grid["timetable"] == "CronDataIntervalTimetable" and grid["expression"] == "0 6 * * *"
    assert grid["start_date"] == "2026-03-02 00:00:00+00:00"
    assert grid["end_date"] == "2026-03-04 06:00:00+00:00" and grid["catchup"]
    assert grid["edges"] == dags["generalization"]["edges"]
    assert mob["edges"] == dags["mob"]["edges"] and mob["expression"] == "0 0 * * *"
    assert {name: grid["params"][name] for name in ("dataset", "method", "k", "cell_size",
                                                    "accept_precision_risk")} == {
        "dataset": "city", "method": "grid_kam_cut", "k": 3, "cell_size": 40.0,
        "accept_precision_risk": "a coarse city, reviewed"}
    nothing = _dags(**{SCHEDULES_ENV: str(tmp_path / "absent.toml")})
    assert not [dag_id for dag_id in nothing if dag_id.startswith("scheduled_")]


def test_a_wrong_file_fails_the_import_of_the_scheduled_dags_only(tmp_path):
    bad = str(_write(tmp_path, _entry(k=1)))
    probe = ("from airflow.dag_processing.dagbag import DagBag; "
             "from anonymizers.airflow_runner import configure_airflow, dags_folder; "
             "configure_airflow(); bag = DagBag(dag_folder=str(dags_folder())); "
             "print(sorted(bag.import_errors.values())); print(sorted(bag.dag_ids))")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            env={**os.environ, SCHEDULES_ENV: bad}, check=True)
    errors, dag_ids = result.stdout.strip().splitlines()[-2:]
    assert "daily" in errors and "parameter k must be >= 2" in errors  # (quoted by repr)
    assert "'generalization'" in dag_ids


@pytest.mark.parametrize("command_line", [True, False], ids=["command", "dag-run"])
def test_a_refusal_names_the_flag_on_the_command_line_and_the_param_in_a_dag_run(
        loaded_city, conn, command_line):
    """A window floor below the default needs the operator's composition risk: a DAG run
    (the scheduler's, dag.test()'s) is told its param; the command its flag."""
    from anonymizers.airflow_runner import run_dag
    from anonymizers.errors import InputError

    conf = {"dataset": loaded_city, "method": "grid_kam_cut", "k": 3, "cell_size": 500.0,
            "min_window_hours": 0.5}
    with pytest.raises(InputError, match=r"min_window_hours=0\.5 is below the default") as refused:
        run_dag("generalization", conf, command_line=command_line)
    said = str(refused.value)
    if command_line:
        assert 'give --accept-composition-risk "<reason>"' in said, said
    else:
        assert 'set the DAG param accept_composition_risk to "<reason>"' in said, said
        assert "--accept" not in said, said
    assert "ANONYMIZERS_CALLER" not in os.environ


def test_the_documented_example_is_a_valid_declaration(tmp_path):
    page = Path(__file__).resolve().parents[1] / "docs/pages/operator/scheduling.md"
    example = page.read_text().split("```toml\n", 1)[1].split("```", 1)[0]
    declared = load_schedules(_write(tmp_path, example))
    assert [schedule.dag_id for schedule in declared] == ["scheduled_city_daily",
                                                          "scheduled_city_mornings"]
    assert declared[1].window_hours == 6.0 and "accept_attack_risk" in declared[1].accepted


def test_the_readme_example_is_a_valid_declaration(tmp_path):
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    example = readme.split("schedules.toml <<'END'\n", 1)[1].split("END\n", 1)[0]
    assert [s.dag_id for s in load_schedules(_write(tmp_path, example))] == [
        "scheduled_city_daily"]


def test_the_service_hands_every_component_the_file_up_checked(tmp_path, monkeypatch):
    """The components read the file `airflow up` checked (resolved once, by `up`), and parse
    the DAG files every 120 s, not Airflow's 30 s (an idle service's CPU)."""
    from anonymizers.airflow_service import AirflowService, export_lines

    monkeypatch.setenv(SCHEDULES_ENV, str(tmp_path / "declared.toml"))
    service = AirflowService(home=tmp_path / "service", airflow_home=tmp_path / "home",
                             data_url="postgresql://u@/d?host=/run")
    env = service.environment({})
    assert env[SCHEDULES_ENV] == str(tmp_path / "declared.toml")
    assert env["AIRFLOW__DAG_PROCESSOR__MIN_FILE_PROCESS_INTERVAL"] == "120"
    assert f"export {SCHEDULES_ENV}='{tmp_path / 'declared.toml'}'" in list(
        export_lines(service))
