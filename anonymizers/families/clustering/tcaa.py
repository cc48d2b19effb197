"""TCAA (Jiang & Hu 2021): synchronize trajectories, cluster by distance and direction, generalize.

The paper's three steps, as pure numpy (no database, no Airflow):

1. *Synchronization.* :func:`tsynchzing` is Algorithm 1 as written: trajectories that share
   their start and end time (the paper's assumption 1) are interpolated linearly
   (assumption 2) at the union of all sampling times. Real data breaks assumption 1, so the
   pipeline uses :func:`synchronize_on_grid` instead (policy below).
2. *Clustering.* :func:`tclustering` is Algorithm 2: ``m = ceil(N / k)`` clusters grown one by
   one from seeds to exactly ``k`` pieces by the largest summed comprehensive similarity
   (eq. 6), the fewer than ``k`` leftovers each joining the cluster of largest summed
   similarity, so every cluster has ``k`` to ``2k - 1`` pieces.
3. *Generalization.* :func:`tgeneralizing` is Algorithm 3 (the bounding box of a cluster at
   every time point), :func:`information_loss` is eq. 1. The pipeline computes the published
   rectangles in PostGIS; these two serve the information-loss metric and the tests.

Synchronization policy for real data (:func:`synchronize_on_grid`)
--------------------------------------------------------------------
* The release window ``[window_start, window_end)`` is cut into consecutive half-open slices
  of ``slice_seconds`` aligned to ``window_start``; each slice has time points every
  ``interval`` seconds from its start, the start included and its end excluded. The grid
  depends on the window only, never on the data. No instant belongs to two slices: if the
  end of a slice were also the start of the next, a person's exact position at that instant
  would be in two groups' rectangles, and intersecting them would link the groups of
  consecutive slices.
* A trajectory contributes a *piece* to a slice only if it has a fix at or before the slice's
  first time point and one at or after its last: positions are interpolated linearly between
  the trajectory's own fixes, never extrapolated. A gap longer than ``max_gap`` seconds
  between two fixes is not interpolated across: it splits the trajectory into runs, and a
  piece comes from one run (check-ins days apart are no movement in a straight line; the
  verifier's ``sql/clustering/verify/positions.sql`` applies the same rule).
* One piece per (person, slice): a person with several trajectories covering a slice keeps
  the one with most fixes inside the slice, then the lowest trajectory id. Clusters of ``k``
  pieces of one slice are then ``k`` distinct persons, which is what k-anonymity counts.
* Slices are clustered independently (:func:`tcaa`). What is not covered is counted
  (:class:`SynchronizedPieces`) so the caller can report it as suppressed.

Degenerate cases and choices the paper leaves open
--------------------------------------------------
* *Eq. 2's bounds* (the smallest and largest pairwise distance at a time point over the whole
  set) come from the closest pair (``cKDTree``, ``k=2``) and the diameter (largest distance
  between convex-hull vertices; a double sweep, exact on a line, when the hull is flat), so
  no ``N x N`` matrix is built. When both bounds are equal (fewer than two pieces, all at one
  place, two pieces, or all pairs equally far apart) eq. 2 is 0/0: SimD is defined as 1 at
  that time point, since no pair is farther than another and the closest pair scores 1.
* *Eq. 4 on a stationary object* (a segment no longer than ``min_move`` metres, 0 by default:
  exactly zero length) is 0/0: cos θ is defined as 1 if both segments are stationary (same
  "direction": none) and 0 if only one is (orthogonal to any motion).
* *SimO's range.* The paper states SimO ∈ [0, 1], but eq. 5 averages cosines, which are
  negative for opposite directions; we follow the equation, so SimO ∈ [-1, 1] and Sim ∈
  [-λ, 1].
* *λ* may be 0 or 1 (pure distance or pure direction); the paper's λ ∈ (0, 1) excludes them.
* *Sim(p, p)*, never used by the clustering, follows the formulas (SimD(p, p) exceeds 1 when
  the closest pair of the set is not at distance 0).

Initial seeds ([17], Azimuddin & Desikan 2017)
----------------------------------------------
Only [17]'s abstract could be found: seeds are actual data points, chosen using both density
and distance so that they come from different clusters, in a single pass. We implement a
selection in that spirit (:func:`initial_seeds`), with TCAA's α = 0.8 as the weight of
distance: the density of a piece is the mean Sim to its ``k - 1`` most similar pieces (how
tight a cluster grown from it can be); the first seed is the densest; each next seed
maximizes ``α · δ + (1 - α) · density``, where δ = 1 - (largest Sim to a seed chosen so far)
is its dissimilarity to the nearest seed. Both terms are in Sim units, so no rescaling.

Reading of Algorithm 2. Its line 2 (printed ``T = T - T_i``; we read ``T = T - T_r``)
reserves the seeds: a seed is never absorbed into another seed's cluster, and the loop of
lines 3-10 runs once per seed (the same count as ``while |T| >= k`` when ``|T|`` counts the
unused seeds). The seed starting each cluster is drawn at random from the remaining ones
with the given generator, so a run is reproducible from its seed. Ties in every arg-max go
to the lowest piece index.

Cost. Similarities are computed as rows on demand, never as a matrix: the densities take
O(N^2 n) time in blocks of bounded memory, the seeds O(N^2 n / k), the growth one row per
added piece against the still-unclustered pieces, O(N^2 n); memory is O(N n).

References
----------
.. [1] Jiang, H., Hu, K. A Clustering-Anonymity Approach for Trajectory Data Publishing
   Considering both Distance and Direction. Journal of Computing and Information Technology
   29(4), 2021 (TCAA; eqs. 1-6, Algorithms 1-4).
.. [2] Azimuddin, S. S., Desikan, K. A Simple Density with Distance Based Initial Seed
   Selection Technique for K Means Algorithm. Journal of Computing and Information
   Technology 25(4), 291-300, 2017 (ref. [17] of [1]).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.spatial import ConvexHull, QhullError, cKDTree

from anonymizers.checks import checked_k
from anonymizers.errors import InputError

__all__ = [
    "ClusterBoxes",
    "DistanceBounds",
    "SynchronizedPieces",
    "direction_similarity_rows",
    "distance_bounds",
    "distance_similarity_rows",
    "information_loss",
    "initial_seeds",
    "similarity_rows",
    "synchronize_on_grid",
    "tcaa",
    "tclustering",
    "tgeneralizing",
    "tsynchzing",
]

_BLOCK_ELEMENTS = 1 << 17  # time points x rows x columns per block: 1 MiB, cache-sized (faster)
_RECOMPACT = 0.8  # re-gather the free pieces' columns when fewer than this share is free
_HULL_CHUNK = 1024  # hull vertices per chunk of the diameter search
_MAX_KEY_SPACING = 1e-3  # seconds: coarsest acceptable resolution of the fix search keys


# --- Algorithm 1: TSynchzing ----------------------------------------------------------------

def tsynchzing(trajectories: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Synchronize trajectories that share start and end times (Algorithm 1).

    Parameters
    ----------
    trajectories
        One ``(n_i, 3)`` float array per trajectory, columns ``t, x, y``, ``t`` strictly
        increasing. All must start at the same time and end at the same time (assumption 1).

    Returns
    -------
    list of numpy.ndarray
        One ``(n, 3)`` array per trajectory on the union of all sampling times, positions
        interpolated linearly (assumption 2, Algorithm 1 line 4).

    Raises
    ------
    InputError
        If a trajectory is malformed or the start or end times differ; use
        :func:`synchronize_on_grid` for such data.

    References
    ----------
    .. [1] Jiang & Hu 2021, §3 assumptions (1)-(2), §5 Algorithm 1.

    Examples
    --------
    >>> a = np.array([[0.0, 0.0, 0.0], [10.0, 10.0, 0.0]])
    >>> b = np.array([[0.0, 5.0, 5.0], [4.0, 5.0, 9.0], [10.0, 5.0, 5.0]])
    >>> tsynchzing([a, b])[0]
    array([[ 0.,  0.,  0.],
           [ 4.,  4.,  0.],
           [10., 10.,  0.]])
    """
    arrays = [_checked_trajectory(tr, i) for i, tr in enumerate(trajectories)]
    if not arrays:
        return []
    if len({a[0, 0] for a in arrays}) > 1 or len({a[-1, 0] for a in arrays}) > 1:
        raise InputError("tsynchzing needs trajectories with one common start time and one "
                         "common end time (the paper's assumption 1); use "
                         "synchronize_on_grid for real data")
    times = np.unique(np.concatenate([a[:, 0] for a in arrays]))
    return [np.column_stack([times, np.interp(times, a[:, 0], a[:, 1]),
                             np.interp(times, a[:, 0], a[:, 2])]) for a in arrays]


