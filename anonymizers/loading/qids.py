"""Quasi-identifiers of a dataset's persons (MOB family): load them from CSV, or generate them.

A QID is the set of times at which an attacker may know where a person was (Yarovoy et al.
2009, §3); ``raw.qids`` holds one row per (dataset, person, time). Loading and generating
both replace the dataset's QIDs as a whole, in one transaction, by COPY; a refused load
changes nothing. QIDs refer to one version of a dataset: ``load --replace`` drops them
(ON DELETE CASCADE, sql/schema/030_qids.sql).

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
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import psycopg

from anonymizers.db.connection import connect
from anonymizers.db.sqlfiles import compose_sql, run_sql_file
from anonymizers.errors import InputError
from anonymizers.release.spec import area_of_use, utm_srid

__all__ = [
    "QID_COLUMNS",
    "QidGenerationResult",
    "QidLoadResult",
    "StoredQids",
    "generate_and_store_qids",
    "load_qids",
    "store_qids",
]

QID_COLUMNS = ("user_id", "t")
EXAMPLES = 5  # lines or persons named in an error message
GENERATION_WORK = "pg_temp"  # the preparation's tables live and die with the session


class StoredQids(NamedTuple):
    removed: int  # the dataset's QIDs before
    stored: int  # its QIDs now


@dataclass(frozen=True)
class _Dataset:
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


@dataclass(frozen=True)
class QidGenerationResult:
    """What a QID generation did, on which time grid."""

    dataset: str
    dataset_id: int
    strategy: str
    max_size: int
    seed: int
    interval_s: int
    grid_start: datetime  # time point 0: the first fix floored to the interval
    n_time_points: int
    n_objects: int  # persons with a position at some time point
    n_qids: int
    n_persons: int  # persons with a QID
    replaced: int

    def summary(self) -> str:
        return (f"generated {self.n_qids} QID time(s) of {self.n_persons} of "
                f"{self.n_objects} person(s) for dataset {self.dataset!r} "
                f"({self.strategy}, max_size {self.max_size}, seed {self.seed}; "
                f"{self.n_time_points} time points every {self.interval_s} s from "
                f"{self.grid_start.isoformat()}); replaced {self.replaced}")


def store_qids(conn: psycopg.Connection, dataset_id: int, user_ids: Sequence[str] | np.ndarray,
               times: Sequence[datetime] | np.ndarray | pd.DatetimeIndex) -> StoredQids:
    """Replace the QIDs of ``dataset_id`` by the pairs (``user_ids[i]``, ``times[i]``).

    Runs in the caller's transaction (the replacement is atomic when ``conn`` is not in
    autocommit mode); the rows go in by one COPY. Naive times are UTC. Nothing is checked
    here but what the table enforces (the dataset exists, no pair twice): callers check
    their input first (:func:`load_qids`) or build it valid (:func:`generate_and_store_qids`).
    """
    # to_csv writes aware times with their offset ("2008-02-02 07:36:08.5+00:00").
    rows = pd.DataFrame({"dataset_id": dataset_id,
                         "user_id": np.asarray(user_ids, dtype=object),
                         "t": pd.to_datetime(np.asarray(times), utc=True)})
    [(removed,)] = run_sql_file(conn, "qids/delete.sql", {"dataset_id": dataset_id})
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
        target = _dataset(conn, dataset)
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


def _dataset(conn: psycopg.Connection, name: str) -> _Dataset:
    """The dataset row, locked against a concurrent replace; InputError if there is none."""
    rows = run_sql_file(conn, "qids/dataset.sql", {"name": name})
    if not rows:
        known = [known for (known,) in run_sql_file(conn, "qids/dataset_names.sql")]
        listed = ", ".join(known) if known else "none is loaded yet"
        raise InputError(f"no dataset {name!r} ({listed}). Load its points first "
                         f"(anonymizers load FILE --dataset {name}) or name a loaded one.")
    dataset_id, t_min, t_max, lon, lat = rows[0]
    return _Dataset(name, int(dataset_id), t_min, t_max, float(lon), float(lat))


def _check_period(frame: pd.DataFrame, target: _Dataset, path: Path) -> None:
    first, last = pd.Timestamp(target.t_min), pd.Timestamp(target.t_max)
    outside = ((frame["t"] < first) | (frame["t"] > last)).to_numpy()
    _refuse_lines(path, outside, f"a time outside dataset {target.name!r}'s data "
                  f"({first.isoformat()} .. {last.isoformat()}, its first and last fix)",
                  "Check that the QIDs are of this dataset, and their time zone.")


def _check_persons(conn: psycopg.Connection, target: _Dataset, path: Path) -> None:
    """Every person with a QID has fixes in the dataset (checked on the rows just copied:
    the error rolls them back)."""
    [(count, examples)] = run_sql_file(conn, "qids/unknown_persons.sql",
                                       {"dataset_id": target.dataset_id, "examples": EXAMPLES})
    if count:
        shown = ", ".join(map(repr, examples)) + (", ..." if count > EXAMPLES else "")
        raise InputError(f"{path}: {count} user_id(s) have no fix in dataset "
                         f"{target.name!r} ({shown}). Check that the QIDs are of this "
                         "dataset, or remove those rows. Nothing was loaded.")


def generate_and_store_qids(dataset: str, strategy: str, max_size: int, seed: int,
                            interval_s: int = 300, url: str | None = None, *,
                            srid: int | None = None) -> QidGenerationResult:
    """Generate QIDs of one configuration for ``dataset`` and make them its QIDs.

    Presence comes from the MOB preparation (sql/mob/010, 020) over the whole dataset, on
    a grid of ``interval_s`` from the first fix floored to a multiple of the interval
    (since 1970) to its last fix; a person is present at a time point when it has a
    position there (§6.1: carried forward within a trajectory). The generated time points
    are stored as timestamps of that grid, so a release with the same interval and a
    window aligned to it maps each to the same time point; a person is an object there
    if it has a position in that window (fixes outside the CRS's area of use, here that
    of ``srid``, default the UTM zone of the dataset's median fix as in a release, do not
    count). All in one transaction.

    References
    ----------
    Yarovoy et al., EDBT 2009, §6.1 (constant sampling rate, carried forward) and §6.2
    (QID configurations; see :func:`anonymizers.families.mob.qid_generation.generate_qids`).
    """
    from anonymizers.families.mob.qid_generation import check_parameters, generate_qids

    check_parameters(strategy, max_size)  # before the preparation's work, not after
    if interval_s <= 0:
        raise InputError(f"interval must be a positive number of seconds (got {interval_s}).")
    with connect(url) as conn:
        target = _dataset(conn, dataset)
        grid = _grid(target, interval_s, srid)
        presence, user_ids = _presence(conn, grid, interval_s)
        objects, times = generate_qids(presence, strategy, max_size, seed)
        start = grid["window_start"]
        stamps = (np.datetime64(start.replace(tzinfo=None), "us")
                  + times * np.timedelta64(interval_s, "s"))  # UTC, naive
        stored = store_qids(conn, target.dataset_id, user_ids[objects], stamps)
    return QidGenerationResult(
        dataset, target.dataset_id, strategy, max_size, seed, interval_s, start,
        presence.shape[1], presence.shape[0], stored.stored, len(np.unique(objects)),
        stored.removed)


def _grid(target: _Dataset, interval_s: int, srid: int | None) -> dict[str, Any]:
    """Window parameters covering the whole dataset on an interval-aligned grid."""
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    first = (target.t_min - epoch) // timedelta(seconds=interval_s)
    last = (target.t_max - epoch) // timedelta(seconds=interval_s)
    srid = srid or utm_srid(target.lon_median, target.lat_median)
    return {"dataset_id": target.dataset_id,
            "window_start": epoch + timedelta(seconds=first * interval_s),
            "window_end": epoch + timedelta(seconds=(last + 1) * interval_s),
            "srid": srid, **area_of_use(srid)}


def _presence(conn: psycopg.Connection, grid: dict[str, Any],
              interval_s: int) -> tuple[np.ndarray, np.ndarray]:
    """The presence matrix (objects x time points) and each object's user_id."""
    from anonymizers.families.mob.preparation import DEFAULT_CELL_SIZE, prepare_positions

    counts = prepare_positions(conn, GENERATION_WORK, grid, DEFAULT_CELL_SIZE, interval_s)
    runs = np.array(run_sql_file(conn, "qids/presence.sql", work=GENERATION_WORK),
                    dtype=np.int64).reshape(-1, 3)
    # Each run adds 1 from its first time point on and takes it back after its last (an
    # object's runs are disjoint: the sum is 0 or 1, int8 keeps the matrix small).
    steps = np.zeros((counts["objects"], counts["time_points"] + 1), dtype=np.int8)
    np.add.at(steps, (runs[:, 0], runs[:, 1]), 1)
    np.add.at(steps, (runs[:, 0], runs[:, 2] + 1), -1)
    presence = np.cumsum(steps, axis=1, dtype=np.int8)[:, :-1] > 0
    user_ids = np.array([user for (user,) in run_sql_file(
        conn, "qids/objects.sql", work=GENERATION_WORK)], dtype=object)
    return presence, user_ids
