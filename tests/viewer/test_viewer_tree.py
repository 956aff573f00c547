"""The viewer's tree reads like Pi's ``/tree``: connectors over the rows a filter shows, the
session's name as its title, local times with the stored value on hover, and a way back to the
list on served pages.

The connectors are checked against pitools' ``tree`` layout (``core.views.branches._layout``,
which is checked against Pi's ``/tree`` recordings) laid over the same rows in the page's order,
on a hand-made fork and on golden sessions.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import support
from tests.browser import CHROMIUM, Browser

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed")


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with Browser() as b:
        yield b


def write_page(session: Path, out: Path) -> Path:
    from pitools.core.session.load import load
    from pitools.ops.viewer import viewer_chunks

    loaded = load(session)
    out.write_bytes(b"".join(viewer_chunks(loaded, None, use_config=False)))
    return out


def open_all(browser: Browser, page: Path) -> None:
    browser.open(page.as_uri())
    browser.wait_for("document.documentElement.dataset.ready === 'true'")
    browser.eval("document.querySelector('button.filter[data-filter=all]').click()")


def msg(eid: str, parent: str | None, second: int, role: str, content: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": role, "content": content, "timestamp": second}
    if role == "assistant":
        message.update(provider="anthropic", model="m", stopReason="stop")
    return {
        "type": "message",
        "id": eid,
        "parentId": parent,
        "timestamp": f"2026-05-01T10:00:{second:02d}.000Z",
        "message": message,
    }


def write_session(path: Path, entries: list[dict[str, Any]]) -> Path:
    header = {"type": "session", "version": 3, "id": "sess-tree", "timestamp": "2026-05-01T10:00:00.000Z", "cwd": "/w"}
    path.write_text("".join(json.dumps(x) + "\n" for x in [header, *entries]), encoding="utf-8")
    return path


def python_prefixes(parent_ids: list[str | None], ids: list[str]) -> list[str]:
    """pitools' /tree layout (checked against Pi) over rows in the given order with the given
    shown parents, drawn with the HTML export's glyphs."""
    from pitools.core.views.branches import TreeRow, _layout
    from pitools.render.tree import _draw_prefix

    rows = [TreeRow(node=None) for _ in ids]  # type: ignore[arg-type]
    at = {eid: i for i, eid in enumerate(ids)}
    for i, pid in enumerate(parent_ids):
        if pid is not None:
            rows[i].parent = at[pid]
            rows[at[pid]].children.append(i)
    multiple = _layout(rows)
    out = []
    for row in rows:
        display = max(0, row.indent - 1) if multiple else row.indent
        connector = row.show_connector and not row.is_virtual_root_child
        glyph = ("└" if row.is_last else "├") + "─"
        out.append(_draw_prefix(row, display, display - 1 if connector else -1, glyph if connector else ""))
    return out


def test_forks_get_connectors_and_chains_stay_flush(browser: Browser, tmp_path: Path) -> None:
    entries = [msg("r", None, 1, "user", "root")]
    prev = "r"
    for i in range(3):
        entries.append(
            msg(f"c{i}", prev, 2 + i, "assistant" if i % 2 == 0 else "user", [{"type": "text", "text": f"c{i}"}])
        )
        prev = f"c{i}"
    entries += [
        msg("x1", "c2", 10, "user", "left"),
        msg("x2", "x1", 11, "assistant", [{"type": "text", "text": "left reply"}]),
        msg("y1", "c2", 12, "user", "right"),
        msg("y2", "y1", 13, "assistant", [{"type": "text", "text": "right reply"}]),
    ]
    page = write_page(write_session(tmp_path / "s.jsonl", entries), tmp_path / "s.html")
    open_all(browser, page)
    ids = browser.eval("pitoolsViewer.rowIds()")
    prefixes = browser.eval("pitoolsViewer.rowPrefixes()")
    assert ids == ["r", "c0", "c1", "c2", "x1", "x2", "y1", "y2"]
    assert prefixes == ["", "", "", "", "├─ ", "│     ", "└─ ", "      "]
    # The rows in the DOM show the same prefixes.
    drawn = browser.eval("Array.from(document.querySelectorAll('#tree .row .gut'), g => g.textContent)")
    assert drawn == prefixes
    # A filter that hides the replies re-hangs the rest under their nearest shown ancestor (the
    # selected leaf y2 stays shown, as in Pi).
    browser.eval("document.querySelector('button.filter[data-filter=user-only]').click()")
    assert browser.eval("pitoolsViewer.rowIds()") == ["r", "c1", "x1", "y1", "y2"]
    assert browser.eval("pitoolsViewer.rowPrefixes()") == ["", "", "├─ ", "└─ ", "      "]


