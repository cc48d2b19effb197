"""The package's docstring examples run, as tests: an example that no longer holds fails the
suite (they are documentation, and documentation that lies is worse than none)."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "anonymizers"
# Every module of the package whose source holds a docstring example.
MODULES = sorted(
    ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")
    for path in PACKAGE.rglob("*.py") if ">>> " in path.read_text())


def test_the_package_has_docstring_examples():
    assert len(MODULES) >= 20, MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_hold(name):
    module = importlib.import_module(name)
    examples = doctest.DocTestFinder().find(module)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for example in examples:
        runner.run(example)
    result = runner.summarize(verbose=False)
    assert result.attempted > 0, f"{name}: its examples were not found"
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples fail"
