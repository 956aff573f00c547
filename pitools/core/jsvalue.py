"""Exact JavaScript (V8 / Node 20) value semantics for Python values parsed from JSON.

Pi is written in TypeScript and runs on Node; pitools reproduces its session logic in Python.  The values
pitools handles come from ``orjson.loads`` (or ``json.loads`` as a fallback, so strings may hold lone
surrogates and floats may be infinite), and wherever Pi's logic depends on a JavaScript primitive --
``s.length``, truthiness, ``Object.keys`` order, ``JSON.stringify``, ``Number#toString``,
``new Date(x).getTime()`` -- the helpers here give byte-identical answers.

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
from collections.abc import Callable
from json.encoder import encode_basestring as _encode_basestring
from typing import Any, Final

import orjson

from pitools.core.errors import PiCrashError

__all__ = [
    "UNDEFINED",
    "JSTypeError",
    "is_undefined",
    "js_date_ms",
    "js_keys",
    "js_number_to_string",
    "js_stringify",
    "js_stringify_len",
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


def utf16_len(s: str) -> int:
    """JS ``s.length``: the number of UTF-16 code units (non-BMP character = 2, lone surrogate = 1)."""
    if s.isascii():
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


def _is_array_index(k: str) -> bool:
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
        if _is_array_index(k):
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
# JSON.stringify

# JS escapes lone surrogates (well-formed JSON.stringify); a high surrogate directly followed by a low one
# is a valid pair and stays raw, even when Python holds it as two separate code points.
_LONE_SURROGATE_RE: Final = re.compile(r"[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]")
_ANY_SURROGATE_RE: Final = re.compile(r"[\ud800-\udfff]")


def _escape_surrogate(m: re.Match[str]) -> str:
    return f"\\u{ord(m.group()):04x}"


def _quote(s: str) -> str:
    """JS ``JSON.stringify(s)`` for a string: ``QuoteJSONString``.

    ``"`` and ``\\`` escaped; ``\\b \\t \\n \\f \\r`` named; other code units below U+0020 as ``\\u00xx``
    (lowercase hex); lone surrogates as ``\\udxxx``; everything else raw (non-ASCII, U+2028/U+2029, DEL).
    orjson and the stdlib's C ``encode_basestring`` both do exactly this (checked against node for every
    ASCII character), except for surrogates, which orjson refuses and ``encode_basestring`` leaves raw.
    """
    if len(s) < 48:
        # encode_basestring is quicker on short strings, orjson on long ones.
        if s.isascii() or _ANY_SURROGATE_RE.search(s) is None:
            return _encode_basestring(s)
    else:
        try:
            return orjson.dumps(s).decode()
        except orjson.JSONEncodeError:
            pass
    quoted = _LONE_SURROGATE_RE.sub(_escape_surrogate, _encode_basestring(s))
    if _ANY_SURROGATE_RE.search(quoted) is not None:
        # What is left are high/low pairs held as two code points: JS sees one character; make it one.
        quoted = quoted.encode("utf-16-le", "surrogatepass").decode("utf-16-le")
    return quoted


def _stringify_number(v: int | float) -> str:
    """``JSON.stringify`` of a number: like ``toString`` but non-finite numbers become ``null``."""
    if type(v) is int:
        if -_TWO_53 <= v <= _TWO_53:
            return str(v)
        v = _int_to_number(v)
    if v - v != 0:  # NaN or +-Infinity
        return "null"
    return _float_to_string(v)


def _serialize(v: Any, out: Callable[[str], None]) -> None:
    """``SerializeJSONProperty`` for a value that is not ``undefined`` (JSON-able Python values only)."""
    t = type(v)
    if t is str:
        out(_quote(v))
    elif t is dict:
        first = True
        out("{")
        for k in js_keys(v):
            item = v[k]
            if item is UNDEFINED:
                continue
            if first:
                first = False
                out(_quote(k) + ":")
            else:
                out("," + _quote(k) + ":")
            _serialize(item, out)
        out("}")
    elif t is list or t is tuple:
        if not v:
            out("[]")
            return
        out("[")
        first = True
        for item in v:
            if first:
                first = False
            else:
                out(",")
            if item is UNDEFINED:
                out("null")
            else:
                _serialize(item, out)
        out("]")
    elif v is None:
        out("null")
    elif v is True:
        out("true")
    elif v is False:
        out("false")
    elif t is int or t is float:
        out(_stringify_number(v))
    elif isinstance(v, str):
        out(_quote(str(v)))
    elif isinstance(v, int | float):
        out(_stringify_number(int(v) if isinstance(v, int) else float(v)))
    elif isinstance(v, dict):
        _serialize(dict(v), out)
    elif isinstance(v, list | tuple):
        _serialize(list(v), out)
    else:
        raise TypeError(f"js_stringify: unsupported type {t.__name__}")


# ---- fast path: let orjson serialize, then repair what differs from JS ----
#
# orjson prints strings exactly like JS (checked against node), keys in insertion order and integers
# exactly.  It refuses lone surrogates, UNDEFINED and (with OPT_STRICT_INTEGER) integers beyond 2**53: those
# take the slow path.  Two differences remain, both visible in its output:
#
# * a member key that is an array index: JS lists those first -> slow path;
# * floats: orjson prints shortest round-trip digits like JS, but lays out integral floats as ``100.0``
#   (JS ``100``), exponents 16..20 as ``1e+16`` (JS ``10000000000000000``) and exponent -6 as ``1e-6`` (JS
#   ``0.000001``).  Values that came from JSON written by JS never look like that, so the output is only
#   searched for those forms, and when one occurs outside a string the float tokens are re-printed.

_ORJSON_OPTS: Final = orjson.OPT_STRICT_INTEGER
# An array-index key.  An index key's opening quote is always a real delimiter, so every one is found;
# a false hit (an escaped quote inside a string) only costs the slow path.
_INDEX_KEY_BYTES_RE: Final = re.compile(rb'"(0|[1-9][0-9]{0,9})":')
# orjson float layouts that JS prints differently: integral, e+16..e+20, e-6.  (Separate patterns, each with
# a literal prefix, scan far faster than one alternation.)
_INTEGRAL_FLOAT_RE: Final = re.compile(rb"\.0(?![0-9])")
_EXP_PLUS_RE: Final = re.compile(rb"e\+(?:1[6-9]|20)(?![0-9])")
_EXP_MINUS_6_RE: Final = re.compile(rb"e-6(?![0-9])")


def _may_need_refloat(b: bytes) -> bool:
    """Whether ``b`` holds text like one of orjson's float layouts that JS prints differently."""
    return (
        (b"." in b and _INTEGRAL_FLOAT_RE.search(b) is not None)
        or (b"+" in b and _EXP_PLUS_RE.search(b) is not None)
        or _EXP_MINUS_6_RE.search(b) is not None
    )


