"""The attack engine against a literal transcription of skmob's attacks (attack_reference)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from anonymizers.attacks.knowledge import NO_TIME, Observations, Records, time_keys
from anonymizers.attacks.models import MODELS
from anonymizers.attacks.suite import run_attacks
from anonymizers.errors import InputError
from tests.attack_reference import reference_risks


def random_data(seed: int, users: int = 9, locations: int = 5,
                max_points: int = 8) -> dict[int, list[tuple[int, int]]]:
    rng = np.random.default_rng(seed)
    return {u: [(int(rng.integers(locations)), int(rng.integers(3)))
                for _ in range(int(rng.integers(1, max_points + 1)))] for u in range(users)}


def observations_of(data: dict[int, list[tuple[int, int]]]) -> Observations:
    unit = np.array([u for u, rows in data.items() for _ in rows], dtype=np.int64)
    location = np.array([r[0] for rows in data.values() for r in rows], dtype=np.int64)
    time = np.array([r[1] for rows in data.values() for r in rows], dtype=np.int64)
    return Observations(unit, unit.copy(), location, time)


def engine_risks(data: dict[int, list[tuple[int, int]]], model: str, j: int,
                 tolerance: float = 0.0, max_instances: int | None = None) -> dict[int, float]:
    observed = observations_of(data)
    options = {model: {"tolerance": tolerance}} if "_f" in model or "_p" in model else {}
    result = run_attacks(observed, Records.of_persons(observed), models=[model],
                         lengths=[j], threshold=0.5, max_instances=max_instances,
                         options=options)
    run = result.runs[0]
    return dict(zip(run.persons.tolist(), run.risk.tolist(), strict=True))


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("j", [1, 2, 3])
@pytest.mark.parametrize("model", ["location", "location_time", "location_sequence",
                                   "unique_location", "location_frequency",
                                   "location_probability", "location_proportion"])
def test_engine_gives_the_reference_risks(model: str, j: int, seed: int) -> None:
    data = random_data(seed)
    assert engine_risks(data, model, j) == pytest.approx(reference_risks(data, model, j))


@pytest.mark.parametrize("model", ["location_frequency", "location_probability",
                                   "location_proportion"])
@pytest.mark.parametrize("tolerance", [0.2, 0.5])
def test_tolerances_match_the_reference(model: str, tolerance: float) -> None:
    data = random_data(7, users=12, locations=4, max_points=10)
    for j in (1, 2):
        assert engine_risks(data, model, j, tolerance) == pytest.approx(
            reference_risks(data, model, j, tolerance))


@pytest.mark.parametrize("seed", [0, 5])
def test_home_work_takes_the_two_most_frequent_locations(seed: int) -> None:
    data = random_data(seed, users=10, locations=4, max_points=9)
    assert engine_risks(data, "home_work", 2) == pytest.approx(
        reference_risks(data, "home_work", 2))
    # One user, home 0 (3 visits), work 1 (2), once at 2: only {0, 1} is known.
    data = {0: [(0, 0)] * 3 + [(1, 0)] * 2 + [(2, 0)], 1: [(0, 0), (1, 0)], 2: [(2, 0), (1, 0)]}
    assert engine_risks(data, "home_work", 2)[0] == pytest.approx(0.5)


def test_a_sample_of_instances_never_exceeds_the_exhaustive_risk() -> None:
    data = random_data(11, users=8, locations=6, max_points=12)
    for model in ("location", "location_sequence", "unique_location"):
        full = engine_risks(data, model, 3)
        sampled = engine_risks(data, model, 3, max_instances=5)
        assert all(sampled[u] <= full[u] + 1e-12 for u in full)


def test_persons_are_counted_through_anonymity_sets() -> None:
    """Two published records, each standing for 3 persons: every match is 1/3 or 1/6."""
    observed = Observations(np.array([0, 0, 1, 1]), np.array([10, 10, 11, 11]),
                            np.array([0, 1, 0, 2]), np.full(4, NO_TIME))
    records = Records(np.array([0, 0, 1, 1]), np.array([0, 1, 0, 2]), np.full(4, NO_TIME),
                      np.array([0, 3, 6]), np.array([10, 12, 13, 11, 12, 14]))
    result = run_attacks(observed, records, models=["unique_location"], lengths=[1, 2],
                         threshold=1 / 3)
    one, two = (run.summary(1 / 3) for run in result.runs)
    assert one["prosecutor_max"] == pytest.approx(1 / 3)  # location 1 (or 2): one record
    assert two["prosecutor_max"] == pytest.approx(1 / 3)
    assert two["prosecutor_share_above"] == 0.0
    assert one["marketer"] == pytest.approx(1 / 3)


def test_time_keys_truncate_without_collisions() -> None:
    # 2011-01-11 and 2011-11-01 collide in skmob's digit concatenation, not here.
    days = np.array(["2011-01-11T10:00", "2011-11-01T10:00"], dtype="datetime64[s]")
    assert len(set(time_keys(days.astype(np.int64), "day").tolist())) == 2
    hours = np.array(["2011-01-11T10:00", "2011-01-11T11:59"], dtype="datetime64[s]")
    assert len(set(time_keys(hours.astype(np.int64), "hour").tolist())) == 2
    with pytest.raises(InputError, match="precision"):
        time_keys(hours.astype(np.int64), "fortnight")


def test_every_model_is_registered() -> None:
    assert set(MODELS) == {"location", "location_sequence", "location_time",
                           "unique_location", "location_frequency", "location_probability",
                           "location_proportion", "home_work", "prefix"}


def test_a_record_without_items_is_no_match_and_breaks_nothing() -> None:
    """A published record can be empty (a trajectory all outside the cells): ordered
    matching must still find the records after it."""
    observed = Observations(np.array([0, 0]), np.array([7, 7]), np.array([1, 2]),
                            np.full(2, NO_TIME))
    records = Records(np.array([0, 0, 2, 2]), np.array([1, 2, 1, 2]), np.full(4, NO_TIME),
                      np.array([0, 1, 2, 3]), np.array([7, 8, 9]))
    result = run_attacks(observed, records, models=["location_sequence", "prefix"],
                         lengths=[2], threshold=0.5)
    assert [run.summary(0.5)["prosecutor_max"] for run in result.runs] == [0.5, 0.5]


def test_mla_region_hits_are_the_closed_rectangles_over_half_open_intervals():
    """The clustering adapter's region test (numpy) against the brute-force definition, with
    fixes on every edge: the rectangle is closed, the interval excludes its end, and two
    regions of one group holding a fix give one pair."""
    from anonymizers.families.clustering.attack import Regions, region_hits

    rng = np.random.default_rng(7)
    t_us = rng.integers(0, 10, 400) * 1_000_000
    xy = rng.integers(0, 6, (400, 2)).astype(np.float64)
    regions = sorted((int(g), int(t0) * 1_000_000, int(t0 + span) * 1_000_000,
                      float(x0), float(y0), float(x0 + w), float(y0 + h))
                     for g, t0, span, x0, y0, w, h in rng.integers(0, 5, (40, 7)))
    names = ("group_id", "t_start_us", "t_end_us", "x0", "y0", "x1", "y1")
    columns = dict(zip(names, zip(*regions, strict=True), strict=True))
    holds, groups = region_hits(t_us, xy, Regions.from_columns(columns))
    expected = {(i, g) for i in range(t_us.size) for g, t0, t1, x0, y0, x1, y1 in regions
                if t0 <= t_us[i] < t1 and x0 <= xy[i, 0] <= x1 and y0 <= xy[i, 1] <= y1}
    assert sorted(zip(holds.tolist(), groups.tolist(), strict=True)) == sorted(expected)
    assert len(expected) > 50  # the draw has hits, on edges among them
    empty = Regions.from_columns({name: [] for name in names})
    assert region_hits(t_us, xy, empty)[0].size == 0


def test_records_sharing_anonymity_sets_count_as_records_with_copies_of_them():
    """Records.set_of (shared sets, as records_from_sequences makes them) gives the same
    unions, members and records of a person as one copy of the set per record."""
    from anonymizers.attacks.adapters.base import records_from_sequences
    from anonymizers.attacks.index import AnonymitySets

    rng = np.random.default_rng(3)
    pool = [np.unique(rng.integers(0, 40, size)) for size in (1, 3, 5, 8)]
    picks = rng.integers(0, len(pool), 30)
    sequences = [rng.integers(0, 6, 3) for _ in picks]
    shared = records_from_sequences(sequences, [pool[p] for p in picks])
    assert shared.set_of is not None and shared.set_offsets.size - 1 == len(pool)
    copies = Records(shared.record, shared.location, shared.time,
                     np.concatenate(([0], np.cumsum([pool[p].size for p in picks]))),
                     np.concatenate([pool[p] for p in picks]))
    a, b = AnonymitySets(shared), AnonymitySets(copies)
    for _ in range(50):
        chosen = np.unique(rng.integers(0, len(picks), rng.integers(1, 8)))
        assert a.count(chosen) == b.count(chosen)
        assert np.array_equal(a.members(chosen), b.members(chosen))
    for person in range(40):
        assert np.array_equal(a.records_of(person), b.records_of(person))
    with pytest.raises(InputError, match="anonymity sets"):
        Records(shared.record, shared.location, shared.time, shared.set_offsets,
                shared.set_persons, np.full(len(picks), len(pool)))


@pytest.mark.parametrize("scale", [1, 10**12])  # persons numbered 0.. / sparse large ids
@pytest.mark.parametrize("budget", [0, 1 << 20])  # no bitset / bitsets for the large sets
def test_union_counts_and_records_of_a_person_are_plain_set_arithmetic(
        scale: int, budget: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Counts through bitsets of the large sets plus the small sets' members, whatever the
    person ids, equal the size of the union of the sets; records_of is a plain scan."""
    from anonymizers.attacks import index

    monkeypatch.setattr(index, "BITSET_BUDGET", budget)
    rng = np.random.default_rng(11)
    sets = [np.unique(rng.integers(0, 3_000, size)) * scale
            for size in rng.choice([1, 2, 30, 400, 2_500], 60)]
    n_records = 200
    set_of = rng.integers(0, len(sets), n_records)
    records = Records(np.arange(n_records), np.zeros(n_records, dtype=np.int64),
                      np.full(n_records, NO_TIME),
                      np.concatenate(([0], np.cumsum([s.size for s in sets]))),
                      np.concatenate(sets), set_of)
    anonymity = index.AnonymitySets(records)
    assert (anonymity._bits.shape[0] > 0) == (budget > 0)
    for _ in range(100):
        chosen = np.unique(rng.integers(0, n_records, rng.integers(1, 12)))
        union = set().union(*(sets[set_of[r]].tolist() for r in chosen))
        assert anonymity.count(chosen) == len(union)
        assert anonymity.members(chosen).tolist() == sorted(union)
    for person in [*rng.choice(np.concatenate(sets), 20).tolist(), scale * 5_000]:
        expected = [r for r in range(n_records) if person in sets[set_of[r]]]
        assert anonymity.records_of(person).tolist() == expected


