"""Load raw movement data into PostGIS: read, validate, report, COPY, all or nothing.

GPS fixes (readers.py), or visits to places with a places file (places.py: each visit
becomes a fix at its place, then the same validation and storing).
"""

from __future__ import annotations

import hashlib
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from anonymizers.errors import InputError
from anonymizers.loading.binary_copy import PlaceRows, PointRows
from anonymizers.loading.leaves import plan_leaves, split_leaves
from anonymizers.loading.persons import check_referenced, read_persons
from anonymizers.loading.places import check_every_trajectory_kept, read_places, read_visits
from anonymizers.loading.readers import PointFile, read_points
from anonymizers.loading.store import DatasetRecord, store_dataset
from anonymizers.loading.validation import ValidatedPoints, validate_points

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


def _record(name: str, path: Path, persons_path: Path | None, rows_read: int,
            checked: ValidatedPoints, sha256: str, unit: str) -> DatasetRecord:
    return DatasetRecord(
        name=name, source_file=str(path.resolve()), source_sha256=sha256,
        persons_file=str(persons_path.resolve()) if persons_path else None,
        n_points=len(checked.t_us), n_trajectories=checked.n_trajectories,
        n_persons=checked.n_persons,
        t_min=UNIX_EPOCH + timedelta(microseconds=int(checked.t_us.min())),
        t_max=UNIX_EPOCH + timedelta(microseconds=int(checked.t_us.max())),
        lon_median=float(np.median(checked.lon)), lat_median=float(np.median(checked.lat)),
        load_report={"rows_read": rows_read, "dropped": checked.dropped,
                     "examples": checked.examples, "unit": unit,
                     "persons_known": checked.persons_known},
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


def _kept_ids(table: pa.Table, column: str, order: np.ndarray | None) -> pa.StringArray:
    """The kept ids in load order, taken by Arrow (no Python string per row)."""
    ids = table.column(column).combine_chunks().cast(pa.string())
    return ids if order is None else ids.take(pa.array(order))


def _no_persons_without_user_id(points: PointFile, persons: Path | None) -> None:
    """A persons file describes the persons of the points: points without user_id have none."""
    if persons is not None and not points.persons_known:
        raise InputError(
            f"{persons}: a persons file was given, but {points.source} has no user_id "
            "column, so no point says which person it belongs to. Add a user_id column to "
            "the points (traj_id,user_id,t,lon,lat; visits: traj_id,user_id,t,place), or "
            "load without --persons.")


def _referenced_persons(frame: pd.DataFrame, user_ids: pa.StringArray,
                        path: Path) -> pd.DataFrame:
    """The persons file's rows of the persons the kept points reference (all must be there)."""
    users = pc.unique(user_ids)
    check_referenced(frame, users.to_numpy(zero_copy_only=False), path)
    # Arrow's is_in: pandas' isin on its string dtype takes 0.15 s for 32k persons.
    listed = pc.is_in(pa.array(frame["user_id"], pa.string()), value_set=users)
    return frame[listed.to_numpy(zero_copy_only=False)]


def load_dataset(path: Path | str, dataset: str, *, persons: Path | str | None = None,
                 places: Path | str | None = None, replace: bool = False, sort: bool = False,
                 url: str | None = None) -> LoadResult:
    """Validate ``path`` (and ``persons``) and load them as ``dataset``, all or nothing.

    With ``places``, ``path`` holds visits (traj_id,user_id,t,place) to the places of that
    file (places.py); they are stored as fixes at their places, the places in raw.places.
    """
    path = Path(path)
    persons = Path(persons) if persons is not None else None
    places = Path(places) if places is not None else None
    if not DATASET_NAME.fullmatch(dataset):
        raise InputError(f"dataset name {dataset!r}: use 1-20 lowercase letters, digits or _, "
                         "starting with a letter (it becomes part of schema names).")
    # The file is hashed and the persons read while Arrow reads the points (it releases
    # the GIL); their errors come after the points' ones, as they always did.
    with ThreadPoolExecutor(max_workers=2) as helper:
        sha256 = helper.submit(_sha256, path)
        person_file = helper.submit(read_persons, persons) if persons else None
        points, place_rows = _read(path, places)
        _no_persons_without_user_id(points, persons)
        checked = validate_points(points.table, points.source, sort=sort,
                                  line_offset=points.line_offset)
        if place_rows is not None:
            check_every_trajectory_kept(checked, points)
        plan = plan_leaves(checked.traj_codes, len(checked.traj_names))
        traj_ids = _kept_ids(points.table, "traj_id", checked.order)
        # Persons unknown: each trajectory is its own person (the same Arrow array).
        user_ids = (_kept_ids(points.table, "user_id", checked.order)
                    if points.persons_known else traj_ids)
        rows = PointRows(traj_ids, user_ids, checked.t_us, checked.lon, checked.lat,
                         plan.traj_key)
        person_frame = (_referenced_persons(person_file.result(), rows.user_id, persons)
                        if person_file is not None and persons is not None else None)
        unit = "line" if points.line_offset == 2 else "row"
        record = _record(dataset, path, persons, points.table.num_rows, checked,
                         sha256.result(), unit)
    if places is not None and place_rows is not None:
        record = _with_places(record, places, place_rows)
    leaves = split_leaves(rows, plan)
    dataset_id = store_dataset(url, record, leaves, person_frame, replace, place_rows)
    return LoadResult(dataset_id, record)
