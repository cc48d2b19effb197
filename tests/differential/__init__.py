"""The anonymizer's own counts of a built release against the verifier's recount, item by item.

A built (not yet verified) release keeps its run's work schema: what the anonymizer counted
when it decided to publish each item. The verifier recounts every published item from the
raw data over what the release publishes, without the anonymizer's code. For each family a
module here (named after the family) offers

    compare_release(conn, work_schema, build_schema) -> Comparison

whose ``items`` hold, for every published counted item (sequence, flow, region, group,
class, object...), the persons each side counts. Where the anonymizer counts more persons
than the verifier for any item, the two derive membership differently and the anonymizer
may publish an item the gate then refuses: that is a bug, not noise.
"""

from __future__ import annotations

import importlib
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, Protocol

import psycopg

__all__ = ["Compare", "Comparison", "Item", "comparer", "summary"]


@dataclass(frozen=True)
class Item:
    """One published counted item and the persons each side counts for it."""

    kind: str
    key: Hashable
    anonymizer: int
    verifier: int


@dataclass
class Comparison:
    """Every published counted item of one release, counted by both sides; ``details``
    holds what a family's comparison can add to explain a difference."""

    items: list[Item]
    details: dict[str, Any] = field(default_factory=dict)

    def overcounted(self) -> list[Item]:
        """Items the anonymizer counts more persons for than the verifier does."""
        return [item for item in self.items if item.anonymizer > item.verifier]

    def below(self, k: int) -> list[Item]:
        """Items the verifier counts fewer than ``k`` persons for."""
        return [item for item in self.items if item.verifier < k]


class Compare(Protocol):
    def __call__(self, conn: psycopg.Connection, work: str, build: str) -> Comparison: ...


def comparer(family: str) -> Compare:
    """The comparison of ``family``'s releases (module ``differential.<family>``)."""
    try:
        module = importlib.import_module(f"differential.{family}")
    except ModuleNotFoundError as missing:
        raise LookupError(f"no differential comparison for the {family!r} family yet: add "
                          f"tests/differential/{family}.py with compare_release()") from missing
    compare: Compare = module.compare_release
    return compare


def summary(comparison: Comparison, k: int, sample: int = 5) -> dict[str, Any]:
    """Counts per kind, and the first overcounted and below-k items, as JSON-ready data."""
    kinds: dict[str, int] = {}
    for item in comparison.items:
        kinds[item.kind] = kinds.get(item.kind, 0) + 1
    over = comparison.overcounted()
    low = comparison.below(k)

    def shown(items: list[Item]) -> list[list[Any]]:
        return [[item.kind, repr(item.key), item.anonymizer, item.verifier]
                for item in items[:sample]]

    return {"items": kinds, "overcounted": len(over), "below_k": len(low),
            "overcounted_sample": shown(over), "below_k_sample": shown(low),
            **{key: value for key, value in comparison.details.items()
               if isinstance(value, int | float | str)}}

