"""The Adult benchmark's two numberings of categorical values, and its NCP, on hand-made data."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from anonymizers.families.groups.demographics import atomic_grid, mondrian_demographic_classes
from tests.benchmarks.bench_adult import CATEGORICAL, adult_points, category_codes, ncp


def test_alphabetical_codes_sort_the_values() -> None:
    values = pd.Series(["Private", "Local-gov", "Private", "Federal-gov", "Local-gov"])
    assert category_codes(values, "alphabetical").tolist() == [2, 1, 2, 0, 1]


def test_first_appearance_codes_follow_the_rows() -> None:
    values = pd.Series(["Private", "Local-gov", "Private", "Federal-gov", "Local-gov"])
    assert category_codes(values, "first_appearance").tolist() == [0, 1, 0, 2, 1]


def test_alphabetical_codes_do_not_depend_on_row_order() -> None:
    values = pd.Series(["Private", "Local-gov", "Federal-gov"])
    shuffled = values.iloc[[2, 0, 1]].reset_index(drop=True)
    by_value = dict(zip(values, category_codes(values, "alphabetical"), strict=True))
    assert dict(zip(shuffled, category_codes(shuffled, "alphabetical"), strict=True)) == by_value
    moved = dict(zip(shuffled, category_codes(shuffled, "first_appearance"), strict=True))
    assert moved != dict(zip(values, category_codes(values, "first_appearance"), strict=True))


def test_an_unknown_numbering_is_refused() -> None:
    with pytest.raises(ValueError, match="alphabetical"):
        category_codes(pd.Series(["a"]), "by_frequency")


def _table() -> pd.DataFrame:
    """Three records: education 'HS-grad' (9 years) first, 'Bachelors' (13) second."""
    rows = {"age": [30, 40, 50], "education": ["HS-grad", "Bachelors", "HS-grad"],
            "education_num": [9, 13, 9]}
    rows |= {name: ["b", "a", "c"] for name in CATEGORICAL}
    return pd.DataFrame(rows)


def test_alphabetical_points_keep_education_years() -> None:
    points, domain, bins = adult_points(_table(), "alphabetical")
    assert points[:, 1].tolist() == [9, 13, 9]
    assert domain[1].tolist() == [1, 17] and bins[1] == 16
    assert points[:, 2].tolist() == [1, 0, 2]  # workclass b, a, c alphabetically
    assert points[:, 0].tolist() == [30, 40, 50] and bins[0] == 74


def test_first_appearance_points_number_education_too() -> None:
    points, domain, bins = adult_points(_table(), "first_appearance")
    assert points[:, 1].tolist() == [0, 1, 0]  # 9 years first, 13 years second
    assert domain[1].tolist() == [0, 2] and bins[1] == 2
    assert points[:, 2].tolist() == [0, 1, 2]  # workclass b, a, c as they appear


def test_first_appearance_with_education_years() -> None:
    points, _, _ = adult_points(_table(), "first_appearance_education_years")
    assert points[:, 1].tolist() == [9, 13, 9]
    assert points[:, 2].tolist() == [0, 1, 2]


def test_ncp_of_hand_made_classes() -> None:
    """Ages 0, 1, 1 | 6, 7, 7 in two classes (k = 2): every record's class spans 1 of the
    range 7, so the NCP is 1/7; the constant second attribute costs nothing."""
    points = np.array([[0, 3], [1, 3], [1, 3], [6, 3], [7, 3], [7, 3]], float)
    grid = atomic_grid(np.array([[0, 8], [0, 8]]), np.array([8, 8]))
    classes = mondrian_demographic_classes(points, grid, 2)
    assert classes.n.tolist() == [3, 3]
    assert ncp(points, classes) == pytest.approx((1 / 7 + 0) / 2)
