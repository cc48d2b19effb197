"""The plug-in contract, for every method in the registry: it publishes a verified release of
the small synthetic city through the shared machinery, and its verifier refuses a planted
violation (one of its family's own model, and one of the shared rules)."""

from __future__ import annotations

import dataclasses
import importlib
from typing import Any

import pytest
from pipeline_helpers import catalog_rows, run_steps
from psycopg import sql

from anonymizers.families.base import Family, load_family
from anonymizers.families.registry import FAMILIES, METHODS, SHARED_STEPS_AFTER, family_params
from anonymizers.parameters import MethodParams
from anonymizers.release.spec import ReleaseSpec
from anonymizers.verifiers import verify_release


def _contract(family: str) -> Any:
    """The family's contract-test support (CITY_PARAMS, EMPTY_BY_DESIGN, plant, setup)."""
    return importlib.import_module(FAMILIES[family].contract)


def test_every_method_declares_typed_parameters_and_its_familys_traits():
    for family in FAMILIES:
        methods = [m for m in METHODS.values() if m.family == family]
        assert len({type(m.traits) for m in methods}) == 1, family  # one traits class
        assert dataclasses.is_dataclass(methods[0].traits), family
        for method in methods:
            assert issubclass(method.parameters, MethodParams), method.name
            # the defaults parse as themselves: one default, typed
            assert method.parameters.of({}) == method.parameters(), method.name
        # traits tell the methods apart (two methods with equal traits are one method)
        assert len({m.traits for m in methods}) == len(methods), family


def test_the_registry_is_consistent():
    for method in METHODS.values():
        family = FAMILIES[method.family]
        steps = [step for step in family.steps if step in method.steps]
        assert steps == list(method.steps), f"{method.name}: steps out of the family's order"
        family_params(method.family)  # one meaning per parameter name in a family
    for name in FAMILIES:
        contract = _contract(name)
        assert callable(contract.plant), f"family {name} has no planted violation"
        assert set(contract.CITY_PARAMS) <= {m.name for m in METHODS.values()
                                             if m.family == name}


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
    contract = _contract(METHODS[method].family)
    if (setup := getattr(contract, "setup", None)) is not None:
        setup(loaded_city, db_url)
    params = {"dataset": loaded_city, "method": method, "k": 3,
              **contract.CITY_PARAMS.get(method, {})}
    spec = ReleaseSpec.from_dict(run_steps(params, until="verify"))
    family = load_family(spec.family)
    for table in set(family.release_tables) - contract.EMPTY_BY_DESIGN.get(method, set()):
        assert conn.execute(sql.SQL("SELECT count(*) FROM {}").format(
            sql.Identifier(spec.build_schema, table))).fetchone()[0] > 0, table
    assert verify_release(conn, spec.build_schema).passed

    contract.plant(conn, spec.build_schema)
    planted = verify_release(conn, spec.build_schema)
    assert not planted.passed, f"{method}: the planted violation was not caught"

    conn.execute(sql.SQL("UPDATE {}.manifest SET input_fingerprint = 'not-keyed'").format(
        sql.Identifier(spec.build_schema)))
    assert not verify_release(conn, spec.build_schema).passed
    assert catalog_rows(conn) == []
