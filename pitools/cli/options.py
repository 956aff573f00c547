"""Options shared by several commands (output options live in ``pitools.cli``: --color/--width/--debug)."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, TypeVar, cast

import click

from pitools.cli.archive_options import FORMAT_HELP, Param, table

if TYPE_CHECKING:
    from pitools.cli.output import Output
    from pitools.ops.summarizing import SummarizeRequest

F = TypeVar("F", bound=Callable[..., Any])


def format_option(*choices: str, default: str | None = None, help: str = FORMAT_HELP) -> Callable[[F], F]:
    """``--format`` with the given choices (the default: the first, or ``human`` when given)."""
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
    (:mod:`pitools.cli.archive_options`, which the click-free parser reads too).

    ``callbacks``: click callbacks by parameter name (their options are click-only in the table).
    """
    params = table(command)
    callbacks = callbacks or {}
    unknown = set(callbacks) - {p.dest for p in params if not p.fast}
    if unknown:  # a callback on an option the click-free path reads would be skipped there
        raise ValueError(f"{command}: callbacks for options the click-free parser reads: {sorted(unknown)}")

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
    return path


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
        from pitools.core.session.locate import locate_session

        located = locate_session(value, session_dir=ctx.meta.get(SESSION_DIR_META) if ctx is not None else None)
        if located.how == "path" and os.path.isdir(located.path) and not self.folders:
            self.fail(f"{value!r} is a directory, not a session file", param, ctx)
        if located.how not in ("path", "file"):
            _say_which(located)
        return str(located.path)

    def shell_complete(self, ctx: click.Context, param: click.Parameter, incomplete: str) -> Any:
        return _complete_session(ctx, param, incomplete)


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


@dataclass(frozen=True, slots=True)
class RewriteArgs:
    """Where a command that rewrites a session (migrate, repair, slim, redact) writes: ``-o OUT``,
    ``--in-place`` (with or without ``--no-backup``), or nothing (``--dry-run``)."""

    output: str | None
    in_place: bool
    no_backup: bool
    dry_run: bool = False

    def check(self, *, from_stdin_hint: str = "the session came from stdin: write the result with -o OUT") -> None:
        """The usage errors (exit 2) every rewriting command shares."""
        if self.output and self.in_place:
            raise click.UsageError("use only one of -o/--output and --in-place")
        if self.dry_run and (self.output or self.in_place):
            raise click.UsageError("--dry-run writes nothing; drop -o/--in-place (or --dry-run)")
        if self.no_backup and not self.in_place:
            raise click.UsageError("--no-backup only applies to --in-place")
        if self.in_place and from_stdin():
            raise click.UsageError(from_stdin_hint)


def rewrite_options(
    output_help: str,
    dry_run_help: str | None = None,
    *,
    in_place_help: str = "Replace FILE atomically (keeps FILE.bak-<time> unless --no-backup).",
    no_backup_help: str = "With --in-place: do not keep a backup copy.",
) -> Callable[[F], F]:
    """``-o/--output``, ``--in-place``, ``--dry-run`` (when ``dry_run_help`` is given) and
    ``--no-backup``: where a command that rewrites a session (migrate, repair, slim, redact)
    writes its result, given to it as ``target`` (:class:`RewriteArgs`)."""

    where = [
        click.option("-o", "--output", "output", metavar="OUT", default=None, help=output_help),
        click.option("--in-place", is_flag=True, help=in_place_help),
    ]
    if dry_run_help is not None:
        where.append(click.option("--dry-run", is_flag=True, help=dry_run_help))
    return options_of(RewriteArgs, "target", *where, click.option("--no-backup", is_flag=True, help=no_backup_help))