# Any orjson float token (0.1, -0.0, 1e-7, 1e+16, 1.2345678901234568e+20: exponents are always signed).
_FLOAT_TOKEN_RE: Final = re.compile(rb"(?<![0-9])-?[0-9]++(?:\.[0-9]++(?:e[-+][0-9]++)?|e[-+][0-9]++)")


def _refloat(m: re.Match[bytes]) -> bytes:
    return _float_to_string(float(m.group())).encode()


def _fast_dumps(value: Any) -> bytes | None:
    """``JSON.stringify(value)`` as UTF-8 via orjson, or ``None`` when the slow path must decide."""
    try:
        out = orjson.dumps(value, option=_ORJSON_OPTS)
    except TypeError:  # orjson.JSONEncodeError included
        return None
    for m in _INDEX_KEY_BYTES_RE.finditer(out):
        if int(m.group(1)) <= _MAX_ARRAY_INDEX:
            return None
    if not _may_need_refloat(out):
        return out
    if b'"' not in out:
        return _FLOAT_TOKEN_RE.sub(_refloat, out)
    # Tell structure from string contents: swap escaped backslashes and quotes for control bytes (which
    # never occur raw in JSON output); then every `"` is a delimiter and the split alternates
    # structure / contents.
    escaped = b"\\" in out
    work = out.replace(b"\\\\", b"\x00").replace(b'\\"', b"\x01") if escaped else out
    parts = work.split(b'"')
    structure = b"\x02".join(parts[0::2])
    if not _may_need_refloat(structure):
        return out
    parts[0::2] = _FLOAT_TOKEN_RE.sub(_refloat, structure).split(b"\x02")
    work = b'"'.join(parts)
    if escaped:
        work = work.replace(b"\x00", b"\\\\").replace(b"\x01", b'\\"')
    return work


