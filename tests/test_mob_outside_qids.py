"""MOB positions outside every QID (anonymizers.families.mob.outside_qids): the rules on tiny
objects, and the attacks on real releases: the suite's location attack and an outside
recount of Definition 2's matching attacker (tests/mob_matching_attack.py)."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import psycopg
import pytest
from mob_helpers import example_4, mobs, random_objects
from pipeline_helpers import run_steps
from psycopg import sql

from anonymizers.attacks.models import MODELS
from anonymizers.attacks.release import AttackSettings, attack_release
from anonymizers.errors import PrivacyViolation
from anonymizers.families.mob.anonymity import symmetric_anonymization
from anonymizers.families.mob.attack import MATCHING
from anonymizers.families.mob.generalize import generalize
from anonymizers.families.mob.outside_qids import (
    OutsideQids,
    cover_groups,
    publish_outside_qids,
)
from anonymizers.families.mob.verifier import derive_mob_view
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


def test_the_paper_rule_keeps_own_cells_and_coarse_and_withheld_change_only_free_rows():
    objects, _, regions, cell = _published("cell")
    free = regions.cls < 0
    assert free.any() and (~free).any()
    assert cell is regions
    assert np.array_equal(regions.x0[free], objects.cx[regions.obj[free], regions.t[free]])
    for rule in ("coarse", "withheld", "hiding_set"):
        _, _, _, out = _published(rule)
        assert np.array_equal(out.cls, regions.cls)
        if rule != "hiding_set":
            for name in ("x0", "y0", "x1", "y1"):
                assert np.array_equal(getattr(out, name)[~free], getattr(regions, name)[~free])
        # a class's region may only grow (hiding_set: to hold the cover group)
        assert (out.x0[~free] <= regions.x0[~free]).all()
        assert (out.y1[~free] >= regions.y1[~free]).all()


def test_coarse_and_withheld_regions():
    _, _, regions, coarse = _published("coarse")
    _, _, _, withheld = _published("withheld")
    free = regions.cls < 0
    assert np.array_equal(coarse.x0[free], regions.x0[free] // 4 * 4)
    assert np.array_equal(coarse.y1[free], regions.y0[free] // 4 * 4 + 3)
    rows = np.column_stack([withheld.x0, withheld.y0, withheld.x1, withheld.y1])[free]
    assert (rows == np.array(BOX)).all()


def _present_group(objects, groups, o: int, t: int) -> np.ndarray:
    owner, member = groups
    group = member[owner == o]
    return group[objects.present[group, t]]


def test_hiding_set_regions_are_the_least_upper_bound_of_the_present_cover_group():
    """Row (O, t): the least upper bound of O's cover group present at t (joined with
    the class's at a class row), the withheld box at a free row where fewer than k are."""
    objects, sets, regions, out = _published("hiding_set")
    groups = cover_groups(sets, regions)
    for row in range(out.obj.size):
        o, t = int(out.obj[row]), int(out.t[row])
        group = _present_group(objects, groups, o, t)
        box = (out.x0[row], out.y0[row], out.x1[row], out.y1[row])
        if regions.cls[row] < 0 and group.size < sets.k:
            assert box == BOX
            continue
        lub = (objects.cx[group, t].min(), objects.cy[group, t].min(),
               objects.cx[group, t].max(), objects.cy[group, t].max())
        if regions.cls[row] >= 0:
            lub = (min(lub[0], regions.x0[row]), min(lub[1], regions.y0[row]),
                   max(lub[2], regions.x1[row]), max(lub[3], regions.y1[row]))
        assert box == lub


@pytest.mark.parametrize("seed", range(6))
def test_every_member_of_the_cover_group_is_inside_the_region_whenever_present(seed: int):
    """What makes every object the distorted version of at least k persons when presence
    is hidden: its cover group, at least k objects or none in any class (then withheld at
    every time point), inside its region whenever they have a position."""
    objects = random_objects(np.random.default_rng(seed), 40, 6, 30, 0.7, 0.3)
    k = 3
    objects, sets, regions, out = _published("hiding_set", objects, k)
    owner, member = cover_groups(sets, regions)
    for o in np.flatnonzero(~sets.suppressed).tolist():
        group = member[owner == o]
        rows = np.flatnonzero(out.obj == o)
        if group.size < k:
            assert (regions.cls[rows] < 0).all()
            assert all((out.x0[r], out.y0[r], out.x1[r], out.y1[r]) == BOX for r in rows)
            continue
        for r in rows.tolist():
            t = int(out.t[r])
            here = group[objects.present[group, t]]
            assert ((out.x0[r] <= objects.cx[here, t]) & (objects.cx[here, t] <= out.x1[r])
                    & (out.y0[r] <= objects.cy[here, t])
                    & (objects.cy[here, t] <= out.y1[r])).all()


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
    from anonymizers.families.mob.qids import generate_and_store_qids
    from anonymizers.loading import load_dataset

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


