"""The differencing attack (anonymizers/attacks/differencing.py): two releases of one
dataset with nested windows, their published counts subtracted.

The database tests publish grid_kam_cut releases of the small city (whose fixes run from
04:00 to 22:02 of one day): an outer window (the day) and an inner one (00:00-18:00), each
with exact counts (count_interval=1) and with the default interval filter (width k), and an
evening window (18:00-24:00) on another grid.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Iterator
from itertools import product
from pathlib import Path

import psycopg
import pytest
from conftest import TEMPLATE, with_database

from anonymizers.attacks.differencing import (
    A_IN_B,
    ADJACENT,
    B_IN_A,
    DISJOINT,
    EQUAL,
    OVERLAPPING,
    ReleaseWindow,
    certainly_isolated,
    difference_bounds,
    difference_releases,
    differencing_against_ledger,
    possibly_differs,
    window_relation,
)
from anonymizers.cli import main
from anonymizers.verifiers.base import interval_count

K = 3
DAY = "2026-03-02T00:00:00+00:00"
EVENING = "2026-03-02T18:00:00+00:00"
NEXT_DAY = "2026-03-03T00:00:00+00:00"


# --------------------------------------------------------------------------- the arithmetic


def _published(n: int, k: int, width: int) -> tuple[int, int]:
    low = interval_count(n, k, width)
    assert low is not None
    return low, low + width - 1


@pytest.mark.parametrize("k", [2, 3, 4, 5, 8])
def test_bounds_hold_the_true_difference_and_certainty_is_never_wrong(k):
    """Every pair of true counts n_inner <= n_outer (both published, >= k), every pair of
    widths: the bounds hold the difference, and 'certainly isolated' implies it is 1..k-1."""
    for w_inner, w_outer, n_inner in product(range(1, k + 2), range(1, k + 2),
                                             range(k, k + 3 * k)):
        inner = _published(n_inner, k, w_inner)
        for d in range(0, 3 * k):
            bounds = difference_bounds(inner, _published(n_inner + d, k, w_outer))
            assert bounds[0] <= d <= bounds[1]
            if certainly_isolated(bounds, k):
                assert 1 <= d <= k - 1
            if 1 <= d <= k - 1:
                assert possibly_differs(bounds, k) or certainly_isolated(bounds, k)


@pytest.mark.parametrize("k", [2, 3, 4, 5, 8, 10])
def test_the_filter_hides_certain_isolation_exactly_when_its_width_exceeds_k_over_2(k):
    """Certain isolation needs a2 - a1 >= w and a2 - a1 <= k - w: possible iff 2w <= k. At
    the default width (k) no pair of published counts certainly isolates anybody."""
    for w in range(1, k + 1):
        found = any(certainly_isolated(difference_bounds(
            _published(n, k, w), _published(n + d, k, w)), k)
            for n in range(k, 4 * k) for d in range(1, k))
        assert found == (2 * w <= k), (k, w)


def _window(start: str, end: str) -> ReleaseWindow:
    from datetime import datetime

    return ReleaseWindow("r", "city", "grid_kam_cut", K, datetime.fromisoformat(start),
                         datetime.fromisoformat(end), 32632, {}, None, "f")


@pytest.mark.parametrize(("a", "b", "relation"), [
    ((DAY, EVENING), (DAY, EVENING), EQUAL),
    ((DAY, EVENING), (DAY, NEXT_DAY), A_IN_B),
    ((DAY, NEXT_DAY), (EVENING, NEXT_DAY), B_IN_A),
    ((DAY, NEXT_DAY), ("2026-03-02T12:00:00+00:00", "2026-03-03T12:00:00+00:00"),
     OVERLAPPING),
    ((DAY, EVENING), (EVENING, NEXT_DAY), ADJACENT),
    ((DAY, "2026-03-02T06:00:00+00:00"), (EVENING, NEXT_DAY), DISJOINT),
])
def test_window_relations(a, b, relation):
    assert window_relation(_window(*a), _window(*b)) == relation


# --------------------------------------------------------------------------- real releases


RELEASES = {  # name: (start, end, parameters)
    "inner_exact": (DAY, EVENING, {"count_interval": 1}),
    "outer_exact": (DAY, NEXT_DAY, {"count_interval": 1}),
    "inner_filtered": (DAY, EVENING, {}),
    "outer_filtered": (DAY, NEXT_DAY, {}),
    "evening_other_grid": (EVENING, NEXT_DAY, {"count_interval": 1, "cell_size": 700.0}),
}


@pytest.fixture(scope="module")
def ledger(server_url: str, template_db: str, small_city: tuple[Path, Path]
           ) -> Iterator[tuple[str, dict[str, str]]]:
    """The small city and the releases of RELEASES (grid_kam_cut, k = 3, 500 m cells unless
    said otherwise), every one after the first accepting the composition risk."""
    from pipeline_helpers import run_steps

    from anonymizers.families.generalization import metrics
    from anonymizers.release.spec import ReleaseSpec

    names = {}
    with _city_database(server_url, small_city) as (url, patch):
        patch.setattr(metrics, "CLUSTER_SAMPLE", 100)  # as conftest's published_city
        for i, (key, (start, end, extra)) in enumerate(RELEASES.items()):
            risk = {"accept_composition_risk": "test: differencing"} if i else {}
            params = {"dataset": "city", "method": "grid_kam_cut", "k": K, "cell_size": 500.0,
                      "start": start, "end": end, **extra, **risk}
            names[key] = ReleaseSpec.from_dict(run_steps(params, run_id=key)).release_name
        yield url, names


@contextlib.contextmanager
def _city_database(server_url: str, small_city: tuple[Path, Path]
                   ) -> Iterator[tuple[str, pytest.MonkeyPatch]]:
    """A fresh database holding the small city, DATABASE_URL pointing at it (and the patch
    that set it, for more), dropped afterwards."""
    from anonymizers.loading import load_dataset

    name = f"test_differencing_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE}")
    url = with_database(server_url, name)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DATABASE_URL", url)
        load_dataset(small_city[0], "city", persons=small_city[1], url=url)
        yield url, patch
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _flows(conn: psycopg.Connection, schema: str) -> dict[tuple[str, str], tuple[int, int]]:
    """A release's flows by the text of their cells' centroids: n_persons, n_trajectories."""
    rows = conn.execute(psycopg.sql.SQL(
        "SELECT ST_AsText(a.geom), ST_AsText(b.geom), f.n_persons, f.n_trajectories "
        "FROM {s}.flows f JOIN {s}.cell_centroids a ON a.cell_id = f.from_cell "
        "JOIN {s}.cell_centroids b ON b.cell_id = f.to_cell").format(
            s=psycopg.sql.Identifier(schema)))
    return {(r[0], r[1]): (r[2], r[3]) for r in rows}


def test_exact_counts_of_nested_windows_isolate_groups_below_k(ledger):
    """count_interval=1: the attack finds flows whose difference is 1 or 2 persons, and
    each is what the two releases' own flows say (recomputed here from their tables)."""
    url, names = ledger
    with psycopg.connect(url) as conn:
        result = difference_releases(conn, names["inner_exact"], names["outer_exact"])
        inner, outer = _flows(conn, names["inner_exact"]), _flows(conn, names["outer_exact"])
    assert result.relation == A_IN_B
    truly = {pair for pair in inner.keys() & outer.keys()
             if 1 <= outer[pair][0] - inner[pair][0] <= K - 1}
    assert truly, "the outer window's evening adds a person or two to some flow"
    kinds = {s.kind: s for s in result.kinds}
    assert kinds["flow_persons"].monotone
    assert kinds["flow_persons"].matched == len(inner.keys() & outer.keys())
    assert kinds["flow_persons"].isolated == len(truly)
    found = {f.label for f in result.findings if f.kind == "flow_persons" and f.certain}
    assert found == {f"flow {a} -> {b}" for a, b in truly}
    by_trajectories = {p for p in inner.keys() & outer.keys()
                       if 1 <= outer[p][1] - inner[p][1] <= K - 1}
    assert kinds["flow_trajectories"].isolated == len(by_trajectories)
    assert result.isolated == len(truly) + len(by_trajectories)  # the window counts: none
    assert result.smallest_group == min(
        [outer[p][0] - inner[p][0] for p in truly]
        + [outer[p][1] - inner[p][1] for p in by_trajectories])
    # A trajectory count isolates at least one person, a person count its difference.
    assert result.risk == (1.0 if by_trajectories else
                           1 / min(outer[p][0] - inner[p][0] for p in truly))
    assert all(f.difference[0] == f.difference[1] for f in result.findings)  # exact counts


