"""Quasi-identifiers: the QID file loader, its replace semantics, the generated configurations."""

from __future__ import annotations

import gzip
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import psycopg
import pytest

from anonymizers.errors import InputError
from anonymizers.families.mob.preparation import prepare_mob_tables
from anonymizers.families.mob.qid_generation import STRATEGIES, generate_qids, graph_qids
from anonymizers.families.mob.qids import generate_and_store_qids
from anonymizers.loading import load_dataset
from anonymizers.loading.qids import load_qids, store_qids
from anonymizers.release.spec import area_of_use, utm_srid

POINTS = """traj_id,user_id,t,lon,lat
a,u1,2020-01-01T08:00:00Z,11.250,43.770
a,u1,2020-01-01T08:20:00Z,11.251,43.771
b,u2,2020-01-01T08:10:00Z,11.260,43.780
b,u2,2020-01-01T09:00:00Z,11.261,43.781
"""
GOOD = "user_id,t\nu1,2020-01-01T08:05:00Z\nu2,2020-01-01T08:30:00Z\nu2,2020-01-01T08:40:00Z\n"

Stored = list[tuple[str, str, datetime]]


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


def write(tmp_path: Path, text: str, name: str = "qids.csv") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def stored(conn: psycopg.Connection) -> Stored:
    """Every QID in the database: (dataset name, user_id, t)."""
    return conn.execute("SELECT d.name, q.user_id, q.t FROM raw.qids AS q JOIN raw.datasets "
                        "AS d USING (dataset_id) ORDER BY 1, 2, 3").fetchall()


GOOD_STORED = [("tiny", "u1", utc("2020-01-01T08:05:00Z")),
               ("tiny", "u2", utc("2020-01-01T08:30:00Z")),
               ("tiny", "u2", utc("2020-01-01T08:40:00Z"))]


@pytest.fixture
def dataset(db_url: str, tmp_path: Path) -> str:
    """POINTS loaded as dataset 'tiny' (u1 08:00-08:20, u2 08:10-09:00), with GOOD's QIDs."""
    load_dataset(write(tmp_path, POINTS, "points.csv"), "tiny", url=db_url)
    load_qids(write(tmp_path, GOOD, "good.csv"), "tiny", url=db_url)
    return "tiny"


# ------------------------------------------------------------------------------ the loader


def test_a_good_file_replaces_the_qids_with_times_in_utc(
        conn: psycopg.Connection, dataset: str, db_url: str, tmp_path: Path) -> None:
    assert stored(conn) == GOOD_STORED
    result = load_qids(write(tmp_path, "t,user_id\n"  # the columns in any order
                             "2020-01-01T08:00:00Z,u1\n"  # the dataset's first fix: inside
                             "2020-01-01T09:10:00+01:00,u1\n"  # an offset
                             "2020-01-01T09:00:00,u2\n"  # naive is UTC; the last fix
                             "2020-01-01T08:15:00.1234567Z,u2\n"),  # to the microsecond
                       dataset, url=db_url)
    assert stored(conn) == [("tiny", "u1", utc("2020-01-01T08:00:00Z")),
                            ("tiny", "u1", utc("2020-01-01T08:10:00Z")),
                            ("tiny", "u2", utc("2020-01-01T08:15:00.123456Z")),
                            ("tiny", "u2", utc("2020-01-01T09:00:00Z"))]
    assert (result.n_qids, result.n_persons, result.replaced) == (4, 2, 3)
    assert "4 QID time(s) of 2 person(s)" in result.summary()


