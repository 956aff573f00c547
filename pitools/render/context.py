"""Render a :class:`~pitools.core.context.build.ContextReplay` as JSON, rich text or Markdown.

The JSON document has one writer, :func:`context_json_chunks` (the CLI streams it; tests parse
it); ``tests/oracles/context_document.py`` keeps the plain one-dict form it is checked against.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from pitools import PI_REFERENCE_VERSION
from pitools.core.context.build import ContextReplay
from pitools.core.js.access import entry_id, entry_type
from pitools.core.js.types import JsonObject, JsValue
from pitools.core.js.value import UNDEFINED
from pitools.core.session.load import AnySession
from pitools.render.preview import clip, entry_preview, entry_tag, message_preview

if TYPE_CHECKING:
    from rich.console import Console


def _head(replay: ContextReplay) -> dict[str, Any]:
    """The members before the projection: the Pi release, the leaf, the path, the context entries."""
    return {
        "pi": PI_REFERENCE_VERSION,
        "leafId": None if replay.leaf_id is UNDEFINED else replay.leaf_id,
        "path": replay.path_ids if replay.path_ids is not None else [entry_id(e) for e in replay.path],
        "contextEntries": [entry_id(e) for e in replay.context_entries],
    }


def _tail(replay: ContextReplay, counts: list[int] | None) -> dict[str, Any]:
    """The members after the messages: thinking level, model, token estimates (and counts)."""
    p = replay.projection
    tail: dict[str, Any] = {
        "thinkingLevel": p.thinking_level,
        "model": p.model,
        "tokenEstimates": replay.shown_estimates,
        "estimatedContextTokens": _estimate_json(replay),
    }
    if counts is not None:
        tail["tiktokenCounts"] = counts
    errors = pi_errors(replay)
    if errors:
        tail["piErrors"] = errors
    return tail


def _estimate_json(replay: ContextReplay) -> JsonObject:
    if replay.estimate_error is not None:
        return {"tokens": None, "usageTokens": None, "trailingTokens": None, "lastUsageIndex": None}
    return replay.estimate.to_json()


def pi_errors(replay: ContextReplay) -> dict[str, str]:
    """What Pi 1.6.0 throws at this leaf while it still builds the context, by the figure that fails:
    ``tokenEstimates`` (estimateTokens on a message) and ``estimatedContextTokens``."""
    errors = {}
    if replay.estimates_error is not None:
        errors["tokenEstimates"] = replay.estimates_error.message
    if replay.estimate_error is not None:
        errors["estimatedContextTokens"] = replay.estimate_error.message
    return errors


def context_json_chunks(
    replay: ContextReplay, counts: list[int] | None = None, *, consume: bool = False
) -> Iterator[bytes]:
    """The ``pitools context --format json`` document (schemas/output/context.schema.json) and a
    newline, in pieces, each message serialized once: every message appears twice (under its
    projected entry and in the flat ``messages`` list), and its bytes are reused for the second.

    With ``consume=True`` the replay gives up its entries and messages as they are written (a
    message is released once its bytes exist), so the bytes replace the parsed objects rather
    than add to them; the replay is unusable afterwards. Parsed values held elsewhere (the
    loaded session) must be released by the caller for that to free memory.
    """
    from pitools.core.js.json.encode import to_json_bytes

    p = replay.projection
    head = to_json_bytes(_head(replay))
    tail = _tail(replay, counts)
    shape = [(_json_value(pe.source_id), _json_value(pe.source_type), len(pe.messages)) for pe in p.entries]
    messages = p.messages
    if consume:
        replay.context_entries = []
        replay.path = []
        for pe in p.entries:
            pe.source = pe.edit = None
            pe.messages = []
        p.entries = []
        p.messages = []
    yield head[:-1] + b',"projection":['
    # Each projected entry's piece is kept: the bytes between its "messages":[ and ]} are
    # exactly its part of the flat list (a joined piece is also compact, where orjson's own
    # output carries the slack of its buffer: 4 KB for a short string).
    inners: list[memoryview] = []
    at = 0
    for n, (source_id, source_type, count) in enumerate(shape):
        piece = [b"," if n else b"", b"{"]
        if source_id is not None:
            piece += [b'"sourceId":', source_id, b","]
        if source_type is not None:
            piece += [b'"sourceType":', source_type, b","]
        piece.append(b'"messages":[')
        start = sum(len(x) for x in piece)
        for i in range(at, at + count):
            if i > at:
                piece.append(b",")
            piece.append(to_json_bytes(messages[i]))
            if consume:
                messages[i] = None
        piece.append(b"]}")
        chunk = b"".join(piece)
        yield chunk
        if count:
            inners.append(memoryview(chunk)[start:-2])
        at += count
    yield b'],"messages":['
    for i in range(0, len(inners), 256):
        yield (b"," if i else b"") + b",".join(inners[i : i + 256])
    yield b"]," + to_json_bytes(tail)[1:] + b"\n"


def _json_value(value: JsValue) -> bytes | None:
    """``value`` as an object member's JSON bytes, None when JSON.stringify leaves the member out."""
    import orjson

    from pitools.core.js.json.encode import to_json_bytes

    if value is UNDEFINED:
        return None
    if type(value) is str:
        try:
            # JSON.stringify's bytes for any string orjson accepts (copied: see inners above).
            return bytes(memoryview(orjson.dumps(value)))
        except TypeError:  # a lone surrogate: the exact path escapes it as JavaScript does
            pass
    return to_json_bytes(value)


def _model_text(model: Any) -> str:
    """``provider/modelId``, or "unknown model" when the session does not name one."""
    from pitools.render.vocab import model_name

    if not isinstance(model, dict):
        return model_name(None, None)
    return model_name(model.get("provider"), model.get("modelId"))


