"""Options shared by several commands (output options live in ``pitools.cli``: --color/--width/--debug)."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar, cast, overload

import click

if TYPE_CHECKING:
    from pitools.cli.archive_options import Param
    from pitools.cli.output import Output
    from pitools.core.session.load import Keep, Loaded, LoadedSession

F = TypeVar("F", bound=Callable[..., Any])


def format_option(*choices: str, default: str | None = None, help: str | None = None) -> Callable[[F], F]:
    """``--format`` with the given choices (the default: the first, or ``human`` when given)."""
    if help is None:
        from pitools.cli.archive_options import FORMAT_HELP

        help = FORMAT_HELP
    if default is None:
        default = "human" if "human" in choices else choices[0]
    return click.option(
        "--format",
        "format_",
        type=click.Choice(list(choices)),
        default=default,
        show_default=True,
        help=help,
    )


def jobs_option(help: str) -> Callable[[F], F]:
    """``-j/--jobs N``: how many processes a many-file command may use (None: its default)."""
    return click.option("-j", "--jobs", type=click.IntRange(min=1), default=None, metavar="N", help=help)


def table_params(command: str, callbacks: dict[str, Callable[..., Any]] | None = None) -> Callable[[F], F]:
    """The click parameters of an archive command, made from its option table
    (:mod:`pitools.cli.archive_options`; the warm search reads ``search``'s too).

    ``callbacks``: click callbacks by parameter name; none for ``search``, whose warm path would
    skip them.
    """
    from pitools.cli.archive_options import table

    params = table(command)
    callbacks = callbacks or {}
    if command == "search" and callbacks:
        raise ValueError("search: the warm search reads its options without click; no callbacks")

    def decorate(f: F) -> F:
        for p in reversed(params):  # click stacks decorators bottom-up
            f = _click_param(p, callbacks.get(p.dest))(f)
        return f

    return decorate


def _click_param(p: Param, callback: Callable[..., Any] | None) -> Callable[[F], F]:
    if p.kind == "argument":
        return click.argument(p.dest)
    kwargs: dict[str, Any] = {"help": p.help}
    if p.metavar is not None:
        kwargs["metavar"] = p.metavar
    if callback is not None:
        kwargs["callback"] = callback
    if p.choices is not None:
        kwargs["type"] = click.Choice(p.choices)
    elif p.min_int is not None:
        kwargs["type"] = click.IntRange(min=p.min_int)
    if p.kind == "flag":
        kwargs["is_flag"] = True
    elif p.kind == "multiple":
        kwargs["multiple"] = True
    else:
        kwargs["default"] = p.default
        if p.show_default:
            kwargs["show_default"] = True
    return click.option(p.name, p.dest, **kwargs)


def _complete_leaf(ctx: click.Context, param: click.Parameter, incomplete: str) -> Any:
    from pitools.cli.complete import complete_leaf

    return complete_leaf(ctx, param, incomplete)


def _complete_session(ctx: click.Context, param: click.Parameter, incomplete: str) -> Any:
    from pitools.cli.complete import complete_session

    return complete_session(ctx, param, incomplete)


def leaf_option(f: F) -> F:
    return click.option(
        "--leaf",
        "leaf_ref",
        metavar="REF",
        default=None,
        shell_complete=_complete_leaf,
        help="Entry id, unique id prefix, label, or L<line> (the entry on that line of the file); "
        "default: Pi's default leaf, the last entry.",
    )(f)


def thinking_option(help: str) -> Callable[[F], F]:
    """``--thinking LEVEL``, one of pi-ai's levels (default: the level at the leaf, as Pi resumes
    it). The request mirror is imported here, by the commands that take the option, not by
    every command that imports this module."""
    from pitools.core.request.thinking import THINKING_LEVELS

    return click.option("--thinking", type=click.Choice(THINKING_LEVELS), default=None, help=help)


def no_config_option(f: F) -> F:
    """``--no-config`` for the commands that read Pi's settings and models.json."""
    return click.option(
        "--no-config", is_flag=True, help="Read none of Pi's config files (settings.json, models.json)."
    )(f)


STDIN_META = "pitools.stdin"


def _stdin_file(ctx: click.Context) -> str:
    """``-``: the session on stdin, copied to a private temporary file removed at exit.

    The loader reads files (it needs sizes, offsets and a second pass for some checks), so the
    stream is spooled once; the session itself is never written anywhere else.
    """
    import shutil
    import tempfile

    from pitools.cli.output import run_output

    run = run_output()
    if run.stdin_isatty:
        raise click.BadParameter("'-' reads the session from stdin, but stdin is a terminal", ctx=ctx)
    folder = tempfile.mkdtemp(prefix="pitools-stdin-")
    path = os.path.join(folder, "stdin.jsonl")
    source = getattr(run.stdin, "buffer", None)
    with open(path, "wb") as out:
        if source is not None:
            shutil.copyfileobj(source, out, 1 << 20)
        else:  # a text stream without bytes underneath (a test's StringIO): the text as UTF-8
            out.write(run.stdin.read().encode("utf-8", "surrogatepass"))
    ctx.call_on_close(lambda: shutil.rmtree(folder, ignore_errors=True))
    ctx.meta[STDIN_META] = True
    from pitools.cli.environment import Environment

    root = ctx.find_root().obj
    if isinstance(root, Environment):
        root.stdin_spool = path
    return path


