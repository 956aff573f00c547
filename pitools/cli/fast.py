"""The click-free fast path for ``pitools search``, ``usage`` and ``ls``.

These commands answer from the warm archive index in milliseconds, so importing click (and
building the group) would be most of their run time. :func:`run_fast` parses their usual
invocations itself, from the same option table as the click commands
(:mod:`pitools.cli.archive_options`), and runs the same bodies (:mod:`pitools.cli.archive_commands`)
under the same error handler (:func:`pitools.cli.main`). It accepts only what it can read exactly as click would:
known long options (``--opt value`` or ``--opt=value``), flags, valid choices and numbers, and
for ``search`` one query. Anything else — help, short options, ``--``, an unknown option or
value, a global option, shell completion, an option that needs click's own checks — returns
None and the click command runs instead, so help, usage errors and exit codes stay identical.
"""

from __future__ import annotations

from pitools.cli.archive_options import ARCHIVE_COMMANDS, table

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from pitools.cli.environment import Environment

# No typing, dataclasses or regular expressions: this module is on every fast-path start-up,
# where importing them and compiling patterns cost milliseconds.


def parse(name: str, args: Sequence[str]) -> dict[str, Any] | None:
    """``args`` of command ``name`` as keyword arguments, or None when click must read them.

    The options, their defaults and choices come from the command's option table
    (:mod:`pitools.cli.archive_options`), the one the click command is made from.
    """
    if name not in ARCHIVE_COMMANDS:
        return None
    params = table(name)
    options = {p.name: p for p in params if p.kind != "argument"}
    values: dict[str, Any] = {p.dest: p.default for p in options.values()}
    takes_query = any(p.kind == "argument" for p in params)
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
        opt = options.get(key)
        if opt is None or not opt.fast:
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
    if takes_query:
        if len(query) != 1:
            return None
        values["query"] = query[0]
    elif query:
        return None
    return values


def run_fast(argv: Sequence[str], env: Environment) -> int | None:
    """Run ``pitools ARGV`` on ``env`` without click when :func:`parse` reads it; None: use click.

    Errors are the caller's (:func:`pitools.cli.main` runs this under the one error handler)."""
    if not argv:
        return None
    name = argv[0]
    kwargs = parse(name, argv[1:])
    if kwargs is None:
        return None
    from pitools.cli import archive_commands
    from pitools.cli.output import output_for

    runners: dict[str, Callable[..., int]] = {
        "usage": archive_commands.run_usage,
        "search": archive_commands.run_search,
        "ls": archive_commands.run_ls,
    }
    return runners[name](output_for(env), **kwargs)
