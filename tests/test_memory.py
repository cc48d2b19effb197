"""Giving freed memory back to the operating system between the phases of a step."""

from __future__ import annotations

import numpy as np

from anonymizers.memory import _malloc_trim, give_back, resident_mib


def test_resident_size_is_read() -> None:
    resident = resident_mib()
    assert resident is not None and resident > 10


def test_heap_pages_freed_between_live_arrays_are_given_back() -> None:
    assert _malloc_trim() is not None, "the supported systems (Debian, Ubuntu) have glibc"
    # Arrays below malloc's mmap threshold come from its heap; freeing every other one
    # leaves holes that free() cannot return (live arrays sit above them).
    arrays = [np.ones(8192) for _ in range(8192)]  # 64 KiB each, 512 MiB in all
    del arrays[::2]
    before = resident_mib()
    give_back("test")
    after = resident_mib()
    assert before is not None and after is not None
    assert before - after > 128, (before, after)  # about 256 MiB of holes
    assert all(float(a[0]) == 1.0 for a in arrays)
