"""The verifier's derivation chunk by chunk equals one derivation over the whole window.

anonymizers/verifiers/fixes.py streams the window's fixes in chunks of whole trajectories
(issue 12: memory must not grow with the fixes); these tests hold it to what the verifier
did before, reading every fix at once: the same visits in the same order, the same person
numbers, the same count of persons near each data-derived generator.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import psycopg
import pyarrow as pa
import pytest
import shapely

from anonymizers.db.arrow_reads import read_batches
from anonymizers.db.groups import whole_groups
from anonymizers.db.sqlfiles import fetch_columns
from anonymizers.families.generalization import verifier as generalization_module
from anonymizers.families.generalization.declaration import KamCutParams
from anonymizers.families.generalization.verifier import derive_release_visits
from anonymizers.families.registry import METHODS
from anonymizers.processes import PROCESSES_ENV
from anonymizers.release.spec import area_of_use
from anonymizers.verifiers import fixes as fixes_module
from anonymizers.verifiers.base import read_release
from anonymizers.verifiers.fixes import Fixes, Numbering, PersonsNear
from anonymizers.verifiers.rederive import OUTSIDE, CellLocator, Derived, derive_visits

SMALL_CHUNK = 2_000  # fixes: the small city (~20k) comes in about ten chunks


def table_of(traj: list[str], user: list[str]) -> pa.Table:
    n = len(traj)
    return pa.table({"traj_id": traj, "user_id": user, "x": np.arange(n, dtype=float),
                     "y": np.zeros(n)})


def batches_of(table: pa.Table, rows: int) -> list[pa.RecordBatch]:
    return table.to_batches(max_chunksize=rows)


def toy_window(seed: int = 3) -> pa.Table:
    """Trajectories of 1-40 fixes; persons recur across trajectories far apart."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 40, size=120)
    users = [f"u{rng.integers(0, 25)}" for _ in lengths]
    traj = [f"t{i:04d}" for i, n in enumerate(lengths) for _ in range(n)]
    user = [users[i] for i, n in enumerate(lengths) for _ in range(n)]
    return table_of(traj, user)


@pytest.mark.parametrize("chunk", [1, 7, 100, 1_000, 10_000])
@pytest.mark.parametrize("batch", [1, 13, 500])
def test_chunks_hold_whole_trajectories_and_every_row_once(chunk: int, batch: int) -> None:
    window = toy_window()
    tables = list(whole_groups(batches_of(window, batch), chunk))
    assert pa.concat_tables(tables).equals(window)
    seen: set[str] = set()
    for table in tables:
        here = set(table["traj_id"].to_pylist())
        assert not here & seen, "a trajectory is split across chunks"
        seen |= here
    # A chunk is cut once chunk rows have come, before the trajectory still coming.
    for table, after in itertools.pairwise(tables):
        first = after["traj_id"][0].as_py()
        assert table.num_rows + after["traj_id"].to_pylist().count(first) >= chunk
    if chunk == 100 and batch == 13:
        assert len(tables) > 5


def test_a_trajectory_longer_than_a_chunk_is_kept_whole() -> None:
    window = table_of(["a"] * 50 + ["b"] * 3, ["p"] * 53)
    tables = list(whole_groups(batches_of(window, 4), 10))
    assert [t["traj_id"].to_pylist() for t in tables] == [["a"] * 50, ["b"] * 3]


def test_no_batches_give_no_chunk() -> None:
    assert list(whole_groups([], 10)) == []


@pytest.mark.parametrize("batch", [1, 13, 500])
def test_trajectory_and_person_numbers_across_chunks_are_the_whole_windows(batch: int
                                                                           ) -> None:
    """k counts distinct persons over the whole window: a person met again in a later
    chunk keeps the number of its first appearance."""
    window = toy_window()
    numbering = Numbering()
    parts = [numbering.number(t) for t in whole_groups(batches_of(window, batch), 50)]
    assert len(parts) > 3
    traj = np.concatenate([p.traj for p in parts])
    owner = np.concatenate([p.owner for p in parts])
    assert traj.dtype == owner.dtype == np.int64
    np.testing.assert_array_equal(traj, pd.factorize(window["traj_id"].to_pandas())[0])
    np.testing.assert_array_equal(owner, pd.factorize(window["user_id"].to_pandas())[0])
    assert numbering.trajectories == 120 and len(numbering.persons) == len(set(owner))


