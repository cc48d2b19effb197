"""The method chooser: every method on one window at one k, utility against measured risk.

Each method is released through the normal gate in its own process (:mod:`.runs`), so
every result is a verified release in the ledger, marked with the comparison's id and
unreadable by analyst. Then, in one session, the window's raw fixes, random queries and
flows are prepared once and every release is measured against them (:mod:`.utility`) and
attacked with the attack suite (:mod:`anonymizers.attacks`). :mod:`.page` writes the
report.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg

from anonymizers.attacks.release import AttackSettings, attack_release
from anonymizers.compare.runs import MethodRun, backend_name, release_command, run_method
from anonymizers.compare.utility import Headline, Window, measure_release, prepare_window
from anonymizers.db.connection import connect
from anonymizers.errors import InputError
from anonymizers.families.base import load_family
from anonymizers.families.registry import MACHINERY_PARAMS, METHODS, method_entry
from anonymizers.release import gate

__all__ = ["ATTACKS", "Comparison", "MethodResult", "Risk", "compare_methods",
           "method_params"]

# The attack pass of a comparison: between the release-time pass and `anonymizers attack`.
ATTACKS = AttackSettings(lengths=(1, 2, 3), max_targets=100, max_instances=200)


@dataclass(frozen=True)
class Risk:
    """Measured re-identification risk of one release (the attack suite's summaries)."""

    prosecutor_max: float  # over every model and knowledge length
    worst_model: str
    covered_max: float  # over the models the family's privacy model covers (NaN: none)
    marketer_max: float  # the largest average risk of a model
    seconds: float


@dataclass
class MethodResult:
    run: MethodRun
    family: str
    headline: Headline | None = None
    risk: Risk | None = None
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"method": self.run.method, "family": self.family, "run": self.run.to_json(),
                "headline": self.headline.to_json() if self.headline else None,
                "risk": vars(self.risk) if self.risk else None, "notes": self.notes}


@dataclass
class Comparison:
    comparison: str
    dataset: str
    k: int
    window: Window | None
    results: list[MethodResult]
    attacks: AttackSettings

    def to_json(self) -> dict[str, Any]:
        window = self.window
        return {"comparison": self.comparison, "dataset": self.dataset, "k": self.k,
                "window": None if window is None else {
                    "start": window.start.isoformat(), "end": window.end.isoformat(),
                    "srid": window.srid, "fixes": window.fixes, "extent": window.extent,
                    "lattice_side_m": window.lattice_side},
                "attacks": vars(self.attacks),
                "methods": [result.to_json() for result in self.results]}


def method_params(methods: Sequence[str], pairs: Sequence[str]) -> dict[str, dict[str, str]]:
    """``key=value`` (every compared method that takes ``key``) and ``method.key=value``
    (that method only) as parameters per method; a key nobody takes is an error."""
    chosen: dict[str, dict[str, str]] = {method: {} for method in methods}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise InputError(f"--param {pair!r}: write key=value or method.key=value")
        method, dot, name = key.rpartition(".")
        targets = [method] if dot else list(methods)
        if dot and method not in chosen:
            raise InputError(f"--param {pair!r}: {method} is not among the compared methods")
        taking = [m for m in targets if name in _param_names(m)]
        if not taking:
            raise InputError(f"--param {pair!r}: no compared method takes a parameter "
                             f"{name!r} (see release --help)")
        for target in taking:
            chosen[target][name] = value
    return chosen


def _param_names(method: str) -> set[str]:
    reserved = {"comparison", "accept_composition_risk"}
    return {spec.name for spec in (*method_entry(method).params, *MACHINERY_PARAMS)} - reserved