def _checked_trajectory(trajectory: np.ndarray, i: int) -> np.ndarray:
    a = np.asarray(trajectory, dtype=float)
    if a.ndim != 2 or a.shape[1] != 3 or a.shape[0] == 0:
        raise InputError(f"trajectory {i} must be a non-empty (n, 3) array of t, x, y")
    if not np.isfinite(a).all():
        raise InputError(f"trajectory {i} has a non-finite value")
    if (np.diff(a[:, 0]) <= 0).any():
        raise InputError(f"trajectory {i}: times must be strictly increasing")
    return a


# --- The pipeline's synchronization on a data-independent grid ------------------------------

@dataclass(frozen=True, eq=False)
class SynchronizedPieces:
    """Pieces of trajectories synchronized on a window's time grid (one per person and slice).

    Attributes
    ----------
    piece_traj, piece_person, piece_slice
        int (P,): trajectory id, person id and slice index of every piece, sorted by slice
        then trajectory id.
    slice_start
        float (S,): start instant (epoch seconds) of every slice of the window.
    offsets
        float (n,): time points of a slice, in seconds from its start
        (``0 .. slice_seconds - interval``).
    X, Y
        float (P, n): positions of every piece at its slice's time points.
    uncovered_trajectories
        Sorted ids of the trajectories that gave no piece: they cover no slice, or every
        slice they cover went to another trajectory of the same person.
    uncovered_persons
        Sorted ids of the persons with no piece at all (nothing of theirs can be published).
    n_duplicate_pieces
        Pieces dropped because their person had a preferred piece in the same slice.

    References
    ----------
    .. [1] Jiang & Hu 2021, Definition 3 (synchronized trajectories); the grid policy is this
       package's (module docstring).
    """

    piece_traj: np.ndarray
    piece_person: np.ndarray
    piece_slice: np.ndarray
    slice_start: np.ndarray
    offsets: np.ndarray
    X: np.ndarray
    Y: np.ndarray
    uncovered_trajectories: np.ndarray
    uncovered_persons: np.ndarray
    n_duplicate_pieces: int

    @property
    def n_pieces(self) -> int:
        return int(self.piece_traj.size)

    @property
    def n_slices(self) -> int:
        return int(self.slice_start.size)

    @property
    def points_per_slice(self) -> int:
        return int(self.offsets.size)

    @property
    def times(self) -> np.ndarray:
        """float (S, n): the time points of every slice, epoch seconds."""
        return self.slice_start[:, None] + self.offsets[None, :]

    def slice_rows(self, s: int) -> np.ndarray:
        """Indices of the pieces of slice ``s``."""
        return np.flatnonzero(self.piece_slice == s)


@dataclass(frozen=True, eq=False)
class _Fixes:
    """Validated fixes, grouped in trajectory blocks ``[start, end)``."""

    traj: np.ndarray
    person: np.ndarray
    t: np.ndarray
    x: np.ndarray
    y: np.ndarray
    start: np.ndarray
    end: np.ndarray
    key: np.ndarray  # strictly ordered search key: block offset + time within the block
    base: np.ndarray  # key of each block's first fix

    def keys(self, block: np.ndarray, t: np.ndarray) -> np.ndarray:
        """Search keys of instants ``t`` within blocks ``block`` (inside their time span)."""
        return self.base[block] + (t - self.t[self.start[block]])