# The raw data's flows of the 500 m grid (what grid_kam_cut counts, written again from the
# fixes): the persons moving from one square to the next within a trajectory in a window.
RAW_FLOWS = """
WITH fixes AS (
    SELECT p.traj_id, p.user_id, p.t, ST_Transform(p.geom, %(srid)s) AS xy
    FROM raw.points AS p JOIN raw.datasets AS d USING (dataset_id)
    WHERE d.name = 'city' AND p.t >= %(start)s AND p.t < %(end)s
), cells AS (
    SELECT traj_id, user_id, t, floor(ST_X(xy) / 500) AS ix, floor(ST_Y(xy) / 500) AS iy
    FROM fixes
), moves AS (
    SELECT user_id, ix, iy, lag(ix) OVER w AS px, lag(iy) OVER w AS py
    FROM cells WINDOW w AS (PARTITION BY traj_id ORDER BY t)
)
SELECT format('flow %%s -> %%s', ST_AsText(ST_MakePoint((px + 0.5) * 500, (py + 0.5) * 500)),
              ST_AsText(ST_MakePoint((ix + 0.5) * 500, (iy + 0.5) * 500))),
       array_agg(DISTINCT user_id)
FROM moves
WHERE px IS NOT NULL AND (px, py) <> (ix, iy)
GROUP BY px, py, ix, iy
"""


