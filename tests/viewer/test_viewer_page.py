"""The viewer page (``export --format html``) in headless Chromium, checked against Pi.

For every golden session Pi's recordings give, per leaf, ``getBranch`` (the path) and
``buildContextEntries`` (the context entries): the page opened at ``#leaf=<id>`` must show
exactly that path as its transcript and mark exactly those entries ``data-in-context``; its
tree must hold one row per entry; its context total (computed in Python by the core) must be
Pi's ``estimateProjectedContextTokens``, and its compaction plan Pi's ``prepareCompaction``.
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

#: Leaves checked per session: the default leaf, the first and the last other one.
LEAVES_PER_SESSION = 3


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with Browser() as b:
        yield b


def write_page(session: Path, out: Path, leaf: str | None = None) -> Path:
    from pitools.core.session.load import load
    from pitools.ops.viewer import viewer_chunks

    loaded = load(session)
    out.write_bytes(b"".join(viewer_chunks(loaded, loaded.leaf(leaf), use_config=False)))
    return out


def id_text(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else json.dumps(value, separators=(",", ":"))


def _cases() -> list[str]:
    out = []
    for case in support.golden_cases():
        if not (support.GOLDEN / case / "pi.krt20000.json.xz").exists():
            continue
        rec = support.golden_recording(case)
        if rec.get("invalid") or "error" in rec or not rec.get("byLeaf"):
            continue
        out.append(case)
    return out


def _chosen_leaves(rec: dict[str, Any]) -> list[str]:
    by_leaf = rec["byLeaf"]
    usable = [
        leaf for leaf in rec["requestedLeaves"] if isinstance(by_leaf.get(leaf), dict) and "error" not in by_leaf[leaf]
    ]
    usable = [
        leaf for leaf in usable if by_leaf[leaf].get("leafExists") and "error" not in by_leaf[leaf].get("path", {})
    ]
    chosen = [leaf for leaf in (rec.get("leafId"),) if leaf in usable]
    for leaf in usable[:1] + usable[-1:]:
        if leaf not in chosen:
            chosen.append(leaf)
    return chosen[:LEAVES_PER_SESSION]


#: Every session (``make check``, CI), or every 8th of them in the fast loop (``make test``).
EVERY = [pytest.param(1, marks=pytest.mark.slow, id="all"), pytest.param(8, id="sample")]


@pytest.mark.parametrize("every", EVERY)
def test_page_matches_pi_paths_and_context_at_leaves(browser: Browser, tmp_path: Path, every: int) -> None:
    from urllib.parse import quote

    from pitools.errors import PitoolsError

    compared = sessions = 0
    failures: list[str] = []
    for case in _cases()[::every]:
        rec = support.golden_recording(case)
        try:
            page = write_page(support.golden_session(case), tmp_path / f"{case}.html")
        except PitoolsError:
            continue  # a tree pitools refuses (a parentId loop): no page, an error (tested elsewhere)
        sessions += 1
        all_ids = sorted(id_text(e.get("id")) if isinstance(e, dict) else "" for e in rec["entries"])
        for n, leaf in enumerate(_chosen_leaves(rec)):
            browser.open(f"{page.as_uri()}?n={n}#leaf={quote(leaf, safe='')}")
            state = browser.state()
            want = rec["byLeaf"][leaf]
            where = f"{case} at {leaf}"
            if sorted(state["tree"]) != all_ids:
                failures.append(f"{where}: tree rows differ from the entries")
            if state["selected"] != [leaf] and state["selected"][-1:] != [leaf]:
                failures.append(f"{where}: selected row {state['selected']}")
            if state["transcript"] != [id_text(x) for x in want["path"]]:
                failures.append(f"{where}: transcript {state['transcript'][:5]}… != path {want['path'][:5]}…")
            ctx = [id_text(x) for x in want["contextEntries"]]
            if sorted(state["inContext"]) != sorted(ctx):
                failures.append(f"{where}: in context {sorted(set(state['inContext']) ^ set(ctx))[:6]} differ")
            est = want.get("estimatedContextTokens")
            if state["exact"] and isinstance(est, dict) and est.get("tokens") != state["tokens"]:
                failures.append(f"{where}: tokens {state['tokens']} != Pi's {est.get('tokens')}")
            compaction = want.get("compaction")
            if state["firstKept"] is not None and isinstance(compaction, (dict, type(None))):
                pi_first = compaction["firstKeptEntryId"] if compaction else ""
                if state["firstKept"] != (pi_first or ""):
                    failures.append(f"{where}: plan keeps from {state['firstKept']!r}, Pi from {pi_first!r}")
            compared += 1
    assert not failures, "\n".join(failures[:30])
    assert sessions >= 40 // every and compared >= 100 // every, (sessions, compared)


def _tool_session(path: Path) -> Path:
    def entry(eid: str, parent: str | None, message: dict[str, Any]) -> dict[str, Any]:
        return {
            "type": "message",
            "id": eid,
            "parentId": parent,
            "timestamp": f"2026-05-01T10:00:0{len(eid)}.000Z",
            "message": message,
        }

    calls = [
        {
            "type": "toolCall",
            "id": "e",
            "name": "edit",
            "arguments": {"path": "app.py", "edits": [{"oldText": "a = 1\nb = 2\n", "newText": "a = 1\nb = 3\n"}]},
        },
        {
            "type": "toolCall",
            "id": "w",
            "name": "write",
            "arguments": {"path": "x.js", "content": 'const s = "<b>"; // note\n'},
        },
        {"type": "toolCall", "id": "b", "name": "bash", "arguments": {"command": "ls --color"}},
    ]
    usage = {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15, "cost": {"total": 0.5}}
    values = [
        {"type": "session", "version": 3, "id": "tools", "timestamp": "2026-05-01T10:00:00.000Z", "cwd": "/w"},
        entry("u", None, {"role": "user", "content": "go", "timestamp": 1}),
        entry(
            "a1",
            "u",
            {
                "role": "assistant",
                "content": calls,
                "usage": usage,
                "stopReason": "toolUse",
                "provider": "p",
                "model": "m",
            },
        ),
        entry(
            "r1",
            "a1",
            {
                "role": "toolResult",
                "toolCallId": "b",
                "toolName": "bash",
                "content": [{"type": "text", "text": "\u001b[31mred\u001b[0m plain \u001b]8;;x\u0007"}],
                "isError": False,
            },
        ),
    ]
    path.write_text("".join(json.dumps(v) + "\n" for v in values), encoding="utf-8")
    return path


def test_tool_calls_render_as_diff_code_and_coloured_output(browser: Browser, tmp_path: Path) -> None:
    page = write_page(_tool_session(tmp_path / "t.jsonl"), tmp_path / "t.html")
    browser.open(page.as_uri())
    found = browser.eval(
        """({
      del: Array.from(document.querySelectorAll('pre.diff .del'), d => d.textContent),
      add: Array.from(document.querySelectorAll('pre.diff .add'), d => d.textContent),
      strings: Array.from(document.querySelectorAll('.tool-call pre .s'), s => s.textContent),
      red: Array.from(document.querySelectorAll('#transcript span[style*="color"]'),
                      s => [s.textContent, s.style.color]),
      text: document.getElementById('transcript').innerText,
      summary: document.getElementById('summary').innerText,
    })"""
    )
    assert found["del"] == ["- b = 2"] and found["add"] == ["+ b = 3"]
    assert found["strings"] == ['"<b>"']
    assert found["red"] == [["red", "rgb(205, 49, 49)"]]
    assert "\u001b" not in found["text"] and "red plain" in found["text"]
    assert "$0.50" in found["summary"] and "1 reply, 3 tool calls, 15 tokens" in found["summary"]