def compare_methods(url: str, dataset: str, k: int, start: str | None, end: str | None,
                    methods: Sequence[str] | None, pairs: Sequence[str], out: Path,
                    log: Callable[[str], None], attacks: AttackSettings = ATTACKS,
                    method_timeout: float | None = None) -> Comparison:
    """Release every method (default: every registered one) on one window and measure."""
    chosen = list(methods or METHODS)
    params = method_params(chosen, pairs)
    window_start, window_end, srid = _resolve_window(url, dataset, k, start, end, chosen[0])
    # The id is part of each release's identity: a fresh one gives fresh releases.
    comparison = f"{dataset}_{datetime.now(UTC):%Y%m%dT%H%M%S}_{secrets.token_hex(2)}"
    log(f"comparison {comparison}: {len(chosen)} methods on {window_start} .. {window_end}, "
        f"k={k}")
    results = []
    for i, method in enumerate(chosen, 1):
        log(f"[{i}/{len(chosen)}] releasing {method} ...")
        command = release_command(dataset, method, k, window_start, window_end, comparison,
                                  params[method])
        run = run_method(command, method, url, out / "logs" / f"{method}.log",
                         method_timeout, application_name=backend_name(comparison, method))
        log(f"    {run.release or run.error} ({run.wall_s:.1f} s, {run.peak_rss_mib:.0f} MiB)")
        results.append(MethodResult(run, method_entry(method).family))
    window = _measure(url, dataset, k, window_start, window_end, srid, results, attacks, log)
    return Comparison(comparison, dataset, k, window, results, attacks)


def _resolve_window(url: str, dataset: str, k: int, start: str | None, end: str | None,
                    method: str) -> tuple[str, str, int]:
    """The window and CRS every method gets, as the gate resolves them (ISO text)."""
    conf = {"dataset": dataset, "method": method, "k": k, "start": start, "end": end}
    with connect(url) as conn:
        spec = gate.resolve_spec(conn, conf, None, "check")
        gate.check_enough_owners(conn, spec)
    return spec.window_start, spec.window_end, spec.srid


def _measure(url: str, dataset: str, k: int, start: str, end: str, srid: int,
             results: list[MethodResult], attacks: AttackSettings,
             log: Callable[[str], None]) -> Window | None:
    published = [r for r in results if r.run.release]
    if not published:
        return None
    log("measuring utility (same fixes, queries and flows for every release) and risk ...")
    with connect(url, autocommit=True) as conn:
        window = prepare_window(conn, dataset, datetime.fromisoformat(start),
                                datetime.fromisoformat(end), srid)
        for result in published:
            _measure_one(conn, window, result, k, attacks)
            log(f"    {result.run.method}: {_said(result)}")
    return window


def _measure_one(conn: psycopg.Connection, window: Window, result: MethodResult, k: int,
                 attacks: AttackSettings) -> None:
    release = str(result.run.release)
    footprint = load_family(result.family).footprint
    if footprint is None:
        result.notes.append(f"family {result.family} lists no footprint: utility not measured")
    else:
        result.headline = measure_release(conn, window, release, footprint)
    started = time.monotonic()
    attack = attack_release(conn, release, attacks)
    result.risk = _risk(attack.summaries(), time.monotonic() - started)
    if attack.note:
        result.notes.append(attack.note)


def _risk(summaries: list[dict[str, Any]], seconds: float) -> Risk:
    defined = [s for s in summaries if s["prosecutor_max"] == s["prosecutor_max"]]
    if not defined:
        nan = float("nan")
        return Risk(nan, "", nan, nan, round(seconds, 2))
    worst = max(defined, key=lambda s: s["prosecutor_max"])
    covered = [s["prosecutor_max"] for s in defined if s["covered"]]
    return Risk(prosecutor_max=float(worst["prosecutor_max"]),
                worst_model=f"{worst['model']} (j={worst['knowledge_length']})",
                covered_max=max(covered) if covered else float("nan"),
                marketer_max=max(float(s["marketer"]) for s in defined),
                seconds=round(seconds, 2))


def _said(result: MethodResult) -> str:
    h, r = result.headline, result.risk
    parts = []
    if h:
        parts.append(f"fixes {h.fixes_published_share:.3f}, range error "
                     f"{h.range_query_error:.3f}, flows {h.flow_preservation:.3f}")
    if r:
        parts.append(f"risk {r.prosecutor_max:.3f} ({r.worst_model}, {r.seconds:.1f} s)")
    return "; ".join(parts) or "not measured"
