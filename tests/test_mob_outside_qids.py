"""MOB positions outside every QID (anonymizers.families.mob.outside_qids): the rules on tiny
objects, and the attacks on real releases: the suite's location attack and an outside
recount of Definition 2's matching attacker (tests/mob_matching_attack.py)."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import psycopg
import pytest
from mob_helpers import example_4, mobs
from pipeline_helpers import run_steps

from anonymizers.attacks.release import AttackSettings, attack_release
from anonymizers.families.mob.anonymity import symmetric_anonymization
from anonymizers.families.mob.generalize import generalize
from anonymizers.families.mob.outside_qids import (
    OutsideQids,
    hiding_groups,
    publish_outside_qids,
)
from anonymizers.release.spec import ReleaseSpec

BOX = (-1000, -1000, 1000, 1000)
SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
TDRIVE = next((p for p in (SHARED_DATA, Path("/work/shared/data")) if p.is_dir()),
              SHARED_DATA) / "tdrive_600" / "points.csv.gz"


def _published(rule: str, objects=None, k: int = 2):
    objects = objects if objects is not None else example_4()
    sets = symmetric_anonymization(objects, k)
    regions = generalize(objects, sets)
    return objects, sets, regions, publish_outside_qids(objects, sets, regions,
                                                        OutsideQids(rule, 4, BOX))


def test_the_paper_rule_keeps_own_cells_and_the_others_change_only_free_rows():
    objects, _, regions, cell = _published("cell")
    free = regions.cls < 0
    assert free.any() and (~free).any()
    assert cell is regions
    assert np.array_equal(regions.x0[free], objects.cx[regions.obj[free], regions.t[free]])
    for rule in ("coarse", "withheld", "hiding_set"):
        _, _, _, out = _published(rule)
        for name in ("x0", "y0", "x1", "y1"):
            assert np.array_equal(getattr(out, name)[~free], getattr(regions, name)[~free])
        assert np.array_equal(out.cls, regions.cls)


def test_coarse_and_withheld_regions():
    _, _, regions, coarse = _published("coarse")
    _, _, _, withheld = _published("withheld")
    free = regions.cls < 0
    assert np.array_equal(coarse.x0[free], regions.x0[free] // 4 * 4)
    assert np.array_equal(coarse.y1[free], regions.y0[free] // 4 * 4 + 3)
    rows = np.column_stack([withheld.x0, withheld.y0, withheld.x1, withheld.y1])[free]
    assert (rows == np.array(BOX)).all()


def test_hiding_set_regions_hold_every_present_member_of_the_group():
    """Free row (O, t): the least upper bound of O's hiding group present at t."""
    objects, sets, regions, out = _published("hiding_set")
    owner, member = hiding_groups(sets)
    for row in np.flatnonzero(regions.cls < 0).tolist():
        o, t = int(out.obj[row]), int(out.t[row])
        group = member[owner == o]
        group = group[objects.present[group, t]]
        assert group.size >= 2
        assert (out.x0[row], out.x1[row]) == (objects.cx[group, t].min(),
                                              objects.cx[group, t].max())
        assert (out.y0[row], out.y1[row]) == (objects.cy[group, t].min(),
                                              objects.cy[group, t].max())


def test_hiding_set_withholds_where_fewer_than_k_of_the_group_are_present():
    # O0 and O1 hide each other at t0; at t1 O1 is absent, so O0 alone: withheld.
    objects = mobs([[0, 5], [1, 0]], [[0, 5], [0, 0]], [[0], [0]],
                   present=[[True, True], [True, False]])
    _, _, regions, out = _published("hiding_set", objects)
    [row] = np.flatnonzero((out.obj == 0) & (out.t == 1)).tolist()
    assert regions.cls[row] < 0
    assert (out.x0[row], out.y0[row], out.x1[row], out.y1[row]) == BOX


# --------------------------------------------------------------------------- on releases


