"""MOB quality measures (seed 003 §3, §6.3) on the paper's running example and hand cases."""

from __future__ import annotations

import numpy as np
import pytest

from anonymizers.errors import InputError
from anonymizers.families.mob.quality import (
    average_information_loss,
    class_summary,
    range_query_distortion,
)

# Figure 1(b): O1, O2 share [(1,2),(2,3)] at t1; O2, O3 share [(2,6),(3,7)] at t2.
FIG1B = {  # (object, t): (x0, y0, x1, y1)
    (1, 1): (1, 2, 2, 3), (2, 1): (1, 2, 2, 3), (3, 1): (6, 6, 6, 6),
    (1, 2): (5, 3, 5, 3), (2, 2): (2, 6, 3, 7), (3, 2): (2, 6, 3, 7),
}


def _regions(table):
    return tuple(np.array([r[i] for r in table.values()]) for i in range(4))


def test_information_loss_of_example_2():
    """Example 2: IL(D, D*) = 2 (1 - 1/4) + 2 (1 - 1/4) = 3 over 3 objects x 2 times."""
    assert average_information_loss(*_regions(FIG1B)) == pytest.approx(3 / 6)


def test_class_summary_counts_coverage_in_k_to_2k_minus_1():
    found = class_summary(np.array([2, 2, 3, 5]), k=2)
    assert (found.n_classes, found.median_size, found.coverage) == (4, 2.5, 0.75)
    with pytest.raises(InputError):
        class_summary(np.array([1, 4]), k=2)
    assert class_summary(np.array([], dtype=int), 2).n_classes == 0


def test_range_query_distortion_is_zero_without_generalization_and_grows_with_it():
    rng = np.random.default_rng(0)
    x, y = rng.integers(0, 50, 400), rng.integers(0, 50, 400)
    t = np.repeat(np.arange(4), 100)
    exact = range_query_distortion(x, y, t, (x, y, x, y), t, 4, np.random.default_rng(1))
    assert exact.possibly_inside == 0 and exact.definitely_inside == 0
    blurred = range_query_distortion(x, y, t, (x - 3, y - 3, x + 3, y + 3), t, 4,
                                     np.random.default_rng(1))
    assert blurred.possibly_inside > 0 and blurred.definitely_inside > 0
    assert blurred.queries == 100 * 100


def test_definitely_inside_counts_regions_within_the_query():
    x, y, t = np.array([0, 1]), np.array([0, 0]), np.array([0, 0])
    regions = (np.array([0, 0]), np.array([0, 0]), np.array([1, 1]), np.array([0, 0]))
    found = range_query_distortion(x, y, t, regions, t, 1, np.random.default_rng(0),
                                   n_regions=50, n_times=1, max_side=1)
    # 1-cell queries over cells (0,0) and (1,0): one point inside, no region within, both
    # regions overlap: possibly |1 - 2| / 2, definitely |1 - 0| / 1.
    assert found.possibly_inside == pytest.approx(0.5)
    assert found.definitely_inside == pytest.approx(1.0)
