"""Extract the characteristic points of trajectories (step 1 of Algorithm 2, seed 000 §6.1).

Characteristic points are the input of the data-driven tessellation: they are grouped into
spatial clusters of a desired radius (:mod:`anonymizers.families.generalization.point_clustering`)
and the cluster centroids generate the Voronoi cells.  Following Andrienko & Andrienko
[1]_ (the method the paper cites as [5]) a trajectory's characteristic points are its
start and end, its significant stops, its significant turns and representative points of
long straight stretches, controlled by a minimum turn angle, a minimum stop duration and
a maximum distance between extracted points (the paper's Figure 1 uses 45°, 5 min and
3500 m; its experiments use cells of radius 500 m).

The published algorithm is sequential: whether a point is extracted depends on the last
extracted point.  Everything that does not depend on that state (trajectory bounds,
stop candidates, the look-ahead direction of every point) is computed with numpy; only
the scan itself loops in Python, over plain lists.  About 0.1-0.2 s per 100,000 points.

References
----------
.. [1] N. Andrienko and G. Andrienko, "Spatial generalization and aggregation of massive
   movement data", IEEE Transactions on Visualization and Computer Graphics 17(2)
   (2011), 205-219 (extraction of characteristic points).
.. [2] A. Monreale, G. Andrienko, N. Andrienko, F. Giannotti, D. Pedreschi,
   S. Rinzivillo, S. Wrobel, "Movement Data Anonymity through Generalization",
   Transactions on Data Privacy 3 (2010), 91-121, Section 6.1, Algorithm 2, Figure 1.
.. [3] movingpandas 0.23, ``movingpandas.trajectory_aggregator.PtsExtractor``: an
   implementation of [1]; the rules below follow it unless a decision says otherwise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Real

import numpy as np

from anonymizers.counting import distinct_values
from anonymizers.errors import InputError

__all__ = ["CharacteristicPointParams", "characteristic_points"]

# First chunk of points scanned when looking for the end of a stop; doubled every chunk,
# so a stop of m points costs O(m) numpy work in O(log m) calls.
_EXIT_CHUNK = 64


@dataclass(frozen=True)
class CharacteristicPointParams:
    """Thresholds of the characteristic point extraction; invalid values raise InputError.

    Parameters
    ----------
    min_angle_deg : float
        Minimum change of direction of a significant turn, in degrees, in (0, 180].
    min_stop_duration_s : float
        Minimum duration of a significant stop, in seconds (``inf`` disables stops).
    stop_radius_m : float
        Movements shorter than this count as staying in place (movingpandas'
        ``min_distance``).  Used three ways: a stop is a run of points within this
        distance of the stop's first point; directions are only measured between
        positions at least this far apart, so GPS jitter of a few tens of metres can
        not fake a turn; and a stop collapses to one point.  The default 100 m is about
        ten times typical GPS noise and one city block, well below the 500 m cells of
        the paper's experiments.  Must be finite.
    max_distance_m : float
        Maximum straight-line distance between consecutive extracted points of a
        trajectory (``inf`` disables representative points); at least
        ``stop_radius_m``.  A release passes about the cluster radius r.

    Raises
    ------
    InputError
        If a value is not a positive number, the angle is outside (0, 180], the stop
        radius is infinite, or ``max_distance_m < stop_radius_m`` (points closer than the
        stop radius are one place, so they cannot be required to be extracted).

    References
    ----------
    .. [1] Andrienko & Andrienko, IEEE TVCG 17(2) (2011), 205-219.
    .. [2] Monreale et al., Trans. Data Privacy 3 (2010), Section 6.1 (45°, 5 min, 3500 m).
    """

    min_angle_deg: float = 45.0
    min_stop_duration_s: float = 300.0
    stop_radius_m: float = 100.0
    max_distance_m: float = 3500.0

    def __post_init__(self) -> None:
        for name in ("min_angle_deg", "min_stop_duration_s", "stop_radius_m", "max_distance_m"):
            value = getattr(self, name)
            # bool is a Real subclass, but True as a threshold is certainly a mistake
            if isinstance(value, bool) or not isinstance(value, Real) or not float(value) > 0:
                raise InputError(f"{name} must be a positive number, got {value!r}")
        if self.min_angle_deg > 180:
            raise InputError(f"min_angle_deg must be in (0, 180], got {self.min_angle_deg!r}")
        if math.isinf(self.stop_radius_m):
            raise InputError("stop_radius_m must be finite")
        if self.max_distance_m < self.stop_radius_m:
            raise InputError(
                f"max_distance_m ({self.max_distance_m}) must be at least stop_radius_m "
                f"({self.stop_radius_m})"
            )


def characteristic_points(
    traj: np.ndarray,
    t: np.ndarray,
    x: np.ndarray,
    y: np.ndarray,
    params: CharacteristicPointParams = CharacteristicPointParams(),
) -> np.ndarray:
    """Mark the characteristic points of every trajectory.

    Parameters
    ----------
    traj : numpy.ndarray
        Integer trajectory code of every point; each trajectory's points are contiguous.
    t : numpy.ndarray
        Time of every point in epoch seconds (float or int64), non-decreasing within a
        trajectory (the rows are sorted by ``(traj, t)``).
    x, y : numpy.ndarray
        Coordinates in metres of a metric CRS.
    params : CharacteristicPointParams
        Thresholds; the defaults are the paper's Figure 1 (45°, 5 min, 3500 m).

    Returns
    -------
    numpy.ndarray
        Boolean mask, True for the characteristic points.

    Raises
    ------
    InputError
        If the arrays are not 1-D of one length, hold NaN or infinite values, ``traj`` is
        not integer or a trajectory is split into several runs, or ``t`` decreases within
        a trajectory.

    Notes
    -----
    Rules, per trajectory (``r`` = ``stop_radius_m``; "staying" means closer than r):

    1. **Start and end** are always extracted (also for one- and two-point trajectories).
    2. **Stops.**  Scanning from the start, a stop begins at point s when every following
       point up to some point e stays within r of s and ``t[e] - t[s] >=
       min_stop_duration_s``; it ends before the first point at distance >= r from s
       (as movingpandas' implementation of [1]_: the first point of the stop is the
       reference, the duration is measured to the last point still inside).  The scan
       resumes after the stop.  *Decision:* the stop is represented by its **first
       point** (as movingpandas), the arrival position: it is a real fix and it keeps
       the spacing guarantee of rule 4; the point nearest the stop's centre would
       loosen it to 2r plus a step.  A stop at the start is represented by the
       start point; a stop lasting until the end keeps its first point and the end
       point.  The other points of a stop are not looked at again: collapsed, the stop
       is one point for rules 3 and 4.
    3. **Turns.**  A point j is a turn when the direction from the last extracted point
       to j and the direction from j to the first later point at distance >= r from j
       differ by at least ``min_angle_deg`` ([1]_: the incoming direction starts at the
       last extracted point, so gradual bends accumulate until they count).  Both
       directions are measured between positions at least r apart (*decision*: the
       incoming one too, which movingpandas does not check), so jitter below r cannot
       fake a turn; j is not a candidate when it is within r of the last extracted point.
       *Decision:* the look-ahead reaches around a corner before the corner itself, so
       the turn is moved to the point of largest direction change among j and the later
       points within r of j (a street corner is extracted at the corner, not up to r
       before it); ties keep the earliest.
    4. **Representative points.**  When a point is farther than ``max_distance_m`` from
       the last extracted point, the point before it (the last one within the limit) is
       extracted, and the point itself too if it is still too far (one long step).
       Hence consecutive extracted points are at most ``max_distance_m`` apart, except
       across one input step longer than that, or across a stop, where the bound is the
       step plus r <= the step plus ``max_distance_m``.  *Decision:* movingpandas
       instead appends its previous reference point again and moves the reference on,
       so its points can be ``max_distance_m`` plus a step apart and repeat (on the
       benchmark a third of its points are duplicates); ours are about twice as dense
       when the sampling step is close to ``max_distance_m``.

    References
    ----------
    .. [1] N. Andrienko and G. Andrienko, "Spatial generalization and aggregation of
       massive movement data", IEEE TVCG 17(2) (2011), 205-219.
    .. [2] A. Monreale et al., "Movement Data Anonymity through Generalization",
       Transactions on Data Privacy 3 (2010), 91-121, Algorithm 2 and Figure 1.
    """
    traj_a, t_a, x_a, y_a = _validated_arrays(traj, t, x, y)
    mask = np.zeros(x_a.size, dtype=bool)
    if x_a.size == 0:
        return mask
    starts, ends = _trajectory_bounds(traj_a)
    _check_time_order(t_a, starts)
    run_of = np.repeat(np.arange(starts.size), ends - starts)
    stops = _find_stops(t_a, x_a, y_a, run_of, ends, params)
    visible, forced = _collapse_stops(x_a.size, starts, ends, stops)
    kept = np.flatnonzero(visible)
    chosen = _scan(x_a[kept], y_a[kept], run_of[kept], forced[kept], params)
    mask[kept[chosen]] = True
    return mask


# --------------------------------------------------------------------------- validation


def _validated_arrays(
    traj: np.ndarray, t: np.ndarray, x: np.ndarray, y: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    traj_a = np.asarray(traj)
    arrays = {"traj": traj_a}
    for name, values in (("t", t), ("x", x), ("y", y)):
        try:
            arrays[name] = np.asarray(values, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise InputError(f"{name} must be numeric: {exc}") from None
    for name, values in arrays.items():
        if values.ndim != 1:
            raise InputError(f"{name} must be one-dimensional, got shape {values.shape}")
    lengths = {name: values.size for name, values in arrays.items()}
    if len(set(lengths.values())) > 1:
        raise InputError(f"traj, t, x and y must have the same length, got {lengths}")
    if traj_a.size and not np.issubdtype(traj_a.dtype, np.integer):
        raise InputError(f"traj must hold integer codes (see pandas.factorize), got {traj_a.dtype}")
    for name in ("t", "x", "y"):
        if not np.isfinite(arrays[name]).all():
            raise InputError(f"{name} holds NaN or infinite values")
    return traj_a, arrays["t"], arrays["x"], arrays["y"]


def _trajectory_bounds(traj: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and end (exclusive) index of every run of equal codes."""
    breaks = np.flatnonzero(traj[1:] != traj[:-1]) + 1
    starts = np.concatenate(([0], breaks))
    ends = np.concatenate((breaks, [traj.size]))
    if starts.size != distinct_values(traj).size:  # not np.unique: it hashes (8 s at 25M)
        raise InputError("the points of each trajectory must be contiguous (sort by traj, t)")
    return starts, ends