def _tdrive_subset(tmp_path: Path, taxis: int) -> Path:
    """The fixes of the first ``taxis`` taxis of the T-Drive file, as a CSV to load."""
    keep: set[str] = set()
    out = tmp_path / "tdrive_subset.csv"
    with gzip.open(TDRIVE, "rt") as source, out.open("w") as target:
        target.write(source.readline())
        for line in source:
            user = line.split(",", 2)[1]
            if user not in keep and len(keep) < taxis:
                keep.add(user)
            if user in keep:
                target.write(line)
    return out


@pytest.fixture
def tdrive_window(db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    """150 taxis of T-Drive with graph QIDs (max 20), and a 3-hour window of them."""
    from anonymizers.loading import load_dataset
    from anonymizers.loading.qids import generate_and_store_qids

    if not TDRIVE.is_file():
        pytest.skip(f"{TDRIVE} is absent")
    monkeypatch.setenv("DATABASE_URL", db_url)
    load_dataset(_tdrive_subset(tmp_path, 150), "tdrive", url=db_url)
    generate_and_store_qids("tdrive", "graph", 20, seed=1, url=db_url)
    return {"dataset": "tdrive", "method": "mob_symmetric", "k": 4,
            "start": "2008-02-03T00:00:00Z", "end": "2008-02-03T03:00:00Z"}


def _release(params: dict, run_id: str) -> str:
    spec = run_steps(params, run_id=run_id)
    assert spec is not None
    return ReleaseSpec.from_dict(spec).release_name


def _location_risk(conn: psycopg.Connection, name: str) -> float:
    attack = attack_release(conn, name, AttackSettings(lengths=(1, 2, 4), max_targets=100,
                                                       max_instances=100), models=["location"])
    return max(s["prosecutor_max"] for s in attack.summaries() if s["model"] == "location")


@pytest.mark.realdata
def test_tdrive_default_release_withstands_the_location_attack_and_the_paper_rule_does_not(
        conn: psycopg.Connection, tdrive_window: dict) -> None:
    from mob_matching_attack import matching_attack

    default = _release(tdrive_window, "default")
    k = tdrive_window["k"]
    assert _location_risk(conn, default) <= 1 / k
    recount = matching_attack(conn, default)
    assert recount.unmatched_objects == 0 and recount.candidates
    assert recount.below(k) == {}
    paper = _release({**tdrive_window, "outside_qids": "cell",
                      "accept_composition_risk": "test: the paper's rule on the same window",
                      "accept_attack_risk": "test: the paper's rule is measured"}, "paper")
    assert _location_risk(conn, paper) > 1 / k


def test_the_synthetic_city_release_withstands_an_outside_matching_attack(
        conn: psycopg.Connection, published_city: dict[str, str], published_city_db: str
        ) -> None:
    from mob_matching_attack import matching_attack

    with psycopg.connect(published_city_db) as city:
        k = city.execute(f'SELECT k FROM "{published_city["mob_symmetric"]}".manifest'
                         ).fetchone()[0]
        recount = matching_attack(city, published_city["mob_symmetric"])
    assert recount.unmatched_objects == 0 and len(recount.candidates) > 10
    assert recount.below(k) == {}


def test_the_outside_matching_attack_finds_persons_left_with_fewer_than_k(
        published_city: dict[str, str], published_city_db: str) -> None:
    """Planted: half the objects withdrawn after anonymization (in a transaction rolled
    back), so hiding sets lose members and some persons keep fewer than k candidates."""
    from mob_matching_attack import matching_attack

    name = published_city["mob_symmetric"]
    with psycopg.connect(published_city_db) as city:
        k = city.execute(f'SELECT k FROM "{name}".manifest').fetchone()[0]
        city.execute(f'CREATE TEMP TABLE gone AS SELECT object_id FROM "{name}".objects '
                     "ORDER BY object_id LIMIT (SELECT count(*) / 2 FROM "
                     f'"{name}".objects)')
        city.execute(f'DELETE FROM "{name}".positions WHERE object_id IN (SELECT object_id '
                     "FROM gone)")
        recount = matching_attack(city, name)
        city.rollback()
    assert recount.below(k)
