"""Counts over integer-coded groups, shared by the measures and the verifiers (pure numpy)."""

from __future__ import annotations

import numpy as np

__all__ = ["distinct_per_group"]


def distinct_per_group(group: np.ndarray, member: np.ndarray, n_groups: int) -> np.ndarray:
    """How many distinct ``member`` values each group 0 .. n_groups - 1 has.

    One sort of int64 keys (group, member): no Python object per row, which at 25M fixes
    matters (a pandas ``nunique`` over the moves set the verifier's peak memory)."""
    if not member.size:
        return np.zeros(n_groups, dtype=np.int64)
    shifted = member.astype(np.int64) - int(member.min())
    members = int(shifted.max()) + 1
    if n_groups * members >= 2**63:
        raise OverflowError("too many groups and members for one int64 key")
    keys = np.unique(group.astype(np.int64) * members + shifted)
    return np.bincount(keys // members, minlength=n_groups)
