"""Scheduled releases, declared in one TOML file that Airflow reads: what runs when.

Each table ``[schedules.<name>]`` of the file declares one scheduled release: its dataset,
method, k, the method's and the machinery's parameters, a cron expression or preset, the
window a run releases (its data interval, or a fixed length ending with it), the first
interval and optionally the last, and the risks the operator accepts (each with its
reason). Airflow runs each as its own DAG, ``scheduled_<name>``; the family DAGs are
manual. With no file, or an empty one, nothing is scheduled.

The file is ``ANONYMIZERS_SCHEDULES``, else ``schedules.toml`` in the project's home (next
to the Airflow home of ``anonymizers airflow up``). TOML because it is in the standard
library (``tomllib``: nothing to install, nothing to import at parse time), has dates, and
holds comments, which a JSON environment variable did not. Parsing is cheap and touches no
database: the DAG processor reads the file on every parse. Every value is checked against
the registry's ParamSpecs, the same ones that check a release and write the CLI's help.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from anonymizers.errors import InputError
from anonymizers.families.registry import MACHINERY_PARAMS, METHODS, RUN_PARAMS
from anonymizers.parameters import ParamSpec
from anonymizers.risks import RISKS

__all__ = ["SCHEDULES_ENV", "Schedule", "ScheduleError", "check_retired_settings",
           "load_schedules", "schedules_path"]

SCHEDULES_ENV = "ANONYMIZERS_SCHEDULES"
FILE_NAME = "schedules.toml"
DAG_PREFIX = "scheduled_"
# Airflow's presets with a data interval (``@once`` and ``@continuous`` have none).
PRESETS = frozenset({"@hourly", "@daily", "@weekly", "@monthly", "@quarterly", "@yearly",
                     "@annually", "@midnight"})
_NAME = re.compile(r"^[a-z0-9][a-z0-9_]{0,60}$")
_KEYS = frozenset({"dataset", "method", "k", "schedule", "window", "start_date", "end_date",
                   "catchup", "params", *(risk.param for risk in RISKS)})
_REQUIRED = ("dataset", "method", "k", "schedule", "start_date")
# Run params a declaration may set in ``params`` (the window is the schedule's).
_RUN_PARAMS_IN_PARAMS = frozenset({"srid"})


class ScheduleError(InputError):
    """The declaration file is wrong: the message names the entry, the key and the fix."""


@dataclass(frozen=True)
class Schedule:
    """One declared scheduled release."""

    name: str
    dataset: str
    method: str
    k: int
    schedule: str  # cron expression or preset, UTC
    start_date: datetime
    end_date: datetime | None = None
    catchup: bool = False
    window_hours: float | None = None  # None: the run's data interval
    params: dict[str, Any] = field(default_factory=dict)
    accepted: dict[str, str] = field(default_factory=dict)  # accept_*_risk -> reason

    @property
    def dag_id(self) -> str:
        return DAG_PREFIX + self.name

    @property
    def family(self) -> str:
        return METHODS[self.method].family

    def conf(self) -> dict[str, Any]:
        """The params of every scheduled run: the DAG's defaults for this schedule."""
        return {"dataset": self.dataset, "method": self.method, "k": self.k, **self.params,
                **self.accepted}

    def describe(self) -> str:
        """One line of ``anonymizers airflow schedules``."""
        window = "its data interval" if self.window_hours is None else \
            f"the {self.window_hours:g} h before its end"
        until = f", last interval from {self.end_date:%Y-%m-%d %H:%M}" if self.end_date else ""
        params = ", ".join(f"{key}={value}" for key, value in self.params.items())
        accepted = ", ".join(sorted(self.accepted))
        return (f"{self.dag_id}: {self.dataset} by {self.method} (k={self.k}"
                f"{', ' + params if params else ''}) {self.schedule} from "
                f"{self.start_date:%Y-%m-%d %H:%M}{until}, each run releasing {window}"
                f"{'; catchup' if self.catchup else ''}"
                f"{'; accepts ' + accepted if accepted else ''}")


def schedules_path() -> Path:
    """``ANONYMIZERS_SCHEDULES``, else ``schedules.toml`` in the project's home.

    The home follows anonymizers.db.cluster.default_home (``ANONYMIZERS_HOME``, else
    ``.anonymizers`` next to pyproject.toml); that module imports psycopg, which a DAG file
    may not import at parse time, so the rule is repeated here.
    """
    if env := os.environ.get(SCHEDULES_ENV, "").strip():
        return Path(env)
    if home := os.environ.get("ANONYMIZERS_HOME"):
        return Path(home).resolve() / FILE_NAME
    repo = Path(__file__).resolve().parents[1]
    home_dir = repo / ".anonymizers" if (repo / "pyproject.toml").exists() \
        else Path.home() / ".anonymizers"
    return home_dir / FILE_NAME


def check_retired_settings(env: Mapping[str, str] | None = None) -> None:
    """Refuse the environment variables the schedules file replaced: set, they would be
    ignored silently (the family DAGs are manual now) and the operator would wait for
    runs that never come."""
    env = os.environ if env is None else env
    retired = sorted(name for name in env if name == "ANONYMIZERS_SCHEDULE" or (
        name.startswith("ANONYMIZERS_") and name.endswith("_PARAMS")))
    if retired:
        raise ScheduleError(f"{', '.join(retired)} no longer schedule(s) anything: declare "
                            f"each scheduled release in {schedules_path()} (see "
                            "docs/pages/operator/scheduling.md) and unset them")