@pytest.mark.parametrize(("text", "fragments"), [
    ("", ["empty", "user_id,t"]),
    ("user_id,t\n", ["no rows"]),
    ("user_id,time\nu1,2020-01-01T08:05:00Z\n", ["missing t", "unexpected time"]),
    ("user_id\nu1\n", ["missing t"]),
    ("user_id,t,lon\nu1,2020-01-01T08:05:00Z,11\n", ["unexpected lon"]),
    ("user_id,t\nu1,2020-01-01T08:05:00Z\n,2020-01-01T08:06:00Z\n",
     ["1 row(s) with an empty user_id", "line 3"]),
    ("user_id,t\nu1,2020-01-01T08:05:00Z\nu1,yesterday\nu2,\n",
     ["2 row(s) with an unparseable time", "lines 3, 4", "ISO-8601"]),
    ("user_id,t\nu1,2020-01-01T08:05:00Z\nu1,2020-01-01T09:05:00+01:00\n",
     ["already given on an earlier line", "line 3"]),
    ("user_id,t\nu1,2020-01-01T07:59:59.999999Z\n",
     ["a time outside dataset 'tiny'", "line 2", "2020-01-01T08:00:00+00:00"]),
    ("user_id,t\nu2,2020-01-01T09:00:00.000001Z\nu1,2020-01-02T08:00:00Z\n",
     ["2 row(s) with a time outside", "lines 2, 3", "09:00:00+00:00"]),
    ("user_id,t\nu1,2020-01-01T08:05:00Z\nstranger,2020-01-01T08:06:00Z\n",
     ["1 user_id(s) have no fix in dataset 'tiny'", "'stranger'"]),
], ids=["empty", "header only", "renamed column", "missing column", "unexpected column",
        "empty user_id", "unparseable time", "duplicate instant", "before first fix",
        "after last fix", "unknown person"])
def test_a_bad_file_is_refused_and_nothing_changes(
        conn: psycopg.Connection, dataset: str, db_url: str, tmp_path: Path, text: str,
        fragments: list[str]) -> None:
    with pytest.raises(InputError) as refused:
        load_qids(write(tmp_path, text), dataset, url=db_url)
    for fragment in fragments:
        assert fragment in str(refused.value)
    assert stored(conn) == GOOD_STORED


def test_a_byte_order_mark_and_a_gzipped_file_load(
        conn: psycopg.Connection, dataset: str, db_url: str, tmp_path: Path) -> None:
    load_qids(write(tmp_path, "\ufeff" + GOOD), dataset, url=db_url)
    assert stored(conn) == GOOD_STORED
    zipped = tmp_path / "qids.csv.gz"
    zipped.write_bytes(gzip.compress(b"user_id,t\nu1,2020-01-01T08:01:00Z\n"))
    load_qids(zipped, dataset, url=db_url)
    assert stored(conn) == [("tiny", "u1", utc("2020-01-01T08:01:00Z"))]


def test_an_unknown_dataset_or_file_is_refused(conn: psycopg.Connection, dataset: str,
                                               db_url: str, tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"no dataset 'other' \(tiny\)\. Load its points"):
        load_qids(write(tmp_path, GOOD), "other", url=db_url)
    with pytest.raises(InputError, match="no such QID file"):
        load_qids(tmp_path / "missing.csv", dataset, url=db_url)
    assert stored(conn) == GOOD_STORED


def test_a_load_replaces_only_its_own_datasets_qids(
        conn: psycopg.Connection, dataset: str, db_url: str, tmp_path: Path) -> None:
    load_dataset(write(tmp_path, POINTS, "other.csv"), "other", url=db_url)
    load_qids(write(tmp_path, "user_id,t\nu1,2020-01-01T08:10:00Z\n"), "other", url=db_url)
    load_qids(write(tmp_path, "user_id,t\nu2,2020-01-01T08:50:00Z\n"), dataset, url=db_url)
    assert stored(conn) == [("other", "u1", utc("2020-01-01T08:10:00Z")),
                            ("tiny", "u2", utc("2020-01-01T08:50:00Z"))]


def test_replacing_or_deleting_the_dataset_drops_its_qids(
        conn: psycopg.Connection, dataset: str, db_url: str, tmp_path: Path) -> None:
    # QIDs refer to one version of the data: load --replace swaps the dataset row.
    load_dataset(write(tmp_path, POINTS, "again.csv"), dataset, url=db_url, replace=True)
    assert stored(conn) == []
    load_qids(write(tmp_path, GOOD), dataset, url=db_url)
    conn.execute("DELETE FROM raw.datasets WHERE name = %s", (dataset,))
    assert conn.execute("SELECT count(*) FROM raw.qids").fetchone() == (0,)