@pytest.mark.parametrize(
    "case", ["seed-running-example", "gen-s0013_broken-orphan+dupids", "branches-compaction-tails"]
)
def test_connectors_equal_the_tree_layout_on_golden_sessions(browser: Browser, tmp_path: Path, case: str) -> None:
    page = write_page(support.golden_session(case), tmp_path / f"{case}.html")
    open_all(browser, page)
    rows = browser.eval(
        "(() => { const ids = pitoolsViewer.rowIds(), pre = pitoolsViewer.rowPrefixes();"
        " return {ids, pre, parents: pitoolsViewer.rowParents()}; })()"
    )
    assert len(rows["ids"]) > 5
    assert rows["pre"] == python_prefixes(rows["parents"], rows["ids"])
    assert any("├─" in p for p in rows["pre"])  # each of these sessions forks


def test_title_times_and_way_back(browser: Browser, tmp_path: Path) -> None:
    named = [
        msg("u1", None, 1, "user", "  \n  Fix the <b>login</b> bug\nsecond line"),
        msg("a1", "u1", 2, "assistant", [{"type": "text", "text": "ok"}]),
    ]
    page = write_page(write_session(tmp_path / "first.jsonl", named), tmp_path / "first.html")
    browser.open(page.as_uri())
    browser.wait_for("document.documentElement.dataset.ready === 'true'")
    # No session_info: the first user message's first line, as text (not markup).
    assert browser.eval("document.title") == "Fix the <b>login</b> bug · pi session"
    assert browser.eval("document.querySelector('#top h1').textContent") == "Fix the <b>login</b> bug"
    assert browser.eval("document.querySelector('#back')") is None  # a file page has no list to go back to
    # A session_info name wins (the latest one).
    info = {
        "type": "session_info",
        "id": "i1",
        "parentId": "a1",
        "timestamp": "2026-05-01T10:00:03.000Z",
        "name": " Login fix ",
    }
    page = write_page(write_session(tmp_path / "named.jsonl", [*named, info]), tmp_path / "named.html")
    browser.open(page.as_uri())
    browser.wait_for("document.documentElement.dataset.ready === 'true'")
    assert browser.eval("document.title") == "Login fix · pi session"
    # Times: the reader's local time, the stored value on hover (the browser runs in UTC here
    # unless TZ says otherwise, so compare with the page's own Date).
    times = browser.eval(
        "Array.from(document.querySelectorAll('#transcript time'),"
        " t => [t.textContent, t.title, t.getAttribute('datetime')])"
    )
    assert times, "no times shown"
    for shown, title, value in times:
        assert title == value and value.startswith("2026-05-01T10:00:")
        local = browser.eval(
            f"(() => {{ const d = new Date({json.dumps(value)}); const p = n => String(n).padStart(2, '0');"
            " return d.getFullYear() + '-' + p(d.getMonth() + 1) + '-' + p(d.getDate()) + ' ' + p(d.getHours()) + ':' +"
            " p(d.getMinutes()) + ':' + p(d.getSeconds()); })()"
        )
        assert shown == local


def test_a_served_page_links_back_to_the_list(browser: Browser, tmp_path: Path) -> None:
    import shutil

    folder = tmp_path / "sessions"
    folder.mkdir()
    shutil.copyfile(support.golden_session("seed-running-example"), folder / "S1.jsonl")
    with support.serving(folder) as app:
        browser.open(app.url(f"/session/S1?token={app.token}"))
        browser.wait_for("document.documentElement.dataset.ready === 'true'")
        assert browser.eval("document.querySelector('#back').href") == app.url("/")
        browser.eval("document.querySelector('#back').click()")
        browser.wait_for("document.querySelectorAll('[data-session-id]').length === 1")


def handoff_session(path: Path) -> Path:
    """A Codex turn resumed on Claude: a tool call id Anthropic's pattern refuses."""
    call = {"type": "toolCall", "id": "call|fc_1.x", "name": "read", "arguments": {"path": "a.py"}}
    reply = msg("a1", "u1", 2, "assistant", [call])
    reply["message"].update(provider="openai", model="gpt-5", api="openai-responses", stopReason="toolUse")
    result = {
        "type": "message",
        "id": "t1",
        "parentId": "a1",
        "timestamp": "2026-05-01T10:00:03.000Z",
        "message": {
            "role": "toolResult",
            "toolCallId": "call|fc_1.x",
            "toolName": "read",
            "content": [{"type": "text", "text": "print(1)"}],
            "isError": False,
            "timestamp": 3,
        },
    }
    change = {
        "type": "model_change",
        "id": "m1",
        "parentId": "t1",
        "timestamp": "2026-05-01T10:00:04.000Z",
        "provider": "anthropic",
        "modelId": "claude-sonnet-4-5",
    }
    return write_session(path, [msg("u1", None, 1, "user", "read a.py"), reply, result, change])


