"""The attack suite against one release: run it, judge it, turn it into metrics.

Every release records the result in its metrics (the pipeline's ``metrics`` step), and
``anonymizers attack RELEASE`` runs it again, with other settings if asked, on a published
release. No model may beat 1/k (privacy rule 9): one the family's privacy model covers never, one
it does not cover only when the operator accepted that risk for the release (recorded in
its manifest and the catalog as ``attack_risk``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import psycopg

from anonymizers.attacks.adapters import attack_input
from anonymizers.attacks.models import MODELS, describe
from anonymizers.attacks.suite import AttackResult, run_attacks, sample_units
from anonymizers.families.base import MetricRow, SeriesRow
from anonymizers.memory import give_back
from anonymizers.metrics.shares import Ratio
from anonymizers.verifiers.base import read_release

__all__ = ["AT_RELEASE", "DEFAULTS", "AttackSettings", "ReleaseAttack", "attack_metrics",
           "attack_release", "format_table"]

# Slack for floating point in "risk <= 1/k".
_EPSILON = 1e-12


@dataclass(frozen=True)
class AttackSettings:
    """How much of the release to attack: knowledge lengths, targets, instances per target."""

    lengths: tuple[int, ...] = (1, 2, 3, 4)
    max_targets: int | None = 200
    max_instances: int | None = 1_000
    seed: int = 0


# On demand (`anonymizers attack`): the settings above. At every release (the metrics
# step) a lighter pass, a few seconds on the small city: the gate's verifier proves the
# model; this measures what an attacker gets from it.
DEFAULTS = AttackSettings()
AT_RELEASE = AttackSettings(lengths=(1, 2, 3), max_targets=50, max_instances=50)


@dataclass(frozen=True)
class ReleaseAttack:
    """The attack suite's result on one release."""

    schema: str
    k: int
    unit: str
    note: str
    covered: tuple[str, ...]
    result: AttackResult
    # The operator's reason, from the manifest, for publishing despite an attack the model
    # does not cover (privacy rule 9); None when none was given.
    attack_risk: str | None = None

    def summaries(self) -> list[dict[str, Any]]:
        return [{**s, "covered": s["model"] in self.covered}
                for s in self.result.summaries()]

    def breaches(self) -> list[dict[str, Any]]:
        """Models whose measured risk exceeds 1/k (privacy rule 9): a covered one breaks the
        release's own model, always; one the model does not cover stops the release too,
        unless the operator accepted that risk (``attack_risk``)."""
        bound = 1.0 / self.k + _EPSILON
        return [s for s in self.summaries() if s["prosecutor_max"] > bound
                and (s["covered"] or not self.attack_risk)]


def attack_release(conn: psycopg.Connection, schema: str,
                   settings: AttackSettings = DEFAULTS,
                   models: Sequence[str] | None = None,
                   work: str | None = None) -> ReleaseAttack:
    """Run the attack suite on release (or build) schema ``schema`` against its raw window
    (``work``: the work schema of the run building it, whose tables the adapter may read)."""
    release = read_release(conn, schema)
    given = attack_input(conn, schema, release.manifest["method"], work)
    # Only the sampled targets' rows stay: run_attacks samples the same units again (all
    # of them, now), and the rest of the window's targets go before the indexes are built.
    targets = given.observations.of_units(
        sample_units(given.observations, settings.max_targets, settings.seed))
    given = replace(given, observations=targets)
    give_back("the attack's input")
    records = given.records_for(targets)
    chosen = [m for m in (models or MODELS) if m in given.models]
    result = run_attacks(targets, records, models=chosen,
                         lengths=settings.lengths, threshold=1.0 / release.k,
                         max_units=settings.max_targets, max_instances=settings.max_instances,
                         seed=settings.seed)
    result.runs.extend(run for run in given.runs if models is None or run.model in models)
    return ReleaseAttack(schema, release.k, given.unit, given.note, given.covered, result,
                         (release.manifest.get("attack_risk") or "").strip() or None)


def attack_metrics(attack: ReleaseAttack) -> tuple[list[MetricRow], list[SeriesRow]]:
    """Scalars (each model at its riskiest knowledge length) and per-length series."""
    rows: list[MetricRow] = []
    series: list[SeriesRow] = []
    for name in dict.fromkeys(run.model for run in attack.result.runs):
        worst = attack.result.worst(name)
        bound = ("bounded by 1/k by the privacy model" if name in attack.covered
                 else "not bounded by the privacy model")
        what = f"attacker who {describe(name)} ({bound}); targets: {_plural(attack.unit)}"
        rows += [
            (f"attack_{name}_prosecutor_max", worst["prosecutor_max"], "probability",
             f"Largest re-identification probability of an {what}"),
            # The writer divides the filtered counts (privacy rule 8).
            (f"attack_{name}_prosecutor_share_above",
             Ratio(worst["prosecutor_above"], worst["persons"]), "ratio",
             f"Share of attacked persons whose probability exceeds 1/k, {what}"),
            (f"attack_{name}_journalist_max", worst["journalist_max"], "probability",
             f"Largest probability that the pick is the right person, {what}"),
            (f"attack_{name}_marketer", worst["marketer"], "probability",
             f"Average re-identification probability over attacked persons, {what}"),
        ]
        for summary in (s for s in attack.result.summaries() if s["model"] == name):
            x = float(summary["knowledge_length"])
            series += [
                (f"attack.{name}.max", x, summary["prosecutor_max"], "probability",
                 f"Largest re-identification probability when the {what}; x = j known points"),
                (f"attack.{name}.mean", x, summary["marketer"], "probability",
                 f"Average re-identification probability when the {what}; x = j known points"),
            ]
    persons = max((int(run.persons.size) for run in attack.result.runs), default=0)
    rows.append(("attack_persons", persons, "count", "Persons attacked (seeded sample of the "
                 "window's targets)"))
    return rows, series


def format_table(attack: ReleaseAttack) -> str:
    """The summaries as an aligned text table, one row per model and knowledge length."""
    header = ("model", "j", "persons", "prosecutor max", "share > 1/k", "journalist max",
              "marketer", "bounded by 1/k")
    rows = [(s["model"], str(s["knowledge_length"]), str(s["persons"]),
             f"{s['prosecutor_max']:.4f}", f"{s['prosecutor_share_above']:.4f}",
             f"{s['journalist_max']:.4f}", f"{s['marketer']:.4f}",
             "yes" if s["covered"] else "no") for s in attack.summaries()]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
             for row in [header, *rows]]
    return "\n".join([f"{attack.schema}: k = {attack.k}, 1/k = {1 / attack.k:.4f}; "
                      f"{attack.note}", *lines])


def _plural(unit: str) -> str:
    """``trajectories`` for ``trajectory``, ``persons`` for ``person``."""
    return unit[:-1] + "ies" if unit.endswith("y") else unit + "s"