_FOUR_BYTE_LEADS: Final = (b"\xf0", b"\xf1", b"\xf2", b"\xf3", b"\xf4")


def _utf8_as_utf16_len(b: bytes) -> int:
    """UTF-16 length of UTF-8 text: one unit per code point, two for a 4-byte (non-BMP) sequence."""
    if b.isascii():
        return len(b)
    n = len(b.decode())
    for lead in _FOUR_BYTE_LEADS:
        if lead in b:  # memchr: much cheaper than count() when absent
            n += b.count(lead)
    return n


def js_stringify(value: Any) -> str | None:
    """``JSON.stringify(value)`` (no indentation, no replacer) exactly as V8 prints it.

    Object keys in JS own-property order (:func:`js_keys`), numbers as ``Number#toString`` (NaN and
    +-Infinity -> ``null``; ints beyond 2**53 rounded to a double first), strings escaped like JS.  An
    :data:`UNDEFINED` object member is omitted, an :data:`UNDEFINED` array element is ``null``, and a
    top-level :data:`UNDEFINED` gives ``None`` (JS returns ``undefined``).

    Mostly orjson does the work (see :func:`_fast_dumps`); lone surrogates, array-index keys, integers
    beyond 2**53 and :data:`UNDEFINED` take a slower pure-Python walk.  The result is always valid Unicode
    (lone surrogates are escaped, as JS does).
    """
    if value is UNDEFINED:
        return None
    t = type(value)
    if t is str:
        return _quote(value)
    if t is int or t is float:
        return _stringify_number(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    fast = _fast_dumps(value)
    if fast is not None:
        return fast.decode()
    parts: list[str] = []
    _serialize(value, parts.append)
    return "".join(parts)


def js_stringify_len(value: Any) -> int:
    """``JSON.stringify(value).length`` (UTF-16 code units); 0 for ``undefined``.

    (JS would throw reading ``.length`` of ``undefined``; Pi only measures JSON-able values.)
    """
    t = type(value)
    if t is dict or t is list:
        fast = _fast_dumps(value)
        if fast is not None:
            return _utf8_as_utf16_len(fast)
    s = js_stringify(value)
    if s is None:
        return 0
    return utf16_len(s)


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


# --------------------------------------------------------------------------------------------------------
# new Date(x).getTime()

_MAX_TIME_MS: Final = 8.64e15
_MS_PER_DAY: Final = 86_400_000


def _time_clip(t: float) -> float | int:
    """ECMAScript TimeClip: NaN outside +-8.64e15, else the integer part (``-0`` -> ``0``)."""
    if t != t or not -_MAX_TIME_MS <= t <= _MAX_TIME_MS:
        return math.nan
    return int(t)


def _days_from_civil(y: int, m: int) -> int:
    """Days from 1970-01-01 to the first day of month ``m`` (1..12) of proleptic Gregorian year ``y``."""
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


_K_MIN_YEAR: Final = -1_000_000
_K_MAX_YEAR: Final = 1_000_000


def _compose(year: int, month0: int, day: int, hour: int, minute: int, second: int, ms: int) -> float | int:
    """V8 ``MakeDate(MakeDay(y, m, d), MakeTime(...))`` on parsed fields; NaN for a year out of range.

    Not yet time-clipped: the caller subtracts the UTC offset first.
    """
    if not _K_MIN_YEAR <= year <= _K_MAX_YEAR:
        return math.nan
    days = _days_from_civil(year, month0 + 1) + day - 1
    return days * _MS_PER_DAY + hour * 3_600_000 + minute * 60_000 + second * 1000 + ms


# Fast path for the overwhelmingly common Pi timestamp: 2025-03-01T10:00:00.000Z
_ISO_FAST_RE: Final = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,9}))?Z"
)


