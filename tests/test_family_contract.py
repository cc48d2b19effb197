"""The plug-in contract, for every method in the registry: it publishes a verified release of
the small synthetic city through the shared machinery, and its verifier refuses a planted
violation (one of its family's own model, and one of the shared rules)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import psycopg
import pytest
from pipeline_helpers import catalog_rows, run_steps
from psycopg import sql

from anonymizers.families.base import Family, load_family
from anonymizers.families.registry import FAMILIES, METHODS, SHARED_STEPS_AFTER, family_params
from anonymizers.release.spec import ReleaseSpec
from anonymizers.verifiers import verify_release

# Parameters that suit the small city (about 20k fixes over a few km): the defaults of the
# data-driven methods leave too few cells there.
CITY_PARAMS: dict[str, dict[str, Any]] = {
    "grid_kam_cut": {"cell_size": 500.0},
    "kam_cut": {"radius": 300.0},
    "kam_rec": {"radius": 300.0},
    "tcaa": {"slice_seconds": 600, "interval": 60},
    # The GA takes about 0.3 s a group; the city has thousands of groups at k = 3
    # (tests/test_groups_release.py runs the GA).
    "tg_overlapping": {"demographics": "mondrian"},
    "tg_nonoverlapping": {"demographics": "mondrian"},
}
# Release tables a method leaves empty by design.
EMPTY_BY_DESIGN: dict[str, set[str]] = {
    "tg_overlapping": {"od_groups"},  # origin-destination groups are nonoverlapping's (§4.3.3)
}


def _plant_generalization(conn: psycopg.Connection, schema: str) -> None:
    """A cell nobody visited: its polygon would point at no k persons (and be on no route)."""
    conn.execute(sql.SQL(
        "INSERT INTO {c} (cell_id, geom, centroid) "
        "SELECT (SELECT max(cell_id) + 1 FROM {c}), ST_Translate(geom, 100000, 100000), "
        "       ST_Translate(centroid, 100000, 100000) "
        "FROM {c} LIMIT 1").format(c=sql.Identifier(schema, "cells")))


def _plant_mob(conn: psycopg.Connection, schema: str) -> None:
    """Every region of one object moved 10,000 km away: it no longer holds its person's
    cell, so the published data lies (and links nobody to that object). (1 km was not
    always enough: a region of a large class can be wider than that, and a withheld
    position is the whole area of use of the CRS; one row was not either: with presence
    hidden it may be a time point its person has no position at.)"""
    conn.execute(sql.SQL(
        "UPDATE {p} SET geom = ST_Translate(geom, 10000000, 0) "
        "WHERE object_id = (SELECT object_id FROM {p} LIMIT 1)").format(
        p=sql.Identifier(schema, "positions")))


def _plant_groups(conn: psycopg.Connection, schema: str) -> None:
    """One group's sequence reversed: nobody travelled it in that order."""
    conn.execute(sql.SQL(
        "UPDATE {g} SET places = ARRAY(SELECT places[i] FROM generate_subscripts(places, 1) "
        "AS i ORDER BY i DESC) WHERE group_id = (SELECT min(group_id) FROM {g} "
        "WHERE length > 1 AND places[1] <> places[length])").format(
        g=sql.Identifier(schema, "groups")))


def _plant_clustering(conn: psycopg.Connection, schema: str) -> None:
    """One group's rectangle moved 100 km (still on the lattice): nobody is inside it."""
    conn.execute(sql.SQL(
        "UPDATE {r} SET geom = ST_Translate(geom, 100000, 0) "
        "WHERE (group_id, seq) = (SELECT group_id, seq FROM {r} LIMIT 1)").format(
        r=sql.Identifier(schema, "group_regions")))


# Each family's planted violation of its own model (a new family adds one here).
PLANTS: dict[str, Callable[[psycopg.Connection, str], None]] = {
    "generalization": _plant_generalization,
    "mob": _plant_mob,
    "clustering": _plant_clustering,
    "groups": _plant_groups,
}


def _qids(dataset: str, url: str) -> None:
    from anonymizers.families.mob.qids import generate_and_store_qids

    generate_and_store_qids(dataset, "graph", 6, seed=1, url=url)


# What a family needs in the city besides its fixes (a new family adds it here).
SETUP: dict[str, Callable[[str, str], None]] = {"mob": _qids}


def test_the_registry_is_consistent():
    for method in METHODS.values():
        family = FAMILIES[method.family]
        steps = [step for step in family.steps if step in method.steps]
        assert steps == list(method.steps), f"{method.name}: steps out of the family's order"
        family_params(method.family)  # one meaning per parameter name in a family
    for name in FAMILIES:
        assert name in PLANTS, f"family {name} has no planted violation in this contract"


@pytest.mark.parametrize("family_name", sorted(FAMILIES))
def test_every_family_plugin_provides_every_registered_step(family_name):
    family = load_family(family_name)
    assert isinstance(family, Family)
    assert set(family.steps()) == set(FAMILIES[family_name].steps)
    assert not set(family.steps()) & set(SHARED_STEPS_AFTER)
    assert family.release_tables


@pytest.mark.slow
@pytest.mark.parametrize("method", sorted(METHODS))
def test_every_method_publishes_a_verified_release_and_its_verifier_catches_a_plant(
        loaded_city, conn, db_url, method):
    if (setup := SETUP.get(METHODS[method].family)) is not None:
        setup(loaded_city, db_url)
    params = {"dataset": loaded_city, "method": method, "k": 3, **CITY_PARAMS.get(method, {})}
    spec = ReleaseSpec.from_dict(run_steps(params, until="verify"))
    family = load_family(spec.family)
    for table in set(family.release_tables) - EMPTY_BY_DESIGN.get(method, set()):
        assert conn.execute(sql.SQL("SELECT count(*) FROM {}").format(
            sql.Identifier(spec.build_schema, table))).fetchone()[0] > 0, table
    assert verify_release(conn, spec.build_schema).passed

    PLANTS[spec.family](conn, spec.build_schema)
    planted = verify_release(conn, spec.build_schema)
    assert not planted.passed, f"{method}: the planted violation was not caught"

    conn.execute(sql.SQL("UPDATE {}.manifest SET input_fingerprint = 'not-keyed'").format(
        sql.Identifier(spec.build_schema)))
    assert not verify_release(conn, spec.build_schema).passed
    assert catalog_rows(conn) == []
