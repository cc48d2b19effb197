"""Suppressed MOB objects that could pass for published ones (seed 003 §3), and the
anonymization that suppresses what they could pass for (anonymizers.families.mob.stand_ins)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mob_helpers import brute_force_suppressed, mobs, random_objects

from anonymizers.errors import InputError
from anonymizers.families.mob.anonymity import (
    Rankings,
    Suppression,
    extreme_union,
    suppressed_objects,
    symmetric_anonymization,
)
from anonymizers.families.mob.genag import build_hilbert_lists
from anonymizers.families.mob.generalize import Generalization, generalize
from anonymizers.families.mob.moving_objects import MovingObjects
from anonymizers.families.mob.outside_qids import OutsideQids
from anonymizers.families.mob.stand_ins import anonymize_without_stand_ins, stand_in_targets

METHODS = [symmetric_anonymization, extreme_union]


def lookalike() -> MovingObjects:
    """j (QID t0) is hidden with a and b (empty QIDs) at t0; s, present when j is, has its
    QID at t3, where only j is present: s is suppressed at k = 3, yet s sits inside j's
    box at t0 and in j's own cells after it."""
    return mobs(cx=[[0, 1, 2, 3], [0, 0, 0, 0], [2, 2, 0, 0], [1, 1, 2, 3]],
                cy=[[0, 0, 0, 0], [2, 2, 2, 0], [0, 0, 0, 0], [1, 0, 0, 0]],
                qids=[[0], [], [], [3]],
                present=[[True] * 4, [True, True, True, False], [True, True, False, False],
                         [True] * 4])


def brute_force_targets(objects: MovingObjects, suppressed: np.ndarray,
                        regions: Generalization) -> list[int]:
    """Every (suppressed, published) pair compared at every time point."""
    box = {(int(o), int(t)): (x0, y0, x1, y1) for o, t, x0, y0, x1, y1 in zip(
        regions.obj, regions.t, regions.x0, regions.y0, regions.x1, regions.y1, strict=True)}
    found = set()
    for s in np.flatnonzero(suppressed).tolist():
        for o in np.flatnonzero(~suppressed).tolist():
            if not np.array_equal(objects.present[s], objects.present[o]):
                continue
            times = np.flatnonzero(objects.present[s]).tolist()
            if all(box[o, t][0] <= objects.cx[s, t] <= box[o, t][2]
                   and box[o, t][1] <= objects.cy[s, t] <= box[o, t][3] for t in times):
                found.add(o)
    return sorted(found)


@pytest.mark.parametrize("anonymize", METHODS)
def test_the_object_a_suppressed_one_could_pass_for_is_found(anonymize) -> None:
    objects = lookalike()
    sets = anonymize(objects, 3)
    assert sets.suppressed.tolist() == [False, False, False, True]
    assert stand_in_targets(objects, sets.suppressed, generalize(objects, sets)).tolist() == [0]


@pytest.mark.parametrize("anonymize", METHODS)
def test_the_anonymization_suppresses_it_and_runs_again(anonymize) -> None:
    objects = lookalike()
    release = anonymize_without_stand_ins(objects, 3, anonymize)
    assert release.sets.suppressed.tolist() == [True, False, False, True]
    assert (release.excluded, release.rounds) == (1, 2)
    assert stand_in_targets(objects, release.sets.suppressed, release.regions).size == 0


def test_a_cell_outside_the_region_once_or_another_presence_is_no_stand_in() -> None:
    objects, qids = lookalike(), [[0], [], [], [3]]
    cy = objects.cy.copy()
    cy[3, 3] += 5  # s leaves j's cell at t3
    present = objects.present.copy()
    present[3, 0] = False  # s starts at t1, j at t0
    for case in (MovingObjects.from_arrays(objects.cx, cy, objects.present, qids),
                 MovingObjects.from_arrays(objects.cx, objects.cy, present, qids)):
        sets = symmetric_anonymization(case, 3)
        assert sets.suppressed[3]
        assert stand_in_targets(case, sets.suppressed, generalize(case, sets)).size == 0