def test_store_qids_replaces_in_the_callers_transaction(
        conn: psycopg.Connection, dataset: str, db_url: str) -> None:
    (dataset_id,) = conn.execute("SELECT dataset_id FROM raw.datasets").fetchone()
    with psycopg.connect(db_url) as writer:
        counts = store_qids(writer, dataset_id, ["u1"], [datetime(2020, 1, 1, 8, 1)])
        assert counts == (3, 1)
        assert stored(conn) == GOOD_STORED  # not committed yet
        writer.rollback()
    assert stored(conn) == GOOD_STORED
    with psycopg.connect(db_url) as writer:
        store_qids(writer, dataset_id, np.array(["u1"]),
                   np.array(["2020-01-01T08:01:00"], dtype="datetime64[us]"))
    assert stored(conn) == [("tiny", "u1", utc("2020-01-01T08:01:00Z"))]  # naive = UTC


def test_the_analyst_reads_no_qids(dataset: str, analyst_url: str) -> None:
    with psycopg.connect(analyst_url) as analyst, pytest.raises(
            psycopg.errors.InsufficientPrivilege):
        analyst.execute("SELECT * FROM raw.qids")


# ---------------------------------------------------------------------- generated configurations


def spans(n_objects: int = 300, n_times: int = 400, seed: int = 0) -> np.ndarray:
    """Presence as trajectories make it: a few runs of time points per object, some none."""
    rng = np.random.default_rng(seed)
    presence = np.zeros((n_objects, n_times), dtype=bool)
    for obj in range(n_objects - 10):  # the last ten objects are never present
        for _ in range(rng.integers(1, 4)):
            start = rng.integers(0, n_times)
            presence[obj, start:start + rng.integers(1, 80)] = True
    presence[:, 50:60] = False  # nobody is present then
    return presence