def test_grid_flows_of_nested_windows_nest_in_the_raw_data(ledger):
    """The claim the attack rests on, checked on the raw fixes: for every flow of the
    fixed grid, the inner window's persons are a subset of the outer's, and each isolated
    flow's difference is exactly the persons of the outer window only."""
    url, names = ledger
    with psycopg.connect(url) as conn:
        srid = conn.execute(psycopg.sql.SQL("SELECT srid FROM {}.manifest").format(
            psycopg.sql.Identifier(names["outer_exact"]))).fetchone()[0]
        inner, outer = ({label: set(users) for label, users in conn.execute(
            RAW_FLOWS, {"srid": srid, "start": start, "end": end})}
            for start, end in ((DAY, EVENING), (DAY, NEXT_DAY)))
        result = difference_releases(conn, names["inner_exact"], names["outer_exact"])
    assert all(users <= outer[label] for label, users in inner.items())
    isolated = [f for f in result.findings if f.kind == "flow_persons" and f.certain]
    assert isolated
    for f in isolated:
        assert (len(inner[f.label]), len(outer[f.label])) == (f.a[0], f.b[0])
        assert len(outer[f.label] - inner[f.label]) == f.difference[0] == f.difference[1]


def test_an_analyst_can_run_the_attack(ledger):
    """The attacker needs nothing but the analyst's access: the catalog and the releases."""
    from anonymizers.db.connection import analyst_url

    url, names = ledger
    with psycopg.connect(analyst_url(url)) as conn:
        results = differencing_against_ledger(conn, names["inner_exact"])
    assert sum(r.isolated for r in results) > 0


