"""What each family's release looks like to an attacker: targets, records, anonymity sets.

A family names its adapter module in its registry entry (``FamilyEntry.attack``); the
module's ``attack_input(conn, schema)`` reads the release and the raw data of its window
and returns an :class:`~anonymizers.attacks.adapters.base.AttackInput`. A module may list
methods of its family it cannot read yet in ``UNSUPPORTED``.
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


def attack_input(conn: psycopg.Connection, schema: str, method: str) -> AttackInput:
    """The attack input of release (or build) ``schema`` of ``method``."""
    module = adapter_for(method)
    if module is None:
        raise InputError(f"{method} releases have no attack adapter yet (family "
                         f"{METHODS[method].family!r}); see the README's attack suite")
    result: AttackInput = module.attack_input(conn, schema)
    return result