def qid_matrix(objects: np.ndarray, times: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    matrix = np.zeros(shape, dtype=bool)
    matrix[objects, times] = True
    return matrix


def overlap(qids: np.ndarray) -> np.ndarray:
    """The QID overlap graph as an adjacency matrix (no self-loops)."""
    counts = qids.astype(np.int64)
    adjacent = (counts @ counts.T) > 0
    np.fill_diagonal(adjacent, False)
    return adjacent


def components(adjacent: np.ndarray, nodes: np.ndarray) -> list[np.ndarray]:
    """Connected components among ``nodes`` (a small graph: a breadth-first search each)."""
    left, found = set(nodes.tolist()), []
    while left:
        frontier = {left.pop()}
        part = set(frontier)
        while frontier:
            reached = set(np.flatnonzero(adjacent[list(frontier)].any(axis=0)).tolist())
            frontier = (reached & left) - part
            part |= frontier
            left -= frontier
        found.append(np.array(sorted(part)))
    return found


def is_path(adjacent: np.ndarray, nodes: np.ndarray) -> bool:
    """Connected, acyclic and no node of degree above 2."""
    sub = adjacent[np.ix_(nodes, nodes)]
    degrees = sub.sum(axis=1)
    return (len(components(adjacent, nodes)) == 1 and int(degrees.sum()) // 2 == len(nodes) - 1
            and int(degrees.max(initial=0)) <= 2)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("max_size", [1, 3, 20])
def test_every_qid_is_within_presence_and_size_and_the_same_for_a_seed(
        strategy: str, max_size: int) -> None:
    presence = spans()
    objects, times = generate_qids(presence, strategy, max_size, seed=5)
    assert len(objects) > 0 and presence[objects, times].all()
    pairs = np.stack([objects, times], axis=1)
    assert (np.unique(pairs, axis=0) == pairs).all()  # distinct, sorted by object and time
    assert np.bincount(objects).max() <= max_size
    again = generate_qids(presence, strategy, max_size, seed=5)
    assert np.array_equal(again[0], objects) and np.array_equal(again[1], times)
    other = generate_qids(presence, strategy, max_size, seed=6)
    assert not (np.array_equal(other[0], objects) and np.array_equal(other[1], times))


def test_random_gives_every_present_object_a_qid() -> None:
    presence = spans()
    objects, _ = generate_qids(presence, "random", 10, seed=1)
    assert set(objects.tolist()) == set(np.flatnonzero(presence.any(axis=1)).tolist())
    sizes = np.bincount(objects, minlength=len(presence))
    # Sizes are uniform in 1..10, capped by presence: all sizes occur for long-present ones.
    assert set(sizes[presence.sum(axis=1) >= 10].tolist()) == set(range(1, 11))


def test_disjoint_qids_share_no_time_point() -> None:
    presence = spans()
    objects, times = generate_qids(presence, "disjoint", 5, seed=2)
    assert len(np.unique(times)) == len(times)
    assert not overlap(qid_matrix(objects, times, presence.shape)).any()
    # Time points run out before persons do: 390 usable points for 290 persons of up to 5.
    assert len(times) > 300


@pytest.mark.parametrize("max_size", [1, 2, 10])
def test_a_chain_is_one_path_in_the_overlap_graph(max_size: int) -> None:
    presence = spans()
    objects, times = generate_qids(presence, "chain", max_size, seed=3)
    nodes = np.unique(objects)
    assert is_path(overlap(qid_matrix(objects, times, presence.shape)), nodes)
    assert len(nodes) == 2 if max_size == 1 else len(nodes) > 50


def test_chains_are_disjoint_paths_of_bounded_length() -> None:
    presence = spans()
    objects, times = generate_qids(presence, "chains", 6, seed=4, chain_length=5)
    adjacent = overlap(qid_matrix(objects, times, presence.shape))
    parts = components(adjacent, np.unique(objects))
    assert len(parts) > 10
    for part in parts:
        assert 2 <= len(part) <= 5 and is_path(adjacent, part)


def test_graph_neighbours_share_their_edges_time_point() -> None:
    presence = spans()
    result = graph_qids(presence, 8, seed=7, mean_degree=3.0)
    qids = qid_matrix(result.objects, result.times, presence.shape)
    first, second = result.edges[:, 0], result.edges[:, 1]
    assert len(result.edges) > 200 and (first < second).all()
    assert (qids[first, result.edge_times] & qids[second, result.edge_times]).all()
    assert overlap(qids)[first, second].all()
    degrees = np.bincount(result.edges.ravel(), minlength=len(presence))
    assert (degrees <= qids.sum(axis=1)).all()  # each edge's time point is in the QID
    same = generate_qids(presence, "graph", 8, seed=7, mean_degree=3.0)
    assert np.array_equal(same[0], result.objects) and np.array_equal(same[1], result.times)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_nobody_present_means_no_qids(strategy: str) -> None:
    for presence in (np.zeros((0, 5), dtype=bool), np.zeros((4, 0), dtype=bool),
                     np.zeros((4, 5), dtype=bool)):
        objects, times = generate_qids(presence, strategy, 3, seed=0)
        assert len(objects) == len(times) == 0


@pytest.mark.parametrize(("strategy", "max_size", "options", "fragment"), [
    ("tree", 3, {}, "unknown QID strategy 'tree'"),
    ("random", 0, {}, "max_size must be at least 1"),
    ("chains", 3, {"chain_length": 1}, "chain_length must be at least 2"),
])
def test_bad_generation_parameters_are_refused(strategy: str, max_size: int,
                                               options: dict[str, int], fragment: str) -> None:
    with pytest.raises(InputError, match=fragment):
        generate_qids(np.ones((3, 3), dtype=bool), strategy, max_size, seed=0, **options)


# ------------------------------------------------------------------ generated and stored


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_generated_qids_are_positions_on_the_grid_and_load_back(
        conn: psycopg.Connection, loaded_city: str, db_url: str, tmp_path: Path,
        strategy: str) -> None:
    result = generate_and_store_qids(loaded_city, strategy, 4, seed=11, interval_s=600,
                                     url=db_url)
    dataset_id, t_min, t_max, lon, lat = conn.execute(
        "SELECT dataset_id, t_min, t_max, lon_median, lat_median FROM raw.datasets").fetchone()
    assert result.grid_start <= t_min < result.grid_start + timedelta(seconds=600)
    assert result.grid_start.timestamp() % 600 == 0
    rows = conn.execute("SELECT user_id, t FROM raw.qids ORDER BY 1, 2").fetchall()
    assert len(rows) == result.n_qids > 0
    assert all((t - result.grid_start).total_seconds() % 600 == 0 for _, t in rows)
    # On a window of the generation's grid, every QID falls where its person has a position.
    conn.execute("CREATE SCHEMA work_generated")
    srid = utm_srid(lon, lat)
    counts = prepare_mob_tables(conn, "work_generated", {
        "dataset_id": dataset_id, "window_start": result.grid_start,
        "window_end": result.grid_start + timedelta(seconds=600 * result.n_time_points),
        "srid": srid, **area_of_use(srid)}, 100.0, 600)
    assert counts["qids"] == counts["qids_in_window"] == result.n_qids
    assert counts["qids_dropped"] == counts["qids_merged"] == 0
    assert counts["objects"] == result.n_objects
    # And they pass the loader's checks (times within the data, persons of the dataset).
    text = "user_id,t\n" + "".join(f"{user},{t.isoformat()}\n" for user, t in rows)
    loaded = load_qids(write(tmp_path, text), loaded_city, url=db_url)
    assert loaded.replaced == loaded.n_qids == len(rows)
    assert t_min <= rows[0][1] and max(t for _, t in rows) <= t_max


def test_generating_again_with_the_seed_gives_the_same_qids(
        conn: psycopg.Connection, dataset: str, db_url: str) -> None:
    first = generate_and_store_qids(dataset, "chain", 3, seed=1, interval_s=300, url=db_url)
    rows = conn.execute("SELECT * FROM raw.qids ORDER BY 2, 3").fetchall()
    assert first.replaced == 3  # GOOD's
    again = generate_and_store_qids(dataset, "chain", 3, seed=1, interval_s=300, url=db_url)
    assert conn.execute("SELECT * FROM raw.qids ORDER BY 2, 3").fetchall() == rows
    assert again.replaced == first.n_qids == len(rows)
    # u1 runs 08:00-08:20 and u2 08:10-09:00: a chain of two sharing 08:10 or 08:15.
    assert {user for _, user, _ in rows} == {"u1", "u2"}


def test_generation_refuses_what_it_cannot_do_and_changes_nothing(
        conn: psycopg.Connection, dataset: str, db_url: str) -> None:
    with pytest.raises(InputError, match="no dataset 'nope'"):
        generate_and_store_qids("nope", "random", 3, seed=1, url=db_url)
    with pytest.raises(InputError, match="unknown QID strategy"):
        generate_and_store_qids(dataset, "forest", 3, seed=1, url=db_url)
    with pytest.raises(InputError, match="interval must be a positive"):
        generate_and_store_qids(dataset, "random", 3, seed=1, interval_s=0, url=db_url)
    assert stored(conn) == GOOD_STORED


def test_the_loading_layer_imports_no_family() -> None:
    """Loading QIDs is data in, with no family behind it: the MOB family generates QIDs
    and stores them through the loading layer, never the other way round (not even by an
    import inside a function)."""
    import ast

    import anonymizers.loading

    folder = Path(anonymizers.loading.__file__).parent
    found = []
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            found += [f"{path.name}: {name}" for name in names
                      if name.startswith("anonymizers.families")]
    assert not found, f"the loading layer imports families: {found}"
