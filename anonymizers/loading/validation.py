"""Validate raw points before they reach the database: reject the file, or drop rows and count them.

The decision per case (documented in the README, tested in tests/test_loading.py):

=========================================  ===========  ==========================================
case                                       decision     why
=========================================  ===========  ==========================================
missing or unexpected columns              reject file  the file is not in the format we think
no user_id column                          load         persons unknown: each trajectory is its own
                                                        person (k then counts trajectories; said)
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
from typing import NoReturn

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from anonymizers.errors import InputError

__all__ = ["POINT_COLUMNS", "ValidatedPoints", "check_columns", "reject_rows", "validate_points"]

POINT_COLUMNS = ("traj_id", "user_id", "t", "lon", "lat")
# user_id may be left out when the persons are unknown (each trajectory is its own person).
OPTIONAL_COLUMNS = ("user_id",)
EXAMPLES = 5  # line numbers quoted per problem


@dataclass
class ValidatedPoints:
    """The rows to load (positions in the input, in load order) and what was dropped."""

    order: np.ndarray | None  # input rows to load, in order (sorted if asked); None: all, as read
    t_us: np.ndarray  # UTC microseconds since 1970 of the kept rows, in load order
    lon: np.ndarray
    lat: np.ndarray
    traj_codes: np.ndarray  # of the kept rows, in load order: traj_names[code] is the id
    traj_names: list[str]  # every traj_id read, in text (byte) order
    n_trajectories: int  # distinct traj_id / user_id among the kept rows
    n_persons: int
    persons_known: bool  # False: no user_id column, each trajectory is its own person
    dropped: dict[str, int] = field(default_factory=dict)
    examples: dict[str, list[int]] = field(default_factory=dict)


def check_columns(found: list[str], source: str,
                  expected: tuple[str, ...] = POINT_COLUMNS) -> list[str]:
    """The columns of ``found`` in ``expected``'s order; rejects any other set.

    The columns are traj_id,user_id,t,lon,lat in any order, or the same without user_id
    (persons unknown). A file that is neither is told what the full set misses: a missing
    user_id is named only next to another problem (a renamed person column, say).
    ``expected`` is another such set (visits to places: traj_id,user_id,t,place).
    """
    unexpected = [c for c in found if c not in expected]
    repeated = sorted({c for c in found if c in expected and found.count(c) > 1})
    missing = [c for c in expected if c not in found]
    if missing == list(OPTIONAL_COLUMNS) and not unexpected and not repeated:
        return [c for c in expected if c in found]
    problems = [f"{what} {', '.join(names)}" for what, names in
                (("missing", missing), ("unexpected", unexpected), ("repeated", repeated))
                if names]
    if problems:
        anonymous = ",".join(c for c in expected if c not in OPTIONAL_COLUMNS)
        raise InputError(
            f"{source}: columns must be {','.join(expected)} (or {anonymous} when the "
            f"persons are unknown); {'; '.join(problems)}. "
            "Rename or remove columns so the header matches."
        )
    return list(expected)


def _lines(positions: np.ndarray, line_offset: int) -> list[int]:
    return [int(p) + line_offset for p in positions[:EXAMPLES]]


def reject_rows(source: str, what: str, positions: np.ndarray, line_offset: int,
                fix: str) -> NoReturn:
    """Refuse the file: how many rows have ``what``, the first lines (or rows), ``fix``.

    ``positions`` are 0-based row positions; ``line_offset`` as in validate_points.
    """
    label = "line" if line_offset == 2 else "row"
    raise InputError(
        f"{source}: {len(positions)} row(s) with {what} "
        f"({label}s {', '.join(map(str, _lines(positions, line_offset)))}"
        f"{', ...' if len(positions) > EXAMPLES else ''}). {fix}"
    )


@dataclass
class _Codes:
    """An id column as integer codes numbered in the ids' text order, and the ids."""

    codes: np.ndarray
    names: list[str]  # names[i]: the id of code i


def _encode_ids(values: pa.ChunkedArray, column: str, source: str,
                line_offset: int) -> _Codes:
    """Reject empty ids; number the others in text order (so --sort sorts by traj_id).

    Arrow encodes the column; Python only looks at the distinct ids, which is where a
    blank one (only whitespace, by Python's str.strip as before) is found.
    """
    encoded = pc.dictionary_encode(values.combine_chunks())
    missing = encoded.is_null().to_numpy(zero_copy_only=False)
    indices = pc.fill_null(encoded.indices, 0).to_numpy()
    distinct = encoded.dictionary.to_pylist()
    blank = np.fromiter((not name.strip() for name in distinct), bool, len(distinct))
    empty = np.flatnonzero(missing | blank[indices]) if len(distinct) else np.flatnonzero(missing)
    if len(empty):
        reject_rows(source, f"an empty {column}", empty, line_offset,
                f"Every row needs a {column}; fix or remove those rows.")
    # Byte order of UTF-8 is code point order: the order of Python's (and pandas') sort.
    text_order = pc.array_sort_indices(encoded.dictionary).to_numpy()
    rank = np.empty(len(distinct), dtype=np.int32)
    rank[text_order] = np.arange(len(distinct), dtype=np.int32)
    return _Codes(rank[indices], [distinct[i] for i in text_order])


