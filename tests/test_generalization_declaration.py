"""The generalization family reads what a method is from its declaration: its methods are
told apart by their declared traits, never by their names, and their parameters are read
as the typed values of their dataclass, never from a dict where they are used. The
verifier refuses another family's release and reports a manifest whose recorded
parameters it cannot read, instead of failing on them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from pipeline_helpers import run_steps
from psycopg import sql

from anonymizers.errors import InputError
from anonymizers.families.generalization import verifier
from anonymizers.families.registry import METHODS
from anonymizers.release.spec import ReleaseSpec

FAMILY_DIR = Path(verifier.__file__).parent
# The family's modules besides its declaration (which names its methods once).
# The declaration names the methods; the contract-test support keys its city parameters by
# them (data for the tests, not a switch).
MODULES = sorted(path for path in FAMILY_DIR.glob("*.py")
                 if path.name not in ("declaration.py", "contract.py"))
PARAMETER_DICTS = {"params", "parameters"}  # ReleaseSpec.params, ReleaseUnderTest.parameters


def _code_strings(tree: ast.Module) -> list[ast.Constant]:
    """The string constants of ``tree`` outside docstrings and ``__all__``."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant):
            skipped.add(id(body[0].value))  # a docstring
        if isinstance(node, ast.Assign) and any(
                isinstance(target, ast.Name) and target.id == "__all__"
                for target in node.targets):
            skipped.update(id(child) for child in ast.walk(node.value))  # function names
    return [node for node in ast.walk(tree) if isinstance(node, ast.Constant)
            and isinstance(node.value, str) and id(node) not in skipped]


@pytest.mark.parametrize("path", MODULES, ids=lambda path: path.name)
def test_no_module_of_the_family_names_a_method(path: Path) -> None:
    named = [(node.lineno, node.value) for node in _code_strings(ast.parse(path.read_text()))
             if node.value in METHODS]
    assert not named, (f"{path.name} names methods {named}: tell them apart by "
                       "METHODS[method].traits (the declaration)")


def _dict_reads(tree: ast.Module) -> list[int]:
    """Lines that read ``x.params[...]``, ``x.parameters[...]`` or ``x.params.get(...)``."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) \
                and node.value.attr in PARAMETER_DICTS:
            lines.append(node.lineno)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "get" and isinstance(node.func.value, ast.Attribute) \
                and node.func.value.attr in PARAMETER_DICTS:
            lines.append(node.lineno)
    return lines


@pytest.mark.parametrize("path", MODULES, ids=lambda path: path.name)
def test_no_module_of_the_family_reads_a_parameter_from_a_dict(path: Path) -> None:
    lines = _dict_reads(ast.parse(path.read_text()))
    assert not lines, (f"{path.name} reads parameters from a dict at lines {lines}: read "
                       "the typed values of the method's params dataclass (XParams.of)")


def test_the_verifier_refuses_a_release_of_another_family() -> None:
    other = next(name for name, method in METHODS.items()
                 if method.family != "generalization")
    with pytest.raises(InputError, match="not of the generalization family"):
        verifier.derive_release_visits(None, "build_x", 1, {"method": other})  # type: ignore[arg-type]


@pytest.mark.parametrize(("method", "parameter", "value"), [
    ("grid_kam_cut", "cell_size", "wide"),
    ("kam_cut", "snap", 0),
])
def test_unreadable_manifest_parameters_are_a_violation(loaded_city, conn, method, parameter,
                                                        value) -> None:
    """A manifest whose recorded parameters do not parse is refused with a violation that
    says so (the verifier once failed on both with a ValueError, from a cast)."""
    extra = {"cell_size": 500.0} if method == "grid_kam_cut" else {"radius": 300.0}
    spec = ReleaseSpec.from_dict(run_steps({"dataset": loaded_city, "method": method, "k": 3,
                                            **extra}, until="manifest"))
    conn.execute(sql.SQL("UPDATE {}.manifest SET parameters = jsonb_set(parameters, %s, %s)")
                 .format(sql.Identifier(spec.build_schema)),
                 ([parameter], f'"{value}"' if isinstance(value, str) else str(value)))
    result = verifier.verify_generalization_release(conn, spec.build_schema)
    assert not result.passed
    assert any(v.startswith("the manifest's parameters cannot be checked") and parameter in v
               for v in result.violations), result.violations
