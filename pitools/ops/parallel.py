"""Work spread over processes: the one place pitools starts them, one start-method rule, one
"is forking safe" check.

Three shapes of work, one function each:

* :func:`map_processes` runs a function over items in a pool of worker processes and yields
  each result as it finishes (``validate`` over many files, ``dataset`` over many sessions);
* :func:`share_work` runs one job here while forked helpers take numbered tasks from a queue
  they share with this process, which joins in when its own job is done; results come back as
  bytes (a big file's parts for ``validate``: this process scans the first, which holds the
  header, while a helper starts on the others);
* :func:`in_background` starts one job in a forked helper and lets this process go on with
  other work, joining it later (the HTML page's request check while the page is written);
* :func:`fork_workers` starts one forked worker per item and passes on the messages they send
  as they come (the archive index's shard workers, which report each file they store and share
  a :func:`process_lock`).

The rules they all follow:

* :func:`start_method` says how workers start: ``fork`` where the platform has it and it is safe
  (workers inherit the imports and the warm caches: no start-up cost), ``spawn`` otherwise, and
  always ``spawn`` for work that runs libraries with thread pools of their own (Arrow: a fork
  taken while its threads hold locks can deadlock);
* :func:`can_fork` is the check before any fork: the platform has ``fork`` and no other thread
  runs (a child gets copies of the locks other threads hold, and none of those threads).
  :func:`share_work` falls back to doing everything here when it fails; :func:`fork_workers`
  needs it to hold (callers ask first and do the work in this process otherwise).

``pitools.core`` never starts a process (``scripts/check_purity.py`` and the ``pure-core``
contract check it); it exposes the pieces (scan a part, encode and decode a part's result,
merge) and takes a :func:`share_work` from its caller.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from multiprocessing.synchronize import Lock

__all__ = [
    "Background",
    "can_fork",
    "default_jobs",
    "fork_workers",
    "in_background",
    "map_processes",
    "memory_available",
    "process_lock",
    "share_work",
    "start_method",
]

T = TypeVar("T")
R = TypeVar("R")


def can_fork() -> bool:
    """Whether forking this process now is safe: ``fork`` exists and no other thread is running
    (a child gets copies of the locks other threads hold, and none of those threads)."""
    import threading

    return hasattr(os, "fork") and threading.active_count() == 1


def default_jobs() -> int:
    """Both cores of a typical laptop or CI runner, when the machine has them."""
    return min(2, os.cpu_count() or 1)


def memory_available() -> int:
    """Bytes of memory the machine can give a new process without swapping: Linux's
    ``MemAvailable`` (free memory plus what the kernel can reclaim), else the free pages, else
    0 (unknown: a caller that needs room then starts no helper)."""
    try:
        with open("/proc/meminfo", "rb") as info:
            for line in info:
                if line.startswith(b"MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):
        return 0


def start_method(*, threaded_work: bool = False) -> str:
    """How workers start: ``fork`` when :func:`can_fork` and the work starts no thread pools of
    its own (``threaded_work``), else ``spawn`` (fresh interpreters: slower to start, always safe)."""
    import multiprocessing

    if not threaded_work and can_fork() and "fork" in multiprocessing.get_all_start_methods():
        return "fork"
    return "spawn"


# -- a pool over items -----------------------------------------------------------------------------


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


# -- helpers sharing a queue of tasks with this process --------------------------------------------

#: Every task number is written to the queue before anyone reads it, so all must fit in a pipe
#: (64 KiB on Linux, 16 KiB on some systems: 4 bytes a task).
MAX_SHARED_TASKS = 4000


class Helper:
    """A forked child taking task numbers from the queue it shares with this process.

    It sends all its results at the end, through its own pipe, which a thread here drains while
    this process works (a full pipe would stall the child).
    """

    def __init__(self, pid: int, results_fd: int) -> None:
        import threading

        self.pid = pid
        self.fd = results_fd
        self.chunks: list[bytes] = []
        self.reader = threading.Thread(target=self._read, name="pitools-helper-reader", daemon=True)

    def _read(self) -> None:
        try:
            while chunk := os.read(self.fd, 1 << 20):
                self.chunks.append(chunk)
        except OSError:
            self.chunks.clear()
        finally:
            os.close(self.fd)

    def cancel(self) -> None:
        """Stop the child now and reap it (its results are no longer wanted)."""
        import signal

        with contextlib.suppress(OSError):
            os.kill(self.pid, signal.SIGKILL)
        self.finish()

    def finish(self) -> int:
        """Wait for the child; its exit status (0: it sent everything)."""
        if self.reader.ident is not None:
            self.reader.join()
        else:  # never started: nobody reads the pipe
            with contextlib.suppress(OSError):
                os.close(self.fd)
        try:
            return os.waitpid(self.pid, 0)[1]
        except ChildProcessError:
            return 0

    def results(self) -> list[tuple[int, bytes]]:
        """``(task, encoded result)`` for the tasks the child did; none when it failed."""
        import marshal

        if self.finish() != 0 or not self.chunks:
            return []
        try:
            done = marshal.loads(b"".join(self.chunks))
        except (EOFError, ValueError, TypeError):
            return []
        if type(done) is not list or not all(type(t) is tuple and len(t) == 2 for t in done):
            return []
        return done


def _claim(queue_fd: int) -> int | None:
    data = os.read(queue_fd, 4)  # every number was written as one 4-byte record
    return int.from_bytes(data, "little") if len(data) == 4 else None


def fork_helper(queue_fd: int, work: Callable[[int], bytes]) -> Helper | None:
    """Fork a child that runs ``work(task)`` for each task it claims from ``queue_fd`` and then
    sends ``[(task, bytes), ...]`` marshalled (several times faster than pickle for builtins);
    None when the fork fails."""
    import marshal

    results_r, results_w = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(results_r)
        os.close(results_w)
        return None
    if pid == 0:  # the child: do tasks, send them, leave without any cleanup
        status = 1
        try:
            os.close(results_r)
            done: list[tuple[int, bytes]] = []
            while (task := _claim(queue_fd)) is not None:
                done.append((task, work(task)))
            view = memoryview(marshal.dumps(done))
            while view:
                view = view[os.write(results_w, view) :]
            status = 0
        except BaseException:  # the parent redoes whatever is missing
            pass
        finally:
            os._exit(status)
    os.close(results_w)
    return Helper(pid, results_r)


def _start_helpers(tasks: Sequence[int], work: Callable[[int], bytes], helpers: int) -> tuple[list[Helper], int]:
    """Up to ``helpers`` forked children taking ``tasks`` from a queue they share with this
    process (its read end is returned: this process may claim tasks too, and closes it); the
    children's readers start once every fork is done. Call only when :func:`can_fork`."""
    queue_r, queue_w = os.pipe()
    os.write(queue_w, b"".join(task.to_bytes(4, "little") for task in tasks))
    os.close(queue_w)
    children: list[Helper] = []
    for _ in range(min(helpers, len(tasks))):
        child = fork_helper(queue_r, work)
        if child is not None:
            children.append(child)
    for child in children:  # threads only once every fork is done
        child.reader.start()
    return children, queue_r


