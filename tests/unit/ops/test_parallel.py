"""The one process pool (ops/parallel.py) and validate's use case on top of it (ops/validate.py)."""

from __future__ import annotations

import marshal
import os
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from pitools.ops import parallel
from pitools.ops.parallel import (
    can_fork,
    fork_workers,
    in_background,
    map_processes,
    process_lock,
    share_work,
    start_method,
)
from pitools.ops.validate import PARALLEL_THRESHOLD, find_session_files, validate_many
from tests import support


def _pid_and_square(n: int) -> tuple[int, int]:
    return os.getpid(), n * n


def _fails_on_three(n: int) -> int:
    if n == 3:
        raise ValueError("three")
    return n


def test_one_job_runs_here_in_order() -> None:
    started: list[bool] = []
    out = list(map_processes(_pid_and_square, [1, 2, 3], 1, started=lambda: started.append(True)))
    assert out == [(0, (os.getpid(), 1)), (1, (os.getpid(), 4)), (2, (os.getpid(), 9))]
    assert started == [True]


@pytest.mark.parametrize("threaded_work", [False, True])
def test_several_jobs_run_in_worker_processes(threaded_work: bool) -> None:
    started: list[bool] = []
    items = list(range(12))
    out = dict(
        map_processes(_pid_and_square, items, 2, threaded_work=threaded_work, started=lambda: started.append(True))
    )
    assert sorted(out) == items
    assert [square for _, square in (out[i] for i in items)] == [n * n for n in items]
    assert os.getpid() not in {pid for pid, _ in out.values()}
    assert started == [True]


def test_a_worker_error_is_raised_here() -> None:
    with pytest.raises(ValueError, match="three"):
        list(map_processes(_fails_on_three, [1, 2, 3, 4], 2))


def test_the_start_method_rule() -> None:
    assert start_method(threaded_work=True) == "spawn"
    if not hasattr(os, "fork"):
        assert start_method() == "spawn"
        return
    assert can_fork() == (threading.active_count() == 1)
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not can_fork()  # another thread: forking could copy a lock it holds
        assert start_method() == "spawn"
    finally:
        stop.set()
        thread.join()


def test_validate_many_reports_the_same_whatever_the_jobs() -> None:
    files = find_session_files([str(support.GOLDEN)])[:12]
    assert len(files) > PARALLEL_THRESHOLD
    one = validate_many(files, jobs=1)
    done: list[int] = []
    two = validate_many(files, jobs=2, progress=done.append)
    assert one == two and [r.path for r in two] == files
    assert sum(done) == len(files) and done[0] == 0  # progress(0) once the workers started
    assert validate_many(files, jobs=2, select=["duplicate-id"]) == validate_many(
        files, jobs=1, select=["duplicate-id"]
    )


# -- share_work: helpers sharing a queue of tasks with this process --------------------------------


def _pid_task(task: int) -> tuple[int, int]:
    return os.getpid(), task * task


def _slow_first() -> str:
    time.sleep(0.5)  # the helpers take every task meanwhile
    return "first"


def _share(tasks: list[int], work: Callable[[int], Any] = _pid_task, **kwargs: Any) -> tuple[Any, dict[int, Any]]:
    return share_work(tasks, work, first=_slow_first, encode=marshal.dumps, decode=marshal.loads, **kwargs)


@pytest.mark.parametrize("helpers", [1, 3])
def test_helpers_take_the_tasks_while_this_process_runs_first(helpers: int) -> None:
    tasks = list(range(1, 9))
    head, results = _share(tasks, helpers=helpers)
    assert head == "first"
    assert sorted(results) == tasks and [results[t][1] for t in tasks] == [t * t for t in tasks]
    pids = {pid for pid, _ in results.values()}
    assert os.getpid() not in pids and 1 <= len(pids) <= helpers
    for pid in pids:  # reaped
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def test_without_helpers_everything_runs_here_in_order() -> None:
    order: list[int] = []

    def work(task: int) -> tuple[int, int]:
        order.append(task)
        return _pid_task(task)

    head, results = _share([3, 1, 2], work, helpers=0)
    assert head == "first" and order == [3, 1, 2]
    assert {pid for pid, _ in results.values()} == {os.getpid()}


def test_no_fork_while_another_thread_runs() -> None:
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        _, results = _share([1, 2, 3])
    finally:
        stop.set()
        thread.join()
    assert {pid for pid, _ in results.values()} == {os.getpid()}


