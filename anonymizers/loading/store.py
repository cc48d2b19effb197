"""Write validated points (and persons) into raw with COPY, visible all at once or not at all.

A dataset's partition ``raw.points_<id>`` is itself partitioned by range of a surrogate
trajectory key into leaves ``raw.points_<id>_<n>`` (see leaves.py: bounds that name no
trajectory), so that the work uses every core; its
persons go to ``raw.persons_<id>``, a partition of raw.persons:

1. build, one connection per leaf, in parallel: create the table, fill it by binary
   COPY while the loader streams the file's chunks into it (Staging.send: each leaf's
   COPY is fed from a queue of FEED_DEPTH buffers, so the loader never holds more than a
   few chunks), build its indexes in one transaction (with wal_level=minimal nothing of
   it is WAL-logged: it is fsynced once at commit), then analyse it. Once the last chunk
   is sent, the persons the points reference go to their own table on one more
   connection. Nothing reads a table that is not attached.
2. publish: one short transaction checks the name (refuse, or --replace), registers the
   dataset, gathers the leaves under ``raw.points_<id>``, attaches that to raw.points and
   the persons to raw.persons: every CHECK and index already matches, so no scan and no
   index build; the persons' foreign key is checked by one query. The places of a
   place-sequence dataset (a few thousand rows at most, as a rule) are copied into
   raw.places by that same transaction.

A failure drops those tables; a killed load leaves committed ones that the next load
drops (orphan_partitions.sql), after checking no running load holds them (advisory lock).
"""

from __future__ import annotations

import json
import queue
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass
from types import TracebackType
from typing import Any

import numpy as np
import pandas as pd
import psycopg
from psycopg import sql

from anonymizers.db.connection import connect
from anonymizers.db.sqlfiles import compose_sql, fetch_row, fetch_rows, run_sql_file
from anonymizers.errors import InputError
from anonymizers.loading.binary_copy import (
    COLUMNS,
    HEADER,
    TRAILER,
    PlaceRows,
    PointRows,
    binary_copy_places,
    binary_copy_rows,
)
from anonymizers.loading.leaves import Leaf
from anonymizers.loading.persons import KNOWN_COLUMNS

__all__ = ["DatasetRecord", "Staging", "persons_csv"]

COPY_POINTS = f"COPY {{}} ({', '.join(COLUMNS)}) FROM STDIN (FORMAT binary)"
COPY_PERSONS = ("COPY {} (dataset_id, user_id, age, sex, education, income, attributes) "
                "FROM STDIN (FORMAT csv)")
STAGING_LOCK = 7_210_002  # advisory lock class: (STAGING_LOCK, dataset_id) while loading
_END = None  # in a leaf's feed: the COPY is complete
_ABORT = "abort"  # in a leaf's feed: the load failed, roll the leaf back


class _Aborted(Exception):
    """The loader gave up (bad input in a later chunk, say): roll this leaf back."""


@dataclass
class DatasetRecord:
    """The raw.datasets row of a load (parameters of sql/load/insert_dataset.sql)."""

    name: str
    source_file: str
    source_sha256: str
    persons_file: str | None
    n_points: int
    n_trajectories: int
    n_persons: int
    t_min: Any
    t_max: Any
    lon_median: float
    lat_median: float
    load_report: dict
    places_file: str | None = None  # a place-sequence dataset's places (raw.places)


def persons_csv(persons: pd.DataFrame, dataset_id: int) -> bytes:
    """raw.persons rows as CSV; columns other than the known ones become jsonb attributes."""
    extra = [c for c in persons.columns if c != "user_id" and c not in KNOWN_COLUMNS]
    attributes = ([json.dumps({key: value for key, value in record.items() if value != ""})
                   for record in _attribute_values(persons[extra]).to_dict("records")]
                  if extra else "{}")  # no per-row Python (and GIL) when there is nothing
    rows = pd.DataFrame({"dataset_id": dataset_id, "user_id": persons["user_id"]})
    for column in KNOWN_COLUMNS:
        rows[column] = persons[column] if column in persons.columns else None
    rows["attributes"] = attributes
    return rows.to_csv(index=False, header=False).encode()


