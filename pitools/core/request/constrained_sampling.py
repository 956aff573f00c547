"""pi-ai's constrained sampling for tools (``src/api/constrained-sampling.ts``, ``dist/api/constrained-sampling.js``).

Whether a tool goes out in strict JSON-schema mode and with which schema
(``resolveJsonSchemaStrictSampling``, ``makeStrictJsonSchema``, ``getJsonSchemaToolParameters``);
grammar-constrained tools, which pitools refuses to replay.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from pitools.core.js.access import get
from pitools.core.js.value import UNDEFINED, js_keys
from pitools.core.request.common import RequestError, short_repr


def refuse_grammar_tools(tools: list[Any], grammar_tools: Any) -> None:
    """Raise :class:`RequestError` for a grammar-constrained tool (OpenAI's custom tools) when the
    model takes them (``supportsOpenAIGrammarTools``): pitools refuses them rather than guess."""
    if not grammar_tools:
        return
    for tool in tools:
        config = get(tool, "constrainedSampling")
        if type(config) is dict and config.get("type") == "grammar":
            raise RequestError(
                f"tool {get(tool, 'name')!r} uses grammar-constrained sampling, which pitools does not replay"
            )


class _Unsupported(Exception):
    pass


_UNSUPPORTED_STRICT_KEYS = (
    "$ref", "$defs", "definitions", "allOf", "oneOf", "patternProperties", "dependentSchemas",
    "dependencies", "unevaluatedProperties", "propertyNames", "contains", "prefixItems", "not", "if",
    "then", "else",
)  # fmt: skip


def _structured(schema: Any) -> bool:
    if type(schema) is not dict:
        return False
    t = schema.get("type")
    types = [t] if type(t) is str else (t if type(t) is list else [])
    return "object" in types or "array" in types or "properties" in schema or "items" in schema


def _allows_null(schema: Any) -> bool:
    if type(schema) is not dict:
        return False
    t = schema.get("type")
    if t == "null" or (type(t) is list and "null" in t):
        return True
    if ("const" in schema and schema["const"] is None) or (type(schema.get("enum")) is list and None in schema["enum"]):
        return True
    any_of = schema.get("anyOf")
    return type(any_of) is list and any(_allows_null(v) for v in any_of)


def _make_strict(schema: Any, unsupported: Callable[[str, Any], bool] | None) -> None:
    if type(schema) is not dict:
        raise _Unsupported
    for key in _UNSUPPORTED_STRICT_KEYS:
        if key in schema:
            raise _Unsupported
    if unsupported is not None:
        for key in js_keys(schema):
            if unsupported(key, schema[key]):
                raise _Unsupported
    if "type" not in schema and "anyOf" not in schema and "enum" not in schema:
        raise _Unsupported
    if "anyOf" in schema:
        any_of = schema["anyOf"]
        if type(any_of) is not list or not any_of:
            raise _Unsupported
        for variant in any_of:
            if _structured(variant):
                raise _Unsupported
            _make_strict(variant, unsupported)
    if "items" in schema:
        if type(schema["items"]) is list:
            raise _Unsupported
        _make_strict(schema["items"], unsupported)
    is_object = schema.get("type") == "object"
    if "properties" in schema and not is_object:
        raise _Unsupported
    if not is_object:
        return
    if "additionalProperties" in schema and schema["additionalProperties"] is not False:
        raise _Unsupported
    if "properties" in schema and type(schema["properties"]) is not dict:
        raise _Unsupported
    required = schema.get("required", UNDEFINED)
    if required is not UNDEFINED and (type(required) is not list or any(type(k) is not str for k in required)):
        raise _Unsupported
    properties = schema.get("properties") or {}
    names = js_keys(properties)
    req = set(required) if type(required) is list else set()
    if any(k not in names for k in req):
        raise _Unsupported
    for key in names:
        prop = properties[key]
        _make_strict(prop, unsupported)
        if key not in req and not _allows_null(prop):
            properties[key] = {"anyOf": [prop, {"type": "null"}]}
    schema["required"] = names
    schema["additionalProperties"] = False


def make_strict_json_schema(schema: Any, unsupported: Callable[[str, Any], bool] | None = None) -> Any:
    cloned = copy.deepcopy(schema)
    if type(cloned) is not dict:
        raise _Unsupported
    _make_strict(cloned, unsupported)
    if cloned.get("type") != "object":
        raise _Unsupported
    return cloned


def resolve_strict(
    tool: Any, supports_strict: bool, unsupported: Callable[[str, Any], bool] | None = None
) -> bool | None:
    """pi-ai ``resolveJsonSchemaStrictSampling``: True when the tool goes out in strict mode."""
    config = get(tool, "constrainedSampling")
    if type(config) is not dict or config.get("type") != "json_schema":
        return None
    if supports_strict:
        try:
            make_strict_json_schema(get(tool, "parameters"), unsupported)
            return True
        except _Unsupported:
            if config.get("strict") != "require":
                return None
            raise RequestError(
                f"tool {short_repr(get(tool, 'name'))} requires strict JSON-schema sampling its schema cannot "
                "satisfy; pi-ai refuses the request"
            ) from None
    if config.get("strict") == "require":
        raise RequestError(
            f"tool {short_repr(get(tool, 'name'))} requires strict tools, which the model does not support"
        )
    return None


def tool_parameters(tool: Any, strict: bool | None) -> Any:
    return make_strict_json_schema(get(tool, "parameters")) if strict is True else get(tool, "parameters")