def test_tasks_a_helper_loses_are_done_here() -> None:
    parent = os.getpid()

    def fails_in_the_helper(task: int) -> tuple[int, int]:
        if os.getpid() != parent and task == 2:
            raise MemoryError("the helper ran out of memory")
        return _pid_task(task)

    _, results = _share([1, 2, 3], fails_in_the_helper)
    assert sorted(results) == [1, 2, 3]
    assert {pid for pid, _ in results.values()} == {parent}  # the helper's whole reply is lost

    def undecodable(data: bytes) -> Any:
        raise ValueError("garbled")

    _, results = share_work([1, 2], _pid_task, first=_slow_first, encode=marshal.dumps, decode=undecodable)
    assert results == {1: (parent, 1), 2: (parent, 4)}


def test_a_failure_here_kills_the_helpers(forked_helpers: list[parallel.Helper]) -> None:
    helpers = forked_helpers

    def forever(task: int) -> bytes:
        if os.getpid() != parent:
            time.sleep(60)
        return b""

    def fails() -> None:
        raise KeyboardInterrupt

    parent = os.getpid()
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        share_work([1, 2], forever, first=fails, encode=bytes, decode=bytes, helpers=2)
    assert time.monotonic() - started < 30
    assert len(helpers) == 2 and all(h is not None for h in helpers)
    for helper in helpers:
        support.assert_reaped(helper)


# -- in_background: one job in a forked helper -----------------------------------------------------


def test_a_background_job_runs_in_a_helper_while_this_process_goes_on() -> None:
    job = in_background(lambda: (os.getpid(), "done"), encode=marshal.dumps, decode=marshal.loads)
    here = sum(range(100_000))  # this process's own work meanwhile
    pid, value = job.result()
    assert value == "done" and pid != os.getpid() and here == 4999950000


def test_a_background_job_is_done_here_when_the_helper_cannot_give_it() -> None:
    parent = os.getpid()

    def dies_in_the_helper() -> int:
        if os.getpid() != parent:
            os._exit(3)
        return os.getpid()

    assert in_background(dies_in_the_helper, encode=marshal.dumps, decode=marshal.loads).result() == parent
    unsendable = in_background(lambda: (os.getpid(), object()), encode=marshal.dumps, decode=marshal.loads)
    assert unsendable.result()[0] == parent  # marshal refused it in the helper


def test_no_background_helper_while_another_thread_runs() -> None:
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        job = in_background(os.getpid, encode=marshal.dumps, decode=marshal.loads)
    finally:
        stop.set()
        thread.join()
    assert job.result() == os.getpid()


def test_a_cancelled_background_job_is_killed_and_reaped(forked_helpers: list[parallel.Helper]) -> None:
    helpers = forked_helpers
    started = time.monotonic()
    job = in_background(lambda: time.sleep(60), encode=marshal.dumps, decode=marshal.loads)
    job.cancel()
    assert time.monotonic() - started < 30
    assert len(helpers) == 1
    support.assert_reaped(helpers[0])


# -- fork_workers: one worker per item, streaming messages -----------------------------------------


def test_workers_stream_their_messages() -> None:
    lock = process_lock()

    def count(n: int, send: Callable[[Any], None]) -> None:
        for i in range(n):
            with lock:
                send((os.getpid(), n, i))

    got = list(fork_workers(count, [3, 5]))
    assert sorted((n, i) for _, n, i in got) == [(3, 0), (3, 1), (3, 2), *((5, i) for i in range(5))]
    assert len({pid for pid, _, _ in got}) == 2 and os.getpid() not in {pid for pid, _, _ in got}


def test_a_worker_error_is_raised_here_and_the_others_stopped() -> None:
    def work(item: str, send: Callable[[Any], None]) -> None:
        if item == "bad":
            raise ValueError("bad item")
        send(os.getpid())
        time.sleep(60)

    started = time.monotonic()
    with pytest.raises(ValueError, match="bad item"):
        list(fork_workers(work, ["slow", "bad"]))
    assert time.monotonic() - started < 30


def test_a_worker_that_dies_silently_is_an_error() -> None:
    def dies(item: int, send: Callable[[Any], None]) -> None:
        os._exit(3)

    with pytest.raises(RuntimeError, match="stopped before it finished"):
        list(fork_workers(dies, [1]))
