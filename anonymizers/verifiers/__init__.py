"""Independent verifiers: one per family, dispatched by the release's method."""

from __future__ import annotations

import importlib
from typing import Any

import psycopg

from anonymizers.db.sqlfiles import fetch_row
from anonymizers.errors import InputError

__all__ = ["verify_release"]


def verify_release(conn: psycopg.Connection, schema: str) -> Any:
    """Check the privacy model of release (or build) schema ``schema`` with the verifier
    of its method's family (the registry names it); returns its VerifierResult."""
    from anonymizers.families.registry import FAMILIES, method_entry

    exists = fetch_row(conn, "db/relation_exists.sql", {"relation": f"{schema}.manifest"})
    if exists is None or not exists["present"]:
        raise InputError(f"{schema} is not a release (no manifest table); list them with "
                         "`anonymizers releases`")
    manifest = fetch_row(conn, "verify/manifest.sql", release=schema)
    if manifest is None:
        raise InputError(f"{schema} has no manifest row: not a release")
    family = FAMILIES[method_entry(manifest["method"]).family]
    return importlib.import_module(family.verifier).verify_release(conn, schema)
