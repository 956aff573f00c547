"""The session viewer: one self-contained HTML page (``export --format html``, ``pitools serve``).

The page holds the session's entries once, as JSON inside ``<script type="application/json">``
(never executed; every ``<`` written as ``\\u003c`` so no text can close the element), the read
model of :mod:`pitools.core.views.viewer`, and a small script (the files of ``viewer/`` that
:data:`VIEWER_SCRIPT` names, put together in one function; no build step) that draws the
tree, the transcript and the context overlay from them. Its Content-Security-Policy allows
nothing but that one script (by hash), inline styles and ``data:`` images: no request leaves
the page. All session text reaches the document as text
(``textContent`` or escaped markup), never as markup.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Callable, Iterable, Iterator
from functools import cache
from importlib import resources
from typing import Any

from pitools.core.js.json.encode import to_json_bytes

#: Entries serialized per yielded piece (one piece per entry costs a generator step each).
_BATCH = 256


@cache
def asset(name: str) -> str:
    """A file of ``pitools/render/viewer/`` (the script and the stylesheet)."""
    return resources.files("pitools.render").joinpath("viewer", name).read_text(encoding="utf-8")


#: The page's script: these files of ``viewer/``, in this order, inside one function (they share
#: its scope; the page stays one self-contained file with one script for its CSP hash).
VIEWER_SCRIPT = ("state.js", "util.js", "markdown.js", "data.js", "tree.js", "transcript.js", "main.js")


@cache
def viewer_script() -> str:
    """The page's script, put together from :data:`VIEWER_SCRIPT`."""
    return '"use strict";\n(function () {\n' + "".join(asset(name) for name in VIEWER_SCRIPT) + "})();\n"


