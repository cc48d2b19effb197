"""Load raw movement data into PostGIS: read, validate, report, COPY, all or nothing."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from anonymizers.errors import InputError
from anonymizers.loading.persons import check_referenced, read_persons
from anonymizers.loading.readers import read_points
from anonymizers.loading.store import DatasetRecord, points_csv, store_dataset
from anonymizers.loading.validation import ValidatedPoints, validate_points

__all__ = ["DATASET_NAME", "LoadResult", "load_dataset"]

DATASET_NAME = re.compile(r"^[a-z][a-z0-9_]{0,19}$")
IDS = pa.schema([("traj_id", pa.string()), ("user_id", pa.string())])


@dataclass
class LoadResult:
    dataset_id: int
    record: DatasetRecord

    def summary(self) -> str:
        report = self.record.load_report
        dropped = report["dropped"]
        lines = [
            f"loaded dataset {self.record.name!r} (id {self.dataset_id}): "
            f"{self.record.n_points} points, {self.record.n_trajectories} trajectories, "
            f"{self.record.n_persons} persons, {self.record.t_min} .. {self.record.t_max}",
            f"rows read {report['rows_read']}, dropped {sum(dropped.values())}",
        ]
        for reason, count in dropped.items():
            example = ", ".join(map(str, report["examples"][reason]))
            lines.append(f"  dropped {count:>8} {reason} (e.g. {report['unit']} {example})")
        return "\n".join(lines)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _record(name: str, path: Path, persons_path: Path | None, rows_read: int,
            kept: pa.Table, checked: ValidatedPoints, unit: str) -> DatasetRecord:
    return DatasetRecord(
        name=name, source_file=str(path.resolve()), source_sha256=_sha256(path),
        persons_file=str(persons_path.resolve()) if persons_path else None,
        n_points=kept.num_rows, n_trajectories=pc.count_distinct(kept["traj_id"]).as_py(),
        n_persons=pc.count_distinct(kept["user_id"]).as_py(),
        t_min=checked.timestamps.min().to_pydatetime(),
        t_max=checked.timestamps.max().to_pydatetime(),
        lon_median=float(np.median(checked.lon)), lat_median=float(np.median(checked.lat)),
        load_report={"rows_read": rows_read, "dropped": checked.dropped,
                     "examples": checked.examples, "unit": unit},
    )


def load_dataset(path: Path, dataset: str, *, persons: Path | None = None,
                 replace: bool = False, sort: bool = False, url: str | None = None) -> LoadResult:
    """Validate ``path`` (and ``persons``) and load them as ``dataset``, all or nothing."""
    if not DATASET_NAME.fullmatch(dataset):
        raise InputError(f"dataset name {dataset!r}: use 1-20 lowercase letters, digits or _, "
                         "starting with a letter (it becomes part of schema names).")
    points = read_points(path)
    checked = validate_points(points.frame, points.source, sort=sort,
                              line_offset=points.line_offset)
    # The kept identifiers, taken by Arrow (no round trip of a million strings via Python).
    kept = pa.Table.from_pandas(points.frame[["traj_id", "user_id"]], preserve_index=False,
                                schema=IDS).take(pa.array(checked.order))
    person_frame = read_persons(persons) if persons else None
    if person_frame is not None and persons is not None:
        users = pc.unique(kept["user_id"]).to_numpy(zero_copy_only=False)
        check_referenced(person_frame, users, persons)
        person_frame = person_frame[person_frame["user_id"].isin(users)]
    unit = "line" if points.line_offset == 2 else "row"
    record = _record(dataset, path, persons, len(points.frame), kept, checked, unit)
    csv_rows = points_csv(kept["traj_id"], kept["user_id"], checked.timestamps,
                          checked.lon, checked.lat)
    dataset_id = store_dataset(url, record, csv_rows, person_frame, replace)
    return LoadResult(dataset_id, record)
