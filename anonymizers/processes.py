"""A step's CPU-bound Python work spread over forked processes of this machine.

Python runs one thread at a time, so a step's Python work uses one CPU. Where it is made
of independent items (KAM_REC's recovery of each cut sequence), :func:`map_forked` runs
them in processes forked from the step's: they inherit its read-only state (indexes of
hundreds of MB) without pickling it, and only the items and their results travel.

The workers are bare forks, not a :mod:`multiprocessing` pool, because the step's process
has threads (Airflow's task runner, a test runner's) and a fork copies only the forking
thread: any lock another thread held at that moment stays held in the child forever. A
pool's worker takes such locks when it leaves (it flushes the standard streams, joins
threads, runs finalizers), and a pool waits forever for a worker that died. Here a worker
touches nothing but the function, its two pipes and ``os._exit``; the garbage collector
is frozen around the fork, so a worker never finalizes the step's objects (a database
connection's finalizer would talk on the step's own socket); and a worker that dies is
an error, not a hang.

How many: ``ANONYMIZERS_PROCESSES`` (a whole number of at least 1), by default the CPUs
this process may run on. An Airflow worker that runs several tasks at once should set it
to its CPUs divided by its parallelism.
"""

from __future__ import annotations

import gc
import os
import pickle
import signal
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from itertools import chain, islice
from multiprocessing import Pipe
from multiprocessing.connection import Connection, wait
from typing import Any, NoReturn, TypeVar

from anonymizers.errors import InputError

__all__ = ["PROCESSES_ENV", "WorkerDied", "available_processes", "forked_call", "imap_forked",
           "map_forked"]

PROCESSES_ENV = "ANONYMIZERS_PROCESSES"

State = TypeVar("State")
Item = TypeVar("Item")
Result = TypeVar("Result")


class WorkerDied(RuntimeError):
    """A forked worker ended before it sent the result of the item it was given."""


class _WorkerTraceback(Exception):
    """The traceback of an exception raised in a worker, as text (its ``__cause__``)."""


def available_processes() -> int:
    """How many processes a step may use (``ANONYMIZERS_PROCESSES``, or the CPUs).

    Raises
    ------
    InputError
        If ``ANONYMIZERS_PROCESSES`` is set to anything but a whole number of at least 1.
    """
    text = os.environ.get(PROCESSES_ENV, "").strip()
    if not text:
        return len(os.sched_getaffinity(0))
    try:
        processes = int(text)
    except ValueError:
        processes = 0
    if processes < 1:
        raise InputError(f"{PROCESSES_ENV} must be a whole number of processes of at least 1, "
                         f"got {text!r}; unset it to use every CPU")
    return processes


def map_forked(function: Callable[[State, Item], Result], state: State,
               items: Sequence[Item], processes: int) -> list[Result]:
    """``[function(state, item) for item in items]``, in order, on up to ``processes``
    processes forked from this one (one process: here, with no fork).

    ``state`` is inherited, never pickled; items and results are pickled. Each process
    takes the next item when it is done with one, so items of uneven cost even out. An
    exception in ``function`` is raised here, with the worker's traceback as its cause.

    Raises
    ------
    WorkerDied
        If a worker ends (killed, out of memory) before it sends an item's result.
    """
    return list(imap_forked(function, state, items, min(processes, len(items))))


def imap_forked(function: Callable[[State, Item], Result], state: State,
                items: Iterable[Item], processes: int) -> Iterator[Result]:
    """:func:`map_forked` over a stream: ``function(state, item)`` for each item, yielded
    in order while the workers go on with the next ones. Items are taken from ``items``
    only as workers are free, and at most twice ``processes`` results wait for an earlier
    one, so a stream of chunks (a COPY's) is held a few chunks at a time. A stream of one
    item runs here, with no fork. Closing the iterator early ends the workers."""
    stream = iter(items)
    first = list(islice(stream, 2))  # forks only for two items or more
    if processes <= 1 or len(first) < 2 or not hasattr(os, "fork"):
        yield from (function(state, item) for item in chain(first, stream))
        return
    with _forked_workers(function, state, processes) as workers:
        source = enumerate(chain(first, stream))
        done: dict[int, Any] = {}  # results that wait for an earlier one
        idle, busy = list(workers), []
        given = taken = 0
        exhausted = False
        while True:
            while idle and not exhausted and given - taken < 2 * processes:
                numbered = next(source, None)
                if numbered is None:
                    exhausted = True
                else:
                    worker = idle.pop()
                    _give(worker, *numbered)
                    busy.append(worker)
                    given += 1
            while taken in done:
                yield done.pop(taken)
                taken += 1
            if not busy:
                if exhausted:
                    return
                continue  # the window was full: it is open again
            ready = wait([worker.results for worker in busy])
            for worker in [worker for worker in busy if worker.results in ready]:
                busy.remove(worker)
                done[worker.item] = _receive(worker)
                idle.append(worker)