def test_with_presence_hidden_the_suppressed_are_published_blank_with_k_in_all() -> None:
    """s (suppressed at k = 3) starts at t1, j at t0: with presence hidden s could pass for
    j's object, and suppressing j would not end it (j would pass for others in turn). So s
    is published blank, and the two objects present at the fewest time points with it."""
    objects, qids = lookalike(), [[0], [], [], [3]]
    present = objects.present.copy()
    present[3, 0] = False
    case = MovingObjects.from_arrays(objects.cx, objects.cy, present, qids)
    box = (-100, -100, 100, 100)
    release = anonymize_without_stand_ins(case, 3, symmetric_anonymization,
                                          OutsideQids("hiding_set", box=box, presence="hidden"))
    assert release.sets.suppressed.tolist() == [False, False, False, True]
    assert release.blank.tolist() == [False, True, True, True]  # b, a: 2 and 3 time points
    assert release.published_objects().tolist() == [0, 1, 2, 3]
    regions = release.regions
    for o in range(4):
        rows = regions.obj == o
        assert regions.t[rows].tolist() == np.flatnonzero(present[o]).tolist()
        held = np.column_stack([regions.x0, regions.y0, regions.x1, regions.y1])[rows]
        assert ((held == box).all(axis=1)).all() == bool(release.blank[o])


@st.composite
def _cases(draw: st.DrawFn) -> tuple[MovingObjects, int]:
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n, m = draw(st.integers(1, 30)), draw(st.integers(1, 6))
    objects = random_objects(rng, n, m, draw(st.sampled_from([1, 2, 4])),  # small: lookalikes
                             draw(st.sampled_from([1.0, 0.8])),
                             draw(st.sampled_from([0.2, 0.5])))
    return objects, draw(st.integers(2, 5))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_cases(), st.sampled_from(METHODS))
def test_no_suppressed_object_can_pass_for_a_published_one(case, anonymize) -> None:
    objects, k = case
    first = anonymize(objects, k)
    regions = generalize(objects, first)
    assert stand_in_targets(objects, first.suppressed, regions).tolist() == \
        brute_force_targets(objects, first.suppressed, regions)
    release = anonymize_without_stand_ins(objects, k, anonymize)
    assert brute_force_targets(objects, release.sets.suppressed, release.regions) == []
    assert release.excluded <= int(release.sets.suppressed.sum())
    hidden = anonymize_without_stand_ins(objects, k, anonymize,
                                         OutsideQids("cell", presence="hidden"))
    assert hidden.published_objects().size == objects.n_objects
    # none, or at least k (all of them when there are fewer: the verifier refuses that)
    assert int(hidden.blank.sum()) in (0, *range(min(k, objects.n_objects),
                                                  objects.n_objects + 1))
    assert hidden.blank[hidden.sets.suppressed].all()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_cases(), st.integers(0, 2**32 - 1))
def test_suppression_that_excludes_more_reaches_the_fresh_fixed_point(case, seed) -> None:
    """Kept between rounds, the fixed point is the one counting every pair from scratch."""
    objects, k = case
    rng = np.random.default_rng(seed)
    suppression = Suppression(objects, k)
    excluded = np.zeros(objects.n_objects, dtype=bool)
    for _ in range(3):
        assert suppression.exclude(excluded).tolist() == \
            brute_force_suppressed(objects, k, excluded).tolist()
        excluded |= rng.random(objects.n_objects) < 0.2


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_cases(), st.integers(0, 2**32 - 1), st.sampled_from([1, 2]))
def test_rankings_kept_between_rounds_give_the_sets_of_a_fresh_run(case, seed,
                                                                   workers) -> None:
    objects, k = case
    rng = np.random.default_rng(seed)
    lists = build_hilbert_lists(objects)
    rankings, kept_suppression = Rankings(lists, k), Suppression(objects, k)
    excluded = np.zeros(objects.n_objects, dtype=bool)
    for _ in range(3):
        kept_suppression.exclude(excluded)
        fresh_suppression = Suppression(objects, k)
        fresh_suppression.exclude(excluded)
        kept = symmetric_anonymization(objects, k, lists, workers, kept_suppression, rankings)
        fresh = symmetric_anonymization(objects, k, lists, suppression=fresh_suppression)
        for field in ("set_indptr", "set_members", "time_indptr", "times", "suppressed"):
            assert np.array_equal(getattr(kept, field), getattr(fresh, field)), field
        excluded |= rng.random(objects.n_objects) < 0.2


def test_excluded_objects_stay_suppressed_and_bad_masks_are_refused() -> None:
    objects = lookalike()
    excluded = np.array([False, True, False, False])  # a (empty QID) removed: j is short
    assert suppressed_objects(objects, 3, excluded).tolist() == [True, True, False, True]
    with pytest.raises(InputError, match="one value per object"):
        suppressed_objects(objects, 3, np.array([True]))
    with pytest.raises(InputError, match="other moving objects or another k"):
        symmetric_anonymization(objects, 2, suppression=Suppression(objects, 3))
    with pytest.raises(InputError, match="other Hilbert lists or another k"):
        symmetric_anonymization(objects, 3, rankings=Rankings(build_hilbert_lists(objects), 3))
