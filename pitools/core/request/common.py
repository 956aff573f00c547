"""What the request builder's modules share: its error, the notes of what changed on the way to
the wire, a model's ``compat`` flags and two small formatting rules.

The pi-ai modules are mirrored one file each beside this one: ``transform_messages``,
``transcript``, ``text``, ``sanitize_unicode``, ``estimate``, ``simple_options``, ``thinking``
(from ``models.ts``) and ``constrained_sampling``; the adapters (``anthropic``,
``openai_completions``, ``openai_responses``, ``google``) build the bodies from them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pitools.core.js.json.encode import js_stringify
from pitools.core.js.ops import to_string
from pitools.core.js.value import UNDEFINED
from pitools.errors import PitoolsError


def stringify_member(value: Any) -> Any:
    """``JSON.stringify(value)`` as a member of an object pi-ai builds: ``undefined`` (a tool call
    stored without ``arguments``) stays undefined, so the key is left out of the body, not null."""
    text = js_stringify(value)
    return UNDEFINED if text is None else text


class RequestError(PitoolsError):
    """The request cannot be built (unsupported API, unknown model, a context pi-ai would throw on)."""


@dataclass(slots=True)
class Note:
    """One transformation pi-ai applied on the way to the wire (for the human view and JSON notes)."""

    code: str
    message: str
    index: int | None = None  # index into Pi's LLM message list, when it concerns one message


@dataclass(slots=True)
class Notes:
    items: list[Note] = field(default_factory=list)

    def add(self, code: str, message: str, index: int | None = None) -> None:
        self.items.append(Note(code, message, index))


def compat(model: dict[str, Any]) -> dict[str, Any]:
    c = model.get("compat")
    return c if type(c) is dict else {}


def compat_flags(model: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    """The model's ``compat`` flags over ``defaults``: pi-ai's ``compat.x ?? default``, a key at a time."""
    c = compat(model)
    return {name: default if (v := c.get(name)) is None else v for name, default in defaults.items()}


def short_repr(value: Any) -> str:
    """A tool call id or name quoted for a note or an error, cut to 24 characters."""
    text = to_string(value)
    return repr(text if len(text) <= 24 else text[:21] + "...")
