"""The manifest of a release in words: what k means, what was suppressed, what was checked.

Pure functions from the manifest row (a dict) to plain sentences; the page escapes them.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from anonymizers.risks import PRECISION_FLOOR_M, recorded_risks

__all__ = ["count_text", "manifest_sentences", "parameter_rows", "plain"]

# A citation of the project's paper notes ("seed 000 §8.4", "(seed 004 §4.2; ...)",
# "(seed 000: Monreale et al., 2010)", "§4.3.3", "Definition 9"): the report says what a
# number means instead.
_CITATIONS = tuple(re.compile(pattern) for pattern in (
    r",? as §[\d.]+ says",                                       # "hidden as §4.4.5 says"
    r"\s*\(seed \d+[^()]*\)",                                   # "(seed 004 §4.2; ...)"
    r"[;,]?\s*\bseed \d+(?:[:,]? ?§[\d.]+)?(?:, [A-Z][a-z]+ \d+)?",  # "seed 000 §8.4, Theorem 10"
    r"\s*\(§[\d.]+(?:, §[\d.]+)*\)",                             # "(§4.2)"
    r"\s*§[\d.]+(?:, §[\d.]+)*",                                  # "§4.2"
    r"\s*\((?:implies )?(?:Definition|Theorem|Figure|Fig\.) [\d-]+\)"))  # "(Definition 9)"


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
                f"the lower end of an interval of {interval} starting at k (the interval "
                "filter: no exact count below k is published)")
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
    accepted = recorded_risks(manifest)
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
        ("Privacy model", plain(str(manifest["privacy_model"]))),
        ("Published and suppressed", _counts_sentence(manifest)),
        ("Verifier", _verifier_sentence(manifest.get("verifier_result"))),
        ("Accepted risks", _risks_sentence(manifest)),
        ("Provenance", f"Input fingerprint {manifest['input_fingerprint']} (keyed HMAC: it "
                       "identifies the input to this installation only); code version "
                       f"{manifest['code_version']}."),
    ]


def plain(text: str) -> str:
    """``text`` without citations of paper sections (what the number means stays).

    >>> plain("Largest success probability of the linking attack (seed 000 §8.4, Theorem 10)")
    'Largest success probability of the linking attack'
    >>> plain("Generalization releases (seed 000: Monreale et al., 2010)")
    'Generalization releases'
    >>> plain("the first x, mapped to published cells; seed 000 §8.4)")
    'the first x, mapped to published cells)'
    >>> plain("every cell (implies seed 000 Definition 9); boundaries hidden as §4.4.5 says.")
    'every cell; boundaries hidden.'
    """
    cleaned = text
    for pattern in _CITATIONS:  # in order: each removes what the one before left
        cleaned = pattern.sub("", cleaned)
    return re.sub(r"\(\s*[;,]?\s*\)", "", cleaned).replace(" ;", ";").strip()


# What an unset (None) parameter means, from its help text: "default k", "empty: no limit",
# "With places=voronoi: ...".
_UNSET = (re.compile(r"\bdefault (?P<what>[^;,)]+)"), re.compile(r"\bempty: (?P<what>[^;,)]+)"))
_ONLY_WITH = re.compile(r"^With (?P<what>[^:]+):")


def _unset_text(name: str, help_text: str, checks: dict[str, Any]) -> str:
    """What applies when parameter ``name`` is unset: the verifier's resolved figure of the
    same name, else what its help says."""
    if checks.get(name) is not None:
        return f"{checks[name]} (not set: the default, as applied and verified)"
    if found := _ONLY_WITH.match(help_text):
        return f"not set (used only with {found['what']})"
    for pattern in _UNSET:
        if found := pattern.search(help_text):
            return f"not set: {plain(found['what']).strip()}"
    return "not set"


def parameter_rows(manifest: dict[str, Any]) -> list[tuple[str, Any]]:
    """The method's parameters as the manifest records them, resolved: an unset one shows
    what applies instead (its default), never None."""
    from anonymizers.families.registry import METHODS

    entry = METHODS.get(str(manifest["method"]))
    helps = {spec.name: spec.help for spec in entry.params} if entry is not None else {}
    checks = (manifest.get("verifier_result") or {}).get("checks") or {}
    rows: list[tuple[str, Any]] = []
    for name, value in sorted((manifest.get("parameters") or {}).items()):
        if value is None:
            value = _unset_text(name, helps.get(name, ""), checks)
        elif value == "auto":
            value = "auto (this manifest predates recording the value prepare chose)"
        rows.append((name, value))
    return rows
