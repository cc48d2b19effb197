"""What each family's release looks like to an attacker: targets, records, anonymity sets.

A family names its adapter module in its registry entry (``FamilyEntry.attack``); the
module's ``attack_input(conn, schema)`` reads the release and the raw data of its window
and returns an :class:`~anonymizers.attacks.adapters.base.AttackInput`. A module may list
methods of its family it cannot read yet in ``UNSUPPORTED``. A module that sets
``READS_WORK = True`` also takes ``work=``, the work schema of the run building the
release, and may read there what the run already made instead of deriving it again.
"""

from __future__ import annotations

import importlib
from types import ModuleType

import psycopg

from anonymizers.attacks.adapters.base import AttackInput
from anonymizers.errors import InputError
from anonymizers.families.registry import FAMILIES, METHODS

__all__ = ["AttackInput", "adapter_for", "attack_input"]


def adapter_for(method: str) -> ModuleType | None:
    """The adapter module that reads releases of ``method``, or None."""
    entry = FAMILIES[METHODS[method].family]
    if entry.attack is None:
        return None
    module = importlib.import_module(entry.attack)
    return None if method in getattr(module, "UNSUPPORTED", frozenset()) else module


def attack_input(conn: psycopg.Connection, schema: str, method: str,
                 work: str | None = None) -> AttackInput:
    """The attack input of release (or build) ``schema`` of ``method``; ``work``: the work
    schema of the run building it, for an adapter that reads it (``READS_WORK``)."""
    module = adapter_for(method)
    if module is None:
        raise InputError(f"{method} releases have no attack adapter yet (family "
                         f"{METHODS[method].family!r}); see the README's attack suite")
    if work is not None and getattr(module, "READS_WORK", False):
        result: AttackInput = module.attack_input(conn, schema, work=work)
    else:
        result = module.attack_input(conn, schema)
    return result
