"""How long the scratch schemas of a failed or abandoned run are kept: durations like ``7d``.

Cheap to import (the maintenance DAG file reads the default when it is parsed): no
database, no psycopg.
"""

from __future__ import annotations

import os
import re

from anonymizers.errors import InputError

__all__ = ["DEFAULT_RETENTION", "MIN_RETENTION_SECONDS", "RETENTION_ENV", "default_retention",
           "duration_seconds", "retention_seconds"]

# Long enough to inspect a failed run's tables after a weekend.
DEFAULT_RETENTION = "7d"
# The installation's retention (a duration): the default of `anonymizers cleanup`, of the
# maintenance DAG, and what every run drops at its start.
RETENTION_ENV = "ANONYMIZERS_SCRATCH_RETENTION"
# A run waiting between two steps (for a worker, or to retry a failed step) holds no lock:
# idle for less than an hour, it cannot be told from an abandoned one (gate.IDLE_GRACE_SECONDS).
MIN_RETENTION_SECONDS = 3600

_UNITS = {"w": 7 * 86400, "d": 86400, "h": 3600, "m": 60, "s": 1}
_PART = re.compile(r"(\d+)\s*([wdhms])", re.IGNORECASE)
_WHOLE = re.compile(r"\s*(?:\d+\s*[wdhms]\s*)+", re.IGNORECASE)


def duration_seconds(text: str, what: str = "--older-than") -> int:
    """``7d``, ``12h``, ``90m``, ``1d12h`` as seconds; InputError for anything else or for
    less than MIN_RETENTION_SECONDS.

    >>> duration_seconds("1d12h")
    129600
    """
    if not _WHOLE.fullmatch(str(text)):
        raise InputError(f"{what} {text!r} is not a duration: write a number and a unit "
                         "(w, d, h, m or s), e.g. 7d, 12h or 90m")
    seconds = sum(int(number) * _UNITS[unit.lower()] for number, unit in _PART.findall(text))
    if seconds < MIN_RETENTION_SECONDS:
        raise InputError(f"{what} {text!r} is shorter than 1h: a run waiting between two "
                         "steps (for a worker, or to retry a step) would look abandoned and "
                         "lose its schemas. Give at least 1h.")
    return seconds


def default_retention() -> str:
    """``ANONYMIZERS_SCRATCH_RETENTION`` when set, else DEFAULT_RETENTION (7d)."""
    return os.environ.get(RETENTION_ENV, "").strip() or DEFAULT_RETENTION


def retention_seconds() -> int:
    """The installation's retention in seconds (InputError naming the variable if bad)."""
    return duration_seconds(default_retention(), RETENTION_ENV)
