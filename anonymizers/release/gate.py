"""The release gate: resolve a run into a ReleaseSpec, prepare its schemas, publish atomically.

Publishing renames the verified build schema to the release schema and inserts its
catalog row in one transaction, under an advisory lock on the release name, only if the
release is not yet in the catalog and the verifier passed on exactly that schema. So a
failed or killed run leaves no release and no catalog row, a re-run publishes once, and
two concurrent runs of one release never both publish.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg

from anonymizers.db.sqlfiles import fetch_row, fetch_rows, run_sql_file
from anonymizers.errors import InputError, ReleaseError
from anonymizers.families.registry import FAMILIES, MACHINERY_PARAMS, RUN_PARAMS, method_entry
from anonymizers.parameters import parse_params
from anonymizers.release.fingerprint import (
    input_fingerprint,
    installation_secret,
    keyed_digest,
    source_fingerprint,
)
from anonymizers.release.spec import MIN_WINDOW_HOURS, ReleaseSpec, utm_srid
from anonymizers.risks import COMPOSITION, PRECISION, PRECISION_FLOOR_M, accepted_risks

__all__ = [
    "IDLE_GRACE_SECONDS",
    "check_composition",
    "drop_stale_schemas",
    "is_published",
    "prepare_work_schema",
    "publish",
    "release_params",
    "resolve_spec",
    "run_lock_key",
    "run_token",
    "work_lock_key",
]

log = logging.getLogger(__name__)

# A run whose last step ended longer ago than this, and that is not running a step, is
# abandoned (e.g. its worker was killed): a later publish of the release drops its schemas.
IDLE_GRACE_SECONDS = 3600


def run_token(run_id: str) -> str:
    return hashlib.sha1(run_id.encode()).hexdigest()[:8]


def run_lock_key(spec: ReleaseSpec) -> str:
    """The advisory lock a run's steps hold (shared) while they work."""
    return work_lock_key(spec.work_schema)


def work_lock_key(work_schema: str) -> str:
    """The advisory lock of the run whose work schema is ``work_schema``."""
    return f"run:{work_schema}"


def _dataset_row(conn: psycopg.Connection, name: str) -> dict[str, Any]:
    row = fetch_row(conn, "release/dataset_row.sql", {"name": name})
    if row is None:
        raise InputError(f"no dataset named {name!r}; load it first with "
                         f"`anonymizers load FILE --dataset {name}` (see `anonymizers releases`)")
    return row


def _window(params: dict[str, Any], interval: tuple[datetime, datetime] | None,
            t_min: datetime, t_max: datetime) -> tuple[str, str]:
    """Explicit start/end, else the scheduled data interval, else the whole dataset."""
    start, end = params.get("start"), params.get("end")
    # The window is half-open: end just after the last fix, on a whole second.
    after_last = (t_max + timedelta(seconds=1)).replace(microsecond=0)
    if start or end:
        lo = _moment(start, "start") if start else t_min
        hi = _moment(end, "end") if end else after_last
    elif interval is not None:
        lo, hi = interval
    else:
        lo, hi = t_min, after_last
    return _aware(lo).isoformat(), _aware(hi).isoformat()


def _moment(text: str, which: str) -> datetime:
    """An ISO-8601 window bound; InputError (not a traceback) for a date that does not exist."""
    try:
        return datetime.fromisoformat(str(text))
    except ValueError as error:
        raise InputError(f"window {which} {text!r} is not a valid ISO-8601 date and time "
                         f"({error}); write it like 2008-02-03 or 2008-02-03T06:00:00Z") from None


def _aware(moment: datetime) -> datetime:
    """In UTC (naive means UTC): the window's text form is part of the release identity."""
    return moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)


