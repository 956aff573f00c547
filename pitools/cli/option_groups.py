"""The option groups of the commands that plan, summarize, rewrite or build a model's request
(``compact``, ``navigate``, ``migrate``, ``repair``, ``slim``, ``redact``, ``request``, ``heal``):
each group's options reach the command as one frozen record (:class:`PlanArgs`,
:class:`SummarizerArgs`, :class:`RewriteArgs`, :class:`RequestArgs`).

Kept apart from :mod:`pitools.cli.options` (the options every command shares) so that a command
without these groups does not build their records when it starts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import click

from pitools.cli.options import (
    SessionAt,
    format_option,
    from_stdin,
    no_config_option,
    options_of,
    session_at_leaf,
    thinking_option,
)

if TYPE_CHECKING:
    from pitools.cli.output import Output
    from pitools.ops.summarizing import SummarizeRequest

F = TypeVar("F", bound=Callable[..., Any])


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


@dataclass(frozen=True, slots=True)
class RequestArgs:
    """What ``request`` and ``heal`` build pi-ai's request body from: the session and its leaf
    (``at``), the model (``model_ref``; None: the one at the leaf), ``--thinking`` (None: the
    level at the leaf) and ``--no-config``."""

    at: SessionAt
    model_ref: str | None
    thinking: str | None
    no_config: bool

    @property
    def use_config(self) -> bool:
        return not self.no_config

    def settings(self, out: Output, loaded: Any) -> Any:
        """Pi's settings that change the body, read as Pi reads them (none with ``--no-config``),
        each warning about them one line on stderr."""
        from pitools.ops.request import request_settings

        settings = request_settings(loaded, self.use_config)
        for warning in settings.warnings:
            out.message(f"warning: {warning}")
        return settings


def request_options(model: Callable[[F], F], thinking_help: str) -> Callable[[F], F]:
    """``[FILE]``, ``--leaf``, ``model`` (a :func:`~pitools.cli.options.model_option` handing its
    value over as ``model_ref``), ``--thinking`` and ``--no-config``: what a command that builds
    the request a model would get at a leaf (``request``, ``heal``) reads, handed to it as one
    :class:`RequestArgs` named ``request``."""
    return options_of(RequestArgs, "request", session_at_leaf, model, thinking_option(thinking_help), no_config_option)


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
            "--base-url",
            default=None,
            help=f"{stage}: the model's endpoint, same API (a bare model id: an OpenAI-compatible server).",
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
