"""Run the attack models on a release and summarize the risk as ARX reports it.

Per person, the risk of a model at knowledge length j is the maximum over the person's
units (their data, or each of their trajectories) of the unit's risk.  The summaries:

* **prosecutor**: the attacker knows the target is in the release; ``max`` risk and the
  share of persons whose risk exceeds the threshold (1/k for a release);
* **journalist**: the attacker does not know it; success counts only when the target's
  own person is among the candidates (``journalist_max``);
* **marketer**: the average risk over persons, the expected share re-identified.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from anonymizers.attacks.knowledge import Observations, Records
from anonymizers.attacks.models import MODELS, AttackModel, Target

__all__ = ["DEFAULT_LENGTHS", "AttackResult", "ModelRun", "run_attacks", "sample_units"]

DEFAULT_LENGTHS = (1, 2, 3, 4)


@dataclass(frozen=True)
class ModelRun:
    """One model at one knowledge length: per-person risks and their summaries."""

    model: str
    knowledge_length: int
    persons: np.ndarray
    risk: np.ndarray
    success: np.ndarray
    instances: int

    def summary(self, threshold: float) -> dict[str, Any]:
        n = int(self.persons.size)
        return {
            "model": self.model,
            "knowledge_length": self.knowledge_length,
            "persons": n,
            "instances": self.instances,
            "prosecutor_max": float(self.risk.max()) if n else float("nan"),
            "prosecutor_share_above": float(np.mean(self.risk > threshold)) if n else
            float("nan"),
            "prosecutor_above": int(np.count_nonzero(self.risk > threshold)),
            "journalist_max": float(self.success.max()) if n else float("nan"),
            "marketer": float(self.risk.mean()) if n else float("nan"),
        }


@dataclass
class AttackResult:
    """Every run of an attack suite, with the threshold its shares were measured against."""

    threshold: float
    runs: list[ModelRun] = field(default_factory=list)

    def summaries(self) -> list[dict[str, Any]]:
        return [run.summary(self.threshold) for run in self.runs]

    def worst(self, model: str) -> dict[str, Any]:
        """The summary of ``model`` at its riskiest knowledge length."""
        rows = [s for s in self.summaries() if s["model"] == model]
        return max(rows, key=lambda s: (s["prosecutor_max"], s["knowledge_length"]))


def sample_units(observations: Observations, max_units: int | None,
                 seed: int) -> np.ndarray:
    """Indices of the units to attack: all, or a seeded sample of ``max_units``."""
    n = observations.bounds.size - 1
    if max_units is None or n <= max_units:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, max_units, replace=False))


def run_attacks(observations: Observations, records: Records, *,
                models: Sequence[str] = tuple(MODELS), lengths: Sequence[int] = DEFAULT_LENGTHS,
                threshold: float, max_units: int | None = None,
                max_instances: int | None = 10_000, seed: int = 0,
                options: dict[str, dict[str, Any]] | None = None) -> AttackResult:
    """Attack every (sampled) target unit with every model at every knowledge length.

    Parameters
    ----------
    observations, records : see :mod:`anonymizers.attacks.knowledge`.
    models : names in :data:`~anonymizers.attacks.models.MODELS`.
    lengths : knowledge lengths j (``home_work`` runs once, at j = 2).
    threshold : prosecutor shares count persons whose risk exceeds it.
    max_units : attack at most this many units (seeded sample).
    max_instances, seed : per unit instance budget and its seed (see AttackModel).
    options : extra constructor arguments per model name (``tolerance``).
    """
    bounds = observations.bounds
    units = sample_units(observations, max_units, seed)
    targets = [Target(int(observations.person[bounds[u]]),
                      observations.location[bounds[u]:bounds[u + 1]],
                      observations.time[bounds[u]:bounds[u + 1]]) for u in units.tolist()]
    result = AttackResult(threshold)
    shared: dict[str, Any] = {}  # indexes of the records, built once for every model
    for name in models:
        model_lengths = (2,) if name == "home_work" else tuple(lengths)
        for j in model_lengths:
            model = MODELS[name](j, max_instances=max_instances, seed=seed,
                                 **(options or {}).get(name, {}))
            model.prepare(records, shared)
            result.runs.append(_run(model, targets))
    return result


def _run(model: AttackModel, targets: Sequence[Target]) -> ModelRun:
    outcomes = [model.attack(target) for target in targets]
    units_person = np.array([t.person for t in targets], dtype=np.int64)
    persons, owner = np.unique(units_person, return_inverse=True)
    risk = np.zeros(persons.size)
    success = np.zeros(persons.size)
    np.maximum.at(risk, owner, [o.risk for o in outcomes])
    np.maximum.at(success, owner, [o.success for o in outcomes])
    return ModelRun(model.name, model.knowledge_length, persons, risk, success,
                    sum(o.instances for o in outcomes))