def stdin_spool() -> str | None:
    """The private file ``-`` was spooled to in this run (None: no session came on stdin)."""
    from pitools.cli.environment import Environment

    ctx = click.get_current_context(silent=True)
    root = ctx.find_root().obj if ctx is not None else None
    return root.stdin_spool if isinstance(root, Environment) else None


def from_stdin() -> bool:
    """Whether this run's session came from stdin (``-``): commands that would write refuse."""
    ctx = click.get_current_context(silent=True)
    return bool(ctx is not None and ctx.meta.get(STDIN_META))


SESSION_DIR_META = "pitools.session_dir"


class SessionRef(click.ParamType):
    """FILE, the same way in every command: a path, ``-`` (stdin), a session id or a unique id prefix.

    Ids and prefixes are looked up where Pi keeps sessions (this directory's first, then all; see
    :func:`pitools.core.session.locate.locate_session`), honouring ``--session-dir``; the chosen file
    is named on stderr. ``folders=True`` (validate, scan, dataset) also takes a folder as it is, for
    the command to search for ``*.jsonl``. A path is passed through unchecked, so each command still
    reports a missing or unreadable file in its own words.
    """

    name = "session"

    def __init__(self, *, folders: bool = False) -> None:
        self.folders = folders

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value is None or (ctx is not None and ctx.resilient_parsing):
            return value
        value = str(value)
        if value == "-" and ctx is not None:
            return _stdin_file(ctx)
        if self.folders and os.path.isdir(value):
            return value
        from pitools.core.session.refs import looks_like_path

        # A path is taken as it is (locate_session's first rule, without loading the finder); a
        # folder got here only where folders are not taken.
        if looks_like_path(value):
            if os.path.isdir(value):
                self.fail(f"{value!r} is a directory, not a session file", param, ctx)
            # As given: normalising `./none` to `none` made it read as an id in later messages.
            return value
        from pitools.core.session.locate import locate_session
        from pitools.errors import PitoolsError

        try:
            located = locate_session(value, session_dir=ctx.meta.get(SESSION_DIR_META) if ctx is not None else None)
        except PitoolsError:
            if os.path.isdir(value):  # `adir` says what `adir/` says: no id matched, and it is a folder
                self.fail(f"{value!r} is a directory, not a session file", param, ctx)
            raise
        if located.how != "file":
            _say_which(located)
        return str(located.path)

    def shell_complete(self, ctx: click.Context, param: click.Parameter, incomplete: str) -> Any:
        return _complete_session(ctx, param, incomplete)


def no_session_files(paths: Any) -> NoReturn:
    """Folders with no ``*.jsonl`` below them (validate, scan): a usage error (exit 2), so a
    mistyped path in CI fails instead of passing with nothing checked."""
    from pitools.render.safe import safe_text

    shown = safe_text(", ".join(str(p) for p in paths), one_line=True)
    raise click.UsageError(f"no session files (*.jsonl) under {shown}")


def _say_which(located: Any) -> None:
    from pitools.render.safe import safe_text

    click.echo(safe_text(f"pitools: {located.describe()}", one_line=True), err=True)


