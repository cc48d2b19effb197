"""Generate a deterministic synthetic city of commuters: raw GPS trajectories plus demographics.

A data owner uses this module to produce realistic raw movement data for demos, tests and
benchmarks of the anonymization pipeline.  The data is built so that the k-anonymity
problem is real: homes and work places are dense in the centre and sparse in the
periphery, everybody drives on the same street network, so central route fragments are
shared by many persons while peripheral routes are unique.

Routine Listings
----------------
:class:`CityConfig`
    All parameters of a city (validated on construction, bad values raise
    :class:`~anonymizers.errors.InputError`).
:func:`generate_city`
    The whole city in memory as a :class:`SyntheticCity` (two pandas DataFrames).
:func:`write_city`
    The same rows streamed to two CSV files in chunks of persons (bounded memory).

Notes
-----
**Geometry.**  Everything is computed in metres in a local tangent plane centred on
``(origin_lon, origin_lat)`` (x east, y north).  Only at the end are positions converted
to WGS84 with the equirectangular approximation ``lon = lon0 + x / (111320 cos(lat0))``,
``lat = lat0 + y / 110540``; longitudes are wrapped into [-180, 180).  This is accurate to
well below the GPS noise for city-sized extents, which is why ``radius_m`` is capped at
50 km and ``|origin_lat|`` must be below 80 degrees.  Output coordinates are rounded to
7 decimals (about 1 cm) so that the CSV files hold exactly the in-memory values.

**Road network.**  A square street grid with spacing ``block_m`` (streets at
``x = i * block_m`` and ``y = j * block_m``) clipped to the disc of radius ``radius_m``.
Every ``arterial_every``-th street (including the two axes) is an arterial, and a circular
ring road of radius ``ring_radius_m`` is reached via the arterials.  Road classes have
free speeds of 30 (residential), 50 (arterial) and 70 km/h (ring); every trip draws its
own lognormal speed factor per class (sigma 0.15), so equal routes take different times.

**Persons.**  Homes are drawn from a radially symmetric mixture centred on the origin
(35 % Rayleigh with sigma 0.12 R, 45 % with sigma 0.30 R, 20 % nearly uniform), work
places from a more central mixture (45 % central business district, sigma 0.07 R; 35 %
in five business districts at 0.25-0.6 R; 20 % dispersed, sigma 0.35 R), where R is
``radius_m``.  Each component is a Rayleigh distribution truncated so that it stays inside the city,
sampled by its exact inverse CDF, so no rejection loop is needed.  Places are snapped to
the nearest street intersection inside the city.  Demographics: age 18-85 from
``18 + 68 * Beta(2, 3)`` (mean about 45); sex F with probability 0.51; education
primary/secondary/bachelor/master/doctorate with shares 14/44/22/16/4 %, capped by the
minimum age at which a degree is plausible (22, 24, 27); yearly income lognormal
(sigma 0.4) around an education-specific base, times an experience curve that peaks
in the mid-40s and a pension factor 0.7 after 65, rounded to 100 EUR.

**Trips.**  On each of ``days`` days every person commutes home -> work in the morning
(habitual local departure time ~ N(07:45, 50 min) plus N(0, 10 min) daily jitter, kept
within 05:00-10:30) and work -> home in the evening (~ N(17:30, 60 min) plus jitter, kept
within 14:00-21:30 and at least one hour after arriving).  With a personal propensity
~ Beta(1.5, 2.8) (mean 0.35) a person makes an extra evening trip (~ N(19:45, 75 min), at
least 20 min after getting home) from home to one of three favourite points of
interest, chosen once per person from 60 city-wide POIs by a gravity model
(attractiveness * exp(-distance / 0.15 R)).  Local time is turned into UTC with the
solar offset ``round(origin_lon / 15)`` hours (no daylight saving).  Only the date of
``start`` is used: day ``d`` starts at its midnight.

**Routing.**  Five candidate routes are built for every trip and the fastest feasible
one is used: two plain Manhattan L-paths (x first or y first), two arterial paths (go to
the nearest arterial on the centre side of the origin, follow arterials, leave at the
nearest arterial on the centre side of the destination) and a ring path (arterial to the
ring, along the ring's shorter arc, arterial back).  Access arterials are always taken on
the centre side and L-paths are taken only when their corner lies inside the city, so
every route stays inside the disc (the disc is convex).

**Sampling.**  A trip of duration T yields ``ceil(T / sample_interval_s) + 1`` fixes at
``departure + floor(k * sample_interval_s)`` seconds; the last fix is at the destination.
Gaussian noise with standard deviation ``gps_noise_m`` is added to x and y.  Each trip is
one trajectory ``f"{user_id}_{day}_{trip}"`` (trip 0 morning, 1 evening, 2 extra; day
zero-padded) with ``user_id = f"p{number:06d}"`` (more digits when needed), so sorting
by ``traj_id`` is the generation order.

**Determinism and size.**  Persons are generated in blocks of about 1000 person-days;
block ``b`` uses ``numpy.random.default_rng([seed, 1, b])`` and the city-wide places
(districts, POIs) use ``default_rng([seed, 0, 0])``.  Output therefore does not depend on
the chunk size used for writing.  Instead of estimating points per person, blocks are
produced until ``target_points`` is spent and the trajectory that crosses the budget is
cut short (never below two fixes), so the output has exactly ``target_points`` fixes (or
one fewer) and, up to that cut trajectory, a city is a prefix of any larger city with the
same parameters.

**Not modelled.**  Weekends and holidays (every day is a working day), congestion,
stops at junctions, modes other than driving, correlated GPS errors and signal loss.

References
----------
.. [1] A. Monreale, G. Andrienko, N. Andrienko, F. Giannotti, D. Pedreschi,
   S. Rinzivillo, S. Wrobel, "Movement Data Anonymity through Generalization",
   Transactions on Data Privacy 3 (2010), 91-121 (the k-anonymity model this data
   is meant to exercise).
.. [2] J. P. Snyder, "Map Projections: A Working Manual", USGS Professional Paper
   1395 (1987), equirectangular projection.
.. [3] M. E. O'Neill, "PCG: A Family of Simple Fast Space-Efficient Statistically Good
   Algorithms for Random Number Generation", HMC-CS-2014-0905 (2014); numpy's default
   generator, seeded through ``numpy.random.SeedSequence``.

Examples
--------
>>> from anonymizers.synthetic import CityConfig, generate_city
>>> city = generate_city(CityConfig(seed=1, target_points=1_000))
>>> len(city.points), list(city.points.columns)
(1000, ['traj_id', 'user_id', 't', 'lon', 'lat'])
>>> city.points["traj_id"].iloc[0]
'p000000_0_0'
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

from anonymizers.errors import InputError

__all__ = ["CityConfig", "SyntheticCity", "generate_city", "write_city"]

# 100M: a city archive's scale; write_city streams it (generate_city holds it in memory).
_MIN_POINTS, _MAX_POINTS = 100, 100_000_000
_MAX_RADIUS_M = 50_000.0  # beyond this the equirectangular approximation drifts noticeably
_M_PER_DEG_LAT = 110_540.0
_M_PER_DEG_LON_AT_EQUATOR = 111_320.0
_DAY_S = 86_400
_HOUR_S = 3_600.0
_PERSON_DAYS_PER_BLOCK = 1000  # the unit of determinism; small enough to bound memory

_RESIDENTIAL, _ARTERIAL, _RING = 0, 1, 2
_SPEED_KMH = np.array([30.0, 50.0, 70.0])
_SPEED_SIGMA = 0.15

# (weight, sigma / radius) of the radially symmetric home mixture; 5.0 is nearly uniform.
_HOME_MIX = ((0.35, 0.12), (0.45, 0.30), (0.20, 5.0))
_CBD_SHARE, _DISTRICT_SHARE, _DISPERSED_SHARE = 0.45, 0.35, 0.20
_CBD_SIGMA, _DISTRICT_SIGMA, _DISPERSED_SIGMA = 0.07, 0.04, 0.35
_N_DISTRICTS, _N_POIS, _N_FAVOURITES = 5, 60, 3
_POI_DECAY = 0.15  # gravity-model distance scale as a fraction of the radius

_EDUCATION = ("primary", "secondary", "bachelor", "master", "doctorate")
_EDUCATION_SHARE = (0.14, 0.44, 0.22, 0.16, 0.04)
_EDUCATION_MIN_AGE = np.array([18, 18, 22, 24, 27])
_INCOME_BASE_EUR = np.array([11_000.0, 14_500.0, 18_500.0, 22_000.0, 27_000.0])

_POINT_COLUMNS = ("traj_id", "user_id", "t", "lon", "lat")
_PERSON_COLUMNS = ("user_id", "age", "sex", "education", "income")
_PERSON_SCHEMA = pa.schema(
    [
        ("user_id", pa.string()),
        ("age", pa.int64()),
        ("sex", pa.string()),
        ("education", pa.string()),
        ("income", pa.int64()),
    ]
)


@dataclass(frozen=True)
class CityConfig:
    """Parameters of a synthetic city; invalid values raise InputError on construction.

    Parameters
    ----------
    seed : int
        Non-negative seed; equal configs give identical cities.
    target_points : int
        Number of GPS fixes to produce (100 .. 100_000_000); met exactly or minus one.
        Above a few million, write the city with :func:`write_city`, which streams it.
    origin_lon, origin_lat : float
        Centre of the city in degrees; ``|origin_lat| < 80``.
    radius_m : float
        Extent of the city in metres (at least two blocks, at most 50 km).
    block_m : float
        Street grid spacing in metres.
    arterial_every : int
        Every n-th street is an arterial.
    ring_radius_m : float
        Radius of the ring road in metres, at most ``radius_m``.
    sample_interval_s : float
        GPS sampling interval in seconds (1 .. 3600).
    gps_noise_m : float
        Standard deviation of the gaussian GPS noise in metres.
    start : str
        ISO-8601 date or timestamp of the first day (UTC); only the date is used.
    days : int
        Number of consecutive days with trips (1 .. 366).

    Raises
    ------
    InputError
        If a value is of the wrong type or out of range; the message names the field.
    """

    seed: int = 0
    target_points: int = 100_000
    origin_lon: float = 11.2558
    origin_lat: float = 43.7696
    radius_m: float = 8000.0
    block_m: float = 250.0
    arterial_every: int = 4
    ring_radius_m: float = 5000.0
    sample_interval_s: float = 30.0
    gps_noise_m: float = 8.0
    start: str = "2026-03-02T00:00:00Z"
    days: int = 1

    def __post_init__(self) -> None:
        _validate(self)


@dataclass(frozen=True, eq=False)  # eq=False: comparing DataFrames with == is ambiguous
class SyntheticCity:
    """A generated city.

    Parameters
    ----------
    points : pandas.DataFrame
        ``traj_id`` (str), ``user_id`` (str), ``t`` (datetime64[ns, UTC]), ``lon``,
        ``lat`` (float64); sorted by ``traj_id``, ``t``; ``t`` strictly increasing per
        trajectory.
    persons : pandas.DataFrame
        ``user_id`` (str), ``age`` (int), ``sex`` ('F'/'M'), ``education`` (str),
        ``income`` (int, yearly EUR); one row per person with at least one trajectory.
    """

    points: pd.DataFrame
    persons: pd.DataFrame


# --------------------------------------------------------------------------- validation


def _require_int(value: object, name: str, low: int, high: int) -> None:
    # bool is an int subclass, but seed=True is certainly a mistake
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise InputError(f"CityConfig.{name} must be an integer, got {value!r}")
    if not low <= value <= high:
        raise InputError(f"CityConfig.{name} must be in [{low}, {high}], got {value}")


def _require_float(
    value: object, name: str, low: float, high: float, *, open_low: bool, open_high: bool = False
) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise InputError(f"CityConfig.{name} must be a number, got {value!r}")
    number = float(value)
    too_low = number <= low if open_low else number < low
    too_high = number >= high if open_high else number > high
    if not math.isfinite(number) or too_low or too_high:
        interval = f"{'(' if open_low else '['}{low:g}, {high:g}{')' if open_high else ']'}"
        raise InputError(f"CityConfig.{name} must be in {interval}, got {value!r}")


def _validate(cfg: CityConfig) -> None:
    _require_int(cfg.seed, "seed", 0, 2**63 - 1)
    _require_int(cfg.target_points, "target_points", _MIN_POINTS, _MAX_POINTS)
    _require_int(cfg.arterial_every, "arterial_every", 1, 1000)
    _require_int(cfg.days, "days", 1, 366)
    _require_float(cfg.origin_lon, "origin_lon", -180.0, 180.0, open_low=False)
    _require_float(cfg.origin_lat, "origin_lat", -80.0, 80.0, open_low=True, open_high=True)
    _require_float(cfg.radius_m, "radius_m", 0.0, _MAX_RADIUS_M, open_low=True)
    # a city needs at least a few streets; the upper bound is radius_m / 2
    _require_float(cfg.block_m, "block_m", 0.0, cfg.radius_m / 2, open_low=True)
    _require_float(cfg.ring_radius_m, "ring_radius_m", 0.0, cfg.radius_m, open_low=True)
    # whole-second timestamps stay strictly increasing only with intervals of >= 1 s
    _require_float(cfg.sample_interval_s, "sample_interval_s", 1.0, _HOUR_S, open_low=False)
    _require_float(cfg.gps_noise_m, "gps_noise_m", 0.0, 1000.0, open_low=False)
    _first_midnight_utc(cfg.start)


def _first_midnight_utc(start: str) -> int:
    """Seconds since the epoch of midnight UTC of the date in ``start``."""
    if not isinstance(start, str):
        raise InputError(f"CityConfig.start must be an ISO-8601 string, got {start!r}")
    try:
        stamp = pd.Timestamp(start)
    except (TypeError, ValueError) as exc:
        raise InputError(f"CityConfig.start must be an ISO-8601 date, got {start!r}") from exc
    if stamp is pd.NaT:
        raise InputError(f"CityConfig.start must be an ISO-8601 date, got {start!r}")
    stamp = stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")
    return int(stamp.normalize().value // 1_000_000_000)


# --------------------------------------------------------------------------- places


# (weights, centres, sigmas) of a mixture of Rayleigh blobs
_Mixture = tuple[np.ndarray, np.ndarray, np.ndarray]


class _City(NamedTuple):
    """City-wide places shared by every block (drawn once from the seed)."""

    districts: np.ndarray  # (k, 2) business district centres, metres
    pois: np.ndarray  # (p, 2) points of interest, snapped to intersections
    poi_weight: np.ndarray  # (p,) attractiveness


def _sample_disc(
    rng: np.random.Generator,
    n: int,
    mixture: _Mixture,
    radius: float,
) -> np.ndarray:
    """Draw n points from a mixture of truncated 2-D Rayleigh blobs inside the disc."""
    weights, centres, sigmas = mixture
    comp = rng.choice(len(weights), size=n, p=weights / weights.sum())
    centre, sigma = centres[comp], sigmas[comp]
    r_max = radius * 0.999 - np.hypot(centre[:, 0], centre[:, 1])
    # exact inverse CDF of a Rayleigh distribution truncated at r_max: no rejection loop
    u = rng.random(n) * -np.expm1(-(r_max**2) / (2 * sigma**2))
    r = sigma * np.sqrt(-2 * np.log1p(-u))
    theta = rng.uniform(0.0, 2 * np.pi, n)
    return centre + r[:, None] * np.column_stack([np.cos(theta), np.sin(theta)])


def _home_mixture(radius: float) -> _Mixture:
    weights = np.array([w for w, _ in _HOME_MIX])
    sigmas = np.array([s for _, s in _HOME_MIX]) * radius
    return weights, np.zeros((len(_HOME_MIX), 2)), sigmas


def _work_mixture(radius: float, districts: np.ndarray) -> _Mixture:
    k = len(districts)
    weights = np.array([_CBD_SHARE, *([_DISTRICT_SHARE / k] * k), _DISPERSED_SHARE])
    centres = np.vstack([np.zeros((1, 2)), districts, np.zeros((1, 2))])
    sigmas = np.array([_CBD_SIGMA, *([_DISTRICT_SIGMA] * k), _DISPERSED_SIGMA]) * radius
    return weights, centres, sigmas


def _snap(points: np.ndarray, cfg: CityConfig) -> np.ndarray:
    """Nearest street intersection; rounding toward the centre where that leaves the city."""
    node = np.rint(points / cfg.block_m) * cfg.block_m
    outside = np.hypot(node[:, 0], node[:, 1]) > cfg.radius_m
    # truncation shrinks both coordinates, so the node is no farther out than the point
    node[outside] = np.trunc(points[outside] / cfg.block_m) * cfg.block_m
    return node


def _build_city(cfg: CityConfig) -> _City:
    rng = np.random.default_rng([cfg.seed, 0, 0])
    angle = rng.uniform(0.0, 2 * np.pi, _N_DISTRICTS)
    dist = rng.uniform(0.25, 0.6, _N_DISTRICTS) * cfg.radius_m
    districts = dist[:, None] * np.column_stack([np.cos(angle), np.sin(angle)])
    # shops and gyms follow where people live
    pois = _snap(_sample_disc(rng, _N_POIS, _home_mixture(cfg.radius_m), cfg.radius_m), cfg)
    return _City(districts, pois, rng.lognormal(0.0, 0.8, _N_POIS))


# --------------------------------------------------------------------------- persons


class _People(NamedTuple):
    """One block of persons (index i of every array is the same person)."""

    ids: np.ndarray  # global person numbers
    home: np.ndarray  # (n, 2)
    work: np.ndarray  # (n, 2)
    favourites: np.ndarray  # (n, 3, 2) favourite POIs
    age: np.ndarray
    female: np.ndarray
    education: np.ndarray  # index into _EDUCATION
    income: np.ndarray
    morning_s: np.ndarray  # habitual local departure times, seconds after midnight
    evening_s: np.ndarray
    extra_propensity: np.ndarray


def _demographics(
    rng: np.random.Generator, n: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    age = 18 + np.floor(rng.beta(2.0, 3.0, n) * 68).astype(np.int64)
    female = rng.random(n) < 0.51
    education = rng.choice(len(_EDUCATION), size=n, p=_EDUCATION_SHARE)
    # a 19-year-old with a doctorate would be an implausible (and re-identifying) outlier
    highest = (age[:, None] >= _EDUCATION_MIN_AGE[None, :]).sum(axis=1) - 1
    education = np.minimum(education, highest)
    experience = np.minimum(age - 18, 47).astype(np.float64)
    curve = 0.045 * experience - 0.0008 * experience**2 + np.where(age > 65, np.log(0.7), 0.0)
    income = _INCOME_BASE_EUR[education] * np.exp(curve + rng.normal(0.0, 0.4, n))
    return age, female, education, (np.round(income / 100) * 100).astype(np.int64)


def _favourite_pois(
    rng: np.random.Generator, home: np.ndarray, city: _City, radius: float
) -> np.ndarray:
    """(n, 3, 2) POIs per person, drawn with a gravity model around the home."""
    dist = np.hypot(*(home[:, None, :] - city.pois[None, :, :]).transpose(2, 0, 1))
    weight = city.poi_weight[None, :] * np.exp(-dist / (_POI_DECAY * radius))
    cdf = np.cumsum(weight, axis=1)
    u = rng.random((len(home), _N_FAVOURITES, 1)) * cdf[:, -1, None, None]
    pick = np.minimum((cdf[:, None, :] < u).sum(axis=2), _N_POIS - 1)
    return city.pois[pick]


def _make_people(
    rng: np.random.Generator, first_id: int, n: int, cfg: CityConfig, city: _City
) -> _People:
    radius = cfg.radius_m
    home = _snap(_sample_disc(rng, n, _home_mixture(radius), radius), cfg)
    work = _snap(_sample_disc(rng, n, _work_mixture(radius, city.districts), radius), cfg)
    favourites = _favourite_pois(rng, home, city, radius)
    age, female, education, income = _demographics(rng, n)
    morning = rng.normal(7.75 * _HOUR_S, 50 * 60, n)
    evening = rng.normal(17.5 * _HOUR_S, 60 * 60, n)
    propensity = rng.beta(1.5, 2.8, n)
    ids = np.arange(first_id, first_id + n, dtype=np.int64)
    return _People(
        ids, home, work, favourites, age, female, education, income, morning, evening, propensity
    )


# --------------------------------------------------------------------------- routing


class _Routes(NamedTuple):
    """Routes of m trips, each padded to five legs (zero-length legs are harmless)."""

    start: np.ndarray  # (m, 5, 2) leg start points
    end: np.ndarray  # (m, 5, 2) leg end points
    road: np.ndarray  # (m, 5) road class of each leg
    arc: np.ndarray  # (m,) leg 2 is an arc of the ring road
    phi0: np.ndarray  # (m,) ring angle where the arc starts
    dphi: np.ndarray  # (m,) signed arc angle (shorter way round)


def _road_class(line: np.ndarray, cfg: CityConfig) -> np.ndarray:
    """Class of the street that runs along grid coordinate ``line`` (x or y)."""
    index = np.rint(line / cfg.block_m).astype(np.int64)
    return np.where(index % cfg.arterial_every == 0, _ARTERIAL, _RESIDENTIAL)


def _centre_side_arterial(coord: np.ndarray, cfg: CityConfig) -> np.ndarray:
    # toward the centre, so the route never leaves the (convex) city disc
    spacing = cfg.block_m * cfg.arterial_every
    return np.trunc(coord / spacing) * spacing


def _grid_route(
    s: np.ndarray, d: np.ndarray, ys: np.ndarray, xd: np.ndarray, cfg: CityConfig
) -> _Routes:
    """S -> (sx, ys) -> (xd, ys) -> (xd, dy) -> D along the lines x=sx, y=ys, x=xd, y=dy."""
    m = len(s)
    corners = [
        s,
        np.column_stack([s[:, 0], ys]),
        np.column_stack([xd, ys]),
        np.column_stack([xd, d[:, 1]]),
        d,
        d,
    ]
    lines = np.column_stack([s[:, 0], ys, xd, d[:, 1], d[:, 1]])
    zeros = np.zeros(m)
    return _Routes(
        np.stack(corners[:-1], axis=1),
        np.stack(corners[1:], axis=1),
        _road_class(lines, cfg),
        np.zeros(m, dtype=bool),
        zeros,
        zeros,
    )


def _swapped(route: _Routes) -> _Routes:
    """Mirror a route computed in (y, x) coordinates back to (x, y)."""
    return route._replace(start=route.start[..., ::-1], end=route.end[..., ::-1])


def _grid_candidates(s: np.ndarray, d: np.ndarray, cfg: CityConfig) -> list[_Routes]:
    """Direct L-paths and arterial paths, each x-first and y-first (in this order)."""
    routes = []
    for via_arterials in (False, True):
        for y_first in (False, True):
            # a y-first route is an x-first route in mirrored (y, x) coordinates
            a, b = (s[:, ::-1], d[:, ::-1]) if y_first else (s, d)
            ys, xd = a[:, 1], b[:, 0]
            if via_arterials:
                ys, xd = _centre_side_arterial(ys, cfg), _centre_side_arterial(xd, cfg)
            route = _grid_route(a, b, ys, xd, cfg)
            routes.append(_swapped(route) if y_first else route)
    return routes


def _ring_access(p: np.ndarray, cfg: CityConfig) -> tuple[np.ndarray, ...]:
    """Corner onto the access arterial, the ring junction, and the two street lines used.

    The access arterial runs parallel to the point's major axis at most R_ring / sqrt(2)
    from it, so it always meets the ring, and it is on the centre side of the point.
    """
    major_x = np.abs(p[:, 0]) >= np.abs(p[:, 1])
    u = np.where(major_x, p[:, 0], p[:, 1])
    v = np.where(major_x, p[:, 1], p[:, 0])
    limit = cfg.ring_radius_m / math.sqrt(2)
    v_line = _centre_side_arterial(np.clip(v, -limit, limit), cfg)
    u_ring = np.where(u >= 0, 1.0, -1.0) * np.sqrt(cfg.ring_radius_m**2 - v_line**2)

    def to_xy(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.column_stack([np.where(major_x, a, b), np.where(major_x, b, a)])

    return to_xy(u, v_line), to_xy(u_ring, v_line), u, v_line


def _ring_route(s: np.ndarray, d: np.ndarray, cfg: CityConfig) -> _Routes:
    corner_s, ring_s, line_s, art_s = _ring_access(s, cfg)
    corner_d, ring_d, line_d, art_d = _ring_access(d, cfg)
    start = np.stack([s, corner_s, ring_s, ring_d, corner_d], axis=1)
    end = np.stack([corner_s, ring_s, ring_d, corner_d, d], axis=1)
    road = _road_class(np.column_stack([line_s, art_s, art_s, art_d, line_d]), cfg)
    road[:, 2] = _RING
    phi0 = np.arctan2(ring_s[:, 1], ring_s[:, 0])
    dphi = np.arctan2(ring_d[:, 1], ring_d[:, 0]) - phi0
    dphi = (dphi + np.pi) % (2 * np.pi) - np.pi  # shorter way round
    return _Routes(start, end, road, np.ones(len(s), dtype=bool), phi0, dphi)


def _leg_durations(route: _Routes, speeds: np.ndarray, cfg: CityConfig) -> np.ndarray:
    """(m, 5) seconds per leg at the trip's speed for each leg's road class."""
    length = np.hypot(*(route.end - route.start).transpose(2, 0, 1))
    length[:, 2] = np.where(route.arc, cfg.ring_radius_m * np.abs(route.dphi), length[:, 2])
    return length / np.take_along_axis(speeds, route.road, axis=1)


def _fastest_routes(s: np.ndarray, d: np.ndarray, speeds: np.ndarray, cfg: CityConfig) -> _Routes:
    """The fastest candidate route per trip among those that stay inside the city."""
    candidates = [*_grid_candidates(s, d, cfg), _ring_route(s, d, cfg)]
    times = np.column_stack([_leg_durations(c, speeds, cfg).sum(axis=1) for c in candidates])
    limit = cfg.radius_m * (1 + 1e-9)
    x_first_ok = np.hypot(d[:, 0], s[:, 1]) <= limit  # corner (dx, sy) inside the city
    y_first_ok = np.hypot(s[:, 0], d[:, 1]) <= limit
    feasible = np.column_stack(
        [x_first_ok, y_first_ok, x_first_ok, y_first_ok, np.ones_like(x_first_ok)]
    )
    choice = np.argmin(np.where(feasible, times, np.inf), axis=1)
    rows = np.arange(len(s))
    return _Routes(
        *(np.stack(field, axis=1)[rows, choice] for field in zip(*candidates, strict=True))
    )


# --------------------------------------------------------------------------- trips


class _Trips(NamedTuple):
    """The trips of one block, in (person, day, kind) order."""

    person: np.ndarray  # index into the block's _People
    day: np.ndarray
    kind: np.ndarray  # 0 morning commute, 1 evening commute, 2 extra trip
    origin: np.ndarray  # (m, 2)
    dest: np.ndarray  # (m, 2)
    present: np.ndarray  # (n * days * 3,) which slots of the full grid are real trips


def _separate(origin: np.ndarray, dest: np.ndarray, cfg: CityConfig) -> np.ndarray:
    """Move a destination that equals its origin one block toward the centre."""
    same = np.all(origin == dest, axis=1)
    moved = dest[same].copy()
    on_x = moved[:, 0] != 0
    moved[on_x, 0] -= np.sign(moved[on_x, 0]) * cfg.block_m
    on_y = ~on_x & (moved[:, 1] != 0)
    moved[on_y, 1] -= np.sign(moved[on_y, 1]) * cfg.block_m
    moved[~on_x & ~on_y, 0] = cfg.block_m  # the centre itself: radius >= 2 blocks
    out = dest.copy()
    out[same] = moved
    return out


def _make_trips(rng: np.random.Generator, people: _People, cfg: CityConfig) -> _Trips:
    n, days = len(people.ids), cfg.days
    extra = rng.random((n, days)) < people.extra_propensity[:, None]
    pick = rng.integers(0, _N_FAVOURITES, (n, days))
    poi = people.favourites[np.arange(n)[:, None], pick]  # (n, days, 2)
    home = np.broadcast_to(people.home[:, None, :], (n, days, 2))
    work = np.broadcast_to(people.work[:, None, :], (n, days, 2))
    origin = np.stack([home, work, home], axis=2).reshape(-1, 2)
    dest = np.stack([work, home, poi], axis=2).reshape(-1, 2)
    present = np.stack([np.ones_like(extra), np.ones_like(extra), extra], axis=2).ravel()
    grid = np.indices((n, days, 3)).reshape(3, -1)[:, present]
    origin = origin[present]
    return _Trips(grid[0], grid[1], grid[2], origin, _separate(origin, dest[present], cfg), present)


def _departures(
    rng: np.random.Generator, people: _People, trips: _Trips, total_s: np.ndarray, cfg: CityConfig
) -> np.ndarray:
    """UTC departure second of every trip; each trip starts after the previous one ended."""
    n, days = len(people.ids), cfg.days
    flat = np.zeros(n * days * 3)
    flat[trips.present] = total_s
    duration = flat.reshape(n, days, 3)
    morning = np.clip(
        people.morning_s[:, None] + rng.normal(0, 600, (n, days)), 5 * _HOUR_S, 10.5 * _HOUR_S
    )
    evening = np.clip(
        people.evening_s[:, None] + rng.normal(0, 600, (n, days)), 14 * _HOUR_S, 21.5 * _HOUR_S
    )
    extra = np.clip(rng.normal(19.75 * _HOUR_S, 75 * 60, (n, days)), 16 * _HOUR_S, 23 * _HOUR_S)
    utc_offset_h = round(cfg.origin_lon / 15)  # solar time zone, no daylight saving
    midnight = _first_midnight_utc(cfg.start) + np.arange(days) * _DAY_S - utc_offset_h * _HOUR_S
    dep0 = midnight + morning
    dep1 = np.maximum(midnight + evening, dep0 + duration[..., 0] + _HOUR_S)
    dep2 = np.maximum(midnight + extra, dep1 + duration[..., 1] + 20 * 60)
    return np.floor(np.stack([dep0, dep1, dep2], axis=2).ravel()[trips.present]).astype(np.int64)


# --------------------------------------------------------------------------- sampling


def _sample_fixes(
    routes: _Routes, durations: np.ndarray, cfg: CityConfig
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Trip index, sample number k and noise-free position of every fix, in trip order."""
    end_t = np.cumsum(durations, axis=1)
    total = end_t[:, -1]
    npts = np.ceil(total / cfg.sample_interval_s).astype(np.int64) + 1
    trip = np.repeat(np.arange(len(total)), npts)
    k = np.arange(trip.size) - np.repeat(np.cumsum(npts) - npts, npts)
    # the last fix is taken at or after arrival, i.e. at the destination
    elapsed = np.minimum(k * cfg.sample_interval_s, total[trip])
    leg = (elapsed[:, None] > end_t[trip, :-1]).sum(axis=1)
    leg_s = durations[trip, leg]
    into = elapsed - (end_t[trip, leg] - leg_s)
    frac = np.divide(into, leg_s, out=np.ones_like(leg_s), where=leg_s > 0)
    return trip, k, _position(routes, trip, leg, np.clip(frac, 0.0, 1.0), cfg)