def since_value(value: str | None) -> str | None:
    """``--since`` as an ISO 8601 UTC instant (``7d`` = seven days ago); bad values exit 2."""
    if value is None:
        return None
    import datetime as dt
    import re

    now = dt.datetime.now(dt.UTC)
    m = re.fullmatch(r"(\d+)\s*(m|min|h|d|w)", value.strip())
    if m:
        unit = {"m": "minutes", "min": "minutes", "h": "hours", "d": "days", "w": "weeks"}[m.group(2)]
        when = now - dt.timedelta(**{unit: int(m.group(1))})
    else:
        try:
            when = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise click.BadParameter(f"{value!r} is neither a date (2026-03-01) nor an age (12h, 7d)") from None
        if when.tzinfo is None:
            when = when.astimezone()  # a date or time without zone is local, as people mean it
    return when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


@dataclass(frozen=True, slots=True)
class PlanArgs:
    """How ``compact`` and ``navigate`` size their plan (``--reserve-tokens``, ``--context-window``,
    ``--no-config``) and how much of it the dry run shows (``--show-prompt``, ``--entries``)."""

    reserve_tokens: int | None
    context_window: int | None
    no_config: bool
    show_prompt: bool
    list_entries: bool

    @property
    def use_config(self) -> bool:
        return not self.no_config

    def settings(self) -> dict[str, Any]:
        """The keyword arguments the planning use cases take (``plan_compact``, ``setup_navigation``)."""
        return {
            "reserve_tokens": self.reserve_tokens,
            "context_window": self.context_window,
            "use_config": self.use_config,
        }

    def check(self, *, writes: bool, dry_run: str) -> None:
        """What to show only applies to the dry run (``dry_run`` names it in the error)."""
        if writes and (self.show_prompt or self.list_entries):
            raise click.UsageError(f"{'--show-prompt' if self.show_prompt else '--entries'} only applies to {dry_run}")


def plan_options(reserve_help: str, prompt_help: str, entries_help: str) -> Callable[[F], F]:
    """The options of a command that plans like Pi before it may summarize (``compact``,
    ``navigate``), handed to it as one :class:`PlanArgs` named ``plan``."""
    no_config_help = "Read none of Pi's config files (settings, models, auth); keys from env only."
    return options_of(
        PlanArgs,
        "plan",
        click.option("--reserve-tokens", type=click.IntRange(min=0), default=None, help=reserve_help),
        click.option(
            "--context-window", type=click.IntRange(min=1), default=None, help="Model context window in tokens."
        ),
        click.option("--no-config", is_flag=True, help=no_config_help),
        click.option("--show-prompt", is_flag=True, help=prompt_help),
        click.option("--entries", "list_entries", is_flag=True, help=entries_help),
    )


def options_of(cls: type[Any], name: str, *options: Callable[[Any], Any]) -> Callable[[F], F]:
    """``options`` (in help order) whose values reach the command as one ``cls`` named ``name``."""

    def decorate(f: F) -> F:
        f = gather(cls, name)(f)
        for option in reversed(options):
            f = option(f)
        return f

    return decorate


