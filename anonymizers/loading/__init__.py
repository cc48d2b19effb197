"""Load raw movement data into PostGIS: read, validate, report, COPY, all or nothing.

GPS fixes (readers.py), or visits to places with a places file (places.py: each visit
becomes a fix at its place, then the same validation and storing).

The file streams through in chunks of readers.CHUNK_ROWS rows: read, checked
(validation.py), routed to their leaf (leaves.py) and sent to its COPY (store.py) before
the next chunk is read. Nothing is kept per row, only per id: memory is
O(CHUNK_ROWS + distinct traj_ids + distinct user_ids + the persons file), whatever the
number of fixes: ~115 MiB of libraries + 150-200 MiB of chunks in flight + ~60 bytes a
traj_id + ~150 bytes a user_id (README, "How a load runs": 313 MiB for 25M fixes of 182
persons; 774 MiB for 25M fixes of 1.9M trajectories and 813k persons).
With --sort the rows are put in order by PostgreSQL (sorting.py), not in memory.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from anonymizers.errors import InputError
from anonymizers.loading.binary_copy import PlaceRows, PointRows
from anonymizers.loading.leaves import LeafRouter, leaf_count
from anonymizers.loading.persons import check_referenced, read_persons
from anonymizers.loading.places import check_every_trajectory_kept, read_places, read_visits
from anonymizers.loading.readers import PointFile, read_points
from anonymizers.loading.sorting import SortedRows
from anonymizers.loading.store import DatasetRecord, Staging
from anonymizers.loading.validation import RowChecks, RowChunk, SequenceChecks

__all__ = ["DATASET_NAME", "LoadResult", "load_dataset"]

DATASET_NAME = re.compile(r"^[a-z][a-z0-9_]{0,19}$")
UNIX_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass
class LoadResult:
    dataset_id: int
    record: DatasetRecord

    @property
    def persons_known(self) -> bool:
        """False when the file had no user_id: each trajectory was taken as its own person."""
        return bool(self.record.load_report["persons_known"])

    def summary(self) -> str:
        report = self.record.load_report
        dropped = report["dropped"]
        persons = (f"{self.record.n_persons} persons" if self.persons_known else
                   "persons unknown (each trajectory is its own person)")
        lines = [
            f"loaded dataset {self.record.name!r} (id {self.dataset_id}): "
            f"{self.record.n_points} points, {self.record.n_trajectories} trajectories, "
            f"{persons}, {self.record.t_min} .. {self.record.t_max}",
            f"rows read {report['rows_read']}, dropped {sum(dropped.values())}",
        ]
        if "n_places" in report:  # visits: each point is a visit to one of these places
            lines.insert(1, f"{report['n_places']} places from {self.record.places_file}")
        for reason, count in dropped.items():
            example = ", ".join(map(str, report["examples"][reason]))
            lines.append(f"  dropped {count:>8} {reason} (e.g. {report['unit']} {example})")
        return "\n".join(lines)

    def warning(self) -> str | None:
        """What the user must know about this load before releasing it, if anything."""
        if self.persons_known:
            return None
        return (f"warning: {self.record.source_file} has no user_id column, so the persons "
                "are unknown and each trajectory is taken as its own person. A release's k "
                "will count trajectories as persons: if one person made several "
                "trajectories, k overstates the anonymity (k trajectories can be fewer than "
                "k persons). Load the points with a user_id column to count persons.")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    block = memoryview(bytearray(1 << 20))  # one buffer: no fresh 1 MB bytes per read
    with path.open("rb") as handle:
        while size := handle.readinto(block):
            digest.update(block[:size])
    return digest.hexdigest()


# Medians of lon/lat (raw.datasets; the release picks its UTM zone by them) come from a
# uniform sample of the kept fixes of at most this size: exact up to it, within a few
# hundredths of a per cent of the rows' rank beyond (a fixed seed: the same file gives
# the same medians).
MEDIAN_SAMPLE = 1 << 17


class _Tally:
    """What the dataset's record says of the kept rows, without holding them."""

    def __init__(self) -> None:
        self.n_points = 0
        self.t_min, self.t_max = np.iinfo(np.int64).max, np.iinfo(np.int64).min
        self.users = np.zeros(0, bool)  # per user code: some kept row is theirs
        self.random = np.random.default_rng(0)
        self.sample = np.empty((0, 3))  # (random key, lon, lat) of the sampled rows

    def add(self, rows: RowChunk) -> None:
        self.n_points += len(rows)
        self.t_min = min(self.t_min, int(rows.t_us.min()))
        self.t_max = max(self.t_max, int(rows.t_us.max()))
        top = int(rows.user.max()) + 1
        if len(self.users) < top:
            self.users = np.r_[self.users, np.zeros(max(top, 2 * len(self.users))
                                                    - len(self.users), bool)]
        self.users[rows.user] = True
        drawn = np.c_[self.random.random(len(rows)), rows.lon, rows.lat]
        self.sample = np.r_[self.sample, drawn]
        if len(self.sample) > MEDIAN_SAMPLE:  # keep the rows of the smallest keys
            smallest = np.argpartition(self.sample[:, 0], MEDIAN_SAMPLE)[:MEDIAN_SAMPLE]
            self.sample = self.sample[smallest]

    def medians(self) -> tuple[float, float]:
        return float(np.median(self.sample[:, 1])), float(np.median(self.sample[:, 2]))