def _holds_in_order(sequence: list[int], pattern: list[int]) -> bool:
    remaining = iter(sequence)
    return all(key in remaining for key in pattern)


@pytest.mark.parametrize("seed", range(5))
def test_containing_each_is_plain_subsequence_search(seed: int) -> None:
    """The prefix-sharing batch search gives, for every pattern, exactly the records that
    hold it in order: patterns that are prefixes of others, repeated ones, empty ones and
    ones no record holds, over records that may be empty."""
    from anonymizers.attacks.index import RecordIndex
    from anonymizers.families.generalization.attack import Flat, containing_persons

    rng = np.random.default_rng(seed)
    sequences = [rng.integers(0, 6, size=int(rng.integers(0, 9))) for _ in range(60)]
    patterns = [s[: int(rng.integers(0, s.size + 1))] for s in sequences[:40]]
    patterns += [rng.integers(0, 7, size=int(rng.integers(0, 5))) for _ in range(40)]
    patterns += patterns[:10]
    record = np.repeat(np.arange(len(sequences)), [s.size for s in sequences])
    index = RecordIndex(record, np.concatenate(sequences), len(sequences))
    found = index.containing_each(patterns)
    for pattern, records in zip(patterns, found, strict=True):
        expected = [r for r, s in enumerate(sequences)
                    if pattern.size and _holds_in_order(s.tolist(), pattern.tolist())]
        assert records.tolist() == expected
        assert records.tolist() == index.containing(pattern).tolist()
    owners = rng.integers(0, 20, size=len(sequences))
    offsets, members, set_of = containing_persons(Flat.of(patterns), Flat.of(sequences),
                                                  owners)
    sets = [members[a:b].tolist() for a, b in itertools.pairwise(offsets)]
    assert [sets[s] for s in set_of] == [sorted(set(owners[r].tolist())) for r in found]
    assert len({tuple(s) for s in sets}) == len(sets)  # equal sets kept once
    assert members.dtype == np.int32
    # Taken in the order given (any order: only the time depends on it), the same sets.
    ordered = containing_persons(Flat.of(patterns), Flat.of(sequences), owners, ordered=True)
    assert [ordered[1][ordered[0][s]:ordered[0][s + 1]].tolist() for s in ordered[2]] == \
        [sets[s] for s in set_of]
    in_order = dict(index.each_containing(patterns, ordered=True))
    assert [in_order[i].tolist() for i in range(len(patterns))] == [f.tolist() for f in found]


