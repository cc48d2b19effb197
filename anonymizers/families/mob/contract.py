"""What the contract test (tests/test_family_contract.py) needs of the mob family: the
parameters that suit the small synthetic city, the tables a method leaves empty by design,
and a planted violation of the family's own privacy model that its verifier must catch.

Test support, imported only by the tests.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import sql

__all__ = ["CITY_PARAMS", "EMPTY_BY_DESIGN", "SHOWCASE", "plant", "setup"]

# The family's methods that the report, attack and compare tests publish on the city.
SHOWCASE = ("mob_symmetric",)
# Parameters that suit the small city (about 20k fixes over a few km).
CITY_PARAMS: dict[str, dict[str, Any]] = {}
# Release tables a method leaves empty by design.
EMPTY_BY_DESIGN: dict[str, set[str]] = {}


def plant(conn: psycopg.Connection, schema: str) -> None:
    """Every region of one object moved 10,000 km away: it no longer holds its person's
    cell, so the published data lies (and links nobody to that object). (1 km was not
    always enough: a region of a large class can be wider than that, and a withheld
    position is the whole area of use of the CRS; one row was not either: with presence
    hidden it may be a time point its person has no position at.)"""
    conn.execute(sql.SQL(
        "UPDATE {p} SET geom = ST_Translate(geom, 10000000, 0) "
        "WHERE object_id = (SELECT object_id FROM {p} LIMIT 1)").format(
        p=sql.Identifier(schema, "positions")))


def setup(dataset: str, url: str) -> None:
    """The city's fixes carry no quasi-identifiers: generate them as the paper's experiments
    did (graph, at most 6 time points per person here, seed 1)."""
    from anonymizers.families.mob.qids import generate_and_store_qids

    generate_and_store_qids(dataset, "graph", 6, seed=1, url=url)