def _check_time_order(t: np.ndarray, starts: np.ndarray) -> None:
    backwards = np.diff(t) < 0
    backwards[starts[1:] - 1] = False  # a new trajectory may start earlier
    if backwards.any():
        at = int(np.flatnonzero(backwards)[0]) + 1
        raise InputError(f"t decreases within a trajectory at row {at} (sort by traj, t)")


# --------------------------------------------------------------------------- stops


def _find_stops(
    t: np.ndarray,
    x: np.ndarray,
    y: np.ndarray,
    run_of: np.ndarray,
    ends: np.ndarray,
    params: CharacteristicPointParams,
) -> list[tuple[int, int]]:
    """Stops as ``(first, end)`` index pairs (end exclusive), scanning greedily from the start."""
    if math.isinf(params.min_stop_duration_s):
        return []  # stops disabled: no stay is ever long enough
    r2 = params.stop_radius_m**2
    end_of = ends[run_of]
    # A stop starting at s must still be within r of s at the first point q that is
    # min_stop_duration_s later; that single check is vectorized and removes almost
    # every moving point, so the exact (sequential) check only sees real candidates.
    key = run_of * (np.ptp(t) + params.min_stop_duration_s + 1.0) + (t - t.min())
    # The key's rounding may only make q too early (a weaker filter), never too late.
    slack = 8 * np.finfo(np.float64).eps * float(key[-1]) + 1e-9
    q = np.searchsorted(key, key + (params.min_stop_duration_s - slack), side="left")
    q = np.maximum(q, np.arange(key.size))
    has_q = q < end_of
    q_safe = np.where(has_q, q, 0)
    near = (x[q_safe] - x) ** 2 + (y[q_safe] - y) ** 2 < r2
    stops: list[tuple[int, int]] = []
    resume = 0
    for s in np.flatnonzero(has_q & near).tolist():
        if s < resume:
            continue  # inside the previous stop: the scan resumes after it
        exit_ = _first_exit(x, y, s, s + 1, int(end_of[s]), r2)
        if t[exit_ - 1] - t[s] >= params.min_stop_duration_s:
            stops.append((s, exit_))
            resume = exit_
    return stops


