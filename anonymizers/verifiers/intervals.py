"""The verifiers' own copy of the interval filter (seed 004 §4.2): never the anonymizer's.

>>> [interval_count(n, 5, 5) for n in (0, 3, 5, 9, 10, 23)]
[0, None, 5, 5, 10, 20]
"""

from __future__ import annotations

__all__ = ["interval_count"]


def interval_count(n: int, k: int, width: int) -> int | None:
    """The interval filter, written again here: 0, None below k, else the lower end of the
    interval of size ``width`` starting at k that holds n."""
    if n == 0:
        return 0
    if n < k:
        return None
    return k + width * ((n - k) // width)