def resolve_spec(conn: psycopg.Connection, params: dict[str, Any],
                 interval: tuple[datetime, datetime] | None, token: str,
                 say: Callable[[str], None] = log.info) -> ReleaseSpec:
    """Turn DAG params (+ the data interval of a scheduled run) into a ReleaseSpec.

    The method's family checks its own inputs here and resolves its 'auto' parameters
    (``Family.resolve_params``; ``say`` tells which values it chose)."""
    run = _run_params(params)
    dataset = _dataset_row(conn, run["dataset"])
    dataset_id, sha = dataset["dataset_id"], dataset["source_sha256"]
    start, end = _window(run, interval, dataset["t_min"], dataset["t_max"])
    srid = int(run["srid"] or utm_srid(dataset["lon_median"], dataset["lat_median"]))
    secret = installation_secret(conn)
    chosen = {**_family_params(conn, run, dataset_id, params, say, (start, end)),
              **_keyed_inputs(conn, secret, params["method"], dataset_id)}
    return ReleaseSpec(
        dataset=run["dataset"], dataset_id=dataset_id,
        source_fingerprint=source_fingerprint(secret, sha),
        method=params["method"], k=run["k"], k_counts=params.get("k_counts") or "persons",
        window_start=start, window_end=end, srid=srid, params=chosen, run_token=token,
        input_fingerprint=input_fingerprint(secret, sha, dataset_id, start, end),
        risks=accepted_risks(run),
    )


def _family_params(conn: psycopg.Connection, run: dict[str, Any], dataset_id: int,
                   params: dict[str, Any], say: Callable[[str], None],
                   window: tuple[str, str]) -> dict[str, Any]:
    """The release's parameters, checked and resolved by the method's family."""
    from anonymizers.families.base import load_family

    family = load_family(method_entry(params["method"]).family)
    chosen = release_params(params["method"], params, run["k"])
    return family.resolve_params(conn, run["dataset"], dataset_id, run["k"], chosen, say,
                                 window)


def _keyed_inputs(conn: psycopg.Connection, secret: bytes, method: str,
                  dataset_id: int) -> dict[str, str]:
    """The keyed fingerprints of the family's other inputs (registry ``keyed_inputs``)."""
    entry = FAMILIES[method_entry(method).family]
    found = {}
    for name, sql_file in entry.keyed_inputs:
        row = fetch_row(conn, sql_file, {"dataset_id": dataset_id})
        found[name] = keyed_digest(secret, name, str(row["digest"] if row else None))
    return found


def _run_params(params: dict[str, Any]) -> dict[str, Any]:
    """dataset, k, start, end, srid and the accepted risks: parsed and checked."""
    if "method" not in params:
        raise InputError("no method given; choose one with --method (see release --help)")
    for required in ("dataset", "k"):
        if params.get(required) in (None, ""):
            raise InputError(f"no {required} given (see release --help)")
    return parse_params(RUN_PARAMS, params)


def release_params(method: str, given: dict[str, Any], k: int) -> dict[str, Any]:
    """The release's recorded parameters: the method's (registry ParamSpecs) and the
    machinery's, defaults filled in; ``count_interval`` defaults to k."""
    chosen = {**parse_params(method_entry(method).params, given),
              **parse_params(MACHINERY_PARAMS, given)}
    if chosen["count_interval"] is None:
        chosen["count_interval"] = k
    if not chosen["comparison"]:  # absent (also when empty): ordinary releases keep their identity
        del chosen["comparison"]
    return chosen


