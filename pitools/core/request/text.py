"""pi-ai's system-message text helpers (``src/utils/text.ts``, ``dist/utils/text.js``).

``contentText`` itself is :func:`pitools.core.context.messages.content_text` (Pi's context uses it
too); the two functions here give a system message's text as the adapters send it.
"""

from __future__ import annotations

from typing import Any

from pitools.core.context.messages import content_text
from pitools.core.js.access import get
from pitools.core.js.value import js_keys


def system_message_text(message: Any) -> str:
    """pi-ai ``getSystemMessageText``: content followed by the sections, blank-line separated."""
    parts = [content_text(get(message, "content"))]
    sections = get(message, "sections")
    if type(sections) is dict:
        for key in js_keys(sections):
            if sections[key] is not None:
                parts.append(str(sections[key]))
    return "\n\n".join(p for p in parts if p)


def render_system_message_update(message: Any) -> str:
    """pi-ai ``renderSystemMessageUpdate``: a later system message as a request-time text."""
    parts: list[str] = []
    text = content_text(get(message, "content"))
    if text:
        parts.append(text)
    sections = get(message, "sections")
    if type(sections) is dict:
        for name in js_keys(sections):
            value = sections[name]
            if value is None:
                parts.append(f'Removed system prompt section "{name}".')
            else:
                parts.append(f'Updated system prompt section "{name}":\n\n{value}')
    return "\n\n".join(parts)
