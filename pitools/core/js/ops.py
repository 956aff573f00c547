"""JavaScript operators over parsed JSON values, as Pi's code applies them to session data.

Pi reads session files without validating them, so odd values flow into property reads,
``for...of`` loops, ``.length`` and template literals. These helpers reproduce what V8 does
with them, including the ``TypeError`` Pi would throw (raised here as :class:`PiCrashError`
so callers report it instead of crashing).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from pitools.core.js.value import JS_WHITESPACE, UNDEFINED, js_number_to_string, js_to_number, js_truthy, utf16_len
from pitools.errors import PiCrashError

NAN = math.nan


def type_error(message: str) -> PiCrashError:
    return PiCrashError(f"TypeError: {message}")


def prop(obj: Any, key: str) -> Any:
    """``obj[key]``: UNDEFINED when absent; TypeError on null/undefined like V8."""
    t = type(obj)
    if t is dict:
        return obj.get(key, UNDEFINED)
    if obj is None or obj is UNDEFINED:
        kind = "null" if obj is None else "undefined"
        raise type_error(f"Cannot read properties of {kind} (reading '{key}')")
    if key == "length":
        if t is str:
            return utf16_len(obj)
        if t is list:
            return len(obj)
    return UNDEFINED


def length(obj: Any) -> Any:
    """``obj.length`` (a number, or UNDEFINED for values without one)."""
    t = type(obj)
    if t is str:
        return utf16_len(obj)
    return prop(obj, "length")


def iterate(obj: Any, what: str) -> Iterator[Any]:
    """``for (const x of obj)``: arrays and strings iterate; anything else is a TypeError."""
    t = type(obj)
    if t is list:
        return iter(obj)
    if t is str:
        return iter(obj)
    raise type_error(f"{what} is not iterable")


#: JavaScript truthiness (``!!v``); one implementation, in :mod:`pitools.core.js.value`.
truthy = js_truthy


def nullish(v: Any) -> bool:
    """``v == null`` (null or undefined)."""
    return v is None or v is UNDEFINED


def is_blank(text: Any) -> bool:
    """``text.trim().length === 0`` for a string (False for anything else). JavaScript's
    whitespace, not Python's: U+001C-U+001F and U+0085 are text to ``trim``."""
    return type(text) is str and not text.strip(JS_WHITESPACE)


def to_string(v: Any) -> str:
    """String conversion as a template literal or ``Array.prototype.join`` element would do it."""
    t = type(v)
    if t is str:
        text: str = v
        return text
    if v is None:
        return "null"
    if v is UNDEFINED:
        return "undefined"
    if t is bool:
        return "true" if v else "false"
    if t is int or t is float:
        return js_number_to_string(v)
    if t is list:
        return ",".join("" if nullish(x) else to_string(x) for x in v)
    return "[object Object]"


def join(items: list[Any], sep: str) -> str:
    """``Array.prototype.join``: null and undefined become empty strings."""
    return sep.join("" if nullish(x) else to_string(x) for x in items)


def add(a: Any, b: Any) -> Any:
    """Numeric ``a + b`` for the number-ish values usage fields hold (NaN otherwise)."""
    ta, tb = type(a), type(b)
    if (ta is int or ta is float) and (tb is int or tb is float):
        return a + b
    if ta is str or tb is str:
        return to_string(a) + to_string(b)
    return to_number(a) + to_number(b)


def to_number(v: Any) -> float | int:
    t = type(v)
    if t is int or t is float:
        number: float | int = v
        return number
    if v is None or v is False:
        return 0
    if v is True:
        return 1
    if t is str or t is list:
        return js_to_number(v)
    return NAN


def gt_zero(v: Any) -> bool:
    """``v > 0`` with JavaScript coercion."""
    n = to_number(v)
    return not (isinstance(n, float) and math.isnan(n)) and n > 0


def ceil_div4(chars: Any) -> Any:
    """``Math.ceil(chars / 4)``: an int, or NaN when chars is not a number."""
    if type(chars) is int:
        return -(-chars // 4)
    if type(chars) is float:
        if math.isnan(chars) or math.isinf(chars):
            return chars
        return math.ceil(chars / 4)
    return NAN


def strict_equal(a: Any, b: Any) -> bool:
    """``a === b`` for JSON values (objects by identity)."""
    ta, tb = type(a), type(b)
    if ta is str and tb is str:
        return bool(a == b)
    if ta in (dict, list) or tb in (dict, list):
        return a is b
    if ta is bool or tb is bool:
        return ta is tb and a == b
    if a is UNDEFINED or b is UNDEFINED or a is None or b is None:
        return a is b
    if ta in (int, float) and tb in (int, float):
        return bool(a == b)
    return False