def _attribute_values(extra: pd.DataFrame) -> pd.DataFrame:
    """The attribute columns as JSON values: a column whose every non-empty cell is a finite
    number holds numbers (a demographic grid can then use it: it reads JSON numbers only);
    any other column keeps its text. Empty cells stay "" (left out of the object)."""
    values = extra.astype(object)
    for column in extra.columns:
        text = extra[column].astype("string").fillna("")
        filled = text != ""
        parsed = pd.to_numeric(text.where(filled), errors="coerce")
        if filled.any() and parsed[filled].notna().all() \
                and np.isfinite(parsed[filled].astype(float)).all():
            values[column] = parsed.astype(float).astype(object).where(filled, "")
    return values


def _copy(conn: psycopg.Connection, statement: sql.Composed,
          chunks: Iterable[bytes | memoryview]) -> None:
    """COPY the chunks in turn: each is sent while the server stores the previous one."""
    with conn.cursor().copy(statement) as copy:
        for chunk in chunks:
            copy.write(chunk)


def _exists(name: str) -> InputError:
    return InputError(f"dataset {name!r} already exists; choose another --dataset name, "
                      "or pass --replace to swap it atomically.")


def _drop_orphans(conn: psycopg.Connection) -> None:
    for orphan in fetch_rows(conn, "load/orphan_partitions.sql"):
        dataset_id = orphan["dataset_id"]
        taken = fetch_row(conn, "load/try_staging_lock.sql",
                          {"lock": STAGING_LOCK, "dataset_id": dataset_id})
        if taken and taken["taken"]:
            conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(
                sql.Identifier("raw", orphan["relname"])))
            conn.execute("SELECT pg_advisory_unlock(%s, %s)", (STAGING_LOCK, dataset_id))


def _draw_id(guard: psycopg.Connection) -> int:
    """A new dataset id, locked for this load (the orphan sweep leaves locked ids alone)."""
    _drop_orphans(guard)
    [drawn] = fetch_rows(guard, "load/draw_dataset_id.sql")
    dataset_id = drawn["dataset_id"]
    guard.execute("SELECT pg_advisory_lock(%s, %s)", (STAGING_LOCK, dataset_id))
    return int(dataset_id)


def _partition_name(dataset_id: int) -> tuple[str, str]:
    return ("raw", f"points_{dataset_id}")


def _leaf_name(dataset_id: int, number: int) -> tuple[str, str]:
    return ("raw", f"points_{dataset_id}_{number}")


def _persons_name(dataset_id: int) -> tuple[str, str]:
    return ("raw", f"persons_{dataset_id}")


def _analyze(conn: psycopg.Connection, name: str, params: dict[str, Any] | None = None,
             **identifiers: tuple[str, str]) -> None:
    """Commit, then run an ANALYZE file on the committed table.

    Analysed in the transaction that inserted its rows, or before the backend reported
    them (it does so at most once a second), a table would still count those rows as
    changed since its last ANALYZE, and autovacuum would analyse it again seconds later.
    """
    conn.commit()
    conn.autocommit = True
    if conn.info.server_version >= 150000:  # older servers: at worst one more autoanalyze
        conn.execute("SELECT pg_stat_force_next_flush()")  # reported as the backend idles
    run_sql_file(conn, name, params, **identifiers)


