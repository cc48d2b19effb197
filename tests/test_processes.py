"""Tests for a step's CPU-bound work on forked processes (anonymizers.processes)."""

from __future__ import annotations

import os
import threading

import pytest

from anonymizers.errors import InputError
from anonymizers.processes import PROCESSES_ENV, available_processes, map_forked


def scaled_with_pid(state: tuple[threading.Lock, int], item: int) -> tuple[int, int]:
    _lock, factor = state
    return item * factor, os.getpid()


def test_results_come_in_item_order_from_other_processes() -> None:
    # A lock cannot be pickled: the state reaches the processes by fork, not by pickle.
    state = (threading.Lock(), 3)
    results = map_forked(scaled_with_pid, state, list(range(40)), processes=2)
    assert [value for value, _ in results] == [3 * i for i in range(40)]
    assert os.getpid() not in {pid for _, pid in results}


def test_one_process_or_one_item_runs_here() -> None:
    state = (threading.Lock(), 2)
    assert {pid for _, pid in map_forked(scaled_with_pid, state, [1, 2, 3], 1)} == {os.getpid()}
    assert map_forked(scaled_with_pid, state, [5], 4) == [(10, os.getpid())]
    assert map_forked(scaled_with_pid, state, [], 4) == []


def failing(_state: None, item: int) -> int:
    if item == 7:
        raise ValueError("item 7 is bad")
    return item


def test_an_error_in_a_process_is_raised_here() -> None:
    with pytest.raises(ValueError, match="item 7 is bad"):
        map_forked(failing, None, list(range(10)), processes=2)


def test_processes_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PROCESSES_ENV, " 3 ")
    assert available_processes() == 3
    monkeypatch.delenv(PROCESSES_ENV)
    assert available_processes() == len(os.sched_getaffinity(0))


@pytest.mark.parametrize("bad", ["0", "-2", "two", "1.5"])
def test_a_bad_number_of_processes_says_what_to_set(monkeypatch: pytest.MonkeyPatch,
                                                    bad: str) -> None:
    monkeypatch.setenv(PROCESSES_ENV, bad)
    with pytest.raises(InputError, match=f"{PROCESSES_ENV} must be a whole number"):
        available_processes()