def js_date_ms(value: Any) -> float | int:
    """``new Date(value).getTime()`` in Node 20 with ``TZ=UTC``: an int of milliseconds, or ``math.nan``.

    ``null`` -> 0, booleans -> 1/0, numbers -> TimeClip, ``undefined`` -> NaN; strings go through V8's
    date parser (ES date-time string format first, then V8's legacy parser); arrays and objects are
    converted to a string first (``[2025]`` -> ``"2025"``, ``{}`` -> ``"[object Object]"``), and
    :class:`JSTypeError` is raised where JS throws (an object with an own ``toString`` member).
    """
    t = type(value)
    if t is str:
        return _parse_date(value)
    if value is None or value is False:
        return 0
    if value is True:
        return 1
    if t is int:
        return _time_clip(float(_int_to_number(value)))
    if t is float:
        return _time_clip(value)
    if value is UNDEFINED:
        return math.nan
    if isinstance(value, list | tuple | dict | str):
        return _parse_date(js_to_string(value))
    if isinstance(value, int | float):
        return js_date_ms(int(value) if isinstance(value, int) else float(value))
    raise TypeError(f"js_date_ms: unsupported type {t.__name__}")


def _parse_date(s: str) -> float | int:
    """V8 ``ParseDateTimeString`` (``Date.parse``) with the local time zone being UTC."""
    m = _ISO_FAST_RE.fullmatch(s) if len(s) <= 34 else None
    if m is not None:
        y, mo, d, h, mi, sec, frac = m.groups()
        month, day, hour, minute, second = int(mo), int(d), int(h), int(mi), int(sec)
        if 1 <= month <= 12 and 1 <= day <= 31 and hour <= 23 and minute <= 59 and second <= 59:
            ms = int((frac + "00")[:3]) if frac else 0
            return _time_clip(_compose(int(y), month - 1, day, hour, minute, second, ms))
    fields = _DateParser(s).parse()
    if fields is None:
        return math.nan
    year, month0, day, hour, minute, second, ms, offset = fields
    t = _compose(year, month0, day, hour, minute, second, ms)
    if offset is not None:
        t -= offset * 1000
    return _time_clip(t)


# ---- a port of V8's DateParser (src/date/dateparser.{h,cc}, dateparser-inl.h) ----

_K_NONE: Final = 2**31 - 1  # kMaxInt: "missing"
_MAX_SIGNIFICANT_DIGITS: Final = 9
_SMI_MAX: Final = 2**31 - 1  # 32-bit Smis on x64 without pointer compression (Node's default build)

# Token tags (DateToken::TagType); keyword tags are the KeywordType values, all >= 0.
_T_INVALID: Final = -6
_T_UNKNOWN: Final = -5
_T_WHITESPACE: Final = -4
_T_NUMBER: Final = -3
_T_SYMBOL: Final = -2
_T_END: Final = -1
# KeywordType
_KW_INVALID: Final = 0
_KW_MONTH_NAME: Final = 1
_KW_TIME_ZONE_NAME: Final = 2
_KW_TIME_SEPARATOR: Final = 3
_KW_AM_PM: Final = 4

# KeywordTable: 3-character lower-case prefix (zero padded) -> (type, value).
_KEYWORDS: Final[tuple[tuple[tuple[int, int, int], int, int], ...]] = tuple(
    ((ord(w[0]), ord(w[1]) if len(w) > 1 else 0, ord(w[2]) if len(w) > 2 else 0), kind, val)
    for w, kind, val in (
        ("jan", _KW_MONTH_NAME, 1),
        ("feb", _KW_MONTH_NAME, 2),
        ("mar", _KW_MONTH_NAME, 3),
        ("apr", _KW_MONTH_NAME, 4),
        ("may", _KW_MONTH_NAME, 5),
        ("jun", _KW_MONTH_NAME, 6),
        ("jul", _KW_MONTH_NAME, 7),
        ("aug", _KW_MONTH_NAME, 8),
        ("sep", _KW_MONTH_NAME, 9),
        ("oct", _KW_MONTH_NAME, 10),
        ("nov", _KW_MONTH_NAME, 11),
        ("dec", _KW_MONTH_NAME, 12),
        ("am", _KW_AM_PM, 0),
        ("pm", _KW_AM_PM, 12),
        ("ut", _KW_TIME_ZONE_NAME, 0),
        ("utc", _KW_TIME_ZONE_NAME, 0),
        ("z", _KW_TIME_ZONE_NAME, 0),
        ("gmt", _KW_TIME_ZONE_NAME, 0),
        ("cdt", _KW_TIME_ZONE_NAME, -5),
        ("cst", _KW_TIME_ZONE_NAME, -6),
        ("edt", _KW_TIME_ZONE_NAME, -4),
        ("est", _KW_TIME_ZONE_NAME, -5),
        ("mdt", _KW_TIME_ZONE_NAME, -6),
        ("mst", _KW_TIME_ZONE_NAME, -7),
        ("pdt", _KW_TIME_ZONE_NAME, -7),
        ("pst", _KW_TIME_ZONE_NAME, -8),
        ("t", _KW_TIME_SEPARATOR, 0),
    )
)

