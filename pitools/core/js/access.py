"""Optional chaining over parsed JSON values: ``obj?.[key]`` and the reads Pi makes on every entry.

Session data is whatever a file held, so Pi's ``entry?.id`` or ``message?.content`` may meet a
string, a number or null. These read a key of a JSON object and give :data:`UNDEFINED` for
anything else (absent key, non-object), the value JavaScript would see; they never raise. For a
plain property read that throws on null/undefined as V8 does, use :func:`pitools.core.js.ops.prop`.

They sit inside per-entry loops, so each stays one type check and one ``dict.get``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pitools.core.js.value import UNDEFINED

if TYPE_CHECKING:
    from pitools.core.js.types import JsValue

__all__ = ["entry_id", "entry_type", "get", "parent_id"]


def get(obj: Any, key: str) -> Any:
    """``obj?.[key]``: the member of a JSON object, UNDEFINED when absent or not an object."""
    return obj.get(key, UNDEFINED) if type(obj) is dict else UNDEFINED


def entry_type(entry: Any) -> JsValue:
    """``entry?.type``."""
    return entry.get("type", UNDEFINED) if type(entry) is dict else UNDEFINED


def entry_id(entry: Any) -> JsValue:
    """``entry?.id``."""
    return entry.get("id", UNDEFINED) if type(entry) is dict else UNDEFINED


def parent_id(entry: Any) -> JsValue:
    """``entry?.parentId``."""
    return entry.get("parentId", UNDEFINED) if type(entry) is dict else UNDEFINED
