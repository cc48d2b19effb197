"""The same input, installation secret and parameters give the same release: every registered
method, built twice on the small synthetic city (two runs, two build schemas), publishes the
same tables as multisets of rows once the fresh random ids of each release are put aside.

Ids are fresh per release (privacy rule 5), so rows are compared through what an id stands
for: each id is replaced by the content of every row that carries it (its group's
rectangles, its cell's polygon, its object's positions), then the tables are compared as
multisets. Two releases that differ only in how their ids were drawn compare equal; two that
group, place or count anything differently do not."""

from __future__ import annotations

import hashlib
import importlib
from collections import Counter
from collections.abc import Callable
from typing import Any

import psycopg
import pytest
from pipeline_helpers import run_steps
from psycopg import sql

from anonymizers.families.base import load_family
from anonymizers.families.registry import FAMILIES, METHODS
from anonymizers.release.spec import ReleaseSpec

# Columns holding a release's fresh random ids, and the id space each one draws from (a
# cell id of flows.from_cell is a cells.cell_id; trajectories.cells is an array of them).
# A family may declare more in its contract support (FRESH_IDS).
FRESH_IDS: dict[str, str] = {
    "cell_id": "cell", "from_cell": "cell", "to_cell": "cell", "cells": "cell",
    "traj_id": "trajectory", "object_id": "object", "group_id": "group",
    "od_group_id": "od_group",
    **{column: space for family in FAMILIES.values()
       for column, space in getattr(importlib.import_module(family.contract), "FRESH_IDS",
                                    {}).items()},
}
# Ids fresh within another id (a demographic class is numbered within its group): left out;
# the class's row is still compared, as part of its group. fid is every table's row number
# (GIS tools' feature id), drawn in the random row order.
IGNORED = {"class_id", "fid"}

Row = dict[str, Any]


def _rows(conn: psycopg.Connection, schema: str, table: str) -> list[Row]:
    cursor = conn.cursor(row_factory=psycopg.rows.dict_row)
    rows = cursor.execute(sql.SQL("SELECT * FROM {}").format(
        sql.Identifier(schema, table))).fetchall()
    return [{column: tuple(value) if isinstance(value, list) else value
             for column, value in row.items() if column not in IGNORED} for row in rows]


def _ids_of(column: str, value: Any) -> tuple[Any, ...]:
    return tuple(value) if isinstance(value, tuple) else (value,)


def _without_ids(row: Row) -> tuple[Any, ...]:
    return tuple(sorted((column, FRESH_IDS.get(column, repr(value)))
                        for column, value in row.items()))


def _canonical(tables: dict[str, list[Row]]) -> dict[str, Counter[str]]:
    """Each table as a multiset of rows, every id replaced by the digest of the rows (with
    their own ids blanked) that carry it."""
    carriers: dict[tuple[str, Any], list[tuple[Any, ...]]] = {}
    for table, rows in tables.items():
        for row in rows:
            content = (table, _without_ids(row))
            for column in FRESH_IDS.keys() & row.keys():
                for value in _ids_of(column, row[column]):
                    carriers.setdefault((FRESH_IDS[column], value), []).append(
                        (column, content))
    names = {key: hashlib.sha256(repr(sorted(map(repr, found))).encode()).hexdigest()
             for key, found in carriers.items()}

    def rename(column: str, value: Any) -> Any:
        if column not in FRESH_IDS:
            return repr(value)
        return repr(tuple(names[(FRESH_IDS[column], v)] for v in _ids_of(column, value)))

    return {table: Counter(repr(sorted((column, rename(column, value))
                                       for column, value in row.items())) for row in rows)
            for table, rows in tables.items()}


def _build_twice(conn: psycopg.Connection, params: dict[str, Any],
                 reload: Callable[[], None]) -> list[dict[str, Counter]]:
    """The method's release tables, built by two runs with ``reload`` between them."""
    releases = []
    for run_id in ("twice-1", "twice-2"):
        if run_id == "twice-2":
            reload()
        # The release tables are complete after the method's own last step (the shared
        # steps after it add the manifest and metrics, and gate; their attacks take long).
        built = run_steps(params, run_id=run_id, until=METHODS[params["method"]].steps[-1])
        assert built is not None, "a second run must build, not find the release published"
        spec = ReleaseSpec.from_dict(built)
        family = load_family(spec.family)
        releases.append(_canonical({table: _rows(conn, spec.build_schema, table)
                                    for table in family.release_tables}))
    return releases


