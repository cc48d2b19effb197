"""The verifier's shared part: the privacy rules of the machinery, checked on every release.

Every family's verifier starts here (DESIGN, "Privacy rules of the machinery") and then
checks its own model. It reads only the release (or build) schema under test, the
ledger (``catalog.releases``) and ``raw``; it never imports an anonymizer, so a bug there
is not repeated here. The shared rules:

1. **k counts distinct persons**: the manifest says so, and every published count column
   (``n_persons``, ``n_trajectories``, ...) of a release table is at least k;
2. **no coordinate from fewer than k persons**: wherever published polygons are cut by a
   clip box, that edge lies on the release's declared lattice (the clip box is never the
   data's own extent); the family checks its data-derived positions;
3. **metrics are aggregates**: no minimum, maximum or quantile of raw values (by name,
   with an allow-list of risk figures), every count 0 or at least k (else suppressed) and
   on the interval filter's lattice;
4. **releases compose safely**: the window is at least the minimum length and overlaps no
   other release of the dataset in the ledger, unless the manifest records that the
   operator accepted the risk; published counts went through the interval filter;
5. **nothing else identifies**: no raw traj_id / user_id in any text column, no timestamp
   column (or, for a family that publishes time points, only times on its declared grid
   inside the window), and the input fingerprint is the keyed HMAC of the data it claims.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC
from typing import Any

import psycopg

from anonymizers.db.sqlfiles import fetch_columns, fetch_row, fetch_rows, run_sql_file
from anonymizers.errors import InputError
from anonymizers.families.registry import FAMILIES, METHODS
from anonymizers.release.fingerprint import (
    input_fingerprint,
    installation_secret,
    source_fingerprint,
)
from anonymizers.verifiers.intervals import interval_count
from anonymizers.verifiers.ratios import check_ratios

__all__ = [
    "ALLOWED_ORDER_STATISTICS",
    "ATTACK_PROBABILITY",
    "MIN_WINDOW_HOURS",
    "STRUCTURAL_CHECKS",
    "ReleaseUnderTest",
    "VerifierResult",
    "check_shared_rules",
    "interval_count",
    "read_release",
]

SHOWN = 10  # violations quoted in the result
# The verifier's own floors (not the gate's constants: a bug there must not move them).
MIN_WINDOW_HOURS = 1.0
PRECISION_FLOOR_M = 50.0
# Slack for floating point in "risk <= 1/k".
_RISK_EPSILON = 1e-9
# Every published figure of the attack suite that is a largest re-identification
# probability (anonymizers.attacks.release): scalars per model and series per length.
ATTACK_MAXIMUM = re.compile(r"^attack(_[a-z_]+_prosecutor_max|\.[a-z_]+\.max)$")
# Names that betray an order statistic of individual values (rule 3).
ORDER_STATISTIC = re.compile(r"(^|[._])(max|min|maximum|minimum|quantile|percentile|median)"
                             r"($|[._])")
# Order statistics that are not of individual raw values: the largest success probability
# of an attack (bounded by 1/k); a family declares its own (FamilyEntry.
# allowed_order_statistics, e.g. the median size of MOB's classes of at least k objects).
ALLOWED_ORDER_STATISTICS = frozenset({"reid_max_probability", "reid.max"})
# The attack suite's largest success probabilities (anonymizers.attacks.release), which are
# probabilities of an attack, not any person's value; allowed only with that unit.
ATTACK_PROBABILITY = re.compile(r"^attack[._][a-z_]+[._](prosecutor_max|journalist_max|max)$")
# Integer columns of release tables that count people or their trajectories.
COUNT_COLUMN = re.compile(r"^n_(persons|trajectories|individuals|people)")
# Checks that count parts of the release's schema or of the ledger (columns, parameters,
# metric rows, releases), never persons or their data: the interval filter, which hides
# small counts of people, would only turn them into "fewer than k" in the manifest.
STRUCTURAL_CHECKS = frozenset({
    "time_columns", "count_columns", "identifier_columns_scanned", "clipped_sides",
    "metric_values", "precision_parameters", "attack_maxima", "declared_ratios",
    "figures_attacked", "overlapping_releases"})


@dataclass
class VerifierResult:
    schema: str
    k: int
    k_counts: str = "persons"
    checks: dict[str, Any] = field(default_factory=dict)
    violations: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.violations

    def to_json(self) -> dict[str, Any]:
        return {"passed": self.passed, "k": self.k, "k_counts": self.k_counts,
                "checks": self.checks, "violations": self.violations[:SHOWN],
                "n_violations": len(self.violations)}

    def to_published_json(self, count_interval: int) -> dict[str, Any]:
        """What the published manifest may say: every count of a check goes through the
        interval filter (rule 4), as the manifest's own counts do. The checks count raw
        inputs (trajectories of the window, suppressed persons): exact, they would undo
        the filter of the manifest's input counts."""
        published = self.to_json()
        published["checks"] = {
            name: (interval_count(value, self.k, count_interval)
                   if isinstance(value, int) and not isinstance(value, bool)
                   and name not in STRUCTURAL_CHECKS else value)
            for name, value in self.checks.items()}
        published["count_interval"] = count_interval
        return published


