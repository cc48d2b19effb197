"""Quasi-identifiers of a dataset's persons (MOB family): load them from CSV, and store them.

A QID is the set of times at which an attacker may know where a person was (Yarovoy et al.
2009, §3); ``raw.qids`` holds one row per (dataset, person, time). Loading and generating
(:mod:`anonymizers.families.mob.qids`, which stores them here) both replace the dataset's
QIDs as a whole, in one transaction, by COPY; a refused load changes nothing. QIDs refer
to one version of a dataset: ``load --replace`` drops them (ON DELETE CASCADE,
sql/schema/030_qids.sql). This layer imports no family: the MOB family generates QIDs and
stores them through :func:`store_qids`.

The checks of a QID file (each refuses the whole file, naming lines and what to do):

======================================  ==================================================
case                                    why it is refused
======================================  ==================================================
no such file, empty, no data row        nothing to load; likely a wrong path
columns other than user_id,t            the file is not in the format we think
empty user_id                           a QID of nobody
unparseable t (ISO-8601; naive = UTC)   a wrong format would shift or drop QIDs
the same (user_id, t) twice             a broken export (times compared to the microsecond)
unknown dataset                         nothing to attach the QIDs to
t before the dataset's first fix or     no position of anyone is known then: a QID there
after its last                          is of another period (or another dataset)
user_id with no fix in the dataset      a QID of someone not in the data links to nothing
======================================  ==================================================
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd
import psycopg

from anonymizers.db.connection import connect
from anonymizers.db.sqlfiles import compose_sql, fetch_columns, fetch_row
from anonymizers.errors import InputError

__all__ = [
    "QID_COLUMNS",
    "Dataset",
    "QidLoadResult",
    "StoredQids",
    "find_dataset",
    "load_qids",
    "store_qids",
]

QID_COLUMNS = ("user_id", "t")
EXAMPLES = 5  # lines or persons named in an error message


class StoredQids(NamedTuple):
    removed: int  # the dataset's QIDs before
    stored: int  # its QIDs now


@dataclass(frozen=True)
class Dataset:
    """The dataset QIDs are loaded for or generated from (:func:`find_dataset`)."""

    name: str
    dataset_id: int
    t_min: datetime
    t_max: datetime
    lon_median: float
    lat_median: float


@dataclass(frozen=True)
class QidLoadResult:
    """What a QID file load did."""

    dataset: str
    dataset_id: int
    source: str
    n_qids: int  # rows: (person, time)
    n_persons: int  # persons with a QID
    replaced: int  # the dataset's QIDs before the load

    def summary(self) -> str:
        return (f"loaded {self.n_qids} QID time(s) of {self.n_persons} person(s) into dataset "
                f"{self.dataset!r} (id {self.dataset_id}) from {self.source}; "
                f"replaced {self.replaced}")


def store_qids(conn: psycopg.Connection, dataset_id: int, user_ids: Sequence[str] | np.ndarray,
               times: Sequence[datetime] | np.ndarray | pd.DatetimeIndex) -> StoredQids:
    """Replace the QIDs of ``dataset_id`` by the pairs (``user_ids[i]``, ``times[i]``).

    Runs in the caller's transaction (the replacement is atomic when ``conn`` is not in
    autocommit mode); the rows go in by one COPY. Naive times are UTC. Nothing is checked
    here but what the table enforces (the dataset exists, no pair twice): callers check
    their input first (:func:`load_qids`) or build it valid (``anonymizers.families.mob.qids``).
    """
    # to_csv writes aware times with their offset ("2008-02-02 07:36:08.5+00:00").
    rows = pd.DataFrame({"dataset_id": dataset_id,
                         "user_id": np.asarray(user_ids, dtype=object),
                         "t": pd.to_datetime(np.asarray(times), utc=True)})
    deleted = fetch_row(conn, "qids/delete.sql", {"dataset_id": dataset_id})
    removed = deleted["removed"] if deleted else 0
    with conn.cursor().copy(compose_sql("qids/copy_in.sql")) as copy:
        copy.write(rows.to_csv(index=False, header=False).encode())
    return StoredQids(int(removed), len(rows))


def load_qids(path: Path | str, dataset: str, url: str | None = None) -> QidLoadResult:
    """Check the QID file ``path`` (CSV ``user_id,t``) and make it the QIDs of ``dataset``.

    All or nothing: on any problem an InputError says what is wrong and what to do, and
    the dataset keeps the QIDs it had. The checks are in this module's docstring.

    References
    ----------
    Yarovoy, Bonchi, Lakshmanan, Wang. Anonymizing Moving Objects: How to Hide a MOB in a
    Crowd? EDBT 2009, §3 (QID: a set of time points per moving object).
    """
    path = Path(path)
    frame = _read_qid_file(path)
    with connect(url) as conn:
        target = find_dataset(conn, dataset)
        _check_period(frame, target, path)
        stored = store_qids(conn, target.dataset_id, frame["user_id"], frame["t"])
        _check_persons(conn, target, path)
    return QidLoadResult(dataset, target.dataset_id, str(path), stored.stored,
                         frame["user_id"].nunique(), stored.removed)


def _read_qid_file(path: Path) -> pd.DataFrame:
    """user_id (text) and t (UTC, microseconds) of every row, or an InputError."""
    if not path.is_file():
        raise InputError(f"{path}: no such QID file. Check the path.")
    try:
        # utf-8-sig: a byte-order mark (spreadsheet exports) is not part of the first name.
        frame = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig")
    except pd.errors.EmptyDataError as error:
        raise InputError(f"{path}: the QID file is empty. Expected a header user_id,t and "
                         "one row per time a person's position may be known.") from error
    frame.columns = [str(name).strip() for name in frame.columns]
    _check_columns(list(frame.columns), path)
    if frame.empty:
        raise InputError(f"{path}: the QID file has a header but no rows. Add one row "
                         "user_id,t per QID time point.")
    _refuse_lines(path, frame["user_id"].str.strip() == "", "an empty user_id",
                  "Every row needs the person's user_id as in the dataset.")
    frame["t"] = _parse_times(frame["t"], path)
    _refuse_lines(path, frame.duplicated(["user_id", "t"], keep="first").to_numpy(),
                  "a (user_id, t) already given on an earlier line",
                  "Remove the repeated rows (times are compared to the microsecond).")
    return frame


def _check_columns(found: list[str], path: Path) -> None:
    missing = [name for name in QID_COLUMNS if name not in found]
    unexpected = [name for name in found if name not in QID_COLUMNS]
    repeated = sorted({name for name in found if found.count(name) > 1})
    problems = [f"{what} {', '.join(names)}" for what, names in
                (("missing", missing), ("unexpected", unexpected), ("repeated", repeated))
                if names]
    if problems:
        raise InputError(f"{path}: the columns of a QID file are user_id,t (header required); "
                         f"{'; '.join(problems)}. Rename or remove columns so the header "
                         "matches.")


def _parse_times(values: pd.Series, path: Path) -> pd.Series:
    """ISO-8601 times in UTC (naive means UTC), truncated to microseconds as timestamptz."""
    parsed = pd.to_datetime(values, format="ISO8601", utc=True, errors="coerce")
    _refuse_lines(path, parsed.isna().to_numpy(), "an unparseable time in column t",
                  "Use ISO-8601, e.g. 2008-02-02T07:36:08Z (no offset means UTC).")
    return parsed.dt.floor("us")


def _refuse_lines(path: Path, bad: np.ndarray | pd.Series, what: str, fix: str) -> None:
    """An InputError naming the first lines where ``bad`` holds (line 1 is the header)."""
    lines = np.flatnonzero(np.asarray(bad)) + 2
    if len(lines):
        shown = ", ".join(map(str, lines[:EXAMPLES])) + (", ..." if len(lines) > EXAMPLES else "")
        label = "line" if len(lines) == 1 else "lines"
        raise InputError(f"{path}: {len(lines)} row(s) with {what} ({label} {shown}). {fix} "
                         "Nothing was loaded.")


def find_dataset(conn: psycopg.Connection, name: str) -> Dataset:
    """The dataset row, locked against a concurrent replace; InputError if there is none."""
    row = fetch_row(conn, "qids/dataset.sql", {"name": name})
    if row is None:
        known = fetch_columns(conn, "qids/dataset_names.sql")["name"]
        listed = ", ".join(known) if known else "none is loaded yet"
        raise InputError(f"no dataset {name!r} ({listed}). Load its points first "
                         f"(anonymizers load FILE --dataset {name}) or name a loaded one.")
    return Dataset(name, int(row["dataset_id"]), row["t_min"], row["t_max"],
                   float(row["lon_median"]), float(row["lat_median"]))


def _check_period(frame: pd.DataFrame, target: Dataset, path: Path) -> None:
    first, last = pd.Timestamp(target.t_min), pd.Timestamp(target.t_max)
    outside = ((frame["t"] < first) | (frame["t"] > last)).to_numpy()
    _refuse_lines(path, outside, f"a time outside dataset {target.name!r}'s data "
                  f"({first.isoformat()} .. {last.isoformat()}, its first and last fix)",
                  "Check that the QIDs are of this dataset, and their time zone.")


def _check_persons(conn: psycopg.Connection, target: Dataset, path: Path) -> None:
    """Every person with a QID has fixes in the dataset (checked on the rows just copied:
    the error rolls them back)."""
    found = fetch_row(conn, "qids/unknown_persons.sql",
                      {"dataset_id": target.dataset_id, "examples": EXAMPLES})
    count, examples = (found["n_unknown"], found["examples"]) if found else (0, [])
    if count:
        shown = ", ".join(map(repr, examples)) + (", ..." if count > EXAMPLES else "")
        raise InputError(f"{path}: {count} user_id(s) have no fix in dataset "
                         f"{target.name!r} ({shown}). Check that the QIDs are of this "
                         "dataset, or remove those rows. Nothing was loaded.")
