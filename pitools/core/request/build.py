"""The request body pi-ai 1.6.0 would send for Pi's context at a leaf (``pitools request``).

Pi's chain, each step mirrored here: ``buildSessionContext`` (:func:`replay_context`) →
``convertToLlm`` → ``normalizeContext`` (no ``systemPrompt``/``tools`` of its own: a session's
prompt and tools live in its system messages) → the adapter's ``streamSimple`` with the options
Pi's agent passes: ``sessionId`` = the session id, ``reasoning`` = the thinking level (``off`` =
none) clamped to the model as Pi does when it resumes a session or switches model.

The settings that change the body are the caller's to read (``ops/request.py`` reads Pi's
``settings.json`` files): ``defaultThinkingLevel`` (the level of a session whose branch never set
one) and ``thinkingBudgets`` (tokens per level where the API takes a budget).

Assumptions, all Pi's defaults: an API key (not an OAuth token), no extension hooks
(``before_provider_request``, ``context``), ``blockImages`` off, default cache retention, and the
live agent's tools equal to those the transcript declares (otherwise Pi adds one more system
message with the difference before sending).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from pitools.core.request.common import Note, Notes, RequestError
from pitools.core.request.simple_options import Budgets, StreamOptions, input_estimate
from pitools.core.request.thinking import clamp_thinking_level

if TYPE_CHECKING:
    from pitools.core.js.types import EntryId, JsonValue
    from pitools.core.session.index import EntryIndex

#: APIs whose body pitools builds exactly (each has golden recordings from pi-ai).
SUPPORTED_APIS = ("anthropic-messages", "openai-completions", "openai-responses", "google-generative-ai")
#: pi-ai's default thinking level for a session whose branch never set one (``DEFAULT_THINKING_LEVEL``).
DEFAULT_THINKING_LEVEL = "medium"


@dataclass(slots=True)
class RequestBuild:
    """One built request and how it came about."""

    model: dict[str, Any]
    leaf_id: EntryId
    session_id: JsonValue
    thinking_requested: str
    thinking_level: str  # after clamping to the model
    thinking_source: str  # "option", "session", "settings", "default"
    llm_messages: list[Any]  # Pi's messages before the adapter (convertToLlm + normalizeContext)
    payload: dict[str, Any]
    notes: list[Note] = field(default_factory=list)
    #: pi-ai's input estimate of ``llm_messages`` the body's ``max_tokens`` was clamped with (None:
    #: the model has no window); ``check_request`` reuses it rather than walking the messages again.
    input_tokens: float | None = None


def thinking_from_path(path: Sequence[Any], context_level: Any, default_level: str | None = None) -> tuple[str, str]:
    """The level a resumed session starts with (``sdk.js``): the branch's own, else the
    ``defaultThinkingLevel`` setting, else Pi's default."""
    if any(type(e) is dict and e.get("type") == "thinking_level_change" for e in path):
        return (str(context_level), "session")
    if default_level is not None:
        return (default_level, "settings")
    return (DEFAULT_THINKING_LEVEL, "default")


def check_api(model: dict[str, Any]) -> None:
    api = model.get("api")
    if api not in SUPPORTED_APIS:
        raise RequestError(
            f"{model.get('provider')}/{model.get('id')} uses the {api!s} API; pitools builds exact request "
            f"bodies for {', '.join(SUPPORTED_APIS)} only"
        )


class Payload(NamedTuple):
    """The provider body, and the input estimate its ``max_tokens`` was clamped with (every
    adapter needs one: it is computed once here, and the check reuses it)."""

    body: dict[str, Any]
    input_tokens: float | None


def build_payload(
    model: dict[str, Any],
    llm_messages: list[Any],
    level: str,
    session_id: Any,
    notes: Notes,
    budgets: Budgets | None = None,
    cache_retention: str = "short",
) -> Payload:
    """The adapter step alone: Pi's LLM messages → the provider body (``cache_retention``: pi-ai's
    option; Pi's summaries pass ``none``)."""
    check_api(model)
    from pitools.core.request import anthropic, google, openai_completions, openai_responses

    adapters = {
        "anthropic-messages": anthropic.build,
        "google-generative-ai": google.build,
        "openai-completions": openai_completions.build,
        "openai-responses": openai_responses.build,
    }
    sid = session_id if type(session_id) is str else None
    try:
        tokens = input_estimate(model, llm_messages)
        options = StreamOptions(level, sid, budgets, cache_retention, tokens)
        return Payload(adapters[model["api"]](model, llm_messages, options, notes), tokens)
    except (AttributeError, TypeError, KeyError, IndexError, ValueError) as exc:
        # Pi's own sessions never hold these shapes; a hand-edited or damaged one can. pi-ai reads
        # such fields without checks and throws too, so the request would fail in Pi as well.
        raise RequestError(
            f"a message at this leaf has a shape pi-ai does not expect ({type(exc).__name__}: {exc}); "
            "no body can be built (run `pitools validate` on the file)"
        ) from exc


