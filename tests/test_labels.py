"""Codes for labels read batch by batch (anonymizers.db.labels)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from anonymizers.db.labels import FirstSeenCodes


@pytest.mark.parametrize("batches", [1, 3, 17])
def test_codes_over_batches_are_those_of_one_factorization(batches: int) -> None:
    rng = np.random.default_rng(batches)
    labels = np.array([f"person-{n}" for n in rng.integers(0, 300, size=2_000)])
    codes = FirstSeenCodes()
    found = np.concatenate([codes.encode(pa.array(part))
                            for part in np.array_split(labels, batches)])
    assert found.tolist() == pd.factorize(labels)[0].tolist()
    assert len(codes) == len(set(labels.tolist()))


def test_chunked_and_empty_batches() -> None:
    codes = FirstSeenCodes()
    assert codes.encode(pa.array([], pa.string())).tolist() == []
    chunked = pa.chunked_array([["a", "b"], ["a", "c"]])
    assert codes.encode(chunked).tolist() == [0, 1, 0, 2]
    assert codes.encode(pa.array(["c", "d"])).tolist() == [2, 3]