@dataclass(frozen=True)
class ReleaseUnderTest:
    """A release (or build) schema with its manifest and the dataset it claims."""

    schema: str
    manifest: dict[str, Any]
    dataset_id: int
    source_sha256: str

    @property
    def k(self) -> int:
        return int(self.manifest["k"])

    @property
    def parameters(self) -> dict[str, Any]:
        return dict(self.manifest["parameters"])

    @property
    def count_interval(self) -> int:
        return int(self.manifest["count_interval"])


def read_release(conn: psycopg.Connection, schema: str) -> ReleaseUnderTest:
    """The manifest of ``schema`` and its dataset; raises InputError if either is missing."""
    exists = fetch_row(conn, "db/relation_exists.sql", {"relation": f"{schema}.manifest"})
    if exists is None or not exists["present"]:
        raise InputError(f"{schema} is not a release (no manifest table); list them with "
                         "`anonymizers releases`")
    manifest = fetch_row(conn, "verify/manifest.sql", release=schema)
    if manifest is None:
        raise InputError(f"{schema} has no manifest row: not a release")
    found = fetch_row(conn, "verify/dataset_source.sql", {"name": manifest["dataset"]})
    if found is None:
        raise InputError(f"dataset {manifest['dataset']!r} of this release is no longer loaded")
    return ReleaseUnderTest(schema, manifest, int(found["dataset_id"]),
                            str(found["source_sha256"]))


def check_shared_rules(conn: psycopg.Connection, release: ReleaseUnderTest, lattice_m: float,
                       result: VerifierResult, time_lattice_s: float | None = None) -> bool:
    """Rules 1-5 of the machinery; False when the input is not the release's (stop there).

    ``lattice_m`` is the spatial lattice clip edges must lie on; ``time_lattice_s`` the
    time grid (seconds from the window start) of a family that publishes time points
    (MOB); without it a release may publish no time column at all.
    """
    if not _check_fingerprint(conn, release, result):
        return False
    _check_persons(release, result)
    _check_count_columns(conn, release, result)
    _check_lattice(conn, release, lattice_m, result)
    _check_metrics(conn, release, result)
    check_ratios(conn, release, result)
    _check_window(conn, release, result)
    _check_precision(release, result)
    _check_measured_risk(conn, release, result)
    _check_identifiers_and_time(conn, release, time_lattice_s, result)
    return True


# --------------------------------------------------------------------------- rule 5


