"""Exact JavaScript (V8 / Node 20) value semantics for Python values parsed from JSON.

Pi is written in TypeScript and runs on Node; pitools reproduces its session logic in Python.  The values
pitools handles come from ``orjson.loads`` (or ``json.loads`` as a fallback, so strings may hold lone
surrogates and floats may be infinite), and wherever Pi's logic depends on a JavaScript primitive --
``s.length``, truthiness, ``Object.keys`` order, ``Number#toString`` -- the helpers here give
byte-identical answers (``new Date(x).getTime()`` is in :mod:`pitools.core.js.date`, ``JSON.stringify``
and ``JSON.parse`` in :mod:`pitools.core.js.json`).

Every behaviour is pinned down by fixtures recorded from node itself
(``scripts/record_jsvalue_fixtures.mjs`` -> ``tests/unit/fixtures/jsvalue/cases.json``).

Conventions:

* JS ``null`` is ``None``; JS ``undefined`` is the :data:`UNDEFINED` sentinel.
* A JS string is a sequence of UTF-16 code units.  A Python ``str`` maps onto it by encoding with
  ``utf-16-le`` / ``surrogatepass``: a non-BMP character is two units, a lone surrogate one.
* The time zone is UTC (Pi's reference oracle forces ``TZ=UTC``), so "local time" is UTC.
"""

from __future__ import annotations

import math
import re
import sys
from array import array
from typing import Any, Final

from pitools.errors import PiCrashError

__all__ = [
    "JS_WHITESPACE",
    "UNDEFINED",
    "JSTypeError",
    "is_array_index",
    "is_undefined",
    "js_keys",
    "js_number_to_string",
    "js_to_number",
    "js_to_string",
    "js_truthy",
    "slice_head_utf16",
    "slice_tail_utf16",
    "utf16_len",
]


# --------------------------------------------------------------------------------------------------------
# undefined


class _Undefined:
    """The type of :data:`UNDEFINED`, JS ``undefined``: a falsy singleton whose repr is ``undefined``."""

    __slots__ = ()
    _instance: _Undefined | None = None

    def __new__(cls) -> _Undefined:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "undefined"

    def __reduce__(self) -> str:
        # Pickles (and copies) as the module-level singleton.
        return "UNDEFINED"

    def __copy__(self) -> _Undefined:
        return self

    def __deepcopy__(self, memo: object) -> _Undefined:
        return self


UNDEFINED: Final[_Undefined] = _Undefined()
"""JS ``undefined`` (e.g. a missing property).  Falsy; ``repr`` is ``undefined``."""


def is_undefined(v: object) -> bool:
    """``v === undefined``."""
    return v is UNDEFINED


# --------------------------------------------------------------------------------------------------------
# UTF-16 strings

_LITTLE_ENDIAN: Final = sys.byteorder == "little"


def _bmp_size_limit() -> int | None:
    """The ``sys.getsizeof`` below which a non-ASCII ``str`` of length 0 holds no character
    beyond U+FFFF (CPython stores a string 1, 2 or 4 bytes a character, the widest it needs);
    None where that layout does not hold, which turns :func:`_bmp_only` off."""
    try:
        header = sys.getsizeof("\u0100") - 4  # 2 bytes a character, one character + the terminator
        samples = {"\u00e9": 1, "\u0100\u0100": 2, "\U0001f600": 4, "\U0001f600x\u00e9": 4}
        for text, width in samples.items():
            if sys.getsizeof(text) != header + width * (len(text) + 1):
                return None
        return header
    except TypeError:  # pragma: no cover - an implementation without getsizeof
        return None


_BMP_HEADER: Final = _bmp_size_limit()


def _bmp_only(s: str) -> bool:
    """True when the (non-ASCII) string ``s`` certainly has no character beyond U+FFFF, so its
    UTF-16 units are its characters; O(1). A 4-bytes-a-character string is never below the
    bound (a cached UTF-8 copy only adds to the size), so False is the only possible error."""
    return _BMP_HEADER is not None and sys.getsizeof(s) < _BMP_HEADER + 4 * (len(s) + 1)


def utf16_len(s: str) -> int:
    """JS ``s.length``: the number of UTF-16 code units (non-BMP character = 2, lone surrogate = 1)."""
    if s.isascii() or _bmp_only(s):
        return len(s)
    return len(s.encode("utf-16-le", "surrogatepass")) >> 1