def _difference(first: dict[str, Counter], second: dict[str, Counter]) -> dict[str, int]:
    """Rows per table that are in one release and not in the other."""
    return {table: sum(((first[table] - second[table]) + (second[table] - first[table]))
                       .values()) for table in first if first[table] != second[table]}


def _reorder(conn: psycopg.Connection, dataset: str) -> None:
    """The same rows in another physical order: half the trajectories rewritten (an UPDATE
    writes new row versions at the end of the table), so a read without ORDER BY, or a
    tie an ORDER BY leaves open, sees them in another order."""
    conn.execute("UPDATE raw.points SET t = t WHERE dataset_id = (SELECT dataset_id FROM "
                 "raw.datasets WHERE name = %s) AND hashtext(traj_id) %% 2 = 0", (dataset,))
    conn.execute("VACUUM ANALYZE raw.points")


@pytest.mark.slow
@pytest.mark.parametrize("method", sorted(METHODS))
def test_the_same_input_and_parameters_give_the_same_release(loaded_city, conn, db_url,
                                                             small_city, method):
    """Between the two runs the city is loaded again (--replace): the same file, so the same
    input, though the load draws a new dataset id; and its rows are stored in another
    physical order."""
    from anonymizers.loading import load_dataset

    contract = importlib.import_module(FAMILIES[METHODS[method].family].contract)
    setup = getattr(contract, "setup", lambda dataset, url: None)

    def reload() -> None:
        points, persons = small_city
        load_dataset(points, loaded_city, persons=persons, replace=True, url=db_url)
        _reorder(conn, loaded_city)
        setup(loaded_city, db_url)

    setup(loaded_city, db_url)
    params = {"dataset": loaded_city, "method": method, "k": 3,
              **contract.CITY_PARAMS.get(method, {})}
    first, second = _build_twice(conn, params, reload)
    assert any(first.values()), f"{method}: nothing was built"
    assert first == second, (f"{method}: two runs built different releases (rows not in "
                             f"both, per table: {_difference(first, second)})")


def test_fresh_ids_are_put_aside_but_content_is_compared():
    """The comparison itself: a relabelling of ids compares equal, a regrouping does not."""
    cells = [{"cell_id": 1, "geom": "A"}, {"cell_id": 2, "geom": "B"}]
    flows = [{"from_cell": 1, "to_cell": 2, "n": 5}]
    relabelled = [{"cell_id": 7, "geom": "A"}, {"cell_id": 3, "geom": "B"}]
    assert (_canonical({"cells": cells, "flows": flows})
            == _canonical({"cells": relabelled, "flows": [{"from_cell": 7, "to_cell": 3,
                                                            "n": 5}]}))
    assert (_canonical({"cells": cells, "flows": flows})
            != _canonical({"cells": cells, "flows": [{"from_cell": 2, "to_cell": 1, "n": 5}]}))
    groups = [{"group_id": 1, "n": 3}, {"group_id": 2, "n": 3}]
    regions = [{"group_id": 1, "geom": "A"}, {"group_id": 1, "geom": "B"},
               {"group_id": 2, "geom": "C"}, {"group_id": 2, "geom": "D"}]
    regrouped = [{"group_id": 1, "geom": "A"}, {"group_id": 1, "geom": "C"},
                 {"group_id": 2, "geom": "B"}, {"group_id": 2, "geom": "D"}]
    assert (_canonical({"groups": groups, "group_regions": regions})
            != _canonical({"groups": groups, "group_regions": regrouped}))


# One day of real T-Drive taxis: TCAA's default parameters, as a scheduled daily run makes
# them.
TDRIVE_DAY = ("2008-02-03T00:00:00Z", "2008-02-04T00:00:00Z")


@pytest.mark.realdata
def test_tcaa_builds_the_same_release_of_a_tdrive_day_twice(conn, db_url, tmp_path):
    """The day is loaded again (--replace) between the two runs, its rows stored in another
    order. (Each load draws a new dataset id; the clustering's random choices were seeded
    with it, and every group of the day differed.)"""
    from realdata_helpers import tdrive_window

    from anonymizers.loading import load_dataset

    day = tdrive_window(tmp_path, *TDRIVE_DAY)
    load_dataset(day, "tdrive", url=db_url)

    def reload() -> None:
        load_dataset(day, "tdrive", replace=True, url=db_url)
        _reorder(conn, "tdrive")

    first, second = _build_twice(conn, {"dataset": "tdrive", "method": "tcaa", "k": 5},
                                 reload)
    assert first["groups"], "nothing was built"
    assert first == second, (f"two runs built different releases (rows not in both, per "
                             f"table: {_difference(first, second)})")
