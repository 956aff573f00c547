"""The pytest plugin installed with pitools (entry point ``pytest11``: ``pitools``).

- Fixture ``pi_session``: ``pi_session("fixtures/run.jsonl")`` gives a :class:`~pitools.testing.PiSession`
  (``.validate()``, ``.assert_valid()``, ``.context()``, ``.plan()``, ``.tree()``). A relative path is
  taken from pytest's root directory (where ``pytest.ini``/``pyproject.toml`` is), as pytest's own
  arguments are.
- Option ``--pi-sessions-validate GLOB`` (repeatable; or the ini setting ``pi_sessions_validate``,
  one glob a line): every matching file becomes one test item, ``<file>::pitools-validate``, that
  fails with the findings listed when ``pitools validate`` would fail on it. ``--pi-sessions-strict``
  (ini: ``pi_sessions_strict = true``) fails on warnings too.

The module imports nothing heavy at start-up: pytest loads it in every run of every project that has
pitools installed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from os import PathLike
from pathlib import Path
from typing import Any

import pytest

ITEM_NAME = "pitools-validate"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("pitools", "Pi session fixtures (pitools)")
    group.addoption(
        "--pi-sessions-validate",
        action="append",
        default=[],
        metavar="GLOB",
        help="Validate every Pi session file matching GLOB (relative to the rootdir; ** allowed), one test each.",
    )
    group.addoption(
        "--pi-sessions-strict",
        action="store_true",
        default=None,
        help="With --pi-sessions-validate: fail on warnings too (as `pitools validate --strict`).",
    )
    parser.addini("pi_sessions_validate", "Globs of Pi session files to validate, one per line.", type="linelist")
    parser.addini("pi_sessions_strict", "Fail the session checks on warnings too.", type="bool", default=False)


def _patterns(config: pytest.Config) -> list[str]:
    given: list[str] = config.getoption("--pi-sessions-validate") or []
    return given or list(config.getini("pi_sessions_validate"))


def _strict(config: pytest.Config) -> bool:
    flag = config.getoption("--pi-sessions-strict")
    return bool(flag) if flag is not None else bool(config.getini("pi_sessions_strict"))


def _matching(root: Path, patterns: list[str]) -> list[Path]:
    found: dict[Path, None] = {}
    for pattern in patterns:
        base = Path(pattern)
        if base.is_absolute():
            # Path.glob takes relative patterns only: split the absolute prefix off.
            anchor, relative = Path(base.anchor), base.relative_to(base.anchor)
            matches = sorted(anchor.glob(str(relative)))
        else:
            matches = sorted(root.glob(pattern))
        for path in matches:
            if path.is_file():
                found.setdefault(path.resolve())
    return list(found)


class SessionValidationFailed(Exception):
    """Raised by a session item; its findings make the failure report."""

    def __init__(self, path: str, lines: list[str]) -> None:
        super().__init__(path)
        self.path = path
        self.lines = lines


class PiSessionFile(pytest.File):
    """A Pi session file named by ``--pi-sessions-validate``: one item, its validation."""

    def collect(self) -> Iterator[pytest.Item]:
        yield PiSessionItem.from_parent(self, name=ITEM_NAME)


class PiSessionItem(pytest.Item):
    def runtest(self) -> None:
        from pitools.testing import PiSession, PiSessionError

        strict = _strict(self.config)
        try:
            result = PiSession(self.path).validate(strict=strict)
        except PiSessionError as exc:
            raise SessionValidationFailed(str(self.path), [str(exc)]) from exc
        failing = [f for f in result.findings if f.severity == "error" or (strict and f.severity == "warning")]
        if failing:
            raise SessionValidationFailed(str(self.path), [f"{f.severity}: {f.describe()}" for f in failing])

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, SessionValidationFailed):
            failure = excinfo.value
            shown = "\n".join(f"  {line}" for line in failure.lines)
            return f"pitools validate fails on {failure.path}:\n{shown}"
        return str(super().repr_failure(excinfo, style=style))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"pitools validate {self.path.name}"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Add one item per matching session file (tryfirst: ``-k`` and ``-m`` then select among them)."""
    patterns = _patterns(config)
    if not patterns:
        return
    paths = _matching(config.rootpath, patterns)
    if not paths:
        raise pytest.UsageError(f"--pi-sessions-validate: no file matches {', '.join(map(repr, patterns))}")
    for path in paths:
        collector = PiSessionFile.from_parent(session, path=path)
        items.extend(collector.collect())


@pytest.fixture
def pi_session(request: pytest.FixtureRequest) -> Callable[[str | PathLike[str]], Any]:
    """``pi_session(path)``: a :class:`pitools.testing.PiSession` for a Pi session file."""
    from pitools.testing import PiSession

    root = request.config.rootpath

    def make(path: str | PathLike[str]) -> PiSession:
        p = Path(path)
        if not p.is_absolute():
            p = root / p
        if not p.is_file():
            pytest.fail(f"pi_session: no such session file: {p}", pytrace=False)
        return PiSession(p)

    return make
