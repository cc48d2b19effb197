"""The moving-object database of seed 003 as numpy arrays: cells per object and time point, QIDs.

A MOD (Yarovoy et al. 2009, §3) is a table of objects x time points holding grid cells. Real
data has holes: an object has no position at the time points where no trajectory of its
person runs. ``present`` says where it has one; the cell arrays hold 0 elsewhere. The
quasi-identifier QID(O) of each object (the time points an attacker may know its position
at) is a CSR list of time-point indices, sorted, unique, and always at times where the object
is present (the preparation drops the others: there is nothing to link them to).

Presence and QIDs are also kept as bit rows (``uint64`` words, one bit per time point), so
that "is A present at every QID time of B" costs a few word operations per pair: the
eligibility test of the anonymizers (:mod:`anonymizers.families.mob.anonymity`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from anonymizers.errors import InputError

__all__ = ["MovingObjects", "pack_bits"]


def pack_bits(matrix: np.ndarray) -> np.ndarray:
    """Rows of a boolean (n, m) matrix as (n, ceil(m / 64)) ``uint64`` words, bit t = column t.

    Only the equality and subset tests of rows matter, so the bit order inside a word is
    whatever :func:`numpy.packbits` gives, padded with zero bits.
    """
    matrix = np.asarray(matrix, dtype=bool)
    n, m = matrix.shape
    words = max(1, -(-m // 64))
    packed = np.zeros((n, words * 8), dtype=np.uint8)
    packed[:, : -(-m // 8)] = np.packbits(matrix, axis=1)
    return packed.view(np.uint64)


@dataclass(frozen=True, eq=False)
class MovingObjects:
    """Grid cells of ``n_objects`` moving objects at ``n_times`` time points, and their QIDs.

    Attributes
    ----------
    cx, cy
        int32 (n_objects, n_times): the grid cell of each object at each time point
        (0 where the object is absent).
    present
        bool (n_objects, n_times): False where the object has no position.
    qid_indptr
        int64 (n_objects + 1): QID(O_i) is ``qid_times[qid_indptr[i]:qid_indptr[i + 1]]``.
    qid_times
        int32 time-point indices, sorted and unique within each object, each one a time
        point at which the object is present.

    References
    ----------
    .. [1] Yarovoy, Bonchi, Lakshmanan, Wang. Anonymizing Moving Objects: How to Hide a MOB
       in a Crowd? EDBT 2009, §3 (MOD, QID as a function of the object).
    """

    cx: np.ndarray
    cy: np.ndarray
    present: np.ndarray
    qid_indptr: np.ndarray
    qid_times: np.ndarray

    def __post_init__(self) -> None:
        _validate(self)

    @classmethod
    def from_arrays(cls, cx: np.ndarray, cy: np.ndarray, present: np.ndarray | None,
                    qids: list[list[int]] | list[np.ndarray]) -> MovingObjects:
        """Build from dense cell matrices and one list of QID time points per object.

        ``present`` None means every object is present at every time point. QID lists may
        be unsorted and hold repeats; they are sorted and made unique.
        """
        cx = np.asarray(cx)
        if cx.ndim != 2:
            raise InputError(f"cx must be a 2-D (objects x time points) array, got {cx.shape}")
        if present is None:
            present = np.ones(cx.shape, dtype=bool)
        if len(qids) != cx.shape[0]:
            raise InputError(f"{len(qids)} QID lists for {cx.shape[0]} objects")
        sizes = np.array([len(q) for q in qids], dtype=np.int64)
        obj = np.repeat(np.arange(len(qids), dtype=np.int64), sizes)
        times = (np.concatenate([np.asarray(q, dtype=np.int64) for q in qids])
                 if sizes.sum() else np.empty(0, dtype=np.int64))
        indptr, flat = _csr(len(qids), obj, times)
        return cls(_cells(cx), _cells(cy), np.asarray(present, dtype=bool), indptr, flat)

    @classmethod
    def from_rows(cls, n_objects: int, n_times: int, obj: np.ndarray, t: np.ndarray,
                  x: np.ndarray, y: np.ndarray, qid_obj: np.ndarray,
                  qid_t: np.ndarray) -> MovingObjects:
        """Build from rows (object, time point, cx, cy) and QID rows (object, time point).

        What the preparation in PostGIS hands over (``mob_cells``, ``mob_qids``). An
        (object, time point) pair may appear once; absent pairs are simply missing.
        """
        obj, t = np.asarray(obj, dtype=np.int64), np.asarray(t, dtype=np.int64)
        _check_index("cell object", obj, n_objects)
        _check_index("cell time point", t, n_times)
        present = np.zeros((n_objects, n_times), dtype=bool)
        present[obj, t] = True
        if int(present.sum()) != obj.size:
            raise InputError("an (object, time point) pair has more than one cell")
        cx = np.zeros((n_objects, n_times), dtype=np.int32)
        cy = np.zeros((n_objects, n_times), dtype=np.int32)
        cx[obj, t] = _cells(np.asarray(x))
        cy[obj, t] = _cells(np.asarray(y))
        indptr, times = _csr(n_objects, np.asarray(qid_obj, dtype=np.int64),
                             np.asarray(qid_t, dtype=np.int64))
        return cls(cx, cy, present, indptr, times)

    @property
    def n_objects(self) -> int:
        return int(self.cx.shape[0])

    @property
    def n_times(self) -> int:
        return int(self.cx.shape[1])

    @property
    def qid_sizes(self) -> np.ndarray:
        """|QID(O)| of every object (int64)."""
        return np.diff(self.qid_indptr)

    def qid(self, i: int) -> np.ndarray:
        """QID(O_i): its sorted time-point indices."""
        return self.qid_times[self.qid_indptr[i]:self.qid_indptr[i + 1]]

    @cached_property
    def qid_matrix(self) -> np.ndarray:
        """bool (n_objects, n_times): True at (O, t) iff t is in QID(O)."""
        matrix = np.zeros(self.cx.shape, dtype=bool)
        rows = np.repeat(np.arange(self.n_objects), self.qid_sizes)
        matrix[rows, self.qid_times] = True
        return matrix

    @cached_property
    def present_bits(self) -> np.ndarray:
        """``present`` packed by :func:`pack_bits`."""
        return pack_bits(self.present)

    @cached_property
    def qid_bits(self) -> np.ndarray:
        """QIDs packed by :func:`pack_bits` (same words as :attr:`present_bits`)."""
        return pack_bits(self.qid_matrix)

    @cached_property
    def present_bits_by_word(self) -> np.ndarray:
        """:attr:`present_bits` transposed (words x objects): one word of many objects at once."""
        return np.ascontiguousarray(self.present_bits.T)

    @cached_property
    def qid_bits_by_word(self) -> np.ndarray:
        """:attr:`qid_bits` transposed (words x objects)."""
        return np.ascontiguousarray(self.qid_bits.T)


def _cells(values: np.ndarray) -> np.ndarray:
    values = np.asarray(values)
    if values.size and not np.issubdtype(values.dtype, np.integer):
        raise InputError(f"grid cells must be integers, got {values.dtype}")
    if values.size and (values.min() < np.iinfo(np.int32).min
                        or values.max() > np.iinfo(np.int32).max):
        raise InputError("grid cells must fit in int32: use larger cells")
    return values.astype(np.int32)


def _check_index(what: str, values: np.ndarray, bound: int) -> None:
    if values.size and (values.min() < 0 or values.max() >= bound):
        raise InputError(f"{what} index out of range 0 .. {bound - 1}")


def _csr(n_objects: int, obj: np.ndarray, times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted, de-duplicated (object, time) pairs as (indptr, times)."""
    if obj.shape != times.shape:
        raise InputError("QID objects and time points differ in length")
    _check_index("QID object", obj, n_objects)
    if times.size and times.min() < 0:
        raise InputError("QID time point index is negative")
    order = np.lexsort((times, obj))
    obj, times = obj[order], times[order]
    keep = np.ones(obj.size, dtype=bool)
    keep[1:] = (obj[1:] != obj[:-1]) | (times[1:] != times[:-1])
    obj, times = obj[keep], times[keep]
    indptr = np.zeros(n_objects + 1, dtype=np.int64)
    np.cumsum(np.bincount(obj, minlength=n_objects), out=indptr[1:])
    return indptr, times.astype(np.int32)