@pytest.mark.parametrize("seed", range(3))
def test_dense_keys_number_labels_in_order_of_first_appearance(seed: int) -> None:
    from anonymizers.families.generalization.attack import _dense_keys

    rng = np.random.default_rng(seed)
    parts = [rng.integers(0, 50, size=300) * 7, rng.integers(0, 60, size=200) * 7,
             np.zeros(0, dtype=np.int64)]
    labels = np.concatenate(parts).tolist()
    order = list(dict.fromkeys(labels))  # labels in order of first appearance
    keys = _dense_keys(*parts)
    assert np.concatenate(keys).tolist() == [order.index(label) for label in labels]
    assert [k.size for k in keys] == [p.size for p in parts]


def test_distinct_sets_keep_each_content_once_and_pack_it() -> None:
    from anonymizers.attacks.adapters.base import DistinctSets

    sets = DistinctSets()
    arrays = [np.array([1, 2], dtype=np.int32), np.array([3], dtype=np.int32),
              np.array([1, 2], dtype=np.int32), np.zeros(0, dtype=np.int32)]
    assert [sets.add(a) for a in arrays] == [0, 1, 0, 2]
    offsets, members = sets.packed()
    assert offsets.tolist() == [0, 2, 3, 3] and members.tolist() == [1, 2, 3]
    assert members.dtype == np.int32
    assert [sets[i].tolist() for i in range(len(sets))] == [[1, 2], [3], []]


