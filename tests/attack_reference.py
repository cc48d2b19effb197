"""A literal, slow transcription of scikit-mobility 1.3.1's attacks, for tests.

Every combination of a user's rows against every user, as ``skmob.privacy.attacks`` does,
but on plain tuples (location key, time key) so that the tests can compare the attack
engine with it on any input, without skmob installed.  Home/work takes the two *most*
frequent locations (skmob takes the two least frequent: README).
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations

Row = tuple[int, int]  # (location key, time key)


def _rows(size: int, rows: list, j: int) -> list[tuple]:
    return list(combinations(rows, min(j, size)))


def _multiset_match(user: list[Row], instance: tuple[Row, ...], key) -> bool:
    have, need = Counter(key(r) for r in user), Counter(key(r) for r in instance)
    return all(have[k] >= n for k, n in need.items())


def _sequence_match(user: list[Row], instance: tuple[Row, ...]) -> bool:
    i = 0
    for row in user:
        if i < len(instance) and row[0] == instance[i][0]:
            i += 1
    return i == len(instance)


def _within(known: float, published: float, tolerance: float) -> bool:
    return published - published * tolerance <= known <= published + published * tolerance


def reference_risks(data: dict[int, list[Row]], model: str, j: int,
                    tolerance: float = 0.0) -> dict[int, float]:
    """Per user risk: max over instances of 1 / (number of users the instance matches)."""
    freq = {u: Counter(r[0] for r in rows) for u, rows in data.items()}
    risks: dict[int, float] = {}
    for user, rows in data.items():
        if model in ("location", "location_time", "location_sequence"):
            instances: list = _rows(len(rows), rows, j)
        elif model == "home_work":
            top = sorted(freq[user].items(), key=lambda kv: (-kv[1], kv[0]))[:2]
            instances = [tuple(k for k, _ in top)]
        else:
            instances = _rows(len(freq[user]), sorted(freq[user]), j)
        best = 0.0
        for instance in instances:
            matches = sum(_matches(model, data[other], freq[other], instance, freq[user],
                                   tolerance) for other in data)
            best = max(best, 1.0 / matches)
        risks[user] = best
    return risks


def _matches(model: str, rows: list[Row], freq: Counter, instance: tuple, own: Counter,
             tolerance: float) -> bool:
    if model == "location":
        return _multiset_match(rows, instance, lambda r: r[0])
    if model == "location_time":
        return _multiset_match(rows, instance, lambda r: r)
    if model == "location_sequence":
        return _sequence_match(rows, instance)
    if any(k not in freq for k in instance):
        return False
    if model == "unique_location":
        return True
    if model == "location_frequency":
        return all(_within(own[k], freq[k], tolerance) for k in instance)
    if model == "location_probability":
        total, own_total = sum(freq.values()), sum(own.values())
        return all(_within(own[k] / own_total, freq[k] / total, tolerance) for k in instance)
    if model == "location_proportion":
        top, own_top = max(freq[k] for k in instance), max(own[k] for k in instance)
        return all(_within(own[k] / own_top, freq[k] / top, tolerance) for k in instance)
    if model == "home_work":
        top = {k for k, _ in sorted(freq.items(), key=lambda kv: (-kv[1], kv[0]))[:2]}
        return set(instance) <= top
    raise ValueError(model)