def _check_identifiers(table: pa.Table, source: str, line_offset: int) -> tuple[_Codes, _Codes]:
    """Reject empty ids and shared trajectories; returns the codes of traj_id and user_id.

    Without a user_id column each trajectory is its own person: the user codes are the
    trajectory codes.
    """
    traj = _encode_ids(table.column("traj_id"), "traj_id", source, line_offset)
    if "user_id" not in table.column_names:
        return traj, traj
    user = _encode_ids(table.column("user_id"), "user_id", source, line_offset)
    # A trajectory whose lowest and highest user code differ has several owners.
    lowest = np.full(len(traj.names), np.iinfo(np.int64).max)
    highest = np.full(len(traj.names), -1)
    np.minimum.at(lowest, traj.codes, user.codes)
    np.maximum.at(highest, traj.codes, user.codes)
    shared = np.flatnonzero(lowest != highest)
    if len(shared):
        positions = np.flatnonzero(traj.codes == shared[0])
        reject_rows(source, f"traj_id {traj.names[shared[0]]!r} under several user_ids "
                f"({len(shared)} such trajectories)", positions, line_offset,
                "A trajectory belongs to one person: give each person's trips their own traj_id.")
    return traj, user


def _iso8601_by_arrow(raw: pa.ChunkedArray) -> np.ndarray | None:
    """Epoch nanoseconds if Arrow parses every value (all with an offset, or all without).

    Arrow's ISO-8601 parser accepts a strict subset of what pandas accepts, with the same
    values, and is ~10x faster; anything else (mixed offsets, other spellings, an
    unparseable value) returns None and goes the pandas way, which names the bad lines.
    """
    for target in (pa.timestamp("ns", tz="UTC"), pa.timestamp("ns")):  # naive means UTC
        try:
            return pc.cast(raw, target).cast(pa.int64()).to_numpy(zero_copy_only=False)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            continue
    return None


def _parse_timestamps(raw: pa.ChunkedArray, source: str, line_offset: int) -> np.ndarray:
    """UTC microseconds since 1970, truncated (timestamptz keeps microseconds).

    Truncating here makes the duplicate and order checks judge exactly the values stored.
    """
    if pa.types.is_string(raw.type) or pa.types.is_large_string(raw.type):
        nanoseconds = _iso8601_by_arrow(raw)
        if nanoseconds is not None and raw.null_count == 0:
            return np.floor_divide(nanoseconds, 1000)  # floor, also before 1970
    values = raw.to_pandas()
    if pd.api.types.is_datetime64_any_dtype(values):
        parsed = pd.to_datetime(values, utc=True)
    else:
        parsed = pd.to_datetime(values, format="ISO8601", utc=True, errors="coerce")
    bad = np.flatnonzero(parsed.isna().to_numpy())
    if len(bad):
        reject_rows(source, "an unparseable timestamp in column t", bad, line_offset,
                "Use ISO-8601, e.g. 2008-02-02T07:36:08Z (no offset means UTC).")
    return _nanoseconds(parsed.dt.floor("us")) // 1000


def _nanoseconds(ts: pd.Series) -> np.ndarray:
    """UTC epoch nanoseconds: comparing int64 is ~100x faster than tz-aware Timestamps."""
    return ts.astype("datetime64[ns, UTC]").array.asi8


def _check_order(traj: np.ndarray, ts: np.ndarray, positions: np.ndarray | None,
                 source: str, line_offset: int) -> np.ndarray:
    """Rows of a trajectory must be contiguous and never earlier than the previous one.

    ``traj`` holds integer codes, ``positions`` the file row of each (None: row i is i).
    Returns, per row, whether it continues the previous row's trajectory (the duplicate
    check relies on contiguity: repeats are adjacent).
    """
    same = np.r_[False, traj[1:] == traj[:-1]]
    if int((~same).sum()) != np.count_nonzero(np.bincount(traj)):
        seen = np.zeros(traj.max() + 1, dtype=bool)
        starts = np.flatnonzero(~same)
        again = [row for row in starts if seen[traj[row]] or seen.__setitem__(traj[row], True)]
        reject_rows(source, "a traj_id whose rows are not contiguous",
                _at(positions, np.array(again)), line_offset,
                "Sort the file by traj_id, t, or load with --sort.")
    backwards = np.flatnonzero(same & np.r_[False, ts[1:] < ts[:-1]])
    if len(backwards):
        reject_rows(source, "a timestamp earlier than the previous one of its trajectory",
                _at(positions, backwards), line_offset,
                "Sort the file by traj_id, t, or load with --sort.")
    return same


def _coordinate(values: pa.ChunkedArray) -> np.ndarray:
    """Numbers from text; anything non-numeric becomes NaN (and is dropped as noise)."""
    if pa.types.is_floating(values.type) or pa.types.is_integer(values.type):
        return pc.cast(values, pa.float64()).to_numpy(zero_copy_only=False)  # null -> NaN
    try:  # Arrow's cast is fast but all-or-nothing; fall back to pandas to find the bad ones
        return pc.cast(values, pa.float64()).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pd.to_numeric(values.to_pandas(), errors="coerce").to_numpy(dtype=float)


