"""Validating many session files at once: which files, how many processes, in what order.

:func:`validate_many` is ``pitools validate``'s use case without the command line: the reports
of every file, in the order given, computed on up to ``jobs`` cores. Each file is checked by
:func:`pitools.core.validate.validate_file`; the processes come from :mod:`pitools.ops.parallel`
(a pool for many files, :func:`~pitools.ops.parallel.share_work` for a big file's parts).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from pathlib import Path

from pitools.core.validate import ValidationReport, prepare, validate_file
from pitools.core.validate.parts import ShareParts
from pitools.ops.parallel import default_jobs, map_processes, share_work

__all__ = ["PARALLEL_THRESHOLD", "default_jobs", "find_session_files", "part_sharer", "validate_many"]

#: More files than this are checked by a pool of worker processes; fewer are checked one by
#: one, each big one split between two processes.
PARALLEL_THRESHOLD = 4


def part_sharer(jobs: int) -> ShareParts | None:
    """How one big file's parts are shared over ``jobs`` processes (None: all scanned here)."""
    return partial(share_work, helpers=jobs - 1) if jobs > 1 else None


def find_session_files(paths: Sequence[str]) -> list[str]:
    """Files named on the command line, plus every ``*.jsonl`` under named directories (sorted)."""
    out: list[str] = []
    seen: set[str] = set()
    for path in paths:
        if os.path.isdir(path):
            found = sorted(str(p) for p in Path(path).rglob("*.jsonl") if p.is_file())
        else:
            found = [path]  # a missing file becomes an unreadable-file finding, not a crash
        for f in found:
            if f not in seen:
                seen.add(f)
                out.append(f)
    return out


def validate_many(
    files: Sequence[str],
    *,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
    min_severity: str = "info",
    jobs: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> list[ValidationReport]:
    """The report of each of ``files``, in order, using up to ``jobs`` processes (default: :func:`default_jobs`).

    More than :data:`PARALLEL_THRESHOLD` files go to a pool of ``jobs`` worker processes; fewer
    are checked here one by one, and a big one is split between ``jobs`` processes
    (:func:`part_sharer`). ``progress(n)`` is told each time ``n`` more files are done
    (``progress(0)`` once the workers have started). The same reports whatever ``jobs`` is.
    """
    jobs = default_jobs() if jobs is None else jobs
    check = partial(
        validate_file,
        select=None if select is None else list(select),
        ignore=None if ignore is None else list(ignore),
        min_severity=min_severity,
    )
    if len(files) <= PARALLEL_THRESHOLD or jobs < 2:
        reports = []
        share = part_sharer(jobs)
        for f in files:
            reports.append(check(f, share=share))
            if progress is not None:
                progress(1)
        return reports
    prepare()  # imported once here, inherited by forked workers
    # Files go out in small batches: one round trip per file costs more than a small file's
    # check, while batches many times smaller than a worker's share keep the load even.
    size = max(1, min(16, len(files) // (jobs * 8)))
    batches = [list(files[i : i + size]) for i in range(0, len(files), size)]
    results: dict[int, list[ValidationReport]] = {}
    started = None if progress is None else partial(progress, 0)
    for i, reports in map_processes(partial(_check_batch, check), batches, jobs, started=started):
        results[i] = reports
        if progress is not None:
            progress(len(batches[i]))
    return [report for i in range(len(batches)) for report in results[i]]


def _check_batch(check: Callable[[str], ValidationReport], files: Sequence[str]) -> list[ValidationReport]:
    return [check(f) for f in files]
