"""``new Date(value).getTime()`` as Node 20 computes it (with ``TZ=UTC``), in Python.

Pi sorts, compares and converts entry timestamps with ``new Date(...)``, whose string parser
accepts far more than ISO 8601 (V8's legacy date parser). :func:`js_date_ms` reproduces it:
the ES date-time format first, then a Python port of V8's ``DateParser`` (tokenizer, day/time/
time-zone composers), checked against node-recorded cases in ``tests/unit/test_jsvalue.py``.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from array import array
from typing import Any, Final

from pitools.core.js.isotime import to_iso_string
from pitools.core.js.value import UNDEFINED, _code_units, _int_to_number, js_to_string

__all__ = ["iso_now", "js_date_ms", "to_iso_string"]

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


def iso_now(now: _dt.datetime | None = None) -> str:
    """``new Date().toISOString()`` for ``now`` (default: the current time)."""
    when = (now or _dt.datetime.now(_dt.UTC)).astimezone(_dt.UTC)
    epoch = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
    return to_iso_string((when - epoch) // _dt.timedelta(milliseconds=1)) or ""