# Row sets are sorted position arrays, and None for "every row": most files drop nothing,
# and not copying a million-row column in that case saves most of the validation's time
# (fresh numpy arrays cost page faults, and in a threaded process munmap's TLB shootdowns).
def _at(positions: np.ndarray | None, index: np.ndarray) -> np.ndarray:
    """``positions[index]``, where None stands for 0, 1, 2, ..."""
    return index if positions is None else positions[index]


def _pick(values: np.ndarray, positions: np.ndarray | None) -> np.ndarray:
    return values if positions is None else values[positions]


def _all_but(n: int, problems: dict[str, np.ndarray]) -> np.ndarray | None:
    """Positions 0..n-1 but those of ``problems``; None when there are none."""
    if not problems:
        return None
    keep = np.ones(n, dtype=bool)
    for positions in problems.values():
        keep[positions] = False
    return np.flatnonzero(keep)


def _found(problems: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {name: positions for name, positions in problems.items() if len(positions)}


def _coordinate_problems(lon: np.ndarray, lat: np.ndarray) -> dict[str, np.ndarray]:
    """Positions of the rows that are GPS noise, per reason (the reasons exclude each other)."""
    missing = np.isnan(lon) | np.isnan(lat)
    out_of_range = ~missing & ((lon > 180) | (lon < -180) | (lat > 90) | (lat < -90))
    null_island = (lon == 0) & (lat == 0)
    return _found({
        "empty_or_non_numeric_coordinate": np.flatnonzero(missing),
        "coordinate_out_of_range": np.flatnonzero(out_of_range),
        "null_island_0_0": np.flatnonzero(null_island),
    })


def _duplicate_problems(same: np.ndarray, ts: np.ndarray, lon: np.ndarray,
                        lat: np.ndarray) -> dict[str, np.ndarray]:
    """Positions of repeated (traj_id, t) (rows are contiguous, so repeats are adjacent).

    A repeat is compared with the first fix of its instant, which is the one kept.
    """
    repeats = np.flatnonzero(same & np.r_[False, ts[1:] == ts[:-1]])
    if not len(repeats):
        return {}
    firsts = np.setdiff1d(np.arange(len(ts)), repeats, assume_unique=True)
    first = firsts[np.searchsorted(firsts, repeats) - 1]
    same_place = (lon[repeats] == lon[first]) & (lat[repeats] == lat[first])
    return _found({"duplicate_fix_same_position": repeats[same_place],
                   "duplicate_time_other_position": repeats[~same_place]})


def validate_points(table: pa.Table, source: str, *, sort: bool = False,
                    line_offset: int = 2) -> ValidatedPoints:
    """Check ``table`` (columns POINT_COLUMNS, values as read) and decide what to load.

    Without a user_id column (persons unknown) each trajectory is its own person.

    ``line_offset`` turns a 0-based row position into what the user sees: 2 for a CSV
    with a header (line numbers), 1 for a table format (row numbers).
    """
    n = table.num_rows
    if n == 0:
        raise InputError(f"{source}: the file has no data rows. Is it the right file?")
    traj_ids, user_ids = _check_identifiers(table, source, line_offset)
    traj, user = traj_ids.codes, user_ids.codes
    ts = _parse_timestamps(table.column("t"), source, line_offset)
    lon, lat = _coordinate(table.column("lon")), _coordinate(table.column("lat"))
    order = np.lexsort((ts, traj)) if sort else None
    if order is not None:
        traj, user, ts, lon, lat = traj[order], user[order], ts[order], lon[order], lat[order]
    problems = _coordinate_problems(lon, lat)
    alive = _all_but(n, problems)
    if alive is not None and len(alive) == 0:  # the order check cannot judge no trajectory
        raise InputError(f"{source}: every row was dropped as noise ({_summary(problems)}).")
    same = _check_order(_pick(traj, alive), _pick(ts, alive),
                        _pick(order, alive) if order is not None else alive, source, line_offset)
    duplicates = _duplicate_problems(same, _pick(ts, alive), _pick(lon, alive), _pick(lat, alive))
    problems |= {name: _at(alive, positions) for name, positions in duplicates.items()}
    keep = _all_but(n, problems)
    return ValidatedPoints(
        order=_pick(order, keep) if order is not None else keep,
        t_us=_pick(ts, keep), lon=_pick(lon, keep), lat=_pick(lat, keep),
        traj_codes=_pick(traj, keep), traj_names=traj_ids.names,
        n_trajectories=_distinct(_pick(traj, keep)), n_persons=_distinct(_pick(user, keep)),
        persons_known="user_id" in table.column_names,
        dropped={name: len(positions) for name, positions in problems.items()},
        examples={name: _lines(_at(order, positions), line_offset)
                  for name, positions in problems.items()},
    )


def _distinct(codes: np.ndarray) -> int:
    return int(np.count_nonzero(np.bincount(codes)))


def _summary(problems: dict[str, np.ndarray]) -> str:
    return ", ".join(f"{name}: {len(positions)}" for name, positions in problems.items())