def _validate(mobs: MovingObjects) -> None:
    """Shapes, dtypes, and the QID rules (sorted, unique, present); raises InputError."""
    shape = mobs.cx.shape
    for name in ("cx", "cy", "present"):
        array = getattr(mobs, name)
        if not isinstance(array, np.ndarray) or array.ndim != 2 or array.shape != shape:
            raise InputError(f"{name} must be a 2-D array of shape {shape}")
    if mobs.cx.dtype != np.int32 or mobs.cy.dtype != np.int32:
        raise InputError("cx and cy must be int32 (use MovingObjects.from_arrays)")
    if mobs.present.dtype != bool:
        raise InputError("present must be a boolean array")
    _validate_qids(mobs, shape[0], shape[1])


def _validate_qids(mobs: MovingObjects, n: int, m: int) -> None:
    indptr, times = mobs.qid_indptr, mobs.qid_times
    if indptr.shape != (n + 1,) or indptr[0] != 0 or indptr[-1] != times.size:
        raise InputError(f"qid_indptr must have {n + 1} entries from 0 to len(qid_times)")
    sizes = np.diff(indptr)
    if (sizes < 0).any():
        raise InputError("qid_indptr must be non-decreasing")
    if times.size == 0:
        return
    if times.min() < 0 or times.max() >= m:
        raise InputError(f"a QID time point lies outside 0 .. {m - 1}")
    rows = np.repeat(np.arange(n), sizes)
    same_row = rows[1:] == rows[:-1]
    if (same_row & (times[1:] <= times[:-1])).any():
        raise InputError("QID time points must be sorted and unique within each object")
    if not mobs.present[rows, times].all():
        raise InputError("a QID time point is one at which its object has no position")