def _first_exit(x: np.ndarray, y: np.ndarray, s: int, lo: int, hi: int, r2: float) -> int:
    """First index in [lo, hi) at distance >= r from point s, or hi."""
    chunk = _EXIT_CHUNK
    while lo < hi:
        up = min(hi, lo + chunk)
        far = np.flatnonzero((x[lo:up] - x[s]) ** 2 + (y[lo:up] - y[s]) ** 2 >= r2)
        if far.size:
            return lo + int(far[0])
        lo, chunk = up, chunk * 2
    return hi


def _collapse_stops(
    n: int, starts: np.ndarray, ends: np.ndarray, stops: list[tuple[int, int]]
) -> tuple[np.ndarray, np.ndarray]:
    """Which points the scan sees (a stop is one point) and which it must extract."""
    visible = np.ones(n, dtype=bool)
    forced = np.zeros(n, dtype=bool)
    forced[starts] = True
    forced[ends - 1] = True
    for first, end in stops:
        visible[first + 1 : end] = False
        forced[first] = True
    # The end point stays even inside a final stop: collapsing it into the stop's first
    # point instead would break the spacing bound when that point ends another stop.
    visible[ends - 1] = True
    return visible, forced


# --------------------------------------------------------------------------- turns and spacing


def _look_ahead_heading(x: np.ndarray, y: np.ndarray, run: np.ndarray, r: float) -> np.ndarray:
    """Heading (radians) from each point to the first later point of its trajectory at
    distance >= r, NaN when there is none."""
    n = x.size
    heading = np.full(n, np.nan)
    end_of = np.searchsorted(run, run, side="right")
    pending = np.arange(n)
    offset = 1
    # One vectorized pass per look-ahead offset; a point stays pending while the points
    # after it are within r, which is short since longer stays were collapsed as stops.
    while pending.size:
        ahead = pending + offset
        inside = ahead < end_of[pending]
        pending, ahead = pending[inside], ahead[inside]
        dx, dy = x[ahead] - x[pending], y[ahead] - y[pending]
        far = dx * dx + dy * dy >= r * r
        heading[pending[far]] = np.arctan2(dy[far], dx[far])
        pending = pending[~far]
        offset += 1
    return heading