def share_work(
    tasks: Sequence[int],
    work: Callable[[int], R],
    *,
    first: Callable[[], T],
    encode: Callable[[R], bytes],
    decode: Callable[[bytes], R],
    helpers: int = 1,
) -> tuple[T, dict[int, R]]:
    """``first()`` and ``{task: work(task)}`` for every task, with up to ``helpers`` forked children.

    The children start on ``tasks`` (numbers from a queue shared with this process) while this
    process runs ``first()``; then this process takes tasks from the queue too, so whoever is
    faster does more (on a shared machine one core is often slower). A child returns
    ``encode(work(task))`` for its tasks, decoded here. A task a child did not return (it
    failed, died or sent something undecodable) is done here, so the result is the same as
    doing everything here in order, which is also what happens when forking is not safe
    (:func:`can_fork`) or there are too many tasks for the queue. If ``first`` or ``work``
    raises here, the children are killed and reaped before the exception goes on.
    """
    children: list[Helper] = []
    queue_r = -1
    if helpers > 0 and tasks and len(tasks) <= MAX_SHARED_TASKS and can_fork():
        children, queue_r = _start_helpers(tasks, lambda task: encode(work(task)), helpers)
    results: dict[int, R] = {}
    try:
        head = first()
        if children:
            while (task := _claim(queue_r)) is not None:
                results[task] = work(task)
            for child in children:
                for task, data in child.results():
                    with contextlib.suppress(Exception):  # undecodable: done here below
                        results.setdefault(task, decode(data))
            children = []
    finally:
        for child in children:  # this process failed (or was interrupted) first
            child.cancel()
        if queue_r >= 0:
            os.close(queue_r)
    for task in tasks:
        if task not in results:
            results[task] = work(task)
    return head, results


