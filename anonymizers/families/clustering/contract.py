"""What the contract test (tests/test_family_contract.py) needs of the clustering family: the
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
SHOWCASE = ("tcaa", "mla_iterative_kmeans")
# Parameters that suit the small city (about 20k fixes over a few km).
CITY_PARAMS: dict[str, dict[str, Any]] = {
    "tcaa": {"slice_seconds": 600, "interval": 60},
}
# Release tables a method leaves empty by design.
EMPTY_BY_DESIGN: dict[str, set[str]] = {}


def plant(conn: psycopg.Connection, schema: str) -> None:
    """One group's rectangle moved 100 km (still on the lattice): nobody is inside it."""
    conn.execute(sql.SQL(
        "UPDATE {r} SET geom = ST_Translate(geom, 100000, 0) "
        "WHERE (group_id, seq) = (SELECT group_id, seq FROM {r} LIMIT 1)").format(
        r=sql.Identifier(schema, "group_regions")))