def session_dir_option(f: F) -> F:
    """``--session-dir DIR``, read (eagerly) before FILE is resolved."""

    def remember_session_dir(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
        ctx.meta[SESSION_DIR_META] = value
        return value

    return click.option(
        "--session-dir",
        metavar="DIR",
        is_eager=True,
        expose_value=False,
        callback=remember_session_dir,
        help="Where Pi's sessions are (default: PI_CODING_AGENT_SESSION_DIR, the sessionDir setting, "
        "or ~/.pi/agent/sessions/--<cwd>--). FILE may be a path, '-' (stdin), a session id or id "
        "prefix, or omitted for the most recent session here.",
    )(f)


def session_argument(f: F) -> F:
    """``[FILE]`` plus ``--session-dir``: a session file, ``-`` (stdin), a session id or unique id
    prefix (:class:`SessionRef`), or nothing.

    With no FILE the most recent session of the current directory is used, picked as
    ``pi --continue`` picks it; the chosen file is named on stderr. The command receives the
    resolved path as ``file``; ``--session-dir`` is kept in ``ctx.meta["pitools.session_dir"]``
    for commands that also write where Pi would (fork, clone).
    """

    def most_recent(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
        if ctx.resilient_parsing:
            return value
        if value is None:
            from pitools.core.session.locate import locate_session

            located = locate_session(None, session_dir=ctx.meta.get(SESSION_DIR_META))
            _say_which(located)
            value = str(located.path)
        from pitools.cli.output import start_progress

        # Reading and computing a big session can take seconds: say so on a terminal.
        start_progress(f"pitools {ctx.info_name}: working on {os.path.basename(value)}")
        return value

    f = click.argument("file", metavar="[FILE]", required=False, type=SessionRef(), callback=most_recent)(f)
    return session_dir_option(f)


def session_paths_argument(name: str, *, required: bool) -> Callable[[F], F]:
    """``FILE|DIR...`` for the commands that read many sessions (validate, scan, dataset): each one a
    path, a folder, ``-``, a session id or a unique id prefix, resolved as :class:`SessionRef` does."""

    def decorate(f: F) -> F:
        f = click.argument(name, metavar="FILE|DIR...", nargs=-1, required=required, type=SessionRef(folders=True))(f)
        return session_dir_option(f)

    return decorate


def note_synthetic_ids(out: Output, loaded: Any) -> None:
    """Once per run, on stderr: the ids shown for a v1 file are not in it (see README)."""
    if not getattr(loaded, "synthetic_ids", False):
        return
    out.message(
        "note: this file predates entry ids (format v1): the ids shown (00000001, …) are pitools' "
        "stand-ins, not in the file, and Pi gives the entries random ids when it migrates it; "
        "use line numbers to name entries for good (--leaf L17)"
    )


# -- option groups: options that reach a command as one record -------------------------------------


def gather(cls: type[Any], name: str) -> Callable[[F], F]:
    """Hand a command the values of the options named like ``cls``'s fields as one ``cls``
    object, passed as ``name`` (fields the command has no option for keep their defaults)."""
    names = [field.name for field in fields(cls)]

    def decorate(f: F) -> F:
        @functools.wraps(f)
        def gathered(*args: Any, **kwargs: Any) -> Any:
            value = cls(**{n: kwargs.pop(n) for n in names if n in kwargs})
            return f(*args, **{name: value}, **kwargs)

        return cast(F, gathered)

    return decorate


def options_of(cls: type[Any], name: str, *options: Callable[[Any], Any]) -> Callable[[F], F]:
    """``options`` (in help order) whose values reach the command as one ``cls`` named ``name``
    (the option groups: :class:`SessionAt` here, the planning and rewriting ones in
    :mod:`pitools.cli.option_groups`)."""

    def decorate(f: F) -> F:
        f = gather(cls, name)(f)
        for option in reversed(options):
            f = option(f)
        return f

    return decorate


@dataclass(frozen=True, slots=True)
class SessionAt:
    """``[FILE]`` and ``--leaf REF``: the session a command reads and the leaf it works at
    (``leaf_ref`` None: Pi's default leaf, the last entry)."""

    file: str
    leaf_ref: str | None

    @overload
    def load(self, out: Output) -> tuple[LoadedSession, Any]: ...
    @overload
    def load(self, out: Output, *, keep: Keep) -> tuple[Loaded, Any]: ...
    def load(self, out: Output, *, keep: Keep = "all") -> tuple[Loaded, Any]:
        """The session through the one loader (``keep``: its keep policy) and the entry at the
        leaf; a v1 file's stand-in ids are noted on stderr, as every command at a leaf does."""
        from pitools.cli import leave_for_exit
        from pitools.core.session.load import load

        loaded = load(self.file, keep=keep)
        leave_for_exit(loaded)  # the command's session until its end: not freed for nothing
        leaf = loaded.leaf(self.leaf_ref)
        note_synthetic_ids(out, loaded)
        return loaded, leaf


def session_at_leaf(f: F) -> F:
    """:func:`session_argument` and :func:`leaf_option`,
    handed to the command as one :class:`SessionAt` named ``at``."""
    return options_of(SessionAt, "at", session_argument, leaf_option)(f)


def since_value(value: str | None) -> str | None:
    """``ls --since`` read by :func:`pitools.ops.queries.activity_since`; a bad value exits 2."""
    from pitools.errors import OptionValueError
    from pitools.ops.queries import activity_since

    try:
        return activity_since(value)
    except OptionValueError as exc:
        raise click.BadParameter(exc.message) from None


def model_option(flag: str, dest: str, help: str, *, required: bool = False) -> Callable[[F], F]:
    """A ``PROVIDER/ID`` option (``--model``, ``--for-model``, ``--diff-model``), handed to the
    command as ``dest`` and checked by :func:`model_reference`."""
    return click.option(
        flag, dest, metavar="PROVIDER/ID", default=None, required=required, callback=model_reference, help=help
    )


def model_reference(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A click callback for ``--model``-like options: ``PROVIDER/ID`` or a usage error (exit 2).

    Only the form is checked here; whether the model exists is the catalogue's to say (exit 1)."""
    if value is None:
        return None
    from pitools.core.request.common import RequestError
    from pitools.core.request.models import split_reference

    try:
        split_reference(value)
    except RequestError:
        raise click.BadParameter(
            f"{value!r} is not PROVIDER/ID (e.g. anthropic/claude-sonnet-4-5, openai/gpt-5)"
        ) from None
    return value