@dataclass(frozen=True, slots=True)
class SummarizerArgs:
    """The parsed :func:`summarizer_options` of one run (the command receives them as ``summarizer``)."""

    model_arg: str | None
    base_url: str | None
    instructions: str | None
    output: str | None
    no_backup: bool
    yes: bool
    timeout: float

    def given(self) -> list[str]:
        """The options given on the command line, by their flags (for "only apply to" errors)."""
        named = {"--model": self.model_arg, "--base-url": self.base_url, "--instructions": self.instructions}
        used = [k for k, v in {**named, "-o": self.output}.items() if v]
        return used + (["--no-backup"] if self.no_backup else []) + (["--yes"] if self.yes else [])

    def check(self, *, writes: bool, when: str, changed: str = "changed") -> None:
        """Usage errors (exit 2) common to both commands: the options given without a write
        (``when`` says what enables them), ``--no-backup`` with ``-o``, a session from stdin
        ``changed`` in place."""
        if not writes:
            used = self.given()
            if used:
                raise click.UsageError(f"{', '.join(used)} only apply {when}")
            return
        if self.output and self.no_backup:
            raise click.UsageError("--no-backup has no effect with -o (the original is untouched)")
        if not self.output and from_stdin():
            raise click.UsageError(f"a session read from stdin cannot be {changed} in place: add -o OUT")

    def request(
        self,
        out: Output,
        *,
        file: str,
        format_: str,
        entry: str,
        show_plan: Callable[[Any, Any], None] | None,
        use_config: bool,
    ) -> SummarizeRequest:
        """The one request object of :mod:`pitools.ops.summarizing`, with the terminal dialog:
        ``entry`` names what is written ("the compaction"); ``show_plan(console, plan)`` draws the
        plan on stderr before a paid model is asked for (never in JSON mode)."""
        from pitools.ops.summarizing import SummarizeRequest

        human = format_ != "json"
        err = out.console(err=True)
        where = f"a new file {self.output}" if self.output else f"{file} (in place)"

        def announce(choice: Any) -> None:
            out.message(f"summarizing with {choice.label}; {entry} goes into {where}")

        def show(plan: Any) -> None:
            if show_plan is not None:
                show_plan(err, plan)

        return SummarizeRequest(
            model_arg=self.model_arg,
            base_url=self.base_url,
            instructions=self.instructions,
            output=self.output,
            backup=not self.no_backup,
            yes=self.yes,
            timeout=self.timeout,
            use_config=use_config,
            confirm=confirm_at_terminal(out),
            show_plan=show if human else None,
            announce=announce if human else None,
            progress=(lambda msg: err.print(f"pitools: {msg}")) if human else None,
            on_retry=lambda msg: err.print(f"pitools: retry: {msg}"),
        )


def confirm_at_terminal(out: Output) -> Callable[[str], bool] | None:
    """The question callback of :mod:`pitools.ops.summarizing`: a y/N prompt on stderr when
    both stdin and stderr are terminals, else None (nobody can answer)."""
    if not (out.stdin_isatty and out.stderr_isatty):
        return None

    def ask(question: str) -> bool:
        return bool(click.confirm(question, default=False, err=True))

    return ask


def summarizer_options(stage: str) -> Callable[[F], F]:
    """The options of a command that may call a summarizer model and then write (``compact
    --apply``, ``navigate --summarize``): one list, so both take the same words, handed to the
    command as one :class:`SummarizerArgs` named ``summarizer``. ``stage`` names the step they
    apply to in the help ("Apply", "Summarize")."""
    return options_of(
        SummarizerArgs,
        "summarizer",
        click.option(
            "--model",
            "model_arg",
            metavar="PROVIDER/ID|builtin",
            default=None,
            help=f"{stage}: the summarizer model (default: the session's model, then Pi's default, then builtin).",
        ),
        click.option(
            "--base-url", default=None, help=f"{stage}: an OpenAI-compatible server (llama.cpp, Ollama, vLLM...)."
        ),
        click.option("--instructions", default=None, help=f"{stage}: an extra focus for the summary."),
        click.option("-o", "--output", default=None, metavar="OUT", help=f"{stage}: write a new session file instead."),
        click.option("--no-backup", is_flag=True, help=f"{stage}: do not keep FILE.bak-<time> when writing in place."),
        click.option("--yes", is_flag=True, help=f"{stage}: do not ask before calling a paid model."),
        click.option(
            "--timeout",
            type=click.FloatRange(min=1),
            default=600.0,
            show_default=True,
            help=f"{stage}: seconds to wait for each model response.",
        ),
    )


def planning_command_options(stage: str, reserve_help: str, prompt_help: str, entries_help: str) -> Callable[[F], F]:
    """The options that end ``compact`` and ``navigate``, in their help order: :func:`plan_options`,
    :func:`summarizer_options` (``stage`` names the writing step) and ``--format human|json``."""

    def decorate(f: F) -> F:
        f = format_option("human", "json")(f)
        f = summarizer_options(stage)(f)
        return plan_options(reserve_help, prompt_help, entries_help)(f)

    return decorate
