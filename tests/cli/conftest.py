"""Fixtures for command tests: ``run`` invokes ``pitools`` in-process and checks the exit code."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator, Mapping
from os import PathLike
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from tests.support import PITOOLS, golden_session

Run = Callable[..., Result]


@pytest.fixture(autouse=True)
def _utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Human output shows local times: pin the zone so snapshots are the same everywhere."""
    import time

    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def run() -> Run:
    """``run("validate", path, exit_code=1)``: run ``pitools`` through its real entry point
    (:func:`pitools.cli.main`, in-process) and fail loudly on a surprising exit.

    Arguments are converted with ``str`` (paths are fine). ``exit_code`` is what the test expects
    (default 0; ``None`` accepts anything). Exceptions are not swallowed by the runner
    (``catch_exceptions=False``), so a bug shows up with its traceback. On a mismatch the test
    fails with the command line, the exit code, stdout and stderr. ``result.stdout`` holds data,
    ``result.stderr`` messages (click 8.2+ keeps them apart).
    """

    def invoke(
        *args: str | PathLike[str],
        exit_code: int | None = 0,
        input: str | bytes | None = None,
        env: Mapping[str, str | None] | None = None,
        **kwargs: Any,
    ) -> Result:
        argv = [str(a) for a in args]
        result = CliRunner().invoke(PITOOLS, argv, input=input, env=env, catch_exceptions=False, **kwargs)
        if exit_code is not None and result.exit_code != exit_code:
            pytest.fail(
                f"`pitools {' '.join(argv)}` exited {result.exit_code}, expected {exit_code}\n"
                f"--- stdout ---\n{result.stdout}\n--- stderr ---\n{result.stderr}",
                pytrace=False,
            )
        return result

    return invoke


@pytest.fixture
def session(tmp_path: Path) -> Path:
    """A private copy of golden gen-s0001_v3 (a session the compaction tests may write to)."""
    p = tmp_path / "s.jsonl"
    shutil.copy(golden_session("gen-s0001_v3"), p)
    return p


@pytest.fixture
def server() -> Iterator[Any]:
    """A local fake model server (OpenAI/Anthropic wire), started and stopped around the test."""
    from tests.unit.summarize.summarize_fakes import FakeModelServer

    s = FakeModelServer()
    s.start()
    yield s
    s.stop()
