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

The checks run chunk by chunk (readers.py streams the file): RowChecks judges each row
alone, SequenceChecks the order and repeats of the rows in load order, carrying the last
kept row from one chunk to the next. What they keep between chunks is per id, never per
row: each traj_id and user_id read (its code, its owner, whether its rows were seen), so
memory is O(chunk + distinct ids). A rejection names the lines of the chunk it was found
in (a problem that recurs in later chunks is not counted there).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NoReturn

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from anonymizers.errors import InputError

__all__ = ["POINT_COLUMNS", "Drops", "RowChecks", "RowChunk", "SequenceChecks",
           "check_columns", "hash_ids", "reject_rows"]

POINT_COLUMNS = ("traj_id", "user_id", "t", "lon", "lat")
# user_id may be left out when the persons are unknown (each trajectory is its own person).
OPTIONAL_COLUMNS = ("user_id",)
EXAMPLES = 5  # line numbers quoted per problem


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

    ``positions`` are 0-based row positions in the file; ``line_offset`` turns them into
    what the user sees: 2 for a CSV with a header (line numbers), 1 for a table format.
    """
    label = "line" if line_offset == 2 else "row"
    raise InputError(
        f"{source}: {len(positions)} row(s) with {what} "
        f"({label}s {', '.join(map(str, _lines(positions, line_offset)))}"
        f"{', ...' if len(positions) > EXAMPLES else ''}). {fix}"
    )


@dataclass
class RowChunk:
    """Rows of one chunk that passed the row checks, in load order."""

    positions: np.ndarray  # int64: each row's 0-based position in the file
    traj: np.ndarray  # int64 codes of traj_id (RowChecks.traj.hashes[code]: its hash)
    user: np.ndarray  # int64 codes of user_id (the traj codes when persons are unknown)
    traj_id: pa.Array  # the ids as text, for COPY
    user_id: pa.Array  # the traj_id itself when the file names no persons
    t_us: np.ndarray  # UTC microseconds since 1970
    lon: np.ndarray
    lat: np.ndarray

    def __len__(self) -> int:
        return len(self.t_us)

    def take(self, index: np.ndarray | None) -> RowChunk:
        """The rows at ``index`` (None: all of them, not copied)."""
        if index is None:
            return self
        taken = pa.array(index)
        return RowChunk(self.positions[index], self.traj[index], self.user[index],
                        self.traj_id.take(taken), self.user_id.take(taken),
                        self.t_us[index], self.lon[index], self.lat[index])


@dataclass
class Drops:
    """Rows dropped so far, per reason: how many, and the first lines."""

    line_offset: int
    counts: dict[str, int] = field(default_factory=dict)
    examples: dict[str, list[int]] = field(default_factory=dict)

    def add(self, problems: dict[str, np.ndarray], positions: np.ndarray) -> None:
        """Count ``problems`` (indexes into ``positions``, the rows' file positions)."""
        for name, index in problems.items():
            self.counts[name] = self.counts.get(name, 0) + len(index)
            shown = self.examples.setdefault(name, [])
            shown += _lines(positions[index], self.line_offset)[:EXAMPLES - len(shown)]

    def summary(self) -> str:
        return ", ".join(f"{name}: {count}" for name, count in self.counts.items())


class _Ids:
    """An id column's global integer codes, numbered in order of first appearance."""

    def __init__(self, column: str) -> None:
        self.column = column
        self.index: dict[str, int] = {}
        self.names: list[str] = []  # names[code]: the id

    @property
    def size(self) -> int:
        """How many distinct ids were read."""
        return len(self.names)

    def encode(self, values: pa.Array, positions: np.ndarray, source: str,
               line_offset: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Reject empty ids; (global code per row, chunk-local code per row, global code
        per local code). Python looks at the chunk's distinct ids only."""
        encoded = pc.dictionary_encode(values)
        missing = encoded.is_null().to_numpy(zero_copy_only=False)
        local = pc.fill_null(encoded.indices, 0).to_numpy().astype(np.int64)
        distinct = encoded.dictionary.to_pylist()
        blank = np.fromiter((not name.strip() for name in distinct), bool, len(distinct))
        empty = np.flatnonzero(missing | blank[local]) if len(distinct) else np.flatnonzero(missing)
        if len(empty):
            reject_rows(source, f"an empty {self.column}", positions[empty], line_offset,
                        f"Every row needs a {self.column}; fix or remove those rows.")
        codes = self._codes(distinct)
        return codes[local], local, codes

    def _codes(self, distinct: list[str]) -> np.ndarray:
        return np.fromiter((self._code(name) for name in distinct), np.int64, len(distinct))

    def _code(self, name: str) -> int:
        code = self.index.get(name)
        if code is None:
            code = self.index[name] = len(self.names)
            self.names.append(name)
        return code

    def lookup(self, values: pa.Array) -> np.ndarray:
        """Codes of ids already encoded (the rows --sort reads back)."""
        encoded = pc.dictionary_encode(values)
        codes = self._codes(encoded.dictionary.to_pylist())
        return codes[encoded.indices.to_numpy()]


def hash_ids(names: list[str]) -> np.ndarray:
    """64-bit hashes of ids (Python's SipHash of str: stable within one process)."""
    return np.fromiter(map(hash, names), np.int64, len(names)).view(np.uint64)


class _HashedIds(_Ids):
    """Codes of trajectory ids kept by 64-bit hash in a numpy open-addressing table: 32
    bytes an id instead of ~150 as a dict of Python strings (the synthetic city has 76k
    trajectories per 1M fixes). Two ids of one hash (odds ~n^2/2^65: 1e-7 for 2M ids)
    would count as one trajectory: a false refusal (rows not contiguous, or several
    owners), never a wrong load."""

    def __init__(self, column: str) -> None:
        super().__init__(column)
        self.keys = np.zeros(1 << 10, np.uint64)
        self.slot_codes = np.full(1 << 10, -1, np.int64)  # -1: empty slot
        self.hashes = np.zeros(0, np.uint64)  # per code: its id's hash
        self.count = 0

    @property
    def size(self) -> int:
        return self.count

    def _codes(self, distinct: list[str]) -> np.ndarray:
        hashes = hash_ids(distinct)
        if 2 * (self.count + len(hashes)) > len(self.keys):
            self._grow(2 * (self.count + len(hashes)))
        codes, slots = self._probe(hashes)
        fresh = np.flatnonzero(codes < 0)  # in order of appearance: the dictionary's order
        codes[fresh] = self.count + np.arange(len(fresh))
        self.slot_codes[slots[fresh]] = codes[fresh]
        self.hashes = np.r_[self.hashes, hashes[fresh]]
        self.count += len(fresh)
        return codes

    def _probe(self, hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(code or -1, slot) of each distinct hash; a new one's key is written in a free
        slot (its code by the caller)."""
        mask = np.uint64(len(self.keys) - 1)
        slots = (hashes & mask).astype(np.int64)
        codes = np.full(len(hashes), -1, np.int64)
        pending = np.arange(len(hashes))
        while len(pending):
            at = slots[pending]
            taken = self.slot_codes[at] != -1
            found = taken & (self.keys[at] == hashes[pending])
            codes[pending[found]] = self.slot_codes[at[found]]
            free = np.flatnonzero(~taken)
            _, first = np.unique(at[free], return_index=True)  # one new id per free slot
            claim = pending[free[first]]
            self.keys[slots[claim]] = hashes[claim]
            self.slot_codes[slots[claim]] = -2  # claimed: the caller writes the code
            done = np.zeros(len(pending), bool)
            done[found] = True
            done[free[first]] = True
            pending = pending[~done]
            slots[pending] = (slots[pending] + 1) & int(mask)
        return codes, slots

    def _grow(self, needed: int) -> None:
        size = 1 << int(needed - 1).bit_length()
        self.keys = np.zeros(size, np.uint64)
        self.slot_codes = np.full(size, -1, np.int64)
        if self.count:
            _, slots = self._probe(self.hashes)
            self.slot_codes[slots] = np.arange(self.count)

    def lookup(self, values: pa.Array) -> np.ndarray:
        encoded = pc.dictionary_encode(values)
        codes, _ = self._probe(hash_ids(encoded.dictionary.to_pylist()))
        return codes[encoded.indices.to_numpy()]


def _grown(values: np.ndarray, size: int, fill: int) -> np.ndarray:
    """``values`` with room for ``size`` entries (doubling), new ones ``fill``."""
    if len(values) >= size:
        return values
    grown = np.full(max(size, 2 * len(values)), fill, dtype=values.dtype)
    grown[:len(values)] = values
    return grown


class RowChecks:
    """What can be judged of each row alone, chunk by chunk: ids present, one owner per
    trajectory, a timestamp; GPS noise dropped and counted."""

    def __init__(self, source: str, line_offset: int, persons_known: bool) -> None:
        self.source, self.line_offset = source, line_offset
        self.traj = _HashedIds("traj_id")
        self.user = _Ids("user_id") if persons_known else self.traj
        self.persons_known = persons_known
        self.owner = np.empty(0, np.int64)  # per traj code: its user code (-1: none yet)
        self.drops = Drops(line_offset)
        self.rows_read = 0

    def check(self, batch: pa.RecordBatch) -> RowChunk:
        """The rows of ``batch`` (the next ones of the file) that are not noise."""
        positions = np.arange(self.rows_read, self.rows_read + batch.num_rows, dtype=np.int64)
        self.rows_read += batch.num_rows
        traj_id = batch.column("traj_id")
        traj, traj_local, _ = self.traj.encode(traj_id, positions, self.source,
                                               self.line_offset)
        user_id, user = traj_id, traj
        if self.persons_known:
            user_id = batch.column("user_id")
            user, _, _ = self.user.encode(user_id, positions, self.source, self.line_offset)
            self._check_owners(traj_id, traj, traj_local, user, positions)
        ts = _parse_timestamps(batch.column("t"), self.source, self.line_offset, positions)
        lon, lat = _coordinate(batch.column("lon")), _coordinate(batch.column("lat"))
        problems = _coordinate_problems(lon, lat)
        self.drops.add(problems, positions)
        rows = RowChunk(positions, traj, user, traj_id, user_id, ts, lon, lat)
        return rows.take(_all_but(len(positions), problems))

    def _check_owners(self, traj_id: pa.Array, traj: np.ndarray, local: np.ndarray,
                      user: np.ndarray, positions: np.ndarray) -> None:
        """Reject a trajectory under several user_ids, in this chunk or against earlier
        ones (the owner of each trajectory is kept: O(trajectories))."""
        n_local = int(local.max()) + 1 if len(local) else 0
        lowest = np.full(n_local, np.iinfo(np.int64).max)
        highest = np.full(n_local, -1)
        np.minimum.at(lowest, local, user)
        np.maximum.at(highest, local, user)
        codes = np.full(n_local, -1)
        codes[local] = traj
        self.owner = _grown(self.owner, self.traj.size, -1)
        known = self.owner[codes]
        earlier = np.where(known >= 0, known, lowest)
        shared = np.flatnonzero((lowest != highest) | (earlier != lowest))
        if len(shared):
            code = codes[shared[0]]
            name = traj_id[int(np.flatnonzero(traj == code)[0])].as_py()
            reject_rows(self.source, f"traj_id {name!r} under several "
                        f"user_ids ({len(shared)} such trajectories)",
                        positions[traj == code], self.line_offset,
                        "A trajectory belongs to one person: give each person's trips "
                        "their own traj_id.")
        self.owner[codes] = lowest


class SequenceChecks:
    """Order and repeats of the rows in load order, chunk after chunk.

    A trajectory's rows must be contiguous and never go back in time; a repeated
    (traj_id, t) is dropped, compared with the first fix of its instant, which is kept.
    Between chunks it keeps which trajectories were seen (O(trajectories)) and the last
    kept row (the first fix of the last instant).
    """

    def __init__(self, source: str, line_offset: int, drops: Drops) -> None:
        self.source, self.line_offset, self.drops = source, line_offset, drops
        self.seen = np.zeros(0, bool)  # per traj code: some row of it came before
        self.last: tuple[int, int, float, float] | None = None  # traj, t, lon, lat

    def check(self, rows: RowChunk) -> RowChunk:
        """The rows of ``rows`` to load (repeats dropped); rejects rows out of order."""
        if not len(rows):
            return rows
        code, t, lon, lat = self.last if self.last is not None else (-1, 0, np.nan, np.nan)
        traj = np.r_[code, rows.traj]  # the last kept row of the previous chunks first
        ts, lons, lats = np.r_[t, rows.t_us], np.r_[lon, rows.lon], np.r_[lat, rows.lat]
        same = np.r_[False, traj[1:] == traj[:-1]]
        self._check_contiguous(rows, ~same[1:])
        backwards = np.flatnonzero(same & np.r_[False, ts[1:] < ts[:-1]])
        if len(backwards):
            reject_rows(self.source, "a timestamp earlier than the previous one of its "
                        "trajectory", rows.positions[backwards - 1], self.line_offset,
                        "Sort the file by traj_id, t, or load with --sort.")
        duplicates = {name: index - 1 for name, index in
                      _duplicate_problems(same, ts, lons, lats).items()}
        self.drops.add(duplicates, rows.positions)
        kept = rows.take(_all_but(len(rows), duplicates))
        self.last = (int(kept.traj[-1]), int(kept.t_us[-1]), float(kept.lon[-1]),
                     float(kept.lat[-1]))
        return kept

    def _check_contiguous(self, rows: RowChunk, starts: np.ndarray) -> None:
        """A trajectory starting anew must never have been seen before."""
        first_rows = np.flatnonzero(starts)
        started = rows.traj[first_rows]
        self.seen = _grown(self.seen, int(rows.traj.max()) + 1, 0)
        _, first = np.unique(started, return_index=True)
        again = self.seen[started]
        again[np.setdiff1d(np.arange(len(started)), first, assume_unique=True)] = True
        if again.any():
            reject_rows(self.source, "a traj_id whose rows are not contiguous",
                        rows.positions[first_rows[again]], self.line_offset,
                        "Sort the file by traj_id, t, or load with --sort.")
        self.seen[started] = True


def _iso8601_by_arrow(raw: pa.Array) -> np.ndarray | None:
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


def _parse_timestamps(raw: pa.Array, source: str, line_offset: int,
                      positions: np.ndarray) -> np.ndarray:
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
        reject_rows(source, "an unparseable timestamp in column t", positions[bad],
                    line_offset, "Use ISO-8601, e.g. 2008-02-02T07:36:08Z (no offset means UTC).")
    return _nanoseconds(parsed.dt.floor("us")) // 1000


def _nanoseconds(ts: pd.Series) -> np.ndarray:
    """UTC epoch nanoseconds: comparing int64 is ~100x faster than tz-aware Timestamps."""
    return ts.astype("datetime64[ns, UTC]").array.asi8


def _coordinate(values: pa.Array) -> np.ndarray:
    """Numbers from text; anything non-numeric becomes NaN (and is dropped as noise)."""
    if pa.types.is_floating(values.type) or pa.types.is_integer(values.type):
        return pc.cast(values, pa.float64()).to_numpy(zero_copy_only=False)  # null -> NaN
    try:  # Arrow's cast is fast but all-or-nothing; fall back to pandas to find the bad ones
        return pc.cast(values, pa.float64()).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pd.to_numeric(values.to_pandas(), errors="coerce").to_numpy(dtype=float)


def _all_but(n: int, problems: dict[str, np.ndarray]) -> np.ndarray | None:
    """Positions 0..n-1 but those of ``problems``; None when there are none (most chunks
    drop nothing, and not copying their columns saves most of the checks' time)."""
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
