"""Independent verifiers: one per family, dispatched by the release's method."""

from __future__ import annotations

import importlib
from typing import Any

import psycopg
from psycopg import sql

from anonymizers.errors import InputError

__all__ = ["verify_release"]


def verify_release(conn: psycopg.Connection, schema: str) -> Any:
    """Check the privacy model of release (or build) schema ``schema`` with the verifier
    of its method's family (the registry names it); returns its VerifierResult."""
    from anonymizers.families.registry import FAMILIES, method_entry

    exists = conn.execute("SELECT to_regclass(%s)", (f"{schema}.manifest",)).fetchone()
    if exists is None or exists[0] is None:
        raise InputError(f"{schema} is not a release (no manifest table); list them with "
                         "`anonymizers releases`")
    row = conn.execute(sql.SQL("SELECT method FROM {}.manifest").format(
        sql.Identifier(schema))).fetchone()
    if row is None:
        raise InputError(f"{schema} has no manifest row: not a release")
    family = FAMILIES[method_entry(row[0]).family]
    return importlib.import_module(family.verifier).verify_release(conn, schema)
