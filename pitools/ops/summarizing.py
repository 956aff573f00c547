"""The one way a writing command gets a summarizer: ``compact --apply`` and ``navigate --summarize``.

The front end builds one :class:`SummarizeRequest` from the parsed options; every precondition
is then checked before the first model request, in this order:

1. the output: ``-o OUT`` must be a new file in an existing folder; in place, FILE must be a
   writable regular file (:func:`check_target`);
2. the model: resolved from ``--model``, the session's model or Pi's default, with keys looked up
   but no ``!command`` of Pi's configuration run yet (:func:`choose`);
3. the user's consent: a builtin summary nobody asked for is never written in place silently,
   and a paid model is only called with ``--yes`` or a "yes" at the terminal (:func:`authorize`);
4. only then the configuration's ``!command`` values run and the summarizer is built
   (:func:`build`); the caller checks the file is unchanged right before its request.

:func:`prepare` runs the four in order. The questions are asked through the request's
callbacks, so this layer never touches a terminal itself.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pitools.errors import PitoolsError

if TYPE_CHECKING:
    from pitools.core.compaction.settings import DefaultModelSetting
    from pitools.core.compaction.summarizer import Summarizer
    from pitools.summarize import ModelSpec

#: ``(question) -> answer``: the CLI asks at the terminal; None when nobody can answer.
Confirm = Callable[[str], bool]

#: How the offline summarizer is named wherever a model is named.
BUILTIN_LABEL = "builtin (offline, extractive)"


class ConsentRequiredError(PitoolsError):
    """A paid model would be called but nobody can say yes (no terminal and no ``--yes``).

    A usage problem rather than bad input: the CLI reports it with exit code 2.
    """


@dataclass(frozen=True, slots=True)
class SummarizeRequest:
    """What the user asked of a writing command that may call a model (``compact --apply``,
    ``navigate --summarize``), built once by the front end, and how to talk back.

    The model: ``model_arg`` (``--model``), ``base_url``, ``use_config`` (False: ``--no-config``)
    and ``timeout`` (seconds per response); ``summarizer`` is a library caller's own, used as is
    (no model is resolved or asked about). The summary: ``instructions`` (``--instructions``).
    The consent: ``yes``. The write: ``output`` (``-o``; None: in place), ``backup``,
    ``new_session`` (False keeps the source's header in ``output``), and for reproducible files
    (the golden corpus) ``now`` and ``entry_ids``, the ids of the new entries in order.

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
    new_session: bool = True
    now: _dt.datetime | None = None
    entry_ids: tuple[str, ...] = ()
    summarizer: Summarizer | None = None
    confirm: Confirm | None = None
    show_plan: Callable[[Any], None] | None = None
    announce: Callable[[SummarizerChoice], None] | None = None
    progress: Callable[[str], None] | None = None
    on_retry: Callable[[str], None] | None = None

    def entry_id(self, n: int) -> str | None:
        """The fixed id of the ``n``-th new entry (None: a fresh one)."""
        return self.entry_ids[n] if n < len(self.entry_ids) else None


@dataclass(frozen=True, slots=True)
class SummarizerChoice:
    """The model a command will call, before anything of Pi's configuration has run."""

    spec: ModelSpec
    session_model: tuple[str, str] | None
    request: SummarizeRequest
    #: Pi's merged ``defaultProvider``/``defaultModel`` for the session (None: the agent folder's).
    default_model: DefaultModelSetting | None = None
    #: Why the builtin summarizer was chosen without being asked for (no key for the model).
    fallback_reason: str | None = None

    @property
    def paid(self) -> bool:
        return self.spec.api != "builtin"

    @property
    def label(self) -> str:
        return f"{self.spec.provider}/{self.spec.model_id}" if self.paid else BUILTIN_LABEL


def check_target(path: str, output: str | None) -> None:
    """Refuse now, before anything is paid for, a write that would be refused at the end."""
    from pitools import store

    if output is not None:
        store.check_new_target(output)
    else:
        store.check_writable(path)


def choose(
    request: SummarizeRequest,
    *,
    session_model: tuple[str, str] | None,
    default_model: DefaultModelSetting | None = None,
) -> SummarizerChoice:
    """The model to call, resolved without running any ``!command`` of the configuration:
    ``--model``, else the session's model, else Pi's ``default_model`` for the session (its
    merged settings, the trusted project's included: :class:`~pitools.core.compaction.settings.
    ResolvedSettings`).

    With no ``--model`` and no credentials for the session's model, the offline builtin
    summarizer is chosen (``fallback_reason`` says why); :func:`authorize` decides whether it
    may be used.
    """
    from pitools.summarize import MissingApiKeyError, builtin_spec, resolve_model

    fallback: str | None = None
    try:
        spec = resolve_model(
            request.model_arg,
            session_model=session_model,
            base_url=request.base_url,
            use_config=request.use_config,
            run_commands=False,
            default_model=default_model,
        )
    except MissingApiKeyError as exc:
        if request.model_arg is not None:
            raise
        fallback = exc.message.split(":")[0]
        spec = builtin_spec()
    return SummarizerChoice(spec, session_model, request, default_model, fallback)


def authorize(choice: SummarizerChoice, *, path: str, what: str, plan: Any = None) -> None:
    """Ask (or refuse) before the first request, then announce the model. ``what`` names the
    entry written ("a compaction entry"); ``plan`` is what the request's ``show_plan`` shows.

    Raises ``PitoolsError`` when the user says no or when a builtin summary would replace a real
    one in place unasked; :class:`ConsentRequiredError` when a paid call needs a yes nobody can give.
    """
    request = choice.request
    confirm = request.confirm
    if not choice.paid and request.model_arg != "builtin" and request.output is None:
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
    if choice.paid and not request.yes:
        if confirm is None:
            raise ConsentRequiredError(
                f"calling the paid model {choice.label} needs --yes when not run from a terminal; nothing was written"
            )
        if request.show_plan is not None:
            request.show_plan(plan)
        if not confirm(f"Summarize with {choice.label} and write {what}?"):
            raise PitoolsError("cancelled; nothing was written")
    if request.announce is not None:
        request.announce(choice)


def build(choice: SummarizerChoice) -> Summarizer:
    """The summarizer for ``choice``, once authorized: now ``!command`` keys and headers may run."""
    from pitools.summarize import build_summarizer, resolve_model

    request, spec = choice.request, choice.spec
    if choice.paid:
        spec = resolve_model(
            request.model_arg,
            session_model=choice.session_model,
            base_url=request.base_url,
            use_config=request.use_config,
            default_model=choice.default_model,
        )
    return build_summarizer(spec, on_retry=request.on_retry, timeout=request.timeout)


def prepare(
    path: str,
    request: SummarizeRequest,
    *,
    session_model: tuple[str, str] | None,
    default_model: DefaultModelSetting | None,
    what: str,
    plan: Any = None,
) -> tuple[str, Summarizer]:
    """All the preconditions in order (see the module), then the summarizer to call and the
    model's label. A library caller's ``request.summarizer`` is returned as is, unasked."""
    check_target(path, request.output)
    if request.summarizer is not None:
        return given_label(request.summarizer), request.summarizer
    choice = choose(request, session_model=session_model, default_model=default_model)
    authorize(choice, path=path, what=what, plan=plan)
    return choice.label, build(choice)


def given_label(summarizer: Summarizer) -> str:
    """The model label of a summarizer a library caller built (the builtin one has no spec)."""
    spec = getattr(summarizer, "spec", None)
    return str(spec.label) if spec is not None else BUILTIN_LABEL
