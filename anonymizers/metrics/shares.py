"""Ratios of counts in release metrics: declared as such, published from filtered counts.

A share (a part over a whole), a coverage, a fraction of attacked persons or a mean of
counts (a sum of counts over a number of items) is a quotient of two integers. Published
exactly, its continued-fraction expansion gives both back (0.9054 is 507/560: 53 persons
suppressed), which undoes the interval filter of the counts (DESIGN, privacy rules 4 and
8). So a family does not divide: it returns a :class:`Ratio`, and the shared writer
(:mod:`anonymizers.metrics.writer`) filters its part and its whole like every published
count and publishes the quotient of the filtered counts, with the two counts beside it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Ratio", "share"]


@dataclass(frozen=True)
class Ratio:
    """``part / whole`` of two exact counts, before the interval filter.

    ``part`` may be a signed sum of counts (a mean change in length): its magnitude is
    filtered and its sign kept. ``whole`` is a count (0: the ratio is undefined, NULL).
    """

    part: int
    whole: int

    def __post_init__(self) -> None:
        if self.whole < 0:
            raise ValueError(f"the whole of a ratio is a count, not {self.whole}")

    @property
    def exact(self) -> float:
        """The unfiltered quotient (NaN without a whole): for tests and logs, never published."""
        return self.part / self.whole if self.whole else float("nan")


def share(part: Any, whole: Any) -> Ratio:
    """The ratio ``part / whole`` of two counts, for the writer to filter and divide.

    >>> share(3, 4)
    Ratio(part=3, whole=4)
    >>> share(3, 4).exact, share(0, 0).exact != share(0, 0).exact
    (0.75, True)
    """
    return Ratio(int(part), int(whole))