def load_schedules(path: Path | None = None) -> list[Schedule]:
    """Every schedule of the file, checked; [] if the file does not exist.
    ScheduleError names the file, the entry, the key and what to do."""
    path = schedules_path() if path is None else path
    if not path.exists():
        return []
    try:
        document = tomllib.loads(path.read_text())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ScheduleError(f"{path}: not valid TOML ({error}); see "
                            "docs/pages/operator/scheduling.md for an example") from None
    if unknown := sorted(set(document) - {"schedules"}):
        raise ScheduleError(f"{path}: unknown top-level key(s) {unknown}; declare each "
                            "schedule as a table [schedules.<name>]")
    entries = document.get("schedules", {})
    if not isinstance(entries, dict):
        raise ScheduleError(f"{path}: 'schedules' must be tables [schedules.<name>]")
    return [_schedule(path, name, entry) for name, entry in entries.items()]


def _schedule(path: Path, name: str, entry: Any) -> Schedule:
    where = f"{path}: schedule {name!r}"
    if not _NAME.match(name):
        raise ScheduleError(f"{where}: a name is lower-case letters, digits and _ (at most "
                            "61), starting with a letter or digit: it becomes the DAG "
                            f"{DAG_PREFIX}<name>")
    if not isinstance(entry, dict):
        raise ScheduleError(f"{where} must be a table: [schedules.{name}]")
    if unknown := sorted(set(entry) - _KEYS):
        raise ScheduleError(f"{where}: unknown key(s) {unknown}; the keys are "
                            f"{sorted(_KEYS)} (method parameters go under "
                            f"[schedules.{name}.params])")
    if missing := [key for key in _REQUIRED if key not in entry]:
        raise ScheduleError(f"{where}: missing {', '.join(missing)}")
    try:
        return _checked(name, entry)
    except InputError as error:
        raise ScheduleError(f"{where}: {error}") from None


def _checked(name: str, entry: Mapping[str, Any]) -> Schedule:
    method = _text(entry, "method")
    if method not in METHODS:
        raise InputError(f"unknown method {method!r}; choose one of {', '.join(sorted(METHODS))}")
    run = {spec.name: spec for spec in RUN_PARAMS}
    start = _moment(entry, "start_date")
    end = _moment(entry, "end_date") if "end_date" in entry else None
    if end is not None and end <= start:
        raise InputError(f"end_date {end:%Y-%m-%d %H:%M} is not after start_date")
    return Schedule(
        name=name, dataset=_text(entry, "dataset"), method=method,
        k=run["k"].parse(_strict(entry["k"], int, "k")), schedule=_cron(entry["schedule"]),
        start_date=start, end_date=end, catchup=_strict(entry.get("catchup", False), bool,
                                                        "catchup"),
        window_hours=_window(entry.get("window", "interval")),
        params=_params(method, entry.get("params", {})),
        accepted={risk.param: _reason(entry, risk.param) for risk in RISKS
                  if risk.param in entry})


def _params(method: str, given: Any) -> dict[str, Any]:
    """The method's and the machinery's parameters, each parsed by its ParamSpec."""
    if not isinstance(given, dict):
        raise InputError("params must be a table of the method's parameters")
    specs: dict[str, ParamSpec] = {spec.name: spec for spec in (
        *METHODS[method].params, *MACHINERY_PARAMS,
        *(spec for spec in RUN_PARAMS if spec.name in _RUN_PARAMS_IN_PARAMS))}
    if unknown := sorted(set(given) - set(specs)):
        raise InputError(f"params {unknown} are not parameters of {method}; its parameters: "
                         f"{', '.join(sorted(specs))} (`anonymizers release --help` "
                         "describes them; dataset, method, k and the accept_*_risk reasons "
                         "are keys of the schedule itself)")
    return {key: specs[key].parse(value) for key, value in given.items()}


def _strict(value: Any, kind: type, key: str) -> Any:
    # TOML has types: a k of "3" or a catchup of "yes" is a mistake worth naming.
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        wanted = "true or false" if kind is bool else f"an {kind.__name__}"
        raise InputError(f"{key} = {value!r} must be {wanted}")
    return value


def _text(entry: Mapping[str, Any], key: str) -> str:
    value = entry[key]
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{key} must be a non-empty string")
    return value.strip()


def _reason(entry: Mapping[str, Any], key: str) -> str:
    value = entry[key]
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{key} must be the reason, a non-empty string (it is recorded in "
                         "the manifest and the catalog); remove the key to keep the rule")
    return value.strip()


def _moment(entry: Mapping[str, Any], key: str) -> datetime:
    """A TOML date or date-time (UTC when it has no offset)."""
    value = entry[key]
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    raise InputError(f"{key} = {value!r} must be a TOML date or date-time, unquoted "
                     "(e.g. 2026-03-02 or 2026-03-02T06:00:00Z)")


def _cron(value: Any) -> str:
    """A cron expression (5 fields, UTC) or one of Airflow's presets with an interval."""
    from croniter import croniter  # small, and Airflow's own dependency

    if not isinstance(value, str) or not (
            value.strip() in PRESETS or croniter.is_valid(value.strip())):
        raise InputError(f"schedule = {value!r} is neither a cron expression (e.g. "
                         f"\"0 6 * * *\") nor one of {', '.join(sorted(PRESETS))}")
    return value.strip()


def _window(value: Any) -> float | None:
    """``"interval"``: the run's data interval; a number: that many hours ending with it."""
    if value == "interval":
        return None
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return float(value)
    raise InputError(f"window = {value!r} must be \"interval\" (the run's data interval) or a "
                     "positive number of hours (the window ending with the interval)")