def test_the_page_shows_the_request_check_of_its_model(browser: Browser, tmp_path: Path, monkeypatch: Any) -> None:
    """The findings on the page are the ones ``pitools request --check`` reports for the same
    file and leaf, with the `pitools heal` command that fixes them."""
    from click.testing import CliRunner

    from pitools.cli.app import cli

    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    session = handoff_session(tmp_path / "handoff.jsonl")
    result = CliRunner().invoke(cli, ["request", str(session), "--check", "--no-config", "--format", "json"])
    expected = json.loads(result.stdout)
    assert expected["findings"], result.output  # the case must have findings to show
    page = write_page(session, tmp_path / "handoff.html")
    browser.open(page.as_uri())
    browser.wait_for("document.documentElement.dataset.ready === 'true'")
    assert browser.eval("document.querySelector('#check').dataset.ok") == "false"
    shown = browser.eval("Array.from(document.querySelectorAll('#check li code'), c => c.textContent)")
    assert shown == [f["code"] for f in expected["findings"]]
    summary = browser.eval("document.querySelector('#check summary').textContent")
    assert summary.startswith("Request check for anthropic/claude-sonnet-4-5 at m1: ✗ ")
    heal = browser.eval("document.querySelector('#check code.cmd').textContent")
    assert heal == f"pitools heal {session} --for-model anthropic/claude-sonnet-4-5"
    # A session whose model takes its request says so; one whose model pitools cannot know says why.
    reply = msg("a1", "u1", 2, "assistant", [{"type": "text", "text": "hello"}])
    reply["message"].update(model="claude-sonnet-4-5", api="anthropic-messages")
    clean = write_session(tmp_path / "clean.jsonl", [msg("u1", None, 1, "user", "hi"), reply])
    browser.open(write_page(clean, tmp_path / "clean.html").as_uri())
    browser.wait_for("document.documentElement.dataset.ready === 'true'")
    assert browser.eval("document.querySelector('#check').dataset.ok") == "true"
    reply["message"]["model"] = "no-such-model"
    unknown = write_session(tmp_path / "unknown.jsonl", [msg("u1", None, 1, "user", "hi"), reply])
    browser.open(write_page(unknown, tmp_path / "unknown.html").as_uri())
    browser.wait_for("document.documentElement.dataset.ready === 'true'")
    assert browser.eval("document.querySelector('#check').dataset.ok") == "unknown"
    assert "not built" in browser.eval("document.querySelector('#check').textContent")


def test_the_page_shows_the_command_that_resumes_the_selected_entry(browser: Browser, tmp_path: Path) -> None:
    """The summary shows the command `core.views.resume.resume_command` gives for the selected
    entry: the file at its default leaf, else the clone of the branch ending at the entry; ids and
    paths a shell would read as code stay one quoted word."""
    from pitools.core.views.resume import resume_command

    folder = tmp_path / "it's $(x)"
    folder.mkdir()
    entries = [
        msg("u1", None, 1, "user", "first"),
        msg("a'1 $(rm)", "u1", 2, "assistant", [{"type": "text", "text": "reply"}]),
        msg("u2", "a'1 $(rm)", 3, "user", "second"),
    ]
    session = write_session(folder / "s.jsonl", entries)
    page = write_page(session, tmp_path / "s.html")
    browser.open(page.as_uri())
    browser.wait_for("document.documentElement.dataset.ready === 'true'")
    shown = browser.eval("document.querySelector('#resume code.cmd').textContent")
    assert shown == resume_command(str(session))
    odd = "a'1 $(rm)"
    assert browser.eval("pitoolsViewer.select(" + json.dumps(odd) + ")")
    shown = browser.eval("document.querySelector('#resume code.cmd').textContent")
    assert shown == resume_command(str(session), odd, at_leaf=False)


def test_a_hostile_first_line_is_inert_in_the_page_title(tmp_path: Path) -> None:
    """The title comes from session text: controls, bidi overrides and a lone surrogate show as
    U+FFFD (a lone surrogate has no UTF-8 form: a served page was cut off at its first byte)."""
    from pitools.core.session.load import load
    from pitools.ops.viewer import viewer_chunks

    first = "a\x7fb\x85c\u202ed\ud800e</title><script>"
    session = write_session(tmp_path / "t.jsonl", [msg("u1", None, 1, "user", first)])
    page = b"".join(viewer_chunks(load(session), None, use_config=False)).decode("utf-8")
    title = page.split("<title>", 1)[1].split("</title>", 1)[0]
    assert title == "a\ufffdb\ufffdc\ufffdd\ufffde&lt;/title&gt;&lt;script&gt; · pi session"
    page.encode("utf-8")  # the whole page has a UTF-8 form