def synchronize_on_grid(traj: np.ndarray, person: np.ndarray, t: np.ndarray, x: np.ndarray,
                        y: np.ndarray, window_start: float, window_end: float,
                        interval: float = 300.0, slice_seconds: float = 3600.0,
                        max_gap: float = math.inf) -> SynchronizedPieces:
    """Cut a window into slices and synchronize trajectories on each slice's time grid.

    Parameters
    ----------
    traj, person
        int (F,): trajectory id and person id of every fix; a trajectory has one person.
    t, x, y
        float (F,): epoch seconds and metres, sorted by trajectory id, then time.
    window_start, window_end
        The release window, epoch seconds; its length must be a multiple of ``slice_seconds``.
    interval
        Seconds between consecutive time points of a slice; must divide ``slice_seconds``.
    slice_seconds
        Length of a slice.
    max_gap
        Longest gap (seconds) between consecutive fixes of a trajectory that positions are
        interpolated across; a longer gap splits the trajectory (default: none is too long).

    Returns
    -------
    SynchronizedPieces
        Every (person, slice) piece and what could not be covered.

    Raises
    ------
    InputError
        On unsorted, non-finite or mismatched arrays, a trajectory with two persons, or a
        grid that does not divide the window.

    References
    ----------
    .. [1] Jiang & Hu 2021, §3 assumption (2) (linear motion between samples); the slices and
       the one-piece-per-person rule are this package's policy (module docstring).

    Examples
    --------
    >>> p = synchronize_on_grid(np.array([0, 0]), np.array([7, 7]), np.array([0.0, 600.0]),
    ...                         np.array([0.0, 60.0]), np.array([0.0, 0.0]), 0.0, 600.0,
    ...                         interval=300.0, slice_seconds=600.0)
    >>> p.X
    array([[ 0., 30.]])
    """
    fixes = _checked_fixes(traj, person, t, x, y, max_gap)
    slice_start, offsets = _grid(window_start, window_end, interval, slice_seconds)
    block, slc = _covered_slices(fixes, slice_start, offsets[-1])
    n_fix = _fixes_in_slices(fixes, block, slice_start[slc], slice_start[slc] + offsets[-1])
    keep = _one_piece_per_person(fixes.person[fixes.start[block]], slc, n_fix,
                                 fixes.traj[fixes.start[block]])
    block, slc = block[keep], slc[keep]
    order = np.lexsort((fixes.traj[fixes.start[block]], slc))
    block, slc = block[order], slc[order]
    X, Y = _interpolate(fixes, block, slice_start[slc][:, None] + offsets[None, :])
    return SynchronizedPieces(
        piece_traj=fixes.traj[fixes.start[block]], piece_person=fixes.person[fixes.start[block]],
        piece_slice=slc, slice_start=slice_start, offsets=offsets, X=X, Y=Y,
        uncovered_trajectories=np.setdiff1d(fixes.traj[fixes.start], fixes.traj[
            fixes.start[block]]),
        uncovered_persons=np.setdiff1d(fixes.person, fixes.person[fixes.start[block]]),
        n_duplicate_pieces=int(keep.size - keep.sum()))


def _checked_fixes(traj: np.ndarray, person: np.ndarray, t: np.ndarray, x: np.ndarray,
                   y: np.ndarray, max_gap: float = math.inf) -> _Fixes:
    """The fixes in blocks: runs of one trajectory with no gap above ``max_gap``."""
    traj_a, person_a = np.asarray(traj), np.asarray(person)
    t_a, x_a, y_a = (np.asarray(v, dtype=float) for v in (t, x, y))
    if not (traj_a.ndim == 1 and all(v.shape == traj_a.shape
                                     for v in (person_a, t_a, x_a, y_a))):
        raise InputError("traj, person, t, x and y must be 1-d arrays of one length")
    if traj_a.size and not (np.issubdtype(traj_a.dtype, np.integer)
                            and np.issubdtype(person_a.dtype, np.integer)):
        raise InputError("traj and person must be integer arrays")
    if not (np.isfinite(t_a).all() and np.isfinite(x_a).all() and np.isfinite(y_a).all()):
        raise InputError("t, x and y must be finite")
    new = np.r_[True, traj_a[1:] != traj_a[:-1]] if traj_a.size else np.zeros(0, bool)
    if (np.diff(traj_a) < 0).any() or (np.diff(t_a)[~new[1:]] < 0).any():
        raise InputError("fixes must be sorted by trajectory id, then time")
    if (person_a[1:] != person_a[:-1])[~new[1:]].any():
        raise InputError("a trajectory must belong to one person")
    if not max_gap > 0:
        raise InputError(f"max_gap must be above 0 seconds, not {max_gap}")
    new[1:] |= np.diff(t_a) > max_gap
    start = np.flatnonzero(new)
    end = np.r_[start[1:], traj_a.size][:start.size].astype(np.int64)
    return _Fixes(traj_a.astype(np.int64), person_a.astype(np.int64), t_a, x_a, y_a, start,
                  end, *_search_keys(t_a, start, end))


