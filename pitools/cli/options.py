"""Options shared by several commands, and the consoles every renderer writes to."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


def format_option(*choices: str, default: str = "human") -> Callable[[F], F]:
    """``--format`` with the given choices (``human`` first)."""
    return click.option(
        "--format",
        "format_",
        type=click.Choice(list(choices)),
        default=default,
        show_default=True,
        help="Output format. json is a stable interface (schemas/output/).",
    )


def color_option(f: F) -> F:
    return click.option(
        "--color",
        type=click.Choice(["auto", "always", "never"]),
        default="auto",
        show_default=True,
        help="Colour in human output (auto honours NO_COLOR/FORCE_COLOR and terminals).",
    )(f)


def leaf_option(f: F) -> F:
    return click.option(
        "--leaf",
        "leaf_ref",
        metavar="REF",
        default=None,
        help="Entry id, unique id prefix, or label (default: Pi's default leaf, the last entry).",
    )(f)


def verbosity_options(f: F) -> F:
    f = click.option("-q", "--quiet", count=True, help="Less output (repeatable).")(f)
    f = click.option("-v", "--verbose", count=True, help="More output (repeatable).")(f)
    return f


def verbosity(verbose: int, quiet: int) -> int:
    return 1 + verbose - quiet


def session_argument(f: F) -> F:
    """``[FILE]`` plus ``--session-dir``: a session file, a session id or unique id prefix, or nothing.

    With no FILE the most recent session of the current directory is used, picked as
    ``pi --continue`` picks it; the chosen file is named on stderr. The command receives the
    resolved path as ``file``; ``--session-dir`` is kept in ``ctx.meta["pitools.session_dir"]``
    for commands that also write where Pi would (fork, clone).
    """
    meta_key = "pitools.session_dir"

    def remember_session_dir(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
        ctx.meta[meta_key] = value
        return value

    def resolve_file(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
        if ctx.resilient_parsing:
            return value
        from pitools.core.session.locate import locate_session

        located = locate_session(value, session_dir=ctx.meta.get(meta_key))
        if located.how == "path" and os.path.isdir(located.path):
            raise click.BadParameter(f"{value!r} is a directory, not a session file", ctx=ctx, param=param)
        if located.how not in ("path", "file"):
            click.echo(f"pitools: {located.describe()}", err=True)
        return str(located.path)

    f = click.argument("file", metavar="[FILE]", required=False, callback=resolve_file)(f)
    return click.option(
        "--session-dir",
        metavar="DIR",
        is_eager=True,
        expose_value=False,
        callback=remember_session_dir,
        help="Where Pi's sessions are (default: PI_CODING_AGENT_SESSION_DIR, the sessionDir setting, "
        "or ~/.pi/agent/sessions/--<cwd>--). FILE may be a path, a session id or id prefix, or "
        "omitted for the most recent session here.",
    )(f)


def consoles(color: str = "auto", width: int | None = None) -> tuple[Any, Any]:
    """One rich console for stdout (data) and one for stderr (messages)."""
    from rich.console import Console

    force: bool | None = None
    no_color = False
    if color == "always":
        force = True
    elif color == "never":
        no_color = True
    if width is None and os.environ.get("PITOOLS_WIDTH"):
        width = int(os.environ["PITOOLS_WIDTH"])
    out = Console(
        file=sys.stdout,
        force_terminal=force,
        no_color=no_color,
        width=width,
        highlight=False,
        soft_wrap=False,
        emoji=False,
        markup=False,
    )
    # Messages stay one line each (soft wrap): scripts read stderr line by line.
    err = Console(
        file=sys.stderr,
        force_terminal=force,
        no_color=no_color,
        width=width,
        highlight=False,
        soft_wrap=True,
        emoji=False,
        markup=False,
    )
    return out, err


def write_json(data: Any) -> None:
    """Write one JSON document to stdout (orjson, JavaScript number forms, trailing newline)."""
    from pitools.core.js.jsonout import write_json_to

    out = stdout_bytes()
    write_json_to(out, data)  # piece by piece: a 200 MB document is never copied whole
    out.flush()


def stdout_bytes() -> Any:
    """The binary stream behind stdout (also under click's test runner)."""
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:  # pragma: no cover - a text-only replacement stream
        raise RuntimeError("stdout has no binary buffer")
    sys.stdout.flush()
    return buffer
