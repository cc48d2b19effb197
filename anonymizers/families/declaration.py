"""What a family declares about itself and its methods: plain data, cheap to import.

Each family's folder has a ``declaration`` module holding its :class:`FamilyEntry` (as
``FAMILY``) and its :class:`MethodEntry` tuple (as ``METHODS``); the registry reads those
and nothing else of the family at parse time. Methods are told apart by their declared
``traits`` (a frozen dataclass of the family's own), never by comparing a method's name:
the steps choose what to run from them, and the family's independent verifier reads them
(the declaration, not the anonymizer's code) to know what the method claims to publish.

A family's code lives by convention next to its declaration:
``anonymizers.families.<name>.family`` (the plug-in, a ``Family``), ``.verifier``
(``verify_release(conn, schema)``; it never imports the family's anonymizer code),
``.attack`` (the attack suite's adapter) and ``.contract`` (what the contract test plants);
its SQL lives under ``sql/<name>/`` (the verifier's under ``sql/<name>/verify/``, the
attacks' under ``sql/<name>/attacks/``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from anonymizers.parameters import MethodParams, ParamSpec

__all__ = ["DifferencingRules", "FamilyEntry", "MethodEntry"]


@dataclass(frozen=True)
class DifferencingRules:
    """How a family's published counts behave when two releases' windows nest (the
    differencing attack, ``anonymizers.attacks.differencing``).

    ``not_monotone``: item kind (as the family's ``attacks/differencing.sql`` names them)
    -> why its count in an inner window need not be at most its count in the outer one;
    a method lists in ``MethodEntry.monotone_counts`` the kinds that are monotone for two
    of its own releases. ``scope_params``: the parameters whose values decide what the
    input counts of the manifest count (equal scopes, the same count); empty: the window's
    fixes.
    """

    not_monotone: Mapping[str, str] = field(default_factory=dict)
    scope_params: tuple[str, ...] = ()


@dataclass(frozen=True)
class FamilyEntry:
    """One family: its paper, privacy model, step order and what the machinery reads."""

    name: str
    title: str
    privacy_model: str  # may use {k}
    steps: tuple[str, ...]  # every step of the family, in DAG order
    published_unit: str = "trajectories"  # what manifest.trajectories_out counts
    tags: tuple[str, ...] = ()
    # Inputs besides the window's fixes that decide the release (e.g. the QID set): a
    # parameter name and the SQL file (params: dataset_id) whose column ``digest`` digests them;
    # the gate records the keyed fingerprint of that digest as the parameter, so the
    # release's identity changes with them and the manifest says which were used.
    keyed_inputs: tuple[tuple[str, str], ...] = ()
    # Metric names of the family that look like order statistics but are not of
    # individual raw values (privacy rule 3), e.g. the median size of classes of >= k.
    allowed_order_statistics: frozenset[str] = frozenset()
    differencing: DifferencingRules = DifferencingRules()
    has_attack: bool = True  # whether ``.attack`` exists (the attack suite reads releases)

    def _module(self, part: str) -> str:
        return f"anonymizers.families.{self.name}.{part}"

    @property
    def module(self) -> str:
        """The family's plug-in module (its ``FAMILY`` is a ``families.base.Family``)."""
        return self._module("family")

    @property
    def verifier(self) -> str:
        """The module with ``verify_release(conn, schema)``; never imports the family."""
        return self._module("verifier")

    @property
    def attack(self) -> str | None:
        """The attack suite's adapter module, None when the family has none."""
        return self._module("attack") if self.has_attack else None

    @property
    def contract(self) -> str:
        """The module with the contract test's city parameters and planted violation."""
        return self._module("contract")


@dataclass(frozen=True)
class MethodEntry:
    """One method: its family, what variant it is, its typed parameters, steps and traits."""

    name: str
    family: str
    variant: str  # one line: what the method does (help, DAG docs)
    parameters: type[MethodParams]
    steps: tuple[str, ...]  # the family's steps this method runs, in order
    traits: Any = None  # the family's traits dataclass: what distinguishes the method
    # Item kinds whose published counts nest when two of this method's releases' windows
    # nest (DifferencingRules.not_monotone says why the others need not).
    monotone_counts: frozenset[str] = frozenset()

    @property
    def params(self) -> tuple[ParamSpec, ...]:
        """The ParamSpecs of the method's parameters (DAG Params, CLI help, validation)."""
        return self.parameters.specs()
