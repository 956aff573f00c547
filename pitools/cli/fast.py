"""The click-free fast path for ``pitools search``, ``usage`` and ``ls``.

These commands answer from the warm archive index in milliseconds, so importing click (and
building the group) would be most of their run time. :func:`run_fast` parses their usual
invocations itself and runs the same bodies (:mod:`pitools.cli.archive_run`) with the same
error handling as the click group. It accepts only what it can read exactly as click would:
known long options (``--opt value`` or ``--opt=value``), flags, valid choices and numbers, and
for ``search`` one query. Anything else — help, short options, ``--``, an unknown option or
value, a global option, shell completion, an option that needs click's own checks — returns
None and the click command runs instead, so help, usage errors and exit codes stay identical.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

# Plain classes, not dataclasses or named tuples (typing), and no regular expression: this
# module is on every fast-path start-up, where importing typing, building dataclasses and
# compiling patterns cost milliseconds.


class Opt:
    """One long option: its keyword, and how its value is read."""

    __slots__ = ("choices", "dest", "kind", "min_int")

    def __init__(
        self, dest: str, kind: str = "value", choices: tuple[str, ...] | None = None, min_int: int | None = None
    ) -> None:
        self.dest = dest
        self.kind = kind  # "value", "flag", "multiple"
        self.choices = choices
        self.min_int = min_int  # an integer option (click.IntRange(min=...))


class Spec:
    __slots__ = ("defaults", "options", "query")

    def __init__(self, options: dict[str, Opt], defaults: dict[str, Any], query: bool = False) -> None:
        self.options = options
        self.defaults = defaults
        self.query = query  # takes one positional QUERY


def _spec(name: str) -> Spec | None:
    """The options of command ``name`` (None: not a fast-path command)."""
    if name not in ("usage", "search", "ls"):
        return None
    from pitools.ops.search_core import ROLE_CHOICES

    filters = {
        "--project": Opt("project"),
        "--cwd": Opt("cwd"),
        "--session": Opt("session"),
        "--since": Opt("since"),
        "--until": Opt("until"),
        "--timezone": Opt("timezone"),
        "--session-dir": Opt("session_dir"),
    }
    if name == "usage":
        from pitools.core.views.usage_report import BY_CHOICES

        return Spec(
            {
                **filters,
                "--by": Opt("by", choices=BY_CHOICES),
                "--breakdown": Opt("breakdown", "flag"),
                "--format": Opt("format_", choices=("human", "json", "csv")),
            },
            {
                "by": "day",
                "since": None,
                "until": None,
                "timezone": None,
                "breakdown": False,
                "project": None,
                "cwd": None,
                "session": None,
                "session_dir": None,
                "format_": "human",
            },
        )
    if name == "search":
        return Spec(
            {
                **filters,
                "--regex": Opt("regex", "flag"),
                "--thinking": Opt("thinking", "flag"),
                "--role": Opt("roles", "multiple", choices=ROLE_CHOICES),
                "--tool": Opt("tools", "multiple"),
                "--in-context": Opt("in_context", "flag"),
                "--branch": Opt("branch", choices=("current", "all")),
                "--limit": Opt("limit", min_int=0),
                "--format": Opt("format_", choices=("human", "json")),
            },
            {
                "regex": False,
                "thinking": False,
                "roles": (),
                "tools": (),
                "project": None,
                "cwd": None,
                "session": None,
                "since": None,
                "until": None,
                "in_context": False,
                "branch": "all",
                "limit": 50,
                "timezone": None,
                "session_dir": None,
                "format_": "human",
            },
            query=True,
        )
    # ``ls --since`` converts its value in a click callback: that stays with click.
    from pitools.cli.archive_run import SORTS

    return Spec(
        {
            "--all": Opt("all_", "flag"),
            "--cwd": Opt("cwd"),
            "--session-dir": Opt("session_dir"),
            "--format": Opt("format_", choices=("human", "json")),
            "--no-cache": Opt("no_cache", "flag"),
            "--limit": Opt("limit", min_int=1),
            "--sort": Opt("sort", choices=tuple(SORTS)),
        },
        {
            "all_": False,
            "cwd": None,
            "session_dir": None,
            "format_": "human",
            "no_cache": False,
            "limit": None,
            "since": None,
            "sort": "activity",
        },
    )


def parse(name: str, args: Sequence[str]) -> dict[str, Any] | None:
    """``args`` of command ``name`` as keyword arguments, or None when click must read them."""
    spec = _spec(name)
    if spec is None:
        return None
    values = dict(spec.defaults)
    multiple: dict[str, list[str]] = {}
    query: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if not arg.startswith("-"):
            query.append(arg)
            continue
        if not arg.startswith("--") or arg == "--":
            return None  # short options (-h), a lone "-", the end-of-options marker
        key, eq, value = arg.partition("=")
        opt = spec.options.get(key)
        if opt is None:
            return None
        if opt.kind == "flag":
            if eq:
                return None
            values[opt.dest] = True
            continue
        if not eq:
            if i >= len(args) or args[i].startswith("-"):
                return None
            value = args[i]
            i += 1
        if opt.choices is not None and value not in opt.choices:
            return None
        converted: Any = value
        if opt.min_int is not None:
            # [0-9]+ only (str.isdigit alone also takes other scripts' digits and superscripts)
            if not (value.isascii() and value.isdigit()) or int(value) < opt.min_int:
                return None
            converted = int(value)
        if opt.kind == "multiple":
            multiple.setdefault(opt.dest, []).append(value)
        else:
            values[opt.dest] = converted
    for dest, items in multiple.items():
        values[dest] = tuple(items)
    if spec.query:
        if len(query) != 1:
            return None
        values["query"] = query[0]
    elif query:
        return None
    return values


def run_fast(argv: Sequence[str]) -> int | None:
    """Run ``pitools ARGV`` without click when :func:`parse` reads it; None: use click."""
    if not argv or "_PITOOLS_COMPLETE" in os.environ:
        return None
    name = argv[0]
    kwargs = parse(name, argv[1:])
    if kwargs is None:
        return None
    from pitools.cli import archive_run

    runners: dict[str, Callable[..., int]] = {
        "usage": archive_run.run_usage,
        "search": archive_run.run_search,
        "ls": archive_run.run_ls,
    }
    return _invoke(runners[name], kwargs)


def exit_now(status: int) -> None:
    """End the process with ``status`` at once, skipping the interpreter's teardown when safe.

    Freeing every module and object at exit costs a warm ``search`` ~7 ms of its ~60. It is
    skipped only when nothing is left to do at exit: both streams flushed, no ``atexit``
    callback registered (logging, multiprocessing and the like register one), no other thread
    alive. Otherwise (and whenever flushing fails, e.g. a closed pipe) the caller exits normally.
    """
    import atexit

    if getattr(atexit, "_ncallbacks", lambda: 1)() != 0:
        return
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:
        return
    os._exit(status)


def _invoke(runner: Callable[..., int], kwargs: dict[str, Any]) -> int:
    """What the click group does around a command: streams, recursion limit, errors to exit codes."""
    from pitools.cli import RECURSION_LIMIT, internal_error_message, unexpected_error
    from pitools.cli.output import (
        EXIT_FAILURE,
        EXIT_INTERRUPTED,
        EXIT_OK,
        Output,
        silence_stdout,
        stop_progress,
    )
    from pitools.errors import PitoolsError

    out = Output.from_environment()  # makes both streams safe, as the group does
    if sys.getrecursionlimit() < RECURSION_LIMIT:
        sys.setrecursionlimit(RECURSION_LIMIT)
    try:
        try:
            status = runner(out, **kwargs)
        finally:
            stop_progress()
        sys.stdout.flush()
    except PitoolsError as exc:
        out.message(str(exc))
        return exc.exit_code
    except KeyboardInterrupt:
        out.stderr.write("pitools: interrupted\n")
        out.stderr.flush()
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        silence_stdout()
        return EXIT_OK
    except RecursionError:
        if os.environ.get("PITOOLS_DEBUG") == "1":
            raise
        out.message(internal_error_message(None))
        return EXIT_FAILURE
    except Exception as exc:
        if os.environ.get("PITOOLS_DEBUG") == "1":
            raise
        line, code = unexpected_error(exc)
        out.message(line)
        return code
    return status