# The code units Node 20's date parser treats as white space (determined by probing all 65536 of them):
# JS WhiteSpace (TAB VT FF SP NBSP ZWNBSP and category Zs) plus LF and CR -- but not U+2028/U+2029, which,
# like every other code unit >= 'A', are "word" characters.  White space also ends a word.
_WS_UNITS: Final = frozenset(
    (0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x202F, 0x205F, 0x3000, 0xFEFF)
)

_Token = tuple[int, int, int]  # (tag, length, value)
_END_TOKEN: Final[_Token] = (_T_END, 0, -1)
_INVALID_TOKEN: Final[_Token] = (_T_INVALID, 0, -1)
_UNKNOWN_TOKEN: Final[_Token] = (_T_UNKNOWN, 1, -1)
_WS_TOKEN: Final[_Token] = (_T_WHITESPACE, 1, -1)
_SYMBOL_TOKENS: Final[dict[int, _Token]] = {c: (_T_SYMBOL, 1, c) for c in map(ord, ":-+.)")}
_COLON: Final = ord(":")
_MINUS: Final = ord("-")
_PLUS: Final = ord("+")
_DOT: Final = ord(".")
_RPAREN: Final = ord(")")
_LPAREN: Final = ord("(")
_A: Final = ord("A")


def _keyword_lookup(pre: tuple[int, int, int], length: int) -> tuple[int, int]:
    """``KeywordTable::Lookup``: (type, value); words longer than 3 only match month names."""
    for prefix, kind, val in _KEYWORDS:
        if prefix == pre and (length <= 3 or kind == _KW_MONTH_NAME):
            return kind, val
    return _KW_INVALID, 0


def _is_number(tok: _Token) -> bool:
    return tok[0] == _T_NUMBER


def _is_fixed_number(tok: _Token, length: int) -> bool:
    return tok[0] == _T_NUMBER and tok[1] == length


def _is_symbol(tok: _Token, c: int) -> bool:
    return tok[0] == _T_SYMBOL and tok[2] == c


def _is_sign(tok: _Token) -> bool:
    return tok[0] == _T_SYMBOL and (tok[2] == _MINUS or tok[2] == _PLUS)


def _sign_of(tok: _Token) -> int:
    return 44 - tok[2]  # '+' (43) -> 1, '-' (45) -> -1


def _is_keyword_z(tok: _Token) -> bool:
    return tok[0] == _KW_TIME_ZONE_NAME and tok[1] == 1 and tok[2] == 0


_POW10: Final = (1, 10, 100, 1000, 10_000, 100_000, 1_000_000)


def _read_milliseconds(tok: _Token) -> int:
    """``DateParser::ReadMilliseconds``: the first three significant digits of a fraction."""
    number, length = tok[2], tok[1]
    if length == 1:
        return number * 100
    if length == 2:
        return number * 10
    if length > 3:
        length = min(length, _MAX_SIGNIFICANT_DIGITS)
        return number // _POW10[length - 3]
    return number


def _between(x: int, lo: int, hi: int) -> bool:
    return lo <= x <= hi


