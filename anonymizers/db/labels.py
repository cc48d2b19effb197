"""Integer codes for string labels (person ids) read batch by batch from a COPY.

A column of ids read whole becomes one Python string per row when handed to pandas:
15 million characteristic points of a 25M-fix window took more than a gigabyte that way.
Here each Arrow batch is dictionary-encoded (in Arrow, no object per row) and
only its distinct labels meet the Python dictionary of codes, so memory follows the
number of distinct labels, not of rows.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["FirstSeenCodes"]


class FirstSeenCodes:
    """Codes 0, 1, ... for labels in order of first appearance across the batches given,
    as ``pandas.factorize(sort=False)`` of all of them at once would number them.

    Examples
    --------
    >>> codes = FirstSeenCodes()
    >>> codes.encode(pa.array(["b", "a", "b"])).tolist()
    [0, 1, 0]
    >>> codes.encode(pa.array(["c", "a"])).tolist()
    [2, 1]
    >>> len(codes)
    3
    """

    def __init__(self) -> None:
        self._codes: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._codes)

    def encode(self, labels: pa.Array | pa.ChunkedArray) -> np.ndarray:
        """The code (int64) of every label of ``labels`` (strings without nulls)."""
        if isinstance(labels, pa.ChunkedArray):
            labels = labels.combine_chunks()
        encoded = pc.dictionary_encode(labels)
        # A dictionary lists its values in order of first appearance, so the batch's new
        # labels take the next codes in the order they first come.
        known = self._codes
        codes = np.fromiter((known.setdefault(label, len(known))
                             for label in encoded.dictionary.to_pylist()),
                            dtype=np.int64, count=len(encoded.dictionary))
        return codes[encoded.indices.to_numpy(zero_copy_only=False)]