def _model_phrase(model: Any) -> str:
    """``model openai/gpt-5``, or ``unknown model``."""
    from pitools.render.vocab import UNKNOWN_MODEL

    text = _model_text(model)
    return text if text == UNKNOWN_MODEL else f"model {text}"


def _estimate_text(replay: ContextReplay) -> str:
    from pitools.render.vocab import n

    if replay.estimate_error is not None:
        return f"no token estimate (Pi 1.6.0 throws in estimateContextTokens: {replay.estimate_error.message})"
    e = replay.estimate
    if e.last_usage_index is None:
        return f"~{n(e.tokens)} tokens (chars/4 estimate of every message)"
    return (
        f"~{n(e.tokens)} tokens (usage of message #{n(e.last_usage_index)}: {n(e.usage_tokens)}"
        f" + {n(e.trailing_tokens)} estimated after it)"
    )


def _estimates_note(replay: ContextReplay) -> str:
    """The line saying which per-message estimate Pi throws on (shown as ~?)."""
    from pitools.render.vocab import plural

    assert replay.estimates_error is not None
    failing = [str(i) for i, v in enumerate(replay.shown_estimates) if v is None]
    return (
        f"Pi 1.6.0 throws estimating the tokens of {plural(len(failing), 'message')} (#{', #'.join(failing)}: "
        f"{replay.estimates_error.message}): it still builds this context, but /compact and a branch summary "
        "that include it fail"
    )


def render_context(
    console: Console, replay: ContextReplay, session: AnySession, counts: list[int] | None = None
) -> None:
    """Human view: a header line, then one line per projected entry and message.

    Written through the fast line writer (one rich ``print`` per line took most of the run on
    big sessions); every piece of session text is made safe here.
    """
    from pitools.render.safe import safe_text
    from pitools.render.tree import LineWriter, pack
    from pitools.render.vocab import plural

    def safe(text: str) -> str:
        return safe_text(text, one_line=True)

    out = LineWriter(console)
    p = replay.projection
    leaf = "(last entry: no id)" if replay.leaf_id is UNDEFINED else str(replay.leaf_id)
    header = [
        [("Context at ", "bold"), (safe(leaf), "bold cyan")],
        [(safe(_model_phrase(p.model)), "")],
        [(safe(f"thinking {p.thinking_level}"), "")],
        [(_estimate_text(replay), "yellow")],
    ]
    for line in pack(header, out.width):  # on a narrow terminal, more lines rather than a cut
        out.line(line)
    if replay.estimates_error is not None:
        out.line([(safe(_estimates_note(replay)), "yellow")])
    out.line(
        [
            (
                f"{plural(len(replay.path), 'entry', 'entries')} on the path, {len(replay.context_entries):,} in "
                f"context, {plural(len(p.messages), 'message')}",
                "dim",
            )
        ]
    )
    n = 0
    for pe in p.entries:
        sid = safe("(no id)" if pe.source_id is UNDEFINED else str(pe.source_id))
        if not pe.messages:
            reason = {
                "edited-out": f"omitted by context_edit {entry_id(pe.edit)}",
                "older-compaction": "older compaction inside the kept range: contributes nothing",
            }.get(pe.omitted or "", "no model-visible content")
            out.line(
                [
                    ("   ", ""),
                    (f"{sid:<10} ", "dim"),
                    (f"{safe(entry_tag(pe.source)):<18}", "dim"),
                    (safe(f"— {reason}: {clip(entry_preview(pe.source), 80)}"), "dim italic"),
                ]
            )
            continue
        for m in pe.messages:
            role = m.get("role") if isinstance(m, dict) else "?"
            tokens = replay.shown_estimates[n] if n < len(replay.shown_estimates) else "?"
            tokens = "?" if tokens is None else tokens
            extra = f"/{counts[n]}" if counts is not None and n < len(counts) else ""
            pieces = [
                (f"{n:>3} ", ""),
                (f"{sid:<10} ", "cyan"),
                (f"{safe(str(role)):<18}", _ROLE_STYLE.get(str(role), "")),
                (f"{'~' + (f'{tokens:,}' if isinstance(tokens, int) else str(tokens)) + extra:>8} ", "yellow"),
            ]
            if pe.edit is not None:
                pieces.append(("[edited] ", "magenta"))
            pieces.append((safe(message_preview(m, 160)), ""))
            out.line(pieces)
            n += 1
    out.flush()


_ROLE_STYLE = {
    "user": "bold green",
    "assistant": "bold blue",
    "toolResult": "blue",
    "system": "bold magenta",
    "compactionSummary": "bold yellow",
    "branchSummary": "yellow",
    "custom": "magenta",
    "bashExecution": "green",
}


def context_markdown(replay: ContextReplay, session: AnySession) -> str:
    """The context as a readable Markdown transcript."""
    from pitools.render.markdown import message_markdown
    from pitools.render.mdsafe import code, inline

    p = replay.projection
    leaf = "(last entry)" if replay.leaf_id is UNDEFINED else str(replay.leaf_id)
    lines = [
        f"# Pi context at {code(leaf)}",
        "",
        f"- Session: {code(str(session.header.get('id')) if session.header else '?')}",
        f"- Model: {code(_model_text(p.model))}, thinking level: {code(str(p.thinking_level))}",
        f"- Estimated context: {_estimate_text(replay)}",
        *([f"- {inline(_estimates_note(replay))}"] if replay.estimates_error is not None else []),
        "",
    ]
    n = 0
    for pe in p.entries:
        for m in pe.messages:
            tokens = replay.shown_estimates[n]
            lines.append(message_markdown(m, n, pe.source_id, entry_type(pe.source), "?" if tokens is None else tokens))
            n += 1
    return "\n".join(lines) + "\n"
