"""The one process pool (ops/parallel.py) and validate's use case on top of it (ops/validate.py)."""

from __future__ import annotations

import os
import threading

import pytest

from pitools.ops.parallel import can_fork, map_processes, start_method
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
