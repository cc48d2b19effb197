"""Verify a generalization release (grid_kam_cut, kam_cut, kam_rec) from its tables and raw data.

It reads only the release schema under test and ``raw``: never the work schema or the
anonymizer's bookkeeping. Checks:

1. the input is the one the release was made from (fingerprint);
2. every published trajectory's cell sequence is contained in the re-derived sequences of
   at least k distinct owners (persons by default);
3. every published flow A->B is the pattern <A, B> of at least k owners and publishes a
   count of at least k; with fixes-only membership (the grid) its counts are also the
   verifier's own exact recount;
4. every published cell is visited by at least k owners, so no cell can point at fewer
   than k people;
5. every data-derived generator (a centroid other than its polygon's own) has fixes of at
   least k owners within the tessellation radius r of it: it marks no place where fewer
   than k people were. The anonymizer enforces the same rule, and also that a generator
   is the mean of the fixes of at least k persons (which only it can know);
6. no raw traj_id / user_id appears in any text column, and no timestamp column is
   published (time is generalized to the release window).

The re-derivation is anonymizers/verifiers/rederive.py (GEOS via shapely, not the
anonymizer's SQL).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import UTC
from typing import Any

import numpy as np
import pandas as pd
import psycopg
import pyarrow as pa
import pyarrow.csv as pacsv
import shapely
from psycopg import sql

from anonymizers.db.sqlfiles import copy_out, run_sql_file
from anonymizers.errors import InputError
from anonymizers.release.spec import area_of_use
from anonymizers.verifiers.containment import SupportIndex
from anonymizers.verifiers.rederive import OUTSIDE, Derived, derive_visits

__all__ = ["VerifierResult", "verify_generalization_release"]

CROSSING_METHODS = {"kam_cut", "kam_rec"}  # membership includes cells crossed between fixes
SHOWN = 10  # violations quoted in the result


@dataclass
class VerifierResult:
    schema: str
    k: int
    k_counts: str
    checks: dict[str, Any] = field(default_factory=dict)
    violations: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.violations

    def to_json(self) -> dict[str, Any]:
        return {"passed": self.passed, "k": self.k, "k_counts": self.k_counts,
                "checks": self.checks, "violations": self.violations[:SHOWN],
                "n_violations": len(self.violations)}


def _manifest(conn: psycopg.Connection, schema: str) -> dict[str, Any]:
    cur = conn.execute(sql.SQL("SELECT * FROM {}.manifest").format(sql.Identifier(schema)))
    row = cur.fetchone()
    if row is None or cur.description is None:
        raise InputError(f"{schema} has no manifest row: not a release")
    return dict(zip([column.name for column in cur.description], row, strict=True))


def _dataset(conn: psycopg.Connection, manifest: dict[str, Any]) -> tuple[int, str]:
    row = conn.execute("SELECT dataset_id, source_sha256 FROM raw.datasets WHERE name = %s",
                       (manifest["dataset"],)).fetchone()
    if row is None:
        raise InputError(f"dataset {manifest['dataset']!r} of this release is no longer loaded")
    return int(row[0]), str(row[1])


def _fingerprint(sha: str, dataset_id: int, manifest: dict[str, Any]) -> str:
    start = manifest["window_start"].astimezone(UTC).isoformat()
    end = manifest["window_end"].astimezone(UTC).isoformat()
    return hashlib.sha256(f"{sha}|{dataset_id}|{start}|{end}".encode()).hexdigest()


def _derive(conn: psycopg.Connection, schema: str, dataset_id: int,
            manifest: dict[str, Any]) -> tuple[Derived, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The verifier's visits, and the fixes (x, y, owner) they come from."""
    params = {"dataset_id": dataset_id, "window_start": manifest["window_start"],
              "window_end": manifest["window_end"], "srid": manifest["srid"],
              **area_of_use(manifest["srid"])}
    points = pacsv.read_csv(
        pa.py_buffer(copy_out(conn, "verify/derive_sequences.sql", params)),
        read_options=pacsv.ReadOptions(column_names=["traj", "user", "x", "y"]),
        convert_options=pacsv.ConvertOptions(column_types={"traj": pa.string(),
                                                           "user": pa.string()}))
    traj = pd.factorize(points["traj"].to_pandas(), sort=False)[0]
    owner = (pd.factorize(points["user"].to_pandas(), sort=False)[0]
             if manifest["k_counts"] == "persons" else traj)
    rows = run_sql_file(conn, "verify/published_cells.sql", release=schema)
    ids = np.array([row[0] for row in rows], dtype=np.int64)
    polygons = shapely.from_wkb([bytes(row[1]) for row in rows])
    x, y = points["x"].to_numpy(), points["y"].to_numpy()
    derived = derive_visits(traj, owner, x, y, ids, polygons,
                            crossings=manifest["method"] in CROSSING_METHODS)
    return derived, (x, y, owner)


