"""Work spread over processes: one pool, one start-method rule, one "is forking safe" check.

Every pitools command that uses more than one core goes through here:

* :func:`map_processes` runs a function over items in a pool of worker processes and yields
  each result as it finishes (``validate`` over many files, ``dataset`` over many sessions);
* :func:`start_method` is the rule for how workers start: ``fork`` where the platform has it
  and it is safe (workers inherit the imports and the warm caches: no start-up cost), ``spawn``
  otherwise, and always ``spawn`` for work that runs libraries with thread pools of their own
  (Arrow: a fork taken while its threads hold locks can deadlock);
* :func:`can_fork` is the check every direct ``fork`` makes first (the archive index's shard
  workers, a big file's second scanner): the platform has ``fork`` and no other thread runs.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

__all__ = ["can_fork", "map_processes", "start_method"]

T = TypeVar("T")
R = TypeVar("R")


def can_fork() -> bool:
    """Whether forking this process now is safe: ``fork`` exists and no other thread is running
    (a child gets copies of the locks other threads hold, and none of those threads)."""
    import threading

    return hasattr(os, "fork") and threading.active_count() == 1


def start_method(*, threaded_work: bool = False) -> str:
    """How workers start: ``fork`` when :func:`can_fork` and the work starts no thread pools of
    its own (``threaded_work``), else ``spawn`` (fresh interpreters: slower to start, always safe)."""
    import multiprocessing

    if not threaded_work and can_fork() and "fork" in multiprocessing.get_all_start_methods():
        return "fork"
    return "spawn"


def map_processes(
    fn: Callable[[T], R],
    items: Sequence[T],
    jobs: int,
    *,
    threaded_work: bool = False,
    started: Callable[[], None] | None = None,
) -> Iterator[tuple[int, R]]:
    """``(i, fn(items[i]))`` for every item, as each finishes, using up to ``jobs`` processes.

    With one job (or one item) everything runs here, in order, with no pool. Otherwise every
    item is submitted first (so workers are started before the caller starts any thread, e.g.
    a progress bar), then ``started()`` is called, then results come back in completion order.
    ``fn`` and the items must be picklable when workers are spawned. An exception in a worker
    is raised here, for its item.
    """
    jobs = max(1, min(jobs, len(items)))
    if jobs == 1:
        if started is not None:
            started()
        for i, item in enumerate(items):
            yield i, fn(item)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    context = multiprocessing.get_context(start_method(threaded_work=threaded_work))
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        futures = {pool.submit(fn, item): i for i, item in enumerate(items)}
        if started is not None:
            started()
        for future in as_completed(futures):
            yield futures[future], future.result()