def _check_fingerprint(conn: psycopg.Connection, release: ReleaseUnderTest,
                       result: VerifierResult) -> bool:
    manifest = release.manifest
    secret = installation_secret(conn)
    if manifest["source_fingerprint"] != source_fingerprint(secret, release.source_sha256):
        result.violations.append("the source fingerprint is not this installation's keyed "
                                 "fingerprint of the dataset's source file: the ledger would "
                                 "not find the release's overlaps (rule 4)")
        return False
    expected = input_fingerprint(
        secret, release.source_sha256, release.dataset_id,
        manifest["window_start"].astimezone(UTC).isoformat(),
        manifest["window_end"].astimezone(UTC).isoformat())
    if manifest["input_fingerprint"] != expected:
        result.violations.append("the input fingerprint is not this installation's keyed "
                                 "fingerprint of the dataset and window: the dataset changed "
                                 "since the release was built, or the fingerprint is unkeyed")
        return False
    result.checks["fingerprint_keyed"] = True
    return True


def _check_time_columns(conn: psycopg.Connection, release: ReleaseUnderTest,
                        time_lattice_s: float | None, result: VerifierResult) -> None:
    """No time finer than the method publishes: without a declared time grid, no time
    column at all; with one (``time_lattice_s``), only timestamptz values on the grid
    window_start + i * time_lattice_s from the window's start to its end."""
    timed = fetch_rows(conn, "verify/time_columns.sql", {"schema": release.schema})
    result.checks["time_columns"] = len(timed)
    for row in timed:
        table, column = row["table_name"], row["column_name"]
        if time_lattice_s is None or row["data_type"] != "timestamp with time zone":
            result.violations.append(f"{table}.{column} publishes time finer than the "
                                     "release window")
            continue
        off = fetch_columns(conn, "verify/time_off_lattice.sql", {
            "window_start": release.manifest["window_start"],
            "window_end": release.manifest["window_end"], "step_s": time_lattice_s},
            source=(release.schema, table), column=column)["n_off"][0]
        if off:
            result.violations.append(f"{table}.{column} holds {off} time(s) off the release's "
                                     f"{time_lattice_s:g} s grid or outside its window")


def _check_identifiers_and_time(conn: psycopg.Connection, release: ReleaseUnderTest,
                                time_lattice_s: float | None,
                                result: VerifierResult) -> None:
    columns = _table_columns(conn, "verify/identifier_leaks.sql", release.schema)
    run_sql_file(conn, "verify/published_id_values_reset.sql")
    for column_no, (table, column) in enumerate(columns):
        run_sql_file(conn, "verify/published_id_values.sql", {"column_no": column_no},
                     source=(release.schema, table), column=column)
    found = fetch_columns(conn, "verify/count_leaked_ids.sql", {"dataset_id": release.dataset_id})
    leaks = dict(zip(found["column_no"], found["leaked"], strict=True))
    for column_no, n in sorted(leaks.items()):
        table, column = columns[column_no]
        result.violations.append(f"{table}.{column} holds {n} raw traj_id/user_id values")
    result.checks["identifier_columns_scanned"] = len(columns)
    result.checks["raw_identifiers_found"] = sum(leaks.values())
    _check_time_columns(conn, release, time_lattice_s, result)
    for table, column in _table_columns(conn, "verify/text_columns.sql", release.schema):
        holding = fetch_columns(conn, "verify/column_containing.sql",
                                {"needle": release.source_sha256},
                                source=(release.schema, table), column=column)["n_rows"][0]
        if holding:
            result.violations.append(f"{table}.{column} publishes the source file's plain "
                                     "digest, which confirms a candidate file (rule 5)")


# --------------------------------------------------------------------------- rule 1


def _check_persons(release: ReleaseUnderTest, result: VerifierResult) -> None:
    if release.manifest["k_counts"] != "persons":
        result.violations.append(f"k counts {release.manifest['k_counts']!r}: every release "
                                 "must count distinct persons (rule 1)")


def _table_columns(conn: psycopg.Connection, name: str, schema: str) -> list[tuple[str, str]]:
    """The (table_name, column_name) rows ``sql/<name>`` lists for release ``schema``."""
    return [(row["table_name"], row["column_name"])
            for row in fetch_rows(conn, name, {"schema": schema})]