def _check_trajectories(conn, schema: str, derived: Derived, k: int,
                        result: VerifierResult) -> SupportIndex:
    inside, owners = derived.sequences(drop_outside=True)
    index = SupportIndex(inside, owners)
    published = conn.execute(sql.SQL("SELECT DISTINCT cells FROM {}.trajectories").format(
        sql.Identifier(schema))).fetchall()
    shortfalls = index.shortfalls([tuple(row[0]) for row in published], k)
    result.checks["distinct_published_sequences"] = len(published)
    result.checks["sequences_below_k"] = len(shortfalls)
    for short in shortfalls:
        result.violations.append(f"trajectory cells {list(short.pattern)} are contained in only "
                                 f"{short.support} {result.k_counts}' sequences (k={k})")
    return index


def _recount_flows(derived: Derived) -> pd.DataFrame:
    """Distinct owners and trajectories per consecutive move between published cells."""
    move = (derived.traj[1:] == derived.traj[:-1]) & (derived.cell[1:] != OUTSIDE) & (
        derived.cell[:-1] != OUTSIDE)
    moves = pd.DataFrame({"from_cell": derived.cell[:-1][move], "to_cell": derived.cell[1:][move],
                          "owner": derived.owner[1:][move], "traj": derived.traj[1:][move]})
    return moves.groupby(["from_cell", "to_cell"]).agg(
        owners=("owner", "nunique"), trajectories=("traj", "nunique"))


def _check_flows(conn, schema: str, derived: Derived, index: SupportIndex, k: int,
                 exact: bool, result: VerifierResult) -> None:
    """Each flow A->B is the pattern <A, B>: it needs k supporters. With fixes-only
    membership (the grid) the counts are also recounted exactly."""
    recount = _recount_flows(derived) if exact else None
    rows = conn.execute(sql.SQL(
        "SELECT from_cell, to_cell, n_persons, n_trajectories FROM {}.flows").format(
        sql.Identifier(schema))).fetchall()
    result.checks["flows"] = len(rows)
    for from_cell, to_cell, n_persons, n_trajectories in rows:
        support = index.support((from_cell, to_cell), stop_at=k)
        if support < k:
            result.violations.append(f"flow {from_cell}->{to_cell}: the move is made by only "
                                     f"{support} {result.k_counts} (k={k})")
        published = n_persons if result.k_counts == "persons" else n_trajectories
        if published < k:
            result.violations.append(f"flow {from_cell}->{to_cell} publishes a count of "
                                     f"{published} {result.k_counts}, below k={k}")
        if recount is not None:
            _compare_counts(recount, from_cell, to_cell, n_persons, n_trajectories, result)


def _compare_counts(recount: pd.DataFrame, from_cell: int, to_cell: int, n_persons: int,
                    n_trajectories: int, result: VerifierResult) -> None:
    owners, trajectories = (recount.loc[(from_cell, to_cell)].tolist()
                            if (from_cell, to_cell) in recount.index else (0, 0))
    if result.k_counts == "persons" and n_persons != owners:
        result.violations.append(f"flow {from_cell}->{to_cell} says {n_persons} persons, "
                                 f"the verifier counts {owners}")
    if n_trajectories != trajectories:
        result.violations.append(f"flow {from_cell}->{to_cell} says {n_trajectories} "
                                 f"trajectories, the verifier counts {trajectories}")


