"""What the contract test (tests/test_family_contract.py) needs of the aggregates family: the
parameters that suit the small synthetic city, the tables a method leaves empty by design,
and a planted violation of the family's own privacy model that its verifier must catch.

Test support, imported only by the tests.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import sql

__all__ = ["CITY_PARAMS", "EMPTY_BY_DESIGN", "FRESH_IDS", "SHOWCASE", "plant"]

# The family's methods that the report, attack and compare tests publish on the city.
SHOWCASE = ("presence", "od")
# Parameters that suit the small city (about 20k fixes over a few km): its trips are short,
# so few persons are seen in two consecutive hours; on 2 km squares some moves reach k.
CITY_PARAMS: dict[str, dict[str, Any]] = {"presence": {"cell_size": 2000.0},
                                          "od": {"cell_size": 2000.0}}
# Columns holding the release's fresh random ids, by the id space they draw from (a test
# that compares two releases reads them as names, not values).
FRESH_IDS = {"zone_id": "zone", "origin_zone_id": "zone", "destination_zone_id": "zone"}
# Release tables a method leaves empty by design: each publishes one kind of cell.
EMPTY_BY_DESIGN: dict[str, set[str]] = {
    "presence": {"od_counts"},
    "od": {"presence_counts"},
}


def plant(conn: psycopg.Connection, schema: str) -> None:
    """One published cell's interval moved up by one interval: it no longer holds the
    cell's true count."""
    for table in ("presence_counts", "od_counts"):
        conn.execute(sql.SQL(
            "UPDATE {t} SET n_lo = n_lo + m.count_interval, n_hi = n_hi + m.count_interval "
            "FROM {m} AS m WHERE {t}.ctid = (SELECT ctid FROM {t} LIMIT 1)").format(
            t=sql.Identifier(schema, table), m=sql.Identifier(schema, "manifest")))