@contextmanager
def forked_call(function: Callable[[State, Item], Result], state: State,
                item: Item) -> Iterator[Callable[[], Result]]:
    """``function(state, item)`` on a process forked from this one while the caller goes
    on with other work; the context gives the function that waits for the result (and
    raises the worker's exception). With one process allowed (``ANONYMIZERS_PROCESSES=1``)
    or no fork, it runs here, when the result is first asked for. Leaving the context by
    an exception kills the worker.

    Examples
    --------
    >>> with forked_call(pow, 2, 10) as result:
    ...     other = sum(range(5))
    ...     result() + other
    1034
    """
    if available_processes() <= 1 or not hasattr(os, "fork"):
        yield _once(lambda: function(state, item))
        return
    with _forked_workers(function, state, 1) as (worker,):
        _give(worker, 0, item)
        result = _once(lambda: _receive(worker))
        yield result
        result()  # never left writing to a pipe no one reads: the exit would wait forever


def _once(compute: Callable[[], Result]) -> Callable[[], Result]:
    """``compute`` run at the first call only; later calls give the same result."""
    done: list[Result] = []

    def result() -> Result:
        if not done:
            done.append(compute())
        return done[0]
    return result


@dataclass
class _Worker:
    pid: int
    tasks: Connection  # this process writes the items here
    results: Connection  # and reads the outcomes here
    item: int = -1  # the index of the item it works on


@contextmanager
def _forked_workers(function: Callable[[Any, Any], Any], state: Any,
                    count: int) -> Iterator[list[_Worker]]:
    """``count`` forked workers; on leaving, each is told to stop (or killed, on an
    error) and reaped."""
    workers: list[_Worker] = []
    failed = True
    try:
        gc.freeze()  # the workers' collector never sees this process's objects
        try:
            for _ in range(count):
                workers.append(_fork(function, state, workers))
        finally:
            gc.unfreeze()
        yield workers
        failed = False
    finally:
        _stop(workers, kill=failed)


def _fork(function: Callable[[Any, Any], Any], state: Any,
          earlier: list[_Worker]) -> _Worker:
    task_reader, task_writer = Pipe(duplex=False)
    result_reader, result_writer = Pipe(duplex=False)
    pid = os.fork()
    if pid == 0:
        # The earlier workers' ends held here would keep their pipes open: they would
        # never see the end of their items.
        for worker in earlier:
            worker.tasks.close()
            worker.results.close()
        task_writer.close()
        result_reader.close()
        _serve(function, state, task_reader, result_writer)
    task_reader.close()
    result_writer.close()
    return _Worker(pid, task_writer, result_reader)


def _serve(function: Callable[[Any, Any], Any], state: Any, tasks: Connection,
           results: Connection) -> NoReturn:
    """A worker's life: items in, outcomes out, until the items end; then ``os._exit``,
    which runs no finalizer, flush or thread join that could wait on an inherited lock."""
    code = 1
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the step's handlers
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        while True:
            try:
                item = tasks.recv()
            except EOFError:
                break
            results.send_bytes(_outcome(function, state, item))
        code = 0
    finally:
        os._exit(code)


def _outcome(function: Callable[[Any, Any], Any], state: Any, item: Any) -> bytes:
    """The pickled ``(True, result)``, or ``(False, exception or None, traceback)``."""
    try:
        return pickle.dumps((True, function(state, item)), pickle.HIGHEST_PROTOCOL)
    except Exception as error:  # every error goes back to the caller
        trace = traceback.format_exc()
        try:
            return pickle.dumps((False, error, trace), pickle.HIGHEST_PROTOCOL)
        except Exception:  # an exception that cannot be pickled
            return pickle.dumps((False, None, trace), pickle.HIGHEST_PROTOCOL)


def _give(worker: _Worker, index: int, item: Any) -> None:
    worker.item = index
    try:
        worker.tasks.send(item)
    except (BrokenPipeError, ConnectionResetError):
        raise WorkerDied(_death(worker)) from None


def _receive(worker: _Worker) -> Any:
    try:
        outcome = pickle.loads(worker.results.recv_bytes())
    except EOFError:
        raise WorkerDied(_death(worker)) from None
    if outcome[0]:
        return outcome[1]
    _, error, trace = outcome
    if error is None:
        raise RuntimeError(f"item {worker.item} failed in a forked worker:\n{trace}")
    raise error from _WorkerTraceback(trace)


def _death(worker: _Worker) -> str:
    """Why a worker ended, from its exit status."""
    pid, worker.pid = worker.pid, 0  # reaped here
    _, status = os.waitpid(pid, 0)
    how = (f"killed by signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status)
           else f"exited with code {os.waitstatus_to_exitcode(status)}")
    return (f"forked worker {pid} {how} while working on item {worker.item}; "
            "if it ran out of memory, set ANONYMIZERS_PROCESSES lower")


def _stop(workers: list[_Worker], kill: bool) -> None:
    """End every worker and reap it: a closed item pipe ends a worker's loop."""
    for worker in workers:
        if kill and worker.pid:
            with suppress(ProcessLookupError):
                os.kill(worker.pid, signal.SIGKILL)
        worker.tasks.close()
    for worker in workers:
        if worker.pid:
            os.waitpid(worker.pid, 0)
        worker.results.close()