def _turn(heading_in: float, heading_out: float) -> float:
    """Absolute change of direction in radians, in [0, pi]."""
    diff = abs(heading_out - heading_in) % (2 * math.pi)
    return 2 * math.pi - diff if diff > math.pi else diff


def _scan(
    x: np.ndarray,
    y: np.ndarray,
    run: np.ndarray,
    forced: np.ndarray,
    params: CharacteristicPointParams,
) -> np.ndarray:
    """Indices (into the collapsed arrays) extracted by the sequential rules 1, 3 and 4."""
    r2 = params.stop_radius_m**2
    max2 = params.max_distance_m**2
    min_turn = math.radians(params.min_angle_deg)
    heading = _look_ahead_heading(x, y, run, params.stop_radius_m)
    first = np.ones(x.size, dtype=bool)
    first[1:] = run[1:] != run[:-1]
    xs, ys, hs = x.tolist(), y.tolist(), heading.tolist()
    is_first, is_forced = first.tolist(), forced.tolist()
    chosen: list[int] = []
    last, j = -1, 0
    while j < len(xs):
        if is_first[j]:
            chosen.append(j)
            last, j = j, j + 1
            continue
        dx, dy = xs[j] - xs[last], ys[j] - ys[last]
        d2 = dx * dx + dy * dy
        if d2 > max2:
            if j - 1 != last:  # the previous point is the last one within max_distance
                chosen.append(j - 1)
                last = j - 1
                dx, dy = xs[j] - xs[last], ys[j] - ys[last]
                d2 = dx * dx + dy * dy
            if d2 > max2:  # a single step longer than max_distance
                chosen.append(j)
                last, j = j, j + 1
                continue
        if is_forced[j]:
            chosen.append(j)
            last, j = j, j + 1
            continue
        h = hs[j]
        if d2 >= r2 and h == h and _turn(math.atan2(dy, dx), h) >= min_turn:  # h == h: not NaN
            j = _sharpest(xs, ys, hs, is_forced, last, j, r2, max2)
            chosen.append(j)
            last, j = j, j + 1
            continue
        j += 1
    return np.asarray(chosen, dtype=np.int64)


def _sharpest(
    xs: list[float],
    ys: list[float],
    hs: list[float],
    is_forced: list[bool],
    last: int,
    j: int,
    r2: float,
    max2: float,
) -> int:
    """The point of largest direction change among j and the following points within r
    of j (not beyond a forced point, never farther than max_distance from ``last``)."""
    best, best_turn = j, -1.0
    m = j
    while m < len(xs) and (m == j or not is_forced[m]):
        if (xs[m] - xs[j]) ** 2 + (ys[m] - ys[j]) ** 2 >= r2:
            break  # left the corner
        dx, dy = xs[m] - xs[last], ys[m] - ys[last]
        d2 = dx * dx + dy * dy
        h = hs[m]
        if r2 <= d2 <= max2 and h == h:
            turn = _turn(math.atan2(dy, dx), h)
            if turn > best_turn:
                best, best_turn = m, turn
        m += 1
    return best
