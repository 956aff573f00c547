"""Static names for the values a session file holds once parsed (issue 38, item 9).

These are type aliases only: nothing here runs per entry, and no value is checked or converted.

* :data:`JsonValue` is what the one JSON codec (:mod:`pitools.core.js.json`, orjson underneath)
  returns for a line: ``None`` (JS ``null``), ``bool``, ``int``, ``float``, ``str``, lists and
  string-keyed dicts of the same, to any depth.  A float may be infinite and a string may hold a
  lone surrogate when the fallback parser read the line; neither changes the static type.
* :data:`JsValue` adds JS ``undefined`` (:data:`pitools.core.js.value.UNDEFINED`): what a property
  read such as ``entry.get("message", UNDEFINED)`` yields.  Parsed data never holds it.
* :data:`JsonObject` is one parsed object, :data:`JsonArray` one parsed array.  :data:`Entry` (a
  session line: header or entry) and :data:`Message` (an ``AgentMessage``: the ``message`` of a
  message entry, or one built from a summary) are the same shape under the names Pi uses.
  They name the shape Pi's own types declare.  A broken file can put another value in that place
  (Pi keeps a truthy non-object line as an entry; a message can be ``null`` or a string), so code
  that may meet one still tests ``type(x) is dict`` before reading into it, as it does today
  (:func:`pitools.core.session.loaded.entry_type` does): the alias documents the usual shape, it
  does not promise it.  Inside an entry every value is a :data:`JsonValue`, so reading one level
  deeper (``entry["message"]["role"]``) needs that test, which is where broken files crash.
* :data:`EntryId` is an entry's ``id`` or ``parentId`` as the file spells it: Pi compares them
  with ``===`` whatever their JSON type, so they stay a :data:`JsValue`, not ``str``, and an
  entry without one has ``UNDEFINED`` (a leaf with no id, a path id list).

A function that only passes these values on takes and returns them under these names; one that
reads into them narrows first (``type(v) is dict``: mypy narrows on it, and it is the check the
JavaScript semantics need anyway).  Read-only parameters may take ``Mapping[str, JsonValue]``,
which also accepts a ``dict`` whose values are typed more narrowly.
"""

from __future__ import annotations

from typing import TypeAlias

from pitools.core.js.value import _Undefined

__all__ = ["Entry", "EntryId", "JsValue", "JsonArray", "JsonObject", "JsonValue", "Message", "Undefined"]

JsonValue: TypeAlias = "bool | int | float | str | list[JsonValue] | dict[str, JsonValue] | None"
JsonObject: TypeAlias = "dict[str, JsonValue]"
JsonArray: TypeAlias = "list[JsonValue]"

#: The type of :data:`pitools.core.js.value.UNDEFINED`.
Undefined: TypeAlias = _Undefined
JsValue: TypeAlias = "JsonValue | Undefined"

Entry: TypeAlias = JsonObject
Message: TypeAlias = JsonObject
EntryId: TypeAlias = JsValue