class _DayComposer:
    __slots__ = ("comp", "is_iso_date", "named_month")

    def __init__(self) -> None:
        self.comp: list[int] = []
        self.named_month = _K_NONE
        self.is_iso_date = False

    def add(self, n: int) -> bool:
        if len(self.comp) < 3:
            self.comp.append(n)
            return True
        return False

    def write(self) -> tuple[int, int, int] | None:
        comp = self.comp
        if not comp:
            return None
        while len(comp) < 3:  # day and month default to 1 -- and so does the year slot (V8 quirk)
            comp.append(1)
        if self.named_month == _K_NONE:
            if self.is_iso_date or not _between(comp[0], 1, 31):
                year, month, day = comp
            else:
                month, day, year = comp
        else:
            month = self.named_month
            if not _between(comp[0], 1, 31):
                year, day = comp[0], comp[1]
            else:
                day, year = comp[0], comp[1]
        if not self.is_iso_date:
            if 0 <= year <= 49:
                year += 2000
            elif 50 <= year <= 99:
                year += 1900
        if not _between(month, 1, 12) or not _between(day, 1, 31):
            return None
        return year, month - 1, day


class _TimeComposer:
    __slots__ = ("comp", "hour_offset")

    def __init__(self) -> None:
        self.comp: list[int] = []
        self.hour_offset = _K_NONE

    def is_empty(self) -> bool:
        return not self.comp

    def is_expecting(self, n: int) -> bool:
        i = len(self.comp)
        return (i == 1 and 0 <= n <= 59) or (i == 2 and 0 <= n <= 59) or (i == 3 and 0 <= n <= 999)

    def add(self, n: int) -> bool:
        if len(self.comp) < 4:
            self.comp.append(n)
            return True
        return False

    def add_final(self, n: int) -> bool:
        if not self.add(n):
            return False
        while len(self.comp) < 4:
            self.comp.append(0)
        return True

    def write(self) -> tuple[int, int, int, int] | None:
        comp = self.comp
        while len(comp) < 4:
            comp.append(0)
        hour, minute, second, ms = comp
        if self.hour_offset != _K_NONE:
            if not 0 <= hour <= 12:
                return None
            hour = hour % 12 + self.hour_offset
        if not (0 <= hour <= 23 and 0 <= minute <= 59 and 0 <= second <= 59 and 0 <= ms <= 999) and (
            hour != 24 or minute != 0 or second != 0 or ms != 0
        ):
            return None
        return hour, minute, second, ms


class _TimeZoneComposer:
    __slots__ = ("hour", "minute", "sign")

    def __init__(self) -> None:
        self.sign = _K_NONE
        self.hour = _K_NONE
        self.minute = _K_NONE

    def set(self, offset_in_hours: int) -> None:
        self.sign = -1 if offset_in_hours < 0 else 1
        self.hour = offset_in_hours * self.sign
        self.minute = 0

    def set_sign(self, sign: int) -> None:
        self.sign = -1 if sign < 0 else 1

    def is_expecting(self, n: int) -> bool:
        return self.hour != _K_NONE and self.minute == _K_NONE and 0 <= n <= 59

    def is_utc(self) -> bool:
        return self.hour == 0 and self.minute == 0

    def is_empty(self) -> bool:
        return self.hour == _K_NONE

    def write(self) -> tuple[bool, int | None]:
        """(ok, offset in seconds or None for "no time zone given")."""
        if self.sign == _K_NONE:
            return True, None
        hour = 0 if self.hour == _K_NONE else self.hour
        minute = 0 if self.minute == _K_NONE else self.minute
        total = (hour * 3600 + minute * 60) & 0xFFFFFFFF  # C++ unsigned arithmetic
        if total > _SMI_MAX:
            return False, None
        return True, -total if self.sign < 0 else total


