"""pi-ai's transcript helpers the adapters call (``src/utils/transcript.ts``, ``dist/utils/transcript.js``).

``getCurrentSystemMessage`` and ``getCurrentTools`` are shared with Pi's context code and live in
:mod:`pitools.core.context.messages`; this module adds ``resolveTranscript`` (which keeps or folds
later system messages) and the initial system message.
"""

from __future__ import annotations

from typing import Any

from pitools.core.context.messages import get_current_system_message, get_current_tools
from pitools.core.js.access import get
from pitools.core.request.common import Notes


def resolve_transcript(messages: list[Any], supports_mid_convo_system: bool, notes: Notes | None = None) -> list[Any]:
    """pi-ai ``resolveTranscript``: keep later system messages, or fold them all into the first."""
    if supports_mid_convo_system:
        return messages
    systems = 0
    rest: list[Any] = []
    for m in messages:  # one pass for both (``get`` inlined: this runs over the whole transcript)
        if type(m) is dict and m.get("role") == "system":
            systems += 1
        else:
            rest.append(m)
    head = get_current_system_message(messages)
    if notes is not None and systems > 1:
        notes.add(
            "system-collapsed",
            f"{systems} system messages folded into one leading system prompt (the API has no "
            "mid-conversation system messages)",
        )
    return [head, *rest] if head else rest


def initial_system_message(messages: list[Any]) -> Any:
    return messages[0] if messages and get(messages[0], "role") == "system" else None


def current_tools(messages: list[Any]) -> list[Any]:
    return get_current_tools(messages)