def test_distinct_sets_span_blocks_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    from anonymizers.attacks.adapters.base import DistinctSets

    monkeypatch.setattr(DistinctSets, "BLOCK", 4)
    rng = np.random.default_rng(5)
    arrays = [np.sort(rng.choice(20, size=int(rng.integers(0, 9)), replace=False))
              for _ in range(60)]  # some larger than a block, many repeated
    sets = DistinctSets()
    numbers = [sets.add(a) for a in arrays]
    offsets, members = sets.packed()
    for a, number in zip(arrays, numbers, strict=True):
        assert members[offsets[number]:offsets[number + 1]].tolist() == a.tolist()
    assert len(set(numbers)) == len({a.tobytes() for a in arrays}) == offsets.size - 1
    with pytest.raises(TypeError):
        sets.add(np.zeros(2, dtype=np.int32))


def test_dense_keys_refuse_negative_cell_ids() -> None:
    from anonymizers.errors import ReleaseError
    from anonymizers.families.generalization.attack import _dense_keys

    with pytest.raises(ReleaseError, match="non-negative"):
        _dense_keys(np.array([3, -1]), np.array([3]))


@pytest.mark.parametrize("seed", [0, 1])
def test_attacking_the_sampled_units_alone_gives_the_same_runs(seed: int) -> None:
    from anonymizers.attacks.suite import sample_units

    observed = observations_of(random_data(seed, users=40, locations=7))
    records = Records.of_persons(observed)
    settings = {"models": ["location", "location_sequence"], "lengths": [1, 2],
                "threshold": 0.5, "max_units": 6, "seed": seed}
    whole = run_attacks(observed, records, **settings)
    sampled = observed.of_units(sample_units(observed, 6, seed))
    assert np.unique(sampled.unit).size == 6
    alone = run_attacks(sampled, records, **settings)
    assert whole.summaries() == alone.summaries()
    for a, b in zip(whole.runs, alone.runs, strict=True):
        assert a.persons.tolist() == b.persons.tolist() and a.risk.tolist() == b.risk.tolist()


