"""The shared steps of every release run and the step wrapper every family step uses.

A run is: ``prepare`` (resolve the release, check the ledger, a fresh work schema), the
family's steps in the registry's order, then ``manifest``, ``metrics``, ``verify`` (the
gate: the family's independent verifier on exactly the tables about to be published),
``publish`` (atomic rename + catalog row) and ``cleanup``. Each step runs in one
transaction and gives the same outcome when re-run; steps take and return the ReleaseSpec
as a plain dict (the only thing that travels by XCom).
"""

from __future__ import annotations

import json
import logging
import time
from contextlib import nullcontext
from datetime import datetime
from typing import Any

import psycopg

from anonymizers.db.connection import connect
from anonymizers.db.sqlfiles import run_sql_file
from anonymizers.errors import PrivacyViolation, ReleaseError
from anonymizers.families.registry import SHARED_STEPS_AFTER, method_entry
from anonymizers.memory import give_back
from anonymizers.processes import forked_call
from anonymizers.release import gate
from anonymizers.release.spec import ReleaseSpec
from anonymizers.release.step import FAULT_ENV, InjectedFault, injected_fault, step
from anonymizers.risks import ATTACK

__all__ = [
    "FAULT_ENV",
    "InjectedFault",
    "cleanup",
    "manifest",
    "metrics",
    "prepare",
    "publish",
    "run_step",
    "step",
    "verify",
]

log = logging.getLogger(__name__)

def prepare(params: dict[str, Any], interval: tuple[datetime, datetime] | None,
            run_id: str) -> dict[str, Any] | None:
    """Resolve the release; None when it is already published (the run then does nothing).

    First, whatever the release: the scratch of runs that failed or were abandoned longer
    ago than the retention goes (one query when there is none), so that a scheduled
    deployment never accumulates it."""
    _drop_expired_scratch()
    with connect() as conn:
        release = gate.resolve_spec(conn, params, interval, gate.run_token(run_id))
        if gate.is_published(conn, release):
            log.info("%s is already published: nothing to do", release.release_name)
            return None
        gate.check_composition(conn, release)
        gate.check_precision(release)
        gate.check_enough_owners(conn, release)
        gate.prepare_work_schema(conn, release)
        injected_fault("prepare")
    log.info("release %s, window %s .. %s, SRID %s", release.release_name,
             release.window_start, release.window_end, release.srid)
    return release.to_dict()


def _drop_expired_scratch() -> None:
    from anonymizers.release.retention import retention_seconds
    from anonymizers.release.scratch import drop_expired_scratch

    with connect(autocommit=True) as conn:
        dropped = drop_expired_scratch(conn, retention_seconds())
    for line in dropped.lines():
        log.info("%s", line)


def run_step(name: str, spec: dict[str, Any]) -> Any:
    """Run step ``name`` of the release: a shared step, or one of its family's.

    Raises ReleaseError for a family step that the release's method does not run (the DAG
    skips those tasks before calling this).
    """
    if name in SHARED_STEPS_AFTER:
        return globals()[name](spec)
    from anonymizers.families.base import load_family

    method = method_entry(spec["method"])
    if name not in method.steps:
        raise ReleaseError(f"{name} is not a step of method {method.name}")
    return load_family(method.family).steps()[name](spec)


def manifest(spec: dict[str, Any]) -> None:
    """The manifest (with the family's counts, interval-filtered) and an empty metrics table."""
    from anonymizers.families.base import load_family

    family = load_family(method_entry(spec["method"]).family)
    with step("manifest", spec) as (release, conn):
        counts = family.manifest_counts(conn, release)
        run_sql_file(conn, "release/create_manifest.sql",
                     {**release.manifest_params(), **vars(counts),
                      "published_unit": family.entry.published_unit},
                     build=release.build_schema)