def _search_keys(t: np.ndarray, start: np.ndarray,
                 end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Keys increasing across blocks (why: one searchsorted serves every trajectory)."""
    if t.size == 0:
        return t.copy(), np.zeros(0)
    span = t[end - 1] - t[start] + 1.0  # the 1 s gap keeps blocks apart
    base = np.r_[0.0, np.cumsum(span)[:-1]]
    if np.spacing(base[-1] + span[-1]) > _MAX_KEY_SPACING:
        raise InputError("too many long trajectories to search at millisecond resolution: "
                         "split the window")
    block = np.repeat(np.arange(start.size), end - start)
    return base[block] + (t - t[start][block]), base


def _grid(window_start: float, window_end: float, interval: float,
          slice_seconds: float) -> tuple[np.ndarray, np.ndarray]:
    """Slice starts and time-point offsets of a window."""
    if not (math.isfinite(window_start) and math.isfinite(window_end)):
        raise InputError("window_start and window_end must be finite")
    if not (interval > 0 and slice_seconds >= interval):
        raise InputError("need 0 < interval <= slice_seconds")
    steps = _whole(slice_seconds / interval, "slice_seconds must be a multiple of interval")
    n_slices = _whole((window_end - window_start) / slice_seconds,
                      "the window length must be a positive multiple of slice_seconds")
    if n_slices < 1:
        raise InputError("the window length must be a positive multiple of slice_seconds")
    slice_start = window_start + slice_seconds * np.arange(n_slices, dtype=float)
    return slice_start, interval * np.arange(steps, dtype=float)  # the end is the next's


def _whole(ratio: float, message: str) -> int:
    n = round(ratio)
    if abs(ratio - n) > 1e-9 * max(1.0, abs(ratio)):
        raise InputError(message)
    return int(n)


def _covered_slices(fixes: _Fixes, slice_start: np.ndarray,
                    last_offset: float) -> tuple[np.ndarray, np.ndarray]:
    """(block, slice) of every slice whose first and last time points (``last_offset``
    after its start) a trajectory spans from its first to its last fix."""
    first = np.searchsorted(slice_start, fixes.t[fixes.start], side="left")
    last = np.searchsorted(slice_start + last_offset, fixes.t[fixes.end - 1],
                           side="right") - 1
    count = np.maximum(last - first + 1, 0)
    block = np.repeat(np.arange(count.size), count)
    rank = np.arange(block.size) - np.repeat(np.cumsum(count) - count, count)
    return block, first[block] + rank


def _fixes_in_slices(fixes: _Fixes, block: np.ndarray, lo: np.ndarray,
                     hi: np.ndarray) -> np.ndarray:
    """Number of fixes of each block with ``lo <= t <= hi``."""
    return (np.searchsorted(fixes.key, fixes.keys(block, hi), side="right")
            - np.searchsorted(fixes.key, fixes.keys(block, lo), side="left"))


def _one_piece_per_person(person: np.ndarray, slc: np.ndarray, n_fix: np.ndarray,
                          traj: np.ndarray) -> np.ndarray:
    """bool mask: the preferred candidate of each (person, slice), most fixes then lowest id."""
    order = np.lexsort((traj, -n_fix, slc, person))
    p, s = person[order], slc[order]
    first = np.r_[True, (p[1:] != p[:-1]) | (s[1:] != s[:-1])][:order.size]
    keep = np.zeros(order.size, bool)
    keep[order[first]] = True
    return keep


def _interpolate(fixes: _Fixes, block: np.ndarray,
                 times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions of blocks at ``times`` (P, n), all inside each block's time span."""
    q = fixes.keys(block[:, None], times)
    hi = np.minimum(np.searchsorted(fixes.key, q, side="left"), fixes.key.size - 1)
    exact = fixes.key[hi] == q
    lo = np.where(exact, hi, hi - 1)
    span = fixes.t[hi] - fixes.t[lo]
    frac = np.where(exact, 0.0, (times - fixes.t[lo]) / np.where(exact, 1.0, span))
    X = fixes.x[lo] + frac * (fixes.x[hi] - fixes.x[lo])
    Y = fixes.y[lo] + frac * (fixes.y[hi] - fixes.y[lo])
    return X.reshape(times.shape), Y.reshape(times.shape)


# --- Eq. 2's normalization: closest pair and diameter at every time point -------------------

@dataclass(frozen=True, eq=False)
class DistanceBounds:
    """Smallest and largest pairwise distance of a set at every time point (eq. 2).

    Attributes
    ----------
    minimum, maximum
        float (n,): closest-pair distance and diameter; both 0 for fewer than two pieces.

    References
    ----------
    .. [1] Jiang & Hu 2021, eq. 2 (Dist with under- and overline).
    """

    minimum: np.ndarray
    maximum: np.ndarray


def distance_bounds(X: np.ndarray, Y: np.ndarray) -> DistanceBounds:
    """Closest-pair distance and diameter of the pieces at every time point.

    Parameters
    ----------
    X, Y
        float (N, n): synchronized positions.

    Returns
    -------
    DistanceBounds
        Without an ``N x N`` matrix: ``cKDTree`` for the closest pair, convex hull for the
        diameter (a double sweep when the points are collinear or coincide).

    References
    ----------
    .. [1] Jiang & Hu 2021, eq. 2.

    Examples
    --------
    >>> b = distance_bounds(np.array([[0.0], [3.0], [0.0]]), np.array([[0.0], [4.0], [1.0]]))
    >>> float(b.minimum[0]), float(b.maximum[0])
    (1.0, 5.0)
    """
    X, Y = _checked_positions(X, Y, min_points=1)
    lo, hi = np.zeros(X.shape[1]), np.zeros(X.shape[1])
    if X.shape[0] >= 2:
        for j in range(X.shape[1]):  # one loop per time point, never per pair
            points = np.column_stack([X[:, j], Y[:, j]])
            lo[j], hi[j] = _closest_pair(points), _diameter(points)
    return DistanceBounds(lo, hi)


def _closest_pair(points: np.ndarray) -> float:
    distances, _ = cKDTree(points).query(points, k=2)
    return float(distances[:, 1].min())


def _diameter(points: np.ndarray) -> float:
    if points.shape[0] >= 3:
        try:
            hull = ConvexHull(points)
        except QhullError:
            pass  # a flat hull: every point on one line, where the double sweep is exact
        else:
            return _largest_distance(points[hull.vertices])
    return _double_sweep(points)


def _largest_distance(points: np.ndarray) -> float:
    """Largest pairwise distance among (hull) vertices, in chunks of bounded memory."""
    best = 0.0
    for i in range(0, points.shape[0], _HULL_CHUNK):
        d = points[i:i + _HULL_CHUNK, None, :] - points[None, :, :]
        best = max(best, float(np.einsum("ijk,ijk->ij", d, d).max()))
    return math.sqrt(best)


def _double_sweep(points: np.ndarray) -> float:
    """Farthest from the farthest point: the diameter of points on one line."""
    far = points[np.argmax(((points - points[0]) ** 2).sum(axis=1))]
    return float(np.sqrt(((points - far) ** 2).sum(axis=1)).max())


# --- Eqs. 2-6: similarity rows on demand ----------------------------------------------------

@dataclass(frozen=True, eq=False)
class _Features:
    """Per-piece features from which any Sim row follows (eqs. 2-6).

    ``xt``, ``yt`` (n, N) are centred positions scaled by 1 / (max - min distance) of their
    time point (0 where degenerate), so that SimD(p, q) = ``offset`` - mean |z_p - z_q|.
    ``u`` (N, 3 (n - 1)) holds per segment the unit direction and a stationary flag, so that
    cos θ (with the stationary rule) is a dot product and SimO a matrix product.
    """

    xt: np.ndarray
    yt: np.ndarray
    u: np.ndarray
    offset: float
    lam: float

    def take(self, idx: np.ndarray) -> _Features:
        return _Features(self.xt[:, idx], self.yt[:, idx], self.u[idx], self.offset, self.lam)


def _features(X: np.ndarray, Y: np.ndarray, lam: float, bounds: DistanceBounds | None,
              min_move: float) -> _Features:
    if bounds is None:  # direction only: eq. 2's bounds are not needed
        n = X.shape[1]
        bounds = DistanceBounds(np.zeros(n), np.zeros(n)) if lam == 1.0 else distance_bounds(X, Y)
    if bounds.minimum.shape != (X.shape[1],) or bounds.maximum.shape != (X.shape[1],):
        raise InputError("bounds must have one value per time point")
    spread = bounds.maximum - bounds.minimum
    scale = np.divide(1.0, spread, out=np.zeros_like(spread), where=spread > 0)
    xt = ((X - X.mean(axis=0)) * scale).T.copy()  # centred: fewer digits lost to offsets
    yt = ((Y - Y.mean(axis=0)) * scale).T.copy()
    offset = 1.0 + float(np.mean(bounds.minimum * scale))
    return _Features(xt, yt, _direction_features(X, Y, min_move), offset, lam)


def _direction_features(X: np.ndarray, Y: np.ndarray, min_move: float) -> np.ndarray:
    """Unit segment vectors plus a stationary flag: (ux, uy, 0) if moving, (0, 0, 1) if not."""
    dx, dy = np.diff(X, axis=1), np.diff(Y, axis=1)
    length = np.hypot(dx, dy)
    still = length <= min_move
    safe = np.where(still, 1.0, length)
    ux, uy = np.where(still, 0.0, dx / safe), np.where(still, 0.0, dy / safe)
    return np.concatenate([ux, uy, still.astype(float)], axis=1)


class _Workspace:
    """Scratch memory reused by every similarity block of a run.

    Why: a fresh temporary of a megabyte is a fresh ``mmap``, and its page faults cost more
    than the arithmetic done in it (measured: 457k faults, a third of the time, at N = 3,000).
    """

    def __init__(self) -> None:
        self._buffer = np.empty(0)

    def arrays(self, *shapes: tuple[int, ...]) -> list[np.ndarray]:
        """Disjoint views of the given shapes, valid until the next call."""
        sizes = [math.prod(shape) for shape in shapes]
        if self._buffer.size < sum(sizes):
            self._buffer = np.empty(sum(sizes))
        ends = np.cumsum(sizes).tolist()
        return [self._buffer[end - size:end].reshape(shape)
                for shape, size, end in zip(shapes, sizes, ends, strict=True)]


def _similarity(a: _Features, b: _Features, work: _Workspace) -> np.ndarray:
    """Sim (eq. 6) of every piece of ``a`` with every piece of ``b``: (len(a), len(b)).

    The result is a view into ``work``, valid until its next use.
    """
    n, r, c = a.xt.shape[0], a.u.shape[0], b.u.shape[0]
    out, dot, dx, dy = work.arrays((r, c), (r, c), (n, r, c), (n, r, c))
    out.fill(0.0)
    if a.lam < 1.0:  # time first in (n, rows, cols): the sum over time adds whole planes
        np.subtract(b.xt[:, None, :], a.xt[:, :, None], out=dx)
        np.subtract(b.yt[:, None, :], a.yt[:, :, None], out=dy)
        np.multiply(dx, dx, out=dx)
        np.multiply(dy, dy, out=dy)
        np.add(dx, dy, out=dx)
        np.sqrt(dx, out=dx)
        np.sum(dx, axis=0, out=out)
        out *= -(1.0 - a.lam) / n
        out += (1.0 - a.lam) * a.offset
    if a.lam > 0.0:
        np.matmul(a.u, b.u.T, out=dot)
        dot *= a.lam / (a.u.shape[1] // 3)
        out += dot
    return out


def _row_blocks(n_rows: int, n_cols: int, n_times: int) -> list[slice]:
    size = max(1, _BLOCK_ELEMENTS // max(1, n_cols * n_times))
    return [slice(i, min(i + size, n_rows)) for i in range(0, n_rows, size)]


def similarity_rows(X: np.ndarray, Y: np.ndarray, rows: np.ndarray | None = None,
                    lam: float = 0.6, bounds: DistanceBounds | None = None,
                    min_move: float = 0.0) -> np.ndarray:
    """Comprehensive similarity Sim = λ SimO + (1 - λ) SimD of some pieces with all (eq. 6).

    Parameters
    ----------
    X, Y
        float (N, n), n >= 2: one synchronized set (eq. 2 normalizes over it).
    rows
        Indices of the pieces whose rows are wanted; ``None`` for all (an ``N x N`` matrix:
        small sets only).
    lam
        λ in [0, 1]: 1 is direction only, 0 distance only.
    bounds
        :func:`distance_bounds` of the set, if already computed.
    min_move
        Segments no longer than this (metres) are stationary (module docstring).

    Returns
    -------
    numpy.ndarray
        float (len(rows), N). Memory O(len(rows) N), computed in blocks of bounded size.

    References
    ----------
    .. [1] Jiang & Hu 2021, eqs. 2-6.

    Examples
    --------
    >>> X = np.array([[0.0, 1.0], [0.0, 1.0], [5.0, 4.0]])
    >>> similarity_rows(X, np.zeros((3, 2)), np.array([0]), lam=1.0)
    array([[ 1.,  1., -1.]])
    """
    X, Y = _checked_positions(X, Y, min_points=2)
    _check_unit("lam", lam)
    f = _features(X, Y, lam, bounds, min_move)
    idx = np.arange(X.shape[0]) if rows is None else _checked_rows(rows, X.shape[0])
    out, work = np.empty((idx.size, X.shape[0])), _Workspace()
    for block in _row_blocks(idx.size, X.shape[0], X.shape[1]):
        out[block] = _similarity(f.take(idx[block]), f, work)
    return out


def distance_similarity_rows(X: np.ndarray, Y: np.ndarray, rows: np.ndarray | None = None,
                             bounds: DistanceBounds | None = None) -> np.ndarray:
    """SimD (eqs. 2-3): mean over time points of the normalized closeness, rows on demand.

    Parameters
    ----------
    X, Y, rows, bounds
        As in :func:`similarity_rows`.

    Returns
    -------
    numpy.ndarray
        float (len(rows), N).

    References
    ----------
    .. [1] Jiang & Hu 2021, eqs. 2-3 (Definitions 7-8).
    """
    return similarity_rows(X, Y, rows, lam=0.0, bounds=bounds)


def direction_similarity_rows(X: np.ndarray, Y: np.ndarray, rows: np.ndarray | None = None,
                              min_move: float = 0.0) -> np.ndarray:
    """SimO (eqs. 4-5): mean cosine of the segment-segment angles, rows on demand.

    Parameters
    ----------
    X, Y, rows, min_move
        As in :func:`similarity_rows`.

    Returns
    -------
    numpy.ndarray
        float (len(rows), N), in [-1, 1] (the paper's [0, 1] ignores negative cosines).

    References
    ----------
    .. [1] Jiang & Hu 2021, eqs. 4-5 (Definitions 9-10).
    """
    return similarity_rows(X, Y, rows, lam=1.0, min_move=min_move)


# --- Algorithm 2: TClustering with density + distance seeds ---------------------------------

def initial_seeds(X: np.ndarray, Y: np.ndarray, n_seeds: int, k: int, lam: float = 0.6,
                  alpha: float = 0.8, bounds: DistanceBounds | None = None,
                  min_move: float = 0.0) -> np.ndarray:
    """Density-with-distance seed selection in the spirit of [17] (module docstring).

    Parameters
    ----------
    X, Y
        float (N, n), n >= 2: one synchronized set, N >= k.
    n_seeds
        How many seeds, at most N.
    k
        The anonymity threshold: a density is the mean Sim to the k - 1 most similar pieces.
    lam, bounds, min_move
        As in :func:`similarity_rows`.
    alpha
        Weight of the distance to the chosen seeds; 1 - alpha weighs the density.

    Returns
    -------
    numpy.ndarray
        int (n_seeds,): piece indices in the order they were chosen.

    References
    ----------
    .. [1] Jiang & Hu 2021, Algorithm 2 line 1 (α = 0.8).
    .. [2] Azimuddin & Desikan 2017 (only its abstract was available).
    """
    X, Y = _checked_positions(X, Y, min_points=2)
    checked_k(k)
    if k > X.shape[0]:
        raise InputError(f"k = {k} exceeds the {X.shape[0]} pieces")
    _check_unit("alpha", alpha)
    _check_unit("lam", lam)
    if not 0 <= n_seeds <= X.shape[0]:
        raise InputError(f"n_seeds must be in [0, {X.shape[0]}]")
    f = _features(X, Y, lam, bounds, min_move)
    return _seeds(f, n_seeds, k, alpha, _Workspace())


def _seeds(f: _Features, n_seeds: int, k: int, alpha: float, work: _Workspace) -> np.ndarray:
    n = f.u.shape[0]
    if n_seeds == n:
        return np.arange(n)  # k = 1: every piece is a seed, nothing to choose
    density = _densities(f, k, work)
    weighted = (1.0 - alpha) * density
    seeds = np.empty(n_seeds, np.int64)
    nearest = np.full(n, np.inf)  # dissimilarity to the nearest chosen seed
    score = density.copy()
    for i in range(n_seeds):
        seeds[i] = int(np.argmax(score))
        row = _similarity(f.take(seeds[i:i + 1]), f, work)[0]
        np.minimum(nearest, np.subtract(1.0, row, out=row), out=nearest)
        np.add(np.multiply(nearest, alpha, out=score), weighted, out=score)
        score[seeds[:i + 1]] = -np.inf
    return seeds


def _densities(f: _Features, k: int, work: _Workspace) -> np.ndarray:
    """Mean Sim of every piece to its k - 1 most similar others, in row blocks."""
    n = f.u.shape[0]
    density = np.empty(n)
    for block in _row_blocks(n, n, f.xt.shape[0]):
        sim = _similarity(f.take(np.arange(block.start, block.stop)), f, work)
        sim[np.arange(sim.shape[0]), np.arange(block.start, block.stop)] = -np.inf
        density[block] = np.partition(sim, n - (k - 1), axis=1)[:, n - (k - 1):].mean(axis=1)
    return density


def tclustering(X: np.ndarray, Y: np.ndarray, k: int, lam: float = 0.6, alpha: float = 0.8,
                rng: np.random.Generator | int = 0, bounds: DistanceBounds | None = None,
                min_move: float = 0.0) -> np.ndarray:
    """Cluster synchronized pieces into groups of k to 2k - 1 (Algorithm 2).

    Parameters
    ----------
    X, Y
        float (N, n), n >= 2: one synchronized set.
    k
        The anonymity threshold, >= 1.
    lam
        λ of eq. 6 (the paper's experiments use 0.6).
    alpha
        α of the seed selection (the paper uses 0.8).
    rng
        Generator (or seed) for the paper's "randomly selected from T_r".
    bounds, min_move
        As in :func:`similarity_rows`.

    Returns
    -------
    numpy.ndarray
        int (N,): cluster 0 .. m' - 1 of every piece, m' = number of seeds; all -1 if N < k
        (nothing can be published).

    References
    ----------
    .. [1] Jiang & Hu 2021, §5 Algorithm 2 and Definition 4.

    Examples
    --------
    >>> X = np.array([[0.0, 1.0], [0.0, 1.0], [90.0, 91.0], [90.0, 91.0]])
    >>> tclustering(X, np.zeros((4, 2)), k=2).tolist()
    [0, 0, 1, 1]
    """
    X, Y = _checked_positions(X, Y, min_points=2)
    _check_unit("lam", lam)
    _check_unit("alpha", alpha)
    n = X.shape[0]
    checked_k(k)
    labels = np.full(n, -1, np.int64)
    n_seeds = n // k  # = m if N = m k, else m - 1, with m = ceil(N / k)
    if n_seeds == 0:
        return labels
    f, work = _features(X, Y, lam, bounds, min_move), _Workspace()
    seeds = _seeds(f, n_seeds, k, alpha, work)
    generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    _grow_clusters(f, seeds[generator.permutation(n_seeds)], k, labels, work)
    _assign_leftovers(f, labels, work)
    return labels


def _grow_clusters(f: _Features, order: np.ndarray, k: int, labels: np.ndarray,
                   work: _Workspace) -> None:
    """Lines 3-10: from each seed in turn, a cluster of k by largest summed Sim."""
    free = np.ones(labels.size, bool)
    free[order] = False  # reserved: each seed starts its own cluster
    n_free = labels.size - order.size
    candidates = np.flatnonzero(free)
    columns = f.take(candidates)
    summed_buffer = np.empty(labels.size)
    for cluster, seed in enumerate(order.tolist()):
        if n_free < _RECOMPACT * candidates.size:  # rows shrink as the clusters fill
            candidates = np.flatnonzero(free)
            columns = f.take(candidates)
        labels[seed] = cluster
        summed = summed_buffer[:candidates.size]
        summed[:] = _similarity(f.take(np.array([seed])), columns, work)[0]
        summed[~free[candidates]] = -np.inf
        for _ in range(k - 1):
            best = int(np.argmax(summed))
            labels[candidates[best]], free[candidates[best]] = cluster, False
            summed[best] = -np.inf
            summed += _similarity(f.take(candidates[best:best + 1]), columns, work)[0]
        n_free -= k - 1


def _assign_leftovers(f: _Features, labels: np.ndarray, work: _Workspace) -> None:
    """Lines 11-14: each leftover joins the cluster of largest summed Sim, in index order."""
    n_clusters = int(labels.max()) + 1
    for piece in np.flatnonzero(labels < 0):
        sim = _similarity(f.take(np.array([piece])), f, work)[0]
        member = labels >= 0
        summed = np.bincount(labels[member], weights=sim[member], minlength=n_clusters)
        labels[piece] = int(np.argmax(summed))


# --- Algorithm 3: TGeneralizing and eq. 1 ---------------------------------------------------

@dataclass(frozen=True, eq=False)
class ClusterBoxes:
    """The bounding box of every cluster at every time point (Algorithm 3).

    Attributes
    ----------
    cluster
        int (m,): cluster ids, sorted.
    xmin, xmax, ymin, ymax
        float (m, n).

    References
    ----------
    .. [1] Jiang & Hu 2021, Definition 5, Algorithm 3.
    """

    cluster: np.ndarray
    xmin: np.ndarray
    xmax: np.ndarray
    ymin: np.ndarray
    ymax: np.ndarray

    @property
    def area(self) -> np.ndarray:
        """float (m, n): area of every box."""
        return (self.xmax - self.xmin) * (self.ymax - self.ymin)


def tgeneralizing(X: np.ndarray, Y: np.ndarray, labels: np.ndarray,
                  snap: float | None = None) -> ClusterBoxes:
    """Per cluster and time point, the smallest box holding its pieces (Algorithm 3).

    Parameters
    ----------
    X, Y
        float (N, n): synchronized positions.
    labels
        int (N,): cluster of every piece; pieces labelled -1 are not generalized.
    snap
        If given, boxes grow outward to a lattice of ``snap`` metres (mins floored, maxes
        ceiled to multiples of ``snap``), so published corners reveal no exact position.

    Returns
    -------
    ClusterBoxes

    References
    ----------
    .. [1] Jiang & Hu 2021, Definition 5, Algorithm 3.

    Examples
    --------
    >>> b = tgeneralizing(np.array([[1.0], [3.0]]), np.array([[2.0], [7.0]]), np.array([0, 0]),
    ...                   snap=5.0)
    >>> b.xmin.tolist(), b.xmax.tolist(), b.ymin.tolist(), b.ymax.tolist()
    ([[0.0]], [[5.0]], [[0.0]], [[10.0]])
    """
    X, Y = _checked_positions(X, Y, min_points=1)
    labels = _checked_labels(labels, X.shape[0])
    if snap is not None and not (math.isfinite(snap) and snap > 0):
        raise InputError("snap must be a positive number of metres")
    member = labels >= 0
    cluster, inverse = np.unique(labels[member], return_inverse=True)
    order = np.argsort(inverse, kind="stable")
    starts = np.searchsorted(inverse[order], np.arange(cluster.size))
    xs, ys = X[member][order], Y[member][order]
    if cluster.size == 0:
        empty = np.zeros((0, X.shape[1]))
        return ClusterBoxes(cluster, empty, empty, empty, empty)
    boxes = [np.minimum.reduceat(xs, starts), np.maximum.reduceat(xs, starts),
             np.minimum.reduceat(ys, starts), np.maximum.reduceat(ys, starts)]
    if snap is not None:
        boxes = [_snap(b, snap, up=i % 2 == 1) for i, b in enumerate(boxes)]
    return ClusterBoxes(cluster, *boxes)


def _snap(values: np.ndarray, snap: float, up: bool) -> np.ndarray:
    """Outward to multiples of ``snap``, corrected where rounding of the division lands inside."""
    if up:
        out = np.ceil(values / snap) * snap
        return np.where(out < values, out + snap, out)
    out = np.floor(values / snap) * snap
    return np.where(out > values, out - snap, out)


def information_loss(X: np.ndarray, Y: np.ndarray, labels: np.ndarray) -> float:
    """IL of eq. 1: mean over clusters and time points of box area / area of the whole set.

    IL = sum_i sum_j Area(box of cluster i at t_j) / (m n Area(box of all N pieces at t_j)).
    A time point where the whole set's box has zero area (all pieces on one line) adds 0:
    its cluster boxes, subsets of it, have zero area too.

    The paper is inconsistent in two places; we follow its equations. Its Experiment 1 says
    IL is "calculated according to Definition 1" (which defines a trajectory): eq. 1 is meant.
    It claims TCAA's time complexity is lower than or equal to the others' (§5, §7), while
    its own Figure 4 and text report TCAA as the slowest of the three algorithms.

    Parameters
    ----------
    X, Y
        float (N, n): the synchronized set that was clustered (all of it).
    labels
        int (N,): cluster of every piece, -1 for pieces in no cluster.

    Returns
    -------
    float
        In [0, 1].

    Raises
    ------
    InputError
        If no piece is in a cluster (eq. 1 divides by m = 0).

    References
    ----------
    .. [1] Jiang & Hu 2021, eq. 1; §6 Experiment 1; §5 and Figure 4 for the runtime claims.

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [3.0], [4.0]])
    >>> information_loss(X, X.copy(), np.array([0, 0, 1, 1]))
    0.0625
    """
    X, Y = _checked_positions(X, Y, min_points=1)
    boxes = tgeneralizing(X, Y, labels)
    if boxes.cluster.size == 0:
        raise InputError("information_loss needs at least one cluster")
    whole = (X.max(axis=0) - X.min(axis=0)) * (Y.max(axis=0) - Y.min(axis=0))
    ratio = np.divide(boxes.area, whole, out=np.zeros_like(boxes.area), where=whole > 0)
    return float(ratio.sum() / ratio.size)


# --- Algorithm 4: TCAA over the slices of a window ------------------------------------------

def tcaa(pieces: SynchronizedPieces, k: int, lam: float = 0.6, alpha: float = 0.8,
         seed: int = 0, min_move: float = 0.0) -> np.ndarray:
    """Run TClustering on every slice of synchronized pieces (Algorithm 4, steps 1-2).

    Parameters
    ----------
    pieces
        From :func:`synchronize_on_grid`.
    k, lam, alpha, min_move
        As in :func:`tclustering`.
    seed
        Slice ``s`` is clustered with ``default_rng([seed, s])``: a slice's result does not
        depend on which other slices exist, so a re-run of a partition repeats it.

    Returns
    -------
    numpy.ndarray
        int (P,): cluster of every piece, ids unique across slices; -1 for the pieces of
        slices with fewer than ``k`` pieces. Generalize with :func:`tgeneralizing`.

    References
    ----------
    .. [1] Jiang & Hu 2021, Algorithm 4.
    """
    if not (isinstance(seed, int | np.integer) and seed >= 0):
        raise InputError("seed must be a non-negative integer")
    checked_k(k)
    labels = np.full(pieces.n_pieces, -1, np.int64)
    next_id = 0
    for s in np.unique(pieces.piece_slice):  # one loop per slice, never per pair
        rows = pieces.slice_rows(int(s))
        local = tclustering(pieces.X[rows], pieces.Y[rows], k, lam, alpha,
                            np.random.default_rng([int(seed), int(s)]), min_move=min_move)
        member = local >= 0
        labels[rows[member]] = local[member] + next_id
        next_id += int(local.max()) + 1 if member.any() else 0
    return labels


# --- Argument checks ------------------------------------------------------------------------

def _checked_positions(X: np.ndarray, Y: np.ndarray,
                       min_points: int) -> tuple[np.ndarray, np.ndarray]:
    X, Y = np.asarray(X, dtype=float), np.asarray(Y, dtype=float)
    if X.ndim != 2 or X.shape != Y.shape:
        raise InputError("X and Y must be 2-d arrays of one shape (pieces, time points)")
    if X.shape[1] < min_points:
        raise InputError(f"need at least {min_points} time point(s) per piece")
    if not (np.isfinite(X).all() and np.isfinite(Y).all()):
        raise InputError("X and Y must be finite")
    return X, Y


def _checked_rows(rows: np.ndarray, n: int) -> np.ndarray:
    idx = np.asarray(rows)
    if idx.ndim != 1 or (idx.size and not np.issubdtype(idx.dtype, np.integer)):
        raise InputError("rows must be a 1-d integer array")
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise InputError(f"rows must be in [0, {n})")
    return idx.astype(np.int64)


def _checked_labels(labels: np.ndarray, n: int) -> np.ndarray:
    lab = np.asarray(labels)
    if lab.shape != (n,) or (n and not np.issubdtype(lab.dtype, np.integer)):
        raise InputError("labels must be an integer array with one label per piece")
    if n and lab.min() < -1:
        raise InputError("labels must be cluster ids >= 0, or -1 for no cluster")
    return lab


def _check_unit(name: str, value: float) -> None:
    if not 0.0 <= value <= 1.0:
        raise InputError(f"{name} must be in [0, 1]")