def _position(
    routes: _Routes, trip: np.ndarray, leg: np.ndarray, frac: np.ndarray, cfg: CityConfig
) -> np.ndarray:
    start = routes.start[trip, leg]
    xy = start + frac[:, None] * (routes.end[trip, leg] - start)
    on_arc = routes.arc[trip] & (leg == 2)
    arc_trip = trip[on_arc]
    phi = routes.phi0[arc_trip] + frac[on_arc] * routes.dphi[arc_trip]
    xy[on_arc] = cfg.ring_radius_m * np.column_stack([np.cos(phi), np.sin(phi)])
    return xy


def _round7(values: np.ndarray) -> np.ndarray:
    # d / 1e7 is the double nearest to the 7-decimal text, so CSV round trips are exact
    return np.rint(values * 1e7) / 1e7


def _to_lonlat(xy: np.ndarray, cfg: CityConfig) -> tuple[np.ndarray, np.ndarray]:
    """Equirectangular approximation around the origin (see the module Notes)."""
    m_per_deg_lon = _M_PER_DEG_LON_AT_EQUATOR * math.cos(math.radians(cfg.origin_lat))
    lon = (cfg.origin_lon + xy[:, 0] / m_per_deg_lon + 180.0) % 360.0 - 180.0
    lat = cfg.origin_lat + xy[:, 1] / _M_PER_DEG_LAT
    return _round7(lon), _round7(lat)


