"""What a method family provides to the shared release machinery.

The machinery (``anonymizers.pipeline``) prepares the window, runs the family's steps in
the registry's order, writes the manifest with the family's counts, has the family measure
the release (the shared writer stores the figures), runs the family's independent
verifier, and publishes. A family implements :class:`Family`; its registry entry
(:mod:`anonymizers.families.registry`) names the class by module path.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import psycopg

from anonymizers.errors import ReleaseError
from anonymizers.families.registry import FAMILIES, FamilyEntry

__all__ = [
    "Family",
    "ManifestCounts",
    "MetricRow",
    "Metrics",
    "ReportLayer",
    "SeriesRow",
    "StepFunction",
    "load_family",
]

# A family step: takes the ReleaseSpec as a dict (what travels by XCom), returns a small
# summary for the task log (or None). It opens its own transaction with pipeline.step().
StepFunction = Callable[[dict[str, Any]], Any]
MetricRow = tuple[str, Any, str, str]  # name, value (number, NaN or None), unit, description
SeriesRow = tuple[str, float, Any, str, str]  # series, x, value, unit, description


@dataclass(frozen=True)
class ManifestCounts:
    """Exact counts of the input and output of a release; the machinery interval-filters the
    input ones (privacy rule 4) before they reach the manifest.

    ``published`` is what the release's main table holds (trajectories, objects, groups):
    exact, since the table itself publishes it; ``suppressed`` is the number of input units
    of which nothing was published.
    """

    trajectories_in: int
    persons_in: int
    points_in: int
    published: int
    suppressed: int

    @classmethod
    def from_sql(cls, conn: psycopg.Connection, name: str,
                 params: dict[str, Any] | None = None, **identifiers: str) -> ManifestCounts:
        """The counts that the one-row query ``sql/<name>`` returns, by column name."""
        from anonymizers.db.sqlfiles import fetch_columns

        found = fetch_columns(conn, name, params, **identifiers)
        return cls(**{column: int(values[0]) for column, values in found.items()})


@dataclass
class Metrics:
    """Scalars and series a family measured; the shared writer stores and filters them."""

    rows: list[MetricRow] = field(default_factory=list)
    series: list[SeriesRow] = field(default_factory=list)


@dataclass(frozen=True)
class ReportLayer:
    """A geometry layer of the release that the report draws.

    Either a table of the release (``table``, its ``geometry`` column, optionally a count
    column ``weight`` that scales the drawing: line width, marker size, fill, and the time
    columns ``time_start`` / ``time_end`` that put it in small multiples over the window), or
    ``query``: a file under ``sql/`` with the identifier ``{release}`` that returns the columns
    ``wkb`` (the geometry as WKB, in the release's SRID), ``weight``, ``t_start``, ``t_end``
    (each may be NULL), for layers no single table holds (e.g. groups drawn through their
    places). Polygons are outlined, lines and points drawn as they are.
    """

    table: str
    geometry: str
    label: str
    weight: str | None = None  # a count column that scales the drawing
    time_start: str | None = None
    time_end: str | None = None  # the same column as time_start for instants
    query: str | None = None

    @property
    def over_time(self) -> bool:
        """Whether the layer varies over the window (drawn as small multiples)."""
        return self.time_start is not None


class Family(ABC):
    """A family of methods sharing steps, release tables, metrics and a verifier."""

    entry: FamilyEntry

    @property
    def name(self) -> str:
        return self.entry.name

    @abstractmethod
    def steps(self) -> Mapping[str, StepFunction]:
        """Every step named in the registry entry, by name."""

    @property
    @abstractmethod
    def release_tables(self) -> tuple[str, ...]:
        """The data tables of a release (besides manifest, metrics, metric_series)."""

    @abstractmethod
    def manifest_counts(self, conn: psycopg.Connection, release: Any) -> ManifestCounts:
        """Counts of the run's input (its window, work schema) and its release tables
        (build schema); ``release`` is the ReleaseSpec."""

    @abstractmethod
    def measure(self, conn: psycopg.Connection, release: Any) -> Metrics:
        """Utility and risk of the built release (may also insert rows with SQL)."""

    @property
    def report_layers(self) -> tuple[ReportLayer, ...]:
        """What ``anonymizers report`` draws of a release of this family (none by default:
        the report still shows the manifest, metrics and tables)."""
        return ()

    @property
    def footprint(self) -> str | None:
        """A file under ``sql/`` (identifier ``{release}``) listing every published location
        of every published unit, for the utility figures of ``anonymizers compare``.

        Columns: ``unit`` (text: a trajectory, object or group as published), ``seq`` (the
        location's place in the unit's order), ``n_persons`` (float8: how many the release
        says the unit stands for, the published count as is), ``geom`` (the location's
        geometry in the release's SRID) and ``t_start`` / ``t_end`` (the half-open span of
        time the location stands for; NULL where the release publishes no time). A region
        that says nothing about where (a withheld position) is no location: leave it out.
        Params it may use: ``srid`` (the window's CRS) and ``lon_min``, ``lon_max``,
        ``lat_min``, ``lat_max`` (that CRS's area of use). None: the family offers none,
        and ``compare`` says its utility was not measured.
        """
        return None

    def resolve_params(self, conn: psycopg.Connection, dataset: str, dataset_id: int, k: int,
                       params: dict[str, Any], say: Callable[[str], None],
                       window: tuple[str, str]) -> dict[str, Any]:
        """Check the family's own inputs before the run, in seconds, and resolve its 'auto'
        parameters from the data; returns the parameters to record (the release's identity
        and manifest carry them). Raises InputError saying what to do when the dataset (or
        the ``window``, [start, end) as ISO-8601 text) lacks what the parameters need, so a
        run never stops mid-way for it. ``say`` tells the operator what was resolved.
        Called by the gate's ``resolve_spec``."""
        return params

    def privacy_model(self, k: int) -> str:
        return self.entry.privacy_model.format(k=k)

    def verify(self, conn: psycopg.Connection, schema: str) -> Any:
        """The family's independent verifier on ``schema`` (a VerifierResult)."""
        module = importlib.import_module(self.entry.verifier)
        return module.verify_release(conn, schema)


def load_family(name: str) -> Family:
    """The plug-in of family ``name`` (imports its code: call it inside tasks, not at parse)."""
    entry = FAMILIES.get(name)
    if entry is None:
        raise ReleaseError(f"no family {name!r} in the registry")
    module = importlib.import_module(entry.module)
    family = module.FAMILY
    if not isinstance(family, Family) or family.entry is not entry:
        raise ReleaseError(f"{entry.module}.FAMILY is not the plug-in of family {name!r}")
    return family
