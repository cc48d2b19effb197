"""Risks an operator may accept, each explicitly and on the record.

Three rules of the machinery can be overridden, never silently: the operator gives a
reason as a run parameter (``--accept-...-risk`` on the command line, the same key in a
DAG run's conf), and the reason is recorded in the release's manifest and in the catalog,
shown by ``anonymizers releases`` and in the report. Without a reason the release is
refused, by the gate before the run and by the verifier on the tables about to be
published. Plain data, cheap to import (the registry and the DAG files read it at parse
time).

>>> [risk.param for risk in RISKS]
['accept_composition_risk', 'accept_precision_risk', 'accept_attack_risk']
>>> PRECISION_FLOOR_M
50.0
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["ATTACK", "CALLER_ENV", "COMMAND_LINE", "COMPOSITION", "PRECISION",
           "PRECISION_FLOOR_M", "RISKS", "Risk", "accepted_risks",
           "recorded_risks"]

# The finest lattice a release may publish on without an accepted precision risk (privacy
# rule 7): the cell size, lattice step or grid side of every parameter that sets a
# published precision. A lattice edge tells that somebody of the release was within one
# step of it (on a 6-hour T-Drive window at 50 m, 65 % of TCAA's rectangle edges had
# exactly one person in their outermost strip). 50 m is about a city block's half-width
# and five to ten times the error of a consumer GPS fix: finer, and an edge is the fix.
PRECISION_FLOOR_M = 50.0

# Set (to COMMAND_LINE) while the ``anonymizers`` command runs a DAG in its own process
# (airflow_runner.run_dag): a refusal then names the command's flag; under Airflow's
# scheduler or a dag.test() of its own, the DAG param.
CALLER_ENV = "ANONYMIZERS_CALLER"
COMMAND_LINE = "command line"


@dataclass(frozen=True)
class Risk:
    """One rule an operator may override: where the reason goes and what it accepts."""

    name: str  # short name; ``<name>_risk`` is the manifest's and the catalog's column
    accepts: str  # what publishing despite the rule means, for help, listings and reports

    @property
    def column(self) -> str:
        return f"{self.name}_risk"

    @property
    def param(self) -> str:
        return f"accept_{self.name}_risk"

    @property
    def flag(self) -> str:
        return f"--accept-{self.name}-risk"

    def how_to_accept(self) -> str:
        """What the caller gives to accept the risk, e.g. in ``..., or <this>.``."""
        if os.environ.get(CALLER_ENV) == COMMAND_LINE:
            return f"give {self.flag} \"<reason>\""
        return (f"set the DAG param {self.param} to \"<reason>\" (in the run's conf, or in "
                "its schedule's declaration)")


COMPOSITION = Risk(
    "composition", "the window overlaps or nests a published window of the same data, or "
    "is shorter than min_window_hours (privacy rule 4)")
PRECISION = Risk(
    "precision", f"a parameter that sets a published precision is below the "
    f"{PRECISION_FLOOR_M:g} m floor (privacy rule 7)")
ATTACK = Risk(
    "attack", "an attack of the suite measures a re-identification risk above 1/k that the "
    "method's privacy model does not cover (privacy rule 9)")
RISKS: tuple[Risk, ...] = (COMPOSITION, PRECISION, ATTACK)


def recorded_risks(record: Mapping[str, Any]) -> list[tuple[Risk, str]]:
    """Every risk a manifest or catalog row records as accepted, with its reason.

    >>> [(risk.name, reason) for risk, reason in recorded_risks({"attack_risk": " model "})]
    [('attack', 'model')]
    """
    found = [(risk, str(record.get(risk.column) or "").strip()) for risk in RISKS]
    return [(risk, reason) for risk, reason in found if reason]


def accepted_risks(params: Mapping[str, Any]) -> dict[str, str]:
    """``{column: reason}`` of every risk whose parameter carries a non-blank reason.

    >>> accepted_risks({"accept_attack_risk": " paper's model ", "accept_precision_risk": ""})
    {'attack_risk': "paper's model"}
    """
    found = {risk.column: str(params.get(risk.param) or "").strip() for risk in RISKS}
    return {column: reason for column, reason in found.items() if reason}