@dataclass
class _Loaded:
    """What the stream of a file came to."""

    checks: RowChecks
    router: LeafRouter
    tally: _Tally


def _record(name: str, path: Path, persons_path: Path | None, loaded: _Loaded, sha256: str,
            unit: str) -> DatasetRecord:
    checks, tally = loaded.checks, loaded.tally
    lon_median, lat_median = tally.medians()
    return DatasetRecord(
        name=name, source_file=str(path.resolve()), source_sha256=sha256,
        persons_file=str(persons_path.resolve()) if persons_path else None,
        n_points=tally.n_points, n_trajectories=loaded.router.trajectories,
        n_persons=int(np.count_nonzero(tally.users)),
        t_min=UNIX_EPOCH + timedelta(microseconds=tally.t_min),
        t_max=UNIX_EPOCH + timedelta(microseconds=tally.t_max),
        lon_median=lon_median, lat_median=lat_median,
        load_report={"rows_read": checks.rows_read, "dropped": checks.drops.counts,
                     "examples": checks.drops.examples, "unit": unit,
                     "persons_known": checks.persons_known},
    )


def _with_places(record: DatasetRecord, path: Path, places: PlaceRows) -> DatasetRecord:
    """The record of a place-sequence dataset: its places file, their number and digest."""
    record.places_file = str(path.resolve())
    record.load_report |= {"n_places": len(places), "places_sha256": _sha256(path)}
    return record


def _read(path: Path, places: Path | None) -> tuple[PointFile, PlaceRows | None]:
    """GPS fixes; or, with a places file, visits turned into fixes at its places."""
    if places is None:
        return read_points(path), None
    place_rows = read_places(places)
    return read_visits(path, place_rows, str(places)), place_rows


def _no_persons_without_user_id(points: PointFile, persons: Path | None) -> None:
    """A persons file describes the persons of the points: points without user_id have none."""
    if persons is not None and not points.persons_known:
        raise InputError(
            f"{persons}: a persons file was given, but {points.source} has no user_id "
            "column, so no point says which person it belongs to. Add a user_id column to "
            "the points (traj_id,user_id,t,lon,lat; visits: traj_id,user_id,t,place), or "
            "load without --persons.")


def _referenced_persons(frame: pd.DataFrame, loaded: _Loaded, path: Path) -> pd.DataFrame:
    """The persons file's rows of the persons the kept points reference (all must be there)."""
    names = loaded.checks.user.names
    users = pa.array([names[code] for code in np.flatnonzero(loaded.tally.users)], pa.string())
    return frame[check_referenced(frame, users, path)]


def _send(chunks: Iterable[RowChunk], checks: RowChecks, staging: Staging,
          leaves: int) -> _Loaded:
    """Check each chunk's order and repeats, route its rows to their leaves, send them."""
    sequence = SequenceChecks(checks.source, checks.line_offset, checks.drops)
    loaded = _Loaded(checks, LeafRouter(leaves), _Tally())
    for chunk in chunks:
        kept = sequence.check(chunk)
        if not len(kept):
            continue
        leaf_of_row, keys = loaded.router.route(kept.traj)
        loaded.tally.add(kept)
        rows = PointRows(kept.traj_id, kept.user_id, kept.t_us, kept.lon, kept.lat, keys)
        if leaves == 1:
            staging.send(0, rows)
            continue
        for leaf in range(leaves):
            index = np.flatnonzero(leaf_of_row == leaf)
            if len(index):
                staging.send(leaf, rows.take(index))
    return loaded


