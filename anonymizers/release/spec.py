"""What one release is: dataset, method, parameters and window, and the names derived from them.

A release's identity is a hash of everything that determines its content (dataset and
its source digest, method, k, what k counts, parameters, window). Re-running the same
release therefore targets the same schema names: a failed run is completed by a re-run,
and a published release is never published twice.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from anonymizers import __version__
from anonymizers.errors import InputError

__all__ = [
    "METHODS",
    "METHOD_PARAMETERS",
    "MIN_WINDOW_HOURS",
    "PRIVACY_MODELS",
    "ReleaseSpec",
    "machinery_params",
    "method_params",
    "utm_srid",
]

# Method -> DAG that builds it. Methods of later issues are added here as they land.
METHODS = {"grid_kam_cut": "generalization", "kam_cut": "generalization",
           "kam_rec": "generalization"}

# Method -> its parameters with defaults (the part of the DAG params that is the method's).
_TESSELLATION: dict[str, Any] = {
    "radius": 500.0,  # desired cluster radius r (the paper's experiments: 500 m)
    "min_angle": 45.0,  # significant turn, degrees (the paper's example)
    "min_stop_duration": 300.0,  # significant stop, seconds (the paper's example: 5 min)
    "stop_radius": 100.0,  # moves below this count as staying
    "max_distance": 1000.0,  # characteristic points at most this far apart (2 r)
    "max_displacement": 1000.0,  # MaxDisplacement of a merged area, metres (0 = no limit)
    "max_iterations": 50,  # steps of progressive generalization (Algorithm 3)
    # Lattice (metres) every data-derived generator and the clip box are snapped to
    # (DESIGN, privacy rule 2): a published position never pins one person's place.
    "snap": 50.0,
}
# Prefix trees: published prefixes with fewer distinct continuations are cut (1 = off).
_PREFIX_TREE: dict[str, Any] = {"min_continuations": 1}
METHOD_PARAMETERS: dict[str, dict[str, Any]] = {
    "grid_kam_cut": {"cell_size": 1000.0, **_PREFIX_TREE},
    "kam_cut": {**_TESSELLATION, **_PREFIX_TREE},
    # p: share of a trajectory a recovery must keep; lcs_candidates: sequences ClosestLCS
    # compares a cut one with (more: longer recoveries, more time; prefix_tree.kam_rec)
    "kam_rec": {**_TESSELLATION, **_PREFIX_TREE, "p": 0.4, "lcs_candidates": 32},
}
# Parameters that may be zero (meaning "no limit"); every other one must be positive.
ZERO_ALLOWED = {"max_displacement"}

PRIVACY_MODELS = {
    "generalization": (
        "k-anonymous cell sequences: every published cell sequence (trajectory or flow) is "
        "contained, as a subsequence, in the generalized trajectories of at least k distinct "
        "{counts} of the window (implies seed 000 Definition 9); every published cell and "
        "generator is supported by at least k of them"
    ),
}


# The shortest window a release may cover unless the operator accepts the composition risk
# (DESIGN, privacy rule 4): a one-minute window next to a published hour isolates people.
MIN_WINDOW_HOURS = 1.0


def machinery_params(given: dict[str, Any], k: int) -> dict[str, Any]:
    """The parameters every family shares: ``count_interval`` and ``min_window_hours``.

    ``count_interval`` is the interval size I_s of the interval filter (seed 004 §4.2) every
    published count goes through: a count c >= k is published as the lower end of
    [k + I_s i, k + I_s (i + 1)) that holds it. Default k; 1 publishes exact counts, which
    the operator must ask for (and the manifest records). ``min_window_hours`` (default
    :data:`MIN_WINDOW_HOURS`) is the shortest window; lowering it below the default needs
    ``accept_composition_risk`` (checked by the gate).
    """
    chosen: dict[str, Any] = {}
    for key, default, kind in (("count_interval", k, int),
                               ("min_window_hours", MIN_WINDOW_HOURS, float)):
        value = given.get(key)
        try:
            chosen[key] = default if value in (None, "") else kind(value)
        except (TypeError, ValueError) as error:
            what = "an integer" if kind is int else "a number"
            raise InputError(f"parameter {key}={value!r} must be {what}") from error
        if chosen[key] <= 0:
            raise InputError(f"parameter {key} must be positive (got {value})")
    return chosen


def method_params(method: str, given: dict[str, Any]) -> dict[str, Any]:
    """The method's parameters: defaults overridden by ``given`` (other keys are ignored)."""
    if method not in METHOD_PARAMETERS:
        raise InputError(f"unknown method {method!r}; choose one of "
                         f"{', '.join(sorted(METHOD_PARAMETERS))}")
    chosen = dict(METHOD_PARAMETERS[method])
    for key, default in chosen.items():
        value = given.get(key)
        if value is None:
            continue
        try:
            chosen[key] = type(default)(value)
        except (TypeError, ValueError) as error:
            kind = {int: "an integer", float: "a number"}.get(type(default), "a string")
            raise InputError(f"parameter {key}={value!r} must be {kind}") from error
        if isinstance(chosen[key], float | int) and (
                chosen[key] < 0 or (chosen[key] == 0 and key not in ZERO_ALLOWED)):
            raise InputError(f"parameter {key} must be positive (got {value})")
    _check_ranges(chosen)
    return chosen