def test_the_default_interval_filter_hides_what_exact_counts_give_away(ledger):
    """Width k: no certain isolation, while the same windows' exact counts had some; every
    flow truly isolating 1..k-1 persons, published in both filtered releases, is still
    reported as possible differencing."""
    url, names = ledger
    with psycopg.connect(url) as conn:
        exact = difference_releases(conn, names["inner_exact"], names["outer_exact"])
        filtered = difference_releases(conn, names["outer_filtered"], names["inner_filtered"])
        both = _flows(conn, names["inner_filtered"]).keys() & _flows(
            conn, names["outer_filtered"]).keys()
    assert exact.isolated > 0
    assert filtered.relation == B_IN_A
    assert filtered.isolated == 0 and filtered.risk == 0 and filtered.smallest_group is None
    assert {s.kind: s.matched for s in filtered.kinds}["flow_persons"] == len(both)
    truly = {f.label for f in exact.findings if f.kind == "flow_persons" and f.certain}
    possible = {f.label for f in filtered.findings if f.kind == "flow_persons"}
    published = {f"flow {a} -> {b}" for a, b in both}
    assert truly & published, "some truly isolating flow is published in both"
    assert truly & published <= possible


def test_adjacent_windows_on_another_grid_match_no_flow(ledger):
    url, names = ledger
    with psycopg.connect(url) as conn:
        result = difference_releases(conn, names["inner_exact"], names["evening_other_grid"])
    assert result.relation == ADJACENT
    assert result.items_a > 0 and result.items_b > 0
    matched = {s.kind: s.matched for s in result.kinds}
    assert set(matched) <= {"window_persons", "window_trajectories"}  # the manifests' counts
    assert result.isolated == result.possible == 0 and result.risk == 0
    assert not result.findings


def test_the_ledger_pairs_a_release_with_every_overlapping_one(ledger):
    url, names = ledger
    with psycopg.connect(url) as conn:
        results = differencing_against_ledger(conn, names["inner_exact"])
    others = {r.release_b for r in results}
    assert others == {names[n] for n in ("outer_exact", "inner_filtered", "outer_filtered")}
    equal = next(r for r in results if r.release_b == names["inner_filtered"])
    assert equal.relation == EQUAL and equal.matched > 0 and equal.isolated == 0


def test_attack_differencing_command(ledger, monkeypatch, capsys):
    url, names = ledger
    monkeypatch.setenv("DATABASE_URL", url)
    assert main(["attack", names["inner_exact"], "--differencing", "--json"]) == 3
    results = json.loads(capsys.readouterr().out)
    by_other = {r["release_b"]: r for r in results}
    assert by_other[names["outer_exact"]]["isolated"] > 0
    assert by_other[names["outer_filtered"]]["isolated"] == 0
    assert main(["attack", names["outer_exact"], "--differencing"]) == 3
    table = capsys.readouterr().out
    assert f"{names['outer_exact']} vs {names['inner_exact']}: windows b inside a" in table
    assert "isolated: flow_persons flow POINT(" in table
    # Against a width-k release, exact counts isolate nobody for certain: exit 0.
    assert main(["attack", names["outer_filtered"], "--differencing"]) == 0
    assert "0 certainly isolate fewer than k persons" in capsys.readouterr().out


# --------------------------------------------------------------------------- other families


def test_every_family_on_one_window_differences_into_nothing(published_city,
                                                               published_city_db):
    """`anonymizers compare`'s ledger: every family on one window, composition accepted.
    Equal windows count the same persons, so nothing is isolated; each family's items are
    read (its SQL runs), and the window counts match across the families that read the
    window's fixes alike (generalization, MOB, clustering)."""
    with psycopg.connect(published_city_db) as conn:
        for method, schema in published_city.items():
            results = differencing_against_ledger(conn, schema)
            assert {r.release_b for r in results} == set(published_city.values()) - {schema}
            assert all(r.relation == EQUAL and r.isolated == 0 and r.risk == 0
                       for r in results), method
            assert all(r.items_a > 0 for r in results), method
            if method != "tg_nonoverlapping":
                fixes = [r for r in results if r.release_b != published_city["tg_nonoverlapping"]]
                assert all({s.kind for s in r.kinds} >= {"window_persons"} for r in fixes)