def _code_units(s: str) -> array[int]:
    """The UTF-16 code units of ``s`` (what V8 sees), as an ``array('H')``."""
    units = array("H", s.encode("utf-16-le", "surrogatepass"))
    if not _LITTLE_ENDIAN:  # pragma: no cover - big-endian hosts only
        units.byteswap()
    return units


def _is_high(u: int) -> bool:
    return 0xD800 <= u <= 0xDBFF


def _is_low(u: int) -> bool:
    return 0xDC00 <= u <= 0xDFFF


def slice_head_utf16(text: str, max_units: int) -> str:
    """Pi's ``sliceHead(text, maxUnits)`` (``core/tools/truncate.js``).

    At most the first ``max_units`` UTF-16 code units of ``text`` (``text.slice(0, max(0, maxUnits))``),
    except that a cut between a high surrogate and the low surrogate after it drops the high surrogate
    too (``text.slice(0, end - 1)``), so a character is never split.
    """
    end = max_units if max_units > 0 else 0
    if text.isascii():
        return text[:end]
    if _bmp_only(text):
        # Units are characters; only a pair of lone surrogates held as two characters can be split.
        if 0 < end < len(text) and _is_high(ord(text[end - 1])) and _is_low(ord(text[end])):
            return text[: end - 1]
        return text[:end]
    # The first `end` units lie within the first `end` characters; one more character tells us what the
    # unit right after the cut is.
    head = text[: end + 1]
    raw = head.encode("utf-16-le", "surrogatepass")
    cut = end << 1
    if len(raw) <= cut:
        # `head` holds at most `end` units, so it cannot be a strict prefix of `text`: it is all of it.
        return head
    if end == 0:
        return ""
    if len(raw) == len(head) << 1:
        # No non-BMP character: units and characters coincide.
        if _is_high(ord(head[end - 1])) and _is_low(ord(head[end])):
            return head[: end - 1]
        return head[:end]
    hi = raw[cut - 2] | (raw[cut - 1] << 8)
    lo = raw[cut] | (raw[cut + 1] << 8)
    if _is_high(hi) and _is_low(lo):
        cut -= 2
    return raw[:cut].decode("utf-16-le", "surrogatepass")


def slice_tail_utf16(text: str, max_units: int) -> str:
    """Pi's ``sliceTail(text, maxUnits)`` (``core/tools/truncate.js``).

    At most the last ``max_units`` UTF-16 code units of ``text`` (``""`` when ``maxUnits <= 0``), except
    that a cut between a high and a low surrogate drops the low surrogate too (``text.slice(start + 1)``).
    """
    if max_units <= 0:
        return ""
    if text.isascii():
        return text[-max_units:]
    tail = text[-(max_units + 1) :]
    raw = tail.encode("utf-16-le", "surrogatepass")
    n = len(raw)
    keep = max_units << 1
    if n <= keep:
        return tail
    start = n - keep  # byte offset of JS `start` inside `raw`; the unit before it exists
    lo = raw[start] | (raw[start + 1] << 8)
    hi = raw[start - 2] | (raw[start - 1] << 8)
    if _is_low(lo) and _is_high(hi):
        start += 2
    if n == len(tail) << 1:
        return tail[start >> 1 :]
    return raw[start:].decode("utf-16-le", "surrogatepass")


# --------------------------------------------------------------------------------------------------------
# truthiness, keys


def json_kind(value: Any) -> str:
    """The kind of a parsed JSON value, as messages name it: ``null``, ``boolean``, ``number``,
    ``string``, ``array`` or ``object`` (``undefined`` for :data:`UNDEFINED`, a missing member)."""
    if value is UNDEFINED:
        return "undefined"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def js_truthy(v: object) -> bool:
    """JS ``ToBoolean(v)`` (``!!v``).

    Falsy: ``null``, ``undefined``, ``false``, ``0``, ``-0``, ``NaN``, ``""``.  Objects and arrays -- even
    empty ones -- are truthy.
    """
    if v is None or v is UNDEFINED or v is False:
        return False
    t = type(v)
    if t is str or t is int:
        return bool(v)
    if t is float:
        return v == v and v != 0.0
    return True


