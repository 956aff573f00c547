"""Reading Pi's JSON and JSONC configuration files (one comment stripper for all of pitools).

``settings.json``, ``auth.json`` and ``trust.json`` are plain JSON (``JSON.parse``); ``models.json``
also accepts ``//`` line comments and trailing commas (Pi's ``stripJsonComments`` in
``utils/json.js``). Errors are :class:`~pitools.errors.ConfigError` naming the file, and for
malformed JSON the line and column. Nothing here writes.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

from pitools.errors import ConfigError

# A JSON string literal (JS ``.`` stops at any line terminator), for the comment strippers below.
_STRING = r'"(?:\\[^\n\r\u2028\u2029]|[^"\\])*"'
_JS_SPACE = "\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
_LINE_COMMENT = _STRING + r"|//[^\n]*"
_TRAILING_COMMA = _STRING + r"|,([" + _JS_SPACE + r"]*[}\]])"
_CONSTANT = _STRING + r"|(-?Infinity|NaN)"


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    """``pattern`` compiled on first use: every command imports this module (session discovery
    reads settings), and most never strip a comment (compiling all three cost ~1 ms per start)."""
    return re.compile(pattern)


def strip_json_comments(text: str) -> str:
    """Pi's ``stripJsonComments`` (``utils/json.js``): ``//`` comments and trailing commas go."""
    text = _compiled(_LINE_COMMENT).sub(lambda m: m.group(0) if m.group(0).startswith('"') else "", text)
    return _compiled(_TRAILING_COMMA).sub(lambda m: m.group(1) if m.group(1) is not None else m.group(0), text)


class _NonJsonConstant(Exception):
    pass


def _reject_constant(name: str) -> Any:
    raise _NonJsonConstant(name)


def _line_col(text: str, pos: int) -> tuple[int, int]:
    return text.count("\n", 0, pos) + 1, pos - (text.rfind("\n", 0, pos) + 1) + 1


def parse_json(text: str, path: Path | str) -> Any:
    """``JSON.parse(text)``; a ConfigError naming the file, line and column when it fails."""
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        message = f"invalid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        raise ConfigError(message, path=str(path), line=exc.lineno) from None
    except _NonJsonConstant as exc:
        # Python accepts NaN and Infinity; JSON.parse does not.
        found = next((m for m in _compiled(_CONSTANT).finditer(text) if m.group(1)), None)
        line, col = _line_col(text, found.start(1)) if found else (None, None)
        where = f" (line {line}, column {col})" if line else ""
        raise ConfigError(f"invalid JSON: unexpected {exc}{where}", path=str(path), line=line) from None
    except (ValueError, RecursionError) as exc:
        raise ConfigError(f"invalid JSON: {exc}", path=str(path)) from None


def read_text(path: Path) -> str | None:
    """The file decoded as Node's ``readFileSync(path, "utf-8")`` does; None when it does not exist."""
    try:
        data = path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror or exc}", path=str(path)) from None
    return data.decode("utf-8", errors="replace")


def load_json_file(path: Path, *, comments: bool = False) -> Any:
    """Read and parse one JSON file (leading BOM dropped; ``comments`` allows Pi's ``//`` + trailing commas).

    Raises ConfigError, with the path and, for malformed JSON, line and column. Callers that
    mirror Pi's leniency catch it and turn it into a warning.
    """
    text = read_text(path)
    if text is None:
        raise ConfigError("no such file", path=str(path))
    text = text.removeprefix("\ufeff")
    return parse_json(strip_json_comments(text) if comments else text, path)


def read_json_object(path: Path, *, comments: bool = False, missing_ok: bool = True) -> dict[str, Any]:
    """A file holding one JSON object; a missing file is ``{}`` when ``missing_ok``."""
    text = read_text(path)
    if text is None:
        if missing_ok:
            return {}
        raise ConfigError("no such file", path=str(path))
    text = text.removeprefix("\ufeff")
    data = parse_json(strip_json_comments(text) if comments else text, path)
    if not isinstance(data, dict):
        raise ConfigError("expected a JSON object", path=str(path))
    return data
