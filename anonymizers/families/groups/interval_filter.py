"""The interval filter (Nordström 2012, §4.2): publish a count as the fixed interval that holds it.

What the thesis publishes
-------------------------
A published count ``n >= k`` is replaced by the interval of eq. 1 that holds it,

    [k + I_s i .. k + I_s (i + 1)),  i = (n - k) // I_s,

the half-open integer interval of the thesis' notation. Here it is returned as the inclusive
pair ``n_min = k + I_s i`` and ``n_max = n_min + I_s - 1``. The placement is *deterministic*:
the intervals tile the integers from ``k`` upward in steps of ``I_s``, and the thesis draws
nothing at random. Counts below ``k`` are never published (§3.1: suppressed, "not represented
at all"), so the filter refuses them rather than inventing an interval.

Which interval size (§4.5.1-§4.5.4)
-----------------------------------
* Overlapping trajectory anonymizer: the filter is required, with ``I_s >= k/2`` (the
  difference of two nested groups' counts is then at least ``k - 1`` wide: "k_{-1}-anonymity")
  or ``I_s = k`` to also defeat the demographic-interval attack of Figure 13; §6 recommends
  ``I_s = k``.
* Nonoverlapping trajectory anonymizer: not needed by itself (with boundary hiding), but
  ``I_s = k`` is required for concurrent releases of several demographic partitionings (§4.5.2)
  and for overlapping time windows (§4.5.3); any ``I_s`` helps against active attacks (§4.5.4).

For odd ``k`` the thesis' ``k/2`` is not an integer; :func:`thesis_interval_size` rounds it up
to ``ceil(k/2)``, the smallest integer size that satisfies §4.5.1's ``I_s >= k/2``.

Relation to :func:`anonymizers.verifiers.base.interval_count`: that function returns only the
lower end, ``k + width * ((n - k) // width)``, which equals ``n_min`` here for ``n >= k``; it also
maps ``0`` to ``0`` and ``0 < n < k`` to ``None``, where this filter raises.

References
----------
.. [1] Nordström, M. Methods for Anonymizing Patterns of Human Mobility. MSc thesis, Chalmers
   University of Technology, report 2012:2 (§4.2 eq. 1; §4.5.1-§4.5.4; §6).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from anonymizers.errors import InputError

__all__ = ["CountIntervals", "interval_filter", "thesis_interval_size"]


@dataclass(frozen=True, eq=False)
class CountIntervals:
    """Published counts: the interval of eq. 1 holding each true count.

    Attributes
    ----------
    n_min, n_max
        int, shaped like the counts: the smallest and the largest count of the interval, both
        inclusive (the thesis writes ``[n_min .. n_max + 1)``).
    interval_size
        ``I_s``: every interval holds exactly this many integers.

    References
    ----------
    .. [1] Nordström 2012, §4.2 eq. 1.
    """

    n_min: np.ndarray
    n_max: np.ndarray
    interval_size: int

    def contains(self, counts: np.ndarray) -> np.ndarray:
        """bool, shaped like the counts: whether each count lies in its interval."""
        n = np.asarray(counts)
        return (self.n_min <= n) & (n <= self.n_max)


def interval_filter(counts: np.ndarray, k: int, interval_size: int) -> CountIntervals:
    """Replace every count by the interval of size ``I_s`` that holds it (§4.2, eq. 1).

    Parameters
    ----------
    counts
        int array of counts to publish, each at least ``k`` (suppress smaller groups first).
    k
        The anonymity threshold; the first interval starts at ``k``.
    interval_size
        ``I_s``, a positive integer (see :func:`thesis_interval_size`).

    Returns
    -------
    CountIntervals

    Raises
    ------
    InputError
        If a count is below ``k`` or not an integer, or ``k`` or ``I_s`` is not positive.

    References
    ----------
    .. [1] Nordström 2012, §4.2 eq. 1 and its example (k = 10, I_s = 5: 16 -> {15, ..., 19}).

    Examples
    --------
    >>> iv = interval_filter(np.array([10, 16, 24]), k=10, interval_size=5)
    >>> iv.n_min.tolist(), iv.n_max.tolist()
    ([10, 15, 20], [14, 19, 24])
    """
    _check_positive("k", k)
    _check_positive("interval_size", interval_size)
    n = np.asarray(counts)
    if n.size and not np.issubdtype(n.dtype, np.integer):
        raise InputError("counts must be integers (numbers of persons or trajectories)")
    n = n.astype(np.int64)
    if n.size and int(n.min()) < k:
        raise InputError(f"a count is below k = {k}: the thesis never publishes such groups; "
                         "suppress them before applying the interval filter")
    n_min = k + interval_size * ((n - k) // interval_size)
    return CountIntervals(n_min=n_min, n_max=n_min + interval_size - 1,
                          interval_size=int(interval_size))


def thesis_interval_size(k: int, half: bool = False) -> int:
    """The thesis' interval size: ``k``, or ``k/2`` rounded up when ``half`` (§4.5.1).

    Parameters
    ----------
    k
        The anonymity threshold.
    half
        ``True`` for the smaller size §4.5.1 allows (tolerating the Figure 13 attack on groups
        of fewer than k/2 persons); ``False`` for ``k``, which §6 recommends.

    Returns
    -------
    int

    References
    ----------
    .. [1] Nordström 2012, §4.3.2, §4.5.1 (I_s >= k/2), §4.5.2 and §6 (I_s = k).

    Examples
    --------
    >>> thesis_interval_size(10), thesis_interval_size(10, half=True), thesis_interval_size(5, True)
    (10, 5, 3)
    """
    _check_positive("k", k)
    return -(-k // 2) if half else k


def _check_positive(name: str, value: int) -> None:
    if isinstance(value, bool) or not (isinstance(value, int | np.integer) and value >= 1):
        raise InputError(f"{name} must be a positive integer")