def _build_leaf(url: str | None, dataset_id: int, leaf: Leaf, leaves: int) -> None:
    """Create one of ``leaves`` leaves, fill it from its feed, index it in one transaction;
    analyse it."""
    name = _leaf_name(dataset_id, leaf.number)
    bounds = {"dataset_id": dataset_id, "lower": leaf.lower, "upper": leaf.upper}
    with connect(url) as conn:
        run_sql_file(conn, "load/create_leaf.sql", bounds, leaf=name)
        with conn.cursor().copy(sql.SQL(COPY_POINTS).format(sql.Identifier(*name))) as copy:
            copy.write(HEADER)
            while (buffers := leaf.feed.get()) is not _END:
                if buffers == _ABORT:
                    raise _Aborted  # rolls back: the COPY, the table made in its transaction
                for buffer in buffers:
                    copy.write(buffer)
            copy.write(TRAILER)
        run_sql_file(conn, "load/index_leaf.sql", leaf=name)
        _analyze(conn, "load/analyze_leaf.sql", {"leaves": leaves}, leaf=name)


def _build_persons(url: str | None, dataset_id: int, persons: pd.DataFrame) -> None:
    """The dataset's persons in a table of their own, indexed, in one transaction.

    Not analysed here (autovacuum does it, as it always did for raw.persons): nothing
    plans a query on a dataset's persons right after loading it.
    """
    name = _persons_name(dataset_id)
    payload = persons_csv(persons, dataset_id)
    with connect(url) as conn:
        run_sql_file(conn, "load/create_persons.sql", {"dataset_id": dataset_id},
                     persons=name)
        _copy(conn, sql.SQL(COPY_PERSONS).format(sql.Identifier(*name)), [payload])
        run_sql_file(conn, "load/index_persons.sql", persons=name)


def _gather(conn: psycopg.Connection, dataset_id: int, leaves: list[Leaf]) -> None:
    """Make raw.points_<id> of the leaves and attach it to raw.points."""
    partition = _partition_name(dataset_id)
    run_sql_file(conn, "load/create_partition.sql", {"dataset_id": dataset_id},
                 partition=partition)
    for leaf in leaves:
        run_sql_file(conn, "load/attach_leaf.sql", {"lower": leaf.lower, "upper": leaf.upper},
                     partition=partition, leaf=_leaf_name(dataset_id, leaf.number))
    run_sql_file(conn, "load/attach_partition.sql", {"dataset_id": dataset_id},
                 partition=partition)


def _publish(url: str | None, dataset_id: int, leaves: list[Leaf], record: DatasetRecord,
             with_persons: bool, replace: bool, places: PlaceRows | None) -> None:
    with connect(url) as conn:
        # Two loads of one name serialise here rather than race on the UNIQUE constraint.
        conn.execute("SELECT pg_advisory_xact_lock(hashtext('raw.datasets:' || %s))",
                     (record.name,))
        row = fetch_row(conn, "load/dataset_id.sql", {"name": record.name})
        if row is not None and not replace:
            raise _exists(record.name)
        if row is not None:
            old = row["dataset_id"]
            run_sql_file(conn, "load/drop_dataset.sql", {"dataset_id": old},
                         partition=_partition_name(old), persons=_persons_name(old))
        params = {**asdict(record), "dataset_id": dataset_id,
                  "load_report": json.dumps(record.load_report)}
        run_sql_file(conn, "load/insert_dataset.sql", params)
        if places is not None:
            _copy(conn, compose_sql("load/copy_places.sql"),
                  [binary_copy_places(dataset_id, places)])
        _gather(conn, dataset_id, leaves)
        if with_persons:
            run_sql_file(conn, "load/attach_persons.sql", {"dataset_id": dataset_id},
                         persons=_persons_name(dataset_id))


def _drop_tables(guard: psycopg.Connection, names: list[tuple[str, str]]) -> None:
    if names:
        guard.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(
            sql.SQL(", ").join(sql.Identifier(*name) for name in names)))


def _drop_staged(guard: psycopg.Connection, dataset_id: int, leaves: list[Leaf]) -> None:
    names = [_partition_name(dataset_id), _persons_name(dataset_id)]
    _drop_tables(guard, names + [_leaf_name(dataset_id, leaf.number) for leaf in leaves])