def _count_columns(conn: psycopg.Connection, schema: str) -> list[tuple[str, str]]:
    return [(table, column)
            for table, column in _table_columns(conn, "verify/count_columns.sql", schema)
            if COUNT_COLUMN.match(column)]


def _check_count_columns(conn: psycopg.Connection, release: ReleaseUnderTest,
                         result: VerifierResult) -> None:
    """Every published count of people is >= k and on the interval filter's lattice."""
    k, width = release.k, release.count_interval
    columns = _count_columns(conn, release.schema)
    result.checks["count_columns"] = len(columns)
    for table, column in columns:
        values = fetch_columns(conn, "verify/distinct_values.sql",
                               source=(release.schema, table), column=column)["value"]
        below = [v for v in values if v is not None and v < k]
        off = [v for v in values if v is not None and v >= k and (v - k) % width]
        if below:
            result.violations.append(f"{table}.{column} publishes counts below k={k}: "
                                     f"{sorted(below)[:5]}")
        if off:
            result.violations.append(f"{table}.{column} publishes counts not on the interval "
                                     f"filter (k={k}, interval {width}): {sorted(off)[:5]}")


# --------------------------------------------------------------------------- rule 2


def _check_lattice(conn: psycopg.Connection, release: ReleaseUnderTest, lattice_m: float,
                   result: VerifierResult) -> None:
    """Wherever published polygons are cut by a clip box (axis-aligned edges on a side of
    their extent), that side lies on the declared lattice: never a fix's coordinate."""
    sides: list[tuple[str, str, float]] = []
    for row in fetch_rows(conn, "verify/geometry_columns.sql", {"schema": release.schema}):
        table, column = row["f_table_name"], row["f_geometry_column"]
        edges = fetch_rows(conn, "verify/clip_edges.sql", source=(release.schema, table),
                           column=column)
        sides += [(table, edge["side"], float(edge["value"])) for edge in edges]
    result.checks["lattice_m"] = lattice_m
    result.checks["clipped_sides"] = len(sides)
    for table, side, value in sides:
        if not on_lattice(value, lattice_m):
            result.violations.append(f"the {side} edge of {table} (at {value:.3f}) is not on the "
                                     f"{lattice_m:g} m lattice: a clip box there may be an "
                                     "individual's position (rule 2)")


def on_lattice(value: float, lattice_m: float, tolerance: float = 1e-6) -> bool:
    """True if ``value`` is a multiple of ``lattice_m`` (within ``tolerance`` metres)."""
    steps = value / lattice_m
    return abs(steps - round(steps)) * lattice_m <= tolerance


# --------------------------------------------------------------------------- rule 3


def _family_order_statistics(method: str) -> frozenset[str]:
    """The order-statistic names the method's family declares are not individuals' values."""
    entry = METHODS.get(method)
    return FAMILIES[entry.family].allowed_order_statistics if entry else frozenset()


def _check_metrics(conn: psycopg.Connection, release: ReleaseUnderTest,
                   result: VerifierResult) -> None:
    rows = fetch_rows(conn, "verify/metric_values.sql", release=release.schema)
    k, width = release.k, release.count_interval
    result.checks["metric_values"] = len(rows)
    family_allows = _family_order_statistics(release.manifest["method"])
    for row in rows:
        name, unit, value = row["name"], row["unit"], row["value"]
        # An attack's probability lies in [0, 1]: a raw coordinate or length under that
        # name would not.
        allowed = name in ALLOWED_ORDER_STATISTICS or name in family_allows or (
            unit == "probability" and ATTACK_PROBABILITY.match(name) is not None
            and (value is None or 0.0 <= value <= 1.0))
        if ORDER_STATISTIC.search(name) and not allowed:
            result.violations.append(f"metric {name} is an order statistic (minimum, maximum "
                                     "or quantile): it can be one person's value (rule 3)")
        if unit != "count" or value is None:
            continue
        if value != int(value) or interval_count(int(value), k, width) != value:
            result.violations.append(f"metric {name} = {value:g} is a count that is neither 0 "
                                     f"nor an interval-filtered count of at least k={k}")


