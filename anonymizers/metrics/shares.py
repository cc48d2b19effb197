"""Shares of release metrics: a part over a whole, NaN when there is no whole."""

from __future__ import annotations

from typing import Any

__all__ = ["share"]


def share(part: Any, whole: Any) -> float:
    """``part / whole`` as counts; NaN (not a number to publish) when ``whole`` is 0.

    >>> share(3, 4), share(0, 0) != share(0, 0)
    (0.75, True)
    """
    return int(part) / int(whole) if int(whole) else float("nan")
