"""Parameters as data: one ParamSpec per parameter, the single source of defaults, ranges,
validation, the DAG's Params and the CLI's help.

A family declares its methods' parameters as a typed dataclass (a subclass of
:class:`MethodParams`, one field per parameter, declared with :func:`param` or
:func:`lattice`); its ParamSpecs are derived from the fields, and the steps read the
values as typed attributes (``TessellationParams.of(release.params).snap``), never by
casting a dict's value where it is used.

Cheap to import (no Airflow, numpy or database): the registry and the DAG files use it at
parse time.

>>> @dataclass(frozen=True)
... class Example(MethodParams):
...     cell_size: float = lattice(500.0, "Grid side, metres")
...     shape: Literal["square", "hexagon"] = param("square", "Cell shape")
...     od_groups: bool = param(True, "Publish origin-destination groups")
...     interval_size: int | None = param(None, "Interval size (default k)", minimum=1)
>>> for spec in Example.specs():
...     print(spec.name, spec.kind.__name__, spec.default, spec.choices, spec.nullable)
cell_size float 500.0 None False
shape str square ('square', 'hexagon') False
od_groups bool True None False
interval_size int None None True
>>> Example.of({"cell_size": "250", "od_groups": "false"})
Example(cell_size=250.0, shape='square', od_groups=False, interval_size=None)
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, TypeVar

from anonymizers.errors import InputError
from anonymizers.risks import PRECISION, PRECISION_FLOOR_M

__all__ = ["MethodParams", "ParamSpec", "lattice", "param", "parse_params"]

_KIND_NAMES = {int: "an integer", float: "a number", str: "a string", bool: "true or false"}
_JSON_TYPES = {int: "integer", float: "number", str: "string", bool: "boolean"}
_TRUE = frozenset({"true", "yes", "on", "1"})
_FALSE = frozenset({"false", "no", "off", "0"})


@dataclass(frozen=True)
class ParamSpec:
    """One parameter: its type, default, range and meaning.

    ``minimum``/``maximum`` are inclusive unless ``exclusive_minimum``; ``nullable`` lets
    the value be None (``default`` None then means "derived", e.g. from k); ``choices``
    restricts a string to a list; ``precision`` marks a length in metres that sets a
    published precision (a lattice step, cell size or grid side): below the machinery's
    floor (:data:`anonymizers.risks.PRECISION_FLOOR_M`) it needs the operator's
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
        if self.kind is bool:
            return self._parse_bool(value)
        try:
            parsed = self.kind(value)
        except (TypeError, ValueError) as error:
            raise InputError(f"parameter {self.name}={value!r} must be "
                             f"{_KIND_NAMES.get(self.kind, self.kind.__name__)}") from error
        if self.kind is int and isinstance(value, float) and value != parsed:
            raise InputError(f"parameter {self.name}={value!r} must be an integer")
        self._check(parsed, value)
        return parsed

    def _parse_bool(self, value: Any) -> bool:
        # bool("false") is True: a flag given as text (CLI, DAG conf, an older manifest's
        # "true"/"false") is read by its word.
        if isinstance(value, bool):
            return value
        word = str(value).strip().lower()
        if word in _TRUE or word in _FALSE:
            return word in _TRUE
        raise InputError(f"parameter {self.name}={value!r} must be true or false")

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


def parse_params(specs: Iterable[ParamSpec], given: Mapping[str, Any]) -> dict[str, Any]:
    """Every parameter of ``specs``: ``given``'s value parsed and checked, else the default.

    Keys of ``given`` that are not in ``specs`` are ignored here (the DAG passes every
    parameter of the family; a method takes its own).
    """
    return {spec.name: spec.parse(given.get(spec.name)) for spec in specs}


# ----------------------------------------------------------------- typed declarations

_PARAM = "anonymizers.param"  # the key of a field's metadata that declares a parameter


@dataclass(frozen=True)
class _Declared:
    """What a field of a MethodParams says about its parameter besides name, type, default."""

    help: str
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    precision: bool = False


def param(default: Any, help: str, *, minimum: float | None = None,
          maximum: float | None = None, exclusive_minimum: bool = False) -> Any:
    """A field of a :class:`MethodParams`: the parameter's default, meaning and range (its
    type, choices and nullability come from the field's annotation)."""
    return dataclasses.field(default=default, metadata={_PARAM: _Declared(
        help, minimum, maximum, exclusive_minimum)})


def lattice(default: float, help: str) -> Any:
    """A length in metres that sets a published precision: positive, and below the
    machinery's floor only with an accepted precision risk (privacy rule 7)."""
    return dataclasses.field(default=default, metadata={_PARAM: _Declared(
        help, 0.0, None, True, precision=True)})


_Params = TypeVar("_Params", bound="MethodParams")


@dataclass(frozen=True)
class MethodParams:
    """A method's parameters, typed: subclass it with one :func:`param` field per parameter.

    ``specs()`` derives the ParamSpecs (DAG Params, CLI help, validation) from the fields;
    ``of(values)`` gives the typed values of a release's parameters (the resolved dict of
    a ReleaseSpec, or a manifest's recorded ones), parsed and checked by the same specs.
    """

    _specs: ClassVar[dict[type, tuple[ParamSpec, ...]]] = {}

    @classmethod
    def specs(cls) -> tuple[ParamSpec, ...]:
        """One ParamSpec per field, in declaration order."""
        if cls not in MethodParams._specs:
            hints = typing.get_type_hints(cls)
            MethodParams._specs[cls] = tuple(
                _spec_of(field, hints[field.name]) for field in dataclasses.fields(cls))
        return MethodParams._specs[cls]

    @classmethod
    def of(cls: type[_Params], values: Mapping[str, Any]) -> _Params:
        """The typed parameters in ``values`` (missing or empty ones: their defaults)."""
        return cls(**parse_params(cls.specs(), values))


def _spec_of(field: dataclasses.Field[Any], annotation: Any) -> ParamSpec:
    declared = field.metadata.get(_PARAM)
    if declared is None:
        raise TypeError(f"field {field.name} is not declared with param() or lattice()")
    kind, choices, nullable = _kind_of(field.name, annotation)
    return ParamSpec(field.name, kind, field.default, declared.help, minimum=declared.minimum,
                     maximum=declared.maximum, exclusive_minimum=declared.exclusive_minimum,
                     choices=choices, nullable=nullable, precision=declared.precision)


def _kind_of(name: str, annotation: Any) -> tuple[type, tuple[str, ...] | None, bool]:
    """(type, choices, nullable) of a field's annotation: a plain type, a Literal of
    strings, or either of them ``| None``."""
    args = typing.get_args(annotation)
    nullable = isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is \
        typing.Union
    if nullable:
        (annotation,) = [arg for arg in args if arg is not type(None)]
        args = typing.get_args(annotation)
    if typing.get_origin(annotation) is Literal:
        return str, tuple(args), nullable
    if annotation in _JSON_TYPES:
        return annotation, None, nullable
    raise TypeError(f"parameter {name}: annotation {annotation!r} is not int, float, str, "
                    "bool or a Literal of strings")