_MAX_ARRAY_INDEX: Final = 4294967294  # 2**32 - 2
_ARRAY_INDEX_RE: Final = re.compile(r"0|[1-9][0-9]{0,9}")
_DIGIT_KEY_RE: Final = re.compile(r"\x00[0-9]")


def is_array_index(k: str) -> bool:
    """Whether the key ``k`` is a canonical array index (``"0"`` .. ``"4294967294"``): V8 lists those first."""
    return _ARRAY_INDEX_RE.fullmatch(k) is not None and int(k) <= _MAX_ARRAY_INDEX


def js_keys(d: dict[str, Any]) -> list[str]:
    """``Object.keys(obj)`` for an object made by ``JSON.parse``: V8's own-property order.

    Keys that are canonical array indices (``"0"`` .. ``"4294967294"``, no leading zeros) come first in
    ascending numeric order, then every other key in insertion order.  (Duplicate keys in the JSON text
    keep the position of their first occurrence, which Python dicts do too.)
    """
    if not d:
        return []
    # Fast path: no key starts with a digit.  (A key containing "\x00" + digit only costs the slow path.)
    if _DIGIT_KEY_RE.search("\x00" + "\x00".join(d)) is None:
        return list(d)
    indices: list[str] = []
    rest: list[str] = []
    for k in d:
        if is_array_index(k):
            indices.append(k)
        else:
            rest.append(k)
    if not indices:
        return rest
    indices.sort(key=int)
    return indices + rest


# --------------------------------------------------------------------------------------------------------
# numbers

_TWO_53: Final = 2**53


def _int_to_number(n: int) -> int | float:
    """The JS Number that ``JSON.parse`` produces for the integer literal ``n``.

    Exact (``n`` itself) when ``|n| <= 2**53``; otherwise the nearest double, or +-Infinity beyond the
    double range.
    """
    if -_TWO_53 <= n <= _TWO_53:
        return n
    try:
        return float(n)
    except OverflowError:
        return math.inf if n > 0 else -math.inf


def _float_to_string(x: float) -> str:
    """``Number.prototype.toString()`` for a float (any value, including NaN and the infinities)."""
    if x != x:
        return "NaN"
    if x == math.inf:
        return "Infinity"
    if x == -math.inf:
        return "-Infinity"
    if x.is_integer() and -_TWO_53 <= x <= _TWO_53:
        return str(int(x))  # also turns -0.0 into "0"
    r = repr(x)
    if "e" not in r:
        # Python prints positionally for 1e-4 <= |x| < 1e16, and so does JS (which only switches to
        # exponent form below 1e-6 or from 1e21); only an integral value's ".0" differs.
        return r[:-2] if r.endswith(".0") else r
    return _layout(r)


def _layout(r: str) -> str:
    """Re-lay out Python's shortest round-trip digits (``repr``) the way ECMAScript Number::toString does."""
    sign = ""
    if r[0] == "-":
        sign, r = "-", r[1:]
    mant, _, exp = r.partition("e")
    ip, _, fp = mant.partition(".")
    all_digits = ip + fp
    stripped = all_digits.lstrip("0")
    # value = 0.<digits> * 10**n
    n = len(ip) + (int(exp) if exp else 0) - (len(all_digits) - len(stripped))
    digits = stripped.rstrip("0")
    k = len(digits)
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * -n + digits
    e = n - 1
    exp_s = ("e+" if e >= 0 else "e-") + str(abs(e))
    if k == 1:
        return sign + digits + exp_s
    return sign + digits[0] + "." + digits[1:] + exp_s


def js_number_to_string(x: int | float) -> str:
    """``Number.prototype.toString()`` / ``String(x)`` for a JS number.

    This is also ``JSON.stringify``'s form for finite numbers.  Integers print without a decimal point
    (``200.0`` -> ``200``, ``-0.0`` -> ``0``); exponent notation is used exactly when the decimal exponent is
    >= 21 or <= -7 (``1e+21``, ``1e-7``, ``1.5e-7``); digits are the shortest that round-trip.  A Python int
    beyond 2**53 is first rounded to the nearest double, as ``JSON.parse`` would have done.  NaN ->
    ``"NaN"``, infinities -> ``"Infinity"`` / ``"-Infinity"``.
    """
    if type(x) is int:
        if -_TWO_53 <= x <= _TWO_53:
            return str(x)
        return _float_to_string(float(_int_to_number(x)))
    if isinstance(x, bool):
        raise TypeError("js_number_to_string expects a number, not a bool")
    if isinstance(x, int):
        return js_number_to_string(int(x))
    return _float_to_string(float(x))


