"""The span of one ``pitools`` run, for what may be read once and reused until the run ends.

:func:`pitools.cli.main` opens a scope around each run; :mod:`pitools.piconfig.resolver` keys its
memo of Pi's configuration files by it. Outside a run (a library call, a unit test) there is no
scope and nothing is reused, so a file changed between two calls is always read again. Kept
free of imports: the lean ``search`` path enters it too.
"""

from __future__ import annotations

_current: object | None = None


def begin() -> object:
    """Start a run: what earlier runs read is not reused."""
    global _current
    _current = object()
    return _current


def end(token: object) -> None:
    """End the run started by ``begin`` (a nested run leaves the outer one's scope alone)."""
    global _current
    if _current is token:
        _current = None


def current() -> object | None:
    """The running scope, or None outside a run."""
    return _current
