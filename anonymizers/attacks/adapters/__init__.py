"""What each family's release looks like to an attacker: targets, records, anonymity sets.

A family names its adapter module in its registry entry (``FamilyEntry.attack``); the
module's ``attack_input(conn, schema)`` reads the release and the raw data of its window
and returns an :class:`~anonymizers.attacks.adapters.base.AttackInput`.
"""

from __future__ import annotations

import importlib

import psycopg

from anonymizers.attacks.adapters.base import AttackInput
from anonymizers.errors import InputError
from anonymizers.families.registry import FAMILIES, METHODS

__all__ = ["AttackInput", "attack_input"]


def attack_input(conn: psycopg.Connection, schema: str, method: str) -> AttackInput:
    """The attack input of release (or build) ``schema`` of ``method``."""
    entry = FAMILIES[METHODS[method].family]
    if entry.attack is None:
        raise InputError(f"family {entry.name!r} has no attack adapter yet")
    module = importlib.import_module(entry.attack)
    result: AttackInput = module.attack_input(conn, schema)
    return result