# --------------------------------------------------------------------------- blocks


class _Block(NamedTuple):
    """Persons, trips and fixes of one or more consecutive blocks."""

    person_id: np.ndarray
    age: np.ndarray
    female: np.ndarray
    education: np.ndarray
    income: np.ndarray
    trip_person: np.ndarray  # global person number of every trip
    trip_day: np.ndarray
    trip_kind: np.ndarray
    trip_npts: np.ndarray
    t: np.ndarray  # seconds since the epoch, UTC
    lon: np.ndarray
    lat: np.ndarray


def _block_persons(cfg: CityConfig) -> int:
    return max(1, _PERSON_DAYS_PER_BLOCK // cfg.days)


def _make_block(cfg: CityConfig, city: _City, index: int) -> _Block:
    size = _block_persons(cfg)
    # one independent stream per block: output does not depend on how blocks are grouped
    rng = np.random.default_rng([cfg.seed, 1, index])
    people = _make_people(rng, index * size, size, cfg, city)
    trips = _make_trips(rng, people, cfg)
    speeds = _SPEED_KMH / 3.6 * rng.lognormal(0.0, _SPEED_SIGMA, (len(trips.person), 3))
    routes = _fastest_routes(trips.origin, trips.dest, speeds, cfg)
    durations = _leg_durations(routes, speeds, cfg)
    departure = _departures(rng, people, trips, durations.sum(axis=1), cfg)
    trip, k, xy = _sample_fixes(routes, durations, cfg)
    xy += rng.normal(0.0, cfg.gps_noise_m, xy.shape)
    lon, lat = _to_lonlat(xy, cfg)
    t = departure[trip] + np.floor(k * cfg.sample_interval_s).astype(np.int64)
    npts = np.bincount(trip, minlength=len(trips.person))
    return _Block(
        people.ids, people.age, people.female, people.education, people.income,
        people.ids[trips.person], trips.day, trips.kind, npts, t, lon, lat,
    )  # fmt: skip


def _truncate(block: _Block, budget: int) -> _Block:
    """Keep the first ``budget`` fixes, cutting the crossing trajectory (>= 2 fixes)."""
    ends = np.cumsum(block.trip_npts)
    if ends[-1] <= budget:
        return block
    full = int(np.searchsorted(ends, budget, side="right"))
    rest = budget - (int(ends[full - 1]) if full else 0)
    npts = block.trip_npts[:full]
    if rest >= 2:  # a single fix is not a trajectory
        npts = np.append(npts, rest)
    n_trips, n_points = len(npts), int(npts.sum())
    n_persons = int(block.trip_person[n_trips - 1] - block.person_id[0]) + 1 if n_trips else 0
    return _Block._make(
        [
            *(column[:n_persons] for column in block[:5]),
            *(column[:n_trips] for column in block[5:8]),
            npts,
            *(column[:n_points] for column in block[9:]),
        ]
    )


def _iter_blocks(cfg: CityConfig) -> Iterator[_Block]:
    """Blocks in order until target_points fixes have been produced."""
    city = _build_city(cfg)
    budget = cfg.target_points
    index = 0
    while budget >= 2:
        block = _truncate(_make_block(cfg, city, index), budget)
        if len(block.trip_npts) == 0:
            return
        budget -= len(block.t)
        index += 1
        yield block


def _concat(blocks: list[_Block]) -> _Block:
    return _Block(*(np.concatenate(columns) for columns in zip(*blocks, strict=True)))


def _iter_chunks(cfg: CityConfig, chunk_persons: int) -> Iterator[_Block]:
    blocks_per_chunk = max(1, math.ceil(chunk_persons / _block_persons(cfg)))
    pending: list[_Block] = []
    for block in _iter_blocks(cfg):
        pending.append(block)
        if len(pending) == blocks_per_chunk:
            yield _concat(pending)
            pending = []
    if pending:
        yield _concat(pending)


# --------------------------------------------------------------------------- tables


def _user_ids(person_id: np.ndarray, cfg: CityConfig) -> pa.Array:
    # a person has >= 1 trajectory of >= 2 fixes, so target_points // 2 bounds the count
    width = max(6, len(str(cfg.target_points // 2)))
    digits = pc.utf8_lpad(pc.cast(pa.array(person_id), pa.string()), width=width, padding="0")
    return pc.binary_join_element_wise("p", digits, "")


def _id_columns(block: _Block, cfg: CityConfig) -> tuple[pa.Array, pa.Array]:
    """traj_id and user_id of every fix."""
    users = _user_ids(block.trip_person, cfg)
    day = pc.utf8_lpad(
        pc.cast(pa.array(block.trip_day), pa.string()), width=len(str(cfg.days - 1)), padding="0"
    )
    traj = pc.binary_join_element_wise(
        users, day, pc.cast(pa.array(block.trip_kind), pa.string()), "_"
    )
    of_fix = pa.array(np.repeat(np.arange(len(block.trip_npts)), block.trip_npts))
    return pc.take(traj, of_fix), pc.take(users, of_fix)


def _points_table(block: _Block, cfg: CityConfig) -> pa.Table:
    traj, users = _id_columns(block, cfg)
    t = pa.array(block.t * 1_000_000_000, type=pa.timestamp("ns", tz="UTC"))
    return pa.table(dict(zip(_POINT_COLUMNS, [traj, users, t, block.lon, block.lat], strict=True)))


def _persons_table(block: _Block, cfg: CityConfig) -> pa.Table:
    columns = [
        _user_ids(block.person_id, cfg),
        pa.array(block.age),
        pc.if_else(pa.array(block.female), "F", "M"),
        pc.take(pa.array(_EDUCATION), pa.array(block.education)),
        pa.array(block.income),
    ]
    return pa.table(dict(zip(_PERSON_COLUMNS, columns, strict=True)))


def _fixed7(values: np.ndarray) -> pa.Array:
    """Text with exactly 7 decimals, built with Arrow kernels instead of a Python loop."""
    scaled = np.rint(values * 1e7).astype(np.int64)
    digits = pc.utf8_lpad(pc.cast(pa.array(np.abs(scaled)), pa.string()), width=8, padding="0")
    text = pc.utf8_replace_slice(digits, -7, -7, ".")  # insert the decimal point
    negative = scaled < 0
    if not negative.any():
        return text
    return pc.if_else(pa.array(negative), pc.binary_join_element_wise("-", text, ""), text)


def _points_csv_table(block: _Block, cfg: CityConfig) -> pa.Table:
    traj, users = _id_columns(block, cfg)
    # casting to text is ~25x faster than strftime; it gives "2026-03-02 07:31:05"
    text = pc.cast(pa.array(block.t, type=pa.timestamp("s")), pa.string())
    t = pc.binary_join_element_wise(pc.utf8_replace_slice(text, 10, 11, "T"), "Z", "")
    columns = [traj, users, t, _fixed7(block.lon), _fixed7(block.lat)]
    return pa.table(dict(zip(_POINT_COLUMNS, columns, strict=True)))


# --------------------------------------------------------------------------- public API


def generate_city(config: CityConfig) -> SyntheticCity:
    """Generate the whole city in memory.

    Parameters
    ----------
    config : CityConfig
        City parameters; the same config always gives the same city.

    Returns
    -------
    SyntheticCity
        The GPS fixes and the persons who made them (same rows as :func:`write_city`).

    Notes
    -----
    Holds everything in memory (about 1.4 GB at 10 million fixes); use
    :func:`write_city` for large cities.
    """
    block = _concat(list(_iter_blocks(config)))
    points = _points_table(block, config).to_pandas()
    persons = _persons_table(block, config).to_pandas()
    return SyntheticCity(points=points, persons=persons)


def _check_output(path: Path) -> None:
    if not path.parent.is_dir():
        raise InputError(f"cannot write {path}: directory {path.parent} does not exist")


def write_city(
    config: CityConfig, points_csv: Path, persons_csv: Path, chunk_persons: int = 20_000
) -> tuple[int, int]:
    """Stream the city to two CSV files, ``chunk_persons`` persons at a time.

    Parameters
    ----------
    config : CityConfig
        City parameters; the rows equal those of ``generate_city(config)``.
    points_csv, persons_csv : Path
        Output files (``traj_id,user_id,t,lon,lat`` and
        ``user_id,age,sex,education,income``); replaced atomically when complete.
    chunk_persons : int
        Persons generated and written together; bounds memory, not the result.

    Returns
    -------
    tuple of int
        ``(n_points, n_persons)`` written.

    Raises
    ------
    InputError
        If ``chunk_persons`` is not a positive integer or an output directory is missing.
    """
    if isinstance(chunk_persons, bool) or not isinstance(chunk_persons, int) or chunk_persons < 1:
        raise InputError(f"chunk_persons must be a positive integer, got {chunk_persons!r}")
    targets = (Path(points_csv), Path(persons_csv))
    for target in targets:
        _check_output(target)
    partials = [target.with_name(target.name + ".partial") for target in targets]
    try:
        counts = _write_partials(config, partials, chunk_persons)
        for partial, target in zip(partials, targets, strict=True):
            os.replace(partial, target)
    finally:
        for partial in partials:
            partial.unlink(missing_ok=True)
    return counts


def _write_partials(config: CityConfig, paths: list[Path], chunk_persons: int) -> tuple[int, int]:
    options = pa_csv.WriteOptions(quoting_style="none", quoting_header="none")
    point_schema = pa.schema([(name, pa.string()) for name in _POINT_COLUMNS])
    n_points = n_persons = 0
    with (
        pa_csv.CSVWriter(str(paths[0]), point_schema, write_options=options) as point_writer,
        pa_csv.CSVWriter(str(paths[1]), _PERSON_SCHEMA, write_options=options) as person_writer,
    ):
        for chunk in _iter_chunks(config, chunk_persons):
            point_writer.write_table(_points_csv_table(chunk, config))
            person_writer.write_table(_persons_table(chunk, config))
            n_points += len(chunk.t)
            n_persons += len(chunk.person_id)
    return n_points, n_persons