class Staging:
    """One load's tables, filled while the file streams in, published all at once.

    ``with Staging(url, name, replace) as staging``: checks the name and draws the
    dataset's id; ``start(leaves)`` opens the leaves' connections, ``send`` streams rows
    to a leaf, ``publish`` completes them, loads the persons and makes it all visible in
    one transaction. Leaving the block by an exception (bad input in a late chunk, a
    failed leaf, Ctrl-C) rolls back every COPY and drops whatever was committed: nothing
    of the load stays visible.
    """

    def __init__(self, url: str | None, name: str, replace: bool) -> None:
        self.url, self.name, self.replace = url, name, replace
        self.leaves: list[Leaf] = []
        self.building: list[Future] = []
        self.pool: ThreadPoolExecutor | None = None
        self.dataset_id = 0

    def __enter__(self) -> Staging:
        self.guard = connect(self.url, autocommit=True)
        try:
            exists = fetch_row(self.guard, "load/dataset_id.sql", {"name": self.name})
            # Checked again under the lock when publishing.
            if exists is not None and not self.replace:
                raise _exists(self.name)
            self.dataset_id = _draw_id(self.guard)
        except BaseException:
            self.guard.close()
            raise
        return self

    def start(self, leaves: int) -> None:
        """Open ``leaves`` leaves, each on a connection of its own, waiting for rows."""
        self.leaves = [Leaf(number) for number in range(leaves)]
        # A thread per leaf, all at once (each waits on its feed), and one for the persons.
        self.pool = ThreadPoolExecutor(max_workers=leaves + 1)
        self.building = [self.pool.submit(_build_leaf, self.url, self.dataset_id, leaf, leaves)
                         for leaf in self.leaves]

    def send(self, number: int, rows: PointRows) -> None:
        """Queue ``rows`` for leaf ``number``'s COPY; waits while its feed is full."""
        leaf, building = self.leaves[number], self.building[number]
        buffers = list(binary_copy_rows(rows))
        while True:
            try:
                leaf.feed.put(buffers, timeout=0.2)
                break
            except queue.Full:
                if building.done():  # it failed: say why
                    building.result()
                    raise RuntimeError(f"leaf {number} stopped taking rows") from None
        leaf.rows += len(rows)

    def publish(self, record: DatasetRecord, persons: pd.DataFrame | None,
                places: PlaceRows | None) -> None:
        """Complete the leaves, load the persons, attach everything in one transaction."""
        for leaf, building in zip(self.leaves, self.building, strict=True):
            while not building.done():  # a failed leaf takes nothing more
                try:
                    leaf.feed.put(_END, timeout=0.2)
                    break
                except queue.Full:
                    continue
        if self.pool is None:
            raise RuntimeError("Staging.publish before Staging.start")
        if persons is not None:
            self.building.append(self.pool.submit(_build_persons, self.url, self.dataset_id,
                                                  persons))
        for building in self.building:
            building.result()  # the first failure, once every build has finished
        filled = [leaf for leaf in self.leaves if leaf.rows]
        _drop_tables(self.guard, [_leaf_name(self.dataset_id, leaf.number)
                                  for leaf in self.leaves if not leaf.rows])
        _publish(self.url, self.dataset_id, filled, record, persons is not None,
                 self.replace, places)

    def _abort(self) -> None:
        """Stop every leaf's COPY (rolled back) and wait for them all."""
        for leaf in self.leaves:
            try:
                while True:
                    leaf.feed.get_nowait()
            except queue.Empty:
                pass
            leaf.feed.put_nowait(_ABORT)
        for building in self.building:
            building.exception()  # waits; the failure that matters is the one raised

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        try:
            if error is not None:
                self._abort()
                _drop_staged(self.guard, self.dataset_id, self.leaves)
        finally:
            if self.pool is not None:
                self.pool.shutdown()
            self.guard.execute("SELECT pg_advisory_unlock(%s, %s)",
                               (STAGING_LOCK, self.dataset_id))
            self.guard.close()