@cache
def script_hash() -> str:
    digest = hashlib.sha256(viewer_script().encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")


def csp(*, live: bool = False) -> str:
    """The page's policy; a served page may also ask its own origin for updates."""
    connect = "; connect-src 'self'" if live else ""
    return f"default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src '{script_hash()}'{connect}"


#: What HTML parsing or a file writer would change in JSON text embedded in the page: a bare CR
#: (the HTML parser turns it and CRLF into LF, which moves the page's one-entry-per-line split),
#: DEL and C1 controls and the bidi marks (the file writer shows those escaped, ``\\x7f``, which
#: is no JSON escape). In valid JSON a raw CR can only be whitespace and the others only occur
#: inside strings, so a space and ``\\uXXXX`` escapes read back as the same value.
_UNSAFE_IN_PAGE = re.compile(rb"\r|\x7f|\xc2[\x80-\x9f]|\xd8\x9c|\xe2\x80[\x8e\x8f\xa8-\xae]|\xe2\x81[\xa6-\xa9]")


def _escape_unsafe(m: re.Match[bytes]) -> bytes:
    raw = m.group()
    return b" " if raw == b"\r" else b"\\u%04x" % ord(raw.decode("utf-8"))


#: What a page title must not hold as it is: C0 controls, DEL, C1 controls, the bidi marks and
#: overrides (a session's name or first line can carry them; in a tab title they would hide or
#: reorder text) and lone surrogates (no UTF-8 form: the page could not be written).
_UNSAFE_IN_TITLE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")


def title_text(text: str) -> str:
    """``text`` for the page's ``<title>``: each character :data:`_UNSAFE_IN_TITLE` names shown as U+FFFD."""
    return _UNSAFE_IN_TITLE.sub("\ufffd", text)


#: Bytes that cannot be ``<`` or part of what :data:`_UNSAFE_IN_PAGE` names: dropped before
#: looking for them. Kept are ``<``, CR, DEL, the continuation bytes of the unsafe characters'
#: UTF-8 forms and every lead byte (so the bytes of two different characters never become
#: neighbours: a match in what is left may be a false alarm, never a miss).
_PAGE_SAFE_BYTES = bytes(
    b for b in range(256) if not (b in (0x0D, 0x3C) or 0x7F <= b <= 0x9F or 0xA6 <= b <= 0xAE or b >= 0xC0)
)


def embed_json(data: bytes) -> bytes:
    """JSON text (valid JSON, UTF-8) in the form the page embeds: ``<`` as ``\\u003c`` (it only
    occurs inside strings, and then no text can close the ``<script>`` element) and what
    :data:`_UNSAFE_IN_PAGE` names made safe; JSON.parse reads back the same value.

    One deletion pass finds what there is to do: typical text holds a lead byte of some unsafe
    character (``\\xe2`` starts every dash and curly quote) but none of them, and the regular
    expression, about ten times slower than the deletion, runs only when the few bytes left
    after dropping :data:`_PAGE_SAFE_BYTES` hold a match.
    """
    kept = data.translate(None, _PAGE_SAFE_BYTES)
    if not kept:
        return data
    if b"<" in kept:
        data = data.replace(b"<", b"\\u003c")
    if _UNSAFE_IN_PAGE.search(kept) is not None:
        data = _UNSAFE_IN_PAGE.sub(_escape_unsafe, data)
    return data


def _entry_json(entry: Any) -> bytes:
    """An entry nested too deeply to serialize (of a migrated file: the others are embedded as
    their lines) keeps its top-level scalars (ids, type, timestamp: all the page's tree and
    context need) and says what was left out."""
    try:
        return to_json_bytes(entry)
    except RecursionError:
        if not isinstance(entry, dict):
            return b'"(a value nested too deeply to show)"'
        shallow = {k: v for k, v in entry.items() if not isinstance(v, (dict, list))}
        shallow["pitoolsNote"] = "nested too deeply to show here; its other fields are left out"
        return to_json_bytes(shallow)


def _e(text: str) -> str:
    """``html.escape(text, quote=True)``, replacing only the characters that occur (a search
    for an absent character is much cheaper than a replace pass)."""
    if "&" in text:  # first, so the entities made below are not escaped again
        text = text.replace("&", "&amp;")
    if "<" in text:
        text = text.replace("<", "&lt;")
    if ">" in text:
        text = text.replace(">", "&gt;")
    if '"' in text:
        text = text.replace('"', "&quot;")
    if "'" in text:
        text = text.replace("'", "&#x27;")
    return text


def page_chunks(
    meta: dict[str, Any],
    entries: Iterable[bytes],
    *,
    title: str,
    live: dict[str, Any] | None = None,
    first_view: list[tuple[int, bytes]] | None = None,
    late: Callable[[], dict[str, Any]] | None = None,
) -> Iterator[bytes]:
    """The page in UTF-8 pieces (they join to it); ``entries`` are the entries' JSON texts, read
    or serialized as they are written (:func:`entry_texts`).

    ``live`` (for ``pitools serve``) adds what the script needs to poll for appended entries.
    ``first_view`` (position, JSON text) are the entries the transcript opens on: they go into
    the read model, and the script comes before the entries' block, so the browser draws the
    transcript while it is still parsing the rest of the page.

    ``late()``, called once the entries are written, gives more of the read model (the request
    check): a block after the entries that the script adds to it when the page is complete.

    Bytes, not text: the entries are the file's own UTF-8 lines, and decoding a hundred
    megabytes only for the writer to encode them again costs more than the rest of the writing.
    Terminal-safe as they are (``export -o`` writes them without the writer's safety pass): no
    C0 control but tab and newline, no DEL, C1 control or bidi mark. JSON text holds controls
    only as escapes, :func:`embed_json` escapes the rest, the title goes through
    :func:`title_text`, and the page's own assets hold none.
    """
    info = dict(meta)
    if live is not None:
        info["live"] = live
    head = (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{csp(live=live is not None)}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="generator" content="pitools">\n'
        '<meta name="referrer" content="no-referrer">\n'
        f"<title>{_e(title_text(title))}</title>\n"
        f"<style>{asset('viewer.css')}</style></head>\n"
        '<body><noscript><p class="noscript">This viewer needs JavaScript '
        "(pitools export --format markdown gives a plain transcript).</p></noscript>\n"
        '<div id="app"></div>\n'
        '<script type="application/json" id="pt-meta">'
    )
    yield head.encode("utf-8")
    data = to_json_bytes(info)  # an object with keys: "{...}"
    if first_view:
        parts = b",".join(b'"%d":%s' % (pos, text) for pos, text in first_view)
        data = data[:-1] + b',"firstView":{' + parts + b"}}"
    yield embed_json(data)
    yield f"</script>\n<script>{viewer_script()}</script>\n".encode()
    # One entry per line (the page splits the lines and parses each entry when it is drawn).
    yield b'<script type="application/json" id="pt-entries">[\n'
    batch: list[bytes] = []
    first = True
    for text in entries:
        batch.append(text)
        if len(batch) >= _BATCH:
            yield (b"" if first else b",\n") + embed_json(b",\n".join(batch))
            first = False
            batch = []
    if batch:
        yield (b"" if first else b",\n") + embed_json(b",\n".join(batch))
    yield b"\n]</script>\n"
    if late is not None:
        yield b'<script type="application/json" id="pt-late">' + embed_json(to_json_bytes(late())) + b"</script>\n"
    yield b"</body></html>\n"


def entry_texts(entries: Iterable[Any], raw_line: Callable[[int], bytes | None] | None = None) -> Iterator[bytes]:
    """Each entry's JSON text: its line in the file when ``raw_line`` gives it (the very text Pi
    parses, and serializing every string again would keep a UTF-8 copy of each non-ASCII one
    alive), else the entry serialized as ``JSON.stringify`` would."""
    for i, entry in enumerate(entries):
        raw = raw_line(i) if raw_line is not None else None
        if raw is not None:
            yield raw
            continue
        try:
            yield to_json_bytes(entry)
        except RecursionError:
            yield _entry_json(entry)


@cache
def home_hash() -> str:
    digest = hashlib.sha256(asset("home.js").encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")


def home_page() -> str:
    """``pitools serve``'s front page: session list, search and usage, drawn by ``home.js`` from
    the JSON endpoints (the same documents the commands print with ``--format json``)."""
    policy = (
        f"default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src '{home_hash()}'; connect-src 'self'"
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="referrer" content="no-referrer">\n'
        "<title>pitools: sessions</title>\n"
        f"<style>{asset('viewer.css')}{asset('home.css')}</style></head>\n"
        '<body><div id="home"></div>\n'
        f"<script>{asset('home.js')}</script>\n</body></html>\n"
    )
