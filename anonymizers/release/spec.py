"""What one release is: dataset, method, parameters and window, and the names derived from them.

A release's identity is a hash of everything that determines its content (dataset and
the keyed fingerprint of its source, method, k, what k counts, parameters, window).
Re-running the same release therefore targets the same schema names: a failed run is
completed by a re-run, and a published release is never published twice. Which methods
exist and what their parameters are is the registry's (:mod:`anonymizers.families.registry`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from anonymizers.errors import InputError
from anonymizers.families.registry import FAMILIES, method_entry
from anonymizers.risks import COMPOSITION, RISKS
from anonymizers.version import code_version as running_code_version

__all__ = [
    "MIN_WINDOW_HOURS",
    "ReleaseSpec",
    "area_of_use",
    "utm_srid",
]

# The shortest window a release may cover unless the operator accepts the composition risk
# (DESIGN, privacy rule 4): a one-minute window next to a published hour isolates people.
# The default of the ``min_window_hours`` parameter (registry) must not be below it.
MIN_WINDOW_HOURS = 1.0


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
    # The keyed fingerprint of the source file (HMAC under the installation secret): the key
    # of the ledger, so the same data loaded under two names is one ledger. The plain digest
    # stays in raw.datasets: the spec travels by XCom, which the owner's database does not
    # guard (privacy rule 10).
    source_fingerprint: str
    method: str
    k: int
    k_counts: str
    window_start: str  # ISO-8601, inclusive
    window_end: str  # ISO-8601, exclusive
    srid: int
    params: dict[str, Any] = field(default_factory=dict)
    # HMAC of the source digest, dataset id and window under the installation secret
    # (keyed: a plain hash would let anyone holding a candidate file confirm it); set by the
    # gate. A reload draws a new dataset id: random choices use ``seed`` instead.
    input_fingerprint: str = ""
    # The operator's reasons for publishing despite a rule (anonymizers.risks):
    # ``{column: reason}``, e.g. {"composition_risk": "..."} for an overlapping window.
    risks: dict[str, str] = field(default_factory=dict)
    run_token: str = "manual"  # names this run's scratch schemas; not part of the identity
    # package version + the commit or build of the code that resolved the release
    code_version: str = field(default_factory=running_code_version)

    def __post_init__(self) -> None:
        method_entry(self.method)  # InputError naming the methods if unknown
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
                                   "risks")}
        text = json.dumps(identity, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:10]

    @property
    def seed(self) -> int:
        """The seed of the method's random choices (and of sampled metrics): the same for the
        same source file, window and installation secret, so a re-run, or a run after the
        file was loaded again, gives the same release. Not input_fingerprint, which also
        holds the dataset id that every load draws anew. Keyed (the source fingerprint is
        an HMAC): nobody without the secret can replay the choices."""
        text = f"{self.source_fingerprint}|{self.window_start}|{self.window_end}"
        return int(hashlib.sha256(text.encode()).hexdigest()[:16], 16)

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
        return method_entry(self.method).family

    @property
    def composition_risk(self) -> str | None:
        return self.risks.get(COMPOSITION.column)

    @property
    def count_interval(self) -> int:
        return int(self.params.get("count_interval", self.k))

    @property
    def privacy_model(self) -> str:
        return FAMILIES[self.family].privacy_model.format(k=self.k)

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
            "count_interval": self.count_interval, "source_fingerprint": self.source_fingerprint,
            "code_version": self.code_version,
            **{risk.column: self.risks.get(risk.column) for risk in RISKS},
        }

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ReleaseSpec:
        return cls(**data)