# -- one job in the background ---------------------------------------------------------------------


class Background(Generic[R]):
    """One job running in a forked helper (see :func:`in_background`)."""

    def __init__(
        self, here: Callable[[], R], decode: Callable[[bytes], R], child: Helper | None, queue_fd: int
    ) -> None:
        self._here = here
        self._decode = decode
        self._child = child
        self._queue_fd = queue_fd

    def result(self) -> R:
        """The job's result: the helper's, waited for; made here (``here()``) when there was no
        helper or it did not hand back a result that decodes."""
        child, self._child = self._child, None
        if child is not None:
            done = child.results()
            self._close_queue()
            if len(done) == 1:
                with contextlib.suppress(Exception):  # undecodable: done here below
                    return self._decode(done[0][1])
        return self._here()

    def cancel(self) -> None:
        """Stop the helper if it still runs, and reap it (nothing if :meth:`result` was called)."""
        child, self._child = self._child, None
        if child is not None:
            child.cancel()
            self._close_queue()

    def _close_queue(self) -> None:
        if self._queue_fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._queue_fd)
            self._queue_fd = -1


def in_background(
    work: Callable[[], R],
    *,
    encode: Callable[[R], bytes],
    decode: Callable[[bytes], R],
    here: Callable[[], R] | None = None,
) -> Background[R]:
    """Start ``work()`` in a forked helper now, while this process does something else; the
    handle's :meth:`~Background.result` waits for it (``encode(work())`` sent back, decoded
    here), :meth:`~Background.cancel` stops it. When forking is not safe (:func:`can_fork`) or
    fails, or the helper dies, ``result()`` runs ``here()`` (default: ``work()``) in this process
    instead, which must give the same result (``here`` may use what this process has made by
    then). Call ``result()`` or ``cancel()`` exactly once: the helper is reaped there."""
    local = work if here is None else here
    if not can_fork():
        return Background(local, decode, None, -1)
    children, queue_r = _start_helpers([0], lambda _task: encode(work()), 1)
    if not children:  # the fork failed
        os.close(queue_r)
        return Background(local, decode, None, -1)
    return Background(local, decode, children[0], queue_r)


# -- one worker per item, streaming messages -------------------------------------------------------


def process_lock() -> Lock:
    """A lock :func:`fork_workers`' workers share (created before they start, inherited)."""
    import multiprocessing

    return multiprocessing.get_context("fork").Lock()


_MESSAGE, _DONE, _FAILED = 0, 1, 2


def fork_workers(target: Callable[[T, Callable[[Any], None]], None], items: Sequence[T]) -> Iterator[Any]:
    """Run ``target(item, send)`` in one forked process per item; yield each value a worker
    ``send`` s, as they arrive.

    Workers are forked (they inherit this process's state; ``target`` need not be picklable):
    call :func:`can_fork` first and do the work here when it says no. An exception in a worker
    is raised here (a worker that dies without a word raises ``RuntimeError``). When the
    iterator ends, fails or is closed, workers still running are terminated and all are joined.
    """
    import multiprocessing
    from multiprocessing.connection import Connection, wait

    ctx = multiprocessing.get_context("fork")
    procs = []
    readers: list[Connection] = []
    try:
        for item in items:
            recv, send = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_worker_main, args=(target, item, send), daemon=True)
            proc.start()
            send.close()
            procs.append(proc)
            readers.append(recv)
        while readers:
            for ready in wait(readers):
                reader: Connection = ready  # type: ignore[assignment]
                try:
                    kind, value = reader.recv()
                except EOFError:
                    raise RuntimeError("a worker process stopped before it finished") from None
                if kind == _MESSAGE:
                    yield value
                    continue
                readers.remove(reader)
                reader.close()
                if kind == _FAILED:
                    raise value
    finally:
        for left in readers:
            left.close()
        for proc in procs:
            if proc.is_alive():
                proc.terminate()
            proc.join()


def _worker_main(target: Callable[[Any, Callable[[Any], None]], None], item: Any, send: Any) -> None:
    def message(value: Any) -> None:
        send.send((_MESSAGE, value))

    try:
        target(item, message)
        send.send((_DONE, None))
    except BaseException as exc:  # handed to the parent, which raises it
        with contextlib.suppress(Exception):  # unpicklable: the parent sees the pipe close
            send.send((_FAILED, exc))
    finally:
        send.close()
