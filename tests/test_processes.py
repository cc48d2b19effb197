"""Tests for a step's CPU-bound work on forked processes (anonymizers.processes)."""

from __future__ import annotations

import gc
import io
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from anonymizers.errors import InputError
from anonymizers.processes import (
    PROCESSES_ENV,
    WorkerDied,
    available_processes,
    forked_call,
    imap_forked,
    map_forked,
)


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


def test_an_error_in_a_process_is_raised_here_with_its_traceback() -> None:
    with pytest.raises(ValueError, match="item 7 is bad") as raised:
        map_forked(failing, None, list(range(10)), processes=2)
    assert "in failing" in str(raised.value.__cause__)


class Unpicklable(Exception):
    def __reduce__(self) -> Any:
        raise TypeError("this exception cannot be pickled")


def unpicklable_error_or_result(_state: None, item: int) -> object:
    if item == 1:
        raise Unpicklable("no way back")
    return threading.Lock() if item == 2 else item


def test_what_cannot_travel_back_is_still_an_error_here() -> None:
    with pytest.raises(RuntimeError, match="Unpicklable: no way back"):
        map_forked(unpicklable_error_or_result, None, [0, 1], processes=2)
    with pytest.raises(TypeError, match="lock"):
        map_forked(unpicklable_error_or_result, None, [0, 2], processes=2)


def pid_then_die_on_3(pid_pipe: int, item: int) -> int:
    os.write(pid_pipe, os.getpid().to_bytes(4, "little"))
    if item == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    return item


@pytest.mark.timeout(60)  # what this guards against is a wait that never ends
def test_a_worker_that_dies_is_an_error_and_every_worker_is_reaped() -> None:
    read_end, write_end = os.pipe()
    try:
        with pytest.raises(WorkerDied, match=r"killed by signal 9 .* item 3"):
            map_forked(pid_then_die_on_3, write_end, list(range(8)), processes=2)
        os.set_blocking(read_end, False)
        written = os.read(read_end, 4096)
    finally:
        os.close(read_end)
        os.close(write_end)
    pids = {int.from_bytes(written[i:i + 4], "little") for i in range(0, len(written), 4)}
    assert 1 <= len(pids) <= 2  # the other worker may not have had an item yet
    for pid in pids:
        with pytest.raises(ProcessLookupError):  # gone, not a zombie left to its parent
            os.kill(pid, 0)


class FlushWaitsOnLock(io.StringIO):
    def __init__(self, lock: threading.Lock) -> None:
        super().__init__()
        self.lock = lock

    def flush(self) -> None:
        with self.lock:
            super().flush()


@pytest.mark.timeout(60)
def test_a_lock_another_thread_holds_at_the_fork_does_not_stop_the_workers(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Airflow's task runner and pytest have threads; a fork copies a lock one of them holds
    # as held forever. A multiprocessing pool's worker flushed the standard streams when it
    # left and hung on such a lock, and the step with it.
    lock, held, done = threading.Lock(), threading.Event(), threading.Event()

    def hold() -> None:
        with lock:
            held.set()
            done.wait()

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    held.wait()
    monkeypatch.setattr(sys, "stdout", FlushWaitsOnLock(lock))
    try:
        results = map_forked(scaled_with_pid, (lock, 2), list(range(6)), processes=2)
    finally:
        done.set()
        holder.join()
    assert [value for value, _ in results] == [0, 2, 4, 6, 8, 10]


finalized_here: list[str] = []


class Finalized:
    def __init__(self) -> None:
        self.cycle = self

    def __del__(self) -> None:
        finalized_here.append("finalized")


def collect_and_report(_state: None, _item: int) -> list[str]:
    gc.collect()
    return finalized_here


def test_a_worker_never_finalizes_the_garbage_of_this_process() -> None:
    # A database connection's finalizer run in a worker would talk on this process's socket.
    gc.disable()
    try:
        Finalized()  # garbage in a cycle: only the collector finalizes it
        assert map_forked(collect_and_report, None, [0, 1], processes=2) == [[], []]
    finally:
        gc.enable()
    gc.collect()
    assert finalized_here == ["finalized"]


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


def slower_for_small(_state: None, item: int) -> tuple[int, int]:
    time.sleep(0.05 if item % 3 == 0 else 0.0)  # uneven: results come out of order
    return item, os.getpid()


def test_a_stream_is_taken_as_workers_are_free_and_comes_back_in_order() -> None:
    pulled: list[int] = []

    def source() -> Iterator[int]:
        for item in range(30):
            pulled.append(item)
            yield item

    stream = imap_forked(slower_for_small, None, source(), processes=2)
    first, _ = next(stream)
    assert first == 0
    assert len(pulled) <= 2 * 2 + 1  # a bounded window ahead, not the whole stream
    rest = [item for item, _ in stream]
    assert [first, *rest] == list(range(30))


@pytest.mark.timeout(60)
def test_closing_a_stream_early_ends_its_workers() -> None:
    stream = imap_forked(slower_for_small, None, iter(range(1000)), processes=2)
    pids = {next(stream)[1] for _ in range(6)}
    stream.close()
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_one_process_or_one_item_streams_here() -> None:
    stream = imap_forked(slower_for_small, None, iter(range(4)), processes=1)
    assert list(stream) == [(i, os.getpid()) for i in range(4)]
    assert list(imap_forked(slower_for_small, None, iter([7]), processes=2)) == [
        (7, os.getpid())]
    assert list(imap_forked(slower_for_small, None, iter([]), processes=2)) == []


def pid_after(seconds: float, item: int) -> tuple[int, int]:
    time.sleep(seconds)
    return item, os.getpid()


@pytest.mark.timeout(60)
def test_a_forked_call_runs_beside_this_process_and_gives_its_result(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PROCESSES_ENV, "2")
    started = time.monotonic()
    with forked_call(pid_after, 1.0, 5) as result:
        time.sleep(1.0)  # this process's own work, while the other sleeps too
        value, pid = result()
    assert value == 5 and pid != os.getpid()
    assert time.monotonic() - started < 1.9  # the two waits overlapped
    assert result() == (5, pid)  # asked again: the same result, no second run
    with pytest.raises(ValueError, match="item 7 is bad"), forked_call(failing, None, 7) as bad:
        bad()


def pid_then_sleep(pid_pipe: int, seconds: float) -> int:
    os.write(pid_pipe, os.getpid().to_bytes(4, "little"))
    time.sleep(seconds)
    return 0


@pytest.mark.timeout(20)  # a worker not killed would hold the exit for 30 s
def test_a_forked_call_left_by_an_error_is_killed_and_one_never_asked_is_waited_for(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PROCESSES_ENV, "2")
    reader, writer = os.pipe()
    with pytest.raises(RuntimeError, match="this process failed"), \
            forked_call(pid_then_sleep, writer, 30.0):
        pid = int.from_bytes(os.read(reader, 4), "little")
        raise RuntimeError("this process failed")
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    with forked_call(pid_after, 0.2, 1):
        pass  # its result, never asked for, is still read: the exit does not hang
    os.close(reader)
    os.close(writer)


def test_a_forked_call_with_one_process_runs_here_when_asked(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PROCESSES_ENV, "1")
    with forked_call(pid_after, 0.0, 3) as result:
        assert result() == (3, os.getpid())