def metrics(spec: dict[str, Any]) -> None:
    """The family's utility and risk measures and the attack suite's measured risk, stored
    by the shared writer; an attack beating 1/k stops the release here (privacy rule 9).

    The attack suite reads only what earlier steps committed (the build schema, the raw
    window), so it runs on a forked process with a connection of its own while this one
    measures the family's utility (:func:`~anonymizers.processes.forked_call`): at 25M
    fixes the two took 96 s and 83 s, each mostly on one CPU."""
    from anonymizers.attacks.adapters import adapter_for
    from anonymizers.families.base import load_family
    from anonymizers.metrics import writer

    family = load_family(method_entry(spec["method"]).family)
    with step("metrics", spec) as (release, conn):
        writer.reset(conn, release.build_schema)
        beside = (forked_call(_attack_beside, release, None)
                  if adapter_for(release.method) is not None else nullcontext(_no_attack))
        with beside as attack:
            measured = family.measure(conn, release)
            rows, series = list(measured.rows), list(measured.series)
            give_back("the family's measures")
            attack_rows, attack_series = attack()
        writer.write(conn, release.build_schema, rows + attack_rows, series + attack_series,
                     release.k, release.count_interval)


def _no_attack() -> tuple[list[Any], list[Any]]:
    return [], []


def _attack_beside(release: ReleaseSpec, _: None) -> tuple[list[Any], list[Any]]:
    """:func:`_attack` on a connection of its own (the forked process's)."""
    with connect() as conn:
        return _attack(conn, release.build_schema, release.work_schema)


def _attack(conn: psycopg.Connection, build: str, work: str) -> tuple[list[Any], list[Any]]:
    """The attack suite on the build schema (reading what the run made in ``work`` where
    its adapter can); raises PrivacyViolation when an attack beats 1/k (privacy rule 9)."""
    from anonymizers.attacks.release import AT_RELEASE, attack_metrics, attack_release

    started = time.monotonic()
    attack = attack_release(conn, build, AT_RELEASE, work=work)
    log.info("attack suite: %d runs in %.1f s", len(attack.result.runs),
             time.monotonic() - started)
    if breaches := attack.breaches():
        worst = max(breaches, key=lambda s: s["prosecutor_max"])
        raise PrivacyViolation(
            f"the {worst['model']} attack with {worst['knowledge_length']} known points "
            f"re-identifies with probability {worst['prosecutor_max']:.3f} > 1/k = "
            f"{1 / attack.k:.3f}; not published. " + _breach_advice(worst["covered"]))
    return attack_metrics(attack)


def _breach_advice(covered: bool) -> str:
    if covered:
        return "The method's own privacy model covers this attacker: this is a bug."
    return ("The method's privacy model does not cover this attacker. Choose parameters "
            "that publish less (see the method's documentation), or accept the risk: "
            f"{ATTACK.how_to_accept()}, recorded in the manifest and the catalog.")


def verify(spec: dict[str, Any]) -> dict[str, Any]:
    """The gate: the family's independent verifier on the build schema; raises if it fails."""
    from anonymizers.verifiers import verify_release

    with step("verify", spec) as (release, conn):
        result = verify_release(conn, release.build_schema)
        conn.execute(psycopg.sql.SQL("UPDATE {}.manifest SET verifier_result = %s").format(
            psycopg.sql.Identifier(release.build_schema)),
            (json.dumps(result.to_published_json(release.count_interval)),))
    if not result.passed:
        raise PrivacyViolation(f"{release.build_schema} fails its privacy model; not "
                               f"published: {'; '.join(result.violations[:5])}. "
                               + _gate_advice(release))
    return result.to_json()


def _gate_advice(release: ReleaseSpec) -> str:
    """What the operator can do when the independent verifier refuses a built release."""
    precision = [spec.name for spec in method_entry(release.method).params if spec.precision]
    coarser = f", coarser {' or '.join(precision)}" if precision else ""
    return (f"The anonymizer built an item the independent recount does not find behind "
            f"k={release.k} persons: the anonymizer is at fault, not your data or parameters; "
            f"report it with `anonymizers verify {release.build_schema}` (the build schema stays "
            "until `anonymizers cleanup` removes it). Meanwhile a larger k, a longer window"
            f"{coarser} makes each item hold more persons.")


def publish(spec: dict[str, Any]) -> str:
    with step("publish", spec) as (release, conn):
        published = gate.publish(conn, release)
    log.info("%s %s", release.release_name, "published" if published else "already published")
    return release.release_name


def cleanup(spec: dict[str, Any]) -> list[str]:
    """After a publish: this run's scratch schemas, and those of the release's other runs
    that failed or were abandoned (never those of a run still working)."""
    with step("cleanup", spec) as (release, conn):
        return gate.drop_stale_schemas(conn, release)