# --------------------------------------------------------------------------- rule 4


def _check_window(conn: psycopg.Connection, release: ReleaseUnderTest,
                  result: VerifierResult) -> None:
    manifest = release.manifest
    accepted = bool((manifest.get("composition_risk") or "").strip())
    hours = (manifest["window_end"] - manifest["window_start"]).total_seconds() / 3600
    result.checks["window_hours"] = round(hours, 4)
    result.checks["composition_risk_accepted"] = accepted
    if hours < MIN_WINDOW_HOURS and not accepted:
        result.violations.append(f"the window lasts {hours * 60:.0f} min, shorter than "
                                 f"{MIN_WINDOW_HOURS:g} h, and no composition risk was accepted")
    overlapping = fetch_rows(conn, "verify/ledger_overlaps.sql", {
        "dataset": manifest["dataset"], "source_fingerprint": manifest["source_fingerprint"],
        "window_start": manifest["window_start"],
        "window_end": manifest["window_end"], "release_name": manifest["release_name"]})
    result.checks["overlapping_releases"] = len(overlapping)
    for other in overlapping:
        if not accepted and not (other["composition_risk"] or "").strip():
            result.violations.append(f"the window overlaps published release "
                                     f"{other['release_name']} and neither release records "
                                     "an accepted composition risk")
    if release.count_interval < 1:
        result.violations.append(f"count_interval {release.count_interval} is not an interval")


# --------------------------------------------------------------------------- rule 7


def _check_precision(release: ReleaseUnderTest, result: VerifierResult) -> None:
    """Every parameter the registry declares a published precision is at least the floor
    in the manifest's own parameters, unless the operator accepted the risk."""
    method = METHODS.get(release.manifest["method"])
    declared = [spec.name for spec in (method.params if method else ()) if spec.precision]
    accepted = bool((release.manifest.get("precision_risk") or "").strip())
    result.checks["precision_parameters"] = len(declared)
    result.checks["precision_risk_accepted"] = accepted
    for name in declared:
        value = release.parameters.get(name)
        if value is None:
            result.violations.append(f"the manifest records no {name}: the release's published "
                                     "precision cannot be checked (rule 7)")
        elif float(value) < PRECISION_FLOOR_M and not accepted:
            result.violations.append(f"{name}={float(value):g} m is below the "
                                     f"{PRECISION_FLOOR_M:g} m floor of published precision and "
                                     "no precision risk was accepted (rule 7)")


# --------------------------------------------------------------------------- rule 9


def _check_measured_risk(conn: psycopg.Connection, release: ReleaseUnderTest,
                         result: VerifierResult) -> None:
    """No attack of the suite beats 1/k, covered by the privacy model or not, unless the
    operator accepted the attack risk (the metrics step stops such a run first; this reads
    what it recorded, so a release without the figures cannot pass either)."""
    accepted = bool((release.manifest.get("attack_risk") or "").strip())
    bound = 1.0 / release.k + _RISK_EPSILON
    maxima = [(row["name"], row["value"])
              for row in fetch_rows(conn, "verify/metric_values.sql", release=release.schema)
              if ATTACK_MAXIMUM.match(row["name"]) and row["unit"] == "probability"
              and row["value"] is not None]
    above = [(name, value) for name, value in maxima if value > bound]
    result.checks["attack_maxima"] = len(maxima)
    result.checks["attack_risk_accepted"] = accepted
    if accepted:
        return
    for name, value in above[:SHOWN]:
        result.violations.append(f"{name} = {value:.3f} > 1/k = {1 / release.k:.3f}: an attack "
                                 "of the suite re-identifies above 1/k and no attack risk was "
                                 "accepted (rule 9)")