def _leaf_positions(index: EntryIndex, leaf_id: EntryId) -> tuple[list[int], list[int]]:
    """(the branch Pi reads settings from, the path the context is built from) at ``leaf_id``, as
    positions: only the entries a step needs are read (under the viewer's lean index, the others
    stay in the file)."""
    branch = index.branch_positions(leaf_id)
    return branch, branch if branch else index.session_path_positions(leaf_id)


def branch_model(index: EntryIndex, leaf_id: EntryId) -> str | None:
    """``PROVIDER/ID`` of the model Pi resumes the session with at ``leaf_id`` (``sdk.js`` with
    ``getBranchSelection``): the last ``model_change`` or assistant reply on the branch, whichever
    comes later (replies of an extension's virtual model skipped). None when the branch names none."""
    _branch, path = _leaf_positions(index, leaf_id)
    types = index.types
    for pos in reversed(path):
        if types[pos] not in ("model_change", "message"):
            continue
        entry = index.entry(pos)
        if type(entry) is not dict:
            continue
        if entry.get("type") == "model_change":
            provider, model_id = entry.get("provider"), entry.get("modelId")
        elif entry.get("type") == "message" and type(message := entry.get("message")) is dict:
            # `message?.role === "assistant"`: only an object has a role
            if message.get("role") != "assistant":
                continue
            if message.get("api") == "pi-virtual":
                continue
            provider, model_id = message.get("provider"), message.get("model")
        else:
            continue
        if type(provider) is str and type(model_id) is str and provider and model_id:
            return f"{provider}/{model_id}"
        return None
    return None


def build_request(
    index: EntryIndex,
    leaf_id: EntryId,
    session_id: JsonValue,
    model: dict[str, Any],
    thinking: str | None,
    *,
    default_level: str | None = None,
    budgets: Budgets | None = None,
) -> RequestBuild:
    """Replay the context at ``leaf_id`` and build the body ``model`` would receive
    (``default_level`` and ``budgets``: Pi's ``defaultThinkingLevel`` and ``thinkingBudgets``)."""
    from pitools.core.js.json.parse import gc_paused

    # The replay and the body are acyclic dicts and lists; on a 100 MB session the collector's
    # rescans of them cost a fifth of the build (see gc_paused).
    with gc_paused():
        return _build_request(index, leaf_id, session_id, model, thinking, default_level, budgets)


def _build_request(
    index: EntryIndex,
    leaf_id: EntryId,
    session_id: JsonValue,
    model: dict[str, Any],
    thinking: str | None,
    default_level: str | None,
    budgets: Budgets | None,
) -> RequestBuild:
    from pitools.core.context.build import build_context_entries, build_projection, path_settings
    from pitools.core.context.messages import convert_to_llm

    check_api(model)
    # buildSessionContext alone: no token estimates (Pi computes none before a request, and an
    # estimate can throw on a message the request itself survives).
    branch, session_path = _leaf_positions(index, leaf_id)
    path_ids = [index.ids[p] for p in session_path]
    projection = build_projection(
        [], build_context_entries(index, session_path, path_ids), path_settings(index, session_path)
    )
    llm = convert_to_llm(list(projection.messages))
    if thinking is not None:
        requested, source = thinking, "option"
    else:
        types = index.types
        changes = [index.entry(p) for p in branch if types[p] == "thinking_level_change"]
        requested, source = thinking_from_path(changes, projection.thinking_level, default_level)
    level = clamp_thinking_level(model, requested)
    notes = Notes()
    if level != requested:
        notes.add("thinking-clamped", f"thinking level {requested} is not available on this model: {level} is used")
    payload, tokens = build_payload(model, llm, level, session_id, notes, budgets)
    return RequestBuild(
        model=model,
        leaf_id=leaf_id,
        session_id=session_id,
        thinking_requested=requested,
        thinking_level=level,
        thinking_source=source,
        llm_messages=llm,
        payload=payload,
        notes=notes.items,
        input_tokens=tokens,
    )
