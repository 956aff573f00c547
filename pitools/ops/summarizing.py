"""The one way a writing command gets a summarizer: ``compact --apply`` and ``navigate --summarize``.

Every precondition is checked before the first model request, in this order:

1. the output: ``-o OUT`` must be a new file in an existing folder; in place, FILE must be a
   writable regular file (:func:`check_target`);
2. the model: resolved from ``--model``, the session's model or Pi's default, with keys looked up
   but no ``!command`` of Pi's configuration run yet (:func:`choose_summarizer`);
3. the user's consent: a builtin summary nobody asked for is never written in place silently,
   and a paid model is only called with ``--yes`` or a "yes" at the terminal (:func:`authorize`);
4. only then the configuration's ``!command`` values run and the summarizer is built
   (:func:`build`); the caller checks the file is unchanged right before its request.

The questions are asked through callbacks so this layer never touches a terminal itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pitools.errors import PitoolsError

if TYPE_CHECKING:
    from pitools.summarize import ModelSpec, Summarizer

#: ``(question) -> answer``: the CLI asks at the terminal; None when nobody can answer.
Confirm = Callable[[str], bool]


class ConsentRequiredError(PitoolsError):
    """A paid model would be called but nobody can say yes (no terminal and no ``--yes``).

    A usage problem rather than bad input: the CLI reports it with exit code 2.
    """


@dataclass(frozen=True, slots=True)
class SummarizeRequest:
    """What the user asked of a writing command that may call a model (``compact --apply``,
    ``navigate --summarize``), built once from the parsed options, and how to talk back.

    The callbacks keep this layer away from the terminal: ``confirm`` asks a yes/no question
    (None: nobody can answer), ``show_plan(plan)`` shows what will be summarized before that
    question, ``announce(choice)`` names the model about to be called, ``progress`` and
    ``on_retry`` report while it works.
    """

    model_arg: str | None = None
    base_url: str | None = None
    instructions: str | None = None
    output: str | None = None
    backup: bool = True
    yes: bool = False
    timeout: float = 600.0
    use_config: bool = True
    confirm: Confirm | None = None
    show_plan: Callable[[Any], None] | None = None
    announce: Callable[[SummarizerChoice], None] | None = None
    progress: Callable[[str], None] | None = None
    on_retry: Callable[[str], None] | None = None


@dataclass(frozen=True, slots=True)
class SummarizerChoice:
    """The model a command will call, before anything of Pi's configuration has run."""

    spec: ModelSpec
    model_arg: str | None
    session_model: tuple[str, str] | None
    base_url: str | None
    use_config: bool
    #: Why the builtin summarizer was chosen without being asked for (no key for the model).
    fallback_reason: str | None = None

    @property
    def paid(self) -> bool:
        return self.spec.api != "builtin"

    @property
    def label(self) -> str:
        return f"{self.spec.provider}/{self.spec.model_id}" if self.paid else "builtin (offline, extractive)"


def check_target(path: str, output: str | None) -> None:
    """Refuse now, before anything is paid for, a write that would be refused at the end."""
    from pitools import store

    if output is not None:
        store.check_new_target(output)
    else:
        store.check_writable(path)


def choose_summarizer(
    model_arg: str | None,
    *,
    session_model: tuple[str, str] | None,
    base_url: str | None = None,
    use_config: bool = True,
) -> SummarizerChoice:
    """The model to call, resolved without running any ``!command`` of the configuration.

    With no ``--model`` and no credentials for the session's model, the offline builtin
    summarizer is chosen (``fallback_reason`` says why); :func:`authorize` decides whether it
    may be used.
    """
    from pitools.summarize import MissingApiKeyError, builtin_spec, resolve_model

    fallback: str | None = None
    try:
        spec = resolve_model(
            model_arg, session_model=session_model, base_url=base_url, use_config=use_config, run_commands=False
        )
    except MissingApiKeyError as exc:
        if model_arg is not None:
            raise
        fallback = exc.message.split(":")[0]
        spec = builtin_spec()
    return SummarizerChoice(spec, model_arg, session_model, base_url, use_config, fallback)


def authorize(
    choice: SummarizerChoice,
    *,
    path: str,
    output: str | None,
    yes: bool,
    what: str,
    confirm: Confirm | None,
    show_plan: Callable[[], None] | None = None,
) -> None:
    """Ask (or refuse) before the first request. ``what`` names the entry written ("a compaction").

    Raises ``PitoolsError`` when the user says no or when a builtin summary would replace a real
    one in place unasked; :class:`ConsentRequiredError` when a paid call needs a yes nobody can give.
    """
    if not choice.paid and choice.model_arg != "builtin" and output is None:
        why = choice.fallback_reason or "no model is configured"
        if confirm is None:
            raise PitoolsError(
                f"{why}; refusing to write a builtin (offline, extractive) summary into {path} in place. "
                "Say --model builtin to mean it, configure a key for the model, or write a new file with -o OUT",
            )
        question = (
            f"{why}: the only summarizer available is the builtin (offline, extractive) one. "
            f"Append a builtin summary to {path} in place?"
        )
        if not confirm(question):
            raise PitoolsError("cancelled; nothing was written")
    if choice.paid and not yes:
        if confirm is None:
            raise ConsentRequiredError(
                f"calling the paid model {choice.label} needs --yes when not run from a terminal; nothing was written"
            )
        if show_plan is not None:
            show_plan()
        if not confirm(f"Summarize with {choice.label} and write {what}?"):
            raise PitoolsError("cancelled; nothing was written")


def build(
    choice: SummarizerChoice,
    *,
    timeout: float = 600.0,
    on_retry: Callable[[str], None] | None = None,
) -> Summarizer:
    """The summarizer for ``choice``, once authorized: now ``!command`` keys and headers may run."""
    from pitools.summarize import build_summarizer, resolve_model

    spec = choice.spec
    if choice.paid:
        spec = resolve_model(
            choice.model_arg,
            session_model=choice.session_model,
            base_url=choice.base_url,
            use_config=choice.use_config,
        )
    return build_summarizer(spec, on_retry=on_retry, timeout=timeout)


def prepare(
    path: str,
    request: SummarizeRequest,
    *,
    session_model: tuple[str, str] | None,
    what: str,
    plan: Any = None,
) -> tuple[SummarizerChoice, Summarizer]:
    """All the preconditions in order (see the module), then the summarizer to call. ``plan``
    is what ``request.show_plan`` shows before the question."""
    check_target(path, request.output)
    choice = choose(request, session_model=session_model)
    authorize_request(choice, request, path=path, what=what, plan=plan)
    return choice, build_for(choice, request)


def choose(request: SummarizeRequest, *, session_model: tuple[str, str] | None) -> SummarizerChoice:
    """:func:`choose_summarizer` for ``request``."""
    return choose_summarizer(
        request.model_arg, session_model=session_model, base_url=request.base_url, use_config=request.use_config
    )


def authorize_request(
    choice: SummarizerChoice, request: SummarizeRequest, *, path: str, what: str, plan: Any = None
) -> None:
    """:func:`authorize` for ``request``, then its ``announce``."""
    show = request.show_plan
    authorize(
        choice,
        path=path,
        output=request.output,
        yes=request.yes,
        what=what,
        confirm=request.confirm,
        show_plan=(lambda: show(plan)) if show is not None else None,
    )
    if request.announce is not None:
        request.announce(choice)


def build_for(choice: SummarizerChoice, request: SummarizeRequest) -> Summarizer:
    """:func:`build` with ``request``'s timeout and retry report."""
    return build(choice, timeout=request.timeout, on_retry=request.on_retry)
