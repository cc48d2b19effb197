"""The registry of method families: which methods exist, their family, parameters and steps.

Plain data, cheap to import (the DAG files, the CLI's help and validation read it at
parse time). Each family declares itself in its own folder
(``anonymizers/families/<name>/declaration.py``: its FamilyEntry, its methods with their
typed parameters and traits; see :mod:`anonymizers.families.declaration`); the registry
is the list of those folders, one line per family, plus the parameters every run shares.
A family's code (algorithms, SQL steps, metrics) and its verifier are imported only when a
task runs.
"""

from __future__ import annotations

import importlib

from anonymizers.errors import InputError
from anonymizers.families.declaration import FamilyEntry, MethodEntry
from anonymizers.parameters import ParamSpec
from anonymizers.risks import RISKS

__all__ = [
    "FAMILIES",
    "MACHINERY_PARAMS",
    "METHODS",
    "RUN_PARAMS",
    "SHARED_STEPS_AFTER",
    "WINDOWS_PARAMS",
    "FamilyEntry",
    "MethodEntry",
    "family_params",
    "method_entry",
]

# The families, in the order the CLI and the docs list them: one line each.
_FAMILY_PACKAGES = (
    "generalization",
    "mob",
    "clustering",
    "groups",
    "aggregates",
)


# --------------------------------------------------------------------------- shared


# What every release run is given (the DAG's own params): not part of a method.
RUN_PARAMS: tuple[ParamSpec, ...] = (
    ParamSpec("dataset", str, "demo", "Dataset name (raw.datasets)"),
    ParamSpec("k", int, 5, "Anonymity threshold: distinct persons behind every published item",
              minimum=2),
    ParamSpec("start", str, None, "Window start, ISO-8601 (default: the data interval of a "
              "scheduled run, else the start of the data)", nullable=True),
    ParamSpec("end", str, None, "Window end, exclusive", nullable=True),
    ParamSpec("srid", int, None, "Metric CRS of the release (default: the UTM zone of the "
              "data)", nullable=True, minimum=1),
    *(ParamSpec(risk.param, str, None, f"Reason to publish although {risk.accepts} "
                "(recorded in the manifest and the catalog)", nullable=True)
      for risk in RISKS),
)

# Parameters of the shared machinery, recorded with the method's (privacy rules 3-4).
MACHINERY_PARAMS: tuple[ParamSpec, ...] = (
    ParamSpec("count_interval", int, None,
              "Interval filter size I_s of published counts (seed 004 §4.2; default k; "
              "1 = exact counts)", minimum=1, nullable=True),
    ParamSpec("min_window_hours", float, 1.0,
              "Shortest window; below 1 h needs accept_composition_risk",
              minimum=0, exclusive_minimum=True),
    ParamSpec("comparison", str, None,
              "Id of the `anonymizers compare` run this release belongs to: published for "
              "the data owner's comparison only, analyst cannot read it", nullable=True),
)

# Parameters of a windows run (DAG ``<family>_windows``) on top of the family's: start and
# end are required there, and [start, end) is cut into windows of ``window_hours``.
WINDOWS_PARAMS: tuple[ParamSpec, ...] = (
    ParamSpec("window_hours", float, 24.0,
              "Length of each window of a windows run, hours (at least min_window_hours; "
              "one release per window)", minimum=0, exclusive_minimum=True),
)

# Steps of the shared machinery after the family's steps (prepare comes first).
SHARED_STEPS_AFTER: tuple[str, ...] = ("manifest", "metrics", "verify", "publish", "cleanup")


# --------------------------------------------------------------------------- the registry


def _declarations() -> tuple[dict[str, FamilyEntry], dict[str, MethodEntry]]:
    families: dict[str, FamilyEntry] = {}
    methods: dict[str, MethodEntry] = {}
    for package in _FAMILY_PACKAGES:
        declared = importlib.import_module(f"anonymizers.families.{package}.declaration")
        family: FamilyEntry = declared.FAMILY
        if family.name != package:
            raise ImportError(f"anonymizers.families.{package} declares family {family.name!r}")
        families[family.name] = family
        for method in declared.METHODS:
            if method.family != family.name or method.name in methods:
                raise ImportError(f"method {method.name!r} of {package} is declared twice or "
                                  "in another family's folder")
            methods[method.name] = method
    return families, methods


FAMILIES, METHODS = _declarations()


def method_entry(method: str) -> MethodEntry:
    """The registry entry of ``method``; InputError naming the choices if there is none."""
    try:
        return METHODS[method]
    except KeyError:
        raise InputError(f"unknown method {method!r}; choose one of "
                         f"{', '.join(sorted(METHODS))}") from None


def family_params(family: str) -> tuple[ParamSpec, ...]:
    """Every method parameter of ``family`` once (a name means the same in all its methods)."""
    seen: dict[str, ParamSpec] = {}
    for method in METHODS.values():
        if method.family != family:
            continue
        for spec in method.params:
            if seen.setdefault(spec.name, spec) != spec:
                raise InputError(f"family {family}: parameter {spec.name} is declared twice "
                                 "with different meanings")  # a registry bug, caught by tests
    return tuple(seen.values())