SUITE = AttackSettings(lengths=(1, 2, 4), max_targets=100, max_instances=100)


def _risks(conn: psycopg.Connection, name: str) -> dict[str, float]:
    """Every attack of the suite on release ``name``: its largest prosecutor risk."""
    attack = attack_release(conn, name, SUITE)
    return {model: attack.result.worst(model)["prosecutor_max"]
            for model in dict.fromkeys(run.model for run in attack.result.runs)}


def _recorded_attack_risk(conn: psycopg.Connection, name: str) -> tuple[str, str]:
    [manifest] = conn.execute(sql.SQL("SELECT attack_risk FROM {}.manifest").format(
        sql.Identifier(name))).fetchone()
    [catalog] = conn.execute("SELECT attack_risk FROM catalog.releases WHERE release_name = %s",
                             (name,)).fetchone()
    return manifest, catalog


@pytest.mark.realdata
def test_tdrive_default_release_withstands_every_attack_and_the_papers_options_are_refused(
        conn: psycopg.Connection, tdrive_window: dict) -> None:
    """The default (positions outside QIDs by hiding_set, presence hidden) is published
    without any accepted risk and measures at most 1/k in every attack of the suite; the
    paper's options (own cells, presence published) measure above 1/k, so the shared gate
    refuses them unless the operator accepts that risk, which the manifest and the
    catalog then record."""
    from mob_matching_attack import matching_attack

    default = _release(tdrive_window, "default")
    k = tdrive_window["k"]
    risks = _risks(conn, default)
    assert set(risks) == {*MODELS, MATCHING}
    assert max(risks.values()) <= 1 / k, risks
    # why: every object is the distorted version of at least k persons of the window
    view = derive_mob_view(conn, default)
    assert np.bincount(view.full_object, minlength=view.regions.n_objects).min() >= k
    recount = matching_attack(conn, default)
    assert recount.unmatched_objects == 0 and recount.candidates
    assert recount.below(k) == {}
    paper = {**tdrive_window, "outside_qids": "cell", "presence": "published",
             "accept_composition_risk": "test: the paper's options on the same window"}
    with pytest.raises(PrivacyViolation, match="accept_attack_risk"):
        _release(paper, "paper-refused")
    reason = "test: the paper's options are measured"
    accepted = _release({**paper, "accept_attack_risk": reason}, "paper")
    assert _recorded_attack_risk(conn, accepted) == (reason, reason)
    paper_risks = _risks(conn, accepted)
    assert paper_risks["location"] > 1 / k
    assert paper_risks[MATCHING] <= 1 / k  # the attacker the paper's model covers


@pytest.mark.realdata
def test_tdrive_presence_published_is_identifying_even_with_positions_hidden(
        conn: psycopg.Connection, tdrive_window: dict) -> None:
    """With the default rule outside QIDs but presence published, when a person was
    observed re-identifies them: an attack of the suite measures above 1/k."""
    published = _release({**tdrive_window, "presence": "published",
                          "accept_attack_risk": "test: presence published is measured"},
                         "presence-published")
    risks = _risks(conn, published)
    assert max(risks.values()) > 1 / tdrive_window["k"], risks


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
    back), so hiding sets lose members and some persons keep fewer than k candidates. The
    withheld regions (the area of use, which holds everyone) go too: they are where, with
    presence hidden, an object's person has no position or too few of its cover group are
    present, and they would still give every person many candidates."""
    from mob_matching_attack import matching_attack

    name = published_city["mob_symmetric"]
    with psycopg.connect(published_city_db) as city:
        k = city.execute(f'SELECT k FROM "{name}".manifest').fetchone()[0]
        city.execute(f'CREATE TEMP TABLE gone AS SELECT object_id FROM "{name}".objects '
                     "ORDER BY object_id LIMIT (SELECT count(*) / 2 FROM "
                     f'"{name}".objects)')
        city.execute(f'DELETE FROM "{name}".positions WHERE object_id IN (SELECT object_id '
                     "FROM gone)")
        city.execute(f'DELETE FROM "{name}".positions WHERE ST_Area(geom) = (SELECT '
                     f'max(ST_Area(geom)) FROM "{name}".positions)')
        recount = matching_attack(city, name)
        city.rollback()
    assert recount.below(k)