class _DateParser:
    """V8's ``DateParser::Parse`` over the UTF-16 code units of a string (NUL ends the input, as in V8)."""

    __slots__ = ("ch", "index", "next_tok", "units")

    def __init__(self, s: str) -> None:
        self.units: bytes | array[int] = s.encode("latin-1") if s.isascii() else _code_units(s)
        self.index = 0
        self.ch = 0
        self._advance()
        self.next_tok: _Token = self._scan()

    # -- InputReader
    def _advance(self) -> None:
        self.ch = self.units[self.index] if self.index < len(self.units) else 0
        self.index += 1

    def _scan(self) -> _Token:
        """``DateStringTokenizer::Scan``."""
        ch = self.ch
        if ch == 0:
            return _END_TOKEN
        if 0x30 <= ch <= 0x39:
            # ReadUnsignedNumeral: leading zeros are skipped before the (at most 9) significant digits are
            # accumulated, but they still count towards the token's length.
            start = self.index
            n = 0
            i = 0
            while self.ch == 0x30:
                self._advance()
            while 0x30 <= self.ch <= 0x39:
                if i < _MAX_SIGNIFICANT_DIGITS:
                    n = n * 10 + self.ch - 0x30
                i += 1
                self._advance()
            return (_T_NUMBER, self.index - start, n)
        sym = _SYMBOL_TOKENS.get(ch)
        if sym is not None:
            self._advance()
            return sym
        if ch in _WS_UNITS:
            self._advance()
            return _WS_TOKEN
        if ch >= _A:
            pre = [0, 0, 0]
            length = 0
            while self.ch >= _A and self.ch not in _WS_UNITS:
                if length < 3:
                    pre[length] = self.ch | 0x20
                length += 1
                self._advance()
            kind, val = _keyword_lookup((pre[0], pre[1], pre[2]), length)
            return (kind, length, val)
        if ch == _LPAREN:
            balance = 0
            while True:
                if self.ch == _RPAREN:
                    balance -= 1
                elif self.ch == _LPAREN:
                    balance += 1
                self._advance()
                if not (balance > 0 and self.ch):
                    break
            return _UNKNOWN_TOKEN
        self._advance()
        return _UNKNOWN_TOKEN

    # -- DateStringTokenizer
    def _next(self) -> _Token:
        tok = self.next_tok
        self.next_tok = self._scan()
        return tok

    def _skip_symbol(self, c: int) -> bool:
        if _is_symbol(self.next_tok, c):
            self.next_tok = self._scan()
            return True
        return False

    # -- ParseES5DateTime
    def _parse_es5(self, day: _DayComposer, time: _TimeComposer, tz: _TimeZoneComposer) -> _Token:
        peek = self.next_tok
        if _is_sign(peek):
            sign_token = self._next()
            if not _is_fixed_number(self.next_tok, 6):
                return sign_token
            sign = _sign_of(sign_token)
            year = self._next()[2]
            if sign < 0 and year == 0:
                return sign_token
            day.add(sign * year)
        elif _is_fixed_number(peek, 4):
            day.add(self._next()[2])
        else:
            return self._next()
        if self._skip_symbol(_MINUS):
            peek = self.next_tok
            if not _is_fixed_number(peek, 2) or not 1 <= peek[2] <= 12:
                return self._next()
            day.add(self._next()[2])
            if self._skip_symbol(_MINUS):
                peek = self.next_tok
                if not _is_fixed_number(peek, 2) or not 1 <= peek[2] <= 31:
                    return self._next()
                day.add(self._next()[2])
        if self.next_tok[0] != _KW_TIME_SEPARATOR:
            if self.next_tok[0] != _T_END:
                return self._next()
        else:
            self._next()
            peek = self.next_tok
            if not _is_fixed_number(peek, 2) or not 0 <= peek[2] <= 24:
                return _INVALID_TOKEN
            hour_is_24 = peek[2] == 24
            time.add(self._next()[2])
            if not self._skip_symbol(_COLON):
                return _INVALID_TOKEN
            peek = self.next_tok
            if not _is_fixed_number(peek, 2) or not 0 <= peek[2] <= 59 or (hour_is_24 and peek[2] > 0):
                return _INVALID_TOKEN
            time.add(self._next()[2])
            if self._skip_symbol(_COLON):
                peek = self.next_tok
                if not _is_fixed_number(peek, 2) or not 0 <= peek[2] <= 59 or (hour_is_24 and peek[2] > 0):
                    return _INVALID_TOKEN
                time.add(self._next()[2])
                if self._skip_symbol(_DOT):
                    peek = self.next_tok
                    if not _is_number(peek) or (hour_is_24 and peek[2] > 0):
                        return _INVALID_TOKEN
                    time.add(_read_milliseconds(self._next()))
            peek = self.next_tok
            if _is_keyword_z(peek):
                self._next()
                tz.set(0)
            elif _is_sign(peek):
                tz.set_sign(_sign_of(self._next()))
                peek = self.next_tok
                if _is_fixed_number(peek, 4):
                    hourmin = self._next()[2]
                    hour, minute = divmod(hourmin, 100)
                    if not 0 <= hour <= 23 or not 0 <= minute <= 59:
                        return _INVALID_TOKEN
                    tz.hour = hour
                    tz.minute = minute
                else:
                    if not _is_fixed_number(peek, 2) or not 0 <= peek[2] <= 23:
                        return _INVALID_TOKEN
                    tz.hour = self._next()[2]
                    if not self._skip_symbol(_COLON):
                        return _INVALID_TOKEN
                    peek = self.next_tok
                    if not _is_fixed_number(peek, 2) or not 0 <= peek[2] <= 59:
                        return _INVALID_TOKEN
                    tz.minute = self._next()[2]
            if self.next_tok[0] != _T_END:
                return _INVALID_TOKEN
        # Date-only forms without an offset are UTC; date-time forms are local time (UTC here anyway).
        if tz.is_empty() and time.is_empty():
            tz.set(0)
        day.is_iso_date = True
        return _END_TOKEN

    # -- DateParser::Parse
    def parse(self) -> tuple[int, int, int, int, int, int, int, int | None] | None:
        day = _DayComposer()
        time = _TimeComposer()
        tz = _TimeZoneComposer()
        token = self._parse_es5(day, time, tz)
        if token[0] == _T_INVALID:
            return None
        has_read_number = bool(day.comp)
        while token[0] != _T_END:
            tag = token[0]
            if tag == _T_NUMBER:
                has_read_number = True
                n = token[2]
                if self._skip_symbol(_COLON):
                    if self._skip_symbol(_COLON):
                        # n + "::"
                        if not time.is_empty():
                            return None
                        time.add(n)
                        time.add(0)
                    else:
                        # n + ":"
                        if not time.add(n):
                            return None
                        if _is_symbol(self.next_tok, _DOT):
                            self._next()
                elif self._skip_symbol(_DOT) and time.is_expecting(n):
                    time.add(n)
                    if not _is_number(self.next_tok):
                        return None
                    time.add_final(_read_milliseconds(self._next()))
                elif tz.is_expecting(n):
                    tz.minute = n
                elif time.is_expecting(n):
                    time.add_final(n)
                    # Require end, white space, "Z", "+" or "-" immediately after finalizing time.
                    peek = self.next_tok
                    if not (peek[0] == _T_END or peek[0] == _T_WHITESPACE or _is_keyword_z(peek) or _is_sign(peek)):
                        return None
                else:
                    if not day.add(n):
                        return None
                    self._skip_symbol(_MINUS)
            elif tag >= 0:  # a word
                value = token[2]
                if tag == _KW_AM_PM and not time.is_empty():
                    time.hour_offset = value
                elif tag == _KW_MONTH_NAME:
                    day.named_month = value
                    self._skip_symbol(_MINUS)
                elif tag == _KW_TIME_ZONE_NAME and has_read_number:
                    tz.set(value)
                else:
                    # Garbage words are illegal once a number has been read, and the first number must be
                    # separated from garbage words.
                    if has_read_number or _is_number(self.next_tok):
                        return None
            elif _is_sign(token) and (tz.is_utc() or not time.is_empty()):
                # UTC offset (only after UTC or a time).
                tz.set_sign(_sign_of(token))
                n = 0
                length = 0
                if _is_number(self.next_tok):
                    num = self._next()
                    length = num[1]
                    n = num[2]
                has_read_number = True
                if _is_symbol(self.next_tok, _COLON):
                    tz.hour = n
                    tz.minute = _K_NONE
                elif length == 1 or length == 2:
                    tz.hour = n
                    tz.minute = 0
                elif length == 3 or length == 4:
                    tz.hour = n // 100
                    tz.minute = n % 100
                else:
                    return None
            elif (_is_sign(token) or _is_symbol(token, _RPAREN)) and has_read_number:
                return None
            # else: ignore other characters and white space
            token = self._next()

        ymd = day.write()
        if ymd is None:
            return None
        hms = time.write()
        if hms is None:
            return None
        ok, offset = tz.write()
        if not ok:
            return None
        return ymd[0], ymd[1], ymd[2], hms[0], hms[1], hms[2], hms[3], offset