def _some_rows(checks: RowChecks, alive: int) -> None:
    """Refuse a file without data rows, or whose rows were all noise."""
    if checks.rows_read == 0:
        raise InputError(f"{checks.source}: the file has no data rows. Is it the right file?")
    if alive == 0:
        raise InputError(f"{checks.source}: every row was dropped as noise "
                         f"({checks.drops.summary()}).")


def _counted(chunks: Iterable[RowChunk], count: list[int]) -> Iterator[RowChunk]:
    for chunk in chunks:
        count[0] += len(chunk)
        yield chunk


def _stream(points: PointFile, staging: Staging, sort: bool, url: str | None) -> _Loaded:
    """Every chunk of ``points`` through the checks into the leaves (--sort: by way of
    PostgreSQL's sort)."""
    checks = RowChecks(points.source, points.line_offset, points.persons_known)
    checked = (checks.check(batch) for batch in points.batches())
    if sort:
        with SortedRows(url) as stage:
            staged = stage.stage(checked)
            _some_rows(checks, staged)
            staging.start(leaf_count(staged))
            return _send(stage.rows(checks), checks, staging, len(staging.leaves))
    alive = [0]
    staging.start(leaf_count(points.estimated_rows))
    loaded = _send(_counted(checked, alive), checks, staging, len(staging.leaves))
    _some_rows(checks, alive[0])
    return loaded


def _empty_trajectories(loaded: _Loaded) -> np.ndarray:
    """The hashes of the traj_ids read of which no row is kept."""
    ids, key = loaded.checks.traj, loaded.router.key
    kept = np.zeros(ids.size, bool)
    known = min(len(key), ids.size)
    kept[:known] = key[:known] >= 0
    return ids.hashes[~kept]


def load_dataset(path: Path | str, dataset: str, *, persons: Path | str | None = None,
                 places: Path | str | None = None, replace: bool = False, sort: bool = False,
                 url: str | None = None) -> LoadResult:
    """Validate ``path`` (and ``persons``) and load them as ``dataset``, all or nothing.

    With ``places``, ``path`` holds visits (traj_id,user_id,t,place) to the places of that
    file (places.py); they are stored as fixes at their places, the places in raw.places.

    The file is streamed in chunks of readers.CHUNK_ROWS rows through the checks into the
    COPY of its leaves; memory is O(CHUNK_ROWS + distinct traj_ids + distinct user_ids +
    persons file + places file), independent of the number of rows (below 1 GB for any
    file of up to ~3M trajectories and 1M persons: module docstring). A bad row in any
    chunk rolls back everything staged so far: nothing of the load becomes visible.
    """
    path = Path(path)
    persons = Path(persons) if persons is not None else None
    places = Path(places) if places is not None else None
    if not DATASET_NAME.fullmatch(dataset):
        raise InputError(f"dataset name {dataset!r}: use 1-20 lowercase letters, digits or _, "
                         "starting with a letter (it becomes part of schema names).")
    # The file is hashed and the persons read while the points stream (Arrow and the
    # server release the GIL); their errors come after the points' ones, as they always did.
    with ThreadPoolExecutor(max_workers=2) as helper:
        sha256 = helper.submit(_sha256, path)
        person_file = helper.submit(read_persons, persons) if persons else None
        points, place_rows = _read(path, places)
        _no_persons_without_user_id(points, persons)
        with Staging(url, dataset, replace) as staging:
            loaded = _stream(points, staging, sort, url)
            if place_rows is not None:
                check_every_trajectory_kept(_empty_trajectories(loaded), loaded.checks.drops,
                                            points)
            person_frame = (_referenced_persons(person_file.result(), loaded, persons)
                            if person_file is not None and persons is not None else None)
            unit = "line" if points.line_offset == 2 else "row"
            record = _record(dataset, path, persons, loaded, sha256.result(), unit)
            if places is not None and place_rows is not None:
                record = _with_places(record, places, place_rows)
            staging.publish(record, person_frame, place_rows)
    return LoadResult(staging.dataset_id, record)