def _check_generators(conn, schema: str, manifest: dict[str, Any], derived_points,
                      k: int, result: VerifierResult) -> None:
    """A data-derived generator (centroid other than its polygon's own) must have fixes of
    at least k owners within the radius r of it: it may not point at fewer than k people."""
    rows = run_sql_file(conn, "verify/data_derived_generators.sql", release=schema)
    result.checks["data_derived_generators"] = len(rows)
    if not rows:
        return
    params = manifest["parameters"]
    reach = float(params["radius"])
    x, y, owner = derived_points
    tree = shapely.STRtree(shapely.points(x, y))
    centroids = shapely.points([(row[1], row[2]) for row in rows])
    which, near = tree.query(centroids, predicate="dwithin", distance=reach)
    owners = pd.DataFrame({"g": which, "o": owner[near]}).groupby("g")["o"].nunique()
    thin = [rows[g][0] for g in range(len(rows)) if owners.get(g, 0) < k]
    result.checks["generators_below_k"] = len(thin)
    for cell in thin:
        result.violations.append(f"the generator of cell {cell} has fixes of fewer than k={k} "
                                 f"{result.k_counts} within {reach:.0f} m: it points at them")


def _check_cells(conn, schema: str, index: SupportIndex, k: int,
                 result: VerifierResult) -> None:
    cells = [row[0] for row in conn.execute(sql.SQL("SELECT cell_id FROM {}.cells").format(
        sql.Identifier(schema))).fetchall()]
    thin = [cell for cell in cells if index.support((cell,), stop_at=k) < k]
    result.checks["cells"] = len(cells)
    result.checks["cells_below_k"] = len(thin)
    for cell in thin:
        result.violations.append(f"cell {cell} is visited by fewer than k={k} "
                                 f"{result.k_counts}: its geometry would point at them")


def _check_identifiers_and_time(conn, schema: str, dataset_id: int,
                                result: VerifierResult) -> None:
    columns = run_sql_file(conn, "verify/identifier_leaks.sql", {"schema": schema})
    leaked = 0
    for table, column in columns:
        n = run_sql_file(conn, "verify/count_leaked_ids.sql", {"dataset_id": dataset_id},
                         source=(schema, table), column=column)[0][0]
        if n:
            leaked += n
            result.violations.append(f"{table}.{column} holds {n} raw traj_id/user_id values")
    result.checks["identifier_columns_scanned"] = len(columns)
    result.checks["raw_identifiers_found"] = leaked
    timed = conn.execute(
        "SELECT table_name || '.' || column_name FROM information_schema.columns "
        "WHERE table_schema = %s AND table_name NOT IN ('manifest', 'metrics') "
        "AND data_type LIKE 'time%%'", (schema,)).fetchall()
    for (name,) in timed:
        result.violations.append(f"{name} publishes time finer than the release window")


def verify_generalization_release(conn: psycopg.Connection, schema: str) -> VerifierResult:
    """Check the privacy model of the release (or build) schema ``schema``."""
    manifest = _manifest(conn, schema)
    k = int(manifest["k"])
    result = VerifierResult(schema, k, manifest["k_counts"])
    dataset_id, sha = _dataset(conn, manifest)
    if _fingerprint(sha, dataset_id, manifest) != manifest["input_fingerprint"]:
        result.violations.append("the dataset changed since this release was built: "
                                 "the release cannot be verified against it")
        return result
    derived, fixes = _derive(conn, schema, dataset_id, manifest)
    result.checks["input_trajectories"] = derived.n_trajectories
    index = _check_trajectories(conn, schema, derived, k, result)
    exact = manifest["method"] not in CROSSING_METHODS
    _check_flows(conn, schema, derived, index, k, exact, result)
    _check_cells(conn, schema, index, k, result)
    _check_generators(conn, schema, manifest, fixes, k, result)
    _check_identifiers_and_time(conn, schema, dataset_id, result)
    return result