def random_fixes(seed: int = 5, trajectories: int = 60) -> Fixes:
    """Random walks over a 1 km square and beyond (some fixes in no cell)."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 30, size=trajectories)
    traj = np.repeat(np.arange(trajectories), lengths)
    persons = rng.integers(0, 15, size=trajectories)
    starts = rng.uniform(-200, 1_000, size=(trajectories, 2))
    walked = rng.normal(0, 60, size=(len(traj), 2)).cumsum(axis=0)
    first = np.r_[0, np.cumsum(lengths)[:-1]]
    xy = np.repeat(starts, lengths, axis=0) + walked - walked[first][traj]
    return Fixes(traj, pd.factorize(persons[traj])[0].astype(np.int64), xy[:, 0], xy[:, 1])


def voronoi_cells(seed: int = 9) -> tuple[np.ndarray, np.ndarray]:
    """Voronoi cells of random generators clipped to the 1 km square: cell ids shuffled."""
    rng = np.random.default_rng(seed)
    box = shapely.box(0, 0, 1_000, 1_000)
    regions = shapely.get_parts(shapely.voronoi_polygons(
        shapely.multipoints(rng.uniform(0, 1_000, size=(30, 2)))))
    polygons = shapely.intersection(regions, box)
    return rng.permutation(len(polygons)).astype(np.int64) + 100, polygons


def split(fixes: Fixes, bounds: list[int]) -> list[Fixes]:
    """The fixes cut before the trajectories ``bounds`` (trajectory numbers)."""
    cuts = np.searchsorted(fixes.traj, bounds)
    return [Fixes(*(a[lo:hi] for a in (fixes.traj, fixes.owner, fixes.x, fixes.y)))
            for lo, hi in zip(np.r_[0, cuts], np.r_[cuts, len(fixes)], strict=True)]


def assert_same_visits(a: Derived, b: Derived) -> None:
    for name in ("traj", "owner", "cell"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


@pytest.mark.parametrize("crossings", [False, True])
def test_visits_of_chunks_concatenated_are_those_of_the_whole(crossings: bool) -> None:
    fixes, (ids, polygons) = random_fixes(), voronoi_cells()
    cells = CellLocator(ids, polygons)
    whole = derive_visits(fixes.traj, fixes.owner, fixes.x, fixes.y, cells, crossings)
    assert (whole.cell == OUTSIDE).any() and (whole.cell != OUTSIDE).any()
    parts = [derive_visits(f.traj, f.owner, f.x, f.y, cells, crossings)
             for f in split(fixes, [1, 2, 17, 30, 59])]
    assert_same_visits(Derived.concat(parts), whole)
    assert parts == [], "the pieces are dropped once joined"
    empty = Derived.concat([])  # an empty window
    assert empty.n_trajectories == 0 and empty.sequences(drop_outside=True) == ([], [])


def whole_window_near_count(fixes: Fixes, x: np.ndarray, y: np.ndarray, reach: float
                            ) -> np.ndarray:
    """The verifier's count before chunks: one tree over every fix of the window."""
    tree = shapely.STRtree(shapely.points(fixes.x, fixes.y))
    which, near = tree.query(shapely.points(x, y), predicate="dwithin", distance=reach)
    owners = pd.DataFrame({"g": which, "o": fixes.owner[near]}).groupby("g")["o"].nunique()
    return np.array([owners.get(g, 0) for g in range(len(x))])


