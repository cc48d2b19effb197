"""The report's risk, for a reader who must decide: one summary, one panel per attack.

Pure functions over a release's metrics and series (no drawing, no database): which
series are probabilities of re-identification (drawn on a risk axis with the 1/k line),
which are measures where higher is safer (never on a risk axis), how the series group into
one panel per attack, and the summary sentences at the top of the page.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from anonymizers.reports.release_data import Metric, Series
from anonymizers.risks import recorded_risks

__all__ = ["RISK_PREFIXES", "SAFER_WHEN_HIGHER", "RiskPanel", "is_risk_series",
           "is_safer_when_higher", "risk_panels", "summary_sentences", "worst_attack"]

RISK_PREFIXES = ("reid.", "attack.")
# Series of the risk prefixes whose value grows with safety: the share of attacked
# trajectories that defeat the attack. Drawn on a probability-of-re-identification axis,
# 0.95 reads as 95 % risk.
SAFER_WHEN_HIGHER = frozenset({"fraction_zero"})
# Scalar metrics that are the largest probability an attack re-identifies someone.
WORST_METRICS = ("reid_max_probability",)
WORST_SUFFIX = "_prosecutor_max"
ATTACK_TITLES = {"reid": "linking attack on the published cell sequences"}


@dataclass(frozen=True)
class RiskPanel:
    """One attack's series: ``title`` and the series drawn in its panel."""

    attack: str
    title: str
    series: tuple[Series, ...]


def is_risk_series(name: str) -> bool:
    """Series of the re-identification measure and of the attack suite (``reid.*``,
    ``attack.*``), whether probabilities or safer-when-higher shares."""
    return name.startswith(RISK_PREFIXES)


def is_safer_when_higher(series: Series) -> bool:
    """A measure where higher is safer, or anything that is not a probability of
    re-identification: it never goes on a risk axis."""
    return series.name.rsplit(".", 1)[-1] in SAFER_WHEN_HIGHER or series.unit != "probability"


def _attack_of(name: str) -> str:
    """``reid`` for ``reid.max``; the model for ``attack.<model>.max``."""
    parts = name.split(".")
    return parts[1] if parts[0] == "attack" and len(parts) > 2 else parts[0]


def risk_panels(series: Sequence[Series]) -> tuple[list[RiskPanel], list[Series]]:
    """One panel per attack of the probabilities of re-identification, in the release's
    order; and the safer-when-higher series of the same attacks, apart."""
    grouped: dict[str, list[Series]] = {}
    safer: list[Series] = []
    for one in series:
        if not is_risk_series(one.name):
            continue
        if is_safer_when_higher(one):
            safer.append(one)
        else:
            grouped.setdefault(_attack_of(one.name), []).append(one)
    panels = [RiskPanel(attack, ATTACK_TITLES.get(attack, attack.replace("_", " ")),
                        tuple(found)) for attack, found in grouped.items()]
    panels.sort(key=lambda panel: panel.attack != "reid")  # the family's own measure first
    return panels, safer


def worst_attack(metrics: Sequence[Metric]) -> Metric | None:
    """The metric of the largest re-identification probability of any attack, or None."""
    found = [m for m in metrics if m.value is not None
             and (m.name in WORST_METRICS or
                  (m.name.startswith("attack_") and m.name.endswith(WORST_SUFFIX)))]
    return max(found, key=lambda m: m.value or 0.0, default=None)


def attack_name(metric: Metric) -> str:
    """``location_sequence`` for ``attack_location_sequence_prosecutor_max``."""
    if metric.name in WORST_METRICS:
        return ATTACK_TITLES["reid"]
    return metric.name.removeprefix("attack_").removesuffix(WORST_SUFFIX).replace("_", " ")


def _risk_sentence(metrics: Sequence[Metric], k: int) -> str:
    worst = worst_attack(metrics)
    bound = 1.0 / k
    if worst is None or worst.value is None:
        return ("No attack was measured on this release (run `anonymizers attack` on it); "
                f"the bound it must respect is 1/k = {bound:.3g}.")
    value = worst.value
    if value <= bound + 1e-9:
        return (f"No attack re-identifies anyone with probability above 1/k = {bound:.3g}: "
                f"the largest measured is {value:.3g}, by the {attack_name(worst)} attack "
                f"({worst.description}).")
    return (f"ABOVE THE BOUND: the {attack_name(worst)} attack re-identifies some persons "
            f"with probability up to {value:.3g}, above 1/k = {bound:.3g} "
            f"({worst.description}).")


def _accepted_sentence(manifest: dict[str, Any]) -> str:
    shown = [f"publishing although {risk.accepts} (reason recorded: {reason})"
             for risk, reason in recorded_risks(manifest)]
    if not shown:
        return "None: the operator overrode no privacy rule for this release."
    return "The operator accepted, and the manifest records: " + "; ".join(shown) + "."


def summary_sentences(manifest: dict[str, Any], metrics: Sequence[Metric]
                      ) -> list[tuple[str, str]]:
    """(topic, sentence) pairs for the top of the page: the worst attack against 1/k, the
    risks the operator accepted, the verifier's verdict."""
    result = manifest.get("verifier_result") or {}
    verdict = ("passed every check" if result.get("passed") else
               f"FAILED ({result.get('n_violations', 0)} violations)" if result else
               "has not run (this schema is not a published release)")
    return [("Measured risk", _risk_sentence(metrics, int(manifest["k"]))),
            ("Accepted risks", _accepted_sentence(manifest)),
            ("Verifier", f"The independent verifier {verdict}; its checks are listed below "
                         "in words.")]
