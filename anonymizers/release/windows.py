"""Cut [start, end) into consecutive windows of one length: the plan of a windows run.

A windows run (DAG ``<family>_windows``) publishes one release per window, each through the
whole gate, as mapped task instances that any worker may run. The windows of one plan are
half-open and adjacent, so none overlaps another and the ledger refuses none of them for
its neighbours (adjacent windows do not overlap: ``sql/release/overlapping_releases.sql``).
Pure: no database, no Airflow.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

from anonymizers.errors import InputError
from anonymizers.families.registry import MACHINERY_PARAMS, WINDOWS_PARAMS
from anonymizers.parameters import parse_params

__all__ = ["MAX_WINDOWS", "plan_windows", "split_window"]

# More windows than this in one run is almost surely a mistake (e.g. hours for days); the
# list travels by XCom and each window is a mapped task group of about ten tasks.
MAX_WINDOWS = 1000


def _moment(name: str, value: Any) -> datetime:
    if value in (None, ""):
        raise InputError(f"a windows run needs {name}: give start and end (ISO-8601, e.g. "
                         "2026-03-02T00:00:00Z); [start, end) is cut into windows of "
                         "window_hours")
    try:
        moment = datetime.fromisoformat(str(value))
    except ValueError as error:
        raise InputError(f"{name}={value!r} is not an ISO-8601 time "
                         "(e.g. 2026-03-02T00:00:00Z)") from error
    return moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)


def split_window(start: datetime, end: datetime, hours: float,
                 min_hours: float) -> list[tuple[str, str]]:
    """Consecutive half-open windows of ``hours`` from ``start``; the last ends at ``end``
    and may be shorter, but never shorter than ``min_hours`` (an error says what to change)."""
    if hours < min_hours:
        raise InputError(f"window_hours={hours:g} is shorter than min_window_hours="
                         f"{min_hours:g}: every window is a release of its own. Choose "
                         f"window_hours >= {min_hours:g} (min_window_hours goes lower only with "
                         "accept_composition_risk).")
    if start >= end:
        raise InputError(f"empty span: start {start.isoformat()} is not before end "
                         f"{end.isoformat()}")
    step = timedelta(hours=hours)
    count = -(-(end - start) // step)  # ceiling
    if count > MAX_WINDOWS:
        raise InputError(f"[start, end) in windows of {hours:g} h is {count} windows, more than "
                         f"{MAX_WINDOWS}: choose a longer window_hours or a shorter span")
    bounds = [start + i * step for i in range(count)] + [end]
    last = (bounds[-1] - bounds[-2]).total_seconds() / 3600
    if last < min_hours:
        raise InputError(_short_tail(bounds, step, last, min_hours))
    return [(lo.isoformat(), hi.isoformat()) for lo, hi in itertools.pairwise(bounds)]


def _short_tail(bounds: list[datetime], step: timedelta, last: float, min_hours: float) -> str:
    start, tail, end = bounds[0], bounds[-2], bounds[-1]
    said = (f"the last window {tail.isoformat()} .. {end.isoformat()} would last "
            f"{last * 60:.0f} min, shorter than min_window_hours={min_hours:g}.")
    if len(bounds) == 2:
        return said + " Widen [start, end) to at least min_window_hours."
    return (said + f" Set end to {tail.isoformat()} (drop the tail) or "
            f"{(tail + step).isoformat()}, or choose a window_hours that divides the span "
            f"({(end - start).total_seconds() / 3600:g} h).")


def plan_windows(params: dict[str, Any]) -> list[tuple[str, str]]:
    """The windows of a windows run's params (start, end, window_hours, min_window_hours)."""
    start, end = _moment("start", params.get("start")), _moment("end", params.get("end"))
    hours = parse_params(WINDOWS_PARAMS, params)["window_hours"]
    min_hours = parse_params(MACHINERY_PARAMS, params)["min_window_hours"]
    return split_window(start, end, hours, min_hours)