FAMILY_RELEASES = {  # name: (method, k, start, end, parameters)
    # Trajectory groups over the 500 m grid, at the thesis' smallest overlapping width
    # ceil(k/2) (seed 004 §4.5.1): 2 for k = 4, where 2 w <= k lets a difference certainly
    # fall in [1, k - 1].
    "tg_inner": ("tg_overlapping", 4, DAY, EVENING,
                 {"demographics": "none", "interval_size": 2}),
    "tg_outer": ("tg_overlapping", 4, DAY, NEXT_DAY,
                 {"demographics": "none", "interval_size": 2}),
    "tcaa_inner": ("tcaa", K, DAY, EVENING,
                   {"slice_seconds": 600, "interval": 60, "count_interval": 1}),
    "tcaa_outer": ("tcaa", K, DAY, NEXT_DAY,
                   {"slice_seconds": 600, "interval": 60, "count_interval": 1}),
}


@pytest.fixture(scope="module")
def family_ledger(server_url: str, template_db: str, small_city: tuple[Path, Path]
                  ) -> Iterator[tuple[str, dict[str, str]]]:
    """The small city and FAMILY_RELEASES, every one after the first accepting the risk."""
    from pipeline_helpers import run_steps

    from anonymizers.release.spec import ReleaseSpec

    names = {}
    with _city_database(server_url, small_city) as (url, _):
        for i, (key, (method, k, start, end, extra)) in enumerate(FAMILY_RELEASES.items()):
            risk = {"accept_composition_risk": "test: differencing"} if i else {}
            params = {"dataset": "city", "method": method, "k": k, "start": start, "end": end,
                      **extra, **risk}
            names[key] = ReleaseSpec.from_dict(run_steps(params, run_id=key)).release_name
        yield url, names


def test_overlapping_groups_at_width_half_k_isolate_under_nesting(family_ledger):
    """tg_overlapping counts every trajectory travelling a sequence: monotone. At I_s =
    k/2 a group published as a1 in the inner window and a1 + 2 in the outer differs by
    1..3 trajectories, certainly below k = 4."""
    url, names = family_ledger
    with psycopg.connect(url) as conn:
        result = difference_releases(conn, names["tg_inner"], names["tg_outer"])
    kinds = {s.kind: s for s in result.kinds}
    assert result.relation == A_IN_B and result.k == 4
    assert kinds["group_trajectories"].monotone and kinds["group_trajectories"].matched > 0
    certain = [f for f in result.findings if f.certain]
    assert certain and kinds["group_trajectories"].isolated > 0
    assert all(f.b[0] - f.a[0] == 2 and f.difference == (1, 3) for f in certain
               if f.kind == "group_trajectories")
    # Three trajectories may be one person's: the risk is 1 at worst.
    assert result.smallest_group == 3 and result.risk == 1.0
    assert all(f.persons == (1, 3) for f in certain if f.kind == "group_trajectories")


def test_reclustered_groups_are_not_monotone_and_isolate_nothing_for_certain(family_ledger):
    """TCAA re-clusters every window: even with exact counts, matched groups (same regions
    at the same times) are at most possible differencing, and the output says why."""
    url, names = family_ledger
    with psycopg.connect(url) as conn:
        result = difference_releases(conn, names["tcaa_inner"], names["tcaa_outer"])
    kinds = {s.kind: s for s in result.kinds}
    assert result.relation == A_IN_B
    assert result.items_a > 0 and result.items_b > 0
    assert kinds["group_persons"].matched > 0  # slices inside both windows: same regions
    assert not kinds["group_persons"].monotone
    assert "re-cluster" in (kinds["group_persons"].reason or "")
    assert kinds["group_persons"].isolated == 0
    assert all(not f.certain for f in result.findings if f.kind == "group_persons")
    assert all(1 <= abs(d) <= K - 1 for f in result.findings if f.kind == "group_persons"
               for d in [f.b[0] - f.a[0]])  # exact counts: the difference itself