def check_composition(conn: psycopg.Connection, spec: ReleaseSpec) -> None:
    """Refuse a window that is too short or overlaps the ledger, unless the risk is accepted.

    Two releases of overlapping windows difference into facts about fewer than k people
    (06:00-07:00 next to 06:00-07:05 isolates whoever moved at 07:02), and a short window
    is one half of such a pair (DESIGN, privacy rule 4). The operator may publish anyway
    with ``accept_composition_risk`` (a reason, recorded in the manifest and the catalog).
    """
    if spec.composition_risk:
        return
    floor = float(spec.params.get("min_window_hours", MIN_WINDOW_HOURS))
    if floor < MIN_WINDOW_HOURS:
        raise InputError(f"min_window_hours={floor:g} is below the default of "
                         f"{MIN_WINDOW_HOURS:g} h: {COMPOSITION.how_to_accept()} "
                         "to lower it (the reason is recorded in the manifest and catalog)")
    if spec.window_hours < floor:
        raise InputError(f"the window {spec.window_start} .. {spec.window_end} lasts "
                         f"{spec.window_hours * 60:.0f} min, shorter than min_window_hours="
                         f"{floor:g}: next to other releases a short window isolates people. "
                         f"Widen it, or {COMPOSITION.how_to_accept()}.")
    overlapping = fetch_rows(conn, "release/overlapping_releases.sql", {
        "dataset": spec.dataset, "source_fingerprint": spec.source_fingerprint,
        "window_start": spec.window_start, "window_end": spec.window_end,
        "release_name": spec.release_name})
    if overlapping:
        shown = "; ".join(f"{row['release_name']} ({row['dataset']}, {row['method']}, "
                          f"{row['window_start']:%Y-%m-%d %H:%M} .. "
                          f"{row['window_end']:%Y-%m-%d %H:%M})" for row in overlapping[:3])
        raise InputError(
            f"the window {spec.window_start} .. {spec.window_end} overlaps {len(overlapping)} "
            f"published release(s) of the data of dataset {spec.dataset!r} (under this or "
            f"another dataset name): {shown}. Releases of "
            "overlapping windows can be differenced into facts about fewer than k people. "
            f"Choose a window that does not overlap them, or {COMPOSITION.how_to_accept()} "
            "(recorded in the manifest and catalog).")


def check_precision(spec: ReleaseSpec) -> None:
    """Refuse a published precision below the floor, unless the operator accepts the risk.

    Every parameter that sets a published precision (a lattice step, cell size or grid
    side; ``precision`` in the registry) is at least PRECISION_FLOOR_M metres: a finer
    lattice puts edges on individual fixes (DESIGN, privacy rule 7).
    """
    if spec.risks.get(PRECISION.column):
        return
    below = [(param.name, float(spec.params[param.name]))
             for param in method_entry(spec.method).params
             if param.precision and float(spec.params[param.name]) < PRECISION_FLOOR_M]
    if below:
        shown = ", ".join(f"{name}={value:g}" for name, value in below)
        raise InputError(
            f"{shown} m is finer than the {PRECISION_FLOOR_M:g} m floor of every published "
            "precision: the edges of so fine a lattice can place single persons. Choose at "
            f"least {PRECISION_FLOOR_M:g}, or {PRECISION.how_to_accept()} (recorded in "
            "the manifest and the catalog).")


def is_published(conn: psycopg.Connection, spec: ReleaseSpec) -> bool:
    return fetch_row(conn, "release/is_published.sql",
                     {"release_name": spec.release_name}) is not None


def check_enough_owners(conn: psycopg.Connection, spec: ReleaseSpec) -> None:
    """Fail fast when the window holds fewer than k owners: nothing could be published."""
    params = spec.window_params()
    found = fetch_row(conn, "release/window_owners.sql", params)
    owners = int(found["owners"]) if found else 0
    if owners == 0:
        dataset = _dataset_row(conn, spec.dataset)
        first, last = (dataset[bound].astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")
                       for bound in ("t_min", "t_max"))
        raise InputError(f"the window {spec.window_start} .. {spec.window_end} holds no fix of "
                         f"dataset {spec.dataset!r}, whose fixes run from {first} to {last} "
                         "UTC: choose --start/--end within them (or omit both for the whole "
                         "dataset)")
    if owners < spec.k:
        raise InputError(f"the window {spec.window_start} .. {spec.window_end} of dataset "
                         f"{spec.dataset!r} holds {owners} distinct {spec.k_counts}, fewer than "
                         f"k={spec.k}: nothing could be published. Lower k or widen the window.")


