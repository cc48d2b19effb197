"""A step's CPU-bound Python work spread over forked processes of this machine.

Python runs one thread at a time, so a step's Python work uses one CPU. Where it is made
of independent items (KAM_REC's recovery of each cut sequence), :func:`map_forked` runs
them in processes forked from the step's: they inherit its read-only state (indexes of
hundreds of MB) without pickling it, and only the items and their results travel.

How many: ``ANONYMIZERS_PROCESSES`` (a whole number of at least 1), by default the CPUs
this process may run on. An Airflow worker that runs several tasks at once should set it
to its CPUs divided by its parallelism.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from anonymizers.errors import InputError

__all__ = ["PROCESSES_ENV", "available_processes", "map_forked"]

PROCESSES_ENV = "ANONYMIZERS_PROCESSES"

State = TypeVar("State")
Item = TypeVar("Item")
Result = TypeVar("Result")

# What the forked processes run: set just before the fork, so they inherit it.
_forked_call: tuple[Callable[[Any, Any], Any], Any] | None = None


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
    exception in ``function`` is raised here.
    """
    workers = min(processes, len(items))
    if workers <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        return [function(state, item) for item in items]
    global _forked_call
    _forked_call = (function, state)
    try:
        pool = multiprocessing.get_context("fork").Pool(workers, initializer=_default_signals)
        try:
            results = pool.map(_call_forked, items, chunksize=1)
        except BaseException:
            pool.terminate()
            raise
        pool.close()  # the workers leave by themselves: none is signalled
        pool.join()
        return results
    finally:
        _forked_call = None


def _default_signals() -> None:
    """A forked worker leaves on SIGTERM or SIGINT: the handlers it inherited are those of
    the step's process (Airflow's task runner installs its own), not its."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _call_forked(item: Any) -> Any:
    assert _forked_call is not None  # set before the fork
    function, state = _forked_call
    return function(state, item)
