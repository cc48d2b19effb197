"""Argument checks shared by the pure algorithms: the privacy parameter k and random seeds.

Each raises :class:`~anonymizers.errors.InputError` with what was wrong, so every family
refuses the same bad value with the same words.
"""

from __future__ import annotations

import numpy as np

from anonymizers.errors import InputError

__all__ = ["checked_k", "generator"]


def checked_k(k: int) -> int:
    """``k`` as an int if it is a positive integer (not a bool); InputError otherwise."""
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise InputError(f"k must be a positive integer (distinct persons), got {k!r}")
    return int(k)


def generator(seed: int | np.random.Generator) -> np.random.Generator:
    """A numpy Generator: ``seed`` itself, or one seeded by a non-negative integer."""
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, bool) or not (isinstance(seed, int | np.integer) and seed >= 0):
        raise InputError("seed must be a non-negative integer or a numpy Generator")
    return np.random.default_rng(int(seed))
