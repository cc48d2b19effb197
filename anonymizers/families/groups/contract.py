"""What the contract test (tests/test_family_contract.py) needs of the groups family: the
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
SHOWCASE = ("tg_nonoverlapping",)
# Parameters that suit the small city (about 20k fixes over a few km).
CITY_PARAMS: dict[str, dict[str, Any]] = {
    # The GA takes about 0.3 s a group; the city has thousands of groups at k = 3
    # (tests/test_groups_release.py runs the GA).
    "tg_overlapping": {"demographics": "mondrian"},
    "tg_nonoverlapping": {"demographics": "mondrian"},
}
# Release tables a method leaves empty by design.
EMPTY_BY_DESIGN: dict[str, set[str]] = {
    "tg_overlapping": {"od_groups"},  # origin-destination groups are nonoverlapping's (§4.3.3)
}


def plant(conn: psycopg.Connection, schema: str) -> None:
    """One group's sequence reversed (its line too, so that only the model is broken):
    nobody travelled it in that order."""
    conn.execute(sql.SQL(
        "UPDATE {g} SET places = (SELECT jsonb_agg(e ORDER BY i DESC) "
        "FROM jsonb_array_elements(places) WITH ORDINALITY AS u(e, i)), "
        "geom = ST_Reverse(geom) WHERE group_id = (SELECT min(group_id) FROM {g} "
        "WHERE length > 1 AND places -> 0 <> places -> (length - 1))").format(
        g=sql.Identifier(schema, "groups")))
