"""What the contract test (tests/test_family_contract.py) needs of the generalization family: the
parameters that suit the small synthetic city, the tables a method leaves empty by design,
and a planted violation of the family's own privacy model that its verifier must catch.

Test support, imported only by the tests.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import sql

__all__ = ["CITY_PARAMS", "EMPTY_BY_DESIGN", "SHOWCASE", "plant"]

# The family's methods that the report, attack and compare tests publish on the city.
SHOWCASE = ("grid_kam_cut",)
# Parameters that suit the small city (about 20k fixes over a few km).
CITY_PARAMS: dict[str, dict[str, Any]] = {
    "grid_kam_cut": {"cell_size": 500.0},
    "kam_cut": {"radius": 300.0},
    "kam_rec": {"radius": 300.0},
}
# Release tables a method leaves empty by design.
EMPTY_BY_DESIGN: dict[str, set[str]] = {}


def plant(conn: psycopg.Connection, schema: str) -> None:
    """A cell nobody visited: its polygon would point at no k persons (and be on no route)."""
    conn.execute(sql.SQL(
        "INSERT INTO {c} (cell_id, geom) "
        "SELECT (SELECT max(cell_id) + 1 FROM {c}), ST_Translate(geom, 100000, 100000) "
        "FROM {c} LIMIT 1").format(c=sql.Identifier(schema, "cells")))
    conn.execute(sql.SQL(
        "INSERT INTO {p} (cell_id, geom) "
        "SELECT (SELECT max(cell_id) FROM {c}), ST_Translate(geom, 100000, 100000) "
        "FROM {p} LIMIT 1").format(c=sql.Identifier(schema, "cells"),
                                   p=sql.Identifier(schema, "cell_centroids")))
