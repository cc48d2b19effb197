"""The manifest of a release in words: what k means, what was suppressed, what was checked.

Pure functions from the manifest row (a dict) to plain sentences; the page escapes them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from anonymizers.risks import PRECISION_FLOOR_M, RISKS

__all__ = ["checks_rows", "count_text", "manifest_sentences"]


def count_text(value: Any) -> str:
    """A published count: NULL is a count suppressed because it is below k."""
    return "fewer than k" if value is None else f"{int(value):,}"


def _when(moment: datetime) -> str:
    return f"{moment:%Y-%m-%d %H:%M} UTC" if moment.utcoffset() is not None else f"{moment}"


def _k_sentence(manifest: dict[str, Any]) -> str:
    k = manifest["k"]
    return (f"k = {k}, counting distinct {manifest['k_counts']}: every published item "
            f"(sequence, cell, flow, region, group, class, count) is supported by at least "
            f"{k} distinct persons, and no published coordinate comes from fewer than {k} "
            "persons (privacy rules 1 and 2).")


def _counts_sentence(manifest: dict[str, Any]) -> str:
    unit = manifest["published_unit"]
    interval = int(manifest["count_interval"])
    filtered = ("exact (the operator asked for count_interval = 1)" if interval == 1 else
                f"the lower end of an interval of {interval} (interval filter, seed 004 §4.2)")
    return (f"From {count_text(manifest['trajectories_in'])} trajectories of "
            f"{count_text(manifest['persons_in'])} persons "
            f"({count_text(manifest['points_in'])} fixes) in the window, "
            f"{count_text(manifest['trajectories_out'])} {unit} were published; "
            f"{count_text(manifest['suppressed'])} {unit} were suppressed (nothing of them "
            f"published). Input and suppressed counts are {filtered}.")


def _verifier_sentence(result: dict[str, Any] | None) -> str:
    if not result:
        return "The verifier has not run on this schema (it is not a published release)."
    checks = result.get("checks") or {}
    verdict = "passed" if result.get("passed") else (
        f"FAILED with {result.get('n_violations', 0)} violation(s)")
    return (f"The independent verifier (written apart from the anonymizer, reading only the "
            f"release tables, the ledger and the raw data) {verdict}; it ran "
            f"{len(checks)} checks, listed below.")


def _risks_sentence(manifest: dict[str, Any]) -> str:
    """Every rule the operator overrode for this release, with the recorded reason."""
    accepted = [(risk, str(manifest.get(risk.column) or "").strip()) for risk in RISKS]
    accepted = [(risk, reason) for risk, reason in accepted if reason]
    if not accepted:
        return ("None. The window overlaps no published window of the same data and is not "
                "shorter than the minimum; every published precision is at least "
                f"{PRECISION_FLOOR_M:g} m; no attack of the suite re-identifies anyone with a "
                "probability above 1/k.")
    return " ".join(f"ACCEPTED by the operator: publishing although {risk.accepts}, for this "
                    f"reason: {reason}." for risk, reason in accepted)


def manifest_sentences(manifest: dict[str, Any], family_title: str) -> list[tuple[str, str]]:
    """(topic, sentence) pairs that say what the manifest of a release says."""
    return [
        ("Release", f"{manifest['release_name']}: dataset {manifest['dataset']}, method "
                    f"{manifest['method']} ({family_title})."),
        ("Window", f"From {_when(manifest['window_start'])} (inclusive) to "
                   f"{_when(manifest['window_end'])} (exclusive); no finer time is published "
                   "than the method's own. Geometry in EPSG:"
                   f"{manifest['srid']} (metres)."),
        ("What k means", _k_sentence(manifest)),
        ("Privacy model", str(manifest["privacy_model"])),
        ("Published and suppressed", _counts_sentence(manifest)),
        ("Verifier", _verifier_sentence(manifest.get("verifier_result"))),
        ("Accepted risks", _risks_sentence(manifest)),
        ("Provenance", f"Input fingerprint {manifest['input_fingerprint']} (keyed HMAC: it "
                       "identifies the input to this installation only); code version "
                       f"{manifest['code_version']}."),
    ]


def checks_rows(result: dict[str, Any] | None) -> list[tuple[str, str]]:
    """The verifier's checks as (name, finding) rows, then its violations (if any)."""
    if not result:
        return []
    rows = [(str(name), _finding(value)) for name, value in (result.get("checks") or {}).items()]
    rows += [("violation", str(text)) for text in result.get("violations") or []]
    return rows


def _finding(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)
