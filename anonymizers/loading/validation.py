"""Validate raw points before they reach the database: reject the file, or drop rows and count them.

The decision per case (documented in the README, tested in tests/test_loading.py):

=========================================  ===========  ==========================================
case                                       decision     why
=========================================  ===========  ==========================================
missing or unexpected columns              reject file  the file is not in the format we think
empty file / no data row                   reject file  nothing to release; likely a wrong path
empty traj_id or user_id                   reject file  a row we cannot attribute is a broken export
traj_id shared by several user_ids         reject file  a trajectory belongs to exactly one person
unparseable timestamp                      reject file  a wrong format would drop everything
timestamps not increasing in a trajectory  reject file  (or --sort) out of order = broken export
empty / NaN / non-numeric coordinate       drop rows    GPS noise: a fix without a position
longitude / latitude out of range          drop rows    GPS noise (T-Drive has a longitude of 195)
(0, 0) "null island"                       drop rows    receivers report 0,0 when they have no fix
duplicate (traj_id, t), same position      drop rows    repeated transmission of one fix
duplicate (traj_id, t), other position     drop rows    two positions at one instant: keep the first
nothing left after dropping                reject file  an all-noise file is not a dataset
=========================================  ===========  ==========================================

Dropped rows are counted per reason in the load report, with the first line numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from anonymizers.errors import InputError

__all__ = ["POINT_COLUMNS", "ValidatedPoints", "check_columns", "validate_points"]

POINT_COLUMNS = ("traj_id", "user_id", "t", "lon", "lat")
EXAMPLES = 5  # line numbers quoted per problem


@dataclass
class ValidatedPoints:
    """The rows to load (``keep`` mask over the input, in load order) and what was dropped."""

    order: np.ndarray  # row positions of the input, in the order to load (sorted when asked)
    timestamps: pd.Series  # parsed UTC timestamps of the kept rows, in load order
    lon: np.ndarray
    lat: np.ndarray
    dropped: dict[str, int] = field(default_factory=dict)
    examples: dict[str, list[int]] = field(default_factory=dict)


def check_columns(found: list[str], source: str) -> None:
    """Reject a file whose columns are not exactly traj_id,user_id,t,lon,lat (any order)."""
    missing = [c for c in POINT_COLUMNS if c not in found]
    unexpected = [c for c in found if c not in POINT_COLUMNS]
    repeated = sorted({c for c in found if c in POINT_COLUMNS and found.count(c) > 1})
    problems = [f"{what} {', '.join(names)}" for what, names in
                (("missing", missing), ("unexpected", unexpected), ("repeated", repeated))
                if names]
    if problems:
        raise InputError(
            f"{source}: columns must be {','.join(POINT_COLUMNS)}; {'; '.join(problems)}. "
            "Rename or remove columns so the header matches."
        )


def _lines(positions: np.ndarray, line_offset: int) -> list[int]:
    return [int(p) + line_offset for p in positions[:EXAMPLES]]


def _reject(source: str, what: str, positions: np.ndarray, line_offset: int, fix: str) -> None:
    label = "line" if line_offset == 2 else "row"
    raise InputError(
        f"{source}: {len(positions)} row(s) with {what} "
        f"({label}s {', '.join(map(str, _lines(positions, line_offset)))}"
        f"{', ...' if len(positions) > EXAMPLES else ''}). {fix}"
    )


def _check_identifiers(frame: pd.DataFrame, source: str, line_offset: int) -> np.ndarray:
    """Reject empty ids and shared trajectories; returns integer codes of traj_id."""
    for column in ("traj_id", "user_id"):
        values = frame[column]
        empty = np.flatnonzero((values.isna() | (values.str.strip() == "")).to_numpy())
        if len(empty):
            _reject(source, f"an empty {column}", empty, line_offset,
                    f"Every row needs a {column}; fix or remove those rows.")
    # sort=True: codes follow the ids' text order, so --sort orders rows by traj_id, t.
    traj_codes, traj_names = pd.factorize(frame["traj_id"], sort=True)
    user_codes, _ = pd.factorize(frame["user_id"])
    # Distinct (traj, user) pairs; a trajectory in more than one pair has several owners.
    pairs = np.unique(traj_codes.astype(np.int64) * (user_codes.max() + 1) + user_codes)
    owners = np.bincount(pairs // (user_codes.max() + 1), minlength=len(traj_names))
    shared = np.flatnonzero(owners > 1)
    if len(shared):
        positions = np.flatnonzero(traj_codes == shared[0])
        _reject(source, f"traj_id {traj_names[shared[0]]!r} under several user_ids "
                f"({len(shared)} such trajectories)", positions, line_offset,
                "A trajectory belongs to one person: give each person's trips their own traj_id.")
    return traj_codes


def _parse_timestamps(raw: pd.Series, source: str, line_offset: int) -> pd.Series:
    if pd.api.types.is_datetime64_any_dtype(raw):
        parsed = pd.to_datetime(raw, utc=True)
    else:
        parsed = pd.to_datetime(raw, format="ISO8601", utc=True, errors="coerce")
    bad = np.flatnonzero(parsed.isna().to_numpy())
    if len(bad):
        _reject(source, "an unparseable timestamp in column t", bad, line_offset,
                "Use ISO-8601, e.g. 2008-02-02T07:36:08Z (no offset means UTC).")
    # timestamptz keeps microseconds: truncate here, so that the duplicate and order checks
    # judge exactly the values that are stored (Arrow refuses to cast away nanoseconds).
    return parsed.dt.floor("us")


def _check_order(traj: np.ndarray, ts: np.ndarray, positions: np.ndarray, source: str,
                 line_offset: int) -> np.ndarray:
    """Rows of a trajectory must be contiguous and never earlier than the previous one.

    ``traj`` holds integer codes. Returns, per row, whether it continues the previous
    row's trajectory (the duplicate check relies on contiguity: repeats are adjacent).
    """
    same = np.r_[False, traj[1:] == traj[:-1]]
    if int((~same).sum()) != len(np.unique(traj)):
        seen = np.zeros(traj.max() + 1, dtype=bool)
        starts = np.flatnonzero(~same)
        again = [row for row in starts if seen[traj[row]] or seen.__setitem__(traj[row], True)]
        _reject(source, "a traj_id whose rows are not contiguous", positions[again],
                line_offset, "Sort the file by traj_id, t, or load with --sort.")
    backwards = same & np.r_[False, ts[1:] < ts[:-1]]
    if backwards.any():
        _reject(source, "a timestamp earlier than the previous one of its trajectory",
                positions[backwards], line_offset,
                "Sort the file by traj_id, t, or load with --sort.")
    return same


def _coordinate(values: pd.Series) -> np.ndarray:
    """Numbers from text; anything non-numeric becomes NaN (and is dropped as noise)."""
    if pd.api.types.is_float_dtype(values):
        return values.to_numpy(dtype=float)
    try:  # Arrow's cast is fast but all-or-nothing; fall back to pandas to find the bad ones
        return pc.cast(pa.array(values, type=pa.string()), pa.float64()).to_numpy(
            zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)


def _nanoseconds(ts: pd.Series) -> np.ndarray:
    """UTC epoch nanoseconds: comparing int64 is ~100x faster than tz-aware Timestamps."""
    return ts.astype("datetime64[ns, UTC]").array.asi8


def _coordinate_problems(lon: np.ndarray, lat: np.ndarray) -> dict[str, np.ndarray]:
    missing = np.isnan(lon) | np.isnan(lat)
    out_of_range = ~missing & ((np.abs(lon) > 180) | (np.abs(lat) > 90))
    null_island = ~missing & (lon == 0) & (lat == 0)
    return {
        "empty_or_non_numeric_coordinate": missing,
        "coordinate_out_of_range": out_of_range,
        "null_island_0_0": null_island,
    }


def _duplicate_problems(same: np.ndarray, ts: np.ndarray, lon: np.ndarray, lat: np.ndarray,
                        rows: np.ndarray, n: int) -> dict[str, np.ndarray]:
    """Repeated (traj_id, t) among the surviving ``rows`` (contiguous, so repeats are adjacent).

    A repeat is compared with the first fix of its instant, which is the one kept.
    """
    repeat = same & np.r_[False, ts[1:] == ts[:-1]]
    first = np.maximum.accumulate(np.where(repeat, 0, np.arange(len(repeat))))
    same_place = repeat & (lon == lon[first]) & (lat == lat[first])
    out = {"duplicate_fix_same_position": np.zeros(n, dtype=bool),
           "duplicate_time_other_position": np.zeros(n, dtype=bool)}
    out["duplicate_fix_same_position"][rows[same_place]] = True
    out["duplicate_time_other_position"][rows[repeat & ~same_place]] = True
    return out


def validate_points(frame: pd.DataFrame, source: str, *, sort: bool = False,
                    line_offset: int = 2) -> ValidatedPoints:
    """Check ``frame`` (columns POINT_COLUMNS, values as read) and decide what to load.

    ``line_offset`` turns a 0-based row position into what the user sees: 2 for a CSV
    with a header (line numbers), 1 for a table format (row numbers).
    """
    if len(frame) == 0:
        raise InputError(f"{source}: the file has no data rows. Is it the right file?")
    traj = _check_identifiers(frame, source, line_offset)
    ts = _parse_timestamps(frame["t"], source, line_offset)
    ts_ns = _nanoseconds(ts)
    order = np.lexsort((ts_ns, traj)) if sort else np.arange(len(frame))
    if sort:
        frame, ts = frame.iloc[order].reset_index(drop=True), ts.iloc[order].reset_index(drop=True)
        traj, ts_ns = traj[order], ts_ns[order]
    lon, lat = _coordinate(frame["lon"]), _coordinate(frame["lat"])
    problems = _coordinate_problems(lon, lat)
    alive = np.flatnonzero(~np.logical_or.reduce(list(problems.values())))
    if len(alive) == 0:  # before the order check, which cannot judge an empty trajectory list
        raise InputError(f"{source}: every row was dropped as noise ({_summary(problems)}).")
    same = _check_order(traj[alive], ts_ns[alive], order[alive], source, line_offset)
    problems |= _duplicate_problems(same, ts_ns[alive], lon[alive], lat[alive], alive,
                                    len(frame))
    keep = ~np.logical_or.reduce(list(problems.values()))
    return ValidatedPoints(
        order=order[keep],
        timestamps=ts[keep].reset_index(drop=True),
        lon=lon[keep],
        lat=lat[keep],
        dropped={name: int(mask.sum()) for name, mask in problems.items() if mask.any()},
        examples={name: _lines(order[np.flatnonzero(mask)], line_offset)
                  for name, mask in problems.items() if mask.any()},
    )


def _summary(problems: dict[str, np.ndarray]) -> str:
    return ", ".join(f"{name}: {int(mask.sum())}" for name, mask in problems.items() if mask.any())
