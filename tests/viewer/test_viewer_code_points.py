"""Every class of code point reaches the viewer page's entries unchanged (issue 36 item 7).

The page embeds each entry's line from the file. What HTML parsing or the file writer changes
would change the entries: a bare CR (JSON whitespace, ``validate`` clean) becomes LF when the
page is parsed and moved the one-entry-per-line split (a nested object showed as an entry, a
real message as ``null``); DEL and C1 controls were written as ``\\x7f`` by ``export -o``, no
JSON escape, and the page drew nothing. The page's parsed entries must equal the file's values
(``JSON.parse`` of each line, as Pi reads it) through ``export --format html`` (file and stdout),
a served page and a live update.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import support
from tests.browser import CHROMIUM, Browser

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed")

#: One sample of each class, raw in the file unless JSON needs an escape.
CLASSES = {
    "c0 (escaped)": "".join(chr(c) for c in range(0x20)),
    "del": "\x7f",
    "c1": "".join(chr(c) for c in range(0x80, 0xA0)),
    "latin-1": "\xa0\xad\xe9\xff",
    "bidi and separators": "\u061c\u200e\u200f\u2028\u2029\u202a\u202e\u2066\u2069",
    "bom and specials": "\ufeff\ufff9\ufffc\ufffd",
    "noncharacters": "\ufdd0\ufffe\uffff\U0001fffe\U0010ffff",
    "supplementary": "\U0001f600\U00020000\U000e0001",
    "lone surrogates (escaped)": "\ud800x\udfff",
    "markup": "</script><!-- <script> &amp; ]]> \\ \" '",
}
TEXT = "|".join(f"{name}:{value}" for name, value in CLASSES.items())

#: Entries and the separators of their lines: CR (JSON whitespace) after every comma and colon.
CR = (",\r", ":\r")


def _line(value: dict[str, Any], separators: tuple[str, str] = (",", ":")) -> str:
    # ensure_ascii=False keeps each character raw (json escapes C0, quote and backslash, as
    # JSON requires); a lone surrogate has no UTF-8 form: it is written as its \\ud800 escape.
    text = json.dumps(value, ensure_ascii=False, separators=separators)
    return re.sub("[\ud800-\udfff]", lambda m: f"\\u{ord(m.group()):04x}", text)


def _entries() -> list[tuple[dict[str, Any], tuple[str, str]]]:
    base = {"timestamp": "2026-07-29T10:00:00.000Z"}
    return [
        ({**base, "type": "message", "id": "u1", "parentId": None,
          "message": {"role": "user", "content": TEXT, "timestamp": 1}}, CR),
        ({**base, "type": "custom", "id": "c1", "parentId": "u1", "customType": "x",
          "data": {"nested": {"type": "message", "text": TEXT}, "list": [TEXT, {"k": TEXT}]}}, CR),
        ({**base, "type": "message", "id": "a1", "parentId": "c1",
          "message": {"role": "assistant", "content": [{"type": "text", "text": TEXT}], "api": "x",
                      "provider": "p", "model": "m", "stopReason": "stop", "timestamp": 2,
                      "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}}},
         (", \t", ": \t")),  # the other JSON whitespace, raw
        ({**base, "type": "session_info", "id": "i\x7f\x85\u202e", "parentId": "a1", "name": TEXT}, CR),
        ({**base, "type": "message", "id": "u2", "parentId": "i\x7f\x85\u202e",
          "message": {"role": "user", "content": "last " + TEXT, "timestamp": 3}}, (",", ":")),
    ]  # fmt: skip


def _write_session(path: Path, entries: list[tuple[dict[str, Any], tuple[str, str]]]) -> None:
    header = {"type": "session", "version": 3, "id": "cp", "timestamp": "2026-07-29T10:00:00.000Z", "cwd": "/tmp"}
    lines = [_line(header)] + [_line(e, seps) for e, seps in entries]
    path.write_bytes(("\n".join(lines) + "\n").encode("utf-8"))


def _expected(path: Path) -> list[Any]:
    # The file's values as JSON.parse reads each line (the header is not an entry).
    text = path.read_bytes().decode("utf-8")
    return [json.loads(line) for line in text.split("\n")[1:] if line]


#: The page's parsed entries as ASCII JSON (lone surrogates and everything else as escapes).
ENTRIES_JS = (
    "JSON.stringify(window.pitoolsViewer.entries()).replace(/[\\u007f-\\uffff]/g,"
    " c => '\\\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'))"
)


def _page_entries(b: Browser) -> list[Any]:
    got: list[Any] = json.loads(b.eval(ENTRIES_JS))
    return got


def run(*args: str) -> Any:
    """``pitools`` through its real entry point; it must exit 0."""
    from click.testing import CliRunner

    result = CliRunner().invoke(support.PITOOLS, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    return result


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with Browser() as b:
        yield b


@pytest.fixture
def session(tmp_path: Path) -> Path:
    path = tmp_path / "sessions" / "cp.jsonl"
    path.parent.mkdir()
    _write_session(path, _entries())
    return path


def test_the_session_is_valid_for_pitools(session: Path) -> None:
    assert b"\r" in session.read_bytes() and b"\x7f" in session.read_bytes()
    run("validate", str(session))  # exit 0: nothing to report


@pytest.mark.parametrize("to_stdout", [False, True], ids=["file", "stdout"])
def test_export_html_keeps_every_code_point(browser: Browser, session: Path, tmp_path: Path, to_stdout: bool) -> None:
    page = tmp_path / "page.html"
    if to_stdout:
        page.write_bytes(run("export", str(session), "--format", "html").stdout_bytes)
    else:
        run("export", str(session), "--format", "html", "-o", str(page))
    assert b"\\x7f" not in page.read_bytes() and b"\r" not in page.read_bytes()
    browser.open(page.as_uri())
    assert _page_entries(browser) == _expected(session)
    assert len(browser.state()["tree"]) == len(_entries())


def test_a_served_page_and_its_live_update_keep_every_code_point(browser: Browser, session: Path) -> None:
    with support.serving(session.parent) as app:
        browser.open(app.url(f"/session/cp?token={app.token}"))
        assert _page_entries(browser) == _expected(session)
        extra = {"type": "message", "id": "u3", "parentId": "u2", "timestamp": "2026-07-29T10:00:09.000Z",
                 "message": {"role": "user", "content": "appended " + TEXT, "timestamp": 4}}  # fmt: skip
        with open(session, "ab") as f:
            f.write((_line(extra, CR) + "\n").encode("utf-8"))
        browser.wait_for("window.pitoolsViewer.entries().length === 6", timeout=15)
        assert browser.eval("document.documentElement.dataset.updateFrom") == "5"
        assert _page_entries(browser) == _expected(session)


def test_the_served_page_without_a_browser(session: Path) -> None:
    """The same check without Chromium: each embedded line (after what HTML parsing does to a
    script element's text: CRLF and CR become LF) parses to the file's value."""
    from pitools.core.session.load import load
    from pitools.ops.viewer import viewer_chunks

    page = b"".join(viewer_chunks(load(session), None, use_config=False)).decode("utf-8")
    block = page.split('<script type="application/json" id="pt-entries">', 1)[1].split("</script>", 1)[0]
    block = block.replace("\r\n", "\n").replace("\r", "\n")
    lines = [line.rstrip(",") for line in block.split("\n") if line not in ("[", "]", "")]
    assert [json.loads(line) for line in lines] == _expected(session)
    assert "\x7f" not in page and not any("\x80" <= c <= "\x9f" for c in page)