def prepare_work_schema(conn: psycopg.Connection, spec: ReleaseSpec) -> None:
    """A fresh work schema for this run, registered as running (re-running prepare starts
    the run over; a build schema left by an earlier attempt of this run goes too). The
    run's lock, held shared meanwhile, keeps a cleanup from dropping what it registers."""
    run_sql_file(conn, "release/lock_run_shared.sql", {"lock_key": run_lock_key(spec)})
    run_sql_file(conn, "release/reset_work_schema.sql", work=spec.work_schema,
                 build=spec.build_schema)
    run_sql_file(conn, "release/register_run.sql", {
        "work_schema": spec.work_schema, "build_schema": spec.build_schema,
        "release_name": spec.release_name})


def _schema_exists(conn: psycopg.Connection, name: str) -> bool:
    row = fetch_row(conn, "release/schema_exists.sql", {"name": name})
    return bool(row and row["present"])


def _verifier_passed(conn: psycopg.Connection, spec: ReleaseSpec) -> bool:
    row = fetch_row(conn, "release/verifier_passed.sql", build=spec.build_schema)
    return bool(row and row["passed"])


def publish(conn: psycopg.Connection, spec: ReleaseSpec) -> bool:
    """Publish the verified build schema; False if the release was already published.

    The ledger is checked again under a lock per dataset: of two overlapping runs that
    both passed ``prepare``, only the first to publish gets through.
    """
    run_sql_file(conn, "release/lock_publication.sql",
                 {"dataset": spec.dataset, "release_name": spec.release_name})
    if is_published(conn, spec):
        return False
    check_composition(conn, spec)
    if not _schema_exists(conn, spec.build_schema):
        raise ReleaseError(f"nothing to publish: build schema {spec.build_schema} is missing")
    if not _verifier_passed(conn, spec):
        raise ReleaseError(f"{spec.build_schema} has no passing verifier result: not published")
    run_sql_file(conn, "release/publish.sql", {"comment": _schema_comment(spec)},
                 build=spec.build_schema, release=spec.release_name)
    if not spec.params.get("comparison"):
        run_sql_file(conn, "release/grant_analyst.sql", release=spec.release_name)
    return True


def _schema_comment(spec: ReleaseSpec) -> str:
    """What an analyst reads about the release schema (psql's \\dn+, QGIS's browser)."""
    return (f"A release of dataset {spec.dataset} by method {spec.method} (k = {spec.k}): "
            "manifest says what was released, from which window, how and with which proof; "
            "metrics and metric_series measure it; the other tables are the method's, each "
            "with a comment. Every table has one geometry column at most and the integer "
            "key fid (a row number); ids are ordinary columns. Listed in catalog.releases.")


def drop_stale_schemas(conn: psycopg.Connection, spec: ReleaseSpec,
                       grace_seconds: float = IDLE_GRACE_SECONDS) -> list[str]:
    """After a publish: drop this run's scratch schemas and those of the release's other
    runs (and of runs of releases already published) that failed or were abandoned; never
    those of a run that is running a step (it holds its lock) or ended one within
    ``grace_seconds`` (it may be between two steps: a killed worker looks the same for that
    long, so its schemas go with a later publish)."""
    stale = fetch_rows(conn, "release/stale_runs.sql", {
        "work_pattern": f"work\\_{spec.digest}\\_%",
        "build_pattern": f"build\\_{spec.digest}\\_%",
        "work_schema": spec.work_schema, "build_schema": spec.build_schema,
        "release_name": spec.release_name, "grace_seconds": grace_seconds})
    names = [spec.work_schema, spec.build_schema]
    for run in stale:
        free = fetch_row(conn, "release/try_lock_run.sql",
                         {"lock_key": work_lock_key(run["run_work_schema"])})
        if free and free["locked"]:
            names.append(run["schema_name"])
    names = [name for name in names if _schema_exists(conn, name)]
    for name in names:
        run_sql_file(conn, "release/drop_run_schema.sql", schema=name)
    run_sql_file(conn, "release/forget_runs.sql", {"work_schemas": names})
    return names