def test_the_sampled_units_keep_their_rows_in_order() -> None:
    seen = Observations(np.array([0, 0, 3, 5, 5]), np.array([7, 7, 8, 9, 9]),
                        np.array([1, 2, 1, 4, 2]), np.full(5, NO_TIME))
    chosen = seen.of_units(np.array([0, 2]))
    assert chosen.unit.tolist() == [0, 0, 5, 5] and chosen.person.tolist() == [7, 7, 9, 9]
    assert chosen.location.tolist() == [1, 2, 4, 2]
    assert seen.of_units(np.arange(3)) is seen


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("pairs_at_once", [7, 1 << 22])
def test_top_two_keys_are_the_most_frequent_with_ties_to_the_smaller(
        seed: int, pairs_at_once: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from anonymizers.attacks import knowledge
    from anonymizers.attacks.knowledge import top_two_keys

    monkeypatch.setattr(knowledge, "_PAIRS_AT_ONCE", pairs_at_once)

    rng = np.random.default_rng(seed)
    pairs = {(int(r), int(k)): int(rng.integers(1, 4))  # small counts: many ties
             for r, k in zip(rng.integers(0, 30, 200), rng.integers(0, 12, 200), strict=True)}
    record, key = (np.array(column) for column in zip(*pairs, strict=True))
    count = np.array(list(pairs.values()))
    tops = top_two_keys(record, key, count, 32)
    for r in range(32):
        ranked = sorted((-c, k) for (rr, k), c in pairs.items() if rr == r)[:2]
        assert tops[r].tolist() == [k for _, k in ranked] + [-1] * (2 - len(ranked))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_copies_of_a_record_change_no_model_s_outcome(seed: int) -> None:
    """A release that repeats a sequence (with its anonymity set) is attacked as if each
    sequence were published once: what published_items.sql relies on to read the distinct
    published trajectories only."""
    from anonymizers.attacks.adapters.base import records_from_sequences

    rng = np.random.default_rng(seed)
    observed = observations_of(random_data(seed, users=30, locations=6))
    observed = Observations(observed.unit, observed.person, observed.location,
                            np.full(observed.unit.size, NO_TIME))
    distinct = [rng.integers(0, 6, int(rng.integers(1, 6))) for _ in range(12)]
    sets = [np.unique(rng.integers(0, 30, int(rng.integers(1, 8)))) for _ in distinct]
    copies = rng.integers(1, 5, len(distinct))
    once = records_from_sequences(distinct, sets)
    repeated = records_from_sequences(
        [s for s, n in zip(distinct, copies, strict=True) for _ in range(n)],
        [m for m, n in zip(sets, copies, strict=True) for _ in range(n)])
    settings = {"models": list(MODELS), "lengths": [1, 2, 3], "threshold": 0.5,
                "max_instances": None}
    a, b = run_attacks(observed, once, **settings), run_attacks(observed, repeated, **settings)
    assert a.summaries() == b.summaries()
    for x, y in zip(a.runs, b.runs, strict=True):
        assert x.risk.tolist() == y.risk.tolist() and x.success.tolist() == y.success.tolist()


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_records_restricted_to_the_known_locations_give_every_model_s_outcome(
        seed: int) -> None:
    """What an adapter builds for a sample of targets (the items at their locations, the
    whole records' sizes and top two) attacks those targets as the whole records do."""
    from anonymizers.attacks.suite import sample_units

    observed = observations_of(random_data(seed, users=40, locations=25, max_points=10))
    records = Records.of_persons(observed)
    sampled = observed.of_units(sample_units(observed, 4, seed))
    restricted = records.restricted_to(np.unique(sampled.location))
    assert restricted.record.size < records.record.size
    settings = {"models": list(MODELS), "lengths": [1, 2, 3], "threshold": 0.5,
                "max_instances": None, "options": {"location_probability": {"tolerance": 0.1}}}
    whole = run_attacks(sampled, records, **settings)
    alone = run_attacks(sampled, restricted, **settings)
    for a, b in zip(whole.runs, alone.runs, strict=True):
        assert (a.model, a.risk.tolist(), a.success.tolist(), a.instances) == (
            b.model, b.risk.tolist(), b.success.tolist(), b.instances)


def test_restricted_records_keep_the_whole_records_top_two_and_sizes() -> None:
    """Record 0 visits c most; the target knows a and b, half of its visits each: the
    whole record 0 neither has them as its top two nor spends half its visits at either;
    record 0 cut down to a and b would do both."""
    a, b, c = 0, 1, 2
    records = Records(np.array([0, 0, 0, 0, 1, 1]), np.array([a, b, c, c, a, b]),
                      np.full(6, NO_TIME), np.array([0, 1, 2]), np.array([0, 1]))
    target = Observations(np.array([1, 1]), np.array([1, 1]), np.array([a, b]),
                          np.full(2, NO_TIME))
    restricted = records.restricted_to(np.array([a, b]))
    bare = Records(restricted.record, restricted.location, restricted.time,
                   restricted.set_offsets, restricted.set_persons)
    settings = {"models": ["home_work", "location_probability"], "lengths": [1],
                "threshold": 0.5, "max_instances": None}
    risks = [[run.risk.tolist() for run in run_attacks(target, given, **settings).runs]
             for given in (records, restricted, bare)]
    assert risks[0] == risks[1] == [[1.0], [1.0]] and risks[2] == [[0.5], [0.5]]