def _check_ranges(chosen: dict[str, Any]) -> None:
    if "p" in chosen and not 0 < chosen["p"] <= 1:
        raise InputError(f"parameter p is a share of a trajectory: 0 < p <= 1 (got {chosen['p']})")
    if "min_angle" in chosen and not 0 < chosen["min_angle"] <= 180:
        raise InputError(f"parameter min_angle must be in (0, 180] degrees "
                         f"(got {chosen['min_angle']})")


def area_of_use(srid: int) -> dict[str, float]:
    """Longitude/latitude bounds a release in ``srid`` covers (fixes outside are not used).

    For a UTM zone: its 6-degree band widened by 6 degrees on each side (the projection
    stays accurate well beyond its band) and latitudes -80..84; for any other CRS, the
    whole globe (the operator chose it and knows its domain). Far-away fixes of a city's
    dataset are GPS noise that the projection cannot even represent.
    """
    if 32601 <= srid <= 32660 or 32701 <= srid <= 32760:
        central = (srid % 100) * 6 - 183
        return {"lon_min": central - 9.0, "lon_max": central + 9.0,
                "lat_min": -80.0, "lat_max": 84.0}
    return {"lon_min": -180.0, "lon_max": 180.0, "lat_min": -90.0, "lat_max": 90.0}


def utm_srid(lon: float, lat: float) -> int:
    """EPSG code of the WGS 84 / UTM zone containing (lon, lat)."""
    zone = min(int((lon + 180) // 6) + 1, 60)
    return (32600 if lat >= 0 else 32700) + zone


@dataclass(frozen=True)
class ReleaseSpec:
    """Everything a task needs to know about its release (travels between tasks by XCom)."""

    dataset: str
    dataset_id: int
    source_sha256: str
    method: str
    k: int
    k_counts: str
    window_start: str  # ISO-8601, inclusive
    window_end: str  # ISO-8601, exclusive
    srid: int
    params: dict[str, Any] = field(default_factory=dict)
    # HMAC of the source digest and window under the installation secret (keyed: a plain
    # hash would let anyone holding a candidate file confirm it); set by the gate.
    input_fingerprint: str = ""
    # The operator's reason for publishing despite an overlapping / short window (rule 4).
    composition_risk: str | None = None
    run_token: str = "manual"  # names this run's scratch schemas; not part of the identity
    code_version: str = __version__

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise InputError(f"unknown method {self.method!r}; choose one of "
                             f"{', '.join(sorted(METHODS))}")
        if self.k < 2:
            raise InputError(f"k must be at least 2 (got {self.k}): k = 1 is no anonymity.")
        if self.k_counts != "persons":
            raise InputError(
                f"k counts distinct persons in every release (k_counts={self.k_counts!r} is not "
                "offered): at least k persons behind every published item implies at least k "
                "trajectories, never the reverse. For data without persons, load it without a "
                "user_id column: each trajectory is then its own person.")
        if datetime.fromisoformat(self.window_start) >= datetime.fromisoformat(self.window_end):
            raise InputError(f"empty window: start {self.window_start} is not before "
                             f"end {self.window_end}")

    @property
    def digest(self) -> str:
        identity = {key: value for key, value in asdict(self).items()
                    if key not in ("code_version", "run_token", "input_fingerprint",
                                   "composition_risk")}
        text = json.dumps(identity, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:10]

    @property
    def release_name(self) -> str:
        return f"release_{self.dataset}_{self.method}_{self.digest}"

    @property
    def work_schema(self) -> str:
        """Scratch tables of this run (each run has its own: concurrent runs never share)."""
        return f"work_{self.digest}_{self.run_token}"

    @property
    def build_schema(self) -> str:
        """The release tables of this run, under a name analysts cannot see, until publish."""
        return f"build_{self.digest}_{self.run_token}"

    @property
    def family(self) -> str:
        return METHODS[self.method]

    @property
    def count_interval(self) -> int:
        return int(self.params.get("count_interval", self.k))

    @property
    def privacy_model(self) -> str:
        return PRIVACY_MODELS[self.family].format(counts=self.k_counts)

    @property
    def window_hours(self) -> float:
        span = datetime.fromisoformat(self.window_end) - datetime.fromisoformat(self.window_start)
        return span.total_seconds() / 3600

    def window_params(self) -> dict[str, Any]:
        return {"dataset_id": self.dataset_id, "window_start": self.window_start,
                "window_end": self.window_end, "srid": self.srid, **area_of_use(self.srid)}

    def manifest_params(self) -> dict[str, Any]:
        return {
            "release_name": self.release_name, "dataset": self.dataset, "method": self.method,
            "parameters": json.dumps(self.params, sort_keys=True), "k": self.k,
            "k_counts": self.k_counts, "privacy_model": self.privacy_model,
            "window_start": self.window_start, "window_end": self.window_end,
            "srid": self.srid, "input_fingerprint": self.input_fingerprint,
            "count_interval": self.count_interval, "composition_risk": self.composition_risk,
            "code_version": self.code_version,
        }

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ReleaseSpec:
        return cls(**data)
