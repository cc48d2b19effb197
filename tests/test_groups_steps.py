"""The trajectory-groups steps read their method's declaration: the anonymizer chosen by
the method's traits, the parameters as its typed dataclass (no default but the declared
one)."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import pytest

from anonymizers.errors import InputError
from anonymizers.families.groups.declaration import GroupsParams, NonoverlappingParams
from anonymizers.families.groups.steps import interval_size, typed_params
from anonymizers.families.registry import METHODS


@pytest.fixture
def renamed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Both methods declared again under other names (same traits and parameters)."""
    for method in ("tg_overlapping", "tg_nonoverlapping"):
        monkeypatch.setitem(METHODS, f"{method}_renamed",
                            replace(METHODS[method], name=f"{method}_renamed"))


def _release(method: str, k: int = 6, **params: object) -> SimpleNamespace:
    return SimpleNamespace(method=method, k=k, params=params)


def test_the_interval_rule_of_the_overlapping_anonymizer_follows_its_trait(renamed):
    """§4.5.1 binds every method whose traits say overlapping, whatever its name."""
    for method in ("tg_overlapping", "tg_overlapping_renamed"):
        with pytest.raises(InputError, match="below k/2"):
            interval_size(_release(method, interval_size=2, demographics="none"))
        with pytest.raises(InputError, match="demographic"):
            interval_size(_release(method, interval_size=3, demographics="mondrian"))
        assert interval_size(_release(method, interval_size=3, demographics="none")) == 3
    for method in ("tg_nonoverlapping", "tg_nonoverlapping_renamed"):
        assert interval_size(_release(method, interval_size=2, demographics="ga")) == 2


def test_the_parameters_are_the_methods_typed_dataclass():
    """Defaults are the declaration's (demographics auto, od_groups true); text is parsed."""
    overlapping = typed_params(_release("tg_overlapping"))
    assert type(overlapping) is GroupsParams and overlapping.demographics == "auto"
    assert interval_size(_release("tg_overlapping")) == 6  # default k
    nonoverlapping = typed_params(_release("tg_nonoverlapping", od_groups="false", seed="4"))
    assert isinstance(nonoverlapping, NonoverlappingParams)
    assert (nonoverlapping.od_groups, nonoverlapping.seed) == (False, 4)
    assert typed_params(_release("tg_nonoverlapping")).od_groups is True  # type: ignore[attr-defined]
