"""Parameters as data: one ParamSpec per parameter, the single source of defaults, ranges,
validation, the DAG's Params and the CLI's help.

Cheap to import (no Airflow, numpy or database): the registry and the DAG files use it at
parse time.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from anonymizers.errors import InputError
from anonymizers.release.risks import PRECISION, PRECISION_FLOOR_M

__all__ = ["ParamSpec", "parse_params"]

_KIND_NAMES = {int: "an integer", float: "a number", str: "a string"}
_JSON_TYPES = {int: "integer", float: "number", str: "string"}


@dataclass(frozen=True)
class ParamSpec:
    """One parameter: its type, default, range and meaning.

    ``minimum``/``maximum`` are inclusive unless ``exclusive_minimum``; ``nullable`` lets
    the value be None (``default`` None then means "derived", e.g. from k); ``choices``
    restricts a string to a list; ``precision`` marks a length in metres that sets a
    published precision (a lattice step, cell size or grid side): below the machinery's
    floor (:data:`anonymizers.release.risks.PRECISION_FLOOR_M`) it needs the operator's
    accepted precision risk (privacy rule 7).
    """

    name: str
    kind: type
    default: Any
    help: str
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    choices: tuple[str, ...] | None = None
    nullable: bool = False
    precision: bool = False

    def parse(self, value: Any) -> Any:
        """``value`` converted to the parameter's type and checked; None/"" gives the default."""
        if value is None or value == "":
            return self.default
        try:
            parsed = self.kind(value)
        except (TypeError, ValueError) as error:
            raise InputError(f"parameter {self.name}={value!r} must be "
                             f"{_KIND_NAMES.get(self.kind, self.kind.__name__)}") from error
        if self.kind is int and isinstance(value, float) and value != parsed:
            raise InputError(f"parameter {self.name}={value!r} must be an integer")
        self._check(parsed, value)
        return parsed

    def _check(self, parsed: Any, given: Any) -> None:
        if self.choices is not None and parsed not in self.choices:
            raise InputError(f"parameter {self.name}={given!r} must be one of "
                             f"{', '.join(self.choices)}")
        if self.minimum is not None:
            low_ok = parsed > self.minimum if self.exclusive_minimum else parsed >= self.minimum
            if not low_ok:
                relation = ">" if self.exclusive_minimum else ">="
                word = "positive" if self.exclusive_minimum and self.minimum == 0 else \
                    f"{relation} {self.minimum:g}"
                raise InputError(f"parameter {self.name} must be {word} (got {given}): "
                                 f"{self.help}")
        if self.maximum is not None and parsed > self.maximum:
            raise InputError(f"parameter {self.name} must be <= {self.maximum:g} (got {given}): "
                             f"{self.help}")

    @property
    def range_text(self) -> str:
        """The allowed values in words, e.g. ``> 0`` or ``0 < p <= 1``."""
        if self.choices:
            return "one of " + "|".join(self.choices)
        low = "" if self.minimum is None else (
            f"> {self.minimum:g}" if self.exclusive_minimum else f">= {self.minimum:g}")
        high = "" if self.maximum is None else f"<= {self.maximum:g}"
        return ", ".join(part for part in (low, high) if part)

    def describe(self) -> str:
        """One line of ``release --help``: name, type, default, range, meaning."""
        kind = _JSON_TYPES.get(self.kind, self.kind.__name__)
        default = "derived" if self.default is None else f"{self.default!r}"
        limits = f"; {self.range_text}" if self.range_text else ""
        floor = (f"; below {PRECISION_FLOOR_M:g} m needs {PRECISION.flag}"
                 if self.precision else "")
        return f"{self.name} ({kind}, default {default}{limits}{floor}): {self.help}"

    def json_schema(self) -> dict[str, Any]:
        """Keyword arguments of Airflow's ``Param`` (JSON Schema) for this parameter."""
        kind = _JSON_TYPES.get(self.kind, "string")
        schema: dict[str, Any] = {"type": ["null", kind] if self.nullable else kind,
                                  "description": self.help}
        if self.choices:
            schema["enum"] = list(self.choices)
        if self.minimum is not None:
            schema["exclusiveMinimum" if self.exclusive_minimum else "minimum"] = self.minimum
        if self.maximum is not None:
            schema["maximum"] = self.maximum
        return schema


def parse_params(specs: Iterable[ParamSpec], given: dict[str, Any]) -> dict[str, Any]:
    """Every parameter of ``specs``: ``given``'s value parsed and checked, else the default.

    Keys of ``given`` that are not in ``specs`` are ignored here (the DAG passes every
    parameter of the family; a method takes its own).
    """
    return {spec.name: spec.parse(given.get(spec.name)) for spec in specs}