@pytest.mark.parametrize("reach", [0.0, 40.0, 150.0])
@pytest.mark.parametrize("merge_from", [1, 50, fixes_module.MERGE_FROM])
def test_persons_near_counted_by_chunks_equal_the_whole_windows(
        reach: float, merge_from: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whether the chunks' pairs are merged after every chunk, now and then, or only when
    counted, the counts are the whole window's."""
    monkeypatch.setattr(fixes_module, "MERGE_FROM", merge_from)
    fixes, (gx, gy) = random_fixes(), near_points()
    near = PersonsNear(gx, gy, reach)
    for part in split(fixes, [5, 6, 40]):
        near.add(part)
    expected = whole_window_near_count(fixes, gx, gy, reach)
    np.testing.assert_array_equal(near.counts(), expected)
    assert expected[0] >= 1 and expected[1] == 0 and (reach == 0 or expected.max() > 1)


def near_points() -> tuple[np.ndarray, np.ndarray]:
    """25 points over the random fixes' area: the first on a fix, the second far away."""
    fixes = random_fixes()
    gx, gy = np.random.default_rng(11).uniform(-100, 1_100, size=(2, 25))
    gx[0], gy[0] = fixes.x[3], fixes.y[3]  # on a fix: counted at distance 0
    gx[1], gy[1] = 1e6, 1e6  # near nobody
    return gx, gy


@pytest.mark.parametrize("merge_from", [1, 50, fixes_module.MERGE_FROM])
@pytest.mark.parametrize("enough", [2, 4])
def test_persons_near_counted_up_to_enough(merge_from: int, enough: int,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """With ``enough``, a count is exact below it and ``enough`` from it on, however many
    persons come near a point after it reached it (its pairs are then no longer kept)."""
    monkeypatch.setattr(fixes_module, "MERGE_FROM", merge_from)
    fixes, (gx, gy) = random_fixes(), near_points()
    near = PersonsNear(gx, gy, 150.0, enough=enough)
    for part in split(fixes, [5, 6, 40]):
        near.add(part)
    expected = whole_window_near_count(fixes, gx, gy, 150.0)
    assert (expected > enough).any() and ((expected > 0) & (expected < enough)).any()
    np.testing.assert_array_equal(near.counts(), np.minimum(expected, enough))


def test_pairs_near_some_points_are_those_points_pairs() -> None:
    """pairs_of for the points wanted (those short of enough) finds those points' pairs
    among all, numbered as among all; wanted shrinks as points reach enough."""
    fixes, (gx, gy) = random_fixes(), near_points()
    near = PersonsNear(gx, gy, 150.0, enough=3)
    every = near.pairs_of(fixes)
    some = np.array([0, 4, 7, 20])
    np.testing.assert_array_equal(near.pairs_of(fixes, some),
                                  every[np.isin(every >> 32, some)])
    assert near.pairs_of(fixes, some[:0]).size == 0
    assert near.wanted().tolist() == list(range(25))
    near.add(fixes)
    reached = np.minimum(whole_window_near_count(fixes, gx, gy, 150.0), 3) == 3
    assert reached.any() and not reached.all()
    assert near.wanted().tolist() == np.flatnonzero(~reached).tolist()
    assert PersonsNear(gx, gy, 150.0).wanted() is None


def test_persons_near_no_point_or_no_fix() -> None:
    assert PersonsNear(np.zeros(0), np.zeros(0), 10.0).counts().tolist() == []
    near = PersonsNear(np.zeros(2), np.zeros(2), 10.0)
    near.add(Fixes(*(np.zeros(0, np.int64),) * 2, np.zeros(0), np.zeros(0)))
    assert near.counts().tolist() == [0, 0]


# ------------------------------------------------------------------------ from the database


def one_shot_fixes(conn: psycopg.Connection, manifest: dict, dataset_id: int) -> Fixes:
    """The window's fixes as the verifier read them before chunks: all at once, ids
    factorized by pandas."""
    params = {"dataset_id": dataset_id, "window_start": manifest["window_start"],
              "window_end": manifest["window_end"], "srid": manifest["srid"],
              **area_of_use(manifest["srid"])}
    points = pa.Table.from_batches(list(read_batches(
        conn, "verify/derive_sequences.sql", fixes_module.COLUMN_TYPES, params)))
    return Fixes(pd.factorize(points["traj_id"].to_pandas(), sort=False)[0],
                 pd.factorize(points["user_id"].to_pandas(), sort=False)[0],
                 points["x"].to_numpy(), points["y"].to_numpy())


def one_shot_visits(conn: psycopg.Connection, schema: str) -> tuple[Derived, Fixes]:
    release = read_release(conn, schema)
    fixes = one_shot_fixes(conn, release.manifest, release.dataset_id)
    found = fetch_columns(conn, "generalization/verify/published_cells.sql", release=schema)
    ids = np.array(found["cell_id"], dtype=np.int64)
    polygons = shapely.from_wkb([bytes(wkb) for wkb in found["wkb"]])
    crossings = METHODS[release.manifest["method"]].traits.crossings
    return derive_visits(fixes.traj, fixes.owner, fixes.x, fixes.y, CellLocator(ids, polygons),
                         crossings), fixes


def chunk_counter(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Sizes of the chunks the next derivations number (recorded as they pass)."""
    sizes: list[int] = []
    number = Numbering.number

    def counted(self: Numbering, table: pa.Table) -> Fixes:
        sizes.append(table.num_rows)
        return number(self, table)

    monkeypatch.setattr(fixes_module.Numbering, "number", counted)
    return sizes


def test_grid_release_derived_in_chunks_equals_one_derivation(
        published_city: dict[str, str], published_city_db: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    schema = published_city["grid_kam_cut"]
    sizes = chunk_counter(monkeypatch)
    with psycopg.connect(published_city_db, autocommit=True) as conn:
        release = read_release(conn, schema)
        derived, near = derive_release_visits(conn, schema, release.dataset_id,
                                              release.manifest, chunk_fixes=SMALL_CHUNK)
        whole, fixes = one_shot_visits(conn, schema)
    assert near is None
    assert len(sizes) >= 5 and sum(sizes) == len(fixes)
    assert (whole.cell == OUTSIDE).any(), "the test needs fixes outside every cell"
    assert_same_visits(derived, whole)
    assert derived.sequences(drop_outside=True) == whole.sequences(drop_outside=True)


@pytest.mark.parametrize("processes", ["1", "2"])
def test_voronoi_release_derived_in_chunks_equals_one_derivation_and_its_near_counts(
        loaded_city: str, conn: psycopg.Connection, monkeypatch: pytest.MonkeyPatch,
        processes: str) -> None:
    # Two processes: the chunks are derived on forked workers, in order.
    from voronoi_helpers import run_voronoi_steps, voronoi_params

    monkeypatch.setenv(PROCESSES_ENV, processes)

    spec = run_voronoi_steps(voronoi_params("kam_cut", 3), until="manifest")
    schema = spec.build_schema
    release = read_release(conn, schema)
    generators = fetch_columns(conn, "generalization/verify/data_derived_generators.sql",
                               release=schema)
    assert len(generators["cell_id"]) > 3
    gx = np.array(generators["x"], dtype=float)
    gy = np.array(generators["y"], dtype=float)
    reach = KamCutParams.of(release.parameters).radius
    sizes = chunk_counter(monkeypatch)
    derived, near = derive_release_visits(conn, schema, release.dataset_id, release.manifest,
                                          near=PersonsNear(gx, gy, reach),
                                          chunk_fixes=SMALL_CHUNK)
    whole, fixes = one_shot_visits(conn, schema)
    assert len(sizes) >= 5
    assert (whole.cell == OUTSIDE).any(), "the test needs fixes outside every cell"
    assert_same_visits(derived, whole)
    assert near is not None
    np.testing.assert_array_equal(near.counts(), whole_window_near_count(fixes, gx, gy, reach))


def test_a_derivation_stopped_mid_window_leaves_the_connection_usable(
        published_city: dict[str, str], published_city_db: str) -> None:
    """The fixes are read ahead on a thread and a connection of their own: a consumer that
    stops early (an error in a chunk) ends the read, and the verifier's connection goes on
    (after the rollback the consumer's error brings)."""
    schema = published_city["grid_kam_cut"]
    with psycopg.connect(published_city_db) as conn:
        release = read_release(conn, schema)
        params = {"dataset_id": release.dataset_id, **{
            key: release.manifest[key] for key in ("window_start", "window_end", "srid")},
            **area_of_use(release.manifest["srid"])}
        chunks = fixes_module.window_fixes(conn, params, chunk_fixes=SMALL_CHUNK)
        assert len(next(chunks)) >= SMALL_CHUNK // 2
        chunks.close()
        conn.rollback()
        assert conn.execute("SELECT 1").fetchone() == (1,)
        assert sum(len(f) for f in fixes_module.window_fixes(conn, params, SMALL_CHUNK)) > 0


def test_an_error_deriving_a_chunk_on_a_worker_is_raised_and_ends_the_copy(
        published_city: dict[str, str], published_city_db: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    schema = published_city["grid_kam_cut"]
    monkeypatch.setenv(PROCESSES_ENV, "2")
    real = generalization_module.derive_visits

    def broken_after_the_first_chunk(traj: np.ndarray, *args: object,
                                     **kwargs: object) -> Derived:
        if traj.size and traj.min() > 0:
            raise ValueError("a chunk that cannot be derived")
        return real(traj, *args, **kwargs)  # type: ignore[arg-type]

    # Set before the fork: the workers inherit it.
    monkeypatch.setattr(generalization_module, "derive_visits", broken_after_the_first_chunk)
    with psycopg.connect(published_city_db) as conn:
        release = read_release(conn, schema)
        with pytest.raises(ValueError, match="a chunk that cannot be derived"):
            derive_release_visits(conn, schema, release.dataset_id, release.manifest,
                                  chunk_fixes=SMALL_CHUNK)
        conn.rollback()
        assert conn.execute("SELECT 1").fetchone() == (1,)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_flow_recount_equals_counting_each_move(seed: int) -> None:
    """Distinct owners and trajectories per move (a -> b, both published, one trajectory),
    counted by sorted keys, as a plain loop over the visits counts them."""
    rng = np.random.default_rng(seed)
    n = 5_000
    traj = np.sort(rng.integers(0, 300, n))
    owner = traj % 37  # a person has several trajectories
    cell = rng.choice([OUTSIDE, 3, 4, 9, 250, 1_000], size=n, p=[.1, .3, .2, .2, .1, .1])
    moves: dict[tuple[int, int], tuple[set[int], set[int]]] = {}
    for v in range(1, n):
        if traj[v] == traj[v - 1] and OUTSIDE not in (cell[v], cell[v - 1]):
            owners, trajs = moves.setdefault((int(cell[v - 1]), int(cell[v])), (set(), set()))
            owners.add(int(owner[v]))
            trajs.add(int(traj[v]))
    expected = {pair: (len(o), len(t)) for pair, (o, t) in moves.items()}
    derived = Derived(traj=traj, owner=owner, cell=cell)
    assert generalization_module._recount_flows(derived) == expected


def test_the_flow_recount_of_no_move_is_empty() -> None:
    one_each = np.arange(4)
    assert generalization_module._recount_flows(
        Derived(traj=one_each, owner=one_each, cell=one_each)) == {}