# --------------------------------------------------------------------------------------------------------
# ToNumber

# JavaScript's String.prototype.trim() whitespace: WhiteSpace + LineTerminator code points.
JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)

# ASCII digits only: JavaScript's StringToNumber knows no other digits (Python's \d does).
_NUM_RE = re.compile(r"^[+-]?(\d+\.?\d*(e[+-]?\d+)?|\.\d+(e[+-]?\d+)?|Infinity)$", re.IGNORECASE | re.ASCII)
_RADIX_DIGITS = {"x": re.compile(r"[0-9a-f]+", re.I), "o": re.compile(r"[0-7]+"), "b": re.compile(r"[01]+")}


def js_to_number(value: Any) -> float:
    """JavaScript ``Number(value)`` for JSON values (used to compare ``version`` as Pi does)."""
    if value is None:
        return 0.0
    if value is True:
        return 1.0
    if value is False:
        return 0.0
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        text = value.strip(JS_WHITESPACE)
        if text == "":
            return 0.0
        low = text.lower()
        if low.startswith(("0x", "0o", "0b")) and len(text) > 2:
            if not _RADIX_DIGITS[low[1]].fullmatch(text[2:]):
                return math.nan
            return float(int(text[2:], {"x": 16, "o": 8, "b": 2}[low[1]]))
        if not _NUM_RE.match(text) or ("infinity" in low and text.strip("+-") != "Infinity"):
            return math.nan
        return float(text)
    if isinstance(value, list):
        # Number(array) is Number(String(array)): the elements joined with ",".
        return js_to_number(_array_to_string(value))
    return math.nan


def _array_to_string(value: list[Any]) -> str:
    parts = []
    for item in value:
        if item is None or item is UNDEFINED:
            parts.append("")
        elif isinstance(item, list):
            parts.append(_array_to_string(item))
        elif isinstance(item, dict):
            parts.append("[object Object]")
        else:
            parts.append(js_to_string(item))  # a string, number or boolean here
    return ",".join(parts)


# --------------------------------------------------------------------------------------------------------
# ToString


class JSTypeError(PiCrashError, TypeError):
    """JavaScript would throw a ``TypeError`` here (Pi would crash on this input).

    A :class:`PiCrashError`, so commands report it as Pi's crash (exit 1) instead of a bug.

    Raised by :func:`js_to_string` and :func:`js_date_ms` for an object with an own ``toString`` member:
    JSON values are never callable, so ``ToPrimitive`` finds no method producing a primitive and throws
    "Cannot convert object to primitive value".
    """


def _object_to_string(d: dict[str, Any]) -> str:
    """``ToPrimitive(obj)`` then ``ToString`` for a JSON-parsed object (either hint)."""
    if "toString" in d:
        raise JSTypeError("Cannot convert object to primitive value")
    # An own (non-callable) valueOf is skipped, and Object.prototype.valueOf returns the object itself
    # anyway: both hints end at Object.prototype.toString.
    return "[object Object]"


def js_to_string(v: Any) -> str:
    """JS ``String(v)`` for a JSON value.

    Arrays join their elements with ``,`` (``null``/``undefined`` elements as empty strings), objects give
    ``[object Object]``, numbers print as ``Number#toString``.  Raises :class:`JSTypeError` where JS throws
    (an object with an own ``toString`` member, also when nested in an array).
    """
    if type(v) is str:
        return v
    if v is None:
        return "null"
    if v is UNDEFINED:
        return "undefined"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int | float):
        return js_number_to_string(v)
    if isinstance(v, list | tuple):
        return ",".join("" if (e is None or e is UNDEFINED) else js_to_string(e) for e in v)
    if isinstance(v, dict):
        return _object_to_string(v)
    if isinstance(v, str):
        return str(v)
    raise TypeError(f"js_to_string: unsupported type {type(v).__name__}")
